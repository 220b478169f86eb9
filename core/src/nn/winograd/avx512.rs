//! The AVX-512 forms of [`super`]'s three transforms (x86-64-v4 only): the weight transform
//! gathers each tap of 16 output channels' kernels, the input transform each patch element of
//! 16 input channels, and the output transform scatters each output of a tile to its 16
//! channel planes. Each uses the portable transforms' operations in their order, so the results
//! are the same bits at every level (`tests/nn_winograd_levels.rs`). The portable weight
//! transform reads each tap of 16 kernels into an array and transposes it through the stack,
//! which LLVM left as an out-of-line scalar closure whose stores the vector loads then waited
//! on: 36 % of SqueezeNet's 64 × 13² → 256 layer (0.12 of 0.33 ms, `perf`).

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{Conv2dShape, ConvDims, LANES, XI};

/// Whether gather offsets of 16 planes of `plane` elements (`15·plane` at most) fit `i32`.
pub(super) fn planes_fit(plane: usize) -> bool {
    plane
        .checked_mul(LANES)
        .is_some_and(|n| n <= i32::MAX as usize)
}

/// [`super::transform_input`]: per 16 input channels (lanes; the last group masked), along
/// each row of tiles, the 4×4 patch's elements gathered from the 16 planes (a tile's first
/// two columns are the previous tile's last two), zeros outside the input; `Bᵀ d B` across
/// the lanes with the portable `input_transform`'s operations in its order; then one
/// 16-channel store per transform element. The portable path, channel by channel with 16
/// scalar stores each, was 5 % of SqueezeNet's whole network (its six Winograd layers).
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn transform_input(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    x: &[f32],
    c: usize,
    stride: usize,
    v: &mut [f32],
) {
    let (h, w) = (s.h, s.w);
    let (th, tw) = (d.out_h.div_ceil(2), d.out_w.div_ceil(2));
    let plane = h * w;
    if c == 0 || plane == 0 {
        return;
    }
    // Checked once: gathers read channels `g·c .. (g + 1)·c` of each image at positions
    // inside the plane; stores end below `15·stride + tiles·c`.
    assert!(
        planes_fit(plane)
            && (g + 1) * c <= s.c_in
            && x.len() >= s.n * s.c_in * plane
            && v.len() >= (XI - 1) * stride + s.n * th * tw * c
    );
    let offsets = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(plane as i32),
    );
    let zero = _mm512_setzero_ps();
    for b in 0..s.n {
        for i0 in (0..c).step_by(LANES) {
            let k = super::super::depthwise::avx512::lanes(0, (c - i0) as isize);
            let base = x[(b * s.c_in + g * c + i0) * plane..].as_ptr();
            // Patch element (iy, ix) of the 16 channels, zero outside the plane.
            let at = |iy: isize, ix: isize| {
                if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                    return zero;
                }
                // SAFETY: lane `l < c − i0` reads channel `g·c + i0 + l` of image `b` at
                // (iy, ix), inside its plane (asserted above).
                unsafe {
                    _mm512_mask_i32gather_ps::<4>(
                        zero,
                        k,
                        offsets,
                        base.add(iy as usize * w + ix as usize),
                    )
                }
            };
            for ty in 0..th {
                let iy0 = (2 * ty) as isize - s.pad_top as isize;
                let mut dp = [[zero; 4]; 4];
                for tx in 0..tw {
                    let ix0 = (2 * tx) as isize - s.pad_left as isize;
                    for (r, row) in dp.iter_mut().enumerate() {
                        let iy = iy0 + r as isize;
                        if tx == 0 {
                            row[0] = at(iy, ix0);
                            row[1] = at(iy, ix0 + 1);
                        } else {
                            (row[0], row[1]) = (row[2], row[3]);
                        }
                        row[2] = at(iy, ix0 + 2);
                        row[3] = at(iy, ix0 + 3);
                    }
                    let t = ((b * th + ty) * tw + tx) * c + i0;
                    for (xi, val) in input_tile(&dp).into_iter().enumerate() {
                        // SAFETY: lanes below `c − i0` of element `ξ` of tile `t`: below
                        // `15·stride + tiles·c` (asserted above).
                        unsafe {
                            let p = v.as_mut_ptr().add(xi * stride + t);
                            if k == 0xffff {
                                _mm512_storeu_ps(p, val);
                            } else {
                                _mm512_mask_storeu_ps(p, k, val);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// [`super::transform_weights`] for the whole groups of [`LANES`] output channels; returns
/// the first output channel it left (a multiple of [`LANES`]). The 16 kernels `(o0 + l, i)`
/// are loaded one per vector and transposed, so that tap `j` is one vector; `plus` and `minus`
/// are the portable `weight_transform_lanes`' `0.5·((a + b) + c)` and `0.5·((a − b) + c)`, in
/// that order.
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn transform_weights(
    w: &[f32],
    c: usize,
    oc: usize,
    stride: usize,
    u: &mut [f32],
) -> usize {
    let full = oc - oc % LANES;
    if full == 0 || c == 0 {
        return 0;
    }
    // Checked once: every load reads below `oc·c·9` and every store ends below
    // `15·stride + c·oc`.
    assert!(w.len() >= oc * c * 9 && stride >= c * oc && u.len() >= (XI - 1) * stride + c * oc);
    let half = _mm512_set1_ps(0.5);
    let plus = |a, b, c| _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(a, b), c));
    let minus = |a, b, c| _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(a, b), c));
    for o0 in (0..full).step_by(LANES) {
        for i in 0..c {
            // Kernel `(o0 + l, i)`'s nine taps as lanes 0-8 of row `l`, then transposed: tap `j`
            // of the 16 kernels is row `j` (16 masked loads and a 16 × 16 transposition took
            // 0.57× the time of nine 16-lane gathers in ResNet-18's 512 × 7² layer).
            let base = w[(o0 * c + i) * 9..].as_ptr();
            // The 16 kernel rows are `9·c` values apart (18 KiB at 512 input channels: 16
            // streams on two or four L1 sets), and in a network they come from memory, which
            // the hardware prefetchers do not follow: each step prefetches its rows
            // `NEAR` input channels ahead into L1 and `FAR` ahead into L2. ResNet-18's
            // 512 × 7² layers took 2.56–2.64 → 2.04–2.07 ms in the network (where a prefetch of
            // the whole next group into L1 had stood, evicted before use;
            // BENCHMARKS.md, twenty-fourth session). A hint never faults: addresses past `w`
            // are only computed (`wrapping_add`).
            let (near, far) = (base.wrapping_add(NEAR * 9), base.wrapping_add(FAR * 9));
            for l in 0..LANES {
                _mm_prefetch::<_MM_HINT_T0>(near.wrapping_add(l * 9 * c).cast());
                _mm_prefetch::<_MM_HINT_T1>(far.wrapping_add(l * 9 * c).cast());
            }
            let mut r = [_mm512_setzero_ps(); 16];
            for (l, rl) in r.iter_mut().enumerate() {
                // SAFETY: lanes 0-8 read `w[((o0 + l)·c + i)·9 .. + 9]`, inside `w` (asserted
                // above); the other lanes are masked off and not read.
                *rl = unsafe { _mm512_maskz_loadu_ps(0x01ff, base.add(l * 9 * c)) };
            }
            let r = super::super::depthwise_channels::avx512::transpose16(r);
            let g: [__m512; 9] = [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]];
            let mut t = [[_mm512_setzero_ps(); 3]; 4];
            for j in 0..3 {
                let (a, b, c) = (g[j], g[3 + j], g[6 + j]);
                t[0][j] = a;
                t[1][j] = plus(a, b, c);
                t[2][j] = minus(a, b, c);
                t[3][j] = c;
            }
            for (r, [a, b, c]) in t.into_iter().enumerate() {
                let row = [a, plus(a, b, c), minus(a, b, c), c];
                for (q, v) in row.into_iter().enumerate() {
                    let at = (4 * r + q) * stride + i * oc + o0;
                    // SAFETY: `at + 16 ≤ 15·stride + c·oc ≤ u.len()` (asserted above).
                    unsafe { _mm512_storeu_ps(u.as_mut_ptr().add(at), v) };
                }
            }
        }
    }
    full
}

/// Input channels ahead of the weight transform's loads that it prefetches into L1.
const NEAR: usize = 4;
/// Input channels ahead of the weight transform's loads that it prefetches into L2.
const FAR: usize = 16;

/// Whether the scatter offsets of 16 output planes (`15·out_h·out_w` elements) fit `i32`.
pub(super) fn scatters_fit(d: &ConvDims) -> bool {
    (d.out_h * d.out_w)
        .checked_mul(LANES)
        .is_some_and(|n| n <= i32::MAX as usize)
}

/// [`super::transform_output`]: per tile and 16 output channels, `Aᵀ M A` across the lanes
/// with the portable `output_transform_lanes`' operations in its order (`(a + b) + c` and
/// `(a − b) − c`), plus the bias, then each of the tile's outputs inside the map scattered
/// to its 16 channel planes. The portable path stages 8 tiles through the stack and copies
/// rows out (perf: 21 % of SqueezeNet's 64 × 13² → 256 layer alone, more in the network).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn transform_output(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    bias: Option<&[f32]>,
    m: &[f32],
    oc: usize,
    stride: usize,
    y: &mut [f32],
) {
    let (oh, ow) = (d.out_h, d.out_w);
    let (th, tw) = (oh.div_ceil(2), ow.div_ceil(2));
    let plane = oh * ow;
    // Checked once: every load reads below `15·stride + tiles·oc` and every scatter writes
    // channel planes `g·oc .. (g + 1)·oc` of its image.
    assert!(
        scatters_fit(d)
            && m.len() >= (XI - 1) * stride + s.n * th * tw * oc
            && y.len() >= s.n * s.c_out * plane
            && (g + 1) * oc <= s.c_out
            && bias.is_none_or(|b| b.len() >= (g + 1) * oc)
    );
    let offsets = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(plane as i32),
    );
    for b in 0..s.n {
        for o0 in (0..oc).step_by(LANES) {
            let k = super::super::depthwise::avx512::lanes(0, (oc - o0) as isize);
            // SAFETY: lanes `g·oc + o0 ..` below `(g + 1)·oc` of `bias` (asserted).
            let bv = match bias {
                Some(bs) => unsafe { _mm512_maskz_loadu_ps(k, bs.as_ptr().add(g * oc + o0)) },
                None => _mm512_setzero_ps(),
            };
            let base = y
                .as_mut_ptr()
                .wrapping_add((b * s.c_out + g * oc + o0) * plane);
            for ty in 0..th {
                for tx in 0..tw {
                    let at = ((b * th + ty) * tw + tx) * oc + o0;
                    // SAFETY: `at + lanes ≤ tiles·oc`, plane ξ at `ξ·stride` (asserted).
                    let mt: [__m512; XI] = core::array::from_fn(|xi| unsafe {
                        _mm512_maskz_loadu_ps(k, m.as_ptr().add(xi * stride + at))
                    });
                    for (j, v) in output_tile(&mt).into_iter().enumerate() {
                        let (oy, ox) = (2 * ty + j / 2, 2 * tx + j % 2);
                        if oy < oh && ox < ow {
                            let v = _mm512_add_ps(v, bv);
                            // SAFETY: lanes below `oc − o0` write plane `o0 + l` of
                            // group `g` of image `b`, at `(oy, ox)` inside it.
                            unsafe {
                                _mm512_mask_i32scatter_ps::<4>(
                                    base.wrapping_add(oy * ow + ox).cast(),
                                    k,
                                    offsets,
                                    v,
                                )
                            };
                        }
                    }
                }
            }
        }
    }
}

/// `Bᵀ d B` of a 4×4 patch `d` (rows of vectors; each lane its own patch), element `ξ = 4·row +
/// column`, with the portable `input_transform`'s operations in its order.
#[inline]
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn input_tile(d: &[[__m512; 4]; 4]) -> [__m512; XI] {
    let (sub, add) = (_mm512_sub_ps, _mm512_add_ps);
    let mut r = [[_mm512_setzero_ps(); 4]; 4];
    for j in 0..4 {
        r[0][j] = sub(d[0][j], d[2][j]);
        r[1][j] = add(d[1][j], d[2][j]);
        r[2][j] = sub(d[2][j], d[1][j]);
        r[3][j] = sub(d[1][j], d[3][j]);
    }
    let mut v = [_mm512_setzero_ps(); XI];
    for (i, ri) in r.iter().enumerate() {
        v[4 * i] = sub(ri[0], ri[2]);
        v[4 * i + 1] = add(ri[1], ri[2]);
        v[4 * i + 2] = sub(ri[2], ri[1]);
        v[4 * i + 3] = sub(ri[1], ri[3]);
    }
    v
}

/// `Aᵀ m A` of the 16 transform elements `m` (each lane its own tile): the tile's outputs
/// (row 0: 0, 1; row 1: 2, 3), with the portable `output_transform_lanes`' operations in its
/// order (`(a + b) + c` and `(a − b) − c`).
#[inline]
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn output_tile(m: &[__m512; XI]) -> [__m512; 4] {
    let sum3 = |a, b, c| _mm512_add_ps(_mm512_add_ps(a, b), c);
    let diff3 = |a, b, c| _mm512_sub_ps(_mm512_sub_ps(a, b), c);
    let s0 = [
        sum3(m[0], m[4], m[8]),
        sum3(m[1], m[5], m[9]),
        sum3(m[2], m[6], m[10]),
        sum3(m[3], m[7], m[11]),
    ];
    let s1 = [
        diff3(m[4], m[8], m[12]),
        diff3(m[5], m[9], m[13]),
        diff3(m[6], m[10], m[14]),
        diff3(m[7], m[11], m[15]),
    ];
    [
        sum3(s0[0], s0[1], s0[2]),
        diff3(s0[1], s0[2], s0[3]),
        sum3(s1[0], s1[1], s1[2]),
        diff3(s1[1], s1[2], s1[3]),
    ]
}
