//! Gaussian pyramid: one level down, the `[1 4 6 4 1]/16` kernel in both directions followed by
//! dropping every other row and column (OpenCV's `pyrDown`).

use crate::border::Border;
use crate::error::Result;
use crate::filter::engine::{self, round_shift_sat_u8};
use crate::image::{ImageView, ImageViewMut};

const TAPS: [i32; 5] = [1, 4, 6, 4, 1];
const TAPS_F32: [f32; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];

/// The size of the next pyramid level of a `width × height` image: `(⌈w/2⌉, ⌈h/2⌉)`.
pub fn pyr_down_size(width: usize, height: usize) -> (usize, usize) {
    (width.div_ceil(2), height.div_ceil(2))
}

/// Scratch elements [`pyr_down_u8`] / [`pyr_down_f32`] need for a `width`-pixel source.
pub fn pyr_down_scratch_len(width: usize) -> usize {
    engine::separable_scratch_len(width, width.div_ceil(2), 5, 5).unwrap_or(usize::MAX)
}

/// One pyramid level down of a `u8` image: exact integer sum with weights totalling 256,
/// rounded to nearest (halves up). Output pixel `(x, y)` is centred on source `(2x, 2y)`.
///
/// Errors: [`crate::Error::SizeMismatch`] unless `dst` is [`pyr_down_size`] of `src`;
/// [`crate::Error::BufferTooSmall`] for short scratch.
pub fn pyr_down_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    engine::separable(
        src,
        dst,
        &TAPS,
        &TAPS,
        2,
        border,
        scratch,
        |p| p as i32,
        |a| round_shift_sat_u8(a, 8),
    )
}

/// One pyramid level down of an `f32` image (sum with integer weights, then `× 1/256`).
///
/// Errors: as [`pyr_down_u8`].
pub fn pyr_down_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    engine::separable(
        src,
        dst,
        &TAPS_F32,
        &TAPS_F32,
        2,
        border,
        scratch,
        |p| p,
        |a| a * (1.0 / 256.0),
    )
}
