//! Matrix product of two dynamic tensors (ONNX MatMul on ranks 2 to 4, numpy batch
//! broadcasting): each operand is a stack of matrices with up to two leading batch dimensions,
//! each batch dimension of A and B equal to the output's or 1 (then repeated); every output
//! matrix is one [`sgemm`] call. A fully connected layer (constant B) is
//! [`fully_connected`](super::dense::fully_connected) instead.

use super::gemm::{gemm_pack_len, sgemm, Order, Transpose};
use super::tensor::{checked_bytes, checked_product};
use crate::error::{Error, Result};

/// Geometry of a batched matrix product `Y[b] = A[b]·B[b]`: A is `a_batch × m × k`, B
/// `b_batch × k × n`, Y `out_batch × m × n`, all packed row-major. Batch dimensions of a rank-2
/// or rank-3 operand are padded with leading 1s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatMulShape {
    /// A's two batch dimensions.
    pub a_batch: [usize; 2],
    /// B's two batch dimensions.
    pub b_batch: [usize; 2],
    /// Rows of A and Y.
    pub m: usize,
    /// Columns of A, rows of B.
    pub k: usize,
    /// Columns of B and Y.
    pub n: usize,
}

/// Sizes derived from a valid [`MatMulShape`] (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatMulDims {
    /// The output's batch dimensions (per dimension the larger of A's and B's).
    pub out_batch: [usize; 2],
    /// Elements of A.
    pub a_len: usize,
    /// Elements of B.
    pub b_len: usize,
    /// Elements of Y.
    pub out_len: usize,
}

impl MatMulShape {
    /// Validates the shape and derives the output batch and the buffer lengths.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] if a dimension is 0; [`Error::SizeMismatch`] if a batch dimension of
    /// A and B differ and neither is 1; [`Error::Overflow`] if a length overflows.
    pub fn dims(&self) -> Result<MatMulDims> {
        let s = self;
        let all = [
            s.a_batch[0],
            s.a_batch[1],
            s.b_batch[0],
            s.b_batch[1],
            s.m,
            s.k,
            s.n,
        ];
        if all.contains(&0) {
            return Err(Error::ZeroSize);
        }
        let mut out_batch = [0; 2];
        for (o, (&a, &b)) in out_batch.iter_mut().zip(s.a_batch.iter().zip(&s.b_batch)) {
            *o = match (a, b) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return Err(Error::SizeMismatch),
            };
        }
        let len = |b: [usize; 2], r: usize, c: usize| {
            checked_bytes(checked_product(&[b[0], b[1], r, c])?)
        };
        Ok(MatMulDims {
            out_batch,
            a_len: len(s.a_batch, s.m, s.k)?,
            b_len: len(s.b_batch, s.k, s.n)?,
            out_len: len(out_batch, s.m, s.n)?,
        })
    }
}

/// Length in `f32` elements of the `pack` buffer that [`matmul`] needs:
/// [`gemm_pack_len`]`(m, n, k)`.
pub const fn matmul_pack_len(shape: &MatMulShape) -> usize {
    gemm_pack_len(shape.m, shape.n, shape.k)
}

/// `output[b] = a[b]·b[b]` for every output batch index, broadcasting batch dimensions of size 1
/// ([`MatMulShape`]); `pack` holds at least [`matmul_pack_len`] elements of working memory. Sums
/// in `f32`, in [`sgemm`]'s order.
///
/// # Errors
/// Those of [`MatMulShape::dims`]; [`Error::BufferTooSmall`] if a buffer is shorter than its
/// tensor (or `pack` than [`matmul_pack_len`]). Nothing is written on error.
pub fn matmul(
    shape: &MatMulShape,
    a: &[f32],
    b: &[f32],
    output: &mut [f32],
    pack: &mut [f32],
) -> Result<()> {
    let d = shape.dims()?;
    if a.len() < d.a_len
        || b.len() < d.b_len
        || output.len() < d.out_len
        || pack.len() < matmul_pack_len(shape)
    {
        return Err(Error::BufferTooSmall);
    }
    let (m, k, n) = (shape.m, shape.k, shape.n);
    let pick = |dim: usize, i: usize| if dim == 1 { 0 } else { i };
    for i0 in 0..d.out_batch[0] {
        for i1 in 0..d.out_batch[1] {
            let ia = pick(shape.a_batch[0], i0) * shape.a_batch[1] + pick(shape.a_batch[1], i1);
            let ib = pick(shape.b_batch[0], i0) * shape.b_batch[1] + pick(shape.b_batch[1], i1);
            let io = i0 * d.out_batch[1] + i1;
            sgemm(
                Order::RowMajor,
                Transpose::No,
                Transpose::No,
                m,
                n,
                k,
                1.0,
                &a[ia * m * k..][..m * k],
                k,
                &b[ib * k * n..][..k * n],
                n,
                0.0,
                &mut output[io * m * n..][..m * n],
                n,
                pack,
            )?;
        }
    }
    Ok(())
}
