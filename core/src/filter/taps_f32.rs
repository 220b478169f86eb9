//! The `f32` engines' inner loop, compiled for every [`crate::cpu`] level: one output row as
//! `out[x] = Σ_i c_i · taps_i[x]`, where each tap is a source row already shifted to its
//! offset.
//!
//! The sums of a block of pixels (eight vectors) stay in registers across all taps, instead of a pass
//! over an accumulator row in memory per tap (two loads and a store per pixel and tap). Each
//! pixel still starts from `0.0` and adds its products in tap order with separate multiplies and
//! adds (Rust never fuses them), so the result is bit-identical to the tap-by-tap loop at every
//! level; only the vector width and the memory traffic change.

use super::MAX_KERNEL_SIZE;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::image::{same_size, ImageView, ImageViewMut};

/// `out[x] = (((0 + c_0·taps_0[x]) + c_1·taps_1[x]) + …)` for `x < out.len()`; every tap
/// slice must hold at least `out.len()` elements and `coeffs` one coefficient per tap.
pub(crate) fn taps_row_f32(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) {
    taps_row_at_level(taps, coeffs, None, false, out)
}

/// [`taps_row_f32`] with each sum then multiplied by `scale` if given (`sum * scale`, as a
/// separate pass would), and with `stream` (x86-64) the blocks from the row's first 16-byte
/// boundary written with non-temporal stores, which skip reading the output's lines first:
/// for outputs far larger than the caches ([`streams`]), whose writer then calls
/// [`stream_fence`].
pub(crate) fn taps_row_f32_to(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: Option<f32>,
    stream: bool,
    out: &mut [f32],
) {
    taps_row_at_level(taps, coeffs, scale, stream, out)
}

/// Output images of at least this many bytes take non-temporal stores ([`taps_row_f32_to`]):
/// a 3840 × 2160 `f32` image (33 MB) is past this CPU's L3 (32 MiB on the Zen 5 measured).
pub(crate) const STREAM_MIN_BYTES: usize = 16 << 20;

/// Whether the rows of `dst` take non-temporal stores: x86-64, at least [`STREAM_MIN_BYTES`],
/// and every row starting on the same offset from 16 bytes (the first up to 3 pixels of each
/// are stored plainly, [`rows`]).
pub(crate) fn streams(dst: &ImageViewMut<'_, f32>) -> bool {
    let (w, h) = dst.size();
    cfg!(target_arch = "x86_64")
        && w.saturating_mul(h).saturating_mul(4) >= STREAM_MIN_BYTES
        && dst.stride().is_multiple_of(4)
}

/// Orders the non-temporal stores of [`taps_row_f32_to`] before whatever the caller does next
/// (another thread reading the image); nothing where there are none.
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline.
    #[allow(unsafe_code)]
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
}

/// `out.copy_from_slice(a)`, through non-temporal 16-byte stores when `out` starts on 16 bytes
/// (x86-64); the same values either way.
#[inline(always)]
fn store_block(a: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if (out.as_ptr() as usize).is_multiple_of(16)
        && a.len().is_multiple_of(4)
        && a.len() == out.len()
    {
        use core::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        for (o, v) in out.chunks_exact_mut(4).zip(a.chunks_exact(4)) {
            // SAFETY: SSE is part of the x86-64 baseline; `o` is 4 writable, 16-byte aligned
            // `f32`s and `v` 4 readable ones.
            #[allow(unsafe_code)]
            unsafe {
                _mm_stream_ps(o.as_mut_ptr(), _mm_loadu_ps(v.as_ptr()))
            };
        }
        return;
    }
    out.copy_from_slice(a);
}

/// A block of 32 pixels by default. Long kernels (from 16 taps) are bound by the latency of
/// their add chains, so they get eight vectors of sums per block at every level (64 pixels for
/// AVX2, 128 for AVX-512), which still fit the register file beside the loads; short kernels
/// measured slower with blocks of eight vectors (3×3 at 1080p: about 2,700 → 1,000 Mpixel/s on
/// AVX-512, while 7×7 gained 530 → 670), but on AVX-512 four vectors (64 pixels) beat two:
/// 3 × 3 3,082 → 3,351 Mpixel/s at 640×480 and 3,863 → 4,352 at 1080p, box 5 f32 3,378 →
/// 3,696 at 640×480 (best of 3 rounds, `bench/opencv_compare.py`, Zen 5).
fn taps_row_at_level(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: Option<f32>,
    stream: bool,
    out: &mut [f32],
) {
    use crate::cpu::Level;
    match crate::cpu::active() {
        Level::X86V4 if taps.len() >= 16 => rows_128(taps, coeffs, scale, stream, out),
        Level::X86V4 => rows_64(taps, coeffs, scale, stream, out),
        Level::X86V3 if taps.len() >= 16 => rows_64(taps, coeffs, scale, stream, out),
        _ => rows_32(taps, coeffs, scale, stream, out),
    }
}

crate::cpu::multiversion! {
    fn rows_32(
        taps: &[&[f32]],
        coeffs: &[f32],
        scale: Option<f32>,
        stream: bool,
        out: &mut [f32],
    ) => body_32
}
crate::cpu::multiversion! {
    fn rows_64(
        taps: &[&[f32]],
        coeffs: &[f32],
        scale: Option<f32>,
        stream: bool,
        out: &mut [f32],
    ) => body_64
}
crate::cpu::multiversion! {
    fn rows_128(
        taps: &[&[f32]],
        coeffs: &[f32],
        scale: Option<f32>,
        stream: bool,
        out: &mut [f32],
    ) => body_128
}

#[inline(always)]
fn body_32(taps: &[&[f32]], coeffs: &[f32], scale: Option<f32>, stream: bool, out: &mut [f32]) {
    body::<32>(taps, coeffs, scale, stream, out)
}
#[inline(always)]
fn body_64(taps: &[&[f32]], coeffs: &[f32], scale: Option<f32>, stream: bool, out: &mut [f32]) {
    body::<64>(taps, coeffs, scale, stream, out)
}
#[inline(always)]
fn body_128(taps: &[&[f32]], coeffs: &[f32], scale: Option<f32>, stream: bool, out: &mut [f32]) {
    body::<128>(taps, coeffs, scale, stream, out)
}

#[inline(always)]
fn body<const BLOCK: usize>(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: Option<f32>,
    stream: bool,
    out: &mut [f32],
) {
    // Streaming is a separate instantiation: a run-time choice in the block loop made LLVM keep
    // the sums in memory (3 × 3 at 640 × 480: 3,220 → 2,160 Mpixel/s).
    match (scale, stream) {
        (None, false) => taps_row_any::<false, false, BLOCK>(taps, coeffs, 1.0, out),
        (Some(s), false) => taps_row_any::<true, false, BLOCK>(taps, coeffs, s, out),
        (None, true) => taps_row_any::<false, true, BLOCK>(taps, coeffs, 1.0, out),
        (Some(s), true) => taps_row_any::<true, true, BLOCK>(taps, coeffs, s, out),
    }
}

/// The sums, times `scale` if `SCALE`.
#[inline(always)]
fn taps_row_any<const SCALE: bool, const STREAM: bool, const BLOCK: usize>(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: f32,
    out: &mut [f32],
) {
    assert!(taps.len() == coeffs.len());
    // The tap counts of the common kernels (3, 5, 7 separable; 3×3, 5×5, 7×7 dense) get a
    // loop unrolled at compile time.
    match taps.len() {
        3 => fixed::<3, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        5 => fixed::<5, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        7 => fixed::<7, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        9 => fixed::<9, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        25 => fixed::<25, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        49 => fixed::<49, SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
        _ => rows::<SCALE, STREAM, BLOCK>(taps, coeffs, scale, out),
    }
}

#[inline(always)]
fn fixed<const K: usize, const SCALE: bool, const STREAM: bool, const BLOCK: usize>(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: f32,
    out: &mut [f32],
) {
    let taps: &[&[f32]; K] = taps.try_into().unwrap();
    let coeffs: &[f32; K] = coeffs.try_into().unwrap();
    rows::<SCALE, STREAM, BLOCK>(taps, coeffs, scale, out);
}

#[inline(always)]
fn rows<const SCALE: bool, const STREAM: bool, const BLOCK: usize>(
    taps: &[&[f32]],
    coeffs: &[f32],
    scale: f32,
    out: &mut [f32],
) {
    let w = out.len();
    let mut cut: [&[f32]; MAX_KERNEL_SIZE * MAX_KERNEL_SIZE] =
        [&[]; MAX_KERNEL_SIZE * MAX_KERNEL_SIZE];
    // Every tap exactly `w` long, so that one bound check covers all of a block's loads.
    for (c, t) in cut.iter_mut().zip(taps) {
        *c = &t[..w];
    }
    let taps = &cut[..taps.len()];
    // Streaming: the first up to 3 pixels one by one, so that the blocks start on 16 bytes.
    let lead = if STREAM {
        (out.as_ptr() as usize).wrapping_neg() % 16 / 4
    } else {
        0
    };
    if STREAM && w < BLOCK + lead {
        return rows::<SCALE, false, BLOCK>(taps, coeffs, scale, out);
    }
    if w < BLOCK && BLOCK > 8 && w >= 8 {
        return rows::<SCALE, false, 8>(taps, coeffs, scale, out);
    }
    if w < BLOCK {
        for (x, o) in out.iter_mut().enumerate() {
            let mut s = 0.0f32;
            for (t, &c) in taps.iter().zip(coeffs) {
                s += c * t[x];
            }
            *o = if SCALE { s * scale } else { s };
        }
        return;
    }
    for (x, o) in out.iter_mut().enumerate().take(lead) {
        let mut s = 0.0f32;
        for (t, &c) in taps.iter().zip(coeffs) {
            s += c * t[x];
        }
        *o = if SCALE { s * scale } else { s };
    }
    let mut x = lead;
    while x < w {
        // The last block overlaps the one before; it recomputes the same values.
        let xs = x.min(w - BLOCK);
        let mut a = [0.0f32; BLOCK];
        for (t, &c) in taps.iter().zip(coeffs) {
            let p: &[f32; BLOCK] = t[xs..xs + BLOCK].try_into().unwrap();
            for (a, &p) in a.iter_mut().zip(p) {
                *a += c * p;
            }
        }
        if SCALE {
            for a in &mut a {
                *a *= scale;
            }
        }
        if STREAM {
            store_block(&a, &mut out[xs..xs + BLOCK]);
        } else {
            out[xs..xs + BLOCK].copy_from_slice(&a);
        }
        x += BLOCK;
    }
}

/// The padded-row value at padded index `i` of source row `row` (`r` pixels of border on each
/// side), as `engine::load_padded_row` writes it.
#[inline]
fn padded_at(row: &[f32], i: usize, r: usize, border: Border<f32>, fill: f32) -> f32 {
    border
        .map_index(i as isize - r as isize, row.len())
        .map_or(fill, |x| row[x])
}

/// The constant of a constant border, else 0 (unused).
fn fill_of(border: Border<f32>) -> f32 {
    match border {
        Border::Constant(c) => c,
        _ => 0.0,
    }
}

/// One horizontal-pass row (`out[x] = Σ_t kx[t]·padded[x + t]`) straight from the source row:
/// the interior through [`taps_row_f32`] on shifted slices of `row`, the `r` border pixels on
/// each side one by one, in the same tap order. Needs `row.len() > 2r`.
pub(crate) fn horizontal_direct(row: &[f32], kx: &[f32], border: Border<f32>, out: &mut [f32]) {
    let (w, k) = (row.len(), kx.len());
    let r = k / 2;
    debug_assert!(w > 2 * r && out.len() == w);
    let n = w - 2 * r;
    let mut taps: [&[f32]; MAX_KERNEL_SIZE] = [&[]; MAX_KERNEL_SIZE];
    for (t, tap) in taps[..k].iter_mut().enumerate() {
        *tap = &row[t..t + n];
    }
    taps_row_f32(&taps[..k], kx, &mut out[r..r + n]);
    let fill = fill_of(border);
    if r == 1 {
        // Two outputs of 3 taps: the lanes below cost more than they save (Gaussian 3 `f32`).
        for x in [0, w - 1] {
            let mut s = 0.0f32;
            for (t, &c) in kx.iter().enumerate() {
                s += c * padded_at(row, x + t, r, border, fill);
            }
            out[x] = s;
        }
        return;
    }
    // The `r` border outputs of each side as 8 lanes of padded columns (lanes past `r` are
    // never stored), both sides together, each lane adding its products in tap order: two
    // independent add chains instead of `2r` scalar ones, each tap's column mapped once.
    let mut strip = [[0.0f32; 24]; 2];
    for (half, first) in strip.iter_mut().zip([0, w - r]) {
        for (j, v) in half[..3 * r].iter_mut().enumerate() {
            *v = padded_at(row, first + j, r, border, fill);
        }
    }
    let mut sums = [[0.0f32; 8]; 2];
    border_lanes(&mut sums, &strip, kx);
    out[..r].copy_from_slice(&sums[0][..r]);
    out[w - r..].copy_from_slice(&sums[1][..r]);
}

/// Adds one kernel row's products to the border outputs of both sides, 8 lanes a side:
/// `sums[side][i] += c_t · strip[side][i + t]` for each tap `t` of `coeffs`, in tap order (a
/// multiply, then an add). Lane `i` is the side's output `i`, `strip[side]` the side's padded
/// columns from the first that output 0 reads.
#[inline(always)]
fn border_lanes(sums: &mut [[f32; 8]; 2], strip: &[[f32; 24]; 2], coeffs: &[f32]) {
    for (t, &c) in coeffs.iter().enumerate() {
        for (s, half) in sums.iter_mut().zip(strip) {
            let v: &[f32; 8] = half[t..t + 8].try_into().unwrap();
            for (a, &x) in s.iter_mut().zip(v) {
                *a += c * x;
            }
        }
    }
}

/// Dense `k × k` convolution of an `f32` image, as `engine::conv2d` with the identity finish
/// computes it, but reading the source rows in place: the interior of each output row through
/// [`taps_row_f32`] on shifted slices of the (border-mapped) source rows, the `r` border columns
/// pixel by pixel in the same tap order. No padded copies; `scratch` holds one row of the
/// constant for rows outside the image. Same errors and scratch as `engine::conv2d`; rows of at
/// most `2r` pixels take `engine::conv2d`.
pub(crate) fn conv2d_direct(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    k: usize,
    coeffs: &[f32],
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    let (w, h, r) = (src.width(), src.height(), k / 2);
    if w <= 2 * r {
        return super::engine::conv2d(src, dst, k, coeffs, border, scratch, |p| p, |a| a);
    }
    same_size(src.size(), dst.size())?;
    let need = super::engine::conv2d_scratch_len(w, k).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    let fill = fill_of(border);
    let fill_row = &mut scratch[..w];
    fill_row.fill(fill);
    let fill_row = &*fill_row;
    let n = w - 2 * r;
    // The source columns (`None`: the constant) under the `r` border outputs on each side:
    // padded columns `0 .. 3r` on the left, `w − r .. w + 2r` on the right, mapped once here
    // rather than per row and tap (7 × 7 at 640 × 480: 663 → 700 Mpixel/s).
    let mut edge_cols = [[None; 3 * (MAX_KERNEL_SIZE / 2)]; 2];
    for (side, cols) in edge_cols.iter_mut().enumerate() {
        let first = if side == 0 { 0 } else { w - r };
        for (j, col) in cols[..3 * r].iter_mut().enumerate() {
            *col = border.map_index((first + j) as isize - r as isize, w);
        }
    }
    // Each side's padded columns under its `r` border outputs, per kernel row (8 + 14 wide for
    // the 8 lanes below; the columns past `3r` stay 0).
    let mut strip = [[[0.0f32; 24]; 2]; MAX_KERNEL_SIZE];
    // Filled once: each row below overwrites its `k²` entries.
    let mut taps: [&[f32]; MAX_KERNEL_SIZE * MAX_KERNEL_SIZE] =
        [&[]; MAX_KERNEL_SIZE * MAX_KERNEL_SIZE];
    for y in 0..h {
        let mut rows: [&[f32]; MAX_KERNEL_SIZE] = [&[]; MAX_KERNEL_SIZE];
        for (t, row) in rows[..k].iter_mut().enumerate() {
            let vy = (y + t) as isize - r as isize;
            *row = border.map_index(vy, h).map_or(fill_row, |sy| src.row(sy));
        }
        let rows = &rows[..k];
        for (t, row) in rows.iter().enumerate() {
            for kx in 0..k {
                taps[t * k + kx] = &row[kx..kx + n];
            }
        }
        let out = dst.row_mut(y);
        // Plain stores: streamed, 3 × 3 at 3840 × 2160 ran at 1,520 Mpixel/s against 2,440.
        taps_row_f32(&taps[..k * k], coeffs, &mut out[r..r + n]);
        // The `r` border outputs of each side as 8 lanes (those past `r` are never stored),
        // both sides together: two independent 8-wide add chains rather than `2r` scalar ones
        // one after the other, each lane adding its products in tap order.
        for (st, row) in strip.iter_mut().zip(rows) {
            for (side, half) in st.iter_mut().enumerate() {
                for (v, col) in half.iter_mut().zip(&edge_cols[side][..3 * r]) {
                    *v = col.map_or(fill, |x| row[x]);
                }
            }
        }
        let mut sums = [[0.0f32; 8]; 2];
        for (st, cs) in strip.iter().zip(coeffs.chunks_exact(k)) {
            border_lanes(&mut sums, st, cs);
        }
        out[..r].copy_from_slice(&sums[0][..r]);
        out[w - r..].copy_from_slice(&sums[1][..r]);
    }
    Ok(())
}
