//! The variables cargo sets for a crate it builds or runs (`CARGO_PKG_NAME`,
//! `CARGO_MANIFEST_DIR`, `OUT_DIR`, `CARGO_BIN_EXE_<name>`, ...), shared by the test crates
//! that keep them from the cargo builds they start: some dependencies' build scripts watch
//! them (ring's `rerun-if-env-changed=CARGO_PKG_NAME`), so a build that inherits them is not
//! the build made without them, and most of the dependency tree is compiled again.
//! scripts/lib/crate-env.sh removes the same ones for the scripts (`tests/release.rs` checks
//! that it leaves none of these).

/// Whether cargo sets `name` for a crate it builds or runs. `CARGO` itself (the cargo that
/// runs the tests) is not one.
pub fn is_crate_variable(name: &str) -> bool {
    name == "OUT_DIR"
        || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || name.starts_with("CARGO_BIN_")
        || [
            "CARGO_CRATE_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
        ]
        .contains(&name)
}
