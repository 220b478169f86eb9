//! Element-wise activations of NCHW `f32` tensors, applied in place ([`apply_activation`]), and
//! convolution with its bias and activation fused ([`conv2d_fused`]): what ONNX calls Relu, Clip
//! (ReLU6 is `Clip(0, 6)`), LeakyRelu, PRelu and Sigmoid. Every activation maps one value to one
//! value, so fusing it into the convolution is one pass over the output while it is still in
//! cache, and the result is bit-identical to running the two layers one after the other.

use super::conv::{conv2d_clamped, Conv2dShape, ConvMethod};
use super::depthwise::{add_clamp, Clamp, NO_CLAMP};
use super::tensor::Shape4;
use crate::error::{Error, Result};

/// An element-wise activation function (ONNX semantics).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activation {
    /// Identity: the tensor is left as it is.
    None,
    /// `max(x, 0)` (ONNX Relu).
    Relu,
    /// `min(max(x, 0), 6)` (ReLU6, ONNX `Clip(min = 0, max = 6)`).
    Relu6,
    /// `min(max(x, min), max)` (ONNX Clip); `min ≤ max`, neither NaN.
    Clip {
        /// Lower bound.
        min: f32,
        /// Upper bound.
        max: f32,
    },
    /// `x` for `x ≥ 0`, `alpha·x` otherwise (ONNX LeakyRelu, default `alpha = 0.01`).
    LeakyRelu {
        /// Slope for negative inputs (finite).
        alpha: f32,
    },
    /// `x` for `x ≥ 0`, `slope[c]·x` otherwise, one learned slope per channel `c` (ONNX PRelu
    /// with a `C × 1 × 1` or scalar slope); the slopes are passed to [`apply_activation`].
    PRelu,
    /// The logistic function `1 / (1 + e^(−x))` (ONNX Sigmoid).
    Sigmoid,
}

/// Checks `act` (and the PReLU slopes) for a tensor of `channels` channels.
///
/// # Errors
/// [`Error::InvalidArgument`] for a NaN or reversed Clip range, a non-finite LeakyRelu `alpha`,
/// or PRelu without slopes; [`Error::BufferTooSmall`] if more than one slope is given but fewer
/// than `channels`.
pub fn check_activation(
    act: Activation,
    channels: usize,
    prelu_slopes: Option<&[f32]>,
) -> Result<()> {
    match act {
        Activation::Clip { min, max } if min.is_nan() || max.is_nan() || min > max => {
            Err(Error::InvalidArgument)
        }
        Activation::LeakyRelu { alpha } if !alpha.is_finite() => Err(Error::InvalidArgument),
        Activation::PRelu => match prelu_slopes {
            None => Err(Error::InvalidArgument),
            Some(s) if s.len() == 1 || s.len() >= channels => Ok(()),
            Some(_) => Err(Error::BufferTooSmall),
        },
        _ => Ok(()),
    }
}

/// Applies `act` to every element of the NCHW tensor `data` of `shape`, in place. `prelu_slopes`
/// is only read for [`Activation::PRelu`]: either one slope shared by all channels or (at least)
/// `shape.c` slopes, one per channel. NaN inputs stay NaN (Relu, Clip and the rest compare, they
/// do not clamp NaN away). Elements of `data` past the tensor are not touched.
///
/// # Errors
/// Those of [`Shape4::elements`] and [`check_activation`]; [`Error::BufferTooSmall`] if `data`
/// is shorter than the tensor. Nothing is written on error.
pub fn apply_activation(
    act: Activation,
    shape: &Shape4,
    data: &mut [f32],
    prelu_slopes: Option<&[f32]>,
) -> Result<()> {
    let len = shape.elements()?;
    check_activation(act, shape.c, prelu_slopes)?;
    let data = data.get_mut(..len).ok_or(Error::BufferTooSmall)?;
    match act {
        Activation::None => {}
        // One AVX-512 pass where available; the same values (Relu is a clamp to `[0, +∞]`).
        Activation::Relu | Activation::Relu6 | Activation::Clip { .. } => {
            add_clamp(data, None, as_clamp(act).unwrap_or(NO_CLAMP))
        }
        Activation::LeakyRelu { alpha } => map(data, |x| if x < 0.0 { alpha * x } else { x }),
        Activation::Sigmoid => map(data, sigmoid),
        Activation::PRelu => {
            // Checked above: present, and one slope or at least `c`.
            let slopes = prelu_slopes.unwrap_or(&[0.0]);
            let plane = shape.plane_len();
            for (i, p) in data.chunks_exact_mut(plane).enumerate() {
                let a = if slopes.len() == 1 {
                    slopes[0]
                } else {
                    slopes[i % shape.c]
                };
                map(p, |x| if x < 0.0 { a * x } else { x });
            }
        }
    }
    Ok(())
}

/// `act` as the clamp `[lo, hi]` it is (Relu `[0, +∞]`, ReLU6 `[0, 6]`, Clip), for a
/// convolution kernel that clamps in registers; `None` for the other activations. Same results:
/// a clamp to `[0, +∞]` is Relu's `x < 0 → 0, else x`.
pub(crate) fn as_clamp(act: Activation) -> Option<Clamp> {
    match act {
        Activation::None => Some(NO_CLAMP),
        Activation::Relu => Some((0.0, f32::INFINITY)),
        Activation::Relu6 => Some((0.0, 6.0)),
        Activation::Clip { min, max } => Some((min, max)),
        _ => None,
    }
}

/// Replaces every `v` in `data` by `f(v)` (generic, so `f` inlines into the loop).
fn map(data: &mut [f32], f: impl Fn(f32) -> f32) {
    data.iter_mut().for_each(|v| *v = f(*v));
}

/// The logistic function, in `f32` through `libm::expf`: exactly 0 below about −88.7 (where
/// `e^(−x)` overflows) and 1 above about 16.7 (where `e^(−x)` vanishes in the rounding of
/// `1 + e^(−x)`), never NaN for non-NaN `x`.
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + libm::expf(-x))
}

/// [`conv2d`](super::conv::conv2d) followed by `act` on its output, with the convolution's
/// bias: one call for the usual Conv → (BatchNorm, folded by
/// [`fold_batch_norm`](super::batchnorm::fold_batch_norm)) → activation block. The output is
/// `n × c_out × out_h × out_w` ([`Conv2dShape::dims`]); PReLU slopes are per output channel.
///
/// # Errors
/// Those of [`conv2d`](super::conv::conv2d) and [`check_activation`] (checked before the
/// convolution runs, so nothing is written on error).
#[allow(clippy::too_many_arguments)]
pub fn conv2d_fused(
    method: ConvMethod,
    shape: &Conv2dShape,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    act: Activation,
    prelu_slopes: Option<&[f32]>,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<()> {
    let d = shape.dims()?;
    check_activation(act, shape.c_out, prelu_slopes)?;
    let clamp = as_clamp(act);
    let clamped = conv2d_clamped(
        method,
        shape,
        input,
        weights,
        bias,
        clamp.unwrap_or(NO_CLAMP),
        output,
        workspace,
    )?;
    if clamped && clamp.is_some() {
        return Ok(());
    }
    let out_shape = Shape4 {
        n: shape.n,
        c: shape.c_out,
        h: d.out_h,
        w: d.out_w,
    };
    apply_activation(act, &out_shape, output, prelu_slopes)
}
