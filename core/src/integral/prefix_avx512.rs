//! Row prefix sums of the integral images with AVX-512 (x86-64-v4), both tables in one pass
//! or the sum table alone, called only after [`crate::cpu::active`] reported that level (which
//! makes the `unsafe` calls of these `#[target_feature]` functions sound).
//!
//! One prefix serves both tables: each pixel `p` becomes the 32-bit lane `p² + p·2²⁰`, and the
//! 16-lane inclusive prefix of those lanes holds the prefix of squares in its low 20 bits (at
//! most `16·255² < 2²⁰`) and the prefix of pixels above them (at most `16·255 < 2¹²`), so no
//! field carries into the other. Split, the pixel prefix goes to the `u32` table and the squares
//! are widened to `u64` only for their table. All sums are exact integers, so both tables are
//! those of the scalar loop.
//!
//! Tables larger than the caches are written by [`band_streamed`]: a band of rows at once,
//! each row's values passed to the next in registers, so that all but the band's last row can
//! go to memory with non-temporal stores (no read of each line before it is overwritten, which
//! otherwise doubles the memory traffic); the last row stays cached as the next band's row
//! above.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Pixels per step: one 512-bit vector of 32-bit lanes.
pub(super) const STEP: usize = 16;
/// How far ahead of the band's steps its source rows are prefetched (measured on Zen 5:
/// 512 to 1024 bytes).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const PREFETCH_BYTES: usize = 1024;
/// Where the pixel prefix starts in a packed lane; below it, the prefix of squares.
const SUM_SHIFT: u32 = 20;

/// The constants of [`Prefix::step`], made once per call.
#[derive(Clone, Copy)]
struct Prefix {
    sum_weight: __m512i,
    sq_mask32: __m512i,
    sq_mask64: __m512i,
    last: __m512i,
    lo_idx: __m512i,
    hi_idx: __m512i,
}

/// One step's results: 16 pixel prefixes (`u32`), 16 square prefixes (two vectors of eight
/// `u64`) and the step's totals broadcast (pixels in `u32` lanes, squares in `u64` lanes).
struct Sums {
    sum: __m512i,
    sq_lo: __m512i,
    sq_hi: __m512i,
    total_sum: __m512i,
    total_sq: __m512i,
}

impl Prefix {
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
    fn new() -> Self {
        Prefix {
            sum_weight: _mm512_set1_epi32(1 << SUM_SHIFT),
            sq_mask32: _mm512_set1_epi32((1 << SUM_SHIFT) - 1),
            sq_mask64: _mm512_set1_epi64((1 << SUM_SHIFT) - 1),
            last: _mm512_set1_epi32(STEP as i32 - 1),
            // Lanes 0..8 (8..16) into the even 32-bit lanes, odd lanes zeroed by the mask:
            // zero extension to eight u64 in one shuffle.
            lo_idx: _mm512_setr_epi32(0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0),
            hi_idx: _mm512_setr_epi32(8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15, 0),
        }
    }

    /// The inclusive prefixes of the 16 pixels at `px` (their running sums start at zero).
    ///
    /// # Safety
    /// `px` must be valid for reading 16 bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
    #[inline]
    unsafe fn step(&self, px: *const u8) -> Sums {
        let zero = _mm512_setzero_si512();
        // SAFETY: the caller's.
        let p = _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(px.cast()) });
        // p·(p + 2²⁰) = p² + p·2²⁰.
        let mut x = _mm512_mullo_epi32(p, _mm512_add_epi32(p, self.sum_weight));
        // Inclusive prefix: add the vector shifted up by 1, 2, 4, 8 lanes (zeros shifted in).
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<15>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<14>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<12>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<8>(x, zero));
        let sq = _mm512_and_si512(x, self.sq_mask32);
        let total = _mm512_permutexvar_epi32(self.last, x);
        Sums {
            sum: _mm512_srli_epi32::<SUM_SHIFT>(x),
            sq_lo: _mm512_maskz_permutexvar_epi32(0x5555, self.lo_idx, sq),
            sq_hi: _mm512_maskz_permutexvar_epi32(0x5555, self.hi_idx, sq),
            total_sum: _mm512_srli_epi32::<SUM_SHIFT>(total),
            total_sq: _mm512_and_si512(total, self.sq_mask64),
        }
    }
}

impl Prefix {
    /// As [`Prefix::step`] for the pixels alone (the squares' fields zero).
    ///
    /// # Safety
    /// `px` must be valid for reading 16 bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
    #[inline]
    unsafe fn step_sum(&self, px: *const u8) -> Sums {
        let zero = _mm512_setzero_si512();
        // SAFETY: the caller's.
        let mut x = _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(px.cast()) });
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<15>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<14>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<12>(x, zero));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32::<8>(x, zero));
        Sums {
            sum: x,
            sq_lo: zero,
            sq_hi: zero,
            total_sum: _mm512_permutexvar_epi32(self.last, x),
            total_sq: zero,
        }
    }
}

/// `out[x] = above[x] + Σ_{i≤x} row[i]` (wrapping `u32`) for a prefix of the row, a multiple
/// of 16 pixels; returns its length and the running sum after it.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
pub(super) fn sum_row(row: &[u8], above: &[u32], out: &mut [u32]) -> (usize, u32) {
    let n = row.len().min(above.len()).min(out.len());
    let k = Prefix::new();
    let mut carry = _mm512_setzero_si512();
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, a 16-element load from `above` and
    // store into `out` at `i..i + 16`, inside the slices (each at least `n` long).
    unsafe {
        while i + STEP <= n {
            let s = k.step_sum(row.as_ptr().add(i));
            let (a, o) = (above.as_ptr().add(i), out.as_mut_ptr().add(i));
            let sum =
                _mm512_add_epi32(_mm512_add_epi32(s.sum, carry), _mm512_loadu_si512(a.cast()));
            _mm512_storeu_si512(o.cast(), sum);
            carry = _mm512_add_epi32(carry, s.total_sum);
            i += STEP;
        }
    }
    (i, low_lanes(carry, carry).0)
}

/// The low 32-bit and 64-bit lanes of two running sums.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
fn low_lanes(sum: __m512i, sq: __m512i) -> (u32, u64) {
    let mut out = [0u64; 2];
    // SAFETY: a 16-byte store into a 16-byte array.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), _mm512_castsi512_si128(sq)) };
    (
        _mm_cvtsi128_si32(_mm512_castsi512_si128(sum)) as u32,
        out[0],
    )
}

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
    let k = Prefix::new();
    let mut carry_sum = _mm512_setzero_si512();
    let mut carry_sq = _mm512_setzero_si512();
    let mut i = 0;
    // SAFETY: `i + 16 ≤ n`: a 16-byte load from `row`, a 16-element load from `above_sum` and
    // store into `out_sum`, two 8-element loads from `above_sq` and stores into `out_sq`, all
    // at `i..i + 16`, inside the slices (each at least `n` long).
    unsafe {
        while i + STEP <= n {
            let s = k.step(row.as_ptr().add(i));
            let (a, o) = (above_sum.as_ptr().add(i), out_sum.as_mut_ptr().add(i));
            let sum = _mm512_add_epi32(
                _mm512_add_epi32(s.sum, carry_sum),
                _mm512_loadu_si512(a.cast()),
            );
            _mm512_storeu_si512(o.cast(), sum);
            let (a, o) = (above_sq.as_ptr().add(i), out_sq.as_mut_ptr().add(i));
            let lo = _mm512_add_epi64(
                _mm512_add_epi64(s.sq_lo, carry_sq),
                _mm512_loadu_si512(a.cast()),
            );
            let hi = _mm512_add_epi64(
                _mm512_add_epi64(s.sq_hi, carry_sq),
                _mm512_loadu_si512(a.add(8).cast()),
            );
            _mm512_storeu_si512(o.cast(), lo);
            _mm512_storeu_si512(o.add(8).cast(), hi);
            carry_sum = _mm512_add_epi32(carry_sum, s.total_sum);
            carry_sq = _mm512_add_epi64(carry_sq, s.total_sq);
            i += STEP;
        }
    }
    let (acc_sum, acc_sq) = low_lanes(carry_sum, carry_sq);
    (i, acc_sum, acc_sq)
}

/// Where one table row's vectors go with non-temporal stores, which need 64-byte-aligned
/// addresses: the row starts `misalign` lanes past a 64-byte boundary, so each aligned store
/// takes the last `misalign` lanes of one vector and the first `LANES - misalign` of the next
/// (`shift`); the row's first and last partial lines are written with ordinary masked stores.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Aligned<const LANES: usize> {
    /// Lanes `16 - misalign + j` of the pair (previous, current), for `permutex2var`.
    shift: __m512i,
    misalign: usize,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl<const LANES: usize> Aligned<LANES> {
    /// For a row at address `row`, of elements of `64 / LANES` bytes each.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
    fn new(row: usize) -> Self {
        let misalign = (row % 64) / (64 / LANES);
        // Lane j of the result is lane `LANES - misalign + j` of (previous ++ current): in
        // 32-bit lanes for LANES = 16, in 64-bit lanes for LANES = 8 (the index vector's 64-bit
        // lanes hold the index).
        let base = (LANES - misalign) as i32;
        let shift = if LANES == 16 {
            _mm512_add_epi32(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32(base),
            )
        } else {
            _mm512_add_epi64(
                _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                _mm512_set1_epi64(base as i64),
            )
        };
        Aligned { shift, misalign }
    }

    /// The aligned vector between `prev` and `cur`.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
    #[inline]
    fn join(&self, prev: __m512i, cur: __m512i) -> __m512i {
        if LANES == 16 {
            _mm512_permutex2var_epi32(prev, self.shift, cur)
        } else {
            _mm512_permutex2var_epi64(prev, self.shift, cur)
        }
    }

    /// Mask of the first vector's lanes that precede the first aligned store.
    fn head_mask(&self) -> u16 {
        ((1u32 << (LANES - self.misalign)) - 1) as u16
    }
}

/// Writes rows `1..=K` of the sum table and, with `SQ`, of the squared table for `K` source
/// rows (a band), each at most `n` pixels wide, over the longest prefix of whole 16-pixel
/// steps; returns its length and each row's running sums after it (squares 0 without `SQ`), or
/// `None` where the band cannot be streamed (rows narrower than two steps, or an element type
/// misaligned in memory).
///
/// `src[r·src_stride..][..n]` is source row `r`; `sum[r·sum_stride..][..n]` is table row `r`
/// past its zero column, row 0 the row above the band (read only), likewise `sq` (unused and
/// possibly empty without `SQ`). Rows `1..K` go to memory with non-temporal stores, row `K`
/// stays cached. Ends with a store fence, so the non-temporal stores are ordered before
/// anything the caller does next.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
#[allow(clippy::too_many_arguments)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn band_streamed<const K: usize, const SQ: bool>(
    src: &[u8],
    src_stride: usize,
    sum: &mut [u32],
    sum_stride: usize,
    sq: &mut [u64],
    sq_stride: usize,
    n: usize,
) -> Option<(usize, [u32; K], [u64; K])> {
    let steps = n / STEP;
    let fits = |len: usize, stride: usize, rows: usize| {
        stride >= n
            && (rows - 1)
                .checked_mul(stride)
                .and_then(|v| v.checked_add(n))
                .is_some_and(|v| v <= len)
    };
    if K < 2
        || steps < 2
        || !fits(src.len(), src_stride, K)
        || !fits(sum.len(), sum_stride, K + 1)
        || (SQ && !fits(sq.len(), sq_stride, K + 1))
        || !(sum.as_ptr() as usize).is_multiple_of(4)
        || (SQ && !(sq.as_ptr() as usize).is_multiple_of(8))
    {
        return None;
    }
    let k = Prefix::new();
    let zero = _mm512_setzero_si512();
    let mut carry_sum = [zero; K];
    let mut carry_sq = [zero; K];
    // Per streamed row (1..K): its alignment and the previous step's vectors.
    let mut align_sum = [Aligned::<16>::new(0); K];
    let mut align_sq = [Aligned::<8>::new(0); K];
    for r in 1..K {
        align_sum[r] = Aligned::new(sum.as_ptr() as usize + 4 * r * sum_stride);
        align_sq[r] = Aligned::new((sq.as_ptr() as usize).wrapping_add(8 * r * sq_stride));
    }
    let mut prev_sum = [zero; K];
    let mut prev_sq_hi = [zero; K];
    let (src, sum_p, sq_p) = (src.as_ptr(), sum.as_mut_ptr(), sq.as_mut_ptr());
    // SAFETY: `fits` checked that every row `r` named below (of `sq` only with `SQ`) holds
    // `n ≥ 16·steps` elements
    // from its start; each access is inside `i..i + 16` of one row with `i + 16 ≤ 16·steps`.
    // The aligned stores start at `i - misalign ≥ 16 - 15` lanes into the row (`i ≥ 16`) and
    // end before `i + 16 - misalign ≤ i + 16`, at 64-byte-aligned addresses (`Aligned`).
    unsafe {
        for step in 0..steps {
            let i = step * STEP;
            let mut above_sum = _mm512_loadu_si512(sum_p.add(i).cast());
            let (mut above_lo, mut above_hi) = (zero, zero);
            if SQ {
                above_lo = _mm512_loadu_si512(sq_p.add(i).cast());
                above_hi = _mm512_loadu_si512(sq_p.add(i + 8).cast());
            }
            for r in 1..=K {
                let px = src.add((r - 1) * src_stride + i);
                // The band's source rows, read side by side, outrun the hardware prefetcher.
                _mm_prefetch::<_MM_HINT_T0>(px.wrapping_add(PREFETCH_BYTES).cast());
                let s = if SQ { k.step(px) } else { k.step_sum(px) };
                let c = r - 1;
                let row_sum = _mm512_add_epi32(_mm512_add_epi32(s.sum, carry_sum[c]), above_sum);
                let lo = _mm512_add_epi64(_mm512_add_epi64(s.sq_lo, carry_sq[c]), above_lo);
                let hi = _mm512_add_epi64(_mm512_add_epi64(s.sq_hi, carry_sq[c]), above_hi);
                carry_sum[c] = _mm512_add_epi32(carry_sum[c], s.total_sum);
                carry_sq[c] = _mm512_add_epi64(carry_sq[c], s.total_sq);
                let os = sum_p.add(r * sum_stride + i);
                let oq = sq_p.add(r * sq_stride + i);
                if r == K {
                    _mm512_storeu_si512(os.cast(), row_sum);
                    if SQ {
                        _mm512_storeu_si512(oq.cast(), lo);
                        _mm512_storeu_si512(oq.add(8).cast(), hi);
                    }
                } else {
                    let (a_sum, a_sq) = (align_sum[r], align_sq[r]);
                    if step == 0 {
                        _mm512_mask_storeu_epi32(os.cast(), a_sum.head_mask(), row_sum);
                    } else {
                        let at = os.sub(a_sum.misalign);
                        _mm512_stream_si512(at.cast(), a_sum.join(prev_sum[r], row_sum));
                    }
                    prev_sum[r] = row_sum;
                    if SQ {
                        if step == 0 {
                            _mm512_mask_storeu_epi64(oq.cast(), a_sq.head_mask() as u8, lo);
                        } else {
                            let at = oq.sub(a_sq.misalign);
                            _mm512_stream_si512(at.cast(), a_sq.join(prev_sq_hi[r], lo));
                        }
                        let at = oq.add(8).sub(a_sq.misalign);
                        _mm512_stream_si512(at.cast(), a_sq.join(lo, hi));
                        prev_sq_hi[r] = hi;
                    }
                }
                above_sum = row_sum;
                above_lo = lo;
                above_hi = hi;
            }
        }
        // The last lanes of each streamed row, past its last aligned store.
        let i = (steps - 1) * STEP;
        for r in 1..K {
            let (a_sum, a_sq) = (align_sum[r], align_sq[r]);
            let os = sum_p.add(r * sum_stride + i);
            _mm512_mask_storeu_epi32(os.cast(), !a_sum.head_mask(), prev_sum[r]);
            if SQ {
                let oq = sq_p.add(r * sq_stride + i + 8);
                _mm512_mask_storeu_epi64(oq.cast(), !(a_sq.head_mask() as u8), prev_sq_hi[r]);
            }
        }
        _mm_sfence();
    }
    let mut acc_sum = [0u32; K];
    let mut acc_sq = [0u64; K];
    for c in 0..K {
        (acc_sum[c], acc_sq[c]) = low_lanes(carry_sum[c], carry_sq[c]);
    }
    Some((steps * STEP, acc_sum, acc_sq))
}
