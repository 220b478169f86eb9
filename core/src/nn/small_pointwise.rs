//! Direct pointwise (1×1, stride 1, unpadded) convolution on small maps (MobileNetV2's 7² and
//! 14² layers) or with few weights (its and SqueezeNet's larger maps): a register tile holds up to 4 vectors of 16 output pixels × a few output
//! channels, each step of the `K` input channels loads one input row segment per vector and
//! broadcasts one weight per channel, and the bias and a ReLU / ReLU6 / Clip clamp are applied in
//! registers before the one store into the NCHW planes. The `gemm` crate's per-call packing and
//! blocking cost too much on products of 49 or 196 columns (the im2col path ran these layers
//! at 0.8–0.96× ONNX Runtime); on larger maps, small weight matrices stay in cache while
//! tiles of pixels are taken one after the other. Maps of 13 vectors (14²) run as tiles of 4, 3, 3 and 3 vectors
//! (4 × 6, 3 × 8 channels: about 24 accumulators each); 16 or 32 output channels (which tiles
//! of 6 would cover with 12.5 % recomputed) take tiles of at most 3 vectors × 8 channels. The map's last vector is masked, but
//! for 1–3 trailing pixels (7² = 3 vectors and 1), which are dot products of the weight rows
//! with the pixels' input columns instead of a vector of 15 idle lanes. Channel tiles shift
//! back to end at the last channel (their first channels recompute, identically, outputs
//! already stored). Each output is `Σ_k w·x` in order of `k` (fused multiply-adds; the trailing
//! pixels in 16 partial sums), plus the bias, clamped: the same bits whether or not the clamp
//! is fused, not the same as the im2col GEMM's.
//!
//! x86-64 with AVX-512 (x86-64-v4 active) only; elsewhere the convolution methods of
//! [`conv`](super::conv) run these layers.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;

/// Fewest output channels per group: the widest channel tile (see `avx512::channels`).
pub(crate) const MIN_C_OUT: usize = 16;
/// Output pixels per channel up to which this path takes any weights: at most 4 tiles of
/// pixels, so the weights are read from memory at most 4 times.
pub(crate) const MAX_PIXELS: usize = 256;
/// Weights per group (`c_out/g · c_in/g`) up to which this path takes any map: every tile of
/// pixels reads all weights again, which a GEMM's blocking avoids. Measured faster than the
/// `gemm` crate on every such layer of MobileNetV2 and SqueezeNet but two within noise (16 → 96
/// on 112² to 256 → 32 on 27², 8192 weights; BENCHMARKS.md, branch `nn-mobile3`); larger
/// weight matrices on larger maps were not measured.
pub(crate) const MAX_WEIGHTS_ANY_MAP: usize = 8192;

/// Whether this module computes `s`: a pointwise kernel, at least [`MIN_C_OUT`] output
/// channels per group, and at most [`MAX_PIXELS`] output pixels per channel or at most
/// [`MAX_WEIGHTS_ANY_MAP`] weights per group.
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    let ocg = s.c_out / s.groups;
    s.is_pointwise()
        && ocg >= MIN_C_OUT
        && (d.out_h * d.out_w <= MAX_PIXELS || ocg.saturating_mul(d.k) <= MAX_WEIGHTS_ANY_MAP)
}

direct_avx512_entry!();

/// Where [`conv_strided`] runs `s` on this CPU (a 1 × 1 kernel with a stride above 1 and no
/// padding, ResNet's shortcut layers, whose subsampled input this module's kernel takes,
/// [`fast`]): the pointwise shape of one image and group after the subsampling (`oh × ow`
/// pixels per channel, stride 1) and its sizes.
fn strided(s: &Conv2dShape, d: &ConvDims) -> Option<(Conv2dShape, ConvDims)> {
    if s.kh != 1 || s.kw != 1 || (s.stride_h == 1 && s.stride_w == 1) || super::blocked::padded(s) {
        return None;
    }
    let (cg, ocg) = (s.c_in / s.groups, s.c_out / s.groups);
    let sub = Conv2dShape::new(1, cg, d.out_h, d.out_w, ocg, 1, 1);
    let sd = sub.dims().ok()?;
    fast(&sub, &sd).then_some((sub, sd))
}

/// Whether [`conv_strided`] runs `s` on this CPU (see [`strided`]).
pub(crate) fn strided_fast(s: &Conv2dShape, d: &ConvDims) -> bool {
    strided(s, d).is_some()
}

/// A strided 1 × 1 layer as im2col lowers it, without the GEMM: each image and group's input
/// is subsampled (its lowered matrix, `c_in/g × oh·ow`) into `workspace`, then multiplied by
/// this module's kernel, adding `bias` and clamping to `clamp`; returns `true` where
/// [`strided_fast`], `false` (nothing written) otherwise. The caller has checked every length,
/// the workspace against [`workspace_len`](super::conv::workspace_len) of im2col, which holds
/// the lowered matrix.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_strided(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    workspace: &mut [f32],
) -> bool {
    let Some((sub, sd)) = strided(s, d) else {
        return false;
    };
    let (cg, ocg, ohw) = (sub.c_in, sub.c_out, d.out_h * d.out_w);
    let (in_g, out_g) = (cg * s.h * s.w, ocg * ohw);
    let x_sub = &mut workspace[..cg * ohw];
    for b in 0..s.n {
        for g in 0..s.groups {
            let x = &input[(b * s.groups + g) * in_g..][..in_g];
            for (src, dst) in x.chunks_exact(s.h * s.w).zip(x_sub.chunks_exact_mut(ohw)) {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                if s.stride_w == 2 {
                    // SAFETY: x86-64-v4 is active (`strided_fast` holds).
                    #[allow(unsafe_code)]
                    unsafe {
                        avx512::subsample2(src, s.w, s.stride_h, d.out_w, dst)
                    };
                    continue;
                }
                subsample(src, s.w, s.stride_h, s.stride_w, d.out_w, dst);
            }
            let w = &weights[g * ocg * cg..][..ocg * cg];
            let y = &mut output[(b * s.groups + g) * out_g..][..out_g];
            let bias = bias.map(|v| &v[g * ocg..][..ocg]);
            conv(&sub, &sd, x_sub, w, bias, clamp, y);
        }
    }
    true
}

/// Copies every `sh`-th row's every `sw`-th element of the plane `src` (rows of `w`) into
/// `dst` (rows of `ow`, as many as `dst` holds).
fn subsample(src: &[f32], w: usize, sh: usize, sw: usize, ow: usize, dst: &mut [f32]) {
    for (oy, out) in dst.chunks_exact_mut(ow).enumerate() {
        let row = &src[oy * sh * w..][..(ow - 1) * sw + 1];
        for (o, &v) in out.iter_mut().zip(row.iter().step_by(sw)) {
            *o = v;
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims, MIN_C_OUT};

    /// Output pixels per vector.
    const PIXELS: usize = 16;
    /// Most vectors of pixels per register tile.
    const MAX_P: usize = 4;
    use crate::nn::depthwise::clip;

    /// Most trailing pixels computed as dot products ([`dots`]).
    const DOT_MAX_COLS: usize = 3;
    /// Most input channels of the stack copy of the trailing pixels' columns (12 KiB).
    const DOT_MAX_K: usize = 1024;
    /// Output channels per step of [`dots`] on maps without a full vector (1–3 pixels).
    const DOT_C: usize = 8;

    /// The trailing pixels' input columns, contiguous in `k`.
    type Columns = [[f32; DOT_MAX_K]; DOT_MAX_COLS];

    /// The operands of one group's product `Y (M × N) = W (M × K) · X (K × N)`.
    struct Mat<'a> {
        x: &'a [f32],
        w: &'a [f32],
        bias: Option<&'a [f32]>,
        m: usize,
        k: usize,
        n: usize,
        /// Lanes of the last vector.
        tail: __mmask16,
        /// Trailing pixels computed as dot products (0–3), from pixel `n − cols`.
        cols: usize,
        clamp: Clamp,
    }

    /// [`super::subsample`] with a column stride of 2: 16 outputs at a time from two masked
    /// loads of 16 and one two-source permutation.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn subsample2(src: &[f32], w: usize, sh: usize, ow: usize, dst: &mut [f32]) {
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let mask = |n: usize| ((1u32 << n.min(16)) - 1) as __mmask16;
        for (oy, out) in dst.chunks_exact_mut(ow).enumerate() {
            let row = &src[oy * sh * w..][..2 * ow - 1];
            let mut ox = 0;
            while ox < ow {
                let n = (ow - ox).min(16);
                let len = 2 * n - 1;
                // SAFETY: the loads read elements 2·ox .. 2·ox + len of `row` (2·ow − 1
                // long) and the store writes n of `out` from ox; AVX-512 F is enabled here.
                unsafe {
                    let p = row.as_ptr().add(2 * ox);
                    let a = _mm512_maskz_loadu_ps(mask(len), p);
                    let b = _mm512_maskz_loadu_ps(mask(len.saturating_sub(16)), p.add(16));
                    let v = _mm512_permutex2var_ps(a, even, b);
                    _mm512_mask_storeu_ps(out.as_mut_ptr().add(ox), mask(n), v);
                }
                ox += n;
            }
        }
    }

    /// [`super::conv`] on AVX-512.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn conv(
        s: &Conv2dShape,
        d: &ConvDims,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let (m, k, n) = (s.c_out / s.groups, d.k, d.out_h * d.out_w);
        // Checked once: every tile below reads and writes inside these bounds.
        assert!(
            m >= MIN_C_OUT
                && n >= 1
                && k == s.c_in / s.groups
                && n == s.h * s.w
                && x.len() >= s.n * s.c_in * n
                && w.len() >= s.c_out * k
                && y.len() >= s.n * s.c_out * n
                && bias.is_none_or(|b| b.len() >= s.c_out)
        );
        // A map's last 1–3 pixels (7² = 3 vectors + 1) are dot products over `K` rather than a
        // vector of mostly masked-off lanes, where their columns fit the stack copy.
        let rest = n % PIXELS;
        let cols = if (1..=DOT_MAX_COLS).contains(&rest) && k <= DOT_MAX_K {
            rest
        } else {
            0
        };
        let vectors = (n - cols).div_ceil(PIXELS);
        let tail = match (n - cols) % PIXELS {
            0 => 0xffff,
            r => (1u32 << r) as __mmask16 - 1,
        };
        // Tiles of at most MAX_P vectors, as even as they come (13 vectors: 4, 3, 3, 3); of at
        // most 3 (8 channels each) where 6-channel tiles would recompute more than 5 % of the
        // channels and 8-channel ones none (16 or 32 output channels: 12.5 %).
        let max_p = if m % 8 == 0 && (m.div_ceil(6) * 6 - m) * 20 > m {
            3
        } else {
            MAX_P
        };
        let tiles = vectors.div_ceil(max_p);
        let mut xt: Columns = [[0.0; DOT_MAX_K]; DOT_MAX_COLS];
        for b in 0..s.n {
            for g in 0..s.groups {
                let at_x = (b * s.groups + g) * k * n;
                let at_y = (b * s.groups + g) * m * n;
                let a = Mat {
                    x: &x[at_x..][..k * n],
                    w: &w[g * m * k..][..m * k],
                    bias: bias.map(|v| &v[g * m..][..m]),
                    m,
                    k,
                    n,
                    tail,
                    cols,
                    clamp,
                };
                let y = &mut y[at_y..][..m * n];
                for (j, col) in xt.iter_mut().enumerate().take(cols) {
                    for (i, v) in col[..k].iter_mut().enumerate() {
                        *v = a.x[i * n + n - cols + j];
                    }
                }
                if vectors == 0 {
                    // SAFETY: AVX-512 is enabled here; `DOT_C ≤ m` and the bounds asserted above.
                    unsafe { channels::<0, DOT_C>(&a, 0, true, &xt, y) };
                }
                let mut v0 = 0;
                for t in 0..tiles {
                    let p = vectors / tiles + usize::from(t < vectors % tiles);
                    let last = v0 + p == vectors;
                    // SAFETY (each arm): AVX-512 is enabled here; `v0 + P ≤ vectors`, `C ≤ m`
                    // and the bounds asserted above keep every tile inside `x`, `w` and `y`.
                    unsafe {
                        match p {
                            4 => channels::<4, 6>(&a, v0, last, &xt, y),
                            3 => channels::<3, 8>(&a, v0, last, &xt, y),
                            2 => channels::<2, 12>(&a, v0, last, &xt, y),
                            _ => channels::<1, 16>(&a, v0, last, &xt, y),
                        }
                    }
                    v0 += p;
                }
            }
        }
    }

    /// Vectors `v0 .. v0 + P` of every output channel, `C` channels at a time, the last tile
    /// shifted back to end at channel `m`; when `last`, also the trailing pixels of the tile's
    /// channels, while their weights are in cache.
    ///
    /// # Safety
    /// AVX-512 F and FMA; `v0 + P` vectors within the map (`last` when they end it), `C ≤ m`,
    /// `xt` holding the trailing pixels' columns, and the bounds asserted by `conv`.
    #[inline(always)]
    unsafe fn channels<const P: usize, const C: usize>(
        a: &Mat,
        v0: usize,
        last: bool,
        xt: &Columns,
        y: &mut [f32],
    ) {
        let mut c0 = 0;
        loop {
            let c = c0.min(a.m - C);
            if P > 0 {
                tile::<P, C>(a, v0, last, c, y);
            }
            if last && a.cols > 0 {
                dots::<C>(a, xt, c, y);
            }
            if c + C == a.m {
                break;
            }
            c0 += C;
        }
    }

    /// Output channels `c0 .. c0 + C` at vectors `v0 .. v0 + P` (the last one's lanes masked
    /// to `a.tail` when `last`): `Σ_k W[c][k]·X[k][p]` in order of `k`, plus the bias, clamped,
    /// stored.
    ///
    /// # Safety
    /// AVX-512 F and FMA; `c0 + C ≤ m`, `v0 + P` vectors within the map, and the bounds
    /// asserted by `conv`.
    #[inline(always)]
    unsafe fn tile<const P: usize, const C: usize>(
        a: &Mat,
        v0: usize,
        last: bool,
        c0: usize,
        y: &mut [f32],
    ) {
        let mask: [__mmask16; P] =
            core::array::from_fn(|p| if last && p + 1 == P { a.tail } else { 0xffff });
        let mut acc = [[_mm512_setzero_ps(); P]; C];
        let (n, k) = (a.n, a.k);
        let mut xp = a.x.as_ptr().add(v0 * PIXELS);
        let wp = a.w.as_ptr().add(c0 * k);
        // The next channel tile's weights (contiguous, `C·K` values), `C` per step: in a network
        // they come from memory (MobileNetV2's 14² layers: 0.049–0.050 → 0.045 ms in the network
        // with this prefetch).
        let next = wp.wrapping_add(C * k) as *const i8;
        for i in 0..k {
            _mm_prefetch::<_MM_HINT_T0>(next.wrapping_add(4 * C * i));
            let xv: [__m512; P] =
                core::array::from_fn(|p| _mm512_maskz_loadu_ps(mask[p], xp.add(p * PIXELS)));
            for (c, ac) in acc.iter_mut().enumerate() {
                let wv = _mm512_set1_ps(*wp.add(c * k + i));
                for (ap, &xv) in ac.iter_mut().zip(&xv) {
                    *ap = _mm512_fmadd_ps(xv, wv, *ap);
                }
            }
            xp = xp.add(n);
        }
        let (lo, hi) = (_mm512_set1_ps(a.clamp.0), _mm512_set1_ps(a.clamp.1));
        let yp = y.as_mut_ptr().add(c0 * n + v0 * PIXELS);
        for (c, ac) in acc.iter().enumerate() {
            let b = a.bias.map(|b| _mm512_set1_ps(b[c0 + c]));
            for (p, &v) in ac.iter().enumerate() {
                let v = b.map_or(v, |b| _mm512_add_ps(v, b));
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand),
                // and keep −0.0 against a bound of 0.0, as `depthwise::clip`.
                let v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
                _mm512_mask_storeu_ps(yp.add(c * n + p * PIXELS), mask[p], v);
            }
        }
    }

    /// The trailing `a.cols` pixels of output channels `c0 .. c0 + C`: dot products of the
    /// weight rows with the pixels' columns `xt` in 16 partial sums each, reduced, plus the
    /// bias, clamped.
    ///
    /// # Safety
    /// AVX-512 F and FMA; `a.cols ≤ DOT_MAX_COLS`, `k ≤ DOT_MAX_K`, `c0 + C ≤ m`, and the
    /// bounds asserted by `conv`.
    #[inline(always)]
    unsafe fn dots<const C: usize>(a: &Mat, xt: &Columns, c0: usize, y: &mut [f32]) {
        let (n, k, cols) = (a.n, a.k, a.cols);
        let rem = match k % PIXELS {
            0 => 0,
            r => (1u32 << r) as __mmask16 - 1,
        };
        let mut acc = [[_mm512_setzero_ps(); DOT_MAX_COLS]; C];
        let wp = a.w.as_ptr().add(c0 * k);
        let mut i = 0;
        while i < k {
            let mask = if i + PIXELS <= k { 0xffff } else { rem };
            let xv: [__m512; DOT_MAX_COLS] = core::array::from_fn(|j| {
                if j < cols {
                    _mm512_maskz_loadu_ps(mask, xt[j].as_ptr().add(i))
                } else {
                    _mm512_setzero_ps()
                }
            });
            for (c, ac) in acc.iter_mut().enumerate() {
                let wv = _mm512_maskz_loadu_ps(mask, wp.add(c * k + i));
                for (aj, &xj) in ac.iter_mut().zip(&xv).take(cols) {
                    *aj = _mm512_fmadd_ps(wv, xj, *aj);
                }
            }
            i += PIXELS;
        }
        for (c, ac) in acc.iter().enumerate() {
            let b = a.bias.map(|b| b[c0 + c]);
            for (j, &aj) in ac.iter().enumerate().take(cols) {
                let v = _mm512_reduce_add_ps(aj);
                let v = b.map_or(v, |b| v + b);
                y[(c0 + c) * n + n - cols + j] = clip(v, a.clamp);
            }
        }
    }
}
