//! Element-wise addition of NCHW tensors (ONNX Add) for residual connections and bias-like
//! operands: two tensors of one shape, or a tensor and a per-channel vector (ONNX broadcasting of
//! a `C × 1 × 1` operand) or a scalar.

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

/// `output = a + b` with `b` broadcast as `bc` says; `a` and `output` are NCHW tensors of
/// `shape`. One `f32` rounding per element, so the result is exact up to that and commutative
/// for [`Broadcast::Same`].
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `a` or `output` is shorter than
/// the tensor or `b` than `bc` needs. Nothing is written on error.
pub fn add(shape: &Shape4, a: &[f32], b: &[f32], bc: Broadcast, output: &mut [f32]) -> Result<()> {
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
                    *o = u + v;
                }
            }
            BPlane::Value(v) => {
                for (o, &u) in y.iter_mut().zip(x) {
                    *o = u + v;
                }
            }
        }
    });
    Ok(())
}

/// `a += b` in place, otherwise as [`add`] (the residual connection of a ResNet block, without a
/// third buffer).
///
/// # Errors
/// As [`add`].
pub fn add_in_place(shape: &Shape4, a: &mut [f32], b: &[f32], bc: Broadcast) -> Result<()> {
    let len = shape.elements()?;
    if a.len() < len || b.len() < b_len(shape, bc)? {
        return Err(Error::BufferTooSmall);
    }
    let hw = shape.plane_len();
    for_each(shape, b, bc, |p, bp| {
        let y = &mut a[p * hw..][..hw];
        match bp {
            BPlane::Plane(b) => y.iter_mut().zip(b).for_each(|(o, &v)| *o += v),
            BPlane::Value(v) => y.iter_mut().for_each(|o| *o += v),
        }
    });
    Ok(())
}
