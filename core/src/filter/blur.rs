//! Gaussian and box blur, as separable kernels on the shared engine.

use super::engine;
use super::{SepKernelF32, SepKernelQ, MAX_KERNEL_SIZE};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::image::{ImageView, ImageViewMut};

/// Fractional bits of each axis of the fixed-point Gaussian kernel (total `2 ×` this).
pub const GAUSSIAN_SHIFT_PER_AXIS: u32 = 10;

/// The kernel size a Gaussian of standard deviation `sigma_px` gets when none is given:
/// `2·ceil(3σ) + 1`, the smallest odd size covering ±3σ. `3σ` within 1e-6 above an integer
/// counts as that integer, so an `f32` σ that is the rounding of `k/3` does not grow the kernel.
///
/// Errors: [`Error::InvalidArgument`] if `sigma_px` is not finite and positive;
/// [`Error::InvalidKernel`] if the size would exceed 15 (σ > 7/3 px).
pub fn gaussian_kernel_size(sigma_px: f32) -> Result<usize> {
    if !(sigma_px.is_finite() && sigma_px > 0.0) {
        return Err(Error::InvalidArgument);
    }
    let half = libm::ceil(3.0 * sigma_px as f64 - 1e-6);
    if half > (MAX_KERNEL_SIZE / 2) as f64 {
        return Err(Error::InvalidKernel);
    }
    Ok(2 * (half.max(0.0) as usize) + 1)
}

/// OpenCV's fixed kernels for sizes 1–7 when σ is derived from the size (`getGaussianKernel`
/// uses these tables, not its σ formula, for `sigma ≤ 0`). All taps are dyadic, so they are exact
/// in both `f32` and the fixed-point kernel.
const SMALL_TABLES: [&[f64]; 4] = [
    &[1.0],
    &[0.25, 0.5, 0.25],
    &[0.0625, 0.25, 0.375, 0.25, 0.0625],
    &[
        0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125,
    ],
];

/// Resolves `(ksize, sigma)` as OpenCV does: ksize 0 → from sigma; sigma ≤ 0 → OpenCV's fixed
/// table for ksize ≤ 7, else `σ = 0.3·((k − 1)/2 − 1) + 0.8`. Returns the size and σ (`None`
/// for a fixed table).
fn resolve(ksize: usize, sigma_px: f32) -> Result<(usize, Option<f64>)> {
    if sigma_px.is_nan() || sigma_px.is_infinite() {
        return Err(Error::InvalidArgument);
    }
    match (ksize, sigma_px > 0.0) {
        (0, false) => Err(Error::InvalidArgument),
        (0, true) => Ok((gaussian_kernel_size(sigma_px)?, Some(sigma_px as f64))),
        (k, _) if k % 2 == 0 || k > MAX_KERNEL_SIZE => Err(Error::InvalidKernel),
        (k, true) => Ok((k, Some(sigma_px as f64))),
        (k, false) if k <= 7 => Ok((k, None)),
        (k, false) => Ok((k, Some(0.3 * ((k as f64 - 1.0) * 0.5 - 1.0) + 0.8))),
    }
}

/// Normalised 1-D Gaussian weights (sum 1) into `out[..ksize]`: sampled from σ, or OpenCV's
/// fixed table when `sigma` is `None`.
fn weights(ksize: usize, sigma: Option<f64>, out: &mut [f64; MAX_KERNEL_SIZE]) {
    let Some(sigma) = sigma else {
        out[..ksize].copy_from_slice(SMALL_TABLES[ksize / 2]);
        return;
    };
    let r = (ksize / 2) as f64;
    let mut sum = 0.0;
    for (i, w) in out[..ksize].iter_mut().enumerate() {
        let d = i as f64 - r;
        *w = libm::exp(-d * d / (2.0 * sigma * sigma));
        sum += *w;
    }
    for w in &mut out[..ksize] {
        *w /= sum;
    }
}

/// The fixed-point separable Gaussian: each axis has [`GAUSSIAN_SHIFT_PER_AXIS`] fractional
/// bits, taps rounded to nearest and the centre tap adjusted so each axis sums to exactly
/// `2^10` (flat regions stay flat). `ksize` 0 derives the size from `sigma_px`; `sigma_px` ≤ 0
/// uses OpenCV's fixed kernels for `ksize` ≤ 7 (`[1 2 1]/4`, `[1 4 6 4 1]/16`, …) and derives σ
/// from `ksize` above that, as `cv::getGaussianKernel` does.
///
/// Errors: [`Error::InvalidArgument`] if both are 0 or sigma is NaN/∞;
/// [`Error::InvalidKernel`] for an even size or one above 15.
pub fn gaussian_kernel_q(ksize: usize, sigma_px: f32) -> Result<SepKernelQ> {
    let (k, sigma) = resolve(ksize, sigma_px)?;
    let mut w = [0.0; MAX_KERNEL_SIZE];
    weights(k, sigma, &mut w);
    let one = 1i32 << GAUSSIAN_SHIFT_PER_AXIS;
    let mut q = [0i32; MAX_KERNEL_SIZE];
    for (d, &f) in q.iter_mut().zip(&w[..k]) {
        *d = libm::round(f * one as f64) as i32;
    }
    let sum: i32 = q[..k].iter().sum();
    q[k / 2] += one - sum;
    SepKernelQ::new(&q[..k], &q[..k], 2 * GAUSSIAN_SHIFT_PER_AXIS)
}

/// The float separable Gaussian (weights sum to 1 per axis). Size and σ rules as
/// [`gaussian_kernel_q`].
///
/// Errors: as [`gaussian_kernel_q`].
pub fn gaussian_kernel_f32(ksize: usize, sigma_px: f32) -> Result<SepKernelF32> {
    let (k, sigma) = resolve(ksize, sigma_px)?;
    let mut w = [0.0; MAX_KERNEL_SIZE];
    weights(k, sigma, &mut w);
    let mut f = [0.0f32; MAX_KERNEL_SIZE];
    for (d, &v) in f.iter_mut().zip(&w[..k]) {
        *d = v as f32;
    }
    SepKernelF32::new(&f[..k], &f[..k])
}

/// Gaussian blur of a `u8` image with the fixed-point kernel of [`gaussian_kernel_q`].
/// Scratch: [`super::separable_scratch_len`]`(width, k, k)` for the resolved size `k`
/// (`(width, 15, 15)` always suffices).
///
/// Errors: those of [`gaussian_kernel_q`] and [`super::sep_filter_u8`].
pub fn gaussian_blur_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    ksize: usize,
    sigma_px: f32,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    super::sep_filter_u8(
        src,
        dst,
        &gaussian_kernel_q(ksize, sigma_px)?,
        border,
        scratch,
    )
}

/// Gaussian blur of an `f32` image with the kernel of [`gaussian_kernel_f32`].
///
/// Errors: those of [`gaussian_kernel_f32`] and [`super::sep_filter_f32`].
pub fn gaussian_blur_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    ksize: usize,
    sigma_px: f32,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    super::sep_filter_f32(
        src,
        dst,
        &gaussian_kernel_f32(ksize, sigma_px)?,
        border,
        scratch,
    )
}

const ONES_F32: [f32; MAX_KERNEL_SIZE] = [1.0; MAX_KERNEL_SIZE];

fn check_box(ksize: usize) -> Result<()> {
    if ksize == 0 {
        Err(Error::ZeroSize)
    } else if ksize.is_multiple_of(2) || ksize > MAX_KERNEL_SIZE {
        Err(Error::InvalidKernel)
    } else {
        Ok(())
    }
}

/// Box blur (mean over a `ksize × ksize` window) of a `u8` image: the exact integer sum (running
/// sums, additions only) divided by `ksize²`, rounded to nearest with halves up. Scratch:
/// [`super::separable_scratch_len`]`(width, ksize, ksize)`.
///
/// Errors: [`Error::ZeroSize`] / [`Error::InvalidKernel`] for a bad `ksize`; those of
/// [`super::sep_filter_u8`].
pub fn box_blur_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    ksize: usize,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    check_box(ksize)?;
    super::box_sum::box_mean_u8(src, dst, ksize, border, scratch)
}

/// Box blur of an `f32` image: the window sum times `1/ksize²`.
///
/// Errors: as [`box_blur_u8`].
pub fn box_blur_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    ksize: usize,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    check_box(ksize)?;
    let inv = 1.0 / (ksize * ksize) as f32;
    let ones = &ONES_F32[..ksize];
    engine::separable_f32(src, dst, ones, ones, border, scratch, Some(inv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_taps_sum_to_one_and_are_symmetric() {
        for k in (1..=15).step_by(2) {
            for sigma in [0.0f32, 0.5, 1.0, 2.0] {
                let g = gaussian_kernel_q(k, sigma).unwrap();
                assert_eq!(g.kx().iter().sum::<i32>(), 1 << GAUSSIAN_SHIFT_PER_AXIS);
                let kx = g.kx();
                for i in 0..k {
                    assert_eq!(kx[i], kx[k - 1 - i]);
                }
            }
        }
        assert_eq!(gaussian_kernel_size(2.0), Ok(13));
        assert_eq!(gaussian_kernel_size(1.0), Ok(7));
        assert_eq!(gaussian_kernel_size(2.5), Err(Error::InvalidKernel));
        assert_eq!(gaussian_kernel_q(0, 0.0), Err(Error::InvalidArgument));
        assert_eq!(gaussian_kernel_q(4, 1.0), Err(Error::InvalidKernel));
        // σ ≤ 0 with a small size: OpenCV's fixed tables, exact in Q10.
        assert_eq!(gaussian_kernel_q(3, 0.0).unwrap().kx(), &[256, 512, 256]);
        assert_eq!(
            gaussian_kernel_q(7, -1.0).unwrap().kx(),
            &[32, 112, 224, 288, 224, 112, 32]
        );
        assert_eq!(
            gaussian_kernel_f32(5, 0.0).unwrap().kx(),
            &[0.0625, 0.25, 0.375, 0.25, 0.0625]
        );
    }
}
