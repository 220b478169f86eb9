//! `mv_tld`: the TLD tracker (Tracking-Learning-Detection, after OpenTLD) behind a C handle.
//!
//! Life cycle, as OpenCV's trackers and VPI's stateful algorithms: `mv_tld_params_init` fills the
//! defaults, `mv_tld_create_in` (caller memory, no heap) or `mv_tld_create` (heap) makes a
//! tracker for one frame size, `mv_tld_init` starts it on a box, `mv_tld_update` follows the
//! target frame by frame, `mv_tld_destroy` ends it. "Target not found" is a normal result of
//! `mv_tld_update` (`*out_found == false`), not an error.
//!
//! Memory: `mv_tld_workspace_size` bytes hold everything, the handle included. In
//! `mv_tld_create_in` the handle is written at the first suitably aligned byte of the caller's
//! workspace and the core tracker's arena follows it, so any workspace alignment is accepted and
//! nothing is allocated; `mv_tld_create` makes the same layout in one heap block it owns. A flag
//! in the handle tells `mv_tld_destroy` which of the two it is freeing.

use crate::geometry::{mv_rect, mv_rectf};
use crate::image::{check, input_view, mv_image, InputCopy};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use crate::tracker_handle::{self, Block, Placed};
use mvision_core::tld::fern::FernParams;
use mvision_core::tld::flow::FlowParams;
use mvision_core::tld::grid::GridParams;
use mvision_core::tld::nn::NnParams;
use mvision_core::tld::{workspace_len, Tld, TldParams};
use mvision_core::{ImageView, PixelFormat};
use std::ffi::c_void;
use std::mem::size_of;

/// Number of reserved `uint32_t` slots at the end of `mv_tld_params`.
pub const MV_TLD_PARAMS_RESERVED: usize = 7;

/// Parameters of the TLD tracker. Always start from `mv_tld_params_init`, which writes the
/// defaults (OpenTLD's values, noted per field), then change fields.
///
/// ABI evolution: the struct has a fixed size; future parameters take `reserved` slots, with
/// 0 meaning "the default", so code built against this header keeps working with later
/// libraries. The `reserved` slots must be 0 (`mv_tld_params_init` zeroes them); anything else
/// gives `MV_STATUS_INVALID_ARGUMENT`, which also catches a struct that was never initialised.
///
/// Every function that takes parameters validates all of them: a value outside its range (NaN
/// included) gives `MV_STATUS_INVALID_ARGUMENT`, a `blur_sigma_px` above 7/3 (a kernel larger
/// than 15) `MV_STATUS_INVALID_KERNEL`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct mv_tld_params {
    /// Scanning grid: smallest window side, pixels, ≥ 1 (24).
    pub grid_min_window_px: u32,
    /// Scanning grid: shift between windows, percent of the window's shorter side, 1–100 (10).
    pub grid_shift_percent: u32,
    /// Scanning grid: scales `1.2^k` for `|k| ≤ grid_scale_steps`, 0–20 (10).
    pub grid_scale_steps: u32,
    /// Fern ensemble: number of ferns, 1–64 (10).
    pub fern_count: u32,
    /// Fern ensemble: pixel comparisons per fern, 1–16 (13).
    pub fern_features: u32,
    /// Mean fern posterior above which a window is detected, in `[0, 1]` (0.5).
    pub fern_positive_threshold: f32,
    /// Mean fern posterior from which a negative example is learnt, in `[0, 1]` (0.5).
    pub fern_negative_threshold: f32,
    /// Most positive NN templates kept, ≥ 2 (100).
    pub nn_max_positive: u32,
    /// Most negative NN templates kept, ≥ 1 (100).
    pub nn_max_negative: u32,
    /// NN relative similarity above which a window is the target, in `[0, 1]` (0.65).
    pub nn_detect_threshold: f32,
    /// NN conservative similarity above which a result validates learning, in `[0, 1]` (0.7).
    pub nn_valid_threshold: f32,
    /// NN relative similarity above which a negative example is learnt, in `[0, 1]` (0.5).
    pub nn_negative_threshold: f32,
    /// Median-Flow: points per grid side, 1–32 (10).
    pub flow_points_per_side: u32,
    /// Median-Flow: Lucas-Kanade window side, pixels, odd, 3–31 (9).
    pub flow_window_px: u32,
    /// Median-Flow: pyramid levels including full resolution, 1–8 (5).
    pub flow_levels: u32,
    /// Median-Flow: most Lucas-Kanade iterations per level, 1–100 (20).
    pub flow_max_iterations: u32,
    /// Median-Flow: iterations stop below this update, pixels, finite and ≥ 0 (0.03).
    pub flow_epsilon_px: f32,
    /// Median-Flow: tracking fails above this median forward-backward error, pixels, > 0
    /// (10; `INFINITY` disables the test).
    pub flow_max_median_fb_px: f32,
    /// Median-Flow: side of the NCC patches, pixels, 2–64 (10).
    pub flow_ncc_patch_px: u32,
    /// Variance filter: windows need `num/den` of the initial box's variance (1).
    pub variance_factor_num: u32,
    /// Variance filter denominator, ≥ 1 (2).
    pub variance_factor_den: u32,
    /// σ of the Gaussian blur of the frame the ferns read, pixels, in `(0, 7/3]` (2.0).
    pub blur_sigma_px: f32,
    /// Grid windows with IoU above this with the target are positive examples, `[0, 1]` (0.6).
    pub positive_overlap: f32,
    /// Grid windows with IoU below this with the target are negative examples, `[0, 1]` (0.2).
    pub negative_overlap: f32,
    /// Positive windows per learning step (the closest to the target), 1–1000 (10).
    pub closest_positives: u32,
    /// Warps of the positive windows at init, 0–1000 (20).
    pub warps_init: u32,
    /// Warps of the positive windows per learning step after init, 0–1000 (10).
    pub warps_update: u32,
    /// Rotation range of a warp, degrees, finite and ≥ 0 (10).
    pub warp_angle_deg: f32,
    /// Relative scale range of a warp, in `[0, 0.5)` (0.01).
    pub warp_scale: f32,
    /// Shift range of a warp, fraction of the window, in `[0, 1)` (0.01).
    pub warp_shift: f32,
    /// Standard deviation of a warp's additive noise, grey levels, finite and ≥ 0 (5).
    pub warp_noise: f32,
    /// Background patches drawn at init for the NN, 0–100 000 (100).
    pub init_negative_patches: u32,
    /// Most windows passed from the ferns to the NN per frame, 1–1000 (100).
    pub max_candidates: u32,
    /// 1: learn after init; 0: a fixed model (detection and tracking only). Other values are
    /// invalid (1).
    pub learning: u32,
    /// Seed of every random draw; equal seeds and frames give equal results (0).
    pub seed: u64,
    /// Scanning grid: a target narrower than `grid_min_window_px` lowers the minimum to its
    /// shorter side, but not below this, pixels; 1 to `grid_min_window_px` (15). The workspace
    /// size depends on it.
    pub grid_min_window_floor_px: u32,
    /// Must be 0 (see the struct documentation).
    pub reserved: [u32; MV_TLD_PARAMS_RESERVED],
}

// The C layout has no implicit padding (34 four-byte fields, the u64, one four-byte field, then the u64, then the reserve):
// tests compare whole structs byte by byte.
const _: () = assert!(size_of::<mv_tld_params>() == 35 * 4 + 8 + 4 * MV_TLD_PARAMS_RESERVED);

impl mv_tld_params {
    fn from_core(p: &TldParams) -> Self {
        Self {
            grid_min_window_px: p.grid.min_window_px,
            grid_shift_percent: p.grid.shift_percent,
            grid_scale_steps: p.grid.scale_steps,
            fern_count: p.fern.ferns,
            fern_features: p.fern.features,
            fern_positive_threshold: p.fern.positive_threshold,
            fern_negative_threshold: p.fern.negative_threshold,
            nn_max_positive: u32::try_from(p.nn.max_positive).unwrap_or(u32::MAX),
            nn_max_negative: u32::try_from(p.nn.max_negative).unwrap_or(u32::MAX),
            nn_detect_threshold: p.nn.detect_threshold,
            nn_valid_threshold: p.nn.valid_threshold,
            nn_negative_threshold: p.nn.negative_threshold,
            flow_points_per_side: p.flow.points_per_side,
            flow_window_px: p.flow.window_px,
            flow_levels: p.flow.levels,
            flow_max_iterations: p.flow.max_iterations,
            flow_epsilon_px: p.flow.epsilon_px,
            flow_max_median_fb_px: p.flow.max_median_fb_px,
            flow_ncc_patch_px: p.flow.ncc_patch_px,
            variance_factor_num: p.variance_factor.0,
            variance_factor_den: p.variance_factor.1,
            blur_sigma_px: p.blur_sigma_px,
            positive_overlap: p.positive_overlap,
            negative_overlap: p.negative_overlap,
            closest_positives: p.closest_positives,
            warps_init: p.warps_init,
            warps_update: p.warps_update,
            warp_angle_deg: p.warp_angle_deg,
            warp_scale: p.warp_scale,
            warp_shift: p.warp_shift,
            warp_noise: p.warp_noise,
            init_negative_patches: p.init_negative_patches,
            max_candidates: p.max_candidates,
            learning: p.learning as u32,
            seed: p.seed,
            grid_min_window_floor_px: p.min_window_floor_px,
            reserved: [0; MV_TLD_PARAMS_RESERVED],
        }
    }

    /// The core parameters, validated.
    fn to_core(self) -> Result<TldParams, mv_status> {
        if self.reserved.iter().any(|&r| r != 0) || self.learning > 1 {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        let p = TldParams {
            grid: GridParams {
                min_window_px: self.grid_min_window_px,
                shift_percent: self.grid_shift_percent,
                scale_steps: self.grid_scale_steps,
            },
            fern: FernParams {
                ferns: self.fern_count,
                features: self.fern_features,
                seed: 0, // the tracker draws its pixel pairs from `seed`
                positive_threshold: self.fern_positive_threshold,
                negative_threshold: self.fern_negative_threshold,
            },
            nn: NnParams {
                max_positive: self.nn_max_positive as usize,
                max_negative: self.nn_max_negative as usize,
                detect_threshold: self.nn_detect_threshold,
                valid_threshold: self.nn_valid_threshold,
                negative_threshold: self.nn_negative_threshold,
            },
            flow: FlowParams {
                points_per_side: self.flow_points_per_side,
                window_px: self.flow_window_px,
                levels: self.flow_levels,
                max_iterations: self.flow_max_iterations,
                epsilon_px: self.flow_epsilon_px,
                max_median_fb_px: self.flow_max_median_fb_px,
                ncc_patch_px: self.flow_ncc_patch_px,
            },
            variance_factor: (self.variance_factor_num, self.variance_factor_den),
            blur_sigma_px: self.blur_sigma_px,
            positive_overlap: self.positive_overlap,
            negative_overlap: self.negative_overlap,
            closest_positives: self.closest_positives,
            warps_init: self.warps_init,
            warps_update: self.warps_update,
            warp_angle_deg: self.warp_angle_deg,
            warp_scale: self.warp_scale,
            warp_shift: self.warp_shift,
            warp_noise: self.warp_noise,
            init_negative_patches: self.init_negative_patches,
            max_candidates: self.max_candidates,
            learning: self.learning == 1,
            seed: self.seed,
            min_window_floor_px: self.grid_min_window_floor_px,
        };
        p.validate()?;
        Ok(p)
    }
}

/// A TLD tracker for frames of one size. Opaque; create with `mv_tld_create_in` or
/// `mv_tld_create`, free with `mv_tld_destroy`. Not thread-safe: one call at a time per
/// tracker (different trackers may run on different threads).
pub struct mv_tld {
    tracker: Tld<'static>,
    block: Block,
}

impl Placed for mv_tld {
    fn block(&self) -> Block {
        self.block
    }
}

/// Validated parameters and the total workspace size (handle + core arena) for them.
///
/// # Safety
/// `params` NULL or a readable `mv_tld_params`.
unsafe fn sized(
    params: *const mv_tld_params,
    width: u32,
    height: u32,
) -> Result<(TldParams, usize, usize), mv_status> {
    non_null(params)?;
    // SAFETY: non-null; the caller guarantees it points to an mv_tld_params.
    let p = unsafe { params.read() }.to_core()?;
    let core = workspace_len(&p, width as usize, height as usize)?;
    let total = tracker_handle::total_bytes::<mv_tld>(core)?;
    Ok((p, core, total))
}

/// The builder of a tracker in its arena, for `tracker_handle`.
fn build(
    params: TldParams,
    width: u32,
    height: u32,
) -> impl FnOnce(&'static mut [u8], Block) -> Result<mv_tld, mv_status> {
    move |arena, block| {
        Ok(mv_tld {
            tracker: Tld::new(&params, width as usize, height as usize, arena)?,
            block,
        })
    }
}

/// Writes the default parameters (OpenTLD's values, each noted in `mv_tld_params`) into `*out`,
/// with `reserved` zeroed.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_params_init(out: *mut mv_tld_params) -> mv_status {
    guard(|| {
        non_null(out)?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(mv_tld_params::from_core(&TldParams::default())) };
        Ok(())
    })
}

/// The bytes of workspace `mv_tld_create_in` needs for `width × height` frames with `*params`,
/// into `*out_size`: everything the tracker keeps, its handle included, for any workspace
/// alignment and any initial box. A pure function of its arguments (the same on every call in a
/// given build of the library). With the defaults: about 2.3 MB for 160 × 120 frames, 6 MB for
/// 320 × 240, 22 MB for 640 × 480 (it grows with the number of grid windows).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `params` or `out_size` is NULL; the parameter errors of
/// `mv_tld_params`; `MV_STATUS_ZERO_SIZE` for a zero width or height;
/// `MV_STATUS_INVALID_ARGUMENT` for a side above 65 535 px; `MV_STATUS_OVERFLOW` if the size
/// does not fit `size_t`.
///
/// # Safety
/// `params` NULL or readable; `out_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_workspace_size(
    params: *const mv_tld_params,
    width: u32,
    height: u32,
    out_size: *mut usize,
) -> mv_status {
    guard(|| {
        non_null(out_size)?;
        // SAFETY: forwarded contract.
        let (_, _, total) = unsafe { sized(params, width, height)? };
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out_size.write(total) };
        Ok(())
    })
}

/// Creates an uninitialised tracker for `width × height` frames inside the caller's `workspace`
/// (`size` bytes, at least `mv_tld_workspace_size`; any alignment) and writes its handle into
/// `*out`. Allocates nothing. The workspace belongs to the tracker until `mv_tld_destroy`:
/// do not read, write or free it before, and free it yourself after (the handle points into
/// it). On error nothing is written, neither `*out` nor the workspace.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `workspace`, `params` or `out` is NULL; the errors of
/// `mv_tld_workspace_size`; `MV_STATUS_BUFFER_TOO_SMALL` if `size` is below it.
///
/// # Safety
/// `workspace` NULL or writable for `size` bytes and not used by anything else until the
/// tracker is destroyed; `params` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_create_in(
    workspace: *mut c_void,
    size: usize,
    params: *const mv_tld_params,
    width: u32,
    height: u32,
    out: *mut *mut mv_tld,
) -> mv_status {
    guard(|| {
        non_null(workspace)?;
        non_null(out)?;
        // SAFETY: forwarded contract.
        let (p, core, _) = unsafe { sized(params, width, height)? };
        // SAFETY: workspace is writable for size bytes (the caller's contract).
        let handle =
            unsafe { tracker_handle::create_in(workspace, size, core, build(p, width, height))? };
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// As `mv_tld_create_in`, with a workspace the library allocates (one block of
/// `mv_tld_workspace_size` bytes) and `mv_tld_destroy` frees.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `params` or `out` is NULL; the errors of
/// `mv_tld_workspace_size`; `MV_STATUS_OUT_OF_MEMORY` if the allocation fails.
///
/// # Safety
/// `params` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_create(
    params: *const mv_tld_params,
    width: u32,
    height: u32,
    out: *mut *mut mv_tld,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        // SAFETY: forwarded contract.
        let (p, core, _) = unsafe { sized(params, width, height)? };
        let handle = tracker_handle::create(core, build(p, width, height))?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// A core view of `frame`, which must be a valid `MV_PIXEL_U8` image.
///
/// # Safety
/// `frame` NULL or a readable `mv_image` whose pixels stay readable for `'a`.
unsafe fn frame_view<'a>(
    frame: *const mv_image,
    hold: &'a mut InputCopy<u8>,
) -> Result<ImageView<'a, u8>, mv_status> {
    // SAFETY: forwarded contract.
    let c = unsafe { check(frame)? };
    c.expect(PixelFormat::U8)?;
    // SAFETY: validated by check, format U8, no output image in this call.
    unsafe { input_view::<u8>(&c, &[], hold) }
}

/// Starts tracking the object inside `bbox` (pixels, entirely inside `frame`): builds the
/// scanning grid and trains the detector on the object and the background. May be called again
/// to restart on a new object (the models are reset).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `tld` is NULL; the `mv_image` errors for `frame` (see
/// `mv_image_init`); `MV_STATUS_UNSUPPORTED_FORMAT` unless `frame` is `MV_PIXEL_U8`;
/// `MV_STATUS_SIZE_MISMATCH` for a frame of another size than the tracker's;
/// `MV_STATUS_ZERO_SIZE` for an empty box; `MV_STATUS_OUT_OF_BOUNDS` for a box not entirely
/// inside the frame; `MV_STATUS_INVALID_ARGUMENT` when the box is smaller than
/// `grid_min_window_px` at every grid scale. After `MV_STATUS_INVALID_ARGUMENT` the tracker is
/// uninitialised; after any other error it is unchanged.
///
/// # Safety
/// `tld` NULL or live; `frame` NULL or a readable `mv_image` whose pixels do not overlap the
/// tracker's workspace.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_init(
    tld: *mut mv_tld,
    frame: *const mv_image,
    bbox: mv_rect,
) -> mv_status {
    guard(|| {
        non_null(tld)?;
        let mut hold = InputCopy::default();
        // SAFETY: forwarded contract.
        let view = unsafe { frame_view(frame, &mut hold)? };
        // SAFETY: the caller guarantees a live tracker used by no other call now.
        let t = unsafe { &mut (*tld).tracker };
        t.init(&view, bbox.to_core())?;
        Ok(())
    })
}

/// Follows the target into the next `frame` (the tracker's size). On success writes
/// `*out_found`: `true` with the target's box in `*out_box` (pixels, sub-pixel; it may extend
/// past the frame edge) and its conservative NN similarity in `*out_confidence` (in `[0, 1]`),
/// or `false` when the target is absent (occluded, out of view, lost) with `*out_box =
/// {0, 0, 0, 0}` and `*out_confidence = 0`. An absent target is a success, not an error: keep
/// calling `mv_tld_update`; the detector re-finds the target when it reappears.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `tld` or an output is NULL; the frame errors of
/// `mv_tld_init` (image, format, `MV_STATUS_SIZE_MISMATCH`); `MV_STATUS_NOT_INITIALIZED` before a successful `mv_tld_init`. The tracker
/// is unchanged on error.
///
/// # Safety
/// `tld` NULL or live; `frame` as in `mv_tld_init`; outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_update(
    tld: *mut mv_tld,
    frame: *const mv_image,
    out_box: *mut mv_rectf,
    out_found: *mut bool,
    out_confidence: *mut f32,
) -> mv_status {
    guard(|| {
        non_null(tld)?;
        non_null(out_box)?;
        non_null(out_found)?;
        non_null(out_confidence)?;
        let mut hold = InputCopy::default();
        // SAFETY: forwarded contract.
        let view = unsafe { frame_view(frame, &mut hold)? };
        // SAFETY: the caller guarantees a live tracker used by no other call now.
        let t = unsafe { &mut (*tld).tracker };
        let o = t.update(&view)?;
        let b = o.bbox.map(mv_rectf::from_core).unwrap_or_default();
        // SAFETY: non-null; the caller guarantees they are writable.
        unsafe {
            out_box.write(b);
            out_found.write(o.bbox.is_some());
            out_confidence.write(if o.bbox.is_some() { o.confidence } else { 0.0 });
        }
        Ok(())
    })
}

/// The detections of the last `mv_tld_update` (grid windows the whole detection cascade
/// accepted, in pixels; for drawing and diagnostics): the first `min(count, capacity)` into
/// `out` and `count` into `*out_count`. `out` may be NULL when `capacity` is 0 (to ask for the
/// count). 0 detections right after `mv_tld_init`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `tld` or `out_count` is NULL, or `out` is NULL with
/// `capacity > 0`; `MV_STATUS_NOT_INITIALIZED` before a successful `mv_tld_init`.
///
/// # Safety
/// `tld` NULL or live; `out` NULL or writable for `capacity` rectangles; `out_count` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_detections(
    tld: *const mv_tld,
    out: *mut mv_rect,
    capacity: usize,
    out_count: *mut usize,
) -> mv_status {
    guard(|| {
        non_null(tld)?;
        non_null(out_count)?;
        if capacity > 0 {
            non_null(out)?;
        }
        // SAFETY: the caller guarantees a live tracker.
        let t = unsafe { &(*tld).tracker };
        if !t.is_initialized() {
            return Err(MV_STATUS_NOT_INITIALIZED);
        }
        let mut n = 0;
        while let Some((r, _)) = t.detection(n) {
            if n < capacity {
                // SAFETY: out is writable for capacity > n rectangles.
                unsafe { out.add(n).write(mv_rect::from_core(r)) };
            }
            n += 1;
        }
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out_count.write(n) };
        Ok(())
    })
}

/// Ends a tracker. Accepts NULL (does nothing). For `mv_tld_create` trackers it frees the
/// library's workspace; for `mv_tld_create_in` trackers it frees nothing (the workspace is the
/// caller's to free or reuse afterwards).
///
/// # Safety
/// `tld` NULL or from `mv_tld_create*` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_tld_destroy(tld: *mut mv_tld) {
    let _ = guard(|| {
        // SAFETY: forwarded contract.
        unsafe { tracker_handle::destroy(tld) };
        Ok(())
    });
}
