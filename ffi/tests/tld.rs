//! The TLD tracker's C functions called from Rust: `mv_tld_create_in` + init + update + destroy
//! make no heap call (a counting global allocator), the workspace size is exact (one byte less
//! fails, at every alignment), core errors arrive as their documented statuses, and heap and
//! caller-memory trackers give identical results.

#[path = "../../core/tests/common/counting_alloc.rs"]
mod counting_alloc;

mod common;

use common::{frame_pixels, image, H, W};
use counting_alloc::heap_calls;
use mvision::geometry::{mv_rect, mv_rectf};
use mvision::image::{mv_image, MV_PIXEL_U8};
use mvision::mv_status::{self, *};
use mvision::tld::*;
use std::ffi::c_void;
use std::ptr;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

const BOX: mv_rect = mv_rect {
    x: 40,
    y: 24,
    width: 24,
    height: 20,
};

fn defaults() -> mv_tld_params {
    let mut p = std::mem::MaybeUninit::uninit();
    // SAFETY: a writable out-pointer.
    assert_eq!(unsafe { mv_tld_params_init(p.as_mut_ptr()) }, MV_STATUS_OK);
    // SAFETY: written by the call above.
    unsafe { p.assume_init() }
}

fn workspace_size(p: &mv_tld_params) -> usize {
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { mv_tld_workspace_size(p, W, H, &mut n) },
        MV_STATUS_OK
    );
    n
}

/// Init on `a`, update on `b`: (box, found, confidence).
fn run(t: *mut mv_tld, a: &mv_image, b: &mv_image) -> (mv_rectf, bool, f32) {
    let (mut r, mut found, mut conf) = (mv_rectf::default(), false, 0.0f32);
    // SAFETY: a live tracker and valid images and outputs.
    unsafe {
        assert_eq!(mv_tld_init(t, a, BOX), MV_STATUS_OK);
        assert_eq!(
            mv_tld_update(t, b, &mut r, &mut found, &mut conf),
            MV_STATUS_OK
        );
    }
    (r, found, conf)
}

#[test]
fn create_in_init_update_destroy_make_no_heap_call() {
    let p = defaults();
    let size = workspace_size(&p);
    let mut ws = vec![0u8; size + 7];
    let (mut a, mut b) = (
        frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1),
        frame_pixels(42, 25, BOX.width as u32, BOX.height as u32, 1),
    );
    let (fa, fb) = (
        image(&mut a, W, H, MV_PIXEL_U8),
        image(&mut b, W, H, MV_PIXEL_U8),
    );
    let mut dets = [mv_rect::default(); 8];
    let (mut r, mut found, mut conf, mut count) = (mv_rectf::default(), false, 0.0f32, 0usize);
    let mut t: *mut mv_tld = ptr::null_mut();

    let before = heap_calls();
    // SAFETY: every pointer is valid for the call; the workspace outlives the tracker.
    let statuses = unsafe {
        [
            mv_tld_create_in(ws.as_mut_ptr().add(7).cast(), size, &p, W, H, &mut t),
            mv_tld_init(t, &fa, BOX),
            mv_tld_update(t, &fb, &mut r, &mut found, &mut conf),
            mv_tld_update(t, &fa, &mut r, &mut found, &mut conf),
            mv_tld_detections(t, dets.as_mut_ptr(), dets.len(), &mut count),
            // Failing calls allocate nothing either.
            mv_tld_create_in(ws.as_mut_ptr().cast(), size - 1, &p, W, H, &mut t),
            mv_tld_init(t, &fa, mv_rect::default()),
        ]
    };
    // SAFETY: made by mv_tld_create_in above.
    unsafe { mv_tld_destroy(t) };
    let calls = heap_calls() - before;

    assert_eq!(
        statuses,
        [
            MV_STATUS_OK,
            MV_STATUS_OK,
            MV_STATUS_OK,
            MV_STATUS_OK,
            MV_STATUS_OK,
            MV_STATUS_BUFFER_TOO_SMALL,
            MV_STATUS_ZERO_SIZE
        ]
    );
    assert!(found);
    assert_eq!(calls, 0, "heap calls between create_in and destroy");

    // The counter does see the library's allocations: mv_tld_create makes one block.
    let before = heap_calls();
    // SAFETY: valid pointers; the tracker is destroyed right away.
    unsafe {
        assert_eq!(mv_tld_create(&p, W, H, &mut t), MV_STATUS_OK);
        mv_tld_destroy(t);
    }
    assert!(heap_calls() - before >= 2, "one allocation and its release");
}

#[test]
fn workspace_size_is_exact_at_every_alignment() {
    let p = defaults();
    let size = workspace_size(&p);
    let mut ws = vec![0u8; size + 64];
    for offset in 0..16 {
        let mut t: *mut mv_tld = ptr::null_mut();
        // SAFETY: ws has offset + size bytes from its start.
        unsafe {
            let at: *mut c_void = ws.as_mut_ptr().add(offset).cast();
            assert_eq!(
                mv_tld_create_in(at, size - 1, &p, W, H, &mut t),
                MV_STATUS_BUFFER_TOO_SMALL
            );
            assert!(t.is_null());
            assert_eq!(mv_tld_create_in(at, size, &p, W, H, &mut t), MV_STATUS_OK);
            assert!(!t.is_null());
            // The handle lies inside the workspace.
            let (lo, hi) = (at as usize, at as usize + size);
            assert!((lo..hi).contains(&(t as usize)));
            mv_tld_destroy(t);
        }
    }
}

#[test]
fn heap_and_caller_memory_trackers_agree() {
    let p = defaults();
    let size = workspace_size(&p);
    let (mut a, mut b) = (
        frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1),
        frame_pixels(43, 22, BOX.width as u32, BOX.height as u32, 1),
    );
    let (fa, fb) = (
        image(&mut a, W, H, MV_PIXEL_U8),
        image(&mut b, W, H, MV_PIXEL_U8),
    );

    let mut heap: *mut mv_tld = ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { mv_tld_create(&p, W, H, &mut heap) }, MV_STATUS_OK);
    let from_heap = run(heap, &fa, &fb);
    // SAFETY: made by mv_tld_create.
    unsafe { mv_tld_destroy(heap) };

    let mut ws = vec![0u8; size];
    let mut t: *mut mv_tld = ptr::null_mut();
    // SAFETY: ws is writable for size bytes and outlives the tracker.
    let s = unsafe { mv_tld_create_in(ws.as_mut_ptr().cast(), size, &p, W, H, &mut t) };
    assert_eq!(s, MV_STATUS_OK);
    let in_place = run(t, &fa, &fb);
    // SAFETY: made by mv_tld_create_in.
    unsafe { mv_tld_destroy(t) };

    assert_eq!(from_heap, in_place);
    let (r, found, conf) = in_place;
    assert!(found && conf > 0.5 && conf <= 1.0);
    assert!(
        (r.x - 43.0).abs() < 2.0 && (r.y - 22.0).abs() < 2.0,
        "{r:?}"
    );
}

/// Status of `mv_tld_workspace_size` for the defaults changed by `edit`.
fn params_status(edit: impl FnOnce(&mut mv_tld_params)) -> mv_status {
    let mut p = defaults();
    edit(&mut p);
    let mut n = 0;
    // SAFETY: valid pointers.
    unsafe { mv_tld_workspace_size(&p, W, H, &mut n) }
}

#[test]
fn core_errors_arrive_as_documented_statuses() {
    // Parameters: InvalidArgument and InvalidKernel from TldParams::validate; the C-only checks.
    assert_eq!(params_status(|_| {}), MV_STATUS_OK);
    assert_eq!(
        params_status(|p| p.nn_valid_threshold = f32::NAN),
        MV_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(
        params_status(|p| p.blur_sigma_px = 2.5),
        MV_STATUS_INVALID_KERNEL
    );
    assert_eq!(
        params_status(|p| p.reserved[2] = 1),
        MV_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(
        params_status(|p| p.learning = 7),
        MV_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(params_status(|p| p.learning = 0), MV_STATUS_OK);

    let p = defaults();
    let mut n = 0;
    // SAFETY: valid pointers throughout; the tracker is destroyed at the end.
    unsafe {
        assert_eq!(mv_tld_workspace_size(&p, 0, H, &mut n), MV_STATUS_ZERO_SIZE);
        assert_eq!(
            mv_tld_workspace_size(&p, 65_536, H, &mut n),
            MV_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mv_tld_workspace_size(ptr::null(), W, H, &mut n),
            MV_STATUS_NULL_POINTER
        );
        let mut t: *mut mv_tld = ptr::null_mut();
        assert_eq!(mv_tld_create(&p, W, H, &mut t), MV_STATUS_OK);
        let mut px = frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1);
        let f = image(&mut px, W, H, MV_PIXEL_U8);
        let mut small = vec![0u8; ((W - 1) * H) as usize];
        let fs = image(&mut small, W - 1, H, MV_PIXEL_U8);
        let (mut r, mut found, mut conf) = (mv_rectf::default(), false, 0.0f32);
        assert_eq!(
            mv_tld_update(t, &f, &mut r, &mut found, &mut conf),
            MV_STATUS_NOT_INITIALIZED
        );
        assert_eq!(mv_tld_init(t, &fs, BOX), MV_STATUS_SIZE_MISMATCH);
        let outside = mv_rect { x: 80, ..BOX };
        assert_eq!(mv_tld_init(t, &f, outside), MV_STATUS_OUT_OF_BOUNDS);
        let empty = mv_rect { width: 0, ..BOX };
        assert_eq!(mv_tld_init(t, &f, empty), MV_STATUS_ZERO_SIZE);
        // A box below the smallest window at every scale has no grid window.
        let mut coarse = defaults();
        coarse.grid_min_window_px = 200;
        coarse.grid_min_window_floor_px = 200;
        let mut t2: *mut mv_tld = ptr::null_mut();
        assert_eq!(mv_tld_create(&coarse, W, H, &mut t2), MV_STATUS_OK);
        assert_eq!(mv_tld_init(t2, &f, BOX), MV_STATUS_INVALID_ARGUMENT);
        mv_tld_destroy(t2);
        mv_tld_destroy(t);
    }
}
