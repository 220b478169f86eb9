//! Separable `u8` filters whose whole fixed-point sum fits 16 bits, in 16-bit lanes: the
//! small-integer Gaussian tables (`[1 2 1]`, `[1 4 6 4 1]` once their common power of two is
//! taken out), where OpenCV uses its shift-and-add path.
//!
//! With non-negative taps and `255·Σkx·Σky + 2^(shift−1) ≤ 65535`, every partial sum of the
//! horizontal pass, of the vertical pass and the rounding addend are exact `u16` values, so
//! computing in 16-bit lanes (twice the pixels per vector of the `i32` paths, no pairing or
//! splitting) gives exactly the `i32` sums and the same `round_shift_sat_u8` result. The row
//! loops are compiled for every [`crate::cpu`] level.

use super::engine::{load_padded_row, separable_scratch_len, Ring};
use super::simd::as_u16;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::image::{same_size, ImageView, ImageViewMut};

/// Output pixels per block whose sums stay in registers.
const BLOCK: usize = 64;

/// The taps as `u16` when the kernel qualifies for this path (see the module docs), else
/// `None`. `kx`, `ky` are the kernels with their common powers of two already taken out and
/// `shift` the remaining shift.
fn narrow_taps(k: &[i32]) -> Option<([u16; super::MAX_KERNEL_SIZE], u64)> {
    let mut out = [0u16; super::MAX_KERNEL_SIZE];
    let mut gain = 0u64;
    for (o, &c) in out.iter_mut().zip(k) {
        *o = u16::try_from(c).ok()?;
        gain += c as u64;
    }
    Some((out, gain))
}

/// [`super::engine::separable_round_u8`] in 16-bit lanes, or `None` (nothing written) where
/// the kernel does not qualify. Same scratch, same errors, same results.
#[allow(clippy::too_many_arguments)]
pub(crate) fn separable_round_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    kx: &[i32],
    ky: &[i32],
    shift: u32,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Option<Result<()>> {
    let (tx, gx) = narrow_taps(kx)?;
    let (ty, gy) = narrow_taps(ky)?;
    let half = (1u64 << shift) >> 1;
    if shift > 15 || 255 * gx * gy + half > u16::MAX as u64 {
        return None;
    }
    Some(run(
        src,
        dst,
        &tx[..kx.len()],
        &ty[..ky.len()],
        shift,
        border,
        scratch,
    ))
}

fn run(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    kx: &[u16],
    ky: &[u16],
    shift: u32,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    let (w, h) = src.size();
    same_size((w, h), dst.size())?;
    let need = separable_scratch_len(w, w, kx.len(), ky.len()).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    // As u16 the scratch is twice as long as the padded row plus the ring need.
    let scratch = as_u16(scratch);
    let (rx, ry) = (kx.len() / 2, ky.len() / 2);
    let (padded, rest) = scratch.split_at_mut(w + kx.len() - 1);
    let mut ring = Ring::new(&mut rest[..ky.len() * w], w, ky.len());
    let half = ((1u32 << shift) >> 1) as u16;
    for y in 0..h {
        for t in 0..ky.len() {
            let vy = (y + t) as isize - ry as isize;
            ring.ensure(vy, |hrow| {
                match border.map_index(vy, h) {
                    Some(sy) if w > 2 * rx => {
                        return horizontal_direct(src.row(sy), kx, border, hrow)
                    }
                    _ => {}
                }
                load_padded_row(src, vy, border, rx, padded, &|p| p as u16);
                let mut taps: [&[u16]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
                for (t, tap) in taps[..kx.len()].iter_mut().enumerate() {
                    *tap = &padded[t..t + w];
                }
                taps_row_u16(&taps[..kx.len()], kx, hrow);
            });
        }
        let mut taps: [&[u16]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
        for (t, tap) in taps[..ky.len()].iter_mut().enumerate() {
            *tap = ring.row((y + t) as isize - ry as isize);
        }
        taps_round_u8(&taps[..ky.len()], ky, half, shift, dst.row_mut(y));
    }
    Ok(())
}

/// `Σ_i c_i·taps_i[xs..xs + B]`, wrapping (exact under the module's bound).
#[inline(always)]
fn block<T: Copy + Into<u16>, const B: usize>(
    taps: &[&[T]],
    coeffs: &[u16],
    xs: usize,
) -> [u16; B] {
    let mut a = [0u16; B];
    for (t, &c) in taps.iter().zip(coeffs) {
        let p: &[T; B] = t[xs..xs + B].try_into().unwrap();
        for (a, &p) in a.iter_mut().zip(p) {
            *a = a.wrapping_add(c.wrapping_mul(p.into()));
        }
    }
    a
}

/// Runs `emit(xs, sums)` over blocks covering `0..w` (the last one overlapping), then the
/// pixels of a row narrower than a block one by one. The usual tap counts get a loop unrolled
/// at compile time.
#[inline(always)]
fn blocks<T: Copy + Into<u16>>(
    taps: &[&[T]],
    coeffs: &[u16],
    w: usize,
    emit: impl FnMut(usize, &[u16]),
) {
    assert!(taps.len() == coeffs.len() && taps.iter().all(|t| t.len() >= w));
    let mut cut: [&[T]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
    // Every tap exactly `w` long, so that one bound check covers all of a block's loads.
    for (c, t) in cut.iter_mut().zip(taps) {
        *c = &t[..w];
    }
    let taps = &cut[..taps.len()];
    match taps.len() {
        3 => blocks_k::<T, 3>(
            taps.try_into().unwrap(),
            coeffs.try_into().unwrap(),
            w,
            emit,
        ),
        5 => blocks_k::<T, 5>(
            taps.try_into().unwrap(),
            coeffs.try_into().unwrap(),
            w,
            emit,
        ),
        _ => blocks_dyn(taps, coeffs, w, emit),
    }
}

#[inline(always)]
fn blocks_k<T: Copy + Into<u16>, const K: usize>(
    taps: &[&[T]; K],
    coeffs: &[u16; K],
    w: usize,
    emit: impl FnMut(usize, &[u16]),
) {
    blocks_dyn(taps, coeffs, w, emit)
}

#[inline(always)]
fn blocks_dyn<T: Copy + Into<u16>>(
    taps: &[&[T]],
    coeffs: &[u16],
    w: usize,
    mut emit: impl FnMut(usize, &[u16]),
) {
    if w < BLOCK {
        for x in 0..w {
            emit(x, &block::<T, 1>(taps, coeffs, x));
        }
        return;
    }
    let mut x = 0;
    while x < w {
        let xs = x.min(w - BLOCK);
        emit(xs, &block::<T, BLOCK>(taps, coeffs, xs));
        x += BLOCK;
    }
}

crate::cpu::multiversion! {
    /// `out[x] = Σ_i coeffs[i]·taps[i][x]` in `u16`.
    fn taps_row_u16(taps: &[&[u16]], coeffs: &[u16], out: &mut [u16]) => taps_row_u16_body
}

#[inline(always)]
fn taps_row_u16_body(taps: &[&[u16]], coeffs: &[u16], out: &mut [u16]) {
    blocks(taps, coeffs, out.len(), |xs, s| {
        out[xs..xs + s.len()].copy_from_slice(s)
    });
}

crate::cpu::multiversion! {
    /// [`taps_row_u16`] on `u8` taps (widened in registers).
    fn taps_row_u8(taps: &[&[u8]], coeffs: &[u16], out: &mut [u16]) => taps_row_u8_body
}

#[inline(always)]
fn taps_row_u8_body(taps: &[&[u8]], coeffs: &[u16], out: &mut [u16]) {
    blocks(taps, coeffs, out.len(), |xs, s| {
        out[xs..xs + s.len()].copy_from_slice(s)
    });
}

/// One horizontal-pass row straight from the source row `row` (no padded copy): the interior
/// through [`taps_row_u8`] on shifted slices of it, the `r` border pixels on each side one by
/// one. Needs `row.len() > 2r`.
fn horizontal_direct(row: &[u8], kx: &[u16], border: Border<u8>, out: &mut [u16]) {
    let (w, k) = (row.len(), kx.len());
    let r = k / 2;
    let n = w - 2 * r;
    let mut taps: [&[u8]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
    for (t, tap) in taps[..k].iter_mut().enumerate() {
        *tap = &row[t..t + n];
    }
    taps_row_u8(&taps[..k], kx, &mut out[r..r + n]);
    let fill = match border {
        Border::Constant(c) => c,
        _ => 0,
    };
    for x in (0..r).chain(w - r..w) {
        let mut s = 0u16;
        for (t, &c) in kx.iter().enumerate() {
            let at = (x + t) as isize - r as isize;
            let p = border.map_index(at, w).map_or(fill, |i| row[i]);
            s = s.wrapping_add(c.wrapping_mul(p as u16));
        }
        out[x] = s;
    }
}

crate::cpu::multiversion! {
    /// `out[x] = min((Σ_i coeffs[i]·taps[i][x] + half) >> shift, 255)`.
    fn taps_round_u8(taps: &[&[u16]], coeffs: &[u16], half: u16, shift: u32, out: &mut [u8])
        => taps_round_u8_body
}

#[inline(always)]
fn taps_round_u8_body(taps: &[&[u16]], coeffs: &[u16], half: u16, shift: u32, out: &mut [u8]) {
    blocks(taps, coeffs, out.len(), |xs, s| {
        for (o, &s) in out[xs..xs + s.len()].iter_mut().zip(s) {
            *o = (s.wrapping_add(half) >> shift).min(255) as u8;
        }
    });
}
