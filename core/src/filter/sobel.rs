//! Sobel derivatives (3 × 3) and their polar form (gradient magnitude and orientation).

use super::engine;
use crate::border::Border;
use crate::error::Result;
use crate::image::{same_size, ImageView, ImageViewMut};
use crate::pixel::Pixel;

const DERIV: [i32; 3] = [-1, 0, 1];
const SMOOTH: [i32; 3] = [1, 2, 1];
const DERIV_F32: [f32; 3] = [-1.0, 0.0, 1.0];
const SMOOTH_F32: [f32; 3] = [1.0, 2.0, 1.0];

/// 3 × 3 Sobel derivatives of a `u8` image: `dx = [−1 0 1] ⊗ [1 2 1]ᵀ`, `dy` its transpose,
/// unscaled (range ±1020). Scratch: [`super::separable_scratch_len`]`(width, 3, 3)`.
///
/// Errors: [`crate::Error::SizeMismatch`] unless `dx` and `dy` have `src`'s size;
/// [`crate::Error::BufferTooSmall`] for short scratch. Nothing is written on error.
pub fn sobel_u8(
    src: &ImageView<'_, u8>,
    dx: &mut ImageViewMut<'_, i16>,
    dy: &mut ImageViewMut<'_, i16>,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    same_size(src.size(), dy.size())?;
    let sat = |a: i32| a.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
    engine::separable_u8(src, dx, &DERIV, &SMOOTH, border, scratch, sat)?;
    engine::separable_u8(src, dy, &SMOOTH, &DERIV, border, scratch, sat)
}

/// 3 × 3 Sobel derivatives of an `f32` image (same kernels as [`sobel_u8`]).
///
/// Errors: as [`sobel_u8`].
pub fn sobel_f32(
    src: &ImageView<'_, f32>,
    dx: &mut ImageViewMut<'_, f32>,
    dy: &mut ImageViewMut<'_, f32>,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    same_size(src.size(), dy.size())?;
    engine::separable_f32(src, dx, &DERIV_F32, &SMOOTH_F32, border, scratch, None)?;
    engine::separable_f32(src, dy, &SMOOTH_F32, &DERIV_F32, border, scratch, None)
}

/// `atan2(dy, dx)` folded into `(−π, π]` (`atan2(−0, x<0)` is −π).
#[inline]
fn orientation_of(dx: f32, dy: f32) -> f32 {
    let a = libm::atan2f(dy, dx);
    if a == -core::f32::consts::PI {
        core::f32::consts::PI
    } else {
        a
    }
}

fn polar<T: Pixel>(
    dx: &ImageView<'_, T>,
    dy: &ImageView<'_, T>,
    magnitude: &mut ImageViewMut<'_, f32>,
    orientation: &mut ImageViewMut<'_, f32>,
    to_f32: impl Fn(T) -> f32,
    hypot: impl Fn(f32, f32) -> f32,
) -> Result<()> {
    same_size(dx.size(), dy.size())?;
    same_size(dx.size(), magnitude.size())?;
    same_size(dx.size(), orientation.size())?;
    for y in 0..dx.height() {
        let (gx, gy) = (dx.row(y), dy.row(y));
        for ((m, &a), &b) in magnitude.row_mut(y).iter_mut().zip(gx).zip(gy) {
            *m = hypot(to_f32(a), to_f32(b));
        }
        for ((o, &a), &b) in orientation.row_mut(y).iter_mut().zip(gx).zip(gy) {
            *o = orientation_of(to_f32(a), to_f32(b));
        }
    }
    Ok(())
}

/// Gradient magnitude `√(dx² + dy²)` and orientation `atan2(dy, dx)` in radians, in
/// `(−π, π]`, from `i16` Sobel derivatives.
///
/// Errors: [`crate::Error::SizeMismatch`] unless all four images have one size.
pub fn gradient_polar_i16(
    dx: &ImageView<'_, i16>,
    dy: &ImageView<'_, i16>,
    magnitude: &mut ImageViewMut<'_, f32>,
    orientation: &mut ImageViewMut<'_, f32>,
) -> Result<()> {
    // |d| ≤ 32768: the plain formula cannot overflow and is exact to one rounding.
    polar(
        dx,
        dy,
        magnitude,
        orientation,
        |v| v as f32,
        |a, b| libm::sqrtf(a * a + b * b),
    )
}

/// Gradient magnitude (overflow-free `hypot`) and orientation in `(−π, π]` from `f32`
/// derivatives (as [`gradient_polar_i16`]).
///
/// Errors: [`crate::Error::SizeMismatch`] unless all four images have one size.
pub fn gradient_polar_f32(
    dx: &ImageView<'_, f32>,
    dy: &ImageView<'_, f32>,
    magnitude: &mut ImageViewMut<'_, f32>,
    orientation: &mut ImageViewMut<'_, f32>,
) -> Result<()> {
    // Arbitrary floats: hypot avoids overflow of a² + b² above ~1.8e19.
    polar(dx, dy, magnitude, orientation, |v| v, libm::hypotf)
}
