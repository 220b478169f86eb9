//! A global allocator that counts, per thread, every allocation, reallocation and deallocation,
//! so a test can prove a call allocated nothing. Each test binary that needs it declares
//! `#[path = "common/counting_alloc.rs"] mod counting_alloc;` and installs it with
//! `#[global_allocator] static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static HEAP_CALLS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: during thread teardown the slot may be gone; those calls are not ours.
    let _ = HEAP_CALLS.try_with(|c| c.set(c.get() + 1));
}

/// Heap calls made by the current thread so far.
pub fn heap_calls() -> u64 {
    HEAP_CALLS.with(|c| c.get())
}

/// `System`, counting every allocation, reallocation and deallocation of the calling thread.
pub struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract holds exactly as it does for `System`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; `ptr` came from `System` through us.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count();
        // SAFETY: forwarded unchanged; `ptr` came from `System` through us.
        unsafe { System.dealloc(ptr, layout) }
    }
}
