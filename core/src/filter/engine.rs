//! The one convolution engine behind every filter, pyramid and derivative in the core.
//!
//! Both engines work row by row. Each source row an output row needs is widened into the
//! accumulator type and padded left and right according to the border mode, once, into a ring of
//! rows held in caller scratch; output rows then combine ring rows with contiguous multiply-adds
//! that LLVM vectorises. Summation order is fixed (kernel row-major, horizontal pass before
//! vertical), so results are reproducible run to run.
//!
//! The `u8` fixed-point entry points ([`conv2d_u8`], [`separable_u8`], [`separable_round_u8`])
//! drive the same rings through the explicit-SIMD row kernels of [`simd`] where the target and
//! kernel allow (16-bit coefficients, rows of at least [`simd::LANES`] pixels), and fall back to
//! the generic engines otherwise. Integer sums are exact in any order, so both give identical
//! results, and they take the same scratch.

use super::simd;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::image::{ImageView, ImageViewMut};
use crate::pixel::Pixel;
use core::ops::{Add, Mul};

/// An accumulator type: `i32` for fixed-point paths, `f32` for float paths.
pub(crate) trait Acc:
    Copy + Default + PartialEq + Add<Output = Self> + Mul<Output = Self>
{
    /// Whether a zero coefficient can be skipped without changing the result (true for
    /// integers; false for floats, where `0 · NaN` must still poison the sum).
    const SKIP_ZERO: bool;

    /// One output row: `out[x] = Σ_i coeffs[i] · taps[i][x]`, starting from zero and adding
    /// in tap order (each tap slice holds at least `out.len()` elements).
    fn taps_row(taps: &[&[Self]], coeffs: &[Self], out: &mut [Self]) {
        out.fill(Self::default());
        for (t, &c) in taps.iter().zip(coeffs) {
            if Self::SKIP_ZERO && c == Self::default() {
                continue;
            }
            for (o, &p) in out.iter_mut().zip(*t) {
                *o = *o + c * p;
            }
        }
    }
}
impl Acc for i32 {
    const SKIP_ZERO: bool = true;
}
impl Acc for f32 {
    const SKIP_ZERO: bool = false;

    fn taps_row(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) {
        super::taps_f32::taps_row_f32(taps, coeffs, out);
    }
}

/// Most taps of one output row (a dense `15 × 15` kernel).
const MAX_TAPS: usize = super::MAX_KERNEL_SIZE * super::MAX_KERNEL_SIZE;

/// Scratch elements the 2-D engine needs for a `width`-pixel row and a `k × k` kernel.
pub(crate) fn conv2d_scratch_len(width: usize, k: usize) -> Option<usize> {
    let padded = width.checked_add(k.checked_sub(1)?)?;
    k.checked_mul(padded)?.checked_add(width)
}

/// Scratch elements the separable engine needs.
pub(crate) fn separable_scratch_len(
    src_width: usize,
    out_width: usize,
    kx_len: usize,
    ky_len: usize,
) -> Option<usize> {
    let padded = src_width.checked_add(kx_len.checked_sub(1)?)?;
    let ring = ky_len.checked_mul(out_width)?;
    padded.checked_add(ring)?.checked_add(out_width)
}

/// Splits separable-engine scratch into its three parts — one padded source row
/// (`src_width + kx_len − 1`), the ring of `ky_len` horizontal results (`out_width` each) and the
/// accumulator row (`out_width`) — the layout [`separable_scratch_len`] counts.
///
/// Errors: [`Error::Overflow`] if the length overflows; [`Error::BufferTooSmall`] if `scratch`
/// is shorter.
pub(crate) fn split_separable_scratch<A>(
    scratch: &mut [A],
    src_width: usize,
    out_width: usize,
    kx_len: usize,
    ky_len: usize,
) -> Result<(&mut [A], &mut [A], &mut [A])> {
    let need =
        separable_scratch_len(src_width, out_width, kx_len, ky_len).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    let (row, rest) = scratch.split_at_mut(src_width + kx_len - 1);
    let (ring, rest) = rest.split_at_mut(ky_len * out_width);
    Ok((row, ring, &mut rest[..out_width]))
}

/// Writes source row `vy` (a virtual coordinate, possibly outside the image), widened and padded
/// by `r_left` / `r_right` pixels, into `out`.
pub(crate) fn load_padded_row<S: Pixel, A: Copy + Default>(
    src: &ImageView<'_, S>,
    vy: isize,
    border: Border<S>,
    r: usize,
    out: &mut [A],
    widen: &impl Fn(S) -> A,
) {
    let w = src.width();
    let fill = match border {
        Border::Constant(c) => widen(c),
        _ => A::default(),
    };
    let Some(sy) = border.map_index(vy, src.height()) else {
        out.fill(fill);
        return;
    };
    let row = src.row(sy);
    for (o, &p) in out[r..r + w].iter_mut().zip(row) {
        *o = widen(p);
    }
    for i in 0..r {
        let left = i as isize - r as isize;
        out[i] = border.map_index(left, w).map_or(fill, |x| widen(row[x]));
        let right = (w + i) as isize;
        out[r + w + i] = border.map_index(right, w).map_or(fill, |x| widen(row[x]));
    }
}

/// As [`load_padded_row`] for `u8` pixels, but writes the padded row as a pair row
/// (see [`simd`]): element `i` holds padded pixels `i` and `i + 1` (0 past the end) as
/// two 16-bit lanes.
fn load_pair_row(
    src: &ImageView<'_, u8>,
    vy: isize,
    border: Border<u8>,
    r: usize,
    out: &mut [i32],
) {
    let w = src.width();
    let fill = match border {
        Border::Constant(c) => c,
        _ => 0,
    };
    let pair = |a: u8, b: u8| a as i32 | (b as i32) << 16;
    let Some(sy) = border.map_index(vy, src.height()) else {
        out.fill(pair(fill, fill));
        if let Some(last) = out.last_mut() {
            *last = fill as i32;
        }
        return;
    };
    let row = src.row(sy);
    let px = |i: usize| -> u8 {
        match i.checked_sub(r) {
            Some(x) if x < w => row[x],
            _ => border
                .map_index(i as isize - r as isize, w)
                .map_or(fill, |x| row[x]),
        }
    };
    simd::pair_row_u8(row, &mut out[r..]);
    let n = out.len();
    for i in (0..r).chain(r + w - 1..n) {
        out[i] = if i + 1 < n {
            pair(px(i), px(i + 1))
        } else {
            px(i) as i32
        };
    }
}

/// Tracks which virtual source row each ring slot holds.
pub(crate) struct Ring<'s, A> {
    rows: &'s mut [A],
    row_len: usize,
    held: [isize; super::MAX_KERNEL_SIZE],
    slots: usize,
}

impl<'s, A: Copy> Ring<'s, A> {
    pub(crate) fn new(rows: &'s mut [A], row_len: usize, slots: usize) -> Self {
        Self {
            rows,
            row_len,
            held: [isize::MIN; super::MAX_KERNEL_SIZE],
            slots,
        }
    }

    fn slot(&self, vy: isize) -> usize {
        vy.rem_euclid(self.slots as isize) as usize
    }

    /// Makes sure virtual row `vy` is in the ring, computing it with `make` if not.
    pub(crate) fn ensure(&mut self, vy: isize, make: impl FnOnce(&mut [A])) {
        let s = self.slot(vy);
        if self.held[s] != vy {
            make(&mut self.rows[s * self.row_len..(s + 1) * self.row_len]);
            self.held[s] = vy;
        }
    }

    pub(crate) fn row(&self, vy: isize) -> &[A] {
        let s = self.slot(vy);
        &self.rows[s * self.row_len..(s + 1) * self.row_len]
    }
}

/// Dense `k × k` convolution (correlation: the kernel is not flipped) of `src` into `dst`
/// (same size). `coeffs` is row-major. `finish` turns an accumulated sum into an output pixel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv2d<S: Pixel, A: Acc, D: Pixel>(
    src: &ImageView<'_, S>,
    dst: &mut ImageViewMut<'_, D>,
    k: usize,
    coeffs: &[A],
    border: Border<S>,
    scratch: &mut [A],
    widen: impl Fn(S) -> A,
    finish: impl Fn(A) -> D,
) -> Result<()> {
    debug_assert!(coeffs.len() == k * k);
    conv2d_rows(src, dst, k, border, scratch, widen, |taps, acc, out| {
        A::taps_row(taps, coeffs, acc);
        for (o, &a) in out.iter_mut().zip(acc.iter()) {
            *o = finish(a);
        }
    })
}

/// The driver of [`conv2d`]: keeps the ring of padded rows and calls `row(taps, acc, out)` for
/// each output row, with the `k·k` tap slices (kernel row-major, each `width` long), a row of
/// scratch and the output row.
fn conv2d_rows<S: Pixel, A: Acc, D: Pixel>(
    src: &ImageView<'_, S>,
    dst: &mut ImageViewMut<'_, D>,
    k: usize,
    border: Border<S>,
    scratch: &mut [A],
    widen: impl Fn(S) -> A,
    mut row: impl FnMut(&[&[A]], &mut [A], &mut [D]),
) -> Result<()> {
    crate::image::same_size(src.size(), dst.size())?;
    debug_assert!(k % 2 == 1 && k <= super::MAX_KERNEL_SIZE);
    let need = conv2d_scratch_len(src.width(), k).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    let (w, h, r) = (src.width(), src.height(), k / 2);
    let row_len = w + k - 1;
    let (ring_buf, rest) = scratch.split_at_mut(k * row_len);
    let acc = &mut rest[..w];
    let mut ring = Ring::new(ring_buf, row_len, k);
    for y in 0..h {
        for t in 0..k {
            let vy = (y + t) as isize - r as isize;
            ring.ensure(vy, |out| load_padded_row(src, vy, border, r, out, &widen));
        }
        let mut taps: [&[A]; MAX_TAPS] = [&[]; MAX_TAPS];
        for t in 0..k {
            let row = ring.row((y + t) as isize - r as isize);
            for kx in 0..k {
                taps[t * k + kx] = &row[kx..kx + w];
            }
        }
        row(&taps[..k * k], acc, dst.row_mut(y));
    }
    Ok(())
}

/// Dense `k × k` fixed-point convolution of a `u8` image: [`conv2d`] with `round_shift_sat_u8`,
/// through the SIMD row kernel where this build has one, the image is at least
/// [`simd::LANES`] wide and every coefficient fits `i16`. Same errors, same results, same
/// scratch (the ring holds pair rows, see [`simd`], of the same length).
pub(crate) fn conv2d_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    k: usize,
    coeffs: &[i32],
    shift: u32,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    let fast = match simd::DenseQ16::new(k, coeffs, shift) {
        Some(d) if src.width() >= simd::LANES => d,
        _ => {
            let finish = |a| round_shift_sat_u8(a, shift);
            return conv2d(src, dst, k, coeffs, border, scratch, |p| p as i32, finish);
        }
    };
    crate::image::same_size(src.size(), dst.size())?;
    let need = conv2d_scratch_len(src.width(), k).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    let (w, h, r) = (src.width(), src.height(), k / 2);
    let row_len = w + k - 1;
    let mut ring = Ring::new(&mut scratch[..k * row_len], row_len, k);
    for y in 0..h {
        for t in 0..k {
            let vy = (y + t) as isize - r as isize;
            ring.ensure(vy, |out| load_pair_row(src, vy, border, r, out));
        }
        let mut rows: [&[i32]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
        for (t, row) in rows[..k].iter_mut().enumerate() {
            *row = ring.row((y + t) as isize - r as isize);
        }
        fast.row(&rows[..k], dst.row_mut(y));
    }
    Ok(())
}

/// Separable fixed-point convolution of a `u8` image (no subsampling): [`separable`] with
/// `p as i32` widening, through the SIMD passes ([`simd::SepQ16`]) where this build has them,
/// the image is at least [`simd::LANES`] wide and the kernel qualifies. Same errors, same
/// results (`finish` gets the same exact sums), same scratch layout and length.
pub(crate) fn separable_u8<D: Pixel>(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, D>,
    kx: &[i32],
    ky: &[i32],
    border: Border<u8>,
    scratch: &mut [i32],
    finish: impl Fn(i32) -> D,
) -> Result<()> {
    match simd::SepQ16::new(kx, ky) {
        Some(fast) if src.width() >= simd::LANES => separable_simd(
            src,
            dst,
            kx,
            ky,
            border,
            scratch,
            |rows, acc, out| {
                fast.vertical(rows, simd::VerticalOut::Sums(acc));
                for (o, &a) in out.iter_mut().zip(acc.iter()) {
                    *o = finish(a);
                }
            },
            &fast,
        ),
        _ => separable(src, dst, kx, ky, 1, border, scratch, |p| p as i32, finish),
    }
}

/// [`separable_u8`] with `round_shift_sat_u8(·, shift)` as the finish, fused into the SIMD
/// vertical pass.
///
/// Powers of two common to all taps of an axis are taken out of the kernel and out of the
/// shift first (`Σ ky·Σ kx·p = 2^z·Σ ky'·Σ kx'·p`, and rounding `2^z·s` at `shift` equals
/// rounding `s` at `shift − z`), so Q10 Gaussian tables such as `[256 512 256]` become narrow
/// kernels (`[1 2 1]`) whose horizontal sums fit 16 bits.
pub(crate) fn separable_round_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    kx: &[i32],
    ky: &[i32],
    shift: u32,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    let (mut rx, mut ry) = ([0; super::MAX_KERNEL_SIZE], [0; super::MAX_KERNEL_SIZE]);
    let rshift = super::reduce_separable_taps(kx, ky, shift, &mut rx, &mut ry);
    let (rkx, rky) = (&rx[..kx.len()], &ry[..ky.len()]);
    let narrow = super::sep_u16::separable_round_u8(src, dst, rkx, rky, rshift, border, scratch);
    if let Some(done) = narrow {
        return done;
    }
    match simd::SepQ16::new(rkx, rky) {
        Some(fast) if src.width() >= simd::LANES => {
            let shift = rshift;
            separable_simd(
                src,
                dst,
                rkx,
                rky,
                border,
                scratch,
                |rows, _, out| {
                    fast.vertical(rows, simd::VerticalOut::RoundU8 { shift, out });
                },
                &fast,
            )
        }
        _ => {
            let finish = |a| round_shift_sat_u8(a, shift);
            separable(src, dst, kx, ky, 1, border, scratch, |p| p as i32, finish)
        }
    }
}

/// The SIMD separable driver: the ring of split horizontal sums, then `vertical(rows, acc,
/// out)` for each output row (`acc` is a row of scratch it may use).
#[allow(clippy::too_many_arguments)]
fn separable_simd<D: Pixel>(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, D>,
    kx: &[i32],
    ky: &[i32],
    border: Border<u8>,
    scratch: &mut [i32],
    mut vertical: impl FnMut(&[&[i32]], &mut [i32], &mut [D]),
    fast: &simd::SepQ16,
) -> Result<()> {
    let (w, h) = src.size();
    crate::image::same_size((w, h), dst.size())?;
    let (pairs, ring_buf, acc) = split_separable_scratch(scratch, w, w, kx.len(), ky.len())?;
    let (rx, ry) = (kx.len() / 2, ky.len() / 2);
    let mut ring = Ring::new(ring_buf, w, ky.len());
    for y in 0..h {
        for t in 0..ky.len() {
            let vy = (y + t) as isize - ry as isize;
            ring.ensure(vy, |hrow| {
                load_pair_row(src, vy, border, rx, pairs);
                fast.horizontal(pairs, hrow);
            });
        }
        let mut rows: [&[i32]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
        for (t, row) in rows[..ky.len()].iter_mut().enumerate() {
            *row = ring.row((y + t) as isize - ry as isize);
        }
        vertical(&rows[..ky.len()], acc, dst.row_mut(y));
    }
    Ok(())
}

/// Separable convolution: `kx` along rows, then `ky` down columns, sampling every `step`-th
/// pixel in both directions (1 for filters, 2 for a pyramid level). `dst` must be
/// `ceil(w / step) × ceil(h / step)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn separable<S: Pixel, A: Acc, D: Pixel>(
    src: &ImageView<'_, S>,
    dst: &mut ImageViewMut<'_, D>,
    kx: &[A],
    ky: &[A],
    step: usize,
    border: Border<S>,
    scratch: &mut [A],
    widen: impl Fn(S) -> A,
    finish: impl Fn(A) -> D,
) -> Result<()> {
    separable_rows(
        src,
        dst,
        kx,
        ky,
        step,
        border,
        scratch,
        widen,
        |_, _| false,
        |taps, acc, out| {
            A::taps_row(taps, ky, acc);
            for (o, &a) in out.iter_mut().zip(acc.iter()) {
                *o = finish(a);
            }
        },
    )
}

/// [`separable`] of an `f32` image without subsampling, the sums multiplied by `scale` if
/// given: the vertical row kernel writes the output row directly.
pub(crate) fn separable_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    kx: &[f32],
    ky: &[f32],
    border: Border<f32>,
    scratch: &mut [f32],
    scale: Option<f32>,
) -> Result<()> {
    let stream = super::taps_f32::streams(dst);
    let done = separable_rows(
        src,
        dst,
        kx,
        ky,
        1,
        border,
        scratch,
        |p| p,
        |row, hrow| {
            // Rows wider than the kernel read the source in place (no padded copy).
            let wide = row.len() > 2 * (kx.len() / 2);
            if wide {
                super::taps_f32::horizontal_direct(row, kx, border, hrow);
            }
            wide
        },
        |taps, _, out| super::taps_f32::taps_row_f32_to(taps, ky, scale, stream, out),
    );
    if stream {
        super::taps_f32::stream_fence();
    }
    done
}

/// The driver of [`separable`]: the horizontal pass into the ring, then `vertical(taps, acc,
/// out)` for each output row with the `ky.len()` ring rows under the vertical taps, a row of
/// scratch and the output row.
#[allow(clippy::too_many_arguments)]
fn separable_rows<S: Pixel, A: Acc, D: Pixel>(
    src: &ImageView<'_, S>,
    dst: &mut ImageViewMut<'_, D>,
    kx: &[A],
    ky: &[A],
    step: usize,
    border: Border<S>,
    scratch: &mut [A],
    widen: impl Fn(S) -> A,
    direct: impl Fn(&[S], &mut [A]) -> bool,
    mut vertical: impl FnMut(&[&[A]], &mut [A], &mut [D]),
) -> Result<()> {
    let (w, h) = src.size();
    let out = (w.div_ceil(step), h.div_ceil(step));
    crate::image::same_size(out, dst.size())?;
    debug_assert!(kx.len() % 2 == 1 && ky.len() % 2 == 1);
    debug_assert!(kx.len() <= super::MAX_KERNEL_SIZE && ky.len() <= super::MAX_KERNEL_SIZE);
    let (ow, oh) = out;
    let (padded, ring_buf, acc) = split_separable_scratch(scratch, w, ow, kx.len(), ky.len())?;
    let (rx, ry) = (kx.len() / 2, ky.len() / 2);
    let mut ring = Ring::new(ring_buf, ow, ky.len());
    for oy in 0..oh {
        for t in 0..ky.len() {
            let vy = (oy * step + t) as isize - ry as isize;
            ring.ensure(vy, |hrow| {
                if let Some(sy) = border.map_index(vy, h) {
                    if step == 1 && direct(src.row(sy), hrow) {
                        return;
                    }
                }
                load_padded_row(src, vy, border, rx, padded, &widen);
                if step == 1 {
                    let mut taps: [&[A]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
                    for (t, tap) in taps[..kx.len()].iter_mut().enumerate() {
                        *tap = &padded[t..t + ow];
                    }
                    A::taps_row(&taps[..kx.len()], kx, hrow);
                    return;
                }
                hrow.fill(A::default());
                for (t, &c) in kx.iter().enumerate() {
                    if A::SKIP_ZERO && c == A::default() {
                        continue;
                    }
                    for (hv, &p) in hrow.iter_mut().zip(padded[t..].iter().step_by(step)) {
                        *hv = *hv + c * p;
                    }
                }
            });
        }
        let mut taps: [&[A]; super::MAX_KERNEL_SIZE] = [&[]; super::MAX_KERNEL_SIZE];
        for (t, tap) in taps[..ky.len()].iter_mut().enumerate() {
            *tap = ring.row((oy * step + t) as isize - ry as isize);
        }
        vertical(&taps[..ky.len()], acc, dst.row_mut(oy));
    }
    Ok(())
}

/// Rounds a fixed-point sum with `shift` fractional bits to the nearest integer (halves
/// towards +∞: `floor((acc + 2^(shift−1)) / 2^shift)`) and saturates to `0..=255`.
#[inline]
pub(crate) fn round_shift_sat_u8(acc: i32, shift: u32) -> u8 {
    let half = (1i32 << shift) >> 1;
    ((acc + half) >> shift).clamp(0, 255) as u8
}
