//! Max pooling 3 × 3 at stride 2 of small maps on AVX-512, 16 channels at a time in a
//! pixel-major layout (SqueezeNet's 128 × 55² → 27² and 256 × 27² → 13², AlexNet's 256 × 13² →
//! 6²), as ONNX Runtime's MLAS runs pooling in its NCHWc16 blocks. The row kernel of `pool`
//! runs each output row of 6–27 pixels as one or two masked 16-lane chunks, with three masked
//! loads and a de-interleave per input row; here 16 planes are transposed, 16 pixels at a time,
//! into the ring of `depthwise_channels` (one `__m512` per pixel, lane `l` = plane `p0 + l`),
//! every output pixel is the maximum of its 9 taps as 9 aligned loads and `max` instructions,
//! no masks, a tap outside the input simply not taken, and the output pixels are transposed
//! back 16 at a time. Planes past the last multiple of 16 go to the row kernel.
//!
//! The results are the row kernel's bits: each output is `max(tap, m)` over its taps from
//! `m = −∞` (a NaN tap keeps `m`), then `+ 0` (a zero maximum is +0, whatever the visit order);
//! a lane left at −∞ had only −∞ and NaN in its window, and is NaN if every element was NaN,
//! checked from the input planes (rare, once per output row that has such a lane). The two
//! rings (32 KiB) are on the stack: no allocation, no scratch.

use super::depthwise_channels::rings_fit;
use super::pool::{Pool2dShape, PoolDims};

/// Whether this module computes `s` (max pooling): a 3 × 3 window at stride 2 both ways, at
/// least 16 planes (`n·c`), input rows short enough for the ring (at most 64 pixels); any
/// padding, floor or ceil mode.
pub(crate) fn applies(s: &Pool2dShape, d: &PoolDims) -> bool {
    s.kh == 3
        && s.kw == 3
        && s.stride_h == 2
        && s.stride_w == 2
        && s.n * s.c >= 16
        && rings_fit(s.w, d.out_w)
}

/// Largest plane (pixels) that takes this path when its input is not `cached`.
const COLD_PLANE: usize = 16 * 16;

/// Whether `max_pool2d` should run `s` here rather than with the row kernel: where it
/// [`applies`], if the input is likely `cached` (in L2 or L3) or its planes are at most 16²
/// pixels. Pooling alone (the row kernel's time = 1; medians of 150 calls each, interleaved, 2
/// rounds):
/// with the input just written (SqueezeNet's pools follow a Concat) the ring took 0.73–0.82
/// on 64 × 55², 0.72–0.80 on 128 × 55², 0.62–0.66 on 192 × 27², 0.60–0.68 on 256 × 27² and
/// 0.34–0.36 on 256 × 13²; after a 3 MB sweep (input in L3) 0.38–0.87; after a 32 MB sweep
/// 1.13–1.45 on all but 256 × 13² (0.74–0.86), the 16 input streams
/// being slower to fetch from memory than the row kernel's one. In AlexNet, where each pool
/// follows a convolution (its input, weights and scratch pass through the caches after its
/// first output stores; conv2's weights alone are 1.2 MB), the ring took 64 × 55² from 0.039–0.054 to 0.039–0.054 ms and 192 × 27² from 0.028–0.044 to
/// 0.031–0.049 ms (8 rounds, load 3.7–4.4), 256 × 13² from 0.016–0.027 to 0.011–0.019.
pub(crate) fn prefers(s: &Pool2dShape, d: &PoolDims, cached: bool) -> bool {
    applies(s, d) && (cached || s.h * s.w <= COLD_PLANE)
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::super::depthwise_channels::avx512::{flush16, transpose_in};
    use super::super::depthwise_channels::{inner_cols, ring_rows, RING_IN, RING_OUT};
    use super::super::pool::window;
    use super::{Pool2dShape, PoolDims};

    /// How far ahead (pixels of each plane) the transposition prefetches its 16 planes, into
    /// L1: 4 cache lines per plane, 64 lines in all. With the input out of the caches (a
    /// 32 MB sweep before each call) it took the ring from 1.4–1.55× the row kernel's time to
    /// 1.1–1.45× on 64 × 55², 128 × 55², 192 × 27² and 256 × 27², and from 1.0–1.1× to
    /// 0.74–0.86× on 256 × 13²; 128 and 320 pixels did no better, nor a sweep of the next 16
    /// planes into L2.
    const PREFETCH_PX: usize = 64;

    /// Output pixel `ox` of a row whose three input rows are `r` (ring rows of `w` pixel
    /// vectors; `None` outside the image): `max(tap, m)` over the taps that exist, from −∞.
    ///
    /// # Safety
    /// Each row of `r` addresses `w` readable pixel vectors.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    unsafe fn edge(r: &[Option<*const __m512>; 3], ox: usize, pl: isize, w: usize) -> __m512 {
        let mut m = _mm512_set1_ps(f32::NEG_INFINITY);
        for p in r.iter().flatten() {
            for kx in 0..3 {
                let ix = (2 * ox) as isize + kx - pl;
                if ix >= 0 && (ix as usize) < w {
                    // SAFETY: ix < w within the ring row p (the caller's contract).
                    m = _mm512_max_ps(unsafe { *p.add(ix as usize) }, m);
                }
            }
        }
        m
    }

    /// `super::super::pool::max_pool2d` for the shapes of [`super::applies`], the first
    /// `⌊n·c / 16⌋·16` planes of `input` (`n × c × h × w`) into `output`
    /// (`n × c × out_h × out_w`), 16 planes at a time; the rest is the caller's.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn max_pool(s: &Pool2dShape, d: &PoolDims, input: &[f32], output: &mut [f32]) {
        let (h, w, oh, ow) = (s.h, s.w, d.out_h, d.out_w);
        let (hw, ohw) = (h * w, oh * ow);
        let planes = s.n * s.c / 16 * 16;
        // What the loads and stores below rest on, checked once per call.
        assert!(super::applies(s, d) && input.len() >= planes * hw && output.len() >= planes * ohw);
        let rows = ring_rows(w);
        let ring_len = rows * w;
        let mut ring = [_mm512_setzero_ps(); RING_IN];
        let mut out_ring = [_mm512_setzero_ps(); RING_OUT];
        let neg = _mm512_set1_ps(f32::NEG_INFINITY);
        let zero = _mm512_setzero_ps();
        let (pt, pl) = (s.pad_top as isize, s.pad_left as isize);
        // Output columns lo_in..hi_in have all three taps in the row.
        let (lo_in, hi_in) = inner_cols(w, s.pad_left, 2, ow);
        for p0 in (0..planes).step_by(16) {
            let x = input[p0 * hw..][..16 * hw].as_ptr();
            let y = output[p0 * ohw..][..16 * ohw].as_mut_ptr();
            // Input pixels transposed so far, and where the next one goes in the ring.
            let (mut done_in, mut slot) = (0usize, 0usize);
            // Output pixels computed, and those transposed back to the planes.
            let (mut done_out, mut flushed) = (0usize, 0usize);
            for oy in 0..oh {
                let top = (2 * oy) as isize - pt;
                // Transpose until the last input row this output row reads is in the ring.
                let need = (((top + 3).max(0) as usize).min(h) * w).min(hw);
                while done_in < need {
                    let n = (hw - done_in).min(16);
                    // The 16 planes PREFETCH_PX pixels ahead (past a plane's end, the next
                    // block's same plane; past the tensor's, nothing that faults).
                    let ahead = done_in + PREFETCH_PX;
                    let (plane0, at) = if ahead < hw {
                        (0, ahead)
                    } else {
                        (16, ahead - hw)
                    };
                    for l in 0..16 {
                        let p = x.wrapping_add((plane0 + l) * hw + at);
                        _mm_prefetch::<_MM_HINT_T0>(p.cast());
                    }
                    // SAFETY: planes 0..16 of the block, pixels done_in .. done_in + n ≤ hw;
                    // slot < ring_len ≤ RING_IN.
                    unsafe {
                        transpose_in(x.add(done_in), hw, n, ring.as_mut_ptr(), slot, ring_len)
                    };
                    slot += n;
                    if slot >= ring_len {
                        slot -= ring_len;
                    }
                    done_in += n;
                }
                // The ring rows of the three input rows (None outside the image).
                let row = |ky: isize| {
                    let iy = top + ky;
                    (iy >= 0 && (iy as usize) < h)
                        .then(|| ring.as_ptr().wrapping_add((iy as usize % rows) * w))
                };
                let r = [row(0), row(1), row(2)];
                let dst = out_ring.as_mut_ptr();
                let base = done_out;
                // Lanes left at −∞ in some output of this row.
                let mut unset: __mmask16 = 0;
                let mut put = |ox: usize, v: __m512| {
                    // −0 → +0, as the row kernel: a ±0 tie's sign follows the visit order.
                    let v = _mm512_add_ps(v, zero);
                    unset |= _mm512_cmpeq_ps_mask(v, neg);
                    // SAFETY: the slot lies in the output ring.
                    unsafe { *dst.add((base + ox) % RING_OUT) = v };
                };
                // SAFETY (the `edge` calls): the rows of `r` are ring rows of w pixel vectors.
                for ox in (0..lo_in).chain(hi_in..ow) {
                    put(ox, unsafe { edge(&r, ox, pl, w) });
                }
                if let [Some(p0), Some(p1), Some(p2)] = r {
                    for ox in lo_in..hi_in {
                        let c = (2 * ox) as isize - pl;
                        // SAFETY: outputs lo_in..hi_in read columns c .. c + 3 within the row.
                        let tap = |p: *const __m512, kx: isize| unsafe { *p.offset(c + kx) };
                        let mut m = neg;
                        for p in [p0, p1, p2] {
                            m = _mm512_max_ps(tap(p, 0), m);
                            m = _mm512_max_ps(tap(p, 1), m);
                            m = _mm512_max_ps(tap(p, 2), m);
                        }
                        put(ox, m);
                    }
                } else {
                    for ox in lo_in..hi_in {
                        put(ox, unsafe { edge(&r, ox, pl, w) });
                    }
                }
                if unset != 0 {
                    // A lane at −∞ is NaN if its window held nothing but NaN (as the row
                    // kernel's fix-up), looked up in the input plane.
                    let (y0, y1, _) = window(oy, 2, 3, s.pad_top, h, s.pad_bottom);
                    for ox in 0..ow {
                        let (x0, x1, _) = window(ox, 2, 3, s.pad_left, w, s.pad_right);
                        let at = (base + ox) % RING_OUT;
                        let mut v = [0.0f32; 16];
                        // SAFETY: 16 values each way; the slot lies in the output ring.
                        unsafe { _mm512_storeu_ps(v.as_mut_ptr(), out_ring[at]) };
                        for (l, v) in v.iter_mut().enumerate() {
                            if unset & (1 << l) == 0 || *v != f32::NEG_INFINITY {
                                continue;
                            }
                            let plane = &input[(p0 + l) * hw..][..hw];
                            let any = plane[y0 * w..y1 * w]
                                .chunks_exact(w)
                                .any(|row| row[x0..x1].iter().any(|v| !v.is_nan()));
                            if !any {
                                *v = f32::NAN;
                            }
                        }
                        // SAFETY: as above.
                        out_ring[at] = unsafe { _mm512_loadu_ps(v.as_ptr()) };
                    }
                }
                done_out += ow;
                // Transpose back every full 16 pixels (at the end, the rest).
                while done_out - flushed >= 16 || (oy + 1 == oh && flushed < done_out) {
                    let n = (done_out - flushed).min(16);
                    // SAFETY: flushed % RING_OUT + 16 ≤ RING_OUT (both multiples of 16); the
                    // 16 planes of the block hold pixels flushed .. flushed + n ≤ ohw.
                    unsafe { flush16(&out_ring, flushed % RING_OUT, y, ohw, flushed, n) };
                    flushed += n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::pool::{avx512::max_pool3, Pool2dShape};
    use std::vec;
    use std::vec::Vec;

    /// At x86-64-v4, the 16-channel path gives the row kernel's bits (NaN bits included) on
    /// SqueezeNet's and AlexNet's pools (fewer planes), rows from 1 to 64 pixels, every
    /// padding, floor and ceil mode, batch 2, with NaN, −∞ and ±0 dense enough that windows of
    /// nothing but NaN and of −∞ and NaN occur.
    #[test]
    #[allow(unsafe_code)]
    fn same_bits_as_the_row_kernel() {
        if !super::super::blocked::fast() {
            std::println!("same_bits_as_the_row_kernel: skipped, x86-64-v4 not active");
            return;
        }
        let mut seed = 0x9001_d00d_u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        // (n, c, h, w, pad_top, pad_left, pad_bottom, pad_right, ceil)
        let shapes = [
            (1, 32, 55, 55, 0, 0, 0, 0, true),
            (1, 16, 27, 27, 0, 0, 0, 0, true),
            (1, 48, 13, 13, 0, 0, 0, 0, false),
            (2, 8, 28, 28, 1, 1, 1, 1, true),
            (1, 16, 1, 1, 1, 1, 1, 1, false),
            (1, 16, 2, 1, 0, 2, 1, 1, true),
            (1, 32, 9, 64, 2, 1, 0, 2, true),
            (1, 16, 30, 4, 1, 0, 2, 0, true),
            (1, 16, 17, 33, 2, 2, 2, 2, false),
            (1, 16, 6, 16, 0, 0, 1, 0, true),
        ];
        for (i, &(n, c, h, w, pt, pl, pb, pr, ceil)) in shapes.iter().enumerate() {
            let mut s = Pool2dShape::new(n, c, h, w, 3, 3);
            (s.stride_h, s.stride_w, s.ceil_mode) = (2, 2, ceil);
            (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (pt, pl, pb, pr);
            let d = s.dims().unwrap();
            assert!(super::applies(&s, &d), "{s:?}");
            let nan = [1, 9, 12, 3, 0][i % 5];
            let x: Vec<f32> = (0..d.input_len)
                .map(|_| match next() % 16 {
                    r if r < nan => f32::NAN,
                    r if r < nan + 2 => f32::NEG_INFINITY,
                    _ => match next() % 5 {
                        0 => -0.0,
                        1 => 0.0,
                        r => r as f32 * 0.25 - (next() % 100) as f32,
                    },
                })
                .collect();
            let mut got = vec![0.5f32; d.output_len];
            let mut want = vec![0.25f32; d.output_len];
            // SAFETY: x86-64-v4 is active.
            unsafe {
                super::avx512::max_pool(&s, &d, &x, &mut got);
                max_pool3::<2>(&s, &d, &x, &mut want);
            }
            for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "{s:?}: out[{j}] = {a}, want {b}");
            }
        }
    }
}
