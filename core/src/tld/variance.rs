//! The variance filter, first stage of the TLD detection cascade: a grid window survives when the
//! grey-level variance of its pixels reaches a threshold (OpenTLD: half the variance of the
//! initial patch), computed in constant time per window from the integral and squared-integral
//! images.
//!
//! The decision is exact integer arithmetic, so a GPU kernel can reproduce it bit for bit. For a
//! window of `n` pixels with sum `S` and sum of squares `Q`, the variance is `D / n²` with
//! `D = n·Q − S²` (an exact integer). The threshold is held in fixed point, `t = thr·2¹⁶`
//! (`u64`), and a window is kept when
//!
//! `D · 2¹⁶ ≥ t · n²`
//!
//! evaluated in 128-bit unsigned integers (no product can overflow: `n < 2³²`, `D < 2⁷⁸`,
//! `t < 2⁶⁴`). On a GPU the two products need a 64×64→128-bit multiply (`mul_hi` /
//! `__umul64hi`); with frames up to 4096 × 4096 `D` stays below 2⁶²
//! and `t` below 2³⁰.

use crate::error::{Error, Result};
use crate::geometry::Rect;
use crate::integral::IntegralImage;

use super::grid::Grid;

/// Fractional bits of [`VarianceThreshold`].
pub const VARIANCE_FRAC_BITS: u32 = 16;

/// OpenTLD's threshold factor: keep windows whose variance is at least ½ of the initial one's,
/// as `(numerator, denominator)`.
pub const DEFAULT_VARIANCE_FACTOR: (u32, u32) = (1, 2);

/// A variance threshold in pixel² (grey levels squared), in unsigned fixed point with
/// [`VARIANCE_FRAC_BITS`] fractional bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarianceThreshold {
    q16: u64,
}

impl VarianceThreshold {
    /// A threshold of `q16 / 2¹⁶` pixel².
    pub const fn from_q16(q16: u64) -> Self {
        Self { q16 }
    }

    /// The threshold in pixel² × 2¹⁶.
    pub const fn q16(self) -> u64 {
        self.q16
    }

    /// `factor_num / factor_den` times the population variance of `pixels`, rounded down to the
    /// fixed-point grid (so a window with exactly that variance is kept). Use it with the
    /// initial patch as OpenTLD does (it measures the 15 × 15 resampled patch).
    ///
    /// Errors: [`Error::ZeroSize`] for no pixels; [`Error::InvalidArgument`] if `factor_den`
    /// is 0; [`Error::Overflow`] for more than `u32::MAX` pixels.
    pub fn from_samples(pixels: &[u8], factor_num: u32, factor_den: u32) -> Result<Self> {
        if pixels.is_empty() {
            return Err(Error::ZeroSize);
        }
        if pixels.len() > u32::MAX as usize {
            return Err(Error::Overflow);
        }
        let (mut s, mut q) = (0u64, 0u64);
        for &p in pixels {
            s += p as u64;
            q += p as u64 * p as u64;
        }
        Self::from_sums(pixels.len() as u32, s, q, factor_num, factor_den)
    }

    /// `factor_num / factor_den` times the population variance of the pixels of `rect`, read
    /// from the integral images, rounded down to the fixed-point grid.
    ///
    /// Errors: those of [`IntegralImage::window_sq_sum`]; [`Error::InvalidArgument`] if
    /// `factor_den` is 0.
    pub fn from_window(
        integral: &IntegralImage<'_>,
        rect: Rect,
        factor_num: u32,
        factor_den: u32,
    ) -> Result<Self> {
        let q = integral.window_sq_sum(rect)?;
        let s = integral.window_sum(rect)? as u64;
        // The queries succeeded, so `rect` lies inside an image of at most
        // `MAX_INTEGRAL_PIXELS` (< 2³²) pixels.
        Self::from_sums(rect.area() as u32, s, q, factor_num, factor_den)
    }

    /// `floor(f·D·2¹⁶ / n²)` for `n` pixels with sum `s` and sum of squares `q`.
    fn from_sums(n: u32, s: u64, q: u64, factor_num: u32, factor_den: u32) -> Result<Self> {
        if factor_den == 0 {
            return Err(Error::InvalidArgument);
        }
        let d = variance_numerator(n, s, q);
        // d < n²·2¹⁴ ≤ 2⁷⁸, times 2¹⁶·2³² < 2¹²⁶; n²·den < 2⁹⁶.
        let num = d * factor_num as u128 * (1u128 << VARIANCE_FRAC_BITS);
        let den = (n as u128) * (n as u128) * factor_den as u128;
        let t = num / den;
        // The variance is below 2¹⁴, so t < 2¹⁴⁺¹⁶⁺³² fits u64.
        Ok(Self::from_q16(t.min(u64::MAX as u128) as u64))
    }
}

/// `n·q − s²`: `n²` times the population variance of `n` pixels with sum `s` and sum of squares
/// `q`. Saturates at 0 for inconsistent sums (the true value is never negative).
#[inline]
pub fn variance_numerator(n: u32, s: u64, q: u64) -> u128 {
    (n as u128 * q as u128).saturating_sub(s as u128 * s as u128)
}

/// The filter's exact decision for a window of `n` pixels with sum `s` and sum of squares `q`:
/// `(n·q − s²)·2¹⁶ ≥ t·n²`. Exact for every input: taking `n` as `u32` bounds both sides below
/// 2¹²⁸.
#[inline]
pub fn passes_variance(n: u32, s: u64, q: u64, threshold: VarianceThreshold) -> bool {
    let n2 = n as u128 * n as u128;
    (variance_numerator(n, s, q) << VARIANCE_FRAC_BITS) >= threshold.q16 as u128 * n2
}

/// Runs the variance filter over every window of `grid`, writing the indices of the windows
/// that pass ([`passes_variance`]) in increasing order to `survivors`, and returns how many
/// there are.
///
/// Errors: [`Error::InvalidArgument`] if `integral` has no squared table;
/// [`Error::SizeMismatch`] if it was not built for the grid's frame size;
/// [`Error::BufferTooSmall`] if `survivors` is shorter than `grid.len()` (every window may
/// pass). Nothing is written on error.
pub fn variance_filter(
    integral: &IntegralImage<'_>,
    grid: &Grid<'_>,
    threshold: VarianceThreshold,
    survivors: &mut [u32],
) -> Result<usize> {
    if (integral.width(), integral.height()) != grid.frame_size() {
        return Err(Error::SizeMismatch);
    }
    if integral.window_sq_sum(Rect::new(0, 0, 1, 1)).is_err() {
        return Err(Error::InvalidArgument);
    }
    if survivors.len() < grid.len() {
        return Err(Error::BufferTooSmall);
    }
    let mut kept = 0;
    for i in 0..grid.len() {
        let r = grid.window(i);
        // Grid windows lie inside the frame, so the queries cannot fail.
        let s = integral.window_sum(r)? as u64;
        let q = integral.window_sq_sum(r)?;
        // A window of a grid is at most 65 535 × 65 535 pixels.
        if passes_variance(r.area() as u32, s, q, threshold) {
            survivors[kept] = i as u32;
            kept += 1;
        }
    }
    Ok(kept)
}
