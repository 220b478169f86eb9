//! Conformance tests of the core, in the manner of the OpenVX conformance suite: every algorithm
//! is compared with a plain reference implementation (`common`) on random inputs of many sizes,
//! strides and border modes. Integer outputs must match exactly; float outputs within the
//! tolerance stated at each test. Every destination lives in a buffer whose row gaps and tail
//! hold garbage that must survive the call; every float source has NaN in its gaps, so a stray
//! read shows up as a NaN result.
//!
//! Float tolerance, unless a test says otherwise: an `f32` result that is a sum of `n` products,
//! summed in any order, is within `γₙ·Σ|c·p| ≈ n·2⁻²⁴·Σ|c·p|` of the exact sum; we allow
//! `(n + 2)·ε_f32·Σ|c·p|` (twice that, plus room for a final scaling), with `Σ|c·p|` from the
//! `f64` reference.

#[path = "../common/mod.rs"]
mod common;

use common::{borders_f32, borders_u8, random_f32, random_u8, Img, Plane, Rng, SIZES};
use mvision_core::filter::{
    box_blur_f32, box_blur_u8, filter2d_f32, filter2d_scratch_len, filter2d_u8, gaussian_blur_f32,
    gaussian_blur_u8, gaussian_kernel_f32, gaussian_kernel_q, gaussian_kernel_size,
    gradient_polar_f32, gradient_polar_i16, sep_filter_f32, sep_filter_u8, separable_scratch_len,
    sobel_f32, sobel_u8, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ, GAUSSIAN_SHIFT_PER_AXIS,
    MAX_KERNEL_SIZE, MAX_SHIFT, MAX_TAPS_2D,
};
use mvision_core::image::required_len;
use mvision_core::integral::{integral_size, integral_u8, IntegralImage, MAX_INTEGRAL_PIXELS};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{
    resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len, RESIZE_FRAC_BITS,
};
use mvision_core::{Border, Error, ImageView, ImageViewMut, PixelFormat, Rect, RectF, Result};

/// The float tolerance described in the file docs.
fn sum_tol(terms: usize, abs_sum: f64) -> f64 {
    (terms as f64 + 2.0) * f32::EPSILON as f64 * abs_sum + f32::MIN_POSITIVE as f64
}

/// A scratch buffer of exactly `len` elements, holding garbage (scratch content must not matter).
fn scratch_i32(rng: &mut Rng, len: usize) -> Vec<i32> {
    (0..len).map(|_| rng.next_u64() as i32).collect()
}

/// A float scratch buffer of exactly `len` elements, holding NaN garbage.
fn scratch_f32(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len)
        .map(|_| f32::from_bits(0x7FC0_0001 | rng.next_u64() as u32))
        .collect()
}

fn wide(c: &[i32]) -> Vec<i64> {
    c.iter().map(|&v| v as i64).collect()
}

fn wide_f(c: &[f32]) -> Vec<f64> {
    c.iter().map(|&v| v as f64).collect()
}

/// Largest `Σ|c|` a fixed-point kernel with `shift` fractional bits may have (documented limit:
/// `255·Σ|c| + 2^(shift−1) ≤ i32::MAX`).
fn abs_budget(shift: u32) -> i64 {
    (i32::MAX as i64 - ((1i64 << shift) >> 1)) / 255
}

/// Random coefficients within `budget` total magnitude: either around a gain of `2^shift`
/// (outputs spread over `0..=255`) or every tap at the largest magnitude the budget allows, with
/// random signs (worst-case accumulator range). Some taps are zero.
fn random_coeffs(rng: &mut Rng, n: usize, shift: u32, budget: i64) -> Vec<i32> {
    let at_limit = (budget / n as i64).max(1);
    if rng.chance(1, 3) {
        (0..n)
            .map(|_| match rng.below(8) {
                0 => 0,
                1..=3 => -at_limit as i32,
                _ => at_limit as i32,
            })
            .collect()
    } else {
        let m = ((2i64 << shift) / n as i64).clamp(1, at_limit);
        (0..n)
            .map(|_| {
                if rng.chance(1, 8) {
                    0
                } else {
                    rng.range(-m / 2, m) as i32
                }
            })
            .collect()
    }
}

mod basics;
mod filters;
mod geometry;
mod integral;
mod kernels;
mod pyramid;
mod resize;
mod simd_paths;
mod views;
