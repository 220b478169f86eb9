//! Row prefix sums of the integral images in SSE2 registers (part of the x86-64 baseline):
//! sixteen pixels at a time, the prefix inside a vector by shifted additions (`log2` steps)
//! and one running sum carried from vector to vector, instead of a serial chain of one add per
//! pixel. All sums are exact integers (16-bit lanes hold at most `16·255`, 32-bit lanes
//! `16·255²`), so the tables are those of the scalar loop. Bounds are checked once per row.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Pixels per step.
const STEP: usize = 16;

/// The inclusive prefix sums of 16 pixels as two vectors of eight `u16`.
#[inline(always)]
fn prefix16(v: __m128i) -> (__m128i, __m128i) {
    // SAFETY: register-only SSE2 operations; this module is compiled only where the target
    // enables SSE2.
    unsafe {
        let zero = _mm_setzero_si128();
        let mut lo = _mm_unpacklo_epi8(v, zero);
        let mut hi = _mm_unpackhi_epi8(v, zero);
        lo = _mm_add_epi16(lo, _mm_slli_si128::<2>(lo));
        hi = _mm_add_epi16(hi, _mm_slli_si128::<2>(hi));
        lo = _mm_add_epi16(lo, _mm_slli_si128::<4>(lo));
        hi = _mm_add_epi16(hi, _mm_slli_si128::<4>(hi));
        lo = _mm_add_epi16(lo, _mm_slli_si128::<8>(lo));
        hi = _mm_add_epi16(hi, _mm_slli_si128::<8>(hi));
        // Every lane of `hi` also gets the sum of the first eight pixels (`lo`'s last lane).
        let last = _mm_shufflehi_epi16::<0xFF>(lo);
        (lo, _mm_add_epi16(hi, _mm_unpackhi_epi64(last, last)))
    }
}

/// The inclusive prefix sums of four `u32` lanes.
#[inline(always)]
fn prefix4_u32(q: __m128i) -> __m128i {
    // SAFETY: as in `prefix16`.
    unsafe {
        let q = _mm_add_epi32(q, _mm_slli_si128::<4>(q));
        _mm_add_epi32(q, _mm_slli_si128::<8>(q))
    }
}

/// `out[x] = above[x] + Σ_{i≤x} row[i]` (wrapping `u32`) for a prefix of the row, a
/// multiple of 16 pixels; returns its length and the running sum after it.
pub(super) fn sum_row(row: &[u8], above: &[u32], out: &mut [u32]) -> (usize, u32) {
    let n = row.len().min(above.len()).min(out.len());
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, four 4-element loads from `above` and
    // stores into `out` at `i..i + 16`, all inside the slices (each at least `n` long).
    unsafe {
        let zero = _mm_setzero_si128();
        let mut carry = _mm_setzero_si128();
        while i + STEP <= n {
            let (lo, hi) = prefix16(_mm_loadu_si128(row.as_ptr().add(i).cast()));
            let parts = [
                _mm_unpacklo_epi16(lo, zero),
                _mm_unpackhi_epi16(lo, zero),
                _mm_unpacklo_epi16(hi, zero),
                _mm_unpackhi_epi16(hi, zero),
            ];
            let (a, o) = (above.as_ptr().add(i), out.as_mut_ptr().add(i));
            for (j, p) in parts.into_iter().enumerate() {
                let s = _mm_add_epi32(p, carry);
                let t = _mm_add_epi32(s, _mm_loadu_si128(a.add(4 * j).cast()));
                _mm_storeu_si128(o.add(4 * j).cast(), t);
            }
            carry = _mm_add_epi32(carry, _mm_shuffle_epi32::<0xFF>(parts[3]));
            i += STEP;
        }
        (i, _mm_cvtsi128_si32(carry) as u32)
    }
}

/// As [`sum_row`] for the squared table: `out[x] = above[x] + Σ_{i≤x} row[i]²` (wrapping
/// `u64`).
pub(super) fn sq_row(row: &[u8], above: &[u64], out: &mut [u64]) -> (usize, u64) {
    let n = row.len().min(above.len()).min(out.len());
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, eight 2-element loads from `above` and
    // stores into `out` at `i..i + 16`, all inside the slices (each at least `n` long).
    unsafe {
        let zero = _mm_setzero_si128();
        let mut carry = _mm_setzero_si128();
        while i + STEP <= n {
            let v = _mm_loadu_si128(row.as_ptr().add(i).cast());
            // Squares of `u8` fit `u16` (at most 65025).
            let lo = _mm_unpacklo_epi8(v, zero);
            let hi = _mm_unpackhi_epi8(v, zero);
            let (lo, hi) = (_mm_mullo_epi16(lo, lo), _mm_mullo_epi16(hi, hi));
            let mut parts = [
                prefix4_u32(_mm_unpacklo_epi16(lo, zero)),
                prefix4_u32(_mm_unpackhi_epi16(lo, zero)),
                prefix4_u32(_mm_unpacklo_epi16(hi, zero)),
                prefix4_u32(_mm_unpackhi_epi16(hi, zero)),
            ];
            // Block prefix: each part also gets the totals of the parts before it (at most
            // 16·65025 < 2^32).
            for j in 1..4 {
                let total = _mm_shuffle_epi32::<0xFF>(parts[j - 1]);
                parts[j] = _mm_add_epi32(parts[j], total);
            }
            let (a, o) = (above.as_ptr().add(i), out.as_mut_ptr().add(i));
            for (j, p) in parts.into_iter().enumerate() {
                for (h, q) in [_mm_unpacklo_epi32(p, zero), _mm_unpackhi_epi32(p, zero)]
                    .into_iter()
                    .enumerate()
                {
                    let at = 4 * j + 2 * h;
                    let s = _mm_add_epi64(q, carry);
                    let t = _mm_add_epi64(s, _mm_loadu_si128(a.add(at).cast()));
                    _mm_storeu_si128(o.add(at).cast(), t);
                }
            }
            let total = _mm_unpackhi_epi32(parts[3], zero);
            carry = _mm_add_epi64(carry, _mm_unpackhi_epi64(total, total));
            i += STEP;
        }
        let mut last = [0u64; 2];
        _mm_storeu_si128(last.as_mut_ptr().cast(), carry);
        (i, last[0])
    }
}
