//! Operators that move data without arithmetic: concatenation (ONNX Concat), flattening (ONNX
//! Flatten, a shape function: packed NCHW already is the flattened matrix) and spatial padding
//! (ONNX Pad on the H and W axes, constant, edge or reflect).

use super::tensor::{checked_product, Shape4};
use crate::error::{Error, Result};

const fn dims(s: &Shape4) -> [usize; 4] {
    [s.n, s.c, s.h, s.w]
}

/// The shape of the concatenation of `shapes` along `axis` (0 = N, 1 = C, 2 = H, 3 = W): the
/// sum of their `axis` dimensions, the others shared.
///
/// # Errors
/// [`Error::InvalidArgument`] if `axis > 3` or `shapes` is empty; [`Error::SizeMismatch`] if two
/// shapes differ outside `axis`; those of [`Shape4::elements`] for any shape or the result.
pub fn concat_shape(shapes: &[Shape4], axis: usize) -> Result<Shape4> {
    concat_of(shapes.iter().copied(), axis)
}

fn concat_of(mut shapes: impl Iterator<Item = Shape4>, axis: usize) -> Result<Shape4> {
    let first = shapes.next().ok_or(Error::InvalidArgument)?;
    if axis > 3 {
        return Err(Error::InvalidArgument);
    }
    first.elements()?;
    let mut out = dims(&first);
    for s in shapes {
        s.elements()?;
        let d = dims(&s);
        if (0..4).any(|i| i != axis && d[i] != out[i]) {
            return Err(Error::SizeMismatch);
        }
        out[axis] = out[axis].checked_add(d[axis]).ok_or(Error::Overflow)?;
    }
    Shape4::new(out[0], out[1], out[2], out[3])
}

/// Concatenates the NCHW tensors `inputs` (each a shape and its data) along `axis` into
/// `output`, of [`concat_shape`] (channels: `axis = 1`, the usual case in CNNs).
///
/// # Errors
/// Those of [`concat_shape`]; [`Error::BufferTooSmall`] if an input is shorter than its tensor or
/// `output` than the result. Nothing is written on error.
pub fn concat(inputs: &[(Shape4, &[f32])], axis: usize, output: &mut [f32]) -> Result<()> {
    let out_shape = concat_of(inputs.iter().map(|&(s, _)| s), axis)?;
    for &(s, data) in inputs {
        if data.len() < s.elements()? {
            return Err(Error::BufferTooSmall);
        }
    }
    let out_len = out_shape.elements()?;
    if output.len() < out_len {
        return Err(Error::BufferTooSmall);
    }
    let od = dims(&out_shape);
    let outer: usize = od[..axis].iter().product();
    let inner: usize = od[axis + 1..].iter().product();
    let mut at = 0;
    for o in 0..outer {
        for &(s, data) in inputs {
            let chunk = dims(&s)[axis] * inner;
            output[at..at + chunk].copy_from_slice(&data[o * chunk..][..chunk]);
            at += chunk;
        }
    }
    Ok(())
}

/// ONNX Flatten as a shape function: the `rows × cols` matrix that packed NCHW data of `shape`
/// already is, with `rows` the product of the dimensions before `axis` (0..=4) and `cols` of the
/// rest. `axis = 1` gives `N × C·H·W`, the input of [`fully_connected`](super::dense::fully_connected).
/// No data moves.
///
/// # Errors
/// Those of [`Shape4::elements`]; [`Error::InvalidArgument`] if `axis > 4`.
pub fn flatten_shape(shape: &Shape4, axis: usize) -> Result<(usize, usize)> {
    shape.elements()?;
    if axis > 4 {
        return Err(Error::InvalidArgument);
    }
    let d = dims(shape);
    Ok((checked_product(&d[..axis])?, checked_product(&d[axis..])?))
}

/// What [`pad2d`] writes outside the input (ONNX Pad modes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    /// The given value.
    Constant(f32),
    /// The nearest edge element (`aaa|abc|ccc`).
    Edge,
    /// The input mirrored about its edge element, which is not repeated (`cb|abc|ba`); each
    /// padding must be smaller than the input along its axis.
    Reflect,
}

/// Padding of [`pad2d`] in elements, per side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pads {
    /// Rows above.
    pub top: usize,
    /// Columns left.
    pub left: usize,
    /// Rows below.
    pub bottom: usize,
    /// Columns right.
    pub right: usize,
}

/// The output shape of [`pad2d`]: `n × c × (top + h + bottom) × (left + w + right)`.
///
/// # Errors
/// Those of [`Shape4::elements`] for the input or output; [`Error::Overflow`] if a dimension
/// overflows.
pub fn pad_shape(shape: &Shape4, pads: &Pads) -> Result<Shape4> {
    shape.elements()?;
    let grow = |v: usize, a: usize, b: usize| {
        v.checked_add(a)
            .and_then(|v| v.checked_add(b))
            .ok_or(Error::Overflow)
    };
    Shape4::new(
        shape.n,
        shape.c,
        grow(shape.h, pads.top, pads.bottom)?,
        grow(shape.w, pads.left, pads.right)?,
    )
}

/// The source index along one axis for output index `o` (padding `before`), or `None` for a
/// constant.
fn source(o: usize, before: usize, size: usize, mode: PadMode) -> Option<usize> {
    let i = o as isize - before as isize;
    let last = size as isize - 1;
    let s = if (0..=last).contains(&i) {
        i
    } else {
        match mode {
            PadMode::Constant(_) => return None,
            PadMode::Edge => i.clamp(0, last),
            // One reflection suffices: the padding is < size, checked by `pad2d`.
            PadMode::Reflect if i < 0 => -i,
            PadMode::Reflect => 2 * last - i,
        }
    };
    Some(s as usize)
}

/// Pads the H and W axes of the NCHW tensor `input` (`shape`) into `output`
/// ([`pad_shape`]) as ONNX Pad does in `mode` (N and C are not padded). Negative (cropping)
/// pads are not supported.
///
/// # Errors
/// Those of [`pad_shape`]; [`Error::InvalidArgument`] for [`PadMode::Reflect`] with a padding
/// not smaller than the input along its axis; [`Error::BufferTooSmall`] if `input` or `output`
/// is shorter than its tensor. Nothing is written on error.
pub fn pad2d(
    shape: &Shape4,
    pads: &Pads,
    mode: PadMode,
    input: &[f32],
    output: &mut [f32],
) -> Result<()> {
    let os = pad_shape(shape, pads)?;
    if mode == PadMode::Reflect
        && (pads.top.max(pads.bottom) >= shape.h || pads.left.max(pads.right) >= shape.w)
    {
        return Err(Error::InvalidArgument);
    }
    let (len, out_len) = (shape.elements()?, os.elements()?);
    if input.len() < len || output.len() < out_len {
        return Err(Error::BufferTooSmall);
    }
    let fill = match mode {
        PadMode::Constant(v) => v,
        _ => 0.0,
    };
    let (hw, ohw) = (shape.plane_len(), os.plane_len());
    for (x, y) in input[..len]
        .chunks_exact(hw)
        .zip(output[..out_len].chunks_exact_mut(ohw))
    {
        for (oy, row) in y.chunks_exact_mut(os.w).enumerate() {
            let Some(iy) = source(oy, pads.top, shape.h, mode) else {
                row.fill(fill);
                continue;
            };
            let src = &x[iy * shape.w..][..shape.w];
            row[pads.left..pads.left + shape.w].copy_from_slice(src);
            for ox in (0..pads.left).chain(pads.left + shape.w..os.w) {
                row[ox] = source(ox, pads.left, shape.w, mode).map_or(fill, |ix| src[ix]);
            }
        }
    }
    Ok(())
}
