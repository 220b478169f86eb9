//! `mv_kcf`: the KCF tracker (kernelised correlation filter, Henriques et al. 2015) and KCFDP
//! (KCF with EdgeBoxes proposals for scale and aspect ratio) behind one C handle.
//!
//! Life cycle, as `mv_tld`: `mv_kcf_params_init` fills the defaults of a mode
//! (`MV_KCF_MODE_KCF` or `MV_KCF_MODE_KCFDP`), `mv_kcf_create_in` (caller memory, no heap) or
//! `mv_kcf_create` (heap) makes a tracker for one frame size, `mv_kcf_init` starts it on a box,
//! `mv_kcf_update` follows the target frame by frame, `mv_kcf_destroy` ends it. "Target lost"
//! is a normal result of `mv_kcf_update` (`*out_found == false`), not an error.
//!
//! Memory: `mv_kcf_workspace_size` bytes hold everything, the handle included (the layout of
//! `mv_tld`, shared through `tracker_handle`): any workspace alignment is accepted and neither
//! `mv_kcf_create_in`, `mv_kcf_init`, `mv_kcf_update` nor `mv_kcf_destroy` allocates.
//! Frames are `MV_PIXEL_U8` (gray) or `MV_PIXEL_RGB8` (packed RGB), with any stride.

use crate::geometry::mv_rectf;
use crate::image::{check, check_rgb8, input_view, mv_image, InputCopy, MV_PIXEL_RGB8};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use crate::tracker_handle::{self, Block, Placed};
use mvision_core::edgeboxes::EdgeBoxParams;
use mvision_core::kcf::dp::workspace_len as kcfdp_workspace_len;
use mvision_core::kcf::{workspace_len, Frame, Kcf, KcfDp, KcfDpParams, KcfFeatures, KcfOutput};
use mvision_core::{PixelFormat, RectF};
use std::ffi::c_void;
use std::mem::size_of;

/// Which tracker an `mv_kcf` runs (one of the `MV_KCF_MODE_*` constants).
pub type mv_kcf_mode = u32;
/// KCF alone: the box follows the target's position at its initial size.
pub const MV_KCF_MODE_KCF: mv_kcf_mode = 1;
/// KCFDP: KCF plus EdgeBoxes proposals, so the box also follows scale and aspect ratio.
pub const MV_KCF_MODE_KCFDP: mv_kcf_mode = 2;

/// Features the correlation filter uses (one of the `MV_KCF_FEATURES_*` constants).
pub type mv_kcf_features = u32;
/// FHOG only (31 channels).
pub const MV_KCF_FEATURES_FHOG: mv_kcf_features = 1;
/// Mean-subtracted gray only (1 channel; the original KCF's raw-pixel variant).
pub const MV_KCF_FEATURES_GRAY: mv_kcf_features = 2;
/// FHOG and gray (32 channels; the default).
pub const MV_KCF_FEATURES_FHOG_GRAY: mv_kcf_features = 3;

/// Number of reserved `uint32_t` slots at the end of `mv_kcf_params`.
pub const MV_KCF_PARAMS_RESERVED: usize = 8;

/// Parameters of the KCF and KCFDP trackers. Always start from `mv_kcf_params_init`, which
/// writes the defaults of a mode (noted per field), then change fields.
///
/// `mode` chooses the tracker; 0 (and any other value) is invalid, which catches a struct that
/// was never initialised. The `kcf` fields drive both modes; the `dp_` (KCFDP) and `eb_`
/// (EdgeBoxes, the proposal generator) fields act in `MV_KCF_MODE_KCFDP` only, but are
/// validated in both modes, so a struct valid for one mode stays valid after switching `mode`.
/// The other EdgeBoxes settings are fixed at their defaults (NMS adaptation η = 1, edge
/// grouping thresholds 0.1 / 0.5 / 0.5, affinity γ = 2).
///
/// ABI evolution: the struct has a fixed size; future parameters take `reserved` slots, with
/// 0 meaning "the default". The `reserved` slots must be 0 (`mv_kcf_params_init` zeroes them);
/// anything else gives `MV_STATUS_INVALID_ARGUMENT`.
///
/// Every function that takes parameters validates all of them: a value outside its range (NaN
/// included) gives `MV_STATUS_INVALID_ARGUMENT`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct mv_kcf_params {
    /// `MV_KCF_MODE_KCF` or `MV_KCF_MODE_KCFDP` (as given to `mv_kcf_params_init`).
    pub mode: mv_kcf_mode,
    /// One of the `MV_KCF_FEATURES_*` constants (`MV_KCF_FEATURES_FHOG_GRAY`).
    pub features: mv_kcf_features,
    /// Context around the target: the window is `1 + padding` times the target, 0–10 (1.5).
    pub padding: f32,
    /// Ridge-regression regulariser λ, finite and > 0 (1e-4).
    pub lambda: f32,
    /// Bandwidth σ of the Gaussian kernel, finite and > 0 (0.5).
    pub kernel_sigma: f32,
    /// Label σ as a fraction of the target's size in cells, finite and > 0 (0.06).
    pub output_sigma_factor: f32,
    /// Learning rate of the model update, in `(0, 1]` (0.01).
    pub interp_factor: f32,
    /// FHOG cell side, template pixels, 1–16 (4).
    pub cell_px: u32,
    /// The correlation grid has `template_cells²` cells; a power of two, 4–64 (16). The
    /// workspace size grows with its square.
    pub template_cells: u32,
    /// Peak-to-sidelobe ratio below which the target is reported lost, finite and ≥ 0 (5).
    pub psr_lost: f32,
    /// PSR from which a lost target is found again, finite and ≥ `psr_lost` (10).
    pub psr_found: f32,
    /// While lost, the search covers this many times the window on each axis, 1–2.5 (2).
    pub search_expand_lost: f32,
    /// KCFDP: the proposal window is this many times the KCF box, about its centre, 1–4 (1.4).
    pub dp_window_scale: f32,
    /// KCFDP: the proposal window is resampled so its longer side is at most this, pixels;
    /// 16 to `eb_max_window_px` (128).
    pub dp_proposal_window_px: u32,
    /// KCFDP: proposals are kept when their IoU with the KCF box is at least this, in `[0, 1]`
    /// (0.75)…
    pub dp_iou_min: f32,
    /// …and at most this, in `[dp_iou_min, 1]` (0.9).
    pub dp_iou_max: f32,
    /// KCFDP: most kept proposals re-scored by the filter per frame, 1–1000 (20).
    pub dp_max_rescored: u32,
    /// KCFDP: fraction of the way the box moves towards a better proposal, in `[0, 1]` (0.7).
    pub dp_damping: f32,
    /// EdgeBoxes: sliding-window step (IoU of neighbouring windows), in `(0, 1)` (0.65).
    pub eb_alpha: f32,
    /// EdgeBoxes: NMS threshold, in `(0, 1]` (0.75).
    pub eb_beta: f32,
    /// EdgeBoxes: boxes scoring below this are dropped, finite and ≥ 0 (5e-4).
    pub eb_min_score: f32,
    /// EdgeBoxes: most proposals per frame, 1–10 000 (1000). The workspace grows with it.
    pub eb_max_boxes: u32,
    /// EdgeBoxes: exponent κ of the box-size normaliser, in `[0, 4]` (1.4).
    pub eb_kappa: f32,
    /// EdgeBoxes: 1 damps edge groups touching the window border, 0 does not; other values are
    /// invalid (1).
    pub eb_background_suppression: u32,
    /// EdgeBoxes: the largest window side handled, pixels, 16–1024 (256). The workspace grows
    /// with its square.
    pub eb_max_window_px: u32,
    /// EdgeBoxes: refine only the best this many boxes; 0 refines every box (0).
    pub eb_max_refined: u32,
    /// Must be 0 (see the struct documentation).
    pub reserved: [u32; MV_KCF_PARAMS_RESERVED],
}

// The C layout has no implicit padding (26 four-byte fields, then the reserve): tests compare
// whole structs byte by byte.
const _: () = assert!(size_of::<mv_kcf_params>() == 26 * 4 + 4 * MV_KCF_PARAMS_RESERVED);

impl mv_kcf_params {
    fn from_core(mode: mv_kcf_mode, p: &KcfDpParams) -> Self {
        let (k, e) = (&p.kcf, &p.edgeboxes);
        Self {
            mode,
            features: match k.features {
                KcfFeatures::Fhog => MV_KCF_FEATURES_FHOG,
                KcfFeatures::Gray => MV_KCF_FEATURES_GRAY,
                KcfFeatures::FhogGray => MV_KCF_FEATURES_FHOG_GRAY,
            },
            padding: k.padding,
            lambda: k.lambda,
            kernel_sigma: k.kernel_sigma,
            output_sigma_factor: k.output_sigma_factor,
            interp_factor: k.interp_factor,
            cell_px: k.cell_px,
            template_cells: k.template_cells,
            psr_lost: k.psr_lost,
            psr_found: k.psr_found,
            search_expand_lost: k.search_expand_lost,
            dp_window_scale: p.window_scale,
            dp_proposal_window_px: p.proposal_window_px,
            dp_iou_min: p.iou_min,
            dp_iou_max: p.iou_max,
            dp_max_rescored: p.max_rescored,
            dp_damping: p.damping,
            eb_alpha: e.alpha,
            eb_beta: e.beta,
            eb_min_score: e.min_score,
            eb_max_boxes: e.max_boxes,
            eb_kappa: e.kappa,
            eb_background_suppression: e.background_suppression as u32,
            eb_max_window_px: e.max_window_px,
            eb_max_refined: e.max_refined,
            reserved: [0; MV_KCF_PARAMS_RESERVED],
        }
    }

    /// The mode and the core parameters (all of them, in both modes), validated.
    fn to_core(self) -> Result<(mv_kcf_mode, KcfDpParams), mv_status> {
        let features = match self.features {
            MV_KCF_FEATURES_FHOG => KcfFeatures::Fhog,
            MV_KCF_FEATURES_GRAY => KcfFeatures::Gray,
            MV_KCF_FEATURES_FHOG_GRAY => KcfFeatures::FhogGray,
            _ => return Err(MV_STATUS_INVALID_ARGUMENT),
        };
        if !matches!(self.mode, MV_KCF_MODE_KCF | MV_KCF_MODE_KCFDP)
            || self.reserved.iter().any(|&r| r != 0)
            || self.eb_background_suppression > 1
        {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        let mut p = KcfDpParams::default();
        p.kcf.features = features;
        p.kcf.padding = self.padding;
        p.kcf.lambda = self.lambda;
        p.kcf.kernel_sigma = self.kernel_sigma;
        p.kcf.output_sigma_factor = self.output_sigma_factor;
        p.kcf.interp_factor = self.interp_factor;
        p.kcf.cell_px = self.cell_px;
        p.kcf.template_cells = self.template_cells;
        p.kcf.psr_lost = self.psr_lost;
        p.kcf.psr_found = self.psr_found;
        p.kcf.search_expand_lost = self.search_expand_lost;
        p.window_scale = self.dp_window_scale;
        p.proposal_window_px = self.dp_proposal_window_px;
        p.iou_min = self.dp_iou_min;
        p.iou_max = self.dp_iou_max;
        p.max_rescored = self.dp_max_rescored;
        p.damping = self.dp_damping;
        p.edgeboxes = EdgeBoxParams {
            alpha: self.eb_alpha,
            beta: self.eb_beta,
            min_score: self.eb_min_score,
            max_boxes: self.eb_max_boxes,
            kappa: self.eb_kappa,
            background_suppression: self.eb_background_suppression == 1,
            max_window_px: self.eb_max_window_px,
            max_refined: self.eb_max_refined,
            ..EdgeBoxParams::DEFAULT
        };
        p.validate()?;
        Ok((self.mode, p))
    }
}

/// The core tracker of either mode. Not boxed (that would allocate): the handle lives in the
/// workspace, where the larger KCFDP variant costs a KCF tracker under 1 KB of its 0.27 MB.
#[allow(clippy::large_enum_variant)]
enum Tracker {
    Kcf(Kcf<'static>),
    KcfDp(KcfDp<'static>),
}

/// A KCF or KCFDP tracker for frames of one size. Opaque; create with `mv_kcf_create_in` or
/// `mv_kcf_create`, free with `mv_kcf_destroy`. Not thread-safe: one call at a time per
/// tracker (different trackers may run on different threads).
pub struct mv_kcf {
    tracker: Tracker,
    block: Block,
}

impl Placed for mv_kcf {
    fn block(&self) -> Block {
        self.block
    }
}

/// Validated parameters and the core arena's size for them.
///
/// # Safety
/// `params` NULL or a readable `mv_kcf_params`.
unsafe fn sized(
    params: *const mv_kcf_params,
    width: u32,
    height: u32,
) -> Result<(mv_kcf_mode, KcfDpParams, usize), mv_status> {
    non_null(params)?;
    // SAFETY: non-null; the caller guarantees it points to an mv_kcf_params.
    let (mode, p) = unsafe { params.read() }.to_core()?;
    check_side(width)?;
    check_side(height)?;
    let (w, h) = (width as usize, height as usize);
    let core = if mode == MV_KCF_MODE_KCF {
        workspace_len(&p.kcf, w, h)?
    } else {
        kcfdp_workspace_len(&p, w, h)?
    };
    Ok((mode, p, core))
}

/// `MV_STATUS_ZERO_SIZE` for 0, `MV_STATUS_INVALID_ARGUMENT` above 65 535 (as `mv_tld`).
fn check_side(side: u32) -> Result<(), mv_status> {
    match side {
        0 => Err(MV_STATUS_ZERO_SIZE),
        1..=65_535 => Ok(()),
        _ => Err(MV_STATUS_INVALID_ARGUMENT),
    }
}

/// The builder of a tracker in its arena, for `tracker_handle`.
fn build(
    mode: mv_kcf_mode,
    params: KcfDpParams,
    width: u32,
    height: u32,
) -> impl FnOnce(&'static mut [u8], Block) -> Result<mv_kcf, mv_status> {
    move |arena, block| {
        let (w, h) = (width as usize, height as usize);
        let tracker = if mode == MV_KCF_MODE_KCF {
            Tracker::Kcf(Kcf::new(&params.kcf, w, h, arena)?)
        } else {
            Tracker::KcfDp(KcfDp::new(&params, w, h, arena)?)
        };
        Ok(mv_kcf { tracker, block })
    }
}

/// Writes the default parameters of `mode` (`MV_KCF_MODE_KCF` or `MV_KCF_MODE_KCFDP`; each
/// default is noted in `mv_kcf_params`) into `*out`, with `reserved` zeroed. The defaults of
/// the two modes differ only in `mode`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL; `MV_STATUS_INVALID_ARGUMENT` for another
/// mode.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_params_init(
    out: *mut mv_kcf_params,
    mode: mv_kcf_mode,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        if !matches!(mode, MV_KCF_MODE_KCF | MV_KCF_MODE_KCFDP) {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        let p = mv_kcf_params::from_core(mode, &KcfDpParams::default());
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// The bytes of workspace `mv_kcf_create_in` needs for `width × height` frames with `*params`,
/// into `*out_size`: everything the tracker keeps, its handle included, for any workspace
/// alignment and any initial box. A pure function of its arguments (the same on every call in a
/// given build of the library). It depends on the mode and the parameters, not on the frame
/// size; with the defaults about 0.27 MB (KCF) and 2.1 MB (KCFDP, mostly EdgeBoxes' storage for
/// `eb_max_window_px`² windows and `eb_max_boxes` proposals).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `params` or `out_size` is NULL; the parameter errors of
/// `mv_kcf_params`; `MV_STATUS_ZERO_SIZE` for a zero width or height;
/// `MV_STATUS_INVALID_ARGUMENT` for a side above 65 535 px; `MV_STATUS_OVERFLOW` if the size
/// does not fit `size_t`.
///
/// # Safety
/// `params` NULL or readable; `out_size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_workspace_size(
    params: *const mv_kcf_params,
    width: u32,
    height: u32,
    out_size: *mut usize,
) -> mv_status {
    guard(|| {
        non_null(out_size)?;
        // SAFETY: forwarded contract.
        let (_, _, core) = unsafe { sized(params, width, height)? };
        let total = tracker_handle::total_bytes::<mv_kcf>(core)?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out_size.write(total) };
        Ok(())
    })
}

/// Creates an uninitialised tracker for `width × height` frames inside the caller's `workspace`
/// (`size` bytes, at least `mv_kcf_workspace_size`; any alignment) and writes its handle into
/// `*out`. Allocates nothing. The workspace belongs to the tracker until `mv_kcf_destroy`:
/// do not read, write or free it before, and free it yourself after (the handle points into
/// it). On error nothing is written, neither `*out` nor the workspace.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `workspace`, `params` or `out` is NULL; the errors of
/// `mv_kcf_workspace_size`; `MV_STATUS_BUFFER_TOO_SMALL` if `size` is below it.
///
/// # Safety
/// `workspace` NULL or writable for `size` bytes and not used by anything else until the
/// tracker is destroyed; `params` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_create_in(
    workspace: *mut c_void,
    size: usize,
    params: *const mv_kcf_params,
    width: u32,
    height: u32,
    out: *mut *mut mv_kcf,
) -> mv_status {
    guard(|| {
        non_null(workspace)?;
        non_null(out)?;
        // SAFETY: forwarded contract.
        let (mode, p, core) = unsafe { sized(params, width, height)? };
        // SAFETY: workspace is writable for size bytes (the caller's contract).
        let handle = unsafe {
            tracker_handle::create_in(workspace, size, core, build(mode, p, width, height))?
        };
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// As `mv_kcf_create_in`, with a workspace the library allocates (one block of
/// `mv_kcf_workspace_size` bytes) and `mv_kcf_destroy` frees.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `params` or `out` is NULL; the errors of
/// `mv_kcf_workspace_size`; `MV_STATUS_OUT_OF_MEMORY` if the allocation fails.
///
/// # Safety
/// `params` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_create(
    params: *const mv_kcf_params,
    width: u32,
    height: u32,
    out: *mut *mut mv_kcf,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        // SAFETY: forwarded contract.
        let (mode, p, core) = unsafe { sized(params, width, height)? };
        let handle = tracker_handle::create(core, build(mode, p, width, height))?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// A core frame over `frame`, which must be a valid `MV_PIXEL_U8` or `MV_PIXEL_RGB8` image.
///
/// # Safety
/// `frame` NULL or a readable `mv_image` whose pixels stay readable for `'a`.
unsafe fn frame_of<'a>(
    frame: *const mv_image,
    hold: &'a mut InputCopy<u8>,
) -> Result<Frame<'a>, mv_status> {
    non_null(frame)?;
    // SAFETY: non-null; the caller guarantees it points to an mv_image.
    if unsafe { (*frame).format } == MV_PIXEL_RGB8 {
        // SAFETY: forwarded contract.
        let c = unsafe { check_rgb8(frame)? };
        return Ok(Frame::rgb(c.data, c.width, c.height, c.stride)?);
    }
    // SAFETY: forwarded contract.
    let c = unsafe { check(frame)? };
    c.expect(PixelFormat::U8)?;
    // SAFETY: validated by check, format U8, no output image in this call.
    Ok(Frame::Gray(unsafe { input_view::<u8>(&c, &[], hold)? }))
}

/// Starts tracking the object inside `bbox` (pixels, sub-pixel, entirely inside `frame`) and
/// trains the filter on it. May be called again to restart on a new object (the model is
/// reset). The box is `mv_rectf` so that a box `mv_kcf_update` returned can restart a tracker
/// unrounded; an `mv_rect` `r` converts as `{r.x, r.y, r.width, r.height}`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `kcf` or `frame` is NULL; the `mv_image` errors for
/// `frame` (see `mv_image_init`); `MV_STATUS_UNSUPPORTED_FORMAT` unless `frame` is
/// `MV_PIXEL_U8` or `MV_PIXEL_RGB8`; `MV_STATUS_SIZE_MISMATCH` for a frame of another size than
/// the tracker's; `MV_STATUS_ZERO_SIZE` for an empty box (width or height ≤ 0);
/// `MV_STATUS_OUT_OF_BOUNDS` for a box not entirely inside the frame or with a non-finite
/// coordinate; `MV_STATUS_INVALID_ARGUMENT` for a box so small (subnormal sides) that its
/// sampling scale underflows.
/// After `MV_STATUS_INVALID_ARGUMENT` the tracker is uninitialised; after any other error it
/// is unchanged.
///
/// # Safety
/// `kcf` NULL or live; `frame` NULL or a readable `mv_image` whose pixels do not overlap the
/// tracker's workspace.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_init(
    kcf: *mut mv_kcf,
    frame: *const mv_image,
    bbox: mv_rectf,
) -> mv_status {
    guard(|| {
        non_null(kcf)?;
        let mut hold = InputCopy::default();
        // SAFETY: forwarded contract.
        let f = unsafe { frame_of(frame, &mut hold)? };
        let b = RectF::new(bbox.x, bbox.y, bbox.width, bbox.height);
        // SAFETY: the caller guarantees a live tracker used by no other call now.
        match unsafe { &mut (*kcf).tracker } {
            Tracker::Kcf(t) => t.init(&f, b)?,
            Tracker::KcfDp(t) => t.init(&f, b)?,
        }
        Ok(())
    })
}

/// Follows the target into the next `frame` (the tracker's size; gray and RGB frames may be
/// mixed). On success writes `*out_found`: `true` with the target's box in `*out_box` (pixels,
/// sub-pixel; it may extend past the frame edge; in KCF mode it keeps its initial size) and the
/// detection's peak-to-sidelobe ratio in `*out_confidence` (≥ `psr_lost`; higher is a clearer
/// match), or `false` when the target is lost (PSR below `psr_lost`: occluded, out of view,
/// drifted) with `*out_box = {0, 0, 0, 0}` and `*out_confidence = 0`. A lost target is a
/// success, not an error: keep calling `mv_kcf_update`; the tracker searches a wider area around
/// the last position and reports the target found again once the PSR reaches `psr_found`.
///
/// Allocates nothing.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `kcf`, `frame` or an output is NULL; the frame errors of
/// `mv_kcf_init` (image, format, `MV_STATUS_SIZE_MISMATCH`); `MV_STATUS_NOT_INITIALIZED` before
/// a successful `mv_kcf_init`. The tracker is unchanged on error.
///
/// # Safety
/// `kcf` NULL or live; `frame` as in `mv_kcf_init`; outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_update(
    kcf: *mut mv_kcf,
    frame: *const mv_image,
    out_box: *mut mv_rectf,
    out_found: *mut bool,
    out_confidence: *mut f32,
) -> mv_status {
    guard(|| {
        non_null(kcf)?;
        non_null(out_box)?;
        non_null(out_found)?;
        non_null(out_confidence)?;
        let mut hold = InputCopy::default();
        // SAFETY: forwarded contract.
        let f = unsafe { frame_of(frame, &mut hold)? };
        // SAFETY: the caller guarantees a live tracker used by no other call now.
        let o: KcfOutput = match unsafe { &mut (*kcf).tracker } {
            Tracker::Kcf(t) => t.update(&f)?,
            Tracker::KcfDp(t) => t.update(&f)?,
        };
        let b = o.bbox.map(mv_rectf::from_core).unwrap_or_default();
        // SAFETY: non-null; the caller guarantees they are writable.
        unsafe {
            out_box.write(b);
            out_found.write(o.bbox.is_some());
            out_confidence.write(if o.bbox.is_some() { o.psr } else { 0.0 });
        }
        Ok(())
    })
}

/// Ends a tracker. Accepts NULL (does nothing). For `mv_kcf_create` trackers it frees the
/// library's workspace; for `mv_kcf_create_in` trackers it frees nothing (the workspace is the
/// caller's to free or reuse afterwards).
///
/// # Safety
/// `kcf` NULL or from `mv_kcf_create*` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_kcf_destroy(kcf: *mut mv_kcf) {
    let _ = guard(|| {
        // SAFETY: forwarded contract.
        unsafe { tracker_handle::destroy(kcf) };
        Ok(())
    });
}
