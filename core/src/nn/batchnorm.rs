//! Batch normalisation at inference (ONNX BatchNormalization, `training_mode = 0`):
//! `y = γ·(x − μ)/√(σ² + ε) + β` per channel, as a layer ([`batch_norm`]) and folded into the
//! preceding convolution's weights and bias at load time ([`fold_batch_norm`]), which removes
//! the layer from the network: with `s = γ/√(σ² + ε)`, `W'[o] = s[o]·W[o]` and
//! `b'[o] = s[o]·(b[o] − μ[o]) + β[o]`.

use super::conv::Conv2dShape;
use super::tensor::Shape4;
use crate::error::{Error, Result};

/// The per-channel parameters of a batch normalisation, one value per channel in each slice
/// (ONNX `scale`, `B`, `input_mean`, `input_var`, `epsilon`).
#[derive(Clone, Copy, Debug)]
pub struct BatchNormParams<'a> {
    /// Scale γ.
    pub gamma: &'a [f32],
    /// Shift β.
    pub beta: &'a [f32],
    /// Running mean μ.
    pub mean: &'a [f32],
    /// Running variance σ² (≥ 0).
    pub var: &'a [f32],
    /// ε added to the variance (ONNX default 1e-5).
    pub eps: f32,
}

impl BatchNormParams<'_> {
    /// Checks the parameters for `channels` channels.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] if a slice holds fewer than `channels` values;
    /// [`Error::InvalidArgument`] if `eps` is negative or not finite, or some `σ² + ε` is not
    /// positive and finite (NaN included).
    pub fn check(&self, channels: usize) -> Result<()> {
        if [self.gamma, self.beta, self.mean, self.var]
            .iter()
            .any(|s| s.len() < channels)
        {
            return Err(Error::BufferTooSmall);
        }
        if !(self.eps.is_finite() && self.eps >= 0.0) {
            return Err(Error::InvalidArgument);
        }
        let ok = |v: f32| {
            let d = v + self.eps;
            d > 0.0 && d.is_finite()
        };
        if !self.var[..channels].iter().all(|&v| ok(v)) {
            return Err(Error::InvalidArgument);
        }
        Ok(())
    }

    /// `(s, t)` of channel `c` with `y = s·x + t`: `s = γ/√(σ² + ε)`, `t = β − s·μ`.
    fn affine(&self, c: usize) -> (f32, f32) {
        let s = self.gamma[c] / libm::sqrtf(self.var[c] + self.eps);
        (s, self.beta[c] - s * self.mean[c])
    }
}

/// Batch normalisation of the NCHW tensor `data` (`shape`) in place, one affine map `s·x + t`
/// per channel (module docs; three `f32` roundings per element besides those of `s` and `t`).
///
/// # Errors
/// Those of [`Shape4::elements`] and [`BatchNormParams::check`] for `shape.c` channels;
/// [`Error::BufferTooSmall`] if `data` is shorter than the tensor. Nothing is written on error.
pub fn batch_norm(shape: &Shape4, bn: &BatchNormParams<'_>, data: &mut [f32]) -> Result<()> {
    let len = shape.elements()?;
    bn.check(shape.c)?;
    let data = data.get_mut(..len).ok_or(Error::BufferTooSmall)?;
    for (p, plane) in data.chunks_exact_mut(shape.plane_len()).enumerate() {
        let (s, t) = bn.affine(p % shape.c);
        plane.iter_mut().for_each(|v| *v = s * *v + t);
    }
    Ok(())
}

/// Folds a batch normalisation that follows the convolution `conv` into its weights and bias,
/// in place (module docs): afterwards `conv2d` with `weights` and `bias` computes what the
/// convolution followed by [`batch_norm`] did, up to rounding. `weights` are the convolution's
/// (`c_out × c_in/groups × kh × kw`); `bias` (`c_out` values) holds the convolution's bias on
/// entry if `has_bias`, and is otherwise only written (a convolution without bias gets one).
///
/// # Errors
/// Those of [`Conv2dShape::dims`] and [`BatchNormParams::check`] for `c_out` channels;
/// [`Error::BufferTooSmall`] if `weights` or `bias` is too short. Nothing is written on error.
pub fn fold_batch_norm(
    conv: &Conv2dShape,
    weights: &mut [f32],
    bias: &mut [f32],
    has_bias: bool,
    bn: &BatchNormParams<'_>,
) -> Result<()> {
    let d = conv.dims()?;
    bn.check(conv.c_out)?;
    if weights.len() < d.weight_len || bias.len() < conv.c_out {
        return Err(Error::BufferTooSmall);
    }
    let per_channel = d.weight_len / conv.c_out;
    for (c, (w, b)) in weights[..d.weight_len]
        .chunks_exact_mut(per_channel)
        .zip(bias.iter_mut())
        .enumerate()
    {
        let (s, _) = bn.affine(c);
        w.iter_mut().for_each(|v| *v *= s);
        let b0 = if has_bias { *b } else { 0.0 };
        *b = s * (b0 - bn.mean[c]) + bn.beta[c];
    }
    Ok(())
}
