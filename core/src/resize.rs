//! Bilinear resize with pixel-centre alignment (OpenCV's `INTER_LINEAR` mapping).
//!
//! Destination pixel `d` samples source coordinate `s = (d + ½)·(src/dst) − ½`, clamped to
//! `[0, src − 1]`. Coordinates are computed exactly in integers with [`RESIZE_FRAC_BITS`]
//! fractional bits, so every platform (and the GPU kernels) picks the same source pixels and
//! weights. The `u8` path is then pure integer arithmetic with a single rounding.

use crate::error::{Error, Result};
use crate::image::{ImageView, ImageViewMut};

/// Fractional bits of resize coordinates and weights (1/2048 pixel).
pub const RESIZE_FRAC_BITS: u32 = 11;
const ONE: i64 = 1 << RESIZE_FRAC_BITS;

/// Scratch elements (`i32`) the resize functions need for a `dst_width`-pixel destination.
pub fn resize_scratch_len(dst_width: usize) -> usize {
    dst_width.saturating_mul(2)
}

/// Source index and fractional weight (Q11) for destination index `d`.
fn map_coord(d: usize, src_n: usize, dst_n: usize) -> (usize, i32) {
    let num = (2 * d as i128 + 1) * src_n as i128 - dst_n as i128;
    let q = (num * ONE as i128).div_euclid(2 * dst_n as i128);
    let q = q.clamp(0, (src_n as i128 - 1) * ONE as i128) as i64;
    ((q >> RESIZE_FRAC_BITS) as usize, (q & (ONE - 1)) as i32)
}

fn resize<T: crate::pixel::Pixel>(
    src: &ImageView<'_, T>,
    dst: &mut ImageViewMut<'_, T>,
    scratch: &mut [i32],
    blend: impl Fn([T; 4], i32, i32) -> T,
) -> Result<()> {
    let (sw, sh) = src.size();
    let (dw, dh) = dst.size();
    if scratch.len() < resize_scratch_len(dw) {
        return Err(Error::BufferTooSmall);
    }
    if sw > i32::MAX as usize {
        return Err(Error::Overflow);
    }
    let (xs, fxs) = scratch[..2 * dw].split_at_mut(dw);
    for d in 0..dw {
        let (x0, fx) = map_coord(d, sw, dw);
        xs[d] = x0 as i32;
        fxs[d] = fx;
    }
    for dy in 0..dh {
        let (y0, fy) = map_coord(dy, sh, dh);
        let y1 = (y0 + 1).min(sh - 1);
        let (r0, r1) = (src.row(y0), src.row(y1));
        for ((o, &x0), &fx) in dst.row_mut(dy).iter_mut().zip(xs.iter()).zip(fxs.iter()) {
            let x0 = x0 as usize;
            let x1 = (x0 + 1).min(sw - 1);
            *o = blend([r0[x0], r0[x1], r1[x0], r1[x1]], fx, fy);
        }
    }
    Ok(())
}

/// Bilinear resize of a `u8` image to `dst`'s size. The four weights are products of Q11
/// fractions (Q22); the weighted sum is rounded once (halves up).
///
/// Errors: [`Error::BufferTooSmall`] if `scratch` is shorter than [`resize_scratch_len`];
/// [`Error::Overflow`] for a source wider than `i32::MAX`.
pub fn resize_bilinear_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    scratch: &mut [i32],
) -> Result<()> {
    resize(src, dst, scratch, |p, fx, fy| {
        let (fx, fy) = (fx as u32, fy as u32);
        let (gx, gy) = (ONE as u32 - fx, ONE as u32 - fy);
        let s = gx * gy * p[0] as u32
            + fx * gy * p[1] as u32
            + gx * fy * p[2] as u32
            + fx * fy * p[3] as u32;
        ((s + (1 << (2 * RESIZE_FRAC_BITS - 1))) >> (2 * RESIZE_FRAC_BITS)) as u8
    })
}

/// Bilinear resize of an `f32` image to `dst`'s size (weights `fx/2048`, horizontal blend of
/// each row, then vertical).
///
/// Errors: as [`resize_bilinear_u8`].
pub fn resize_bilinear_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    scratch: &mut [i32],
) -> Result<()> {
    resize(src, dst, scratch, |p, fx, fy| {
        let wx = fx as f32 * (1.0 / ONE as f32);
        let wy = fy as f32 * (1.0 / ONE as f32);
        let top = p[0] + (p[1] - p[0]) * wx;
        let bottom = p[2] + (p[3] - p[2]) * wx;
        top + (bottom - top) * wy
    })
}
