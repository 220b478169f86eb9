//! Winograd F(2×2, 3×3) for layers with few input channels (SqueezeNet 1.1's 16 → 64 expand
//! layers on 55² maps; up to 64 channels on maps of at least 27 columns), fused per strip of
//! tiles, with AVX-512 (x86-64-v4). The plane-wise path of [`super::conv_prepared`] writes all
//! `16·T·c` transformed inputs and `16·T·oc` products of a layer to memory (3.2 MiB of
//! products on that layer) and multiplies with `K = c` = 16, where the GEMM's per-call costs
//! are not amortised: it lost to the blocked method there (BENCHMARKS.md). Here one strip of up to 32 tiles along a
//! row of tiles is done at a time: its transformed inputs (`V`, 16 × c × 32 values) and, for 8
//! output channels at a time, its products (`M`, 16 × 8 × 32) stay in the L1 cache, and the
//! outputs leave as whole rows of their channel planes.
//!
//! A vector holds one value of 16 neighbouring tiles (lanes = tiles), so the products are
//! `M[ξ][o] += U[ξ][k][o] · V[ξ][k]` with `U` broadcast (8 channels × up to 2 vectors of
//! tiles: 16 accumulators), and the output transform yields each output of 16 tiles as a
//! vector, which two interleaves turn into 32 consecutive pixels of an output row: no gathers,
//! scatters or transposes. The input and output transforms are [`super::avx512`]'s
//! (`input_tile`, `output_tile`); each product sums its input channels in order with fused
//! multiply-adds, plus the bias, then the clamp (a ReLU, ReLU6 or Clip; the separate pass's
//! bits). The products' order differs from the GEMM's, so the bits differ from the
//! plane-wise path's, within Winograd's rounding.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::avx512::{input_tile, output_tile};
use super::{Conv2dShape, ConvDims, XI};
use crate::nn::depthwise::Clamp;

/// Fewest input channels per group that this path takes (the fewest measured).
pub(crate) const MIN_C: usize = 16;
/// Most input channels per group that this path takes on any map: from
/// [`WINOGRAD_MIN_CHANNELS_PER_GROUP_AVX512`](crate::nn::conv::WINOGRAD_MIN_CHANNELS_PER_GROUP_AVX512)
/// on, the plane-wise path was measured faster than the other methods, and on narrow maps
/// faster than the strips ([`WIDE_MAX_C`]).
pub(crate) const MAX_C: usize = 31;
/// Output channels per block of products.
const OB: usize = 8;
/// Tiles per vector.
const LANES: usize = 16;
/// Most vectors of tiles per strip.
const NJ_MAX: usize = 2;

/// Whether this path computes a group of `c` input and `oc` output channels on rows of `tw`
/// tiles: `oc` a multiple of 8, and `c` in [`MIN_C`]`..=`[`MAX_C`], or up to
/// [`WIDE_MAX_C`] on rows of at least [`WIDE_MIN_TILES`] tiles.
pub(crate) const fn applies(c: usize, oc: usize, tw: usize) -> bool {
    let few = c >= MIN_C && c <= MAX_C;
    let wide = c >= MIN_C && c <= WIDE_MAX_C && tw >= WIDE_MIN_TILES;
    (few || wide) && oc >= OB && oc.is_multiple_of(OB)
}

/// Most input channels per group on wide maps ([`WIDE_MIN_TILES`]). ResNet-18's 64 → 64 layers
/// on 56² maps took 0.95–0.99× the plane-wise path's time, its first one (whose planes are cold
/// after the network's other layers) 0.81–0.83×, SqueezeNet's 32 → 128 on 27² 0.96–0.98×; on
/// 14² and 7² maps the strips were 4–15× slower (BENCHMARKS.md, nineteenth session).
pub(crate) const WIDE_MAX_C: usize = 64;
/// Fewest tiles per row of tiles (27- or 28-pixel output rows) for up to [`WIDE_MAX_C`]
/// input channels: on fewer, a vector of 16 tiles is mostly idle and all of `U` is read for
/// few outputs.
pub(crate) const WIDE_MIN_TILES: usize = 14;

/// Working memory in `f32` elements for `c` input channels per group: one strip's `V`
/// (`16 · c · 32`) and one block's `M` (`16 · 8 · 32`).
pub(crate) const fn workspace_len(c: usize) -> usize {
    XI * (c + OB) * NJ_MAX * LANES
}

/// Lane indices of the even (`EVEN`) and odd elements of two vectors side by side, and of the
/// interleave of two vectors' first (`LO`) and last 8 lanes.
const EVEN: [i32; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30];
const ODD: [i32; 16] = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31];
const LO: [i32; 16] = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
const HI: [i32; 16] = [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31];

/// The convolution of group `g` (`c` input, `oc` output channels, [`applies`]) of every image
/// from `x` into `y`, with `u` that group's transformed weights (`U[ξ][k][o]`, planes
/// `u_stride ≥ c·oc` apart), `bias` (all groups' channels) and `clamp`, using `ws`
/// ([`workspace_len`]).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
pub(super) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    x: &[f32],
    u: &[f32],
    u_stride: usize,
    bias: Option<&[f32]>,
    clamp: Clamp,
    y: &mut [f32],
    ws: &mut [f32],
) {
    let (c, oc) = (s.c_in / s.groups, s.c_out / s.groups);
    let (th, tw) = (d.out_h.div_ceil(2), d.out_w.div_ceil(2));
    // Checked once: every load and store below stays inside these.
    assert!(
        applies(c, oc, tw)
            && (g + 1) * c <= s.c_in
            && (g + 1) * oc <= s.c_out
            && x.len() >= s.n * s.c_in * s.h * s.w
            && u_stride >= c * oc
            && u.len() >= (XI - 1) * u_stride + c * oc
            && y.len() >= s.n * s.c_out * d.out_h * d.out_w
            && ws.len() >= workspace_len(c)
            && bias.is_none_or(|b| b.len() >= (g + 1) * oc)
    );
    for b in 0..s.n {
        for ty in 0..th {
            for tx0 in (0..tw).step_by(NJ_MAX * LANES) {
                let nt = (tw - tx0).min(NJ_MAX * LANES);
                let at = Strip { b, g, ty, tx0, nt };
                if nt > LANES {
                    strip::<2>(s, d, &at, x, (u, u_stride), bias, clamp, y, ws);
                } else {
                    strip::<1>(s, d, &at, x, (u, u_stride), bias, clamp, y, ws);
                }
            }
        }
    }
}

/// Where a strip is: image `b`, group `g`, row of tiles `ty`, tiles `tx0 .. tx0 + nt`.
struct Strip {
    b: usize,
    g: usize,
    ty: usize,
    tx0: usize,
    nt: usize,
}

/// One strip of `NJ` vectors of tiles ([`conv`]'s arguments).
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
fn strip<const NJ: usize>(
    s: &Conv2dShape,
    d: &ConvDims,
    at: &Strip,
    x: &[f32],
    (u, u_stride): (&[f32], usize),
    bias: Option<&[f32]>,
    clamp: Clamp,
    y: &mut [f32],
    ws: &mut [f32],
) {
    let (c, oc) = (s.c_in / s.groups, s.c_out / s.groups);
    let (h, w) = (s.h, s.w);
    let (oh, ow) = (d.out_h, d.out_w);
    let (v, m) = ws.split_at_mut(XI * c * NJ * LANES);
    let zero = _mm512_setzero_ps();
    // SAFETY (index vectors): 16 `i32` each.
    let (even, odd, lo, hi) = unsafe {
        (
            _mm512_loadu_si512(EVEN.as_ptr().cast()),
            _mm512_loadu_si512(ODD.as_ptr().cast()),
            _mm512_loadu_si512(LO.as_ptr().cast()),
            _mm512_loadu_si512(HI.as_ptr().cast()),
        )
    };

    // V[ξ][k][j]: the input transform of 16 tiles per vector j, channel k.
    let iy0 = (2 * at.ty) as isize - s.pad_top as isize;
    for k in 0..c {
        let plane = &x[((at.b * s.c_in) + at.g * c + k) * h * w..][..h * w];
        for j in 0..NJ {
            // Column of the patch's first element for the vector's first tile.
            let col0 = (2 * (at.tx0 + LANES * j)) as isize - s.pad_left as isize;
            let mut dp = [[zero; 4]; 4];
            for (r, row) in dp.iter_mut().enumerate() {
                let iy = iy0 + r as isize;
                if iy < 0 || iy >= h as isize {
                    continue;
                }
                let line = &plane[iy as usize * w..][..w];
                // The 16 elements from column `col` on, zero outside the row.
                let load = |col: isize| {
                    let k = crate::nn::depthwise::avx512::lanes(-col, w as isize - col);
                    // SAFETY: only lanes `l` with `0 ≤ col + l < w` are read, inside `line`.
                    unsafe { _mm512_maskz_loadu_ps(k, line.as_ptr().wrapping_offset(col)) }
                };
                let (a0, a1) = (load(col0), load(col0 + 16));
                let (b0, b1) = (load(col0 + 2), load(col0 + 18));
                row[0] = _mm512_permutex2var_ps(a0, even, a1);
                row[1] = _mm512_permutex2var_ps(a0, odd, a1);
                row[2] = _mm512_permutex2var_ps(b0, even, b1);
                row[3] = _mm512_permutex2var_ps(b0, odd, b1);
            }
            for (xi, val) in input_tile(&dp).into_iter().enumerate() {
                let dst = &mut v[((xi * c + k) * NJ + j) * LANES..][..LANES];
                // SAFETY: 16 elements of `dst`.
                unsafe { _mm512_storeu_ps(dst.as_mut_ptr(), val) };
            }
        }
    }

    let (clo, chi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
    // Output columns of the strip inside the map.
    let col_end = (2 * (at.tx0 + at.nt)).min(ow);
    for o0 in (0..oc).step_by(OB) {
        // M[ξ][o][j] for output channels o0 .. o0 + 8.
        for xi in 0..XI {
            let mut acc = [[zero; NJ]; OB];
            let up = &u[xi * u_stride + o0..][..(c - 1) * oc + OB];
            let vp = &v[xi * c * NJ * LANES..][..c * NJ * LANES];
            for k in 0..c {
                let mut vk = [zero; NJ];
                for (j, vj) in vk.iter_mut().enumerate() {
                    // SAFETY: 16 elements of `vp` at `(k·NJ + j)·16`.
                    *vj = unsafe { _mm512_loadu_ps(vp.as_ptr().add((k * NJ + j) * LANES)) };
                }
                for (o, acc_o) in acc.iter_mut().enumerate() {
                    // SAFETY: `k·oc + o < (c − 1)·oc + OB = up.len()`.
                    let wv = _mm512_set1_ps(unsafe { *up.as_ptr().add(k * oc + o) });
                    for j in 0..NJ {
                        acc_o[j] = _mm512_fmadd_ps(wv, vk[j], acc_o[j]);
                    }
                }
            }
            for (o, acc_o) in acc.iter().enumerate() {
                for (j, &a) in acc_o.iter().enumerate() {
                    let dst = &mut m[((xi * OB + o) * NJ + j) * LANES..][..LANES];
                    // SAFETY: 16 elements of `dst`.
                    unsafe { _mm512_storeu_ps(dst.as_mut_ptr(), a) };
                }
            }
        }
        for o in 0..OB {
            let ch = at.g * oc + o0 + o;
            let bv = bias.map_or(zero, |bs| _mm512_set1_ps(bs[ch]));
            let yc = &mut y[(at.b * s.c_out + ch) * oh * ow..][..oh * ow];
            for j in 0..NJ {
                let mut mt = [zero; XI];
                for (xi, mv) in mt.iter_mut().enumerate() {
                    let src = &m[((xi * OB + o) * NJ + j) * LANES..][..LANES];
                    // SAFETY: 16 elements of `src`.
                    *mv = unsafe { _mm512_loadu_ps(src.as_ptr()) };
                }
                let mut out = output_tile(&mt);
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand)
                // and keep −0.0 against a bound of 0.0: `clip`, as the activation pass.
                for q in out.iter_mut() {
                    *q = _mm512_min_ps(chi, _mm512_max_ps(clo, _mm512_add_ps(*q, bv)));
                }
                // Row 2·ty (outputs 0, 1 of each tile) and row 2·ty + 1 (outputs 2, 3).
                let ox = 2 * (at.tx0 + LANES * j);
                let n = col_end.saturating_sub(ox) as isize;
                let (k0, k1) = (
                    crate::nn::depthwise::avx512::lanes(0, n),
                    crate::nn::depthwise::avx512::lanes(0, n - 16),
                );
                for r in 0..2 {
                    let oy = 2 * at.ty + r;
                    if oy >= oh || n <= 0 {
                        continue;
                    }
                    let (e, f) = (out[2 * r], out[2 * r + 1]);
                    let row = &mut yc[oy * ow..][..ow];
                    let p = row.as_mut_ptr().wrapping_add(ox);
                    // SAFETY: lanes below `n` write columns `ox ..` below `ow`, inside `row`.
                    unsafe {
                        _mm512_mask_storeu_ps(p, k0, _mm512_permutex2var_ps(e, lo, f));
                        _mm512_mask_storeu_ps(
                            p.wrapping_add(16),
                            k1,
                            _mm512_permutex2var_ps(e, hi, f),
                        );
                    }
                }
            }
        }
    }
}
