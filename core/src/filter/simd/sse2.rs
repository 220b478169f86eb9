//! The x86 SSE2 row kernels (SSE2 is part of the x86-64 baseline): `pmaddwd` on pair rows and
//! split sums, 16-bit running sums for the box filter. Each function's bounds are checked by its
//! caller in the parent module, as each `SAFETY` comment says.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{Splat, VerticalOut, LANES, MAX_PAIRS};
use crate::filter::MAX_KERNEL_SIZE;

/// [`super::pair_row_u8`] for a prefix of `out` (a multiple of 16 elements); returns its
/// length.
#[inline(always)]
pub(super) fn pair_row_u8(row: &[u8], out: &mut [i32]) -> usize {
    let n = out.len().min(row.len().saturating_sub(1));
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n ≤ row.len() − 1`, so the loads of 16 bytes at `i` and `i + 1` stay
    // in `row`, and the four 4-element stores at `i` stay in `out` (`n ≤ out.len()`).
    unsafe {
        let zero = _mm_setzero_si128();
        while i + 16 <= n {
            let a = _mm_loadu_si128(row.as_ptr().add(i).cast());
            let b = _mm_loadu_si128(row.as_ptr().add(i + 1).cast());
            let (a_lo, a_hi) = (_mm_unpacklo_epi8(a, zero), _mm_unpackhi_epi8(a, zero));
            let (b_lo, b_hi) = (_mm_unpacklo_epi8(b, zero), _mm_unpackhi_epi8(b, zero));
            let o = out.as_mut_ptr().add(i);
            _mm_storeu_si128(o.cast(), _mm_unpacklo_epi16(a_lo, b_lo));
            _mm_storeu_si128(o.add(4).cast(), _mm_unpackhi_epi16(a_lo, b_lo));
            _mm_storeu_si128(o.add(8).cast(), _mm_unpacklo_epi16(a_hi, b_hi));
            _mm_storeu_si128(o.add(12).cast(), _mm_unpackhi_epi16(a_hi, b_hi));
            i += 16;
        }
    }
    i
}

/// [`super::box_update`] on SSE2: 16 pixels at a time, then 8; returns how many were done.
#[inline(always)]
pub(super) fn box_update(sums: &mut [u16], enter: &[u8], leave: &[u8]) -> usize {
    let n = sums.len().min(enter.len()).min(leave.len());
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n` (then `i + 8 ≤ n`), the length of all three slices: 16- (8-) byte
    // loads from `enter` and `leave`, two (one) 16-byte loads and stores at `sums[i..]`.
    unsafe {
        let zero = _mm_setzero_si128();
        while i + 16 <= n {
            let e = _mm_loadu_si128(enter.as_ptr().add(i).cast());
            let l = _mm_loadu_si128(leave.as_ptr().add(i).cast());
            let p = sums.as_mut_ptr().add(i);
            let (s0, s1) = (_mm_loadu_si128(p.cast()), _mm_loadu_si128(p.add(8).cast()));
            let s0 = _mm_add_epi16(s0, _mm_unpacklo_epi8(e, zero));
            let s1 = _mm_add_epi16(s1, _mm_unpackhi_epi8(e, zero));
            _mm_storeu_si128(p.cast(), _mm_sub_epi16(s0, _mm_unpacklo_epi8(l, zero)));
            _mm_storeu_si128(
                p.add(8).cast(),
                _mm_sub_epi16(s1, _mm_unpackhi_epi8(l, zero)),
            );
            i += 16;
        }
        if i + 8 <= n {
            let e = _mm_unpacklo_epi8(_mm_loadl_epi64(enter.as_ptr().add(i).cast()), zero);
            let l = _mm_unpacklo_epi8(_mm_loadl_epi64(leave.as_ptr().add(i).cast()), zero);
            let p = sums.as_mut_ptr().add(i);
            let s = _mm_loadu_si128(p.cast());
            _mm_storeu_si128(p.cast(), _mm_sub_epi16(_mm_add_epi16(s, e), l));
            i += 8;
        }
    }
    i
}

/// [`super::box_row`] on SSE2 for a `K`-tap window (`sums.len() ≥ out.len() + K − 1`,
/// `out.len() ≥ 8`). `(s + half)·recip >> 32` for `s + half < 2^16` is computed exactly in
/// 16-bit lanes (not by [`super::BOX_DIV`]'s `pmulhuw` and shift as with AVX2: LLVM fuses
/// those into a 32-bit multiply, which SSE2 lacks; measured 35–40 % slower): with `recip = R_hi·2^16 + R_lo`, it is
/// `⌊(s'·R_hi + ⌊s'·R_lo / 2^16⌋) / 2^16⌋` = `hi16(s'·R_hi)` plus the carry out of
/// `lo16(s'·R_hi) + hi16(s'·R_lo)`.
#[inline(always)]
pub(super) fn box_row<const K: usize>(sums: &[u16], half: u16, recip: u32, out: &mut [u8]) {
    let w = out.len();
    assert!(w >= LANES && sums.len() >= w + K - 1);
    // SAFETY: checked above: window tap `t < K` loads 8 elements at
    // `xs + t ≤ w − 8 + K − 1`, ending inside `sums`; the store writes 8 bytes at
    // `xs ≤ w − 8` of `out`.
    unsafe {
        let half = _mm_set1_epi16(half as i16);
        let r_hi = _mm_set1_epi16((recip >> 16) as u16 as i16);
        let r_lo = _mm_set1_epi16(recip as u16 as i16);
        let sign = _mm_set1_epi16(i16::MIN);
        let mut x = 0;
        while x < w {
            let xs = x.min(w - LANES);
            let p = sums.as_ptr().add(xs);
            let mut s = _mm_loadu_si128(p.cast());
            for t in 1..K {
                s = _mm_add_epi16(s, _mm_loadu_si128(p.add(t).cast()));
            }
            let s = _mm_add_epi16(s, half);
            let p_lo = _mm_mullo_epi16(s, r_hi);
            let p_hi = _mm_mulhi_epu16(s, r_hi);
            let low = _mm_add_epi16(p_lo, _mm_mulhi_epu16(s, r_lo));
            // Carry where the 16-bit sum wrapped: low < p_lo, unsigned.
            let carry = _mm_cmpgt_epi16(_mm_xor_si128(p_lo, sign), _mm_xor_si128(low, sign));
            let q = _mm_sub_epi16(p_hi, carry);
            _mm_storel_epi64(out.as_mut_ptr().add(xs).cast(), _mm_packus_epi16(q, q));
            x += LANES;
        }
    }
}

/// Split exact sums of one row (see [`super::SepQ16`]): `out[x] = lo | hi << 16` of
/// `h = Σ_p madd(pairs[x + 2p], packed_p)`, or `h` itself if `NARROW`. `pairs` must hold
/// `out.len() + 2·(pairs − 1)` elements, `out` at least 8.
#[inline(always)]
pub(super) fn sep_horizontal<const NARROW: bool>(pairs: &[i32], packed: &[Splat], out: &mut [i32]) {
    let w = out.len();
    let n = packed.len();
    assert!(w >= LANES && n >= 1 && pairs.len() >= w + 2 * (n - 1));
    // SAFETY: checked above: pair `p < n` reads 8 elements at `xs + 2p` with `xs ≤ w − 8`, so
    // at most up to index `w + 2n − 3`; the stores write 8 elements at `xs ≤ w − 8` of `out`.
    unsafe {
        let low15 = _mm_set1_epi32(0x7FFF);
        let split = |h: __m128i| {
            if NARROW {
                return h;
            }
            let hi = _mm_slli_epi32(_mm_srai_epi32(h, 15), 16);
            _mm_or_si128(_mm_and_si128(h, low15), hi)
        };
        let base = pairs.as_ptr();
        let mut x = 0;
        while x < w {
            let xs = x.min(w - LANES);
            let mut lo = _mm_setzero_si128();
            let mut hi = _mm_setzero_si128();
            for (p, c) in packed.iter().enumerate() {
                let a = base.add(xs + 2 * p);
                let vc = _mm_load_si128(c.0.as_ptr().cast());
                lo = _mm_add_epi32(lo, _mm_madd_epi16(_mm_loadu_si128(a.cast()), vc));
                hi = _mm_add_epi32(hi, _mm_madd_epi16(_mm_loadu_si128(a.add(4).cast()), vc));
            }
            let o = out.as_mut_ptr().add(xs);
            _mm_storeu_si128(o.cast(), split(lo));
            _mm_storeu_si128(o.add(4).cast(), split(hi));
            x += LANES;
        }
    }
}

/// Exact vertical sums from split rows: `Σ_t (c_t·lo_t[x] + 2^15·c_t·hi_t[x])` (wrapping;
/// see [`super::SepQ16`]), or `Σ_t c_t·lo_t[x]` if `NARROW`, for `x < w`, handed to
/// `emit(x, sums of x..x+4, of x+4..x+8)` eight at a time (the last group overlaps the
/// previous one). Each row slice must hold at least `w ≥ 8` elements.
#[inline(always)]
fn sep_vertical_with<const NARROW: bool>(
    starts: &[&[i32]],
    split: &[[Splat; 2]],
    w: usize,
    mut emit: impl FnMut(usize, __m128i, __m128i),
) {
    assert!(w >= LANES && starts.iter().all(|s| s.len() >= w));
    let mut ptrs = [core::ptr::null::<i32>(); MAX_KERNEL_SIZE];
    for (p, s) in ptrs.iter_mut().zip(starts) {
        *p = s.as_ptr();
    }
    let ptrs = &ptrs[..starts.len()];
    // SAFETY: checked above: the loads read 8 elements of a row at `xs ≤ w − 8`. `Splat` is
    // 16-byte aligned.
    unsafe {
        let mut x = 0;
        while x < w {
            let xs = x.min(w - LANES);
            let (mut lo_a, mut lo_b) = (_mm_setzero_si128(), _mm_setzero_si128());
            let (mut hi_a, mut hi_b) = (_mm_setzero_si128(), _mm_setzero_si128());
            for (&r, [cl, ch]) in ptrs.iter().zip(split) {
                let va = _mm_loadu_si128(r.add(xs).cast());
                let vb = _mm_loadu_si128(r.add(xs + 4).cast());
                let cl = _mm_load_si128(cl.0.as_ptr().cast());
                lo_a = _mm_add_epi32(lo_a, _mm_madd_epi16(va, cl));
                lo_b = _mm_add_epi32(lo_b, _mm_madd_epi16(vb, cl));
                if !NARROW {
                    let ch = _mm_load_si128(ch.0.as_ptr().cast());
                    hi_a = _mm_add_epi32(hi_a, _mm_madd_epi16(va, ch));
                    hi_b = _mm_add_epi32(hi_b, _mm_madd_epi16(vb, ch));
                }
            }
            let a = _mm_add_epi32(lo_a, _mm_slli_epi32(hi_a, 15));
            let b = _mm_add_epi32(lo_b, _mm_slli_epi32(hi_b, 15));
            emit(xs, a, b);
            x += LANES;
        }
    }
}

/// [`sep_vertical_with`] into `out`: the sums, or rounded and saturated `u8` pixels.
#[inline(always)]
pub(super) fn sep_vertical<const NARROW: bool>(
    starts: &[&[i32]],
    split: &[[Splat; 2]],
    out: VerticalOut<'_>,
) {
    match out {
        VerticalOut::Sums(out) => {
            let o = out.as_mut_ptr();
            sep_vertical_with::<NARROW>(starts, split, out.len(), |xs, a, b| {
                // SAFETY: `xs ≤ out.len() − 8`: two 4-element stores inside `out`.
                unsafe {
                    _mm_storeu_si128(o.add(xs).cast(), a);
                    _mm_storeu_si128(o.add(xs + 4).cast(), b);
                }
            });
        }
        VerticalOut::RoundU8 { shift, out } => {
            let half = ((1i64 << shift) >> 1) as i32;
            let o = out.as_mut_ptr();
            sep_vertical_with::<NARROW>(starts, split, out.len(), |xs, a, b| {
                // SAFETY: `xs ≤ out.len() − 8`: one 8-byte store inside `out`. (The
                // constants are rebuilt here to stay in this block; LLVM hoists them.)
                unsafe {
                    let (half, count) = (_mm_set1_epi32(half), _mm_cvtsi32_si128(shift as i32));
                    let a = _mm_sra_epi32(_mm_add_epi32(a, half), count);
                    let b = _mm_sra_epi32(_mm_add_epi32(b, half), count);
                    let words = _mm_packs_epi32(a, b);
                    _mm_storel_epi64(o.add(xs).cast(), _mm_packus_epi16(words, words));
                }
            });
        }
    }
}

/// Sums `Σ_p (c_p,lo · lo16(start_p[x]) + c_p,hi · hi16(start_p[x]))` for every
/// `x < out.len()`, then rounds (`(s + 2^(shift−1)) >> shift`), saturates to `0..=255` and
/// stores. Each `starts` slice (a pair row from the pair's first tap on) must hold at least
/// `out.len() ≥ 8` elements.
#[inline(always)]
pub(super) fn dense_row(starts: &[&[i32]], packed: &[Splat], shift: u32, out: &mut [u8]) {
    let w = out.len();
    assert!(w >= LANES && starts.iter().all(|s| s.len() >= w));
    let mut ptrs = [core::ptr::null::<i32>(); MAX_PAIRS];
    for (p, s) in ptrs.iter_mut().zip(starts) {
        *p = s.as_ptr();
    }
    let ptrs = &ptrs[..starts.len()];
    // SAFETY: checked above: the loads read 8 elements of a `starts` slice at `xs ≤ w − 8`, the
    // stores write 8 bytes of `out` there. `Splat` is 16-byte aligned.
    unsafe {
        let half = _mm_set1_epi32(((1i64 << shift) >> 1) as i32);
        let count = _mm_cvtsi32_si128(shift as i32);
        let mut x = 0;
        while x < w {
            let xs = x.min(w - LANES);
            let mut lo = _mm_setzero_si128();
            let mut hi = _mm_setzero_si128();
            for (&a, c) in ptrs.iter().zip(packed) {
                let va = _mm_loadu_si128(a.add(xs).cast());
                let vb = _mm_loadu_si128(a.add(xs + 4).cast());
                let vc = _mm_load_si128(c.0.as_ptr().cast());
                lo = _mm_add_epi32(lo, _mm_madd_epi16(va, vc));
                hi = _mm_add_epi32(hi, _mm_madd_epi16(vb, vc));
            }
            lo = _mm_sra_epi32(_mm_add_epi32(lo, half), count);
            hi = _mm_sra_epi32(_mm_add_epi32(hi, half), count);
            let words = _mm_packs_epi32(lo, hi);
            let bytes = _mm_packus_epi16(words, words);
            _mm_storel_epi64(out.as_mut_ptr().add(xs).cast(), bytes);
            x += LANES;
        }
    }
}
