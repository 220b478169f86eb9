//! The x86 AVX-512 (BW) box-filter kernels: those of `avx2.rs` on 512-bit vectors, [`WIDE`]
//! pixels per step. Same lanes, same operations in the same order per pixel, so the same exact
//! results; the parent module calls them only after [`crate::cpu::active`] reported x86-64-v4
//! (which is what makes the `unsafe` calls of these `#[target_feature]` functions sound) and
//! checks the bounds each `SAFETY` comment names.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Output pixels per vector step; rows narrower than this take the AVX2 kernels.
pub(super) const WIDE: usize = 32;

/// [`super::box_update`], 32 pixels at a time; returns how many were done.
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) fn box_update(sums: &mut [u16], enter: &[u8], leave: &[u8]) -> usize {
    let n = sums.len().min(enter.len()).min(leave.len());
    let mut i = 0;
    // SAFETY: `i + 32 ≤ n`, the length of all three slices: 32-byte loads from `enter` and
    // `leave`, a 64-byte load and store at `sums[i..]`.
    unsafe {
        while i + WIDE <= n {
            let e = _mm512_cvtepu8_epi16(_mm256_loadu_si256(enter.as_ptr().add(i).cast()));
            let l = _mm512_cvtepu8_epi16(_mm256_loadu_si256(leave.as_ptr().add(i).cast()));
            let p = sums.as_mut_ptr().add(i);
            let s = _mm512_add_epi16(_mm512_loadu_si512(p.cast()), e);
            _mm512_storeu_si512(p.cast(), _mm512_sub_epi16(s, l));
            i += WIDE;
        }
    }
    i
}

/// [`super::box_row`] for a `K`-tap window (`sums.len() ≥ out.len() + K − 1`,
/// `out.len() ≥ 32`), the division as in `avx2.rs` (`vpmulhuw` by `mul`, shift by `sh`); the
/// quotients (at most 255) narrowed to bytes with `vpmovwb`.
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) fn box_row<const K: usize>(sums: &[u16], half: u16, mul: u16, sh: u32, out: &mut [u8]) {
    let w = out.len();
    assert!(w >= WIDE && sums.len() >= w + K - 1);
    // SAFETY: checked above: window tap `t < K` loads 32 elements at
    // `xs + t ≤ w − 32 + K − 1`, ending inside `sums`; the store writes 32 bytes at
    // `xs ≤ w − 32` of `out`.
    unsafe {
        let half = _mm512_set1_epi16(half as i16);
        let mul = _mm512_set1_epi16(mul as i16);
        let count = _mm_cvtsi32_si128(sh as i32);
        let mut x = 0;
        while x < w {
            let xs = x.min(w - WIDE);
            let p = sums.as_ptr().add(xs);
            let mut s = _mm512_loadu_si512(p.cast());
            for t in 1..K {
                s = _mm512_add_epi16(s, _mm512_loadu_si512(p.add(t).cast()));
            }
            let s = _mm512_add_epi16(s, half);
            let q = _mm512_srl_epi16(_mm512_mulhi_epu16(s, mul), count);
            _mm256_storeu_si256(out.as_mut_ptr().add(xs).cast(), _mm512_cvtepi16_epi8(q));
            x += WIDE;
        }
    }
}
