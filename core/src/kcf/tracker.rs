//! The KCF tracker object: kernelised correlation filter (Henriques et al., TPAMI 2015) with a
//! Gaussian kernel, FHOG + gray features, the robust numerator/denominator model update
//! (Danelljan et al., "Adaptive Color Attributes", CVPR 2014, eq. 5) and a lost/re-found state
//! driven by the peak-to-sidelobe ratio, living entirely in one caller workspace.
//!
//! Geometry: the window is centred on the target and `(1 + padding)` times its size; it is
//! resampled (bilinear) to a grid of `cells_x × cells_y` cells of `cell_px` pixels with
//! `cells_x·cells_y = template_cells²` and power-of-two sides: of those shapes, the one that
//! covers the window with the finest square pixels (the window grows on the axis with room to
//! spare). The grid is fixed at [`Kcf::init`]; a target whose size changes later
//! ([`Kcf::learn`]) scales the window with it on each axis.
//!
//! Model, per learning step at a window `x` (rate η, 1 at init):
//! `x̂ ← (1−η)x̂ + η·F(x)`, `A ← (1−η)A + η·ŷ⊙k̂ˣˣ`, `B ← (1−η)B + η·k̂ˣˣ⊙(k̂ˣˣ+λ)`,
//! `α̂ = A/B` (for one frame `α̂ = ŷ/(k̂ˣˣ+λ)`, Henriques' closed form). Detection at a window
//! `z`: response `= F⁻¹(k̂ˣᶻ⊙α̂)`, the peak's cyclic shift (sub-cell by a parabola per axis)
//! scaled back to frame pixels. Kernel: `k = exp(−max(0, ‖x‖²+‖z‖²−2·x⋆z)/(σ²·N·C))` with
//! `N` cells and `C` channels, as Henriques' `gaussian_correlation.m`. Feature channels are
//! transformed two at a time (one complex FFT with channel `2p` in the real and `2p+1` in the
//! imaginary part): the real part of `F⁻¹(Σₚ Ẑₚ⊙X̂ₚ*)` is exactly `Σ_c z_c⋆x_c`.
//!
//! Lost and re-found ([`Kcf::update`]): a PSR below `psr_lost` reports the target lost and
//! freezes the model; while lost, every frame is searched with a grid of windows a quarter
//! window apart around the last position, and a PSR of at least `psr_found` re-finds it.
//!
//! Cost on the development machine (320 × 240, default parameters, 16 × 16 cells): about
//! 0.30 ms an update on packed RGB, 0.18 ms on gray, while tracking; about 25 detections
//! (≈ 3 ms) a frame while lost. On the four evaluation clips (CLI `eval`): pooled success AUC
//! 0.711, precision@20 px 0.888 (OpenCV's KCF: 0.474, 0.624). Known weakness, as in any KCF:
//! without scale estimation (KCFDP's job) a target changing size drifts (03_pedestrian1, AUC
//! 0.13), and on a static background as textured as the target the window, mostly
//! background, can lock onto the background.
//!
//! Memory: [`workspace_len`] bytes, fixed by the parameters and frame size (not the box).
//! `update` never allocates. Deterministic: no randomness, fixed operation order.

use crate::arena::{Arena, ArenaLen};
use crate::error::{Error, Result};
use crate::geometry::RectF;

use super::features::{FeatureScratch, Frame, KcfFeatures, SampleWindow};
use super::fft::{fft_2d, ifft_2d, is_supported_len, Complex32, MAX_FFT_LEN, MIN_FFT_LEN};

/// The PSR ignores a square of `2r+1` cells around the peak, `r = max(1, cells/16)` on each
/// axis (MOSSE's 11 × 11 pixels of a 64 × 64 response scaled to cell grids).
const PSR_EXCLUSION_DIVISOR: usize = 16;

/// Parameters of the tracker; [`Default`] gives the values of SEEDS.md 003 (KCFDP) for the
/// filter, and measured choices for the grid size and the lost/re-found thresholds (on the
/// four evaluation clips, 01_david, 02_jumping, 03_pedestrian1, 06_car).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KcfParams {
    /// Context around the target: the window is `(1 + padding)` times the target (1.5).
    /// 0 to 10.
    pub padding: f32,
    /// Ridge-regression regulariser λ (1e-4). Positive, finite.
    pub lambda: f32,
    /// Bandwidth σ of the Gaussian kernel, in units of the normalised feature distance (0.5).
    /// Positive, finite.
    pub kernel_sigma: f32,
    /// Label σ = `output_sigma_factor·√(w·h)/cell_px` with `w × h` the target in template
    /// pixels (0.06). Positive, finite.
    pub output_sigma_factor: f32,
    /// Learning rate η of the model update (0.01). In (0, 1].
    pub interp_factor: f32,
    /// FHOG cell side, template pixels (4). 1 to 16.
    pub cell_px: u32,
    /// Size of the correlation grid: it has `template_cells²` cells, in a power-of-two shape
    /// (each side 4 to 64 cells) chosen at init to fit the window's aspect ratio. A power of two
    /// from 4 to 64 (16). Measured on the four clips: 16 gave pooled AUC 0.706 at 0.24 ms an
    /// update, 32 gave 0.626 at 1.0 ms (the coarser grid is more tolerant of deformation and
    /// blur, and a quarter of the work).
    pub template_cells: u32,
    /// Feature set (FHOG + gray).
    pub features: KcfFeatures,
    /// PSR below which a tracked target is reported lost (and not learnt) (5). Finite, ≥ 0.
    /// On the clips, frames on target have PSR ≥ 7 (10th percentile) except on 03_pedestrian1;
    /// 4 never reported a loss, 6 lost 03_pedestrian1 more often.
    pub psr_lost: f32,
    /// PSR from which a lost target is re-found (≥ `psr_lost`, hysteresis) (10). At 7 the
    /// tracker re-found the background beside a flat occluder (PSR ≈ 8) in the occlusion test.
    pub psr_found: f32,
    /// While lost, the search covers this many times the window on each axis, with windows a
    /// quarter window apart (2.0: 5 × 5 windows a frame, ≈ 25 detections). 1 to 2.5 (up to
    /// 7 × 7). Half-window steps (3 × 3) left a target that reappeared between two windows
    /// below `psr_found` (Hann-weighted off centre) for 12 frames in the occlusion test.
    pub search_expand_lost: f32,
}

impl Default for KcfParams {
    fn default() -> Self {
        Self {
            padding: 1.5,
            lambda: 1e-4,
            kernel_sigma: 0.5,
            output_sigma_factor: 0.06,
            interp_factor: 0.01,
            cell_px: 4,
            template_cells: 16,
            features: KcfFeatures::FhogGray,
            psr_lost: 5.0,
            psr_found: 10.0,
            search_expand_lost: 2.0,
        }
    }
}

impl KcfParams {
    /// Checks every documented range.
    ///
    /// Errors: [`Error::InvalidArgument`] for a value outside its range or a NaN.
    pub fn validate(&self) -> Result<()> {
        let pos = |v: f32| v.is_finite() && v > 0.0;
        let t = self.template_cells as usize;
        let valid = self.padding.is_finite()
            && (0.0..=10.0).contains(&self.padding)
            && pos(self.lambda)
            && pos(self.kernel_sigma)
            && pos(self.output_sigma_factor)
            && pos(self.interp_factor)
            && self.interp_factor <= 1.0
            && (1..=16).contains(&self.cell_px)
            && is_supported_len(t)
            && self.psr_lost.is_finite()
            && self.psr_lost >= 0.0
            && self.psr_found.is_finite()
            && self.psr_found >= self.psr_lost
            && self.search_expand_lost.is_finite()
            && (1.0..=2.5).contains(&self.search_expand_lost);
        if !valid {
            return Err(Error::InvalidArgument);
        }
        Ok(())
    }

    fn search_radius(&self) -> usize {
        libm::ceilf(2.0 * (self.search_expand_lost - 1.0)) as usize
    }
}

/// One detection: where the model's response peaks and how clearly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KcfDetection {
    /// The target box (current size) moved to the response peak, frame pixels.
    pub bbox: RectF,
    /// Response at the peak (about 1 on the training frame, lower as the target changes).
    pub peak: f32,
    /// Peak-to-sidelobe ratio: `(peak − mean)/std` of the response outside the area around the
    /// peak (0 when that part is flat).
    pub psr: f32,
}

/// What one [`Kcf::update`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KcfOutput {
    /// The target's box, frame pixels (may extend past the frame), or `None` while it is
    /// reported lost. Not an error: the target may be occluded or gone.
    pub bbox: Option<RectF>,
    /// Response peak of the best detection this frame.
    pub peak: f32,
    /// Its peak-to-sidelobe ratio.
    pub psr: f32,
    /// The target is lost (PSR fell below `psr_lost` and has not yet reached `psr_found`).
    pub lost: bool,
}

/// The KCF tracker; see the module documentation. Create with [`Kcf::new`], start with
/// [`Kcf::init`], then call [`Kcf::update`] once per frame (or [`Kcf::detect`],
/// [`Kcf::score`] and [`Kcf::learn`] to drive it from outside, as KCFDP does).
pub struct Kcf<'a> {
    params: KcfParams,
    width: usize,
    height: usize,
    channels: usize,
    pairs: usize,
    scratch: FeatureScratch<'a>,
    feat: &'a mut [f32],
    /// Model features' spectra, channel pairs packed (`pairs × cells`).
    xf: &'a mut [Complex32],
    /// Spectra of the window being detected or learnt.
    zf: &'a mut [Complex32],
    kf: &'a mut [Complex32],
    resp: &'a mut [Complex32],
    yf: &'a mut [Complex32],
    num: &'a mut [Complex32],
    den: &'a mut [Complex32],
    alphaf: &'a mut [Complex32],
    hann_x: &'a mut [f32],
    hann_y: &'a mut [f32],
    column: &'a mut [Complex32],
    cells_x: usize,
    cells_y: usize,
    /// Frame pixels per template pixel at the initial target size.
    base_scale: f32,
    init_w: f32,
    init_h: f32,
    center_x: f32,
    center_y: f32,
    target_w: f32,
    target_h: f32,
    initialized: bool,
    lost: bool,
}

impl core::fmt::Debug for Kcf<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kcf")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("cells", &(self.cells_x, self.cells_y))
            .field("initialized", &self.initialized)
            .field("lost", &self.lost)
            .field("target", &self.target())
            .finish_non_exhaustive()
    }
}

/// Longest side of a grid of `t × t` cells with sides of at least [`MIN_FFT_LEN`] cells.
fn max_side(t: usize) -> usize {
    (t * t / MIN_FFT_LEN).min(MAX_FFT_LEN)
}

macro_rules! kcf_takes {
    ($a:expr, $m:ident, $t:expr, $pairs:expr, $channels:expr) => {{
        let n = $t * $t;
        let side = max_side($t);
        (
            $a.$m::<f32>($channels * n)?,
            $a.$m::<Complex32>($pairs * n)?,
            $a.$m::<Complex32>($pairs * n)?,
            [
                $a.$m::<Complex32>(n)?,
                $a.$m::<Complex32>(n)?,
                $a.$m::<Complex32>(n)?,
                $a.$m::<Complex32>(n)?,
                $a.$m::<Complex32>(n)?,
                $a.$m::<Complex32>(n)?,
            ],
            $a.$m::<f32>(side)?,
            $a.$m::<f32>(side)?,
            $a.$m::<Complex32>(side)?,
        )
    }};
}

fn check_frame_size(width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::ZeroSize);
    }
    // Positions are f32: keep every pixel coordinate exact.
    if width > 1 << 20 || height > 1 << 20 {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

/// Bytes of workspace a [`Kcf`] needs for `width × height` frames, whatever the box.
///
/// Errors: [`Error::InvalidArgument`] as [`KcfParams::validate`] or for a side above 2²⁰ px;
/// [`Error::ZeroSize`] for an empty frame; [`Error::Overflow`].
pub fn workspace_len(params: &KcfParams, width: usize, height: usize) -> Result<usize> {
    params.validate()?;
    check_frame_size(width, height)?;
    let t = params.template_cells as usize;
    let channels = params.features.channels();
    let mut len = ArenaLen::new();
    FeatureScratch::declare(&mut len, max_side(t), t * t, params.cell_px as usize)?;
    let _ = kcf_takes!(len, add, t, channels.div_ceil(2), channels);
    Ok(len.bytes())
}

/// The Hann window `½(1 − cos(2πi/(n−1)))`, `i < n`.
fn hann(out: &mut [f32]) {
    let n = out.len();
    for (i, v) in out.iter_mut().enumerate() {
        *v = 0.5
            * (1.0
                - libm::cosf(2.0 * core::f32::consts::PI * i as f32 / (n as f32 - 1.0).max(1.0)));
    }
}

/// `i` as a signed cyclic shift of a length-`n` axis: `i − n` from `n/2` on.
fn signed_shift(i: usize, n: usize) -> f32 {
    if i >= n / 2 {
        i as f32 - n as f32
    } else {
        i as f32
    }
}

/// Sub-cell offset of a peak from its neighbours (parabola through three samples), in
/// `[−½, ½]`.
fn parabola(left: f32, center: f32, right: f32) -> f32 {
    let d = left - 2.0 * center + right;
    if d < 0.0 {
        (0.5 * (left - right) / d).clamp(-0.5, 0.5)
    } else {
        0.0
    }
}

/// The peak of a response and its cyclic shift.
#[derive(Clone, Copy, Debug)]
struct Peak {
    dx_cells: f32,
    dy_cells: f32,
    value: f32,
    psr: f32,
}

/// `kf ← F(k(a, b))` for packed spectra `a`, `b` (`pairs × cells`): the Gaussian kernel of
/// every cyclic shift (see the module documentation).
#[allow(clippy::too_many_arguments)]
fn gaussian_correlation(
    a: &[Complex32],
    b: &[Complex32],
    pairs: usize,
    channels: usize,
    cells_x: usize,
    cells_y: usize,
    sigma: f32,
    kf: &mut [Complex32],
    column: &mut [Complex32],
) -> Result<()> {
    let n = cells_x * cells_y;
    let kf = &mut kf[..n];
    let mut aa = 0.0f32;
    let mut bb = 0.0f32;
    kf.fill(Complex32::new(0.0, 0.0));
    for p in 0..pairs {
        let ap = &a[p * n..(p + 1) * n];
        let bp = &b[p * n..(p + 1) * n];
        for ((k, x), y) in kf.iter_mut().zip(ap).zip(bp) {
            aa += x.norm_sqr();
            bb += y.norm_sqr();
            *k += x * y.conj();
        }
    }
    // Parseval: Σ|X̂|² = N·Σx².
    let inv_n = 1.0 / n as f32;
    let (aa, bb) = (aa * inv_n, bb * inv_n);
    ifft_2d(kf, cells_x, cells_y, column)?;
    let scale = -1.0 / (sigma * sigma * (n * channels) as f32);
    for k in kf.iter_mut() {
        let d = (aa + bb - 2.0 * k.re).max(0.0);
        *k = Complex32::new(libm::expf(d * scale), 0.0);
    }
    fft_2d(kf, cells_x, cells_y, column)
}

impl<'a> Kcf<'a> {
    /// A tracker for `width × height` frames in `workspace` (at least [`workspace_len`]
    /// bytes).
    ///
    /// Errors: as [`workspace_len`]; [`Error::BufferTooSmall`] for a short workspace.
    pub fn new(
        params: &KcfParams,
        width: usize,
        height: usize,
        workspace: &'a mut [u8],
    ) -> Result<Self> {
        let need = workspace_len(params, width, height)?;
        if workspace.len() < need {
            return Err(Error::BufferTooSmall);
        }
        let t = params.template_cells as usize;
        let channels = params.features.channels();
        let pairs = channels.div_ceil(2);
        let mut arena = Arena::new(workspace);
        let scratch = FeatureScratch::new(&mut arena, max_side(t), t * t, params.cell_px as usize)?;
        let (feat, xf, zf, [kf, resp, yf, num, den, alphaf], hann_x, hann_y, column) =
            kcf_takes!(arena, take, t, pairs, channels);
        Ok(Self {
            params: *params,
            width,
            height,
            channels,
            pairs,
            scratch,
            feat,
            xf,
            zf,
            kf,
            resp,
            yf,
            num,
            den,
            alphaf,
            hann_x,
            hann_y,
            column,
            cells_x: t.min(MAX_FFT_LEN),
            cells_y: t.min(MAX_FFT_LEN),
            base_scale: 1.0,
            init_w: 1.0,
            init_h: 1.0,
            center_x: 0.0,
            center_y: 0.0,
            target_w: 0.0,
            target_h: 0.0,
            initialized: false,
            lost: false,
        })
    }

    /// The parameters the tracker was created with.
    pub fn params(&self) -> &KcfParams {
        &self.params
    }

    /// Frame size in pixels, `(width, height)`.
    pub fn frame_size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The correlation grid chosen at the last init, `(cells_x, cells_y)`.
    pub fn grid(&self) -> (usize, usize) {
        (self.cells_x, self.cells_y)
    }

    /// True once [`Kcf::init`] has succeeded.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// True while the target is reported lost.
    pub fn is_lost(&self) -> bool {
        self.lost
    }

    /// The current target box (frame pixels), also while lost (the last known box); `None`
    /// before init.
    pub fn target(&self) -> Option<RectF> {
        self.initialized
            .then(|| self.box_at(self.center_x, self.center_y))
    }

    fn box_at(&self, cx: f32, cy: f32) -> RectF {
        RectF::new(
            cx - 0.5 * self.target_w,
            cy - 0.5 * self.target_h,
            self.target_w,
            self.target_h,
        )
    }

    fn scales_for(&self, w: f32, h: f32) -> (f32, f32) {
        (
            self.base_scale * w / self.init_w,
            self.base_scale * h / self.init_h,
        )
    }

    fn check_box(&self, bbox: RectF) -> Result<()> {
        if bbox.is_empty() {
            return Err(Error::ZeroSize);
        }
        if !(bbox.x.is_finite()
            && bbox.y.is_finite()
            && bbox.width.is_finite()
            && bbox.height.is_finite())
        {
            return Err(Error::OutOfBounds);
        }
        Ok(())
    }

    /// Starts tracking the object in `bbox` (frame pixels, inside the frame) and trains the
    /// filter on this frame, so that an update on the same frame returns the same box. May be
    /// called again to restart; the model is reset.
    ///
    /// Errors: [`Error::SizeMismatch`] for a frame of another size (or an RGB view not a whole
    /// number of pixels wide); [`Error::ZeroSize`] for an empty box; [`Error::OutOfBounds`]
    /// for a box not inside the frame. The tracker is left uninitialised on error.
    pub fn init(&mut self, frame: &Frame<'_>, bbox: RectF) -> Result<()> {
        frame.check_size(self.width, self.height)?;
        self.check_box(bbox)?;
        if bbox.x < 0.0
            || bbox.y < 0.0
            || bbox.x + bbox.width > self.width as f32
            || bbox.y + bbox.height > self.height as f32
        {
            return Err(Error::OutOfBounds);
        }
        self.initialized = false;
        self.lost = false;
        let p = &self.params;
        let t = p.template_cells as usize;
        let cell = p.cell_px as f32;
        let (ww, wh) = (
            (1.0 + p.padding) * bbox.width,
            (1.0 + p.padding) * bbox.height,
        );
        // The grid: T² cells (T = template_cells), power-of-two sides, square pixels; of the
        // shapes that cover the window, the one that samples it most finely.
        let area = t * t;
        let max_side = max_side(t);
        let (mut cx, mut cy, mut base_scale) = (0, 0, f32::INFINITY);
        let mut gx = MIN_FFT_LEN;
        while gx <= max_side {
            let gy = area / gx;
            if (MIN_FFT_LEN..=max_side).contains(&gy) {
                let s = (ww / (gx as f32 * cell)).max(wh / (gy as f32 * cell));
                if s < base_scale {
                    (cx, cy, base_scale) = (gx, gy, s);
                }
            }
            gx *= 2;
        }
        self.cells_x = cx;
        self.cells_y = cy;
        self.base_scale = base_scale;
        self.init_w = bbox.width;
        self.init_h = bbox.height;
        self.target_w = bbox.width;
        self.target_h = bbox.height;
        let (bcx, bcy) = bbox.center();
        self.center_x = bcx;
        self.center_y = bcy;
        hann(&mut self.hann_x[..cx]);
        hann(&mut self.hann_y[..cy]);
        // Gaussian label peaked at zero shift, σ in cells.
        let sigma =
            p.output_sigma_factor * libm::sqrtf(bbox.width * bbox.height) / (base_scale * cell);
        let k = -0.5 / (sigma * sigma);
        let n = cx * cy;
        for y in 0..cy {
            let dy = signed_shift(y, cy);
            for x in 0..cx {
                let dx = signed_shift(x, cx);
                self.yf[y * cx + x] = Complex32::new(libm::expf(k * (dx * dx + dy * dy)), 0.0);
            }
        }
        fft_2d(&mut self.yf[..n], cx, cy, self.column)?;
        self.train(frame, bcx, bcy, 1.0)?;
        self.initialized = true;
        Ok(())
    }

    /// Features of the window centred at `(cx, cy)` with the current target size, windowed,
    /// packed in channel pairs and transformed, into `zf`.
    fn extract(&mut self, frame: &Frame<'_>, cx: f32, cy: f32, w: f32, h: f32) -> Result<()> {
        let (sx, sy) = self.scales_for(w, h);
        let (gx, gy) = (self.cells_x, self.cells_y);
        let n = gx * gy;
        self.scratch.extract(
            frame,
            &SampleWindow {
                center_x: cx,
                center_y: cy,
                scale_x: sx,
                scale_y: sy,
            },
            self.params.features,
            gx,
            gy,
            self.feat,
        )?;
        for p in 0..self.pairs {
            let re = &self.feat[2 * p * n..(2 * p + 1) * n];
            let im =
                (2 * p + 1 < self.channels).then(|| &self.feat[(2 * p + 1) * n..(2 * p + 2) * n]);
            let dst = &mut self.zf[p * n..(p + 1) * n];
            for y in 0..gy {
                let hy = self.hann_y[y];
                for x in 0..gx {
                    let i = y * gx + x;
                    let w = hy * self.hann_x[x];
                    let b = im.map_or(0.0, |im| im[i] * w);
                    dst[i] = Complex32::new(re[i] * w, b);
                }
            }
            fft_2d(dst, gx, gy, self.column)?;
        }
        Ok(())
    }

    /// Learns the window at `(cx, cy)` (current target size) with rate `rate`.
    fn train(&mut self, frame: &Frame<'_>, cx: f32, cy: f32, rate: f32) -> Result<()> {
        self.extract(frame, cx, cy, self.target_w, self.target_h)?;
        self.train_extracted(rate)
    }

    /// Learns the window in `zf` (extracted at the target) with rate `rate`.
    fn train_extracted(&mut self, rate: f32) -> Result<()> {
        let n = self.cells_x * self.cells_y;
        let pn = self.pairs * n;
        gaussian_correlation(
            &self.zf[..pn],
            &self.zf[..pn],
            self.pairs,
            self.channels,
            self.cells_x,
            self.cells_y,
            self.params.kernel_sigma,
            self.kf,
            self.column,
        )?;
        let keep = 1.0 - rate;
        let lambda = self.params.lambda;
        for i in 0..n {
            let k = self.kf[i];
            let a = self.yf[i] * k;
            let b = k * (k + lambda);
            self.num[i] = self.num[i] * keep + a * rate;
            self.den[i] = self.den[i] * keep + b * rate;
            let d = self.den[i];
            self.alphaf[i] = if d.norm_sqr() > 1e-30 {
                self.num[i] / d
            } else {
                Complex32::new(0.0, 0.0)
            };
        }
        for (x, z) in self.xf[..pn].iter_mut().zip(&self.zf[..pn]) {
            *x = *x * keep + z * rate;
        }
        Ok(())
    }

    /// The response of the model to the window `zf` (already extracted), real part in `resp`.
    fn respond(&mut self) -> Result<()> {
        let n = self.cells_x * self.cells_y;
        let pn = self.pairs * n;
        gaussian_correlation(
            &self.zf[..pn],
            &self.xf[..pn],
            self.pairs,
            self.channels,
            self.cells_x,
            self.cells_y,
            self.params.kernel_sigma,
            self.kf,
            self.column,
        )?;
        for ((r, a), k) in self.resp[..n].iter_mut().zip(&*self.alphaf).zip(&*self.kf) {
            *r = a * k;
        }
        ifft_2d(&mut self.resp[..n], self.cells_x, self.cells_y, self.column)
    }

    /// Detection at one window centre: response peak, shift and PSR.
    fn detect_at(&mut self, frame: &Frame<'_>, cx: f32, cy: f32) -> Result<Peak> {
        self.extract(frame, cx, cy, self.target_w, self.target_h)?;
        self.respond()?;
        let (gx, gy) = (self.cells_x, self.cells_y);
        let r = &self.resp[..gx * gy];
        let mut best = 0;
        for i in 1..r.len() {
            if r[i].re > r[best].re {
                best = i;
            }
        }
        let (px, py) = (best % gx, best / gx);
        let at = |x: usize, y: usize| r[y * gx + x].re;
        let value = at(px, py);
        let ox = parabola(at((px + gx - 1) % gx, py), value, at((px + 1) % gx, py));
        let oy = parabola(at(px, (py + gy - 1) % gy), value, at(px, (py + 1) % gy));
        // Sidelobe statistics outside (2rx+1) × (2ry+1) cells around the peak (cyclic).
        let (rx, ry) = (
            (gx / PSR_EXCLUSION_DIVISOR).max(1),
            (gy / PSR_EXCLUSION_DIVISOR).max(1),
        );
        let near = |i: usize, p: usize, n: usize, rad: usize| {
            let d = i.abs_diff(p);
            d.min(n - d) <= rad
        };
        let (mut sum, mut count) = (0.0f32, 0usize);
        for y in 0..gy {
            let ny = near(y, py, gy, ry);
            for x in 0..gx {
                if !(ny && near(x, px, gx, rx)) {
                    sum += at(x, y);
                    count += 1;
                }
            }
        }
        let psr = if count > 1 {
            let mean = sum / count as f32;
            let mut var = 0.0f32;
            for y in 0..gy {
                let ny = near(y, py, gy, ry);
                for x in 0..gx {
                    if !(ny && near(x, px, gx, rx)) {
                        let d = at(x, y) - mean;
                        var += d * d;
                    }
                }
            }
            let std = libm::sqrtf(var / count as f32);
            if std > 1e-5 && value.is_finite() {
                (value - mean) / std
            } else {
                0.0
            }
        } else {
            0.0
        };
        Ok(Peak {
            dx_cells: signed_shift(px, gx) + ox,
            dy_cells: signed_shift(py, gy) + oy,
            value,
            psr,
        })
    }

    /// The centre a peak found from the window at `(cx, cy)` moves the target to, kept inside
    /// the frame.
    fn moved(&self, cx: f32, cy: f32, peak: &Peak) -> (f32, f32) {
        let (sx, sy) = self.scales_for(self.target_w, self.target_h);
        let cell = self.params.cell_px as f32;
        (
            (cx + peak.dx_cells * cell * sx).clamp(0.0, self.width as f32),
            (cy + peak.dy_cells * cell * sy).clamp(0.0, self.height as f32),
        )
    }

    /// The best detection around the target: one window while tracking, the expanded grid of
    /// windows while lost (the highest PSR; ties to the first in row order).
    fn search(&mut self, frame: &Frame<'_>) -> Result<(f32, f32, Peak)> {
        let (cx, cy) = (self.center_x, self.center_y);
        if !self.lost {
            let p = self.detect_at(frame, cx, cy)?;
            let (x, y) = self.moved(cx, cy, &p);
            return Ok((x, y, p));
        }
        let k = self.params.search_radius() as i32;
        let (sx, sy) = self.scales_for(self.target_w, self.target_h);
        let cell = self.params.cell_px as f32;
        let step_x = 0.25 * self.cells_x as f32 * cell * sx;
        let step_y = 0.25 * self.cells_y as f32 * cell * sy;
        let mut best: Option<(f32, f32, Peak)> = None;
        for ky in -k..=k {
            for kx in -k..=k {
                let wx = (cx + kx as f32 * step_x).clamp(0.0, self.width as f32);
                let wy = (cy + ky as f32 * step_y).clamp(0.0, self.height as f32);
                let p = self.detect_at(frame, wx, wy)?;
                if best.as_ref().is_none_or(|b| p.psr > b.2.psr) {
                    let (x, y) = self.moved(wx, wy, &p);
                    best = Some((x, y, p));
                }
            }
        }
        best.ok_or(Error::InvalidArgument)
    }

    fn check_ready(&self, frame: &Frame<'_>) -> Result<()> {
        if !self.initialized {
            return Err(Error::NotInitialized);
        }
        frame.check_size(self.width, self.height)
    }

    /// Finds the target in `frame` at its current size without changing the model or the
    /// target: around the last position (one window), or while lost over the expanded search
    /// area ([`KcfParams::search_expand_lost`]).
    ///
    /// Errors: [`Error::NotInitialized`] before [`Kcf::init`]; [`Error::SizeMismatch`] for a
    /// frame of another size.
    pub fn detect(&mut self, frame: &Frame<'_>) -> Result<KcfDetection> {
        self.check_ready(frame)?;
        let (x, y, p) = self.search(frame)?;
        Ok(KcfDetection {
            bbox: self.box_at(x, y),
            peak: p.value,
            psr: p.psr,
        })
    }

    /// The model's response at zero shift to a window of `bbox`'s size (times `1 + padding`)
    /// centred on `bbox`, resampled to the template grid: comparable with
    /// [`KcfDetection::peak`]. Costs about one detection. Changes nothing.
    ///
    /// Errors: [`Error::NotInitialized`]; [`Error::SizeMismatch`]; [`Error::ZeroSize`] for an
    /// empty box; [`Error::OutOfBounds`] for a box with non-finite edges or not overlapping the
    /// frame; [`Error::InvalidArgument`] as [`Kcf::learn`].
    pub fn score(&mut self, frame: &Frame<'_>, bbox: RectF) -> Result<f32> {
        self.check_ready(frame)?;
        self.check_overlapping(bbox)?;
        let (cx, cy) = bbox.center();
        self.extract(frame, cx, cy, bbox.width, bbox.height)?;
        self.respond()?;
        Ok(self.resp[0].re)
    }

    fn check_overlapping(&self, bbox: RectF) -> Result<()> {
        self.check_box(bbox)?;
        if bbox
            .clamp_to(self.width as f32, self.height as f32)
            .is_none()
        {
            return Err(Error::OutOfBounds);
        }
        Ok(())
    }

    /// Updates the model with the window around `bbox` (rate `interp_factor`) and makes `bbox`
    /// the target (its size may differ from the current one; the window scales with it). The
    /// target counts as found afterwards.
    ///
    /// Errors: [`Error::NotInitialized`]; [`Error::SizeMismatch`]; [`Error::ZeroSize`] for an
    /// empty box; [`Error::OutOfBounds`] for a box with non-finite edges or not overlapping the
    /// frame; [`Error::InvalidArgument`] for a box so small (or large) that its window's scale
    /// is not a positive finite number. Nothing changes on error.
    pub fn learn(&mut self, frame: &Frame<'_>, bbox: RectF) -> Result<()> {
        self.check_ready(frame)?;
        self.check_overlapping(bbox)?;
        let (cx, cy) = bbox.center();
        // Extract first: a box whose window cannot be sampled leaves everything as it was.
        self.extract(frame, cx, cy, bbox.width, bbox.height)?;
        self.target_w = bbox.width;
        self.target_h = bbox.height;
        self.center_x = cx;
        self.center_y = cy;
        self.lost = false;
        self.train_extracted(self.params.interp_factor)
    }

    /// Reports the target lost, as [`Kcf::update`] does when the PSR falls below `psr_lost`:
    /// the model freezes and [`Kcf::detect`] searches the expanded area until [`Kcf::learn`]
    /// (or an update whose PSR reaches `psr_found`). For callers that drive the tracker through
    /// `detect`/`learn` (KCFDP).
    pub fn report_lost(&mut self) {
        self.lost = true;
    }

    /// The PSR a detection needs to count as the target: `psr_found` while lost (hysteresis),
    /// else `psr_lost`.
    pub fn psr_threshold(&self) -> f32 {
        if self.lost {
            self.params.psr_found
        } else {
            self.params.psr_lost
        }
    }

    /// Tracks the target into `frame`: detects, and while the PSR stays at least `psr_lost`
    /// (or, when lost, reaches `psr_found`) moves the target and learns; otherwise reports it
    /// lost, does not learn, and keeps searching around the last position over an expanded
    /// area on the next frames.
    ///
    /// Errors: [`Error::NotInitialized`] before [`Kcf::init`]; [`Error::SizeMismatch`] for a
    /// frame of another size. The state is unchanged on error.
    pub fn update(&mut self, frame: &Frame<'_>) -> Result<KcfOutput> {
        self.check_ready(frame)?;
        let (x, y, p) = self.search(frame)?;
        if p.psr < self.psr_threshold() {
            self.lost = true;
            return Ok(KcfOutput {
                bbox: None,
                peak: p.value,
                psr: p.psr,
                lost: true,
            });
        }
        self.lost = false;
        self.center_x = x;
        self.center_y = y;
        self.train(frame, x, y, self.params.interp_factor)?;
        Ok(KcfOutput {
            bbox: Some(self.box_at(x, y)),
            peak: p.value,
            psr: p.psr,
            lost: false,
        })
    }
}
