//! Element-wise binary operators of NCHW tensors (ONNX Add, Sub, Mul) for residual connections
//! and bias-like operands: fast paths for two tensors of one shape, a tensor and a per-channel
//! vector (ONNX broadcasting of a `C × 1 × 1` operand) or a scalar ([`binary`], [`add`]), and
//! general numpy broadcasting where every dimension of each operand equals the output's or is 1
//! ([`binary_broadcast`]).

use super::tensor::Shape4;
use crate::error::{Error, Result};

/// How the second operand of [`add`] is laid out against the NCHW tensor `a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Broadcast {
    /// `b` has `a`'s shape (`n·c·h·w` elements).
    Same,
    /// `b` has one value per channel (`c` elements), added to every element of that channel.
    PerChannel,
    /// `b` is one value (its first element), added to every element.
    Scalar,
}

/// The arithmetic of a binary element-wise operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b` (ONNX Add).
    Add,
    /// `a − b` (ONNX Sub).
    Sub,
    /// `a · b` (ONNX Mul).
    Mul,
}

impl BinaryOp {
    /// The operator applied to one pair of values (one `f32` rounding).
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
        }
    }
}

/// Elements of the second operand for `bc` on `shape`.
fn b_len(shape: &Shape4, bc: Broadcast) -> Result<usize> {
    let len = shape.elements()?;
    Ok(match bc {
        Broadcast::Same => len,
        Broadcast::PerChannel => shape.c,
        Broadcast::Scalar => 1,
    })
}

/// Runs `f(a_plane_index, plane_of_b_or_its_value)` over the planes.
fn for_each(shape: &Shape4, b: &[f32], bc: Broadcast, mut f: impl FnMut(usize, BPlane<'_>)) {
    let (planes, hw) = (shape.n * shape.c, shape.plane_len());
    for p in 0..planes {
        let bp = match bc {
            Broadcast::Same => BPlane::Plane(&b[p * hw..][..hw]),
            Broadcast::PerChannel => BPlane::Value(b[p % shape.c]),
            Broadcast::Scalar => BPlane::Value(b[0]),
        };
        f(p, bp);
    }
}

enum BPlane<'a> {
    Plane(&'a [f32]),
    Value(f32),
}

/// `output = a ∘ b` for the operator `op`, with `b` broadcast as `bc` says; `a` and `output`
/// are NCHW tensors of `shape`. One `f32` rounding per element.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `a` or `output` is shorter than
/// the tensor or `b` than `bc` needs. Nothing is written on error.
pub fn binary(
    op: BinaryOp,
    shape: &Shape4,
    a: &[f32],
    b: &[f32],
    bc: Broadcast,
    output: &mut [f32],
) -> Result<()> {
    let len = shape.elements()?;
    if a.len() < len || output.len() < len || b.len() < b_len(shape, bc)? {
        return Err(Error::BufferTooSmall);
    }
    let hw = shape.plane_len();
    for_each(shape, b, bc, |p, bp| {
        let (x, y) = (&a[p * hw..][..hw], &mut output[p * hw..][..hw]);
        match bp {
            BPlane::Plane(b) => {
                for ((o, &u), &v) in y.iter_mut().zip(x).zip(b) {
                    *o = op.apply(u, v);
                }
            }
            BPlane::Value(v) => {
                for (o, &u) in y.iter_mut().zip(x) {
                    *o = op.apply(u, v);
                }
            }
        }
    });
    Ok(())
}

/// `a = a ∘ b` in place, otherwise as [`binary`].
///
/// # Errors
/// As [`binary`].
pub fn binary_in_place(
    op: BinaryOp,
    shape: &Shape4,
    a: &mut [f32],
    b: &[f32],
    bc: Broadcast,
) -> Result<()> {
    let len = shape.elements()?;
    if a.len() < len || b.len() < b_len(shape, bc)? {
        return Err(Error::BufferTooSmall);
    }
    let hw = shape.plane_len();
    for_each(shape, b, bc, |p, bp| {
        let y = &mut a[p * hw..][..hw];
        match bp {
            BPlane::Plane(b) => y.iter_mut().zip(b).for_each(|(o, &v)| *o = op.apply(*o, v)),
            BPlane::Value(v) => y.iter_mut().for_each(|o| *o = op.apply(*o, v)),
        }
    });
    Ok(())
}

/// `output = a + b` with `b` broadcast as `bc` says; `a` and `output` are NCHW tensors of
/// `shape`. One `f32` rounding per element, so the result is exact up to that and commutative
/// for [`Broadcast::Same`].
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `a` or `output` is shorter than
/// the tensor or `b` than `bc` needs. Nothing is written on error.
pub fn add(shape: &Shape4, a: &[f32], b: &[f32], bc: Broadcast, output: &mut [f32]) -> Result<()> {
    binary(BinaryOp::Add, shape, a, b, bc, output)
}

/// `a += b` in place, otherwise as [`add`] (the residual connection of a ResNet block, without a
/// third buffer).
///
/// # Errors
/// As [`add`].
pub fn add_in_place(shape: &Shape4, a: &mut [f32], b: &[f32], bc: Broadcast) -> Result<()> {
    binary_in_place(BinaryOp::Add, shape, a, b, bc)
}

const fn dims(s: &Shape4) -> [usize; 4] {
    [s.n, s.c, s.h, s.w]
}

/// The output shape of numpy broadcasting of `a` and `b` (already of one rank, 4): per
/// dimension the larger of the two, where each must equal it or be 1.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::SizeMismatch`] if a dimension of one operand is
/// neither 1 nor the other's.
pub fn broadcast_shape(a: &Shape4, b: &Shape4) -> Result<Shape4> {
    a.elements()?;
    b.elements()?;
    let (da, db) = (dims(a), dims(b));
    let mut o = [0; 4];
    for i in 0..4 {
        o[i] = match (da[i], db[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(Error::SizeMismatch),
        };
    }
    Shape4::new(o[0], o[1], o[2], o[3])
}

/// `output = a ∘ b` with numpy broadcasting ([`broadcast_shape`]): each dimension of `a` (shape
/// `sa`) and `b` (`sb`) equals the output's or is 1 and is then repeated. `output` is packed NCHW
/// of the broadcast shape. The innermost loop runs over W with unit or zero strides.
///
/// # Errors
/// Those of [`broadcast_shape`]; [`Error::BufferTooSmall`] if a buffer is shorter than its
/// tensor. Nothing is written on error.
pub fn binary_broadcast(
    op: BinaryOp,
    sa: &Shape4,
    a: &[f32],
    sb: &Shape4,
    b: &[f32],
    output: &mut [f32],
) -> Result<()> {
    let so = broadcast_shape(sa, sb)?;
    let len = so.elements()?;
    if a.len() < sa.elements()? || b.len() < sb.elements()? || output.len() < len {
        return Err(Error::BufferTooSmall);
    }
    // Element strides, 0 along broadcast dimensions.
    let strides = |s: &Shape4| {
        let d = dims(s);
        let full = [d[1] * d[2] * d[3], d[2] * d[3], d[3], 1];
        let mut st = [0; 4];
        for i in 0..4 {
            st[i] = if d[i] == 1 { 0 } else { full[i] };
        }
        st
    };
    let (ta, tb) = (strides(sa), strides(sb));
    let mut y = output[..len].chunks_exact_mut(so.w);
    for n in 0..so.n {
        for c in 0..so.c {
            for h in 0..so.h {
                let (ia, ib) = (
                    n * ta[0] + c * ta[1] + h * ta[2],
                    n * tb[0] + c * tb[1] + h * tb[2],
                );
                // One row per (n, c, h): exactly `len / w` of them.
                let Some(row) = y.next() else {
                    return Ok(());
                };
                for (x, o) in row.iter_mut().enumerate() {
                    *o = op.apply(a[ia + x * ta[3]], b[ib + x * tb[3]]);
                }
            }
        }
    }
    Ok(())
}

/// `a = a ∘ b` in place, where `a` has the broadcast shape `so` and `b` (shape `sb`) is
/// broadcast to it as in [`binary_broadcast`].
///
/// # Errors
/// Those of [`broadcast_shape`]; [`Error::SizeMismatch`] if `so` is not the broadcast of itself
/// and `sb`; [`Error::BufferTooSmall`] if a buffer is shorter than its tensor. Nothing is
/// written on error.
pub fn binary_in_place_broadcast(
    op: BinaryOp,
    so: &Shape4,
    a: &mut [f32],
    sb: &Shape4,
    b: &[f32],
) -> Result<()> {
    if broadcast_shape(so, sb)? != *so {
        return Err(Error::SizeMismatch);
    }
    let len = so.elements()?;
    if a.len() < len || b.len() < sb.elements()? {
        return Err(Error::BufferTooSmall);
    }
    let d = dims(sb);
    let full = [d[1] * d[2] * d[3], d[2] * d[3], d[3], 1];
    let tb: [usize; 4] = core::array::from_fn(|i| if d[i] == 1 { 0 } else { full[i] });
    let mut rows = a[..len].chunks_exact_mut(so.w);
    for n in 0..so.n {
        for c in 0..so.c {
            for h in 0..so.h {
                let ib = n * tb[0] + c * tb[1] + h * tb[2];
                let Some(row) = rows.next() else {
                    return Ok(());
                };
                for (x, o) in row.iter_mut().enumerate() {
                    *o = op.apply(*o, b[ib + x * tb[3]]);
                }
            }
        }
    }
    Ok(())
}
