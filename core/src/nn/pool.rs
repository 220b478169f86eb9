//! 2-D pooling of NCHW `f32` tensors with ONNX MaxPool / AveragePool semantics: kernel, stride,
//! asymmetric padding, floor or ceil output size, and for averages whether padding counts in the
//! divisor; plus global average pooling (ONNX GlobalAveragePool).
//!
//! Output size per axis, with `P = in + pad_begin + pad_end`:
//! * floor mode: `⌊(P − k) / s⌋ + 1`;
//! * ceil mode: `⌈(P − k) / s⌉ + 1`, less one if the last window would start at or past
//!   `in + pad_begin`, i.e. entirely in the end padding or beyond (ONNX's rule, shared with
//!   PyTorch: the last window must start inside the input or the left padding).
//!
//! In ceil mode the last window may reach past the end padding; that overhang is never counted.
//! Max pooling ignores padding (it is −∞). Average pooling divides the sum of the input
//! elements in a window by the number of input elements in it (`count_include_pad = false`, the
//! ONNX default) or by the window's size clipped to the padded input (`true`, as PyTorch and
//! ONNX Runtime do).

use super::tensor::{checked_bytes, checked_product, Shape4};
use crate::error::{Error, Result};

/// Geometry of one 2-D pooling layer. Lengths in elements; the output size follows from the rest
/// ([`Pool2dShape::dims`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2dShape {
    /// Batch size.
    pub n: usize,
    /// Channels (pooled independently).
    pub c: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Window height.
    pub kh: usize,
    /// Window width.
    pub kw: usize,
    /// Vertical stride.
    pub stride_h: usize,
    /// Horizontal stride.
    pub stride_w: usize,
    /// Padding rows above the input (each `< kh`).
    pub pad_top: usize,
    /// Padding columns left of the input (`< kw`).
    pub pad_left: usize,
    /// Padding rows below the input (`< kh`).
    pub pad_bottom: usize,
    /// Padding columns right of the input (`< kw`).
    pub pad_right: usize,
    /// Round the output size up instead of down (ONNX `ceil_mode = 1`).
    pub ceil_mode: bool,
    /// Average pooling only: count padding elements in the divisor (ONNX `count_include_pad`).
    pub count_include_pad: bool,
}

/// Sizes derived from a valid [`Pool2dShape`] (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoolDims {
    /// Output height.
    pub out_h: usize,
    /// Output width.
    pub out_w: usize,
    /// Input length `n·c·h·w`.
    pub input_len: usize,
    /// Output length `n·c·out_h·out_w`.
    pub output_len: usize,
}

impl Pool2dShape {
    /// A `kh × kw` pooling of `n × c × h × w` with stride equal to the window (non-overlapping,
    /// as ONNX pooling layers are usually configured), no padding, floor mode, padding not
    /// counted; change the public fields for the rest.
    pub const fn new(n: usize, c: usize, h: usize, w: usize, kh: usize, kw: usize) -> Self {
        Self {
            n,
            c,
            h,
            w,
            kh,
            kw,
            stride_h: kh,
            stride_w: kw,
            pad_top: 0,
            pad_left: 0,
            pad_bottom: 0,
            pad_right: 0,
            ceil_mode: false,
            count_include_pad: false,
        }
    }

    /// Validates the shape and derives the output size (module docs) and buffer lengths.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] if a size or stride is 0; [`Error::InvalidArgument`] if a padding is
    /// not smaller than the window along its axis (a window could then hold padding only);
    /// [`Error::SizeMismatch`] if the window is larger than the padded input;
    /// [`Error::Overflow`] if a length (or its byte count) overflows.
    pub fn dims(&self) -> Result<PoolDims> {
        let s = self;
        if [s.n, s.c, s.h, s.w, s.kh, s.kw, s.stride_h, s.stride_w].contains(&0) {
            return Err(Error::ZeroSize);
        }
        if s.pad_top >= s.kh || s.pad_bottom >= s.kh || s.pad_left >= s.kw || s.pad_right >= s.kw {
            return Err(Error::InvalidArgument);
        }
        let out_h = out_size(s.h, s.pad_top, s.pad_bottom, s.kh, s.stride_h, s.ceil_mode)?;
        let out_w = out_size(s.w, s.pad_left, s.pad_right, s.kw, s.stride_w, s.ceil_mode)?;
        // The padded area bounds every window's `count_include_pad` divisor (the sums cannot
        // overflow: `out_size` checked them).
        checked_product(&[
            s.h + s.pad_top + s.pad_bottom,
            s.w + s.pad_left + s.pad_right,
        ])?;
        Ok(PoolDims {
            out_h,
            out_w,
            input_len: checked_bytes(checked_product(&[s.n, s.c, s.h, s.w])?)?,
            output_len: checked_bytes(checked_product(&[s.n, s.c, out_h, out_w])?)?,
        })
    }
}

/// Output length along one axis (module docs).
fn out_size(
    size: usize,
    pa: usize,
    pb: usize,
    k: usize,
    stride: usize,
    ceil: bool,
) -> Result<usize> {
    // pa, pb < k, so these sums cannot overflow unless `size` is near usize::MAX.
    let padded = size
        .checked_add(pa)
        .and_then(|v| v.checked_add(pb))
        .ok_or(Error::Overflow)?;
    let span = padded.checked_sub(k).ok_or(Error::SizeMismatch)?;
    if !ceil {
        return Ok(span / stride + 1);
    }
    let mut out = span.div_ceil(stride) + 1;
    // The last window must start inside the input or the leading padding.
    if (out - 1)
        .checked_mul(stride)
        .is_none_or(|start| start >= size + pa)
    {
        out -= 1;
    }
    Ok(out)
}

/// The input range `lo..hi` covered by output `o` along one axis, and the window's extent clipped
/// to the padded input (the `count_include_pad` divisor along this axis).
pub(super) fn window(
    o: usize,
    stride: usize,
    k: usize,
    pa: usize,
    size: usize,
    pb: usize,
) -> (usize, usize, usize) {
    let start = o * stride; // in padded coordinates
    let end = start.saturating_add(k);
    let end_padded = end.min(size + pa + pb);
    let lo = start.saturating_sub(pa);
    let hi = end.saturating_sub(pa).min(size);
    (lo, hi.max(lo), end_padded - start)
}

fn check(shape: &Pool2dShape, input: &[f32], output: &[f32]) -> Result<PoolDims> {
    let d = shape.dims()?;
    if input.len() < d.input_len || output.len() < d.output_len {
        return Err(Error::BufferTooSmall);
    }
    Ok(d)
}

/// Runs `f(plane, y0..y1, x0..x1, padded_area)` for every output of every plane.
fn pool(
    s: &Pool2dShape,
    d: &PoolDims,
    input: &[f32],
    output: &mut [f32],
    f: impl Fn(&[f32], (usize, usize), (usize, usize), usize) -> f32,
) {
    let (hw, ohw) = (s.h * s.w, d.out_h * d.out_w);
    for (x, y) in input[..d.input_len]
        .chunks_exact(hw)
        .zip(output[..d.output_len].chunks_exact_mut(ohw))
    {
        for oy in 0..d.out_h {
            let (y0, y1, ah) = window(oy, s.stride_h, s.kh, s.pad_top, s.h, s.pad_bottom);
            for ox in 0..d.out_w {
                let (x0, x1, aw) = window(ox, s.stride_w, s.kw, s.pad_left, s.w, s.pad_right);
                y[oy * d.out_w + ox] = f(x, (y0, y1), (x0, x1), ah * aw);
            }
        }
    }
}

/// Max pooling (ONNX MaxPool, one output): each output is the largest input element in its
/// window; padding never wins. `input` is `n × c × h × w`, `output` `n × c × out_h × out_w`
/// ([`Pool2dShape::dims`]); `count_include_pad` is ignored. A NaN in a window is skipped unless
/// every element is NaN. A zero maximum is returned as +0 (the sign of a tie between +0 and −0
/// would otherwise depend on the order the window is visited in, which differs between the
/// instruction-set levels; the result is the same at every level).
///
/// # Errors
/// Those of [`Pool2dShape::dims`]; [`Error::BufferTooSmall`] if `input` or `output` is shorter
/// than its tensor. Nothing is written on error.
pub fn max_pool2d(shape: &Pool2dShape, input: &[f32], output: &mut [f32]) -> Result<()> {
    max_pool2d_from(shape, input, output, true)
}

/// [`max_pool2d`], told whether `input` is likely still in L2 or L3 (`cached`), which decides
/// the AVX-512 kernel for 3 × 3 / 2 pools of 16 planes or more (the same bits either way; see
/// `pool_channels::prefers`). The plan passes `false` when a convolution just wrote the
/// input (its weights and input went through the caches after the output).
pub(crate) fn max_pool2d_from(
    shape: &Pool2dShape,
    input: &[f32],
    output: &mut [f32],
    cached: bool,
) -> Result<()> {
    let d = check(shape, input, output)?;
    let s = shape;
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let _ = cached; // one kernel only
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::pool_channels::prefers(s, &d, cached) && super::blocked::fast() {
        // SAFETY: x86-64-v4 is active (as below).
        #[allow(unsafe_code)]
        unsafe {
            super::pool_channels::avx512::max_pool(s, &d, input, output)
        };
        // The planes past the last multiple of 16: the row kernel (fewer than 16 planes, so
        // not this branch again).
        let (planes, done) = (s.n * s.c, s.n * s.c / 16 * 16);
        if done < planes {
            let rest = Pool2dShape {
                n: 1,
                c: planes - done,
                ..*s
            };
            let (hw, ohw) = (s.h * s.w, d.out_h * d.out_w);
            return max_pool2d(
                &rest,
                &input[done * hw..d.input_len],
                &mut output[done * ohw..d.output_len],
            );
        }
        return Ok(());
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if s.kw == 3 && s.stride_w <= 2 && super::blocked::fast() {
        // SAFETY: x86-64-v4 is active, so this CPU and OS support AVX-512 F/BW/DQ/VL, AVX2
        // and FMA (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            match s.stride_w {
                1 => avx512::max_pool3::<1>(s, &d, input, output),
                _ => avx512::max_pool3::<2>(s, &d, input, output),
            }
        };
        return Ok(());
    }
    let (w, ow) = (s.w, d.out_w);
    let xwin = |ox: usize| window(ox, s.stride_w, s.kw, s.pad_left, s.w, s.pad_right);
    // Separable: for each output row, the maximum over its window rows is taken column by column
    // into a stack buffer (contiguous, vectorised), then each output takes the maximum of its
    // window's columns there. Outputs go in groups whose windows span at most `COLS` columns.
    // `v > m` skips NaN (a comparison with NaN is false) and compiles to one `maxps`-like
    // instruction, where `f32::max` needs a NaN-handling sequence; the maximum of the non-NaN
    // values does not depend on the grouping. An output left at −∞ had only −∞ and NaN in its
    // window, or only NaN (or nothing): the rare second case is fixed up at the end.
    const COLS: usize = 512;
    if s.kw > COLS {
        // Windows wider than the buffer: one output at a time.
        pool(s, &d, input, output, |x, (y0, y1), (x0, x1), _| {
            let mut m = f32::NEG_INFINITY;
            let mut any = false;
            for row in x[y0 * w..y1 * w].chunks_exact(w) {
                for &v in &row[x0..x1] {
                    any |= !v.is_nan();
                    if v > m {
                        m = v;
                    }
                }
            }
            if any {
                m + 0.0 // −0 → +0; every other value unchanged
            } else {
                f32::NAN
            }
        });
        return Ok(());
    }
    let mut buf = [f32::NEG_INFINITY; COLS];
    let mut hbuf = [f32::NEG_INFINITY; COLS];
    // Outputs per group: their windows' union is at most (g − 1)·stride + kw ≤ COLS columns.
    let group = (COLS.saturating_sub(s.kw) / s.stride_w.max(1) + 1).max(1);
    // Outputs whose windows lie inside the input: ox·stride ≥ pad_left and
    // ox·stride − pad_left + kw ≤ w (an empty range when no window fits).
    let interior = {
        let lo = s.pad_left.div_ceil(s.stride_w);
        let hi = if w + s.pad_left >= s.kw {
            ((w + s.pad_left - s.kw) / s.stride_w + 1).min(ow)
        } else {
            0
        };
        (lo.min(ow), hi.max(lo.min(ow)))
    };
    for (x, y) in input[..d.input_len]
        .chunks_exact(s.h * w)
        .zip(output[..d.output_len].chunks_exact_mut(d.out_h * ow))
    {
        for (oy, yr) in y.chunks_exact_mut(ow).enumerate() {
            let (y0, y1, _) = window(oy, s.stride_h, s.kh, s.pad_top, s.h, s.pad_bottom);
            let rows = &x[y0 * w..y1 * w];
            let mut g0 = 0;
            while g0 < ow {
                let g1 = (g0 + group).min(ow);
                let c0 = xwin(g0).0;
                let c1 = xwin(g1 - 1).1.max(c0);
                let span_len = c1 - c0;
                let span = &mut buf[..span_len];
                span.fill(f32::NEG_INFINITY);
                for row in rows.chunks_exact(w) {
                    for (m, &v) in span.iter_mut().zip(&row[c0..c1]) {
                        // An unconditional store: LLVM turns the select into `maxps`.
                        *m = if v > *m { v } else { *m };
                    }
                }
                // Sliding maximum of `kw` columns: hbuf[j] = max(buf[j .. j + kw]), as `kw`
                // vectorised passes; a full-width window starting at column c reads hbuf[c − c0].
                let full = span_len >= s.kw;
                if full {
                    let n = span_len - s.kw + 1;
                    hbuf[..n].copy_from_slice(&buf[..n]);
                    for t in 1..s.kw {
                        for (m, &v) in hbuf[..n].iter_mut().zip(&buf[t..t + n]) {
                            *m = if v > *m { v } else { *m };
                        }
                    }
                }
                // Outputs lo..hi have windows inside the input: columns ox·stride − pad_left ..
                // + kw, all in the span.
                let (lo, hi) = if full {
                    (interior.0.clamp(g0, g1), interior.1.clamp(g0, g1))
                } else {
                    (g0, g0)
                };
                let (lo, hi) = (lo, hi.max(lo));
                let (left, rest) = yr[g0..g1].split_at_mut(lo - g0);
                let (mid, right) = rest.split_at_mut(hi - lo);
                let first = (lo * s.stride_w).wrapping_sub(s.pad_left + c0);
                for (i, o) in mid.iter_mut().enumerate() {
                    *o = hbuf[first + i * s.stride_w] + 0.0; // −0 → +0
                }
                let edges = (g0..lo).zip(left).chain((hi..g1).zip(right));
                for (ox, o) in edges {
                    // A window clipped by the padding.
                    let (x0, x1, _) = xwin(ox);
                    let mut m = f32::NEG_INFINITY;
                    for &v in &buf[x0 - c0..x1.max(x0) - c0] {
                        m = if v > m { v } else { m };
                    }
                    *o = m + 0.0; // −0 → +0
                }
                g0 = g1;
            }
            for (ox, o) in yr.iter_mut().enumerate() {
                if *o == f32::NEG_INFINITY {
                    let (x0, x1, _) = xwin(ox);
                    let any = rows
                        .chunks_exact(w)
                        .any(|row| row[x0..x1].iter().any(|v| !v.is_nan()));
                    if !any {
                        *o = f32::NAN;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Average pooling (ONNX AveragePool): each output is the sum of the input elements in its
/// window divided by their number, or with `count_include_pad` by the window's size clipped to
/// the padded input (module docs). Buffers as [`max_pool2d`]; sums in `f32`, in row order.
///
/// # Errors
/// As [`max_pool2d`].
pub fn avg_pool2d(shape: &Pool2dShape, input: &[f32], output: &mut [f32]) -> Result<()> {
    let d = check(shape, input, output)?;
    let (w, include) = (shape.w, shape.count_include_pad);
    pool(shape, &d, input, output, |x, (y0, y1), (x0, x1), area| {
        let mut sum = 0.0f32;
        for row in x[y0 * w..y1 * w].chunks_exact(w) {
            sum += row[x0..x1].iter().sum::<f32>();
        }
        let count = if include { area } else { (y1 - y0) * (x1 - x0) };
        sum / count as f32
    });
    Ok(())
}

/// Global average pooling (ONNX GlobalAveragePool): `output[n·c + c]` is the mean of plane
/// `(n, c)` of `input` (`n × c × h × w`); the output is `n × c` (an `n × c × 1 × 1` tensor).
/// The sum is in `f32` (no `f64`, which is software on FPU-only microcontrollers), over 16
/// interleaved partial sums (`plane_sum`), so that it vectorises; results differ from an
/// in-order sum by rounding only.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `input` is shorter than the tensor
/// or `output` than `n·c`. Nothing is written on error.
pub fn global_avg_pool(shape: &Shape4, input: &[f32], output: &mut [f32]) -> Result<()> {
    let len = shape.elements()?;
    let planes = shape.n * shape.c;
    if input.len() < len || output.len() < planes {
        return Err(Error::BufferTooSmall);
    }
    let hw = shape.plane_len();
    for (o, p) in output[..planes]
        .iter_mut()
        .zip(input[..len].chunks_exact(hw))
    {
        *o = plane_sum(p) / hw as f32;
    }
    Ok(())
}

/// The sum of `p` as 16 partial sums (element `i` into sum `i mod 16`), added pairwise at the
/// end, then the last `len mod 16` elements in order. An in-order sum is one chain of
/// dependent additions (SqueezeNet's 1000 × 13² global pooling took 0.055 ms, ONNX Runtime
/// 0.020); independent lanes vectorise at every level (SSE2 included).
fn plane_sum(p: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    let chunks = p.chunks_exact(16);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    let mut n = 16;
    while n > 1 {
        n /= 2;
        for i in 0..n {
            acc[i] += acc[i + n];
        }
    }
    rest.iter().fold(acc[0], |s, &v| s + v)
}

/// Max pooling with windows 3 columns wide at horizontal stride 1 or 2 (SqueezeNet's 3×3
/// stride-2 layers), 16 outputs of a row per AVX-512 vector: the taps are the depthwise 3×3
/// kernel's masked loads ([`super::depthwise::avx512::taps`]), a column outside the input a
/// masked-off lane that never wins. The separable path ran these layers at 0.5 ms for
/// 64 × 111² → 55² (ONNX Runtime: 0.05 ms), most of it in per-output scalar work. At stride 2
/// each output row prefetches the input rows of the row four rows below (perf put most of
/// the samples on the masked loads, waiting for the rows that the layer before had left in
/// L2 / L3).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(super) mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::super::depthwise::avx512::{border_masks, lanes, taps};
    use super::{window, Pool2dShape, PoolDims};

    /// Most 16-output chunks per row whose masks [`max_pool3`] computes once per call.
    const CACHED: usize = 64;

    /// How many output rows ahead [`max_pool3`] prefetches its input rows at stride 2.
    const PREFETCH_ROWS: usize = 4;

    /// [`super::max_pool2d`] for `kw = 3`, `stride_w = SX` (1 or 2). Each output is the maximum
    /// of its window's taps with `max(tap, m)`, which keeps `m` when the tap is NaN (the
    /// separable path's `if v > m { v } else { m }`), starting from −∞, plus +0 (a zero
    /// maximum is +0); an output left at −∞ (its window held only −∞ and NaN, or nothing) is
    /// NaN unless a tap is not NaN, as there.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn max_pool3<const SX: usize>(
        s: &Pool2dShape,
        d: &PoolDims,
        input: &[f32],
        output: &mut [f32],
    ) {
        let (w, ow) = (s.w, d.out_w);
        let wi = w as isize;
        let pad_left = s.pad_left as isize;
        let neg = _mm512_set1_ps(f32::NEG_INFINITY);
        let chunk = |ox0: usize| {
            let m = (ow - ox0).min(16) as isize;
            let c0 = (ox0 * SX) as isize - pad_left;
            let inside = m == 16 && c0 >= 0 && c0 + 15 * SX as isize + 2 < wi;
            let (om, ld) = if inside {
                ([0xffff; 3], [0xffff, 0xffff, 1])
            } else {
                border_masks(c0, m, wi, SX)
            };
            (m, c0, om, ld)
        };
        // The chunks' masks are the same on every row: computed once (they cost more than the
        // taps on SqueezeNet's 55-output rows, whose last chunk is masked) for rows of up to
        // CACHED chunks, read by reference.
        let chunks = ow.div_ceil(16);
        let mut cached = [(0, 0, [0; 3], [0; 3]); CACHED];
        for (i, c) in cached.iter_mut().enumerate().take(chunks) {
            *c = chunk(i * 16);
        }
        let planes = input[..d.input_len]
            .chunks_exact(s.h * w)
            .zip(output[..d.output_len].chunks_exact_mut(d.out_h * ow));
        for (x, y) in planes {
            for (oy, out) in y.chunks_exact_mut(ow).enumerate() {
                if SX == 2 {
                    // The input rows PREFETCH_ROWS output rows ahead, into L1 (past the plane's
                    // end: the next plane's first rows, contiguous; past the tensor's, nothing),
                    // as the stride-2 depthwise row kernel does.
                    let first = (oy * s.stride_h + s.kh - 1 + PREFETCH_ROWS * s.stride_h)
                        .saturating_sub(s.pad_top);
                    let ahead = x.as_ptr().wrapping_add(first * w);
                    let mut o = 0;
                    while o < s.stride_h * w {
                        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(o).cast());
                        o += 16;
                    }
                }
                let (y0, y1, _) = window(oy, s.stride_h, s.kh, s.pad_top, s.h, s.pad_bottom);
                let rows = &x[y0 * w..y1 * w];
                let mut ox0 = 0;
                while ox0 < ow {
                    let fresh;
                    let (m, c0, om, ld) = match cached.get(ox0 / 16) {
                        Some(c) if chunks <= CACHED => c,
                        _ => {
                            fresh = chunk(ox0);
                            &fresh
                        }
                    };
                    let (m, c0) = (*m, *c0);
                    let mut acc = neg;
                    for row in rows.chunks_exact(w) {
                        // SAFETY: `om` and `ld` select only columns in `0..w` of this row.
                        let t = unsafe { taps::<SX>(row.as_ptr(), c0, om, ld) };
                        for (&t, &k) in t.iter().zip(om) {
                            acc = _mm512_mask_max_ps(acc, k, t, acc);
                        }
                    }
                    // −0 → +0, as the separable path: a ±0 tie's sign follows the visit order.
                    let acc = _mm512_add_ps(acc, _mm512_setzero_ps());
                    let store = lanes(0, m);
                    // SAFETY: lanes `ox0 .. ox0 + m` of `out` exist.
                    unsafe { _mm512_mask_storeu_ps(out.as_mut_ptr().add(ox0), store, acc) };
                    let unset = _mm512_mask_cmpeq_ps_mask(store, acc, neg);
                    if unset != 0 {
                        for j in 0..m as usize {
                            if unset & (1 << j) == 0 {
                                continue;
                            }
                            let ox = ox0 + j;
                            let (x0, x1, _) =
                                window(ox, s.stride_w, s.kw, s.pad_left, s.w, s.pad_right);
                            let any = rows
                                .chunks_exact(w)
                                .any(|row| row[x0..x1].iter().any(|v| !v.is_nan()));
                            if !any {
                                out[ox] = f32::NAN;
                            }
                        }
                    }
                    ox0 += m as usize;
                }
            }
        }
    }
}
