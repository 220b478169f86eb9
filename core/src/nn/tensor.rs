//! A small NCHW shape type with checked element counts, and read-only / mutable views that tie a
//! shape to a caller slice (validated once, at construction).

use crate::error::{Error, Result};

/// The shape of a dense 4-D `f32` tensor in NCHW order (batch, channels, height, width), packed:
/// element `(n, c, y, x)` lives at `((n·C + c)·H + y)·W + x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape4 {
    /// Batch size (images).
    pub n: usize,
    /// Channels per image.
    pub c: usize,
    /// Height in elements (rows).
    pub h: usize,
    /// Width in elements (columns).
    pub w: usize,
}

impl Shape4 {
    /// A shape of `n × c × h × w` elements.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] if any dimension is 0; [`Error::Overflow`] if the element count does
    /// not fit `usize` (or its byte count does not fit `isize`).
    pub fn new(n: usize, c: usize, h: usize, w: usize) -> Result<Self> {
        let s = Self { n, c, h, w };
        s.elements()?;
        Ok(s)
    }

    /// Number of elements `n·c·h·w`.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] if any dimension is 0; [`Error::Overflow`] if the count (or its size
    /// in bytes) overflows.
    pub fn elements(&self) -> Result<usize> {
        if self.n == 0 || self.c == 0 || self.h == 0 || self.w == 0 {
            return Err(Error::ZeroSize);
        }
        let len = checked_product(&[self.n, self.c, self.h, self.w])?;
        checked_bytes(len)?;
        Ok(len)
    }

    /// Elements of one `h × w` plane.
    pub const fn plane_len(&self) -> usize {
        self.h * self.w
    }

    /// Linear index of `(n, c, y, x)`; the caller keeps the coordinates in range.
    pub const fn index(&self, n: usize, c: usize, y: usize, x: usize) -> usize {
        ((n * self.c + c) * self.h + y) * self.w + x
    }
}

/// A read-only NCHW tensor over a caller slice of exactly [`Shape4::elements`] (or more) elements.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    shape: Shape4,
    data: &'a [f32],
}

impl<'a> TensorView<'a> {
    /// Views the first `shape.elements()` elements of `data`.
    ///
    /// # Errors
    /// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `data` is shorter.
    pub fn new(data: &'a [f32], shape: Shape4) -> Result<Self> {
        let len = shape.elements()?;
        let data = data.get(..len).ok_or(Error::BufferTooSmall)?;
        Ok(Self { shape, data })
    }

    /// The shape.
    pub const fn shape(&self) -> Shape4 {
        self.shape
    }

    /// The elements, packed NCHW.
    pub const fn data(&self) -> &'a [f32] {
        self.data
    }
}

/// A mutable NCHW tensor over a caller slice, see [`TensorView`].
#[derive(Debug)]
pub struct TensorViewMut<'a> {
    shape: Shape4,
    data: &'a mut [f32],
}

impl<'a> TensorViewMut<'a> {
    /// Views the first `shape.elements()` elements of `data` mutably.
    ///
    /// # Errors
    /// Those of [`Shape4::elements`]; [`Error::BufferTooSmall`] if `data` is shorter.
    pub fn new(data: &'a mut [f32], shape: Shape4) -> Result<Self> {
        let len = shape.elements()?;
        let data = data.get_mut(..len).ok_or(Error::BufferTooSmall)?;
        Ok(Self { shape, data })
    }

    /// The shape.
    pub const fn shape(&self) -> Shape4 {
        self.shape
    }

    /// The elements, packed NCHW.
    pub fn data(&mut self) -> &mut [f32] {
        self.data
    }
}

/// Product of `dims`, or [`Error::Overflow`].
pub(crate) fn checked_product(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or(Error::Overflow)
}

/// `len`, after checking that `len` `f32` elements fit in `isize::MAX` bytes (the limit of a
/// Rust slice).
pub(crate) fn checked_bytes(len: usize) -> Result<usize> {
    len.checked_mul(core::mem::size_of::<f32>())
        .filter(|&b| b <= isize::MAX as usize)
        .map(|_| len)
        .ok_or(Error::Overflow)
}
