//! The TLD tracker object (OpenTLD's `TLD`): the detection cascade, the Median-Flow tracker and
//! P-N learning tied together by the integrator, living entirely in one caller workspace.
//!
//! Per frame ([`Tld::update`]): Median-Flow tracks the last box; the detector scans the grid
//! (variance filter → fern ensemble → the `max_candidates` best fern scores → NN classifier);
//! the integrator keeps the tracked box, or re-initialises on a single confident detection
//! cluster away from it, or averages it with the detections that agree; when the result is
//! valid, P-N learning updates the ferns (warped positives, negatives from the detector's
//! false alarms) and the NN templates. Learning and integration follow OpenTLD's C++
//! (`TLD::processFrame`, `learn`, `clusterConf`, `evaluate`).
//!
//! Memory: [`workspace_len`] bytes for a frame size, fixed at creation; `update` never
//! allocates and never grows anything (bounded template stores, bounded candidate lists).
//! Deterministic: every random draw comes from a SplitMix64 seeded by [`TldParams::seed`].

use crate::arena::{Arena, ArenaLen};
use crate::error::{Error, Result};
use crate::filter::{gaussian_blur_u8, gaussian_kernel_size, separable_scratch_len};
use crate::geometry::{Rect, RectF};
use crate::image::{ImageView, ImageViewMut};
use crate::integral::{integral_size, integral_u8, IntegralImage};
use crate::Border;

use super::cluster::cluster;
use super::fern::{
    build_offsets, ensemble_len, fern_codes, fern_scan, fern_scan_scratch_len, offsets_len,
    FernEnsemble, FernParams, FernTables, PixelPair,
};
use super::flow::{FlowParams, MedianFlow};
use super::grid::{
    build_grid, grid_len_bound, grid_scale_bound, Grid, GridParams, GridScale, GridStorage,
};
use super::nn::{nn_len, NnClassifier, NnParams, NnSimilarity};
use super::patch::{extract_patch, Patch, PATCH_LEN};
use super::variance::{variance_filter, VarianceThreshold, DEFAULT_VARIANCE_FACTOR};
use super::warp::WarpRanges;
use crate::rng::{fill_noise_table, SplitMix64, NOISE_TABLE_LEN};

/// Most candidates the NN stage may examine per frame ([`TldParams::max_candidates`]).
pub const MAX_CANDIDATES: u32 = 1000;

/// Smallest side, in pixels, of the part of a tracked box inside the frame; below it the
/// tracker is considered lost (no patch can be compared).
const MIN_TRACKED_SIDE_PX: f32 = 4.0;

/// Fern confidence (mean posterior) from which a false alarm far from the target is offered to
/// the ferns as a negative example (OpenTLD's `conf ≥ 1` on the sum of 10 posteriors).
pub(super) const NEGATIVE_FERN_PREFILTER: f32 = 0.1;

/// Similarity to a negative template above which a patch counts as already known to be
/// background, and is not learnt as the target (OpenTLD's `ncc_thesame`, on `(NCC+1)/2`).
pub(super) const SAME_PATCH_SIMILARITY: f32 = 0.95;

/// NN relative similarity below which the target changed too fast to learn (OpenTLD's 0.5).
pub(super) const FAST_CHANGE_SIMILARITY: f32 = 0.5;

/// Weight of the tracked box against each agreeing detection when they are averaged (OpenTLD).
const TRACKER_WEIGHT: f32 = 10.0;

/// IoU above which a detection agrees with the tracked box and is averaged with it.
const AGREEING_OVERLAP: f32 = 0.7;

/// IoU below which a detection cluster is "away from" the tracked box (a re-init candidate).
const AWAY_OVERLAP: f32 = 0.5;

/// Parameters of the tracker; [`Default`] gives OpenTLD's values (see SEEDS.md), with bounded
/// NN template stores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TldParams {
    /// Scanning grid (min window 24 px, shift 10 %, scales 1.2^k for |k| ≤ 10). A target
    /// narrower than `grid.min_window_px` lowers the grid's minimum to its shorter side, down to
    /// [`TldParams::min_window_floor_px`], so that it has windows at its own scale.
    pub grid: GridParams,
    /// Lowest minimum window side the grid may get from a narrow target, pixels (15, OpenTLD
    /// C++'s `min_win`). Without it, 03_pedestrian1's 16 px wide target has no window at its
    /// own scale and is never re-detected (its success AUC 0.08 → 0.18). The workspace is
    /// sized for this floor. 1 to `grid.min_window_px`.
    pub min_window_floor_px: u32,
    /// Fern ensemble (10 ferns × 13 comparisons, thresholds 0.5). Its `seed` is ignored: the
    /// pixel pairs are drawn from [`TldParams::seed`].
    pub fern: FernParams,
    /// NN classifier (thresholds 0.65 / 0.7 / 0.5, 100 + 100 templates).
    pub nn: NnParams,
    /// Median-Flow (10 × 10 points, pyramidal LK).
    pub flow: FlowParams,
    /// Variance filter: windows need at least `num/den` of the initial box's variance. (1, 2).
    pub variance_factor: (u32, u32),
    /// σ of the Gaussian blur of the frame the ferns read, pixels (2.0, kernel 13 × 13).
    pub blur_sigma_px: f32,
    /// Grid windows with IoU above this with the target are positive examples (0.6).
    pub positive_overlap: f32,
    /// Grid windows with IoU below this with the target are negative examples (0.2).
    pub negative_overlap: f32,
    /// Positive windows per learning step: the closest to the target (10).
    pub closest_positives: u32,
    /// Warps of the positive windows at init (20).
    pub warps_init: u32,
    /// Warps of the positive windows per learning step after init (10).
    pub warps_update: u32,
    /// Rotation range of a warp, degrees (±10).
    pub warp_angle_deg: f32,
    /// Relative scale range of a warp (±0.01).
    pub warp_scale: f32,
    /// Shift range of a warp, fraction of the window (±0.01).
    pub warp_shift: f32,
    /// Standard deviation of a warp's additive noise, grey levels (5).
    pub warp_noise: f32,
    /// Background patches drawn at init for the NN, half to train, half to set its threshold
    /// (100).
    pub init_negative_patches: u32,
    /// Most windows passed from the ferns to the NN per frame, the best fern scores (100);
    /// 1 to [`MAX_CANDIDATES`].
    pub max_candidates: u32,
    /// Learn after init (true). False gives a fixed model: detection and tracking only.
    pub learning: bool,
    /// Seed of every random draw (pixel pairs, warps, shuffles). Default 0.
    pub seed: u64,
}

impl Default for TldParams {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            min_window_floor_px: 15,
            fern: FernParams::default(),
            nn: NnParams::DEFAULT,
            flow: FlowParams::default(),
            variance_factor: DEFAULT_VARIANCE_FACTOR,
            blur_sigma_px: 2.0,
            positive_overlap: 0.6,
            negative_overlap: 0.2,
            closest_positives: 10,
            warps_init: 20,
            warps_update: 10,
            warp_angle_deg: 10.0,
            warp_scale: 0.01,
            warp_shift: 0.01,
            warp_noise: 5.0,
            init_negative_patches: 100,
            max_candidates: 100,
            learning: true,
            seed: 0,
        }
    }
}

impl TldParams {
    /// Checks every documented range (the components' own checks included).
    ///
    /// Errors: [`Error::InvalidArgument`] for a value outside its range or a NaN;
    /// [`Error::InvalidKernel`] for a blur σ above 7/3 px (kernel above 15).
    pub fn validate(&self) -> Result<()> {
        self.nn.validate()?;
        self.flow.validate()?;
        ensemble_len(&self.fern_params())?;
        gaussian_kernel_size(self.blur_sigma_px)?;
        let unit = |t: f32| (0.0..=1.0).contains(&t);
        let finite_non_negative = |v: f32| v.is_finite() && v >= 0.0;
        if self.variance_factor.1 == 0
            || self.min_window_floor_px == 0
            || self.min_window_floor_px > self.grid.min_window_px
            || !unit(self.positive_overlap)
            || !unit(self.negative_overlap)
            || self.closest_positives == 0
            || self.closest_positives > MAX_CANDIDATES
            || self.warps_init > 1000
            || self.warps_update > 1000
            || !finite_non_negative(self.warp_angle_deg)
            || !(finite_non_negative(self.warp_scale) && self.warp_scale < 0.5)
            || !(finite_non_negative(self.warp_shift) && self.warp_shift < 1.0)
            || !finite_non_negative(self.warp_noise)
            || self.init_negative_patches > 100_000
            || self.max_candidates == 0
            || self.max_candidates > MAX_CANDIDATES
        {
            return Err(Error::InvalidArgument);
        }
        // The grid's own checks, on a frame any grid parameters accept.
        grid_len_bound(&self.grid, 3, 3)?;
        Ok(())
    }

    /// The grid parameters for an initial box: the minimum window lowered towards a narrow
    /// box's shorter side, never below the floor.
    pub(super) fn grid_for(&self, bbox: Rect) -> GridParams {
        let side = bbox.width.min(bbox.height).max(0) as u32;
        GridParams {
            min_window_px: side.clamp(self.min_window_floor_px, self.grid.min_window_px),
            ..self.grid
        }
    }

    /// The grid parameters the workspace is sized for (the floor as minimum window).
    fn grid_bound_params(&self) -> GridParams {
        GridParams {
            min_window_px: self.min_window_floor_px,
            ..self.grid
        }
    }

    pub(super) fn fern_params(&self) -> FernParams {
        FernParams {
            seed: self.seed,
            ..self.fern
        }
    }

    pub(super) fn warp_ranges(&self) -> WarpRanges {
        WarpRanges {
            angle_deg: self.warp_angle_deg,
            scale: self.warp_scale,
            shift: self.warp_shift,
            noise: self.warp_noise,
        }
    }
}

/// What one [`Tld::update`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TldOutput {
    /// The target's box in pixels (it may extend past the frame edge), or `None` when the
    /// tracker reports the target absent. Not an error: the target may be occluded or gone.
    pub bbox: Option<RectF>,
    /// Conservative NN similarity `Sc` of the reported box, in `[0, 1]` (0 when absent).
    pub confidence: f32,
    /// Median-Flow followed the target from the previous frame.
    pub tracked: bool,
    /// Windows the whole detection cascade accepted (see [`Tld::detection`]).
    pub detections: u32,
    /// The box came from a detection cluster rather than the tracker (re-initialisation).
    pub reinitialised: bool,
    /// The models learnt from this frame.
    pub learned: bool,
}

/// Scan-grid arrays, filled by [`build_grid`] at init, viewed as a [`Grid`] afterwards.
#[derive(Debug)]
pub(super) struct GridArrays<'a> {
    x: &'a mut [u16],
    y: &'a mut [u16],
    width: &'a mut [u16],
    height: &'a mut [u16],
    scale: &'a mut [u8],
    scales: &'a mut [GridScale],
    pub(super) len: usize,
    scale_count: usize,
}

impl GridArrays<'_> {
    pub(super) fn view(&self, w: usize, h: usize) -> Grid<'_> {
        let n = self.len;
        Grid::from_parts(
            w,
            h,
            &self.x[..n],
            &self.y[..n],
            &self.width[..n],
            &self.height[..n],
            &self.scale[..n],
            &self.scales[..self.scale_count],
        )
    }

    pub(super) fn window(&self, i: usize) -> Rect {
        Rect::new(
            self.x[i] as i32,
            self.y[i] as i32,
            self.width[i] as i32,
            self.height[i] as i32,
        )
    }
}

/// The TLD tracker: everything it keeps lives in the caller's workspace (see the module
/// documentation). Create with [`Tld::new`], start with [`Tld::init`], then call
/// [`Tld::update`] once per frame.
pub struct Tld<'a> {
    pub(super) params: TldParams,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) grid: GridArrays<'a>,
    /// IoU of every window with the box being learnt.
    pub(super) overlap: &'a mut [f32],
    /// Variance survivors (window indices) of the current frame.
    pub(super) survivors: &'a mut [u32],
    pub(super) survivor_count: usize,
    /// Fern codes of the survivors, `ferns` per survivor.
    pub(super) codes: &'a mut [u16],
    /// Fern confidence of each survivor (exact when at least `scan_floor`, see [`fern_scan`]).
    pub(super) fern_conf: &'a mut [f32],
    /// Survivors whose fern confidence is below this have partial codes (0: all exact).
    pub(super) scan_floor: f32,
    scan_scratch: &'a mut [u32],
    /// Scratch index list (candidates, shuffles), one per window.
    pub(super) order: &'a mut [u32],
    pub(super) offsets: &'a mut [PixelPair],
    pub(super) ferns: FernEnsemble<'a>,
    pub(super) nn: NnClassifier<'a>,
    pub(super) flow: MedianFlow<'a>,
    pub(super) blurred: &'a mut [u8],
    pub(super) warped: &'a mut [u8],
    sum: &'a mut [u32],
    sqsum: &'a mut [u64],
    blur_scratch: &'a mut [i32],
    blur_ksize: usize,
    pub(super) noise: &'a mut [f32],
    /// Codes of the warped positive windows of one learning step.
    pub(super) positive_codes: &'a mut [u16],
    /// The closest positive windows of one learning step.
    pub(super) good: &'a mut [u32],
    pub(super) good_count: usize,
    /// Detections of the current frame: window, `Sr`, `Sc`.
    det_window: &'a mut [u32],
    det_relative: &'a mut [f32],
    det_conservative: &'a mut [f32],
    det_count: usize,
    /// Candidates (fern-accepted windows) of the current frame, for negative NN examples.
    pub(super) cand_window: &'a mut [u32],
    pub(super) cand_count: usize,
    det_boxes: &'a mut [Rect],
    cluster_parent: &'a mut [u32],
    cluster_box: &'a mut [RectF],
    cluster_conf: &'a mut [f32],
    pub(super) variance: VarianceThreshold,
    pub(super) fern_threshold: f32,
    pub(super) rng: SplitMix64,
    initialized: bool,
    last_box: Option<RectF>,
    last_valid: bool,
    last_conf: f32,
}

impl core::fmt::Debug for Tld<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tld")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("initialized", &self.initialized)
            .field("grid_len", &self.grid.len)
            .field("last_box", &self.last_box)
            .field("last_valid", &self.last_valid)
            .finish_non_exhaustive()
    }
}

/// Element counts of the storage a [`Tld`] of these parameters and frame size takes; declared
/// ([`workspace_len`]) and carved ([`Tld::new`]) in the same order.
struct Sizes {
    windows: usize,
    scales: usize,
    ferns: usize,
    offsets: usize,
    scan_scratch: usize,
    ensemble: usize,
    nn: usize,
    pixels: usize,
    integral: usize,
    blur_scratch: usize,
    positive_codes: usize,
    good: usize,
    candidates: usize,
}

impl Sizes {
    fn new(params: &TldParams, width: usize, height: usize) -> Result<Self> {
        params.validate()?;
        if width == 0 || height == 0 {
            return Err(Error::ZeroSize);
        }
        let windows = grid_len_bound(&params.grid_bound_params(), width, height)?;
        let scales = grid_scale_bound(&params.grid);
        let fern = params.fern_params();
        let ferns = fern.ferns as usize;
        let (iw, ih) = integral_size(width, height);
        let k = gaussian_kernel_size(params.blur_sigma_px)?;
        let good = params.closest_positives as usize;
        let warps = params.warps_init.max(params.warps_update) as usize + 1;
        let of = |v: Option<usize>| v.ok_or(Error::Overflow);
        Ok(Self {
            windows,
            scales,
            ferns,
            offsets: offsets_len(&fern, scales)?,
            scan_scratch: fern_scan_scratch_len(&fern),
            ensemble: ensemble_len(&fern)?,
            nn: nn_len(&params.nn),
            pixels: of(width.checked_mul(height))?,
            integral: of(iw.checked_mul(ih))?,
            blur_scratch: separable_scratch_len(width, k, k),
            positive_codes: of(good.checked_mul(warps).and_then(|v| v.checked_mul(ferns)))?,
            good,
            candidates: params.max_candidates as usize,
        })
    }
}

/// Bytes of workspace a [`Tld`] needs for `width × height` frames: enough for any initial box
/// (the grid is sized by [`grid_len_bound`]).
///
/// Errors: [`Error::InvalidArgument`] / [`Error::InvalidKernel`] as [`TldParams::validate`] or
/// for a frame side above 65 535 px; [`Error::ZeroSize`] for an empty frame;
/// [`Error::Overflow`] when the size does not fit `usize`.
pub fn workspace_len(params: &TldParams, width: usize, height: usize) -> Result<usize> {
    let s = Sizes::new(params, width, height)?;
    let mut len = ArenaLen::new();
    for n in [s.windows; 4] {
        len.add::<u16>(n)?;
    }
    len.add::<u8>(s.windows)?;
    len.add::<GridScale>(s.scales)?;
    len.add::<f32>(s.windows)?; // overlap
    len.add::<u32>(s.windows)?; // survivors
    len.add::<u16>(s.windows.checked_mul(s.ferns).ok_or(Error::Overflow)?)?;
    len.add::<f32>(s.windows)?; // fern_conf
    len.add::<u32>(s.windows)?; // order
    len.add::<PixelPair>(s.offsets)?;
    len.add::<u32>(s.scan_scratch)?;
    len.add::<u32>(s.ensemble)?;
    len.add::<u32>(s.ensemble)?;
    len.add::<f32>(s.ensemble)?;
    len.add::<f32>(s.nn)?;
    MedianFlow::declare(&mut len, &params.flow, width, height)?;
    len.add::<u8>(s.pixels)?;
    len.add::<u8>(s.pixels)?;
    len.add::<u32>(s.integral)?;
    len.add::<u64>(s.integral)?;
    len.add::<i32>(s.blur_scratch)?;
    len.add::<f32>(NOISE_TABLE_LEN)?;
    len.add::<u16>(s.positive_codes)?;
    len.add::<u32>(s.good)?;
    len.add::<u32>(s.candidates)?; // det_window
    len.add::<f32>(s.candidates)?;
    len.add::<f32>(s.candidates)?;
    len.add::<u32>(s.candidates)?; // cand_window
    len.add::<Rect>(s.candidates)?; // det_boxes
    len.add::<u32>(s.candidates)?;
    len.add::<RectF>(s.candidates)?; // cluster_box
    len.add::<f32>(s.candidates)?;
    Ok(len.bytes())
}

impl<'a> Tld<'a> {
    /// Creates an uninitialised tracker for `width × height` frames inside `workspace` (at least
    /// [`workspace_len`] bytes; any alignment).
    ///
    /// Errors: those of [`workspace_len`]; [`Error::BufferTooSmall`] if `workspace` is shorter.
    pub fn new(
        params: &TldParams,
        width: usize,
        height: usize,
        workspace: &'a mut [u8],
    ) -> Result<Self> {
        let need = workspace_len(params, width, height)?;
        if workspace.len() < need {
            return Err(Error::BufferTooSmall);
        }
        let s = Sizes::new(params, width, height)?;
        let mut a = Arena::new(workspace);
        let grid = GridArrays {
            x: a.take(s.windows)?,
            y: a.take(s.windows)?,
            width: a.take(s.windows)?,
            height: a.take(s.windows)?,
            scale: a.take(s.windows)?,
            scales: a.take(s.scales)?,
            len: 0,
            scale_count: 0,
        };
        let overlap = a.take(s.windows)?;
        let survivors = a.take(s.windows)?;
        let codes = a.take(s.windows * s.ferns)?;
        let fern_conf = a.take(s.windows)?;
        let order = a.take(s.windows)?;
        let offsets = a.take(s.offsets)?;
        let scan_scratch = a.take(s.scan_scratch)?;
        let fern = params.fern_params();
        let ferns = FernEnsemble::new(
            &fern,
            FernTables {
                positive: a.take(s.ensemble)?,
                negative: a.take(s.ensemble)?,
                posterior: a.take(s.ensemble)?,
            },
        )?;
        let nn = NnClassifier::new(params.nn, a.take(s.nn)?)?;
        let flow = MedianFlow::new(&mut a, &params.flow, width, height)?;
        let blurred = a.take(s.pixels)?;
        let warped = a.take(s.pixels)?;
        let sum = a.take(s.integral)?;
        let sqsum = a.take(s.integral)?;
        let blur_scratch = a.take(s.blur_scratch)?;
        let noise: &mut [f32] = a.take(NOISE_TABLE_LEN)?;
        let positive_codes = a.take(s.positive_codes)?;
        let good = a.take(s.good)?;
        let det_window = a.take(s.candidates)?;
        let det_relative = a.take(s.candidates)?;
        let det_conservative = a.take(s.candidates)?;
        let cand_window = a.take(s.candidates)?;
        let det_boxes = a.take(s.candidates)?;
        let cluster_parent = a.take(s.candidates)?;
        let cluster_box = a.take(s.candidates)?;
        let cluster_conf = a.take(s.candidates)?;
        let mut rng = SplitMix64(params.seed ^ 0x544c_445f_5452_4b52);
        fill_noise_table(&mut rng, noise);
        Ok(Self {
            params: *params,
            width,
            height,
            grid,
            overlap,
            survivors,
            survivor_count: 0,
            codes,
            fern_conf,
            scan_floor: 0.0,
            scan_scratch,
            order,
            offsets,
            ferns,
            nn,
            flow,
            blurred,
            warped,
            sum,
            sqsum,
            blur_scratch,
            blur_ksize: gaussian_kernel_size(params.blur_sigma_px)?,
            noise,
            positive_codes,
            good,
            good_count: 0,
            det_window,
            det_relative,
            det_conservative,
            det_count: 0,
            cand_window,
            cand_count: 0,
            det_boxes,
            cluster_parent,
            cluster_box,
            cluster_conf,
            variance: VarianceThreshold::default(),
            fern_threshold: fern.positive_threshold,
            rng,
            initialized: false,
            last_box: None,
            last_valid: false,
            last_conf: 0.0,
        })
    }
}

impl<'a> Tld<'a> {
    /// The parameters the tracker was created with.
    pub fn params(&self) -> &TldParams {
        &self.params
    }

    /// Frame size in pixels, `(width, height)`.
    pub fn frame_size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// True once [`Tld::init`] has succeeded.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// Number of windows of the scanning grid built at the last init (0 before).
    pub fn grid_len(&self) -> usize {
        self.grid.len
    }

    /// Positive and negative NN templates currently stored.
    pub fn template_counts(&self) -> (usize, usize) {
        (self.nn.positive_len(), self.nn.negative_len())
    }

    /// Detection `i` of the last update (a grid window accepted by the whole cascade) and its
    /// relative NN similarity `Sr`, or `None` past [`TldOutput::detections`].
    pub fn detection(&self, i: usize) -> Option<(Rect, f32)> {
        (i < self.det_count).then(|| {
            (
                self.grid.window(self.det_window[i] as usize),
                self.det_relative[i],
            )
        })
    }

    fn check_frame(&self, frame: &ImageView<'_, u8>) -> Result<()> {
        if frame.size() != (self.width, self.height) {
            return Err(Error::SizeMismatch);
        }
        Ok(())
    }

    /// Blurred copy and integral images of `frame` (checked to be the tracker's size).
    fn prepare(&mut self, frame: &ImageView<'_, u8>) -> Result<()> {
        let (w, h) = (self.width, self.height);
        let mut blurred = ImageViewMut::packed(self.blurred, w, h)?;
        gaussian_blur_u8(
            frame,
            &mut blurred,
            self.blur_ksize,
            self.params.blur_sigma_px,
            Border::Reflect101,
            self.blur_scratch,
        )?;
        let (iw, ih) = integral_size(w, h);
        let mut sum = ImageViewMut::packed(self.sum, iw, ih)?;
        let mut sqsum = ImageViewMut::packed(self.sqsum, iw, ih)?;
        integral_u8(frame, &mut sum, Some(&mut sqsum))
    }

    /// The integral and squared-integral images of the prepared frame.
    pub(super) fn integral(&self) -> Result<IntegralImage<'_>> {
        let (iw, ih) = integral_size(self.width, self.height);
        IntegralImage::new(
            ImageView::packed(self.sum, iw, ih)?,
            Some(ImageView::packed(self.sqsum, iw, ih)?),
        )
    }

    /// Starts tracking the object in `bbox` (pixels, entirely inside `frame`): builds the grid,
    /// trains the ferns on warped copies of the object and on the background, the NN on the
    /// object's patch and background patches, and sets the detector's thresholds from held-out
    /// background. May be called again to restart on a new object; the models are reset.
    ///
    /// Errors: [`Error::SizeMismatch`] for a frame of another size; [`Error::ZeroSize`] for an
    /// empty box; [`Error::OutOfBounds`] for a box not inside the frame;
    /// [`Error::InvalidArgument`] when no grid window fits the box (smaller than
    /// `grid.min_window_px` at every scale). The tracker is left uninitialised on error.
    pub fn init(&mut self, frame: &ImageView<'_, u8>, bbox: Rect) -> Result<()> {
        self.check_frame(frame)?;
        if bbox.is_empty() {
            return Err(Error::ZeroSize);
        }
        if !bbox.is_inside(self.width, self.height) {
            return Err(Error::OutOfBounds);
        }
        self.initialized = false;
        self.last_box = None;
        let (n, n_scales) = {
            let g = &mut self.grid;
            let grid = build_grid(
                &self.params.grid_for(bbox),
                self.width,
                self.height,
                bbox,
                GridStorage {
                    x: g.x,
                    y: g.y,
                    width: g.width,
                    height: g.height,
                    scale: g.scale,
                    scales: g.scales,
                },
            )?;
            (grid.len(), grid.scales().len())
        };
        self.grid.len = n;
        self.grid.scale_count = n_scales;
        if n == 0 {
            return Err(Error::InvalidArgument);
        }
        let fern = self.params.fern_params();
        build_offsets(&fern, &self.grid.scales[..n_scales], self.offsets)?;
        self.ferns.reset();
        self.ferns
            .set_thresholds(fern.positive_threshold, fern.negative_threshold)?;
        self.fern_threshold = fern.positive_threshold;
        self.nn.clear();
        self.nn.set_thresholds(&self.params.nn)?;
        self.rng = SplitMix64(self.params.seed ^ 0x544c_445f_494e_4954);
        self.prepare(frame)?;
        self.flow.set_reference(frame)?;
        let (num, den) = self.params.variance_factor;
        self.variance = VarianceThreshold::from_window(&self.integral()?, bbox, num, den)?;
        self.learn_init(frame, bbox)?;
        self.det_count = 0;
        self.initialized = true;
        self.last_box = Some(bbox.to_f32());
        self.last_valid = true;
        self.last_conf = 1.0;
        Ok(())
    }

    /// Runs the variance filter and the ferns over the whole grid on the prepared frame:
    /// survivors, their codes and fern confidences. With `early_exit`, survivors that cannot
    /// reach the detection or negative-learning threshold are rejected after the first ferns
    /// ([`fern_scan`]); otherwise every code is complete (init trains on all of them).
    pub(super) fn scan_ferns(&mut self, early_exit: bool) -> Result<()> {
        let fern = self.params.fern_params();
        let ferns = fern.ferns as usize;
        let grid = self.grid.view(self.width, self.height);
        let (iw, ih) = integral_size(self.width, self.height);
        let integral = IntegralImage::new(
            ImageView::packed(self.sum, iw, ih)?,
            Some(ImageView::packed(self.sqsum, iw, ih)?),
        )?;
        let n = variance_filter(&integral, &grid, self.variance, self.survivors)?;
        let blurred = ImageView::packed(self.blurred, self.width, self.height)?;
        if early_exit {
            self.scan_floor = self.fern_threshold.min(fern.negative_threshold);
            fern_scan(
                &self.ferns,
                &blurred,
                &grid,
                self.offsets,
                &self.survivors[..n],
                self.scan_floor,
                self.scan_scratch,
                self.codes,
                self.fern_conf,
            )?;
        } else {
            self.scan_floor = 0.0;
            fern_codes(
                &fern,
                &blurred,
                &grid,
                self.offsets,
                &self.survivors[..n],
                self.codes,
            )?;
            self.ferns
                .confidences(&self.codes[..n * ferns], &mut self.fern_conf[..n])?;
        }
        self.survivor_count = n;
        Ok(())
    }

    /// The detector on the prepared frame: ferns over the grid, then the NN on the
    /// `max_candidates` best fern scores. Fills the candidate and detection lists.
    fn detect(&mut self, frame: &ImageView<'_, u8>) -> Result<()> {
        self.scan_ferns(true)?;
        let n = self.survivor_count;
        let mut m = 0;
        for j in 0..n {
            if self.fern_conf[j] > self.fern_threshold {
                self.order[m] = j as u32;
                m += 1;
            }
        }
        let k = self.params.max_candidates as usize;
        if m > k {
            // Best fern scores first; ties to the lower survivor (window) index.
            let conf = &*self.fern_conf;
            self.order[..m].select_nth_unstable_by(k - 1, |&a, &b| {
                conf[b as usize]
                    .total_cmp(&conf[a as usize])
                    .then(a.cmp(&b))
            });
            m = k;
        }
        self.order[..m].sort_unstable();
        self.cand_count = m;
        self.det_count = 0;
        let mut patch: Patch = [0.0; PATCH_LEN];
        for c in 0..m {
            let wi = self.survivors[self.order[c] as usize];
            self.cand_window[c] = wi;
            extract_patch(frame, self.grid.window(wi as usize), &mut patch)?;
            let sim = self.nn.classify(&patch);
            if self.nn.is_target(&sim) {
                let d = self.det_count;
                self.det_window[d] = wi;
                self.det_relative[d] = sim.relative;
                self.det_conservative[d] = sim.conservative;
                self.det_count += 1;
            }
        }
        Ok(())
    }

    /// The NN similarity of the part of `bbox` inside the frame, or `None` when that part is
    /// smaller than [`MIN_TRACKED_SIDE_PX`] on a side.
    pub(super) fn box_similarity(
        &self,
        frame: &ImageView<'_, u8>,
        bbox: RectF,
    ) -> Result<Option<(Rect, NnSimilarity)>> {
        let Some(r) = inner_rect(bbox, self.width, self.height) else {
            return Ok(None);
        };
        let mut patch: Patch = [0.0; PATCH_LEN];
        extract_patch(frame, r, &mut patch)?;
        Ok(Some((r, self.nn.classify(&patch))))
    }

    /// Tracks, detects, integrates and learns on the next frame (same size as the init frame).
    ///
    /// Errors: [`Error::NotInitialized`] before a successful [`Tld::init`];
    /// [`Error::SizeMismatch`] for a frame of another size. The tracker's state is unchanged
    /// on error.
    pub fn update(&mut self, frame: &ImageView<'_, u8>) -> Result<TldOutput> {
        if !self.initialized {
            return Err(Error::NotInitialized);
        }
        self.check_frame(frame)?;
        self.prepare(frame)?;
        // 1. Median-Flow from the previous frame (whose pyramid the flow keeps).
        let mut tracked: Option<(RectF, f32, bool)> = None;
        match self.last_box {
            Some(b) => {
                let outcome = self.flow.track(frame, b)?;
                if let Some(tb) = outcome.bbox {
                    if let Some((_, sim)) = self.box_similarity(frame, tb)? {
                        let valid = self.last_valid || self.nn.is_valid(&sim);
                        tracked = Some((tb, sim.conservative, valid));
                    }
                }
            }
            None => self.flow.set_reference(frame)?,
        }
        // 2. Detection.
        self.detect(frame)?;
        let clusters = if self.det_count > 0 {
            for i in 0..self.det_count {
                self.det_boxes[i] = self.grid.window(self.det_window[i] as usize);
            }
            cluster(
                &self.det_boxes[..self.det_count],
                &self.det_conservative[..self.det_count],
                self.cluster_parent,
                self.cluster_box,
                self.cluster_conf,
            )
        } else {
            0
        };
        // 3. Integration (OpenTLD's processFrame).
        let mut out = TldOutput {
            bbox: None,
            confidence: 0.0,
            tracked: tracked.is_some(),
            detections: self.det_count as u32,
            reinitialised: false,
            learned: false,
        };
        match tracked {
            Some((tb, tconf, tvalid)) => {
                let (next, conf, valid);
                // Confident clusters away from the tracker.
                let mut away = None;
                let mut away_count = 0;
                for c in 0..clusters {
                    if self.cluster_box[c].iou(&tb) < AWAY_OVERLAP && self.cluster_conf[c] > tconf {
                        away_count += 1;
                        away = Some(c);
                    }
                }
                if let (1, Some(c)) = (away_count, away) {
                    next = self.cluster_box[c];
                    conf = self.cluster_conf[c];
                    valid = false;
                    out.reinitialised = true;
                } else {
                    // Weighted mean of the tracker and the detections that agree with it.
                    let (mut sx, mut sy, mut sw, mut sh) = (
                        TRACKER_WEIGHT * tb.x,
                        TRACKER_WEIGHT * tb.y,
                        TRACKER_WEIGHT * tb.width,
                        TRACKER_WEIGHT * tb.height,
                    );
                    let mut weight = TRACKER_WEIGHT;
                    for i in 0..self.det_count {
                        let d = self.det_boxes[i].to_f32();
                        if d.iou(&tb) > AGREEING_OVERLAP {
                            sx += d.x;
                            sy += d.y;
                            sw += d.width;
                            sh += d.height;
                            weight += 1.0;
                        }
                    }
                    next = RectF::new(sx / weight, sy / weight, sw / weight, sh / weight);
                    conf = tconf;
                    valid = tvalid;
                }
                self.last_box = Some(next);
                self.last_conf = conf;
                self.last_valid = valid;
            }
            None => {
                self.last_valid = false;
                if clusters == 1 {
                    self.last_box = Some(self.cluster_box[0]);
                    self.last_conf = self.cluster_conf[0];
                    out.reinitialised = true;
                } else {
                    self.last_box = None;
                    self.last_conf = 0.0;
                }
            }
        }
        out.bbox = self.last_box;
        out.confidence = if out.bbox.is_some() {
            self.last_conf
        } else {
            0.0
        };
        // 4. P-N learning from a valid result.
        if self.params.learning && self.last_valid {
            if let Some(b) = self.last_box {
                out.learned = self.learn_update(frame, b)?;
            }
        }
        Ok(out)
    }
}

/// The integer rectangle covering the part of `bbox` inside a `w × h` frame, or `None` when that
/// part is smaller than [`MIN_TRACKED_SIDE_PX`] on a side (or the box is not finite).
pub(super) fn inner_rect(bbox: RectF, w: usize, h: usize) -> Option<Rect> {
    let c = bbox.clamp_to(w as f32, h as f32)?;
    if !(c.width >= MIN_TRACKED_SIDE_PX && c.height >= MIN_TRACKED_SIDE_PX) {
        return None;
    }
    let r = c.round().clamp_to(w, h)?;
    (r.width as f32 >= MIN_TRACKED_SIDE_PX && r.height as f32 >= MIN_TRACKED_SIDE_PX).then_some(r)
}
