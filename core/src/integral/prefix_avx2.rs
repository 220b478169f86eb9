//! The squared table's row prefix sums with AVX2 (see `prefix_sse2.rs` for the method):
//! sixteen pixels per step in 256-bit vectors, called only after [`crate::cpu::active`]
//! reported x86-64-v3 or better (which makes the `unsafe` call of this `#[target_feature]`
//! function sound). Exact integers, so the table is that of the scalar loop.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// The inclusive prefix sums of eight `u32` lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn prefix8_u32(x: __m256i) -> __m256i {
    let x = _mm256_add_epi32(x, _mm256_slli_si256::<4>(x));
    let x = _mm256_add_epi32(x, _mm256_slli_si256::<8>(x));
    // The low half's total (its last lane, broadcast) added to the high half only.
    let last = _mm256_shuffle_epi32::<0xFF>(x);
    _mm256_add_epi32(x, _mm256_permute2x128_si256::<0x08>(last, last))
}

/// As `prefix_sse2::sq_row`: `out[x] = above[x] + Σ_{i≤x} row[i]²` (wrapping `u64`)
/// for a prefix of the row, a multiple of 16 pixels; returns its length and the running sum
/// after it.
#[target_feature(enable = "avx2")]
pub(super) fn sq_row(row: &[u8], above: &[u64], out: &mut [u64]) -> (usize, u64) {
    let n = row.len().min(above.len()).min(out.len());
    let mut i = 0;
    let seven = _mm256_set1_epi32(7);
    let mut carry = _mm256_setzero_si256();
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, four 4-element loads from `above` and
    // stores into `out` at `i..i + 16`, all inside the slices (each at least `n` long).
    unsafe {
        while i + 16 <= n {
            let v = _mm256_cvtepu8_epi16(_mm_loadu_si128(row.as_ptr().add(i).cast()));
            // Squares of `u8` fit `u16`; their prefix over 16 pixels fits `u32`.
            let sq = _mm256_mullo_epi16(v, v);
            let a = prefix8_u32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(sq)));
            let b = prefix8_u32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(sq)));
            let b = _mm256_add_epi32(b, _mm256_permutevar8x32_epi32(a, seven));
            let (p, o) = (above.as_ptr().add(i), out.as_mut_ptr().add(i));
            for (j, q) in [a, b].into_iter().enumerate() {
                let halves = [_mm256_castsi256_si128(q), _mm256_extracti128_si256::<1>(q)];
                for (h, half) in halves.into_iter().enumerate() {
                    let at = 8 * j + 4 * h;
                    let s = _mm256_add_epi64(_mm256_cvtepu32_epi64(half), carry);
                    let t = _mm256_add_epi64(s, _mm256_loadu_si256(p.add(at).cast()));
                    _mm256_storeu_si256(o.add(at).cast(), t);
                }
            }
            let total = _mm256_permutevar8x32_epi32(b, seven);
            carry = _mm256_add_epi64(carry, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(total)));
            i += 16;
        }
    }
    (i, _mm256_extract_epi64::<0>(carry) as u64)
}
