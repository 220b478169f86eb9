//! The x86 AVX2 row kernels: those of `sse2.rs` on 256-bit vectors, [`WIDE`] pixels per step.
//! Same lanes, same operations in the same order per pixel, so the same exact results; the
//! parent module calls them only after [`crate::cpu::active`] reported x86-64-v3 or better
//! (which is what makes the `unsafe` calls of these `#[target_feature]` functions sound) and
//! checks the bounds each `SAFETY` comment names.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::Splat;

/// Output pixels per vector step; rows narrower than this take the SSE2 kernels.
pub(super) const WIDE: usize = 16;

/// 16 `i32` (pixels 0–7 in `lo`, 8–15 in `hi`) saturated to `i16`, then to `u8`, in order.
#[target_feature(enable = "avx2")]
#[inline]
fn pack16(lo: __m256i, hi: __m256i) -> __m128i {
    // packs works per 128-bit lane: [lo0-3 hi0-3 | lo4-7 hi4-7]; restore the order.
    let words = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0b11_01_10_00);
    _mm_packus_epi16(
        _mm256_castsi256_si128(words),
        _mm256_extracti128_si256(words, 1),
    )
}

/// [`super::pair_row_u8`] for a prefix of `out` (a multiple of 16 elements); returns its
/// length.
#[target_feature(enable = "avx2")]
pub(super) fn pair_row_u8(row: &[u8], out: &mut [i32]) -> usize {
    let n = out.len().min(row.len().saturating_sub(1));
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n ≤ row.len() − 1`, so the 16-byte loads at `i` and `i + 1` stay in
    // `row`, and the two 8-element stores at `i` stay in `out` (`n ≤ out.len()`).
    unsafe {
        while i + 16 <= n {
            let a = _mm256_cvtepu8_epi16(_mm_loadu_si128(row.as_ptr().add(i).cast()));
            let b = _mm256_cvtepu8_epi16(_mm_loadu_si128(row.as_ptr().add(i + 1).cast()));
            // Per lane: pairs 0-3 | 8-11, and 4-7 | 12-15.
            let (lo, hi) = (_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b));
            let o = out.as_mut_ptr().add(i);
            _mm256_storeu_si256(o.cast(), _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_storeu_si256(o.add(8).cast(), _mm256_permute2x128_si256(lo, hi, 0x31));
            i += 16;
        }
    }
    i
}

/// [`super::box_update`], 16 pixels at a time; returns how many were done.
#[target_feature(enable = "avx2")]
pub(super) fn box_update(sums: &mut [u16], enter: &[u8], leave: &[u8]) -> usize {
    let n = sums.len().min(enter.len()).min(leave.len());
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`, the length of all three slices: 16-byte loads from `enter` and
    // `leave`, a 32-byte load and store at `sums[i..]`.
    unsafe {
        while i + 16 <= n {
            let e = _mm256_cvtepu8_epi16(_mm_loadu_si128(enter.as_ptr().add(i).cast()));
            let l = _mm256_cvtepu8_epi16(_mm_loadu_si128(leave.as_ptr().add(i).cast()));
            let p = sums.as_mut_ptr().add(i);
            let s = _mm256_add_epi16(_mm256_loadu_si256(p.cast()), e);
            _mm256_storeu_si256(p.cast(), _mm256_sub_epi16(s, l));
            i += 16;
        }
    }
    i
}

/// [`super::box_row`] for a `K`-tap window (`sums.len() ≥ out.len() + K − 1`,
/// `out.len() ≥ 16`), the division as in `sse2.rs`.
#[target_feature(enable = "avx2")]
pub(super) fn box_row<const K: usize>(sums: &[u16], half: u16, mul: u16, sh: u32, out: &mut [u8]) {
    let w = out.len();
    assert!(w >= WIDE && sums.len() >= w + K - 1);
    // SAFETY: checked above: window tap `t < K` loads 16 elements at
    // `xs + t ≤ w − 16 + K − 1`, ending inside `sums`; the store writes 16 bytes at
    // `xs ≤ w − 16` of `out`.
    unsafe {
        let half = _mm256_set1_epi16(half as i16);
        let mul = _mm256_set1_epi16(mul as i16);
        let count = _mm_cvtsi32_si128(sh as i32);
        let mut x = 0;
        while x < w {
            let xs = x.min(w - WIDE);
            let p = sums.as_ptr().add(xs);
            let mut s = _mm256_loadu_si256(p.cast());
            for t in 1..K {
                s = _mm256_add_epi16(s, _mm256_loadu_si256(p.add(t).cast()));
            }
            let s = _mm256_add_epi16(s, half);
            let q = _mm256_srl_epi16(_mm256_mulhi_epu16(s, mul), count);
            let bytes = _mm_packus_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            _mm_storeu_si128(out.as_mut_ptr().add(xs).cast(), bytes);
            x += WIDE;
        }
    }
}

/// [`super::SepQ16::horizontal`] for `N` tap pairs: as `sse2.rs`'s `sep_horizontal`. `pairs`
/// must hold `out.len() + 2·(N − 1)` elements, `out` at least 16.
#[target_feature(enable = "avx2")]
pub(super) fn sep_horizontal<const NARROW: bool, const N: usize>(
    pairs: &[i32],
    packed: &[Splat; N],
    out: &mut [i32],
) {
    let w = out.len();
    assert!(w >= WIDE && N >= 1 && pairs.len() >= w + 2 * (N - 1));
    // SAFETY: checked above: pair `p < N` reads 16 elements at `xs + 2p` with `xs ≤ w − 16`,
    // so at most up to index `w + 2N − 3`; the stores write 16 elements at `xs` of `out`.
    unsafe {
        let low15 = _mm256_set1_epi32(0x7FFF);
        let base = pairs.as_ptr();
        let mut x = 0;
        while x < w {
            let xs = x.min(w - WIDE);
            let mut lo = _mm256_setzero_si256();
            let mut hi = _mm256_setzero_si256();
            for (p, c) in packed.iter().enumerate() {
                let a = base.add(xs + 2 * p);
                let vc = _mm256_set1_epi32(c.0[0]);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_loadu_si256(a.cast()), vc));
                hi = _mm256_add_epi32(
                    hi,
                    _mm256_madd_epi16(_mm256_loadu_si256(a.add(8).cast()), vc),
                );
            }
            if !NARROW {
                let split = |h: __m256i| {
                    let top = _mm256_slli_epi32(_mm256_srai_epi32(h, 15), 16);
                    _mm256_or_si256(_mm256_and_si256(h, low15), top)
                };
                lo = split(lo);
                hi = split(hi);
            }
            let o = out.as_mut_ptr().add(xs);
            _mm256_storeu_si256(o.cast(), lo);
            _mm256_storeu_si256(o.add(8).cast(), hi);
            x += WIDE;
        }
    }
}

/// The exact vertical sums of pixels `xs..xs + 16` from split rows (see `sse2.rs`'s
/// `sep_vertical_with`). The caller checks that every row holds `xs + 16` elements.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sep_vertical_at<const NARROW: bool, const N: usize>(
    ptrs: &[*const i32; N],
    split: &[[Splat; 2]; N],
    xs: usize,
) -> (__m256i, __m256i) {
    let (mut lo_a, mut lo_b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let (mut hi_a, mut hi_b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for (&r, [cl, ch]) in ptrs.iter().zip(split) {
        // SAFETY: the caller's bound: 16 elements at `xs` of each row.
        let (va, vb) = unsafe {
            (
                _mm256_loadu_si256(r.add(xs).cast()),
                _mm256_loadu_si256(r.add(xs + 8).cast()),
            )
        };
        let cl = _mm256_set1_epi32(cl.0[0]);
        lo_a = _mm256_add_epi32(lo_a, _mm256_madd_epi16(va, cl));
        lo_b = _mm256_add_epi32(lo_b, _mm256_madd_epi16(vb, cl));
        if !NARROW {
            let ch = _mm256_set1_epi32(ch.0[0]);
            hi_a = _mm256_add_epi32(hi_a, _mm256_madd_epi16(va, ch));
            hi_b = _mm256_add_epi32(hi_b, _mm256_madd_epi16(vb, ch));
        }
    }
    (
        _mm256_add_epi32(lo_a, _mm256_slli_epi32(hi_a, 15)),
        _mm256_add_epi32(lo_b, _mm256_slli_epi32(hi_b, 15)),
    )
}

fn row_ptrs<const N: usize>(starts: &[&[i32]; N], w: usize) -> [*const i32; N] {
    assert!(w >= WIDE && starts.iter().all(|s| s.len() >= w));
    core::array::from_fn(|t| starts[t].as_ptr())
}

/// [`super::SepQ16::vertical`] into exact sums (`out.len() ≥ 16`; each row at least as long).
#[target_feature(enable = "avx2")]
pub(super) fn sep_vertical_sums<const NARROW: bool, const N: usize>(
    starts: &[&[i32]; N],
    split: &[[Splat; 2]; N],
    out: &mut [i32],
) {
    let w = out.len();
    let ptrs = row_ptrs(starts, w);
    let mut x = 0;
    while x < w {
        let xs = x.min(w - WIDE);
        // SAFETY: `row_ptrs` checked that every row holds `w ≥ xs + 16` elements; the stores
        // write 16 elements at `xs ≤ w − 16` of `out`.
        unsafe {
            let (a, b) = sep_vertical_at::<NARROW, N>(&ptrs, split, xs);
            _mm256_storeu_si256(out.as_mut_ptr().add(xs).cast(), a);
            _mm256_storeu_si256(out.as_mut_ptr().add(xs + 8).cast(), b);
        }
        x += WIDE;
    }
}

/// [`super::SepQ16::vertical`] into rounded, saturated pixels (as `round_shift_sat_u8`).
#[target_feature(enable = "avx2")]
pub(super) fn sep_vertical_round<const NARROW: bool, const N: usize>(
    starts: &[&[i32]; N],
    split: &[[Splat; 2]; N],
    shift: u32,
    out: &mut [u8],
) {
    let w = out.len();
    let ptrs = row_ptrs(starts, w);
    let half = _mm256_set1_epi32(((1i64 << shift) >> 1) as i32);
    let count = _mm_cvtsi32_si128(shift as i32);
    let mut x = 0;
    while x < w {
        let xs = x.min(w - WIDE);
        // SAFETY: as in `sep_vertical_sums`; one 16-byte store at `xs ≤ w − 16` of `out`.
        unsafe {
            let (a, b) = sep_vertical_at::<NARROW, N>(&ptrs, split, xs);
            let a = _mm256_sra_epi32(_mm256_add_epi32(a, half), count);
            let b = _mm256_sra_epi32(_mm256_add_epi32(b, half), count);
            _mm_storeu_si128(out.as_mut_ptr().add(xs).cast(), pack16(a, b));
        }
        x += WIDE;
    }
}

/// [`super::DenseQ16::row`] for `P` tap pairs, as `sse2.rs`'s `dense_row`: each `starts`
/// slice must hold at least `out.len() ≥ 16` elements.
#[target_feature(enable = "avx2")]
pub(super) fn dense_row<const P: usize>(
    starts: &[&[i32]],
    packed: &[Splat],
    shift: u32,
    out: &mut [u8],
) {
    let w = out.len();
    assert!(w >= WIDE && starts.len() == P && packed.len() == P);
    assert!(starts.iter().all(|s| s.len() >= w));
    let ptrs: [*const i32; P] = core::array::from_fn(|p| starts[p].as_ptr());
    let packed: &[Splat; P] = packed.try_into().unwrap();
    let half = _mm256_set1_epi32(((1i64 << shift) >> 1) as i32);
    let count = _mm_cvtsi32_si128(shift as i32);
    let mut x = 0;
    while x < w {
        let xs = x.min(w - WIDE);
        let mut lo = _mm256_setzero_si256();
        let mut hi = _mm256_setzero_si256();
        for (&a, c) in ptrs.iter().zip(packed) {
            let vc = _mm256_set1_epi32(c.0[0]);
            // SAFETY: checked above: 16 elements at `xs ≤ w − 16` of a `starts` slice.
            let (va, vb) = unsafe {
                (
                    _mm256_loadu_si256(a.add(xs).cast()),
                    _mm256_loadu_si256(a.add(xs + 8).cast()),
                )
            };
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(va, vc));
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(vb, vc));
        }
        lo = _mm256_sra_epi32(_mm256_add_epi32(lo, half), count);
        hi = _mm256_sra_epi32(_mm256_add_epi32(hi, half), count);
        // SAFETY: 16 bytes at `xs ≤ w − 16` of `out`.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().add(xs).cast(), pack16(lo, hi)) };
        x += WIDE;
    }
}
