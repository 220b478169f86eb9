//! Reductions over axes of an NCHW tensor: softmax along one axis (ONNX Softmax, opset 13
//! semantics: normalised over that axis alone) and the mean over any set of axes (ONNX
//! ReduceMean with `keepdims = 1`).

use super::tensor::Shape4;
use crate::error::{Error, Result};

/// The dimensions of `shape` as an array `[n, c, h, w]`.
const fn dims(s: &Shape4) -> [usize; 4] {
    [s.n, s.c, s.h, s.w]
}

/// Softmax in place along `axis` (0 = N, 1 = C, 2 = H, 3 = W) of the NCHW tensor `data`:
/// each line `x` along the axis becomes `e^(xᵢ − max x) / Σⱼ e^(xⱼ − max x)`. Subtracting the
/// maximum keeps every exponent ≤ 0, so nothing overflows, the largest term is exactly 1 and the
/// sum is ≥ 1; the result is unchanged by adding a constant to a line (up to rounding) and sums
/// to 1 within `(len + 2)·ε`. A line holding `+∞` or NaN gives NaN. For softmax over a flat
/// `batch × classes` matrix use the shape `batch × classes × 1 × 1` and axis 1.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::InvalidArgument`] if `axis > 3`;
/// [`Error::BufferTooSmall`] if `data` is shorter than the tensor. Nothing is written on error.
pub fn softmax(shape: &Shape4, axis: usize, data: &mut [f32]) -> Result<()> {
    let len = shape.elements()?;
    if axis > 3 {
        return Err(Error::InvalidArgument);
    }
    let data = data.get_mut(..len).ok_or(Error::BufferTooSmall)?;
    let d = dims(shape);
    let (axis_len, inner) = (d[axis], d[axis + 1..].iter().product::<usize>());
    for block in data.chunks_exact_mut(axis_len * inner) {
        for i in 0..inner {
            let line = || (0..axis_len).map(|k| k * inner + i);
            let max = line().fold(f32::NEG_INFINITY, |m, k| m.max(block[k]));
            let mut sum = 0.0f32;
            for k in line() {
                let e = libm::expf(block[k] - max);
                block[k] = e;
                sum += e;
            }
            for k in line() {
                block[k] /= sum;
            }
        }
    }
    Ok(())
}

/// The shape of the mean of `shape` over the axes marked in `axes` (`[n, c, h, w]`): those axes
/// become 1 (ONNX `keepdims = 1`).
pub fn reduce_shape(shape: &Shape4, axes: [bool; 4]) -> Shape4 {
    let one = |keep: usize, reduce: bool| if reduce { 1 } else { keep };
    Shape4 {
        n: one(shape.n, axes[0]),
        c: one(shape.c, axes[1]),
        h: one(shape.h, axes[2]),
        w: one(shape.w, axes[3]),
    }
}

/// The mean of `input` (NCHW, `shape`) over the axes marked in `axes` (`[n, c, h, w]`; for
/// example `[false, false, true, true]` is the spatial mean of each channel, `[false, true,
/// false, false]` the mean over channels at each pixel) into `output`, of
/// [`reduce_shape`]`(shape, axes)` (packed NCHW). No axis marked copies the input. Sums in `f32`:
/// each row's, then the rows in memory order.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `input` is shorter than the
/// tensor or `output` than the reduced one. Nothing is written on error.
pub fn reduce_mean(
    shape: &Shape4,
    axes: [bool; 4],
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    let len = shape.elements()?;
    let os = reduce_shape(shape, axes);
    let out_len = os.elements()?;
    if input.len() < len || output.len() < out_len {
        return Err(Error::BufferTooSmall);
    }
    let out = &mut output[..out_len];
    out.fill(0.0);
    let mut count = 1usize;
    for (d, &r) in dims(shape).iter().zip(&axes) {
        if r {
            count *= d; // ≤ len, which fits
        }
    }
    let mut i = 0;
    for n in 0..shape.n {
        for c in 0..shape.c {
            for y in 0..shape.h {
                let o = os.index(
                    if axes[0] { 0 } else { n },
                    if axes[1] { 0 } else { c },
                    if axes[2] { 0 } else { y },
                    0,
                );
                let row = &input[i..i + shape.w];
                if axes[3] {
                    out[o] += row.iter().sum::<f32>();
                } else {
                    for (acc, &v) in out[o..o + shape.w].iter_mut().zip(row) {
                        *acc += v;
                    }
                }
                i += shape.w;
            }
        }
    }
    let inv = count as f32;
    out.iter_mut().for_each(|v| *v /= inv);
    Ok(())
}
