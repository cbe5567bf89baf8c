//! What every part of the program says about itself: its version, its name as a kubectl
//! plugin, and the exit codes of every command.

/// The version `--version` prints: the package version, the commit it was built from
/// (`unknown` when built outside a git checkout; `-dirty` with uncommitted changes), which
/// build.rs records, and the allocator the build chose ([`crate::allocator::NAME`]).
#[cfg(not(feature = "system-allocator"))]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CRD_AUDIT_GIT_COMMIT"),
    ", mimalloc)"
);
/// The version `--version` prints (see above).
#[cfg(feature = "system-allocator")]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CRD_AUDIT_GIT_COMMIT"),
    ", glibc malloc)"
);

/// The file name kubectl runs for `kubectl crd-audit` (dashes in a plugin's name become
/// underscores in its file name).
pub const KUBECTL_PLUGIN_FILE: &str = "kubectl-crd_audit";

/// Exit codes of every command.
pub const EXIT_CLEAN: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_INPUT_ERROR: u8 = 2;
