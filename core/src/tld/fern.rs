//! The fern ensemble, second stage of the TLD detection cascade (OpenTLD's `FerNNClassifier`):
//! `ferns` ferns of `features` pixel-pair comparisons each (default 10 × 13) on the
//! Gaussian-blurred frame (σ 2 px, blurred by the caller with
//! [`gaussian_blur_u8`](crate::filter::gaussian_blur_u8)).
//!
//! * **Pixel pairs.** Each comparison has two points with relative coordinates in `[0, 1)`,
//!   drawn once from a seeded SplitMix64 generator as 24-bit integers `u` (`u / 2²⁴`), in
//!   OpenTLD's order `x1, y1, x2, y2` per comparison, comparisons fern by fern. For a grid scale
//!   of `w × h` px the offset is `floor(u·w / 2²⁴)` (exact, in `[0, w)`), like OpenTLD's
//!   `(int)(x1f·w)`. [`build_offsets`] precomputes them for every scale: `[scale][fern][feature]`.
//! * **Codes.** The code of a window for one fern is `features` bits, the first comparison the
//!   most significant: bit = `blurred(A) > blurred(B)` with A and B relative to the window's
//!   top-left corner. [`fern_codes`] writes `u16` codes `[window][fern]`. (OpenTLD's C++ port
//!   indexes comparison `t·nstructs + f` — a known slip that makes ferns share comparisons; we
//!   use `t·features + f`.)
//! * **Posteriors.** Per fern, `2^features` positive and negative counts (`u32`, saturating) and
//!   the posterior `P = pos / (pos + neg)` (`f32`, 0 while `pos = 0`), updated incrementally.
//!   The confidence of a window is the mean posterior: the `f32` posteriors summed in fern order,
//!   then divided by `ferns` (a GPU must sum in the same order to match bit for bit).
//! * **Training** ([`FernEnsemble::train`]), OpenTLD's bootstrap rule: a positive example is
//!   added only while its confidence is `≤ positive_threshold`, a negative one only while its
//!   confidence is `≥ negative_threshold` (both 0.5, as in OpenTLD's Matlab code and SEEDS).
//!   A window is detected when its confidence is `> positive_threshold`
//!   ([`FernEnsemble::accepts`]).

use crate::error::{Error, Result};
use crate::image::ImageView;

use super::grid::{Grid, GridScale};
use crate::rng::SplitMix64;

/// Most ferns an ensemble may have.
pub const MAX_FERNS: u32 = 64;
/// Most comparisons per fern (codes are `u16`).
pub const MAX_FEATURES: u32 = 16;

/// Parameters of the fern ensemble; [`Default`] gives OpenTLD's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FernParams {
    /// Number of ferns, 1 to [`MAX_FERNS`]. Default 10.
    pub ferns: u32,
    /// Pixel-pair comparisons per fern (bits per code), 1 to [`MAX_FEATURES`]. Default 13.
    pub features: u32,
    /// Seed of the generator that draws the pixel pairs. Default 0.
    pub seed: u64,
    /// Mean posterior above which a window is detected, and at or below which a positive
    /// example is learnt. Default 0.5; in `[0, 1]`.
    pub positive_threshold: f32,
    /// Mean posterior at or above which a negative example is learnt. Default 0.5; in `[0, 1]`.
    pub negative_threshold: f32,
}

impl Default for FernParams {
    fn default() -> Self {
        Self {
            ferns: 10,
            features: 13,
            seed: 0,
            positive_threshold: 0.5,
            negative_threshold: 0.5,
        }
    }
}

impl FernParams {
    fn validate(&self) -> Result<()> {
        let unit = |t: f32| (0.0..=1.0).contains(&t);
        if self.ferns == 0
            || self.ferns > MAX_FERNS
            || self.features == 0
            || self.features > MAX_FEATURES
            || !unit(self.positive_threshold)
            || !unit(self.negative_threshold)
        {
            return Err(Error::InvalidArgument);
        }
        Ok(())
    }

    fn comparisons(&self) -> usize {
        self.ferns as usize * self.features as usize
    }
}

/// One pixel-pair comparison at one scale: offsets in pixels from a window's top-left corner.
/// The bit is `pixel(x1, y1) > pixel(x2, y2)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct PixelPair {
    /// Column of the first pixel.
    pub x1: u16,
    /// Row of the first pixel.
    pub y1: u16,
    /// Column of the second pixel.
    pub x2: u16,
    /// Row of the second pixel.
    pub y2: u16,
}

/// `floor(u·side / 2²⁴)`: a relative coordinate scaled to a pixel offset in `[0, side)`.
fn scale_q24(u: u32, side: u16) -> u16 {
    ((u as u64 * side as u64) >> 24) as u16
}

/// Number of [`PixelPair`]s [`build_offsets`] writes for `scale_count` scales:
/// `scale_count · ferns · features`.
///
/// Errors: [`Error::InvalidArgument`] for parameters outside their ranges; [`Error::Overflow`].
pub fn offsets_len(params: &FernParams, scale_count: usize) -> Result<usize> {
    params.validate()?;
    scale_count
        .checked_mul(params.comparisons())
        .ok_or(Error::Overflow)
}

/// Draws the relative pixel pairs from `params.seed` and writes their offsets for every scale
/// to `out[(scale·ferns + fern)·features + feature]`.
///
/// Errors: those of [`offsets_len`]; [`Error::BufferTooSmall`] if `out` is shorter than
/// [`offsets_len`]`(params, scales.len())`.
pub fn build_offsets(
    params: &FernParams,
    scales: &[GridScale],
    out: &mut [PixelPair],
) -> Result<()> {
    let per_scale = params.comparisons();
    if out.len() < offsets_len(params, scales.len())? {
        return Err(Error::BufferTooSmall);
    }
    let mut rng = SplitMix64(params.seed);
    for i in 0..per_scale {
        let (x1, y1, x2, y2) = (
            rng.unit_q24(),
            rng.unit_q24(),
            rng.unit_q24(),
            rng.unit_q24(),
        );
        for (s, sc) in scales.iter().enumerate() {
            out[s * per_scale + i] = PixelPair {
                x1: scale_q24(x1, sc.width),
                y1: scale_q24(y1, sc.height),
                x2: scale_q24(x2, sc.width),
                y2: scale_q24(y2, sc.height),
            };
        }
    }
    Ok(())
}

/// Computes the fern codes of the grid windows listed in `windows` (indices into `grid`, such as
/// the survivors of the variance filter) on the blurred frame: `codes[j·ferns + f]` is fern
/// `f`'s code of window `windows[j]`.
///
/// Errors: those of [`offsets_len`]; [`Error::SizeMismatch`] if `blurred` is not the grid's
/// frame size; [`Error::BufferTooSmall`] if `offsets` is shorter than
/// [`offsets_len`]`(params, grid.scales().len())` or `codes` shorter than
/// `windows.len()·ferns`; [`Error::OutOfBounds`] if a window index is not in the grid or an
/// offset falls outside its scale's window. Nothing is written on error.
pub fn fern_codes(
    params: &FernParams,
    blurred: &ImageView<'_, u8>,
    grid: &Grid<'_>,
    offsets: &[PixelPair],
    windows: &[u32],
    codes: &mut [u16],
) -> Result<()> {
    let per_scale = params.comparisons();
    let (ferns, features) = (params.ferns as usize, params.features as usize);
    check_scan(params, blurred, grid, offsets, windows, codes)?;
    let (data, stride) = (blurred.as_slice(), blurred.stride());
    let (gx, gy, gs) = (grid.x(), grid.y(), grid.scale_index());
    for (&wi, out) in windows.iter().zip(codes.chunks_exact_mut(ferns)) {
        let wi = wi as usize;
        let origin = gy[wi] as usize * stride + gx[wi] as usize;
        let pairs = &offsets[gs[wi] as usize * per_scale..][..per_scale];
        for (code, fern_pairs) in out.iter_mut().zip(pairs.chunks_exact(features)) {
            let mut c = 0u16;
            for p in fern_pairs {
                let a = data[origin + p.y1 as usize * stride + p.x1 as usize];
                let b = data[origin + p.y2 as usize * stride + p.x2 as usize];
                c = (c << 1) | (a > b) as u16;
            }
            *code = c;
        }
    }
    Ok(())
}

/// Scratch `u32` elements [`fern_scan`] needs: two per comparison (`2 · ferns · features`).
pub fn fern_scan_scratch_len(params: &FernParams) -> usize {
    2 * params.comparisons()
}

/// The detector's fern stage with early rejection: for each window of `windows`, computes its
/// codes fern by fern (as [`fern_codes`]) and sums the posteriors (as
/// [`FernEnsemble::confidences`]), and stops as soon as the remaining ferns cannot lift the
/// mean posterior to `floor` (every posterior is at most 1).
///
/// For a window whose confidence is at least `floor`, `codes` and `conf` hold exactly what
/// [`fern_codes`] and [`FernEnsemble::confidences`] give. For a rejected window, `conf` holds
/// an upper bound of its confidence below `floor` (minus a margin of 10⁻⁵ that absorbs `f32`
/// rounding) and its codes are partial. With `floor` at most the detection and the negative
/// learning thresholds, no decision of the detector or of learning changes; on textured
/// backgrounds most windows are rejected after a few ferns.
///
/// The pixel pairs (`offsets`) must come from [`build_offsets`] with the ensemble's parameters.
///
/// Errors: those of [`fern_codes`]; [`Error::BufferTooSmall`] if `conf` is shorter than
/// `windows` or `scratch` than [`fern_scan_scratch_len`]. Nothing is written on error except `scratch`.
#[allow(clippy::too_many_arguments)]
pub fn fern_scan(
    ensemble: &FernEnsemble<'_>,
    blurred: &ImageView<'_, u8>,
    grid: &Grid<'_>,
    offsets: &[PixelPair],
    windows: &[u32],
    floor: f32,
    scratch: &mut [u32],
    codes: &mut [u16],
    conf: &mut [f32],
) -> Result<()> {
    let params = ensemble.params;
    let per_scale = params.comparisons();
    let (ferns, features) = (params.ferns as usize, params.features as usize);
    check_scan(&params, blurred, grid, offsets, windows, codes)?;
    if conf.len() < windows.len() || scratch.len() < 2 * per_scale {
        return Err(Error::BufferTooSmall);
    }
    let leaves = 1usize << features;
    let posterior = &*ensemble.posterior;
    let (data, stride) = (blurred.as_slice(), blurred.stride());
    let (gx, gy, gs) = (grid.x(), grid.y(), grid.scale_index());
    let lin = &mut scratch[..2 * per_scale];
    let mut current_scale = usize::MAX;
    // Reject when sum + remaining < floor·ferns − margin (see the doc comment).
    let limit = floor * ferns as f32 - 1e-5 * ferns as f32;
    for ((&wi, out), c) in windows
        .iter()
        .zip(codes.chunks_exact_mut(ferns))
        .zip(conf.iter_mut())
    {
        let wi = wi as usize;
        let s = gs[wi] as usize;
        if s != current_scale {
            // Linear offsets of this scale's pairs for the frame's stride.
            for (l, p) in lin
                .chunks_exact_mut(2)
                .zip(&offsets[s * per_scale..(s + 1) * per_scale])
            {
                l[0] = (p.y1 as usize * stride + p.x1 as usize) as u32;
                l[1] = (p.y2 as usize * stride + p.x2 as usize) as u32;
            }
            current_scale = s;
        }
        let base = &data[gy[wi] as usize * stride + gx[wi] as usize..];
        let mut sum = 0.0f32;
        let mut bound = ferns as f32;
        for (f, (code, pairs)) in out
            .iter_mut()
            .zip(lin.chunks_exact(2 * features))
            .enumerate()
        {
            let mut v = 0u16;
            for l in pairs.chunks_exact(2) {
                v = (v << 1) | (base[l[0] as usize] > base[l[1] as usize]) as u16;
            }
            *code = v;
            sum += posterior[f * leaves + v as usize];
            bound = sum + (ferns - f - 1) as f32;
            if bound < limit {
                break;
            }
        }
        *c = if bound < limit {
            bound / ferns as f32
        } else {
            sum / ferns as f32
        };
    }
    Ok(())
}

/// The checks shared by [`fern_codes`] and [`fern_scan`].
fn check_scan(
    params: &FernParams,
    blurred: &ImageView<'_, u8>,
    grid: &Grid<'_>,
    offsets: &[PixelPair],
    windows: &[u32],
    codes: &[u16],
) -> Result<()> {
    let per_scale = params.comparisons();
    let ferns = params.ferns as usize;
    if blurred.size() != grid.frame_size() {
        return Err(Error::SizeMismatch);
    }
    let scales = grid.scales();
    if offsets.len() < offsets_len(params, scales.len())? {
        return Err(Error::BufferTooSmall);
    }
    if codes.len() < windows.len().checked_mul(ferns).ok_or(Error::Overflow)? {
        return Err(Error::BufferTooSmall);
    }
    for (s, sc) in scales.iter().enumerate() {
        let inside = |p: &PixelPair| {
            p.x1 < sc.width && p.x2 < sc.width && p.y1 < sc.height && p.y2 < sc.height
        };
        if !offsets[s * per_scale..(s + 1) * per_scale]
            .iter()
            .all(inside)
        {
            return Err(Error::OutOfBounds);
        }
    }
    if windows.iter().any(|&i| i as usize >= grid.len()) {
        return Err(Error::OutOfBounds);
    }
    Ok(())
}

/// Number of entries of each posterior table array of an ensemble: `ferns · 2^features`.
///
/// Errors: [`Error::InvalidArgument`] for parameters outside their ranges.
pub fn ensemble_len(params: &FernParams) -> Result<usize> {
    params.validate()?;
    Ok((params.ferns as usize) << params.features)
}

/// Caller storage for a [`FernEnsemble`]: each array at least [`ensemble_len`] long, indexed
/// `fern · 2^features + code`.
#[derive(Debug)]
pub struct FernTables<'a> {
    /// Positive example counts.
    pub positive: &'a mut [u32],
    /// Negative example counts.
    pub negative: &'a mut [u32],
    /// Posteriors `pos / (pos + neg)`.
    pub posterior: &'a mut [f32],
}

/// The fern ensemble's learnt state, in caller storage.
#[derive(Debug)]
pub struct FernEnsemble<'a> {
    params: FernParams,
    positive: &'a mut [u32],
    negative: &'a mut [u32],
    posterior: &'a mut [f32],
}

impl<'a> FernEnsemble<'a> {
    /// An untrained ensemble (all counts and posteriors zero) over `tables`.
    ///
    /// Errors: those of [`ensemble_len`]; [`Error::BufferTooSmall`] if a table is shorter
    /// than [`ensemble_len`] (nothing is written then).
    pub fn new(params: &FernParams, tables: FernTables<'a>) -> Result<Self> {
        let n = ensemble_len(params)?;
        let FernTables {
            positive,
            negative,
            posterior,
        } = tables;
        if positive.len() < n || negative.len() < n || posterior.len() < n {
            return Err(Error::BufferTooSmall);
        }
        let (positive, negative, posterior) =
            (&mut positive[..n], &mut negative[..n], &mut posterior[..n]);
        positive.fill(0);
        negative.fill(0);
        posterior.fill(0.0);
        Ok(Self {
            params: *params,
            positive,
            negative,
            posterior,
        })
    }

    /// The parameters the ensemble was made with.
    pub fn params(&self) -> &FernParams {
        &self.params
    }

    /// The posterior tables, `fern · 2^features + code` (what a GPU classifier uploads).
    pub fn posteriors(&self) -> &[f32] {
        self.posterior
    }

    /// Positive and negative counts of leaf `code` of fern `fern`, or `None` out of range.
    pub fn counts(&self, fern: usize, code: u16) -> Option<(u32, u32)> {
        let i = self.leaf(fern, code)?;
        Some((self.positive[i], self.negative[i]))
    }

    fn leaf(&self, fern: usize, code: u16) -> Option<usize> {
        let leaves = 1usize << self.params.features;
        (fern < self.params.ferns as usize && (code as usize) < leaves)
            .then_some(fern * leaves + code as usize)
    }

    fn check_code(&self, code: &[u16]) -> Result<()> {
        if code.len() != self.params.ferns as usize {
            return Err(Error::SizeMismatch);
        }
        if code
            .iter()
            .any(|&c| (c as u32) >> self.params.features != 0)
        {
            return Err(Error::InvalidArgument);
        }
        Ok(())
    }

    /// Mean posterior without checks (`code` has `ferns` valid codes).
    fn mean_posterior(&self, code: &[u16]) -> f32 {
        let leaves = 1usize << self.params.features;
        let mut sum = 0.0f32;
        for (f, &c) in code.iter().enumerate() {
            sum += self.posterior[f * leaves + c as usize];
        }
        sum / self.params.ferns as f32
    }

    /// Confidence of one window: the mean posterior of its `ferns` codes, in `[0, 1]`.
    ///
    /// Errors: [`Error::SizeMismatch`] unless `code` has `ferns` entries;
    /// [`Error::InvalidArgument`] if a code has bits at or above `features`.
    pub fn confidence(&self, code: &[u16]) -> Result<f32> {
        self.check_code(code)?;
        Ok(self.mean_posterior(code))
    }

    /// Confidences of many windows: `codes` as written by [`fern_codes`] (`ferns` per window),
    /// one confidence per window into `out`.
    ///
    /// Errors: [`Error::SizeMismatch`] unless `codes.len()` is a multiple of `ferns`;
    /// [`Error::BufferTooSmall`] if `out` has fewer entries than windows;
    /// [`Error::InvalidArgument`] as [`FernEnsemble::confidence`]. Nothing is written on error.
    pub fn confidences(&self, codes: &[u16], out: &mut [f32]) -> Result<()> {
        let ferns = self.params.ferns as usize;
        if !codes.len().is_multiple_of(ferns) {
            return Err(Error::SizeMismatch);
        }
        if out.len() < codes.len() / ferns {
            return Err(Error::BufferTooSmall);
        }
        if codes
            .iter()
            .any(|&c| (c as u32) >> self.params.features != 0)
        {
            return Err(Error::InvalidArgument);
        }
        for (o, code) in out.iter_mut().zip(codes.chunks_exact(ferns)) {
            *o = self.mean_posterior(code);
        }
        Ok(())
    }

    /// Forgets every example (all counts and posteriors back to zero), for re-initialisation.
    pub fn reset(&mut self) {
        self.positive.fill(0);
        self.negative.fill(0);
        self.posterior.fill(0.0);
    }

    /// Changes the detection/positive-learning and negative-learning thresholds (OpenTLD raises
    /// the first after evaluating held-out negatives at init).
    ///
    /// Errors: [`Error::InvalidArgument`] for a NaN threshold or one outside `[0, 1]`; nothing
    /// changes then.
    pub fn set_thresholds(&mut self, positive: f32, negative: f32) -> Result<()> {
        let p = FernParams {
            positive_threshold: positive,
            negative_threshold: negative,
            ..self.params
        };
        p.validate()?;
        self.params = p;
        Ok(())
    }

    /// True if `confidence` detects the object: `confidence > positive_threshold`.
    pub fn accepts(&self, confidence: f32) -> bool {
        confidence > self.params.positive_threshold
    }

    /// Adds one example unconditionally: increments (saturating) the positive or negative count
    /// of each fern's leaf and recomputes its posterior.
    ///
    /// Errors: as [`FernEnsemble::confidence`]; nothing changes on error.
    pub fn update(&mut self, code: &[u16], positive: bool) -> Result<()> {
        self.check_code(code)?;
        let leaves = 1usize << self.params.features;
        for (f, &c) in code.iter().enumerate() {
            let i = f * leaves + c as usize;
            if positive {
                self.positive[i] = self.positive[i].saturating_add(1);
            } else {
                self.negative[i] = self.negative[i].saturating_add(1);
            }
            let (p, n) = (self.positive[i], self.negative[i]);
            // Exact in f64 (counts < 2³³), then one rounding to f32.
            self.posterior[i] = if p == 0 {
                0.0
            } else {
                (p as f64 / (p as f64 + n as f64)) as f32
            };
        }
        Ok(())
    }

    /// OpenTLD's training rule: learns a positive example only if its confidence is
    /// `≤ positive_threshold`, a negative one only if it is `≥ negative_threshold`. Returns
    /// whether the ensemble changed.
    ///
    /// Errors: as [`FernEnsemble::confidence`]; nothing changes on error.
    pub fn train(&mut self, code: &[u16], positive: bool) -> Result<bool> {
        let conf = self.confidence(code)?;
        let learn = if positive {
            conf <= self.params.positive_threshold
        } else {
            conf >= self.params.negative_threshold
        };
        if learn {
            self.update(code, positive)?;
        }
        Ok(learn)
    }
}
