//! Fully connected layers (ONNX Gemm with `transB = 1`, as exported for `Linear` / `Dense`
//! layers): `Y = X·Wᵀ + b` for a batch of feature vectors, through [`sgemm`], or for one
//! feature vector through a matrix-vector product that streams the weights once (`gemv`).

use super::gemm::{gemm_pack_len, sgemm, Order, Transpose};
use super::tensor::{checked_bytes, checked_product};
use crate::error::{Error, Result};

/// Length in `f32` elements of the `pack` buffer that [`fully_connected`] needs:
/// [`gemm_pack_len`]`(batch, out_features, in_features)`, or 0 for a batch of 1 (no packing).
pub const fn fully_connected_pack_len(
    batch: usize,
    in_features: usize,
    out_features: usize,
) -> usize {
    if batch == 1 {
        return 0;
    }
    gemm_pack_len(batch, out_features, in_features)
}

/// A fully connected layer: `output[b][o] = Σᵢ input[b][i]·weights[o][i] + bias[o]`, with
/// `input` `batch × in_features`, `weights` `out_features × in_features` (row-major, one row
/// per output: PyTorch `Linear`, ONNX Gemm with `transB = 1`), `bias` `out_features` values
/// (none: 0), `output` `batch × out_features`. An NCHW tensor is such an input after
/// [`flatten_shape`](super::layout::flatten_shape) with axis 1, without moving data. `pack`
/// holds at least [`fully_connected_pack_len`] elements of working memory. Sums are in `f32`:
/// for a batch of more than one in [`sgemm`]'s blocked order; for a batch of one, each output
/// in 32 partial sums (input `i` to sum `i mod 32`, products then sums, not fused) added
/// pairwise, then plus the bias, which gives the same bits at every CPU level
/// ([`cpu`](crate::cpu)).
///
/// # Errors
/// [`Error::ZeroSize`] if a dimension is 0; [`Error::Overflow`] if a length overflows;
/// [`Error::BufferTooSmall`] if a buffer is shorter than its matrix (or `bias` than
/// `out_features`, `pack` than [`fully_connected_pack_len`]). Nothing is written on error.
#[allow(clippy::too_many_arguments)]
pub fn fully_connected(
    batch: usize,
    in_features: usize,
    out_features: usize,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    pack: &mut [f32],
) -> Result<()> {
    if batch == 0 || in_features == 0 || out_features == 0 {
        return Err(Error::ZeroSize);
    }
    let in_len = checked_bytes(checked_product(&[batch, in_features])?)?;
    let w_len = checked_bytes(checked_product(&[out_features, in_features])?)?;
    let out_len = checked_bytes(checked_product(&[batch, out_features])?)?;
    if input.len() < in_len
        || weights.len() < w_len
        || output.len() < out_len
        || bias.is_some_and(|b| b.len() < out_features)
        || pack.len() < fully_connected_pack_len(batch, in_features, out_features)
    {
        return Err(Error::BufferTooSmall);
    }
    let y = &mut output[..out_len];
    if batch == 1 {
        super::gemv::gemv(in_features, input, weights, bias, y);
        return Ok(());
    }
    let beta = match bias {
        Some(b) => {
            for row in y.chunks_exact_mut(out_features) {
                row.copy_from_slice(&b[..out_features]);
            }
            1.0
        }
        None => 0.0,
    };
    sgemm(
        Order::RowMajor,
        Transpose::No,
        Transpose::Yes,
        batch,
        out_features,
        in_features,
        1.0,
        input,
        in_features,
        weights,
        in_features,
        beta,
        y,
        out_features,
        pack,
    )
}
