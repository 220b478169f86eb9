//! The KCF / KCFDP trackers' C functions called from Rust: `mv_kcf_create_in` + init + update +
//! destroy make no heap call in either mode (a counting global allocator), the workspace size is
//! exact (one byte less fails, at every alignment), core errors arrive as their documented
//! statuses, and heap and caller-memory trackers give identical results.

#[path = "../../core/tests/common/counting_alloc.rs"]
mod counting_alloc;

mod common;

use common::{frame_pixels, image, H, W};
use counting_alloc::heap_calls;
use mvision::geometry::mv_rectf;
use mvision::image::{mv_image, MV_PIXEL_RGB8, MV_PIXEL_U16, MV_PIXEL_U8};
use mvision::kcf::*;
use mvision::mv_status::{self, *};
use std::ffi::c_void;
use std::ptr;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

const BOX: mv_rectf = mv_rectf {
    x: 40.0,
    y: 24.0,
    width: 24.0,
    height: 20.0,
};
const MODES: [mv_kcf_mode; 2] = [MV_KCF_MODE_KCF, MV_KCF_MODE_KCFDP];

fn defaults(mode: mv_kcf_mode) -> mv_kcf_params {
    let mut p = std::mem::MaybeUninit::uninit();
    // SAFETY: a writable out-pointer.
    assert_eq!(
        unsafe { mv_kcf_params_init(p.as_mut_ptr(), mode) },
        MV_STATUS_OK
    );
    // SAFETY: written by the call above.
    unsafe { p.assume_init() }
}

fn workspace_size(p: &mv_kcf_params) -> usize {
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { mv_kcf_workspace_size(p, W, H, &mut n) },
        MV_STATUS_OK
    );
    n
}

/// Init on `a`, update on `b`: (box, found, confidence).
fn run(t: *mut mv_kcf, a: &mv_image, b: &mv_image) -> (mv_rectf, bool, f32) {
    let (mut r, mut found, mut conf) = (mv_rectf::default(), false, 0.0f32);
    // SAFETY: a live tracker and valid images and outputs.
    unsafe {
        assert_eq!(mv_kcf_init(t, a, BOX), MV_STATUS_OK);
        assert_eq!(
            mv_kcf_update(t, b, &mut r, &mut found, &mut conf),
            MV_STATUS_OK
        );
    }
    (r, found, conf)
}

#[test]
fn create_in_init_update_destroy_make_no_heap_call() {
    for mode in MODES {
        let p = defaults(mode);
        let size = workspace_size(&p);
        let mut ws = vec![0u8; size + 7];
        let (mut a, mut b) = (
            frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1),
            frame_pixels(42, 25, BOX.width as u32, BOX.height as u32, 3),
        );
        let (fa, fb) = (
            image(&mut a, W, H, MV_PIXEL_U8),
            image(&mut b, W, H, MV_PIXEL_RGB8),
        );
        let (mut r, mut found, mut conf) = (mv_rectf::default(), false, 0.0f32);
        let mut t: *mut mv_kcf = ptr::null_mut();

        let before = heap_calls();
        // SAFETY: every pointer is valid for the call; the workspace outlives the tracker.
        let statuses = unsafe {
            [
                mv_kcf_create_in(ws.as_mut_ptr().add(7).cast(), size, &p, W, H, &mut t),
                mv_kcf_init(t, &fa, BOX),
                mv_kcf_update(t, &fb, &mut r, &mut found, &mut conf),
                mv_kcf_update(t, &fa, &mut r, &mut found, &mut conf),
                // Failing calls allocate nothing either.
                mv_kcf_create_in(ws.as_mut_ptr().cast(), size - 1, &p, W, H, &mut t),
                mv_kcf_init(t, &fa, mv_rectf::default()),
            ]
        };
        // SAFETY: made by mv_kcf_create_in above.
        unsafe { mv_kcf_destroy(t) };
        let calls = heap_calls() - before;

        assert_eq!(
            statuses,
            [
                MV_STATUS_OK,
                MV_STATUS_OK,
                MV_STATUS_OK,
                MV_STATUS_OK,
                MV_STATUS_BUFFER_TOO_SMALL,
                MV_STATUS_ZERO_SIZE
            ],
            "mode {mode}"
        );
        assert!(found, "mode {mode}");
        assert_eq!(
            calls, 0,
            "heap calls between create_in and destroy, mode {mode}"
        );

        // The counter does see the library's allocations: mv_kcf_create makes one block.
        let before = heap_calls();
        // SAFETY: valid pointers; the tracker is destroyed right away.
        unsafe {
            assert_eq!(mv_kcf_create(&p, W, H, &mut t), MV_STATUS_OK);
            mv_kcf_destroy(t);
        }
        assert!(heap_calls() - before >= 2, "one allocation and its release");
    }
}

#[test]
fn workspace_size_is_exact_at_every_alignment() {
    for mode in MODES {
        let p = defaults(mode);
        let size = workspace_size(&p);
        let mut ws = vec![0u8; size + 64];
        let mut px = frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1);
        let f = image(&mut px, W, H, MV_PIXEL_U8);
        for offset in 0..16 {
            let mut t: *mut mv_kcf = ptr::null_mut();
            // SAFETY: ws has offset + size bytes from its start.
            unsafe {
                let at: *mut c_void = ws.as_mut_ptr().add(offset).cast();
                assert_eq!(
                    mv_kcf_create_in(at, size - 1, &p, W, H, &mut t),
                    MV_STATUS_BUFFER_TOO_SMALL
                );
                assert!(t.is_null());
                assert_eq!(mv_kcf_create_in(at, size, &p, W, H, &mut t), MV_STATUS_OK);
                assert!(!t.is_null());
                // The handle lies inside the workspace, and the tracker works there.
                let (lo, hi) = (at as usize, at as usize + size);
                assert!((lo..hi).contains(&(t as usize)));
                let (_, found, _) = run(t, &f, &f);
                assert!(found);
                mv_kcf_destroy(t);
            }
        }
    }
}

#[test]
fn heap_and_caller_memory_trackers_agree_and_follow_the_target() {
    for mode in MODES {
        let p = defaults(mode);
        let size = workspace_size(&p);
        let (mut a, mut b) = (
            frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1),
            frame_pixels(43, 22, BOX.width as u32, BOX.height as u32, 1),
        );
        let (fa, fb) = (
            image(&mut a, W, H, MV_PIXEL_U8),
            image(&mut b, W, H, MV_PIXEL_U8),
        );

        let mut heap: *mut mv_kcf = ptr::null_mut();
        // SAFETY: valid pointers.
        assert_eq!(unsafe { mv_kcf_create(&p, W, H, &mut heap) }, MV_STATUS_OK);
        let from_heap = run(heap, &fa, &fb);
        // SAFETY: made by mv_kcf_create.
        unsafe { mv_kcf_destroy(heap) };

        let mut ws = vec![0u8; size];
        let mut t: *mut mv_kcf = ptr::null_mut();
        // SAFETY: ws is writable for size bytes and outlives the tracker.
        let s = unsafe { mv_kcf_create_in(ws.as_mut_ptr().cast(), size, &p, W, H, &mut t) };
        assert_eq!(s, MV_STATUS_OK);
        let in_place = run(t, &fa, &fb);
        // SAFETY: made by mv_kcf_create_in.
        unsafe { mv_kcf_destroy(t) };

        assert_eq!(from_heap, in_place, "mode {mode}");
        let (r, found, conf) = in_place;
        assert!(found && conf >= 5.0, "mode {mode}: {conf}");
        // The centre follows the object (KCFDP may also re-size the box to a proposal).
        let (cx, cy) = (r.x + r.width / 2.0, r.y + r.height / 2.0);
        assert!(
            (cx - 55.0).abs() < 2.0 && (cy - 32.0).abs() < 2.0,
            "mode {mode}: {r:?}"
        );
    }
}

#[test]
fn gray_and_rgb_frames_of_one_scene_track_alike() {
    for mode in MODES {
        let p = defaults(mode);
        let mut out = Vec::new();
        for (channels, format) in [(1, MV_PIXEL_U8), (3, MV_PIXEL_RGB8)] {
            let (mut a, mut b) = (
                frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, channels),
                frame_pixels(43, 22, BOX.width as u32, BOX.height as u32, channels),
            );
            let (fa, fb) = (image(&mut a, W, H, format), image(&mut b, W, H, format));
            let mut t: *mut mv_kcf = ptr::null_mut();
            // SAFETY: valid pointers; destroyed below.
            assert_eq!(unsafe { mv_kcf_create(&p, W, H, &mut t) }, MV_STATUS_OK);
            out.push(run(t, &fa, &fb));
            // SAFETY: made by mv_kcf_create.
            unsafe { mv_kcf_destroy(t) };
        }
        // Equal R, G and B give the gray frame's luma and gradients, so the same result up to
        // float rounding (FHOG takes the strongest channel gradient, computed apart).
        let ((a, fa, ca), (b, fb, cb)) = (out[0], out[1]);
        assert!(fa && fb, "mode {mode}");
        let d = [
            a.x - b.x,
            a.y - b.y,
            a.width - b.width,
            a.height - b.height,
            (ca - cb) / 100.0,
        ];
        assert!(d.iter().all(|v| v.abs() < 1e-3), "mode {mode}: {:?}", out);
    }
}

/// Status of `mv_kcf_workspace_size` for the defaults of `mode` changed by `edit`.
fn params_status(mode: mv_kcf_mode, edit: impl FnOnce(&mut mv_kcf_params)) -> mv_status {
    let mut p = defaults(mode);
    edit(&mut p);
    let mut n = 0;
    // SAFETY: valid pointers.
    unsafe { mv_kcf_workspace_size(&p, W, H, &mut n) }
}

#[test]
fn params_are_validated_in_both_modes() {
    let mut p = defaults(MV_KCF_MODE_KCF);
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(mv_kcf_params_init(&mut p, 0), MV_STATUS_INVALID_ARGUMENT);
        assert_eq!(mv_kcf_params_init(&mut p, 3), MV_STATUS_INVALID_ARGUMENT);
        assert_eq!(
            mv_kcf_params_init(ptr::null_mut(), MV_KCF_MODE_KCF),
            MV_STATUS_NULL_POINTER
        );
    }
    // The two modes' defaults differ only in `mode`.
    let (k, d) = (defaults(MV_KCF_MODE_KCF), defaults(MV_KCF_MODE_KCFDP));
    assert_eq!(
        mv_kcf_params {
            mode: MV_KCF_MODE_KCFDP,
            ..k
        },
        d
    );
    assert!(workspace_size(&d) > workspace_size(&k));

    for mode in MODES {
        assert_eq!(params_status(mode, |_| {}), MV_STATUS_OK);
        let bad: [fn(&mut mv_kcf_params); 14] = [
            |p| p.mode = 0,
            |p| p.mode = 3,
            |p| p.features = 0,
            |p| p.features = 4,
            |p| p.reserved[3] = 1,
            |p| p.padding = f32::NAN,
            |p| p.interp_factor = 0.0,
            |p| p.template_cells = 24,
            |p| p.psr_found = 1.0,
            |p| p.dp_iou_min = 0.95,
            |p| p.dp_max_rescored = 0,
            |p| p.eb_background_suppression = 2,
            |p| p.eb_max_boxes = 0,
            |p| p.dp_proposal_window_px = 300,
        ];
        for (i, edit) in bad.into_iter().enumerate() {
            assert_eq!(
                params_status(mode, edit),
                MV_STATUS_INVALID_ARGUMENT,
                "mode {mode}, bad edit {i}"
            );
        }
        assert_eq!(
            params_status(mode, |p| p.features = MV_KCF_FEATURES_GRAY),
            MV_STATUS_OK
        );
    }
}

#[test]
fn core_errors_arrive_as_documented_statuses() {
    for mode in MODES {
        let p = defaults(mode);
        let mut n = 0;
        // SAFETY: valid pointers throughout; the tracker is destroyed at the end.
        unsafe {
            assert_eq!(mv_kcf_workspace_size(&p, 0, H, &mut n), MV_STATUS_ZERO_SIZE);
            assert_eq!(
                mv_kcf_workspace_size(&p, 65_536, H, &mut n),
                MV_STATUS_INVALID_ARGUMENT
            );
            assert_eq!(
                mv_kcf_workspace_size(ptr::null(), W, H, &mut n),
                MV_STATUS_NULL_POINTER
            );
            let mut t: *mut mv_kcf = ptr::null_mut();
            assert_eq!(mv_kcf_create(&p, W, H, &mut t), MV_STATUS_OK);
            let mut px = frame_pixels(40, 24, BOX.width as u32, BOX.height as u32, 1);
            let f = image(&mut px, W, H, MV_PIXEL_U8);
            let mut small = vec![0u8; ((W - 1) * H) as usize];
            let fs = image(&mut small, W - 1, H, MV_PIXEL_U8);
            let mut wide = vec![0u8; (W * H * 2) as usize];
            let f16 = image(&mut wide, W, H, MV_PIXEL_U16);
            let f16 = mv_image {
                stride: 2 * W as usize,
                ..f16
            };
            let (mut r, mut found, mut conf) = (mv_rectf::default(), false, 0.0f32);
            assert_eq!(
                mv_kcf_update(t, &f, &mut r, &mut found, &mut conf),
                MV_STATUS_NOT_INITIALIZED
            );
            assert_eq!(mv_kcf_init(t, &fs, BOX), MV_STATUS_SIZE_MISMATCH);
            assert_eq!(mv_kcf_init(t, &f16, BOX), MV_STATUS_UNSUPPORTED_FORMAT);
            let outside = mv_rectf { x: 80.0, ..BOX };
            assert_eq!(mv_kcf_init(t, &f, outside), MV_STATUS_OUT_OF_BOUNDS);
            let nan = mv_rectf { y: f32::NAN, ..BOX };
            assert_eq!(mv_kcf_init(t, &f, nan), MV_STATUS_OUT_OF_BOUNDS);
            let empty = mv_rectf { width: 0.0, ..BOX };
            assert_eq!(mv_kcf_init(t, &f, empty), MV_STATUS_ZERO_SIZE);
            assert_eq!(
                mv_kcf_update(t, &f, &mut r, &mut found, &mut conf),
                MV_STATUS_NOT_INITIALIZED
            );
            mv_kcf_destroy(t);
        }
    }
}
