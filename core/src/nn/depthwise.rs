//! Depthwise 3×3 convolution (one input and one output channel per group, undilated 3×3
//! kernel, any stride and padding) with the bias and a clamp (ReLU, ReLU6, Clip) fused: each
//! output row is computed in one pass, its taps accumulated in registers, then clamped and
//! stored once, instead of a bias fill, nine passes over the plane and an activation pass. Rows
//! and columns whose window crosses the border take the taps that exist. Also the clamp pass
//! that the other convolutions and `apply_activation` run on their outputs ([`add_clamp`]).
//!
//! On x86-64 with AVX-512 (x86-64-v4 active), strides 1 and 2 run 16 outputs of a row per
//! `__m512` with fused multiply-adds: the outputs whose taps all lie in the row without masks,
//! the border ones (and partial vectors) with the out-of-row taps as masked-off lanes of their
//! loads and multiply-adds; stride 2 de-interleaves even and odd input columns with two-source
//! permutes, and each output row prefetches the input rows that the row four rows below reads.
//! Each input row's three taps go to their own accumulator. "Same" stride-1 planes run as one
//! flat run of vectors instead (every tap a constant offset from the output pixel, masked where
//! its input pixel is outside the plane): with rows of at least 16 pixels, the vectors of the
//! inner rows load whole and mask only their multiply-adds at the row ends; planes of narrower
//! rows, of at most 1024 pixels, from a table of per-vector masks. Layers of 16·k channels
//! with input rows of at most 64 pixels at stride 2, or of 10 to 32 pixels at stride 1, run
//! 16 planes at a time instead, transposed into a pixel-major ring (one vector of 16 channels
//! per pixel: no masks, no de-interleave; `depthwise_channels`); other stride-2 planes
//! with outputs of at most 16 × 16 split into phase images first, which makes them flat too
//! (`depthwise_phases`). Elsewhere (and for
//! strides above 2) the portable loops sum the nine taps in `(ky, kx)` order like
//! [`ConvMethod::Direct`](super::conv::ConvMethod::Direct) (LLVM vectorises stride 1 across
//! outputs, separate multiply and add), border columns scalar. Results agree within `f32`
//! rounding, not bit for bit, across levels (fused multiply-adds, summation order).
//! `avx512::taps` and its masks also serve the 3-wide max pooling of `pool`.
//!
//! Where x86-64-v3 is the highest level (AVX2, no AVX-512), the portable loops run with their
//! interiors 8 outputs per vector, and "same" stride-1 planes of at most 1024 pixels as one
//! flat run of vectors with per-tap lane masks from a table (`avx2`): the same operations in
//! the same order as the portable loops, so the same bits.

use super::conv::{Conv2dShape, ConvDims};

/// `[lo, hi]` of a clamp: ReLU is `[0, +∞]`, ReLU6 `[0, 6]`, no activation `[−∞, +∞]`.
pub(crate) type Clamp = (f32, f32);

/// The clamp that changes nothing (every `f32`, NaN included, maps to itself).
pub(crate) const NO_CLAMP: Clamp = (f32::NEG_INFINITY, f32::INFINITY);

/// Whether `s` is a depthwise 3×3 convolution this module computes: one input and one output
/// channel per group, 3×3 kernel, no dilation.
pub(crate) const fn applies(s: &Conv2dShape) -> bool {
    s.c_in == s.groups
        && s.c_out == s.groups
        && s.kh == 3
        && s.kw == 3
        && s.dilation_h == 1
        && s.dilation_w == 1
}

/// `min(max(x, lo), hi)`, keeping NaN (as [`apply_activation`](super::activation::apply_activation)'s
/// Relu, ReLU6 and Clip: `x < lo → lo`, `x > hi → hi`, else `x`, so `−0.0` stays `−0.0`).
#[inline(always)]
pub(crate) fn clip(x: f32, (lo, hi): Clamp) -> f32 {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// `v ← clip(v + add, clamp)` for every `v` of `data` (a convolution's bias and activation
/// applied in one pass), or `v ← clip(v, clamp)` when `add` is `None` (an activation alone:
/// adding 0 would turn −0.0 into +0.0): 16 values per AVX-512 vector where x86-64-v4 is active
/// (masked tail), else a plain loop. Same results either way (one addition, then the clamp).
pub(crate) fn add_clamp(data: &mut [f32], add: Option<f32>, clamp: Clamp) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() {
        // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL supported, `cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            match add {
                Some(a) => avx512::add_clamp::<true>(data, a, clamp),
                None => avx512::add_clamp::<false>(data, 0.0, clamp),
            }
        };
        return;
    }
    match add {
        Some(a) => data.iter_mut().for_each(|v| *v = clip(*v + a, clamp)),
        None => data.iter_mut().for_each(|v| *v = clip(*v, clamp)),
    }
}

/// Planes of at most this many pixels run the flat kernels (`avx512::conv_flat`,
/// `avx2::conv_flat`: their mask tables are sized for it).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const FLAT_MAX: usize = 1024;

/// Whether `s` is a "same" stride-1 layer: stride 1 and padding 1 on every side, so the output
/// plane has the input's size and every tap is a constant offset from its output pixel.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) const fn same_stride1(s: &Conv2dShape) -> bool {
    s.stride_h == 1
        && s.stride_w == 1
        && s.pad_top == 1
        && s.pad_left == 1
        && s.pad_bottom == 1
        && s.pad_right == 1
}

/// Whether the flat kernels compute `s`: a [`same_stride1`] layer with planes of at most
/// [`FLAT_MAX`] pixels.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) const fn flat_applies(s: &Conv2dShape) -> bool {
    same_stride1(s) && s.h * s.w <= FLAT_MAX
}

/// Runs `f(input plane, taps, bias, output plane)` for every plane of the layer, in order.
#[inline(always)]
fn each_plane(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    mut f: impl FnMut(&[f32], &[f32; 9], f32, &mut [f32]),
) {
    let (hw, ohw) = (s.h * s.w, d.out_h * d.out_w);
    for (p, y) in output[..d.output_len].chunks_exact_mut(ohw).enumerate() {
        let c = p % s.c_out;
        let k: [f32; 9] = core::array::from_fn(|i| weights[c * 9 + i]);
        f(&input[p * hw..][..hw], &k, bias.map_or(0.0, |b| b[c]), y);
    }
}

/// All output planes of `input` (`n × c × h × w`, `c = groups`) and `weights` (`c × 1 × 3 × 3`)
/// into `output` (`n × c × out_h × out_w`): `clip(bias[c] + Σ taps)` per output (bias 0 when
/// absent). The caller checked the buffers' lengths.
pub(crate) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() && s.stride_w <= 2 {
        // SAFETY: x86-64-v4 is active, so this CPU and OS support AVX-512 F/BW/DQ/VL, AVX2
        // and FMA (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            if super::depthwise_channels::applies(s, d) {
                super::depthwise_channels::avx512::conv(s, d, input, weights, bias, clamp, output)
            } else if avx512::flat_wide_applies(s) {
                avx512::conv_flat_wide(s, input, weights, bias, clamp, output)
            } else if flat_applies(s) {
                avx512::conv_flat(s, input, weights, bias, clamp, output)
            } else if s.stride_w == 1 {
                avx512::conv::<1>(s, d, input, weights, bias, clamp, output)
            } else if super::depthwise_phases::applies(s, d) {
                super::depthwise_phases::avx512::conv(s, d, input, weights, bias, clamp, output)
            } else {
                avx512::conv::<2>(s, d, input, weights, bias, clamp, output)
            }
        };
        return;
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if s.stride_w <= 2 && crate::cpu::active() >= crate::cpu::Level::X86V3 {
        // SAFETY: x86-64-v3 is active, so this CPU and OS support AVX2 and FMA
        // (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            // Stride 2 only: at stride 1 the channel blocks ran 0.94-0.96x the flat and row
            // paths on MobileNetV2's 14² and 28² layers (AMD Zen 3, `nn_bench`, min of 4
            // alternating rounds), where on AVX-512 they won.
            if s.stride_w == 2 && super::depthwise_channels::applies(s, d) {
                super::depthwise_channels::avx2::conv(s, d, input, weights, bias, clamp, output)
            } else if flat_applies(s) {
                avx2::conv_flat(s, input, weights, bias, clamp, output)
            } else {
                avx2::conv(s, d, input, weights, bias, clamp, output)
            }
        };
        return;
    }
    each_plane(s, d, input, weights, bias, output, |x, k, b, y| {
        rows(s, d, x, k, b, clamp, y, |r, base, sx, out| {
            interior_portable(k, r, base, sx, b, clamp, out)
        });
    });
}

/// The three input rows of output row `oy` (`None` outside the image).
type Rows<'a> = [Option<&'a [f32]>; 3];

/// The row loop shared by both levels: for each output row, the border columns (scalar) and
/// `interior(rows, base, stride_w, out)` for the columns `lo..hi` whose taps lie in the row
/// (`out` = those outputs, `base` the input column of the first one's left tap).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn rows(
    s: &Conv2dShape,
    d: &ConvDims,
    x: &[f32],
    k: &[f32; 9],
    bias: f32,
    clamp: Clamp,
    y: &mut [f32],
    mut interior: impl FnMut(&Rows<'_>, usize, usize, &mut [f32]),
) {
    let (w, ow, sx) = (s.w, d.out_w, s.stride_w);
    // Output columns whose three taps are all inside the row: ox·sx ≥ pad_left and
    // ox·sx − pad_left + 2 < w.
    let lo = s.pad_left.div_ceil(sx).min(ow);
    let hi = if w + s.pad_left >= 3 {
        ((w + s.pad_left - 3) / sx + 1).clamp(lo, ow)
    } else {
        lo
    };
    for (oy, out) in y.chunks_exact_mut(ow).take(d.out_h).enumerate() {
        let top = oy * s.stride_h;
        let rows: Rows<'_> = core::array::from_fn(|ky| {
            (top + ky)
                .checked_sub(s.pad_top)
                .filter(|&iy| iy < s.h)
                .map(|iy| &x[iy * w..][..w])
        });
        // One output from the taps that exist.
        let edge = |ox: usize| {
            let mut acc = bias;
            for (ky, row) in rows.iter().enumerate() {
                let Some(row) = row else { continue };
                for kx in 0..3 {
                    if let Some(ix) = (ox * sx + kx).checked_sub(s.pad_left) {
                        if ix < w {
                            acc += k[ky * 3 + kx] * row[ix];
                        }
                    }
                }
            }
            clip(acc, clamp)
        };
        for (ox, o) in out.iter_mut().enumerate().take(lo) {
            *o = edge(ox);
        }
        for (ox, o) in out.iter_mut().enumerate().skip(hi) {
            *o = edge(ox);
        }
        if hi > lo {
            interior(&rows, lo * sx - s.pad_left, sx, &mut out[lo..hi]);
        }
    }
}

/// The interior columns of one output row, portable: all three rows present → nine taps per
/// output (stride 1 over contiguous slices, which LLVM vectorises across outputs); otherwise
/// the taps of the rows that exist.
#[inline(always)]
fn interior_portable(
    k: &[f32; 9],
    rows: &Rows<'_>,
    base: usize,
    sx: usize,
    bias: f32,
    clamp: Clamp,
    out: &mut [f32],
) {
    let n = out.len();
    let span = (n - 1) * sx + 3;
    if let [Some(r0), Some(r1), Some(r2)] = *rows {
        let (a0, a1, a2) = (
            &r0[base..][..span],
            &r1[base..][..span],
            &r2[base..][..span],
        );
        if sx == 1 {
            for (i, o) in out.iter_mut().enumerate() {
                *o = clip(taps9(k, [a0, a1, a2], i, bias), clamp);
            }
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                *o = clip(taps9(k, [a0, a1, a2], i * sx, bias), clamp);
            }
        }
        return;
    }
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = bias;
        for (ky, row) in rows.iter().enumerate() {
            if let Some(row) = row {
                let c = base + i * sx;
                acc += k[ky * 3] * row[c];
                acc += k[ky * 3 + 1] * row[c + 1];
                acc += k[ky * 3 + 2] * row[c + 2];
            }
        }
        *o = clip(acc, clamp);
    }
}

/// Whether the buffers cover every plane of the 3 × 3 depthwise layer `s`, with `in_plane`
/// input and `out_plane` output values a plane: what the AVX-512 kernels' (here and in
/// `depthwise_phases` / `depthwise_channels`) unchecked loads and stores rest on, asserted
/// once per call.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) fn buffers_fit(
    s: &Conv2dShape,
    input: &[f32],
    in_plane: usize,
    output: &[f32],
    out_plane: usize,
    weights: &[f32],
    bias: Option<&[f32]>,
) -> bool {
    let planes = s.n * s.c_out;
    input.len() >= planes * in_plane
        && output.len() >= planes * out_plane
        && weights.len() >= s.c_out * 9
        && bias.is_none_or(|b| b.len() >= s.c_out)
}

/// `acc` plus the nine taps `k` on columns `c .. c + 3` of `rows`, in `(ky, kx)` order.
#[inline(always)]
fn taps9(k: &[f32; 9], rows: [&[f32]; 3], c: usize, acc: f32) -> f32 {
    let mut acc = acc;
    for (ky, row) in rows.iter().enumerate() {
        acc += k[ky * 3] * row[c];
        acc += k[ky * 3 + 1] * row[c + 1];
        acc += k[ky * 3 + 2] * row[c + 2];
    }
    acc
}

/// The portable loops with the interior of each output row 8 outputs at a time on AVX2 (x86-64-v3
/// active, AVX-512 not): the same multiplies and adds in the same order as
/// [`interior_portable`], so the same bits; the border columns, the rows with a tap row outside
/// the plane and the last `< 8` outputs of a row stay portable. Strides 1 and 2 (the latter
/// de-interleaves even and odd input columns).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{each_plane, interior_portable, rows, Clamp, Conv2dShape, ConvDims, FLAT_MAX};

    /// All ones in lanes `0..n` (`n` clamped to `0..=8`), zeros above: the mask of masked loads
    /// and stores of the first `n` lanes.
    ///
    /// # Safety
    /// AVX2 is enabled in the caller.
    #[inline(always)]
    pub(crate) unsafe fn below(n: isize) -> __m256i {
        // SAFETY: the function's contract.
        unsafe {
            _mm256_cmpgt_epi32(
                _mm256_set1_epi32(n.clamp(0, 8) as i32),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }

    /// Columns 0, 2, …, 14 and 1, 3, …, 15 of the 16 consecutive columns in `a` (0–7) and `c`
    /// (8–15): per 128-bit lane [a0 a2 c0 c2 | a4 a6 c4 c6] (and the odd ones), then the
    /// 64-bit pairs in column order.
    ///
    /// # Safety
    /// AVX2 is enabled in the caller.
    #[inline(always)]
    pub(crate) unsafe fn deinterleave(a: __m256, c: __m256) -> (__m256, __m256) {
        // SAFETY: the function's contract.
        unsafe {
            let pairs = |v: __m256| {
                _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)))
            };
            (
                pairs(_mm256_shuffle_ps::<0b10_00_10_00>(a, c)),
                pairs(_mm256_shuffle_ps::<0b11_01_11_01>(a, c)),
            )
        }
    }

    /// [`super::conv`] for `s.stride_w` ≤ 2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn conv(
        s: &Conv2dShape,
        d: &ConvDims,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        each_plane(s, d, input, weights, bias, output, |x, k, b, y| {
            rows(s, d, x, k, b, clamp, y, |r, base, sx, out| {
                match *r {
                    // SAFETY: AVX2 is enabled here; `rows` passes the interior columns, whose
                    // taps lie inside each row: row[base + sx·i + kx] for i < out.len().
                    [Some(r0), Some(r1), Some(r2)] => unsafe {
                        if sx == 1 {
                            interior::<1>(k, [r0, r1, r2], base, b, clamp, out)
                        } else {
                            interior::<2>(k, [r0, r1, r2], base, b, clamp, out)
                        }
                    },
                    _ => interior_portable(k, r, base, sx, b, clamp, out),
                }
            });
        });
    }

    /// [`super::conv`] for [`super::flat_applies`] layers: each plane as one flat run of vectors of 8
    /// pixels, tap `(ky, kx)` of pixel `i` at `i + (ky − 1)·w + kx − 1`, so small planes (7²,
    /// 14², 28²) need no per-row edge code. A table made once per layer says, per vector and
    /// tap, which lanes' inputs exist; a tap whose lanes all exist is a plain load, one with
    /// some is a masked load whose sum is blended into the lanes that have it, so every output
    /// adds the taps that exist in `(ky, kx)` order from the bias, as the portable loops do: the
    /// same bits. A plane's last partial vector is stored whole into the planes after it (which
    /// then overwrite it) where the output goes on that far, else lane by lane.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn conv_flat(
        s: &Conv2dShape,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        (lo, hi): Clamp,
        output: &mut [f32],
    ) {
        let (w, hw) = (s.w, s.h * s.w);
        let planes = s.n * s.c_out;
        let nv = hw.div_ceil(8);
        assert!(
            super::buffers_fit(s, input, hw, output, hw, weights, bias),
            "depthwise: buffers shorter than the layer"
        );
        // masks[v·9 + t]: bit j set when pixel 8v + j is in the plane and its tap t is too.
        let mut masks = [0u8; FLAT_MAX / 8 * 9];
        for i in 0..hw {
            let (y, x) = (i / w, i % w);
            for t in 0..9 {
                let (iy, ix) = ((y + t / 3).wrapping_sub(1), (x + t % 3).wrapping_sub(1));
                if iy < s.h && ix < w {
                    masks[i / 8 * 9 + t] |= 1 << (i % 8);
                }
            }
        }
        let offsets: [isize; 9] =
            core::array::from_fn(|t| (t as isize / 3 - 1) * w as isize + t as isize % 3 - 1);
        let bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        let (vlo, vhi) = (_mm256_set1_ps(lo), _mm256_set1_ps(hi));
        for p in 0..planes {
            let c = p % s.c_out;
            let k: [__m256; 9] = core::array::from_fn(|t| _mm256_set1_ps(weights[c * 9 + t]));
            let b = _mm256_set1_ps(bias.map_or(0.0, |b| b[c]));
            // SAFETY: buffers_fit checked that every plane lies inside both buffers.
            let (x, y) = unsafe { (input.as_ptr().add(p * hw), output.as_mut_ptr().add(p * hw)) };
            for v in 0..nv {
                let mut acc = b;
                for t in 0..9 {
                    let m = masks[v * 9 + t];
                    let at = x.wrapping_offset((8 * v) as isize + offsets[t]);
                    if m == 0xff {
                        // SAFETY: every lane's tap lies in the plane.
                        let xv = unsafe { _mm256_loadu_ps(at) };
                        acc = _mm256_add_ps(acc, _mm256_mul_ps(k[t], xv));
                    } else if m != 0 {
                        let mm = _mm256_cmpeq_epi32(
                            _mm256_and_si256(_mm256_set1_epi32(i32::from(m)), bits),
                            bits,
                        );
                        // SAFETY: the mask selects the lanes whose tap lies in the plane.
                        let xv = unsafe { _mm256_maskload_ps(at, mm) };
                        let sum = _mm256_add_ps(acc, _mm256_mul_ps(k[t], xv));
                        acc = _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(mm));
                    }
                }
                let r = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));
                let (i, left) = (8 * v, hw - 8 * v);
                if (planes - p) * hw - i >= 8 {
                    // SAFETY: pixels i .. i + 8 lie in this plane or, past its end, in the
                    // planes after it, whose vectors are stored after this one.
                    unsafe { _mm256_storeu_ps(y.add(i), r) };
                } else {
                    let mut lanes = [0.0f32; 8];
                    // SAFETY: 8 writable floats.
                    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), r) };
                    for (j, &l) in lanes.iter().enumerate().take(left) {
                        // SAFETY: i + j < hw: inside the last plane.
                        unsafe { *y.add(i + j) = l };
                    }
                }
            }
        }
    }

    /// The outputs of an interior run of a row whose three tap rows all exist (output `i`
    /// reads `rows[ky][base + SX·i + kx]`), 8 per vector; a run that is not a multiple of 8
    /// ends with a vector that overlaps the one before it (the same values again), a run of
    /// fewer than 8 takes masked loads and a masked store.
    ///
    /// # Safety
    /// AVX2 is available, and `rows[ky][base + SX·i + kx]` exists for every `i < out.len()`,
    /// `kx < 3` (as [`rows`] guarantees for the interior columns).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn interior<const SX: usize>(
        k: &[f32; 9],
        rows: [&[f32]; 3],
        base: usize,
        bias: f32,
        (lo, hi): Clamp,
        out: &mut [f32],
    ) {
        let n = out.len();
        let w: [__m256; 9] = core::array::from_fn(|t| _mm256_set1_ps(k[t]));
        let (b, vlo, vhi) = (_mm256_set1_ps(bias), _mm256_set1_ps(lo), _mm256_set1_ps(hi));
        // Lanes 1..7 of a vector, then lane 7 of another (stride 2's third tap).
        let up = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
        let top = _mm256_set1_epi32(7);
        // Lanes below `m` (a lane mask).
        // SAFETY: AVX2 is enabled here.
        let below = |m: isize| unsafe { below(m) };
        // Column masks of a run of fewer than 8 outputs: stride 1, one per output lane; stride 2,
        // the columns 0 .. 2n of the loads from 0, 8 and 9.
        let (m0, m8, m9) = if SX == 1 {
            (below(n as isize), below(n as isize), below(n as isize))
        } else {
            let end = 2 * n as isize + 1;
            (below(end), below(end - 8), below(end - 9))
        };
        // The taps of outputs i .. i + 8 (only the columns of outputs below n when `masked`),
        // summed from the bias in (ky, kx) order and clamped: max(lo, x) and min(hi, x) return
        // x when it is NaN (the second operand), as `clip`.
        let vector = |i: usize, masked: bool| {
            let mut acc = b;
            for (ky, row) in rows.iter().enumerate() {
                // SAFETY: the caller guarantees the row holds every tap of the outputs below
                // n; the unmasked stride-1 loads read columns base + i .. base + i + 10 for
                // i + 8 ≤ n, the stride-2 ones base + 2i .. base + 2i + 16 (taps of them), the
                // masked ones only columns of outputs below n.
                let x = unsafe {
                    let p = row.as_ptr().add(base + SX * i);
                    let load = |o: usize, m: __m256i| {
                        if masked {
                            _mm256_maskload_ps(p.add(o), m)
                        } else {
                            _mm256_loadu_ps(p.add(o))
                        }
                    };
                    if SX == 1 {
                        [load(0, m0), load(1, m0), load(2, m0)]
                    } else {
                        // Columns 0, 2, …, 14 and 1, 3, …, 15.
                        let (even, odd) = deinterleave(load(0, m0), load(8, m8));
                        // Columns 2, 4, …, 16: the even ones a lane down, column 16 on top.
                        let last = load(9, m9);
                        let next = _mm256_blend_ps(
                            _mm256_permutevar8x32_ps(even, up),
                            _mm256_permutevar8x32_ps(last, top),
                            0b1000_0000,
                        );
                        [even, odd, next]
                    }
                };
                for (kx, xv) in x.iter().enumerate() {
                    acc = _mm256_add_ps(acc, _mm256_mul_ps(w[ky * 3 + kx], *xv));
                }
            }
            _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc))
        };
        let o = out.as_mut_ptr();
        if n < 8 {
            if n > 0 {
                // SAFETY: the mask selects outputs 0 .. n of `out`.
                unsafe { _mm256_maskstore_ps(o, below(n as isize), vector(0, true)) };
            }
            return;
        }
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n = out.len().
            unsafe { _mm256_storeu_ps(o.add(i), vector(i, false)) };
            i += 8;
        }
        if i < n {
            // SAFETY: n ≥ 8, so outputs n − 8 .. n exist.
            unsafe { _mm256_storeu_ps(o.add(n - 8), vector(n - 8, false)) };
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims, FLAT_MAX};

    /// [`super::add_clamp`], 16 values at a time (`ADD`: whether `add` is added).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn add_clamp<const ADD: bool>(data: &mut [f32], add: f32, clamp: Clamp) {
        let (a, lo, hi) = (
            _mm512_set1_ps(add),
            _mm512_set1_ps(clamp.0),
            _mm512_set1_ps(clamp.1),
        );
        let n = data.len();
        let p = data.as_mut_ptr();
        let mut i = 0;
        while i < n {
            let m = lanes(0, (n - i) as isize);
            // SAFETY: the mask selects lanes `i .. min(i + 16, n)` of `data`.
            unsafe {
                let v = _mm512_maskz_loadu_ps(m, p.add(i));
                let v = if ADD { _mm512_add_ps(v, a) } else { v };
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand).
                let v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
                _mm512_mask_storeu_ps(p.add(i), m, v);
            }
            i += 16;
        }
    }

    /// Lanes `lo..hi` set (clamped to `0..16`).
    #[inline(always)]
    pub(crate) fn lanes(lo: isize, hi: isize) -> __mmask16 {
        let below = |n: isize| -> u32 {
            if n >= 16 {
                0xffff
            } else if n <= 0 {
                0
            } else {
                (1u32 << n) - 1
            }
        };
        (below(hi) & !below(lo)) as __mmask16
    }

    /// Masks of a chunk of `m` outputs that reaches past a border of the row (`w` columns),
    /// its first output's left tap at column `c0` (stride `sx` of 1 or 2): per tap `kx`, the
    /// output lanes whose input column `c0 + sx·j + kx` lies in `0..w`; and at stride 2, per
    /// load of 16 columns from `c0`, `c0 + 16`, `c0 + 32`, the lanes inside the row and among
    /// the `2m + 1` columns the outputs read.
    #[inline(always)]
    pub(crate) fn border_masks(
        c0: isize,
        m: isize,
        w: isize,
        sx: usize,
    ) -> ([__mmask16; 3], [__mmask16; 3]) {
        let shift = (sx - 1) as u32; // division by sx ∈ {1, 2}
        let tap = |kx: isize| {
            let c = c0 + kx;
            // j ≥ ⌈−c / sx⌉ and j ≤ ⌊(w − 1 − c) / sx⌋.
            let first = if c >= 0 {
                0
            } else {
                (-c + sx as isize - 1) >> shift
            };
            let end = if w - 1 - c < 0 {
                0
            } else {
                ((w - 1 - c) >> shift) + 1
            };
            lanes(first, end.min(m))
        };
        let need = w.min(c0 + 2 * m + 1);
        let load = |o: isize| lanes(-(c0 + o), need - (c0 + o));
        ([tap(0), tap(1), tap(2)], [load(0), load(16), load(32)])
    }

    /// Input columns `c0 + SX·j + kx` of lanes `j`, for `kx` = 0, 1, 2, from `p` (a row):
    /// masked loads (`om` per tap at stride 1; at stride 2 three loads of 16 columns from
    /// `c0`, `c0 + 16`, `c0 + 32` under `ld`, de-interleaved).
    ///
    /// # Safety
    /// Every lane the masks select lies inside the row.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    pub(crate) unsafe fn taps<const SX: usize>(
        p: *const f32,
        c0: isize,
        om: &[__mmask16; 3],
        ld: &[__mmask16; 3],
    ) -> [__m512; 3] {
        let at = |c: isize| p.wrapping_offset(c);
        // SAFETY: the caller's masks select only lanes inside the row.
        unsafe {
            if SX == 1 {
                return [
                    _mm512_maskz_loadu_ps(om[0], at(c0)),
                    _mm512_maskz_loadu_ps(om[1], at(c0 + 1)),
                    _mm512_maskz_loadu_ps(om[2], at(c0 + 2)),
                ];
            }
            let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            let a = _mm512_maskz_loadu_ps(ld[0], at(c0));
            let b = _mm512_maskz_loadu_ps(ld[1], at(c0 + 16));
            let t = _mm512_maskz_loadu_ps(ld[2], at(c0 + 32));
            let x0 = _mm512_permutex2var_ps(a, even, b);
            let x1 = _mm512_permutex2var_ps(a, odd, b);
            // Columns 2, 4, …, 32: the even ones moved down a lane, column 32 in the top lane.
            let x2 = _mm512_castsi512_ps(_mm512_alignr_epi32(
                _mm512_castps_si512(t),
                _mm512_castps_si512(x0),
                1,
            ));
            [x0, x1, x2]
        }
    }

    /// Whether [`conv_flat_wide`] computes `s`: stride 1, padding 1 on every side, rows of at
    /// least 16 pixels (any number of rows).
    pub(crate) const fn flat_wide_applies(s: &Conv2dShape) -> bool {
        super::same_stride1(s) && s.w >= 16
    }

    /// [`super::conv`] for the "same" planes of [`flat_wide_applies`]: each plane one flat run
    /// of 16-pixel vectors as in [`conv_flat`], the same taps in the same order (so the same
    /// bits as the row kernel), but without a mask table: the vectors whose taps all lie in the
    /// plane (from pixel `w + 1` while the last lane's bottom-right tap is inside) load all 16
    /// lanes of each tap and mask only the left taps of the lane in column 0 and the right taps
    /// of the lane in column `w − 1` (rows of at least 16 pixels: at most one of each per
    /// vector); the vectors of the first and last rows mask their loads as well. No per-row
    /// setup and no partial vectors at row ends: in MobileNetV2 144 × 56² took 0.10 ms in the
    /// network against 0.16–0.17 with the row kernel, 192 × 28² 0.035 against 0.047 with the
    /// mask table of [`conv_flat`], 32 × 112² 0.075–0.09 against 0.097–0.10.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn conv_flat_wide(
        s: &Conv2dShape,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        let (h, w) = (s.h, s.w);
        let n = h * w;
        let planes = s.n * s.c_out;
        // What the loads and stores below rest on, checked once per call.
        assert!(flat_wide_applies(s) && super::buffers_fit(s, input, n, output, n, weights, bias));
        let chunks = n.div_ceil(16);
        // Vectors first..end have every tap inside the plane: p ≥ w + 1 and p + 16 + w ≤ n − 1.
        let first = (w + 1).div_ceil(16).min(chunks);
        let end = if n >= w + 17 {
            (n - w - 17) / 16 + 1
        } else {
            0
        }
        .clamp(first, chunks);
        let offset: [isize; 9] = core::array::from_fn(|t| {
            (t / 3) as isize * w as isize - w as isize + (t % 3) as isize - 1
        });
        let (lo, hi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
        let nz = _mm512_set1_ps(-0.0);
        let bit = |j: usize| if j < 16 { 1u16 << j } else { 0 };
        for i in 0..planes {
            let c = i % s.c_out;
            let x = input[i * n..].as_ptr();
            let yp = output[i * n..].as_mut_ptr();
            let k: [__m512; 9] = core::array::from_fn(|t| _mm512_set1_ps(weights[c * 9 + t]));
            let b = _mm512_set1_ps(bias.map_or(0.0, |b| b[c]));
            // Column of vector ci's first pixel.
            let col_of = |ci: usize| (ci * 16) % w;
            // Lanes of column 0 (no left tap) and of column w − 1 (no right tap).
            let edges = |col: usize| (!bit(if col == 0 { 0 } else { w - col }), !bit(w - 1 - col));
            let finish = |acc: [__m512; 3]| {
                let v = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]);
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand).
                _mm512_min_ps(hi, _mm512_max_ps(lo, v))
            };
            // A vector with masked loads (the plane's first and last rows).
            let masked = |ci: usize| {
                let p = ci * 16;
                let (left, right) = edges(col_of(ci));
                let tail = lanes(0, (n - p) as isize);
                let cols = [tail & left, tail, tail & right];
                let rows = [
                    lanes(w as isize - p as isize, 16),
                    0xffff,
                    lanes(0, ((h - 1) * w) as isize - p as isize),
                ];
                let mut acc = [b, nz, nz];
                for (ky, a) in acc.iter_mut().enumerate() {
                    for (kx, &col_mask) in cols.iter().enumerate() {
                        let t = ky * 3 + kx;
                        let m = rows[ky] & col_mask;
                        // SAFETY: a lane is loaded only if its input pixel lies in the plane.
                        let v = unsafe {
                            _mm512_maskz_loadu_ps(m, x.wrapping_offset(p as isize + offset[t]))
                        };
                        *a = _mm512_mask3_fmadd_ps(k[t], v, *a, m);
                    }
                }
                // SAFETY: lanes p .. min(p + 16, n) of the plane's output.
                unsafe { _mm512_mask_storeu_ps(yp.add(p), tail, finish(acc)) };
            };
            for ci in 0..first {
                masked(ci);
            }
            let mut col = col_of(first);
            for ci in first..end {
                let p = ci * 16;
                let (left, right) = edges(col);
                let m = [left, 0xffff, right];
                let mut acc = [b, nz, nz];
                for (ky, a) in acc.iter_mut().enumerate() {
                    for (kx, &col_mask) in m.iter().enumerate() {
                        let t = ky * 3 + kx;
                        // SAFETY: w + 1 ≤ p and p + 15 + w + 1 < n: every lane is in the plane.
                        let v =
                            unsafe { _mm512_loadu_ps(x.wrapping_offset(p as isize + offset[t])) };
                        *a = _mm512_mask3_fmadd_ps(k[t], v, *a, col_mask);
                    }
                }
                // SAFETY: p + 16 ≤ n.
                unsafe { _mm512_storeu_ps(yp.add(p), finish(acc)) };
                col += 16;
                if col >= w {
                    col -= w;
                }
            }
            for ci in end..chunks {
                masked(ci);
            }
        }
    }

    /// [`super::conv`] for small "same" planes ([`super::flat_applies`]; those with rows of 16 pixels
    /// or more run [`conv_flat_wide`]): output pixel `p` (row-major)
    /// reads input pixel `p + (ky − 1)·w + kx − 1` for tap `(ky, kx)`, a constant offset, so the
    /// plane is one flat run of 16-pixel vectors whatever its width, each tap a load masked to
    /// the lanes whose input pixel exists (the masks, the same for every plane, are computed
    /// once). A 7 × 7 plane is 4 vectors instead of 7 rows of 7 lanes with per-row masks.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn conv_flat(
        s: &Conv2dShape,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        let (h, w) = (s.h, s.w);
        let hw = h * w;
        let mut masks = [[0 as __mmask16; 9]; FLAT_MAX / 16];
        let masks = flat_masks(&mut masks, hw, w, 1, h, w);
        let offset: [isize; 9] = core::array::from_fn(|t| {
            (t / 3) as isize * w as isize - w as isize + (t % 3) as isize - 1
        });
        let planes = input.chunks_exact(hw).zip(output.chunks_exact_mut(hw));
        for (i, (x, y)) in planes.take(s.n * s.c_out).enumerate() {
            let c = i % s.c_out;
            let src = core::array::from_fn(|t| x.as_ptr().wrapping_offset(offset[t]));
            let b = bias.map_or(0.0, |b| b[c]);
            // SAFETY: a lane's mask bit is set only if its input pixel p + offset lies in the
            // plane (`x` holds h·w values).
            unsafe { flat_plane(&src, masks, &weights[c * 9..][..9], b, clamp, y) };
        }
    }

    /// The tap masks of a flat run ([`conv_flat`], `depthwise_phases`), into `masks` and
    /// returned for its `n.div_ceil(16)` chunks: `masks[c][t]` has lane `j` set when output
    /// `p = 16c + j < n` (row-major, rows of `ow` outputs) has tap `t`'s input pixel
    /// `(stride·oy + ky − 1, stride·ox + kx − 1)` inside an `h × w` plane.
    pub(crate) fn flat_masks(
        masks: &mut [[__mmask16; 9]],
        n: usize,
        ow: usize,
        stride: usize,
        h: usize,
        w: usize,
    ) -> &[[__mmask16; 9]] {
        let chunks = n.div_ceil(16);
        for (c, m) in masks.iter_mut().enumerate().take(chunks) {
            for j in 0..16 {
                let p = c * 16 + j;
                if p >= n {
                    break;
                }
                let (oy, ox) = (p / ow, p % ow);
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (iy, ix) = (
                            (stride * oy + ky).wrapping_sub(1),
                            (stride * ox + kx).wrapping_sub(1),
                        );
                        if iy < h && ix < w {
                            m[ky * 3 + kx] |= 1 << j;
                        }
                    }
                }
            }
        }
        &masks[..chunks]
    }

    /// One plane of a flat run: output chunk `c` (16 values of `y` from `16c`, the last cut
    /// at `y.len()`) is `clip(bias + Σ_t k[t]·x_t)`, `x_t` the 16 values at `src[t] + 16c`
    /// under `masks[c][t]` (a masked-off lane reads nothing and adds nothing), summed per
    /// kernel row from `bias`, −0, −0, the rows then added in order.
    ///
    /// # Safety
    /// Every lane whose mask bit is set must address a readable `f32`; `masks` holds
    /// `y.len().div_ceil(16)` chunks.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    pub(crate) unsafe fn flat_plane(
        src: &[*const f32; 9],
        masks: &[[__mmask16; 9]],
        k9: &[f32],
        bias: f32,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let (lo, hi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
        let nz = _mm512_set1_ps(-0.0);
        let k: [__m512; 9] = core::array::from_fn(|t| _mm512_set1_ps(k9[t]));
        let b = _mm512_set1_ps(bias);
        let n = y.len();
        let yp = y.as_mut_ptr();
        for (ci, m) in masks.iter().enumerate().take(n.div_ceil(16)) {
            let p = (ci * 16) as isize;
            // SAFETY: the caller's contract; other addresses are formed with
            // `wrapping_offset` and not read.
            let tap = |t: usize| unsafe { _mm512_maskz_loadu_ps(m[t], src[t].wrapping_offset(p)) };
            let mut acc = [b, nz, nz];
            for (ky, a) in acc.iter_mut().enumerate() {
                for kx in 0..3 {
                    let t = ky * 3 + kx;
                    *a = _mm512_mask3_fmadd_ps(k[t], tap(t), *a, m[t]);
                }
            }
            let v = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]);
            // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand).
            let v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
            let store = lanes(0, (n - ci * 16).min(16) as isize);
            // SAFETY: lanes p .. min(p + 16, n) of `y` exist.
            unsafe { _mm512_mask_storeu_ps(yp.wrapping_offset(p), store, v) };
        }
    }

    /// A run of at most 16 outputs of a row from `ox0` that may reach past its borders, with
    /// its masks ([`border_masks`]).
    #[derive(Clone, Copy)]
    struct Chunk {
        ox0: usize,
        m: isize,
        c0: isize,
        om: [__mmask16; 3],
        ld: [__mmask16; 3],
    }

    /// How many output rows ahead [`conv`] prefetches its input rows at stride 2. In
    /// MobileNetV2 these layers read their input from the L2 and L3, where the 1×1 layer
    /// before them left it, and the hardware prefetchers did not keep up with the three row
    /// streams: 96 × 112² → 56² took 0.23–0.27 ms in the network without the prefetches and
    /// 0.12–0.13 with them.
    const PREFETCH_ROWS: usize = 4;

    /// At most this many border chunks per row are kept (the rest are recomputed per row).
    const CACHED: usize = 4;

    /// One plane of [`super::conv`] at horizontal stride `SX` (1 or 2). Per output row with all three input rows
    /// present, the outputs whose taps all lie in the row run 16 at a time without masks; the
    /// others (border columns, and the remainder) run as masked chunks whose masks are computed
    /// once per plane; rows with a missing input row run entirely as masked chunks.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn conv<const SX: usize>(
        s: &Conv2dShape,
        d: &ConvDims,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        let (w, ow) = (s.w, d.out_w);
        let (lo, hi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
        let nz = _mm512_set1_ps(-0.0);
        let wi = w as isize;
        let pad_left = s.pad_left as isize;
        // Outputs lo_in..hi_in have all three taps in the row. A row runs a masked chunk over
        // [0, a) (one vector when the left border is at most 16 outputs wide), then vectors of
        // inside outputs without masks up to fast_end, then masked chunks to the end.
        let lo_in = s.pad_left.div_ceil(SX).min(ow);
        let hi_in = if w + s.pad_left >= 3 {
            ((w + s.pad_left - 3) / SX + 1).clamp(lo_in, ow)
        } else {
            lo_in
        };
        let a = match lo_in {
            0 => 0,
            1..=16 => ow.min(16),
            _ => lo_in,
        };
        let fast_end = a + hi_in.saturating_sub(a) / 16 * 16;
        // What the unmasked loop's safety rests on, checked once per call.
        assert!(fast_end <= hi_in.max(a) && hi_in <= ow && (a == 0 || a >= lo_in));
        let chunk = |ox0: usize, end: usize| {
            let m = (end - ox0).min(16) as isize;
            let c0 = (ox0 * SX) as isize - pad_left;
            let (om, ld) = border_masks(c0, m, wi, SX);
            Chunk { ox0, m, c0, om, ld }
        };
        // The masked chunks of a row with the fast run (`[0, a)` and `[fast_end, ow)`) and
        // of a row without it (`[0, ow)`), the first CACHED of each.
        let split = |ranges: [(usize, usize); 2]| {
            let mut cached = [chunk(0, ow.min(1)); CACHED];
            let mut count = 0;
            for (from, to) in ranges {
                let mut ox0 = from;
                while ox0 < to {
                    if count < CACHED {
                        cached[count] = chunk(ox0, to);
                    }
                    count += 1;
                    ox0 += 16;
                }
            }
            (cached, count)
        };
        let without = split([(0, ow), (ow, ow)]);
        // Without a full vector of inside outputs, whole rows run as masked chunks.
        let with_fast = if fast_end > a {
            split([(0, a), (fast_end, ow)])
        } else {
            without
        };
        let (hw, ohw) = (s.h * s.w, d.out_h * d.out_w);
        let planes = output[..d.output_len].chunks_exact_mut(ohw);
        for (p, y) in planes.enumerate() {
            let c = p % s.c_out;
            let x = &input[p * hw..][..hw];
            let kv = |i: usize| _mm512_set1_ps(weights[c * 9 + i]);
            let kr = [
                [kv(0), kv(1), kv(2)],
                [kv(3), kv(4), kv(5)],
                [kv(6), kv(7), kv(8)],
            ];
            let b = _mm512_set1_ps(bias.map_or(0.0, |b| b[c]));
            let edge = |out: &mut [f32], rows: &[Option<*const f32>; 3], c: &Chunk| {
                let mut acc = [b, nz, nz];
                for ((a, p), kk) in acc.iter_mut().zip(rows).zip(&kr) {
                    let Some(p) = *p else { continue };
                    // SAFETY: the chunk's masks select only columns in `0..w` of this row.
                    let t = unsafe { taps::<SX>(p, c.c0, &c.om, &c.ld) };
                    for ((&t, &kx), &om) in t.iter().zip(kk).zip(&c.om) {
                        *a = _mm512_mask3_fmadd_ps(kx, t, *a, om);
                    }
                }
                let v = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]);
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand).
                let v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
                // SAFETY: lanes `ox0 .. ox0 + m` of `out` exist.
                unsafe { _mm512_mask_storeu_ps(out.as_mut_ptr().add(c.ox0), lanes(0, c.m), v) };
            };
            for (oy, out) in y.chunks_exact_mut(ow).take(d.out_h).enumerate() {
                let top = oy * s.stride_h;
                if SX == 2 {
                    // The input rows PREFETCH_ROWS output rows ahead, into L1 (past the plane's
                    // end: the next plane's first rows, contiguous; past the tensor's, nothing).
                    let first = (top + 2 + PREFETCH_ROWS * s.stride_h).saturating_sub(s.pad_top);
                    let ahead = x.as_ptr().wrapping_add(first * w);
                    let mut o = 0;
                    while o < s.stride_h * w {
                        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(o).cast());
                        o += 16;
                    }
                }
                let row = |ky: usize| {
                    (top + ky)
                        .checked_sub(s.pad_top)
                        .filter(|&iy| iy < s.h)
                        .map(|iy| x[iy * w..][..w].as_ptr())
                };
                let rows = [row(0), row(1), row(2)];
                let full = rows.iter().all(Option::is_some);
                // By reference: copying the cached chunks per row through the stack stalled on
                // store forwarding (46 % of a 7 × 7 layer's time).
                let ((cached, count), ranges) = if full && fast_end > a {
                    (&with_fast, [(0, a), (fast_end, ow)])
                } else {
                    (&without, [(0, ow), (ow, ow)])
                };
                let count = *count;
                if count <= CACHED {
                    for c in &cached[..count] {
                        edge(out, &rows, c);
                    }
                } else {
                    for (from, to) in ranges {
                        for ox0 in (from..to).step_by(16) {
                            edge(out, &rows, &chunk(ox0, to));
                        }
                    }
                }
                let (Some(p0), Some(p1), Some(p2)) = (rows[0], rows[1], rows[2]) else {
                    continue;
                };
                let all = [0xffff; 3];
                let ld = [0xffff, 0xffff, 1];
                let mut ox0 = a;
                while ox0 < fast_end {
                    let c0 = (ox0 * SX) as isize - pad_left;
                    // SAFETY: outputs `ox0 .. ox0 + 16` lie in `a..hi_in` ⊆ `lo_in..hi_in` (`a` is 0
                    // or at least `lo_in`), so all their taps
                    // (and, at stride 2, the 33 columns from `c0`) lie in the row.
                    let (t0, t1, t2) = unsafe {
                        (
                            taps::<SX>(p0, c0, &all, &ld),
                            taps::<SX>(p1, c0, &all, &ld),
                            taps::<SX>(p2, c0, &all, &ld),
                        )
                    };
                    let a0 = _mm512_fmadd_ps(kr[0][0], t0[0], b);
                    let a1 = _mm512_mul_ps(kr[1][0], t1[0]);
                    let a2 = _mm512_mul_ps(kr[2][0], t2[0]);
                    let a0 = _mm512_fmadd_ps(kr[0][1], t0[1], a0);
                    let a1 = _mm512_fmadd_ps(kr[1][1], t1[1], a1);
                    let a2 = _mm512_fmadd_ps(kr[2][1], t2[1], a2);
                    let a0 = _mm512_fmadd_ps(kr[0][2], t0[2], a0);
                    let a1 = _mm512_fmadd_ps(kr[1][2], t1[2], a1);
                    let a2 = _mm512_fmadd_ps(kr[2][2], t2[2], a2);
                    let v = _mm512_add_ps(_mm512_add_ps(a0, a1), a2);
                    let v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
                    // SAFETY: outputs `ox0 .. ox0 + 16` are below `fast_end ≤ ow`.
                    unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(ox0), v) };
                    ox0 += 16;
                }
            }
        }
    }
}
