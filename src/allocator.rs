//! The process's allocator: mimalloc for the one-shot commands, the system allocator (glibc
//! malloc) for the operator.
//!
//! - The commands decode and judge many documents: they allocate many small values, and
//!   mimalloc was a sixth of `validate`'s time faster than the system allocator.
//! - The operator keeps a few kilobytes per CRD for days while its watches, reports and
//!   compilations allocate and free around them. With mimalloc its resident memory was about
//!   2.5 times its live heap; on the 2,000-CRD Crossplane-shaped set (`examples/
//!   crossplane_scale.rs`) glibc's malloc held 48 MiB less at its peak.
//!
//! The choice is made after the command line is read ([`use_system_allocator`]), when
//! blocks from mimalloc already exist: every block goes back to the allocator it came from
//! (mimalloc's page map tells its own blocks apart, `mi_is_in_heap_region`). Until the switch
//! nothing but mimalloc has allocated, so frees skip that test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

unsafe extern "C" {
    /// mimalloc's own test of a pointer (its page map), exported by the mimalloc library the
    /// `mimalloc` crate links in.
    fn mi_is_in_heap_region(p: *const std::ffi::c_void) -> bool;
}

/// The global allocator of the binary.
pub struct Allocator;

/// New blocks come from the system allocator (set once, never unset).
static SYSTEM: AtomicBool = AtomicBool::new(false);

/// glibc malloc arenas the operator uses (`MALLOC_ARENA_MAX`, unless set): by default glibc
/// adds arenas up to eight per core as threads contend, and each keeps freed memory of its
/// own. With two, the 2,000-CRD run peaked at 132.5 MiB instead of 176.5 MiB.
const ARENAS: i32 = 2;

/// Makes every later allocation come from the system allocator (the operator).
pub fn use_system_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt sets a tunable of glibc's malloc; any value is accepted.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        }
    }
    SYSTEM.store(true, Ordering::Release);
}

/// Whether `ptr` is one of mimalloc's blocks; `true` for every block before the switch.
fn from_mimalloc(ptr: *mut u8) -> bool {
    if !SYSTEM.load(Ordering::Acquire) {
        return true;
    }
    // SAFETY: a lookup in mimalloc's page map, valid for any address.
    unsafe { mi_is_in_heap_region(ptr.cast()) }
}

// SAFETY: every block is allocated by one of two allocators and returned to the same one;
// both uphold GlobalAlloc's contract.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if SYSTEM.load(Ordering::Relaxed) {
            unsafe { System.alloc(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if SYSTEM.load(Ordering::Relaxed) {
            unsafe { System.alloc_zeroed(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if from_mimalloc(ptr) {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block grows or shrinks in the allocator it came from.
        if from_mimalloc(ptr) {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        } else {
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of both allocators, freed and grown after the switch, go back where they came
    /// from (a wrong free would crash the test process).
    #[test]
    fn blocks_go_back_to_their_allocator() {
        let a = Allocator;
        let small = Layout::from_size_align(24, 8).unwrap();
        let big = Layout::from_size_align(3 << 20, 64).unwrap();
        unsafe {
            let before: Vec<*mut u8> = [small, big].iter().map(|l| a.alloc(*l)).collect();
            assert!(before.iter().all(|p| !p.is_null()));
            assert!(before.iter().all(|p| mi_is_in_heap_region(p.cast())));
            use_system_allocator();
            let after = a.alloc(small);
            assert!(!mi_is_in_heap_region(after.cast()));
            let grown = a.realloc(before[0], small, 4096);
            assert!(mi_is_in_heap_region(grown.cast()));
            let after_grown = a.realloc(after, small, 1 << 20);
            assert!(!mi_is_in_heap_region(after_grown.cast()));
            a.dealloc(grown, Layout::from_size_align(4096, 8).unwrap());
            a.dealloc(before[1], big);
            a.dealloc(after_grown, Layout::from_size_align(1 << 20, 8).unwrap());
        }
    }
}
