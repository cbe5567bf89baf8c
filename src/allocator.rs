//! The process's allocator, chosen when the binary is built, never at run time:
//!
//! - by default mimalloc: the one-shot commands decode and judge many documents, allocate
//!   many small values, and ran a sixth of `validate`'s time faster with it than with glibc's
//!   malloc;
//! - with the cargo feature `system-allocator` (what the operator's image is built with,
//!   `scripts/build-static.sh`), the system allocator, glibc's malloc. The operator keeps a
//!   few kilobytes per CRD for days while its watches, reports and compilations allocate and
//!   free around them: with mimalloc its resident memory was about 2.5 times its live heap,
//!   and on the 2,000-CRD Crossplane-shaped set (`examples/crossplane_scale.rs`) glibc's
//!   malloc with two arenas peaked at 150 MiB where mimalloc peaked at 225 MiB.
//!
//! `main.rs` declares the global allocator; [`NAME`] says which one it is (`--version` and
//! the operator's start-up log print it).

/// The allocator of this build, as `--version` names it.
#[cfg(feature = "system-allocator")]
pub const NAME: &str = "glibc malloc";
/// The allocator of this build, as `--version` names it.
#[cfg(not(feature = "system-allocator"))]
pub const NAME: &str = "mimalloc";

/// glibc malloc arenas the operator uses (`MALLOC_ARENA_MAX`, unless set): by default glibc
/// adds arenas up to eight per core as threads contend, and each keeps freed memory of its
/// own. With two, the 2,000-CRD run peaked at 132.5 MiB instead of 176.5 MiB.
#[cfg(feature = "system-allocator")]
const ARENAS: i32 = 2;

/// Tunes the allocator for a long-running operator: glibc's malloc gets two arenas (unless
/// `MALLOC_ARENA_MAX` says otherwise). Nothing to do with mimalloc. Safe at any time:
/// `mallopt` takes malloc's own lock.
pub fn tune_for_operator() {
    #[cfg(all(feature = "system-allocator", target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt sets a tunable of glibc's malloc under its own lock; any value is
        // accepted (an unsupported one is refused with a return of 0).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        }
    }
}
