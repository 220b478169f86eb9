//! Both tables' row prefix sums in one pass with AVX-512 (x86-64-v4), called only after
//! [`crate::cpu::active`] reported that level (which makes the `unsafe` call of this
//! `#[target_feature]` function sound).
//!
//! One prefix serves both tables: each pixel `p` becomes the 32-bit lane `p² + p·2²⁰`, and the
//! 16-lane inclusive prefix of those lanes holds the prefix of squares in its low 20 bits (at
//! most `16·255² < 2²⁰`) and the prefix of pixels above them (at most `16·255 < 2¹²`), so no
//! field carries into the other. Split, the pixel prefix goes to the `u32` table and the squares
//! are widened to `u64` only for their table. All sums are exact integers, so both tables are
//! those of the scalar loop.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Pixels per step: one 512-bit vector of 32-bit lanes.
const STEP: usize = 16;
/// Where the pixel prefix starts in a packed lane; below it, the prefix of squares.
const SUM_SHIFT: u32 = 20;

/// `out_sum[x] = above_sum[x] + Σ_{i≤x} row[i]` (wrapping `u32`) and
/// `out_sq[x] = above_sq[x] + Σ_{i≤x} row[i]²` (wrapping `u64`) for a prefix of the row, a
/// multiple of 16 pixels; returns its length and the two running sums after it.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
pub(super) fn sum_sq_row(
    row: &[u8],
    above_sum: &[u32],
    out_sum: &mut [u32],
    above_sq: &[u64],
    out_sq: &mut [u64],
) -> (usize, u32, u64) {
    let n = row
        .len()
        .min(above_sum.len())
        .min(out_sum.len())
        .min(above_sq.len())
        .min(out_sq.len());
    let sum_weight = _mm512_set1_epi32(1 << SUM_SHIFT);
    let sq_mask32 = _mm512_set1_epi32((1 << SUM_SHIFT) - 1);
    let sq_mask64 = _mm512_set1_epi64((1 << SUM_SHIFT) - 1);
    let zero = _mm512_setzero_si512();
    let last = _mm512_set1_epi32(STEP as i32 - 1);
    // Lanes 0..8 (and 8..16) of a vector into the even 32-bit lanes, odd lanes zeroed by the
    // mask: zero extension to eight u64 in one shuffle.
    let lo_idx = _mm512_setr_epi32(0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0);
    let hi_idx = _mm512_setr_epi32(8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15, 0);
    let mut carry_sum = zero;
    let mut carry_sq = zero;
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, a 16-element load from `above_sum` and
    // store into `out_sum`, two 8-element loads from `above_sq` and stores into `out_sq`, all
    // at `i..i + 16`, inside the slices (each at least `n` long).
    unsafe {
        while i + STEP <= n {
            let p = _mm512_cvtepu8_epi32(_mm_loadu_si128(row.as_ptr().add(i).cast()));
            // p·(p + 2²⁰) = p² + p·2²⁰.
            let mut x = _mm512_mullo_epi32(p, _mm512_add_epi32(p, sum_weight));
            // Inclusive prefix: add the vector shifted up by 1, 2, 4, 8 lanes (zeros shifted in).
            x = _mm512_add_epi32(x, _mm512_alignr_epi32::<15>(x, zero));
            x = _mm512_add_epi32(x, _mm512_alignr_epi32::<14>(x, zero));
            x = _mm512_add_epi32(x, _mm512_alignr_epi32::<12>(x, zero));
            x = _mm512_add_epi32(x, _mm512_alignr_epi32::<8>(x, zero));

            let sums = _mm512_add_epi32(_mm512_srli_epi32::<SUM_SHIFT>(x), carry_sum);
            let a = above_sum.as_ptr().add(i);
            let o = out_sum.as_mut_ptr().add(i);
            _mm512_storeu_si512(
                o.cast(),
                _mm512_add_epi32(sums, _mm512_loadu_si512(a.cast())),
            );

            let sq = _mm512_and_si512(x, sq_mask32);
            let sq_lo = _mm512_maskz_permutexvar_epi32(0x5555, lo_idx, sq);
            let sq_hi = _mm512_maskz_permutexvar_epi32(0x5555, hi_idx, sq);
            let a = above_sq.as_ptr().add(i);
            let o = out_sq.as_mut_ptr().add(i);
            let lo = _mm512_add_epi64(
                _mm512_add_epi64(sq_lo, carry_sq),
                _mm512_loadu_si512(a.cast()),
            );
            let hi = _mm512_add_epi64(
                _mm512_add_epi64(sq_hi, carry_sq),
                _mm512_loadu_si512(a.add(8).cast()),
            );
            _mm512_storeu_si512(o.cast(), lo);
            _mm512_storeu_si512(o.add(8).cast(), hi);

            // The step's totals (lane 15, in every lane) carried into the next step.
            let total = _mm512_permutexvar_epi32(last, x);
            carry_sum = _mm512_add_epi32(carry_sum, _mm512_srli_epi32::<SUM_SHIFT>(total));
            carry_sq = _mm512_add_epi64(carry_sq, _mm512_and_si512(total, sq_mask64));
            i += STEP;
        }
    }
    let acc_sum = _mm_cvtsi128_si32(_mm512_castsi512_si128(carry_sum)) as u32;
    let mut acc_sq = [0u64; 2];
    // SAFETY: a 16-byte store into a 16-byte array.
    unsafe { _mm_storeu_si128(acc_sq.as_mut_ptr().cast(), _mm512_castsi512_si128(carry_sq)) };
    (i, acc_sum, acc_sq[0])
}
