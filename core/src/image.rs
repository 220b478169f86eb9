//! Image views: borrowed, strided, single-channel 2-D windows over caller buffers.
//!
//! A view is validated once, at construction: positive width and height, `stride ≥ width`, and a
//! buffer of at least `stride·(height−1) + width` elements, with every product checked for
//! overflow. Algorithms then index rows freely. Strides are counted in elements, not bytes (the C
//! API converts). Sub-views address a rectangle of an existing view without copying.

use crate::error::{Error, Result};
use crate::geometry::Rect;
use crate::pixel::Pixel;

/// Number of elements a `width × height` view with row `stride` needs, or why it is invalid.
///
/// Errors: [`Error::ZeroSize`] if `width` or `height` is 0, [`Error::StrideTooSmall`] if
/// `stride < width`, [`Error::Overflow`] if `stride·(height−1) + width` overflows `usize`.
pub fn required_len(width: usize, height: usize, stride: usize) -> Result<usize> {
    if width == 0 || height == 0 {
        return Err(Error::ZeroSize);
    }
    if stride < width {
        return Err(Error::StrideTooSmall);
    }
    stride
        .checked_mul(height - 1)
        .and_then(|n| n.checked_add(width))
        .ok_or(Error::Overflow)
}

/// Geometry accessors shared by both view types (same fields, same meaning).
macro_rules! view_geometry {
    () => {
        /// Width in pixels.
        pub fn width(&self) -> usize {
            self.width
        }

        /// Height in pixels.
        pub fn height(&self) -> usize {
            self.height
        }

        /// Distance between row starts, in elements.
        pub fn stride(&self) -> usize {
            self.stride
        }

        /// `(width, height)` in pixels.
        pub fn size(&self) -> (usize, usize) {
            (self.width, self.height)
        }

        /// The pixel at `(x, y)`, or `None` outside the view.
        #[inline]
        pub fn get(&self, x: usize, y: usize) -> Option<T> {
            (x < self.width && y < self.height).then(|| self.data[y * self.stride + x])
        }
    };
}

/// Read-only view of a `width × height` image whose rows start `stride` elements apart.
#[derive(Clone, Copy, Debug)]
pub struct ImageView<'a, T: Pixel> {
    data: &'a [T],
    width: usize,
    height: usize,
    stride: usize,
}

/// Writable view of a `width × height` image whose rows start `stride` elements apart.
#[derive(Debug)]
pub struct ImageViewMut<'a, T: Pixel> {
    data: &'a mut [T],
    width: usize,
    height: usize,
    stride: usize,
}

fn sub_range(
    width: usize,
    height: usize,
    stride: usize,
    rect: Rect,
) -> Result<(usize, usize, usize, usize)> {
    if rect.is_empty() {
        return Err(Error::ZeroSize);
    }
    if !rect.is_inside(width, height) {
        return Err(Error::OutOfBounds);
    }
    let (x, y, w, h) = (
        rect.x as usize,
        rect.y as usize,
        rect.width as usize,
        rect.height as usize,
    );
    let start = y * stride + x;
    // In range: the parent view already covers stride·(height−1)+width ≥ start + len.
    let len = stride * (h - 1) + w;
    Ok((start, len, w, h))
}

impl<'a, T: Pixel> ImageView<'a, T> {
    /// Wraps `data` as a `width × height` image with rows `stride` elements apart.
    ///
    /// Errors: see [`required_len`]; [`Error::BufferTooSmall`] if `data` is shorter than that.
    pub fn new(data: &'a [T], width: usize, height: usize, stride: usize) -> Result<Self> {
        let need = required_len(width, height, stride)?;
        if data.len() < need {
            return Err(Error::BufferTooSmall);
        }
        Ok(Self {
            data: &data[..need],
            width,
            height,
            stride,
        })
    }

    /// Wraps a tightly packed buffer (`stride == width`).
    ///
    /// Errors: as [`ImageView::new`].
    pub fn packed(data: &'a [T], width: usize, height: usize) -> Result<Self> {
        Self::new(data, width, height, width)
    }

    view_geometry!();

    /// Row `y` (exactly `width` elements). Panics if `y ≥ height`.
    #[inline]
    pub fn row(&self, y: usize) -> &'a [T] {
        let start = y * self.stride;
        &self.data[start..start + self.width]
    }

    /// The underlying elements, from the first pixel to the last (gaps between rows included).
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    /// A view of the rectangle `rect` of this view (no copy).
    ///
    /// Errors: [`Error::ZeroSize`] for an empty rectangle, [`Error::OutOfBounds`] if it is not
    /// entirely inside the view.
    pub fn sub_view(&self, rect: Rect) -> Result<ImageView<'a, T>> {
        let (start, len, w, h) = sub_range(self.width, self.height, self.stride, rect)?;
        Ok(ImageView {
            data: &self.data[start..start + len],
            width: w,
            height: h,
            stride: self.stride,
        })
    }
}

impl<'a, T: Pixel> ImageViewMut<'a, T> {
    /// Wraps `data` as a writable `width × height` image with rows `stride` elements apart.
    ///
    /// Errors: see [`required_len`]; [`Error::BufferTooSmall`] if `data` is shorter than that.
    pub fn new(data: &'a mut [T], width: usize, height: usize, stride: usize) -> Result<Self> {
        let need = required_len(width, height, stride)?;
        if data.len() < need {
            return Err(Error::BufferTooSmall);
        }
        Ok(Self {
            data: &mut data[..need],
            width,
            height,
            stride,
        })
    }

    /// Wraps a tightly packed writable buffer (`stride == width`).
    ///
    /// Errors: as [`ImageViewMut::new`].
    pub fn packed(data: &'a mut [T], width: usize, height: usize) -> Result<Self> {
        Self::new(data, width, height, width)
    }

    view_geometry!();

    /// Row `y` (exactly `width` elements). Panics if `y ≥ height`.
    #[inline]
    pub fn row(&self, y: usize) -> &[T] {
        let start = y * self.stride;
        &self.data[start..start + self.width]
    }

    /// Writable row `y` (exactly `width` elements). Panics if `y ≥ height`.
    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [T] {
        let start = y * self.stride;
        &mut self.data[start..start + self.width]
    }

    /// Sets every pixel of the view to `value` (gaps between rows are left alone).
    pub fn fill(&mut self, value: T) {
        for y in 0..self.height {
            self.row_mut(y).fill(value);
        }
    }

    /// Elements `start .. start + len` of the underlying buffer (several rows at once, gaps
    /// included), for kernels that read one row while writing the next.
    pub(crate) fn rows_mut_raw(&mut self, start: usize, len: usize) -> &mut [T] {
        &mut self.data[start..start + len]
    }

    /// A read-only view of the same pixels.
    pub fn as_view(&self) -> ImageView<'_, T> {
        ImageView {
            data: self.data,
            width: self.width,
            height: self.height,
            stride: self.stride,
        }
    }

    /// A writable view of the rectangle `rect` of this view (no copy).
    ///
    /// Errors: [`Error::ZeroSize`] for an empty rectangle, [`Error::OutOfBounds`] if it is not
    /// entirely inside the view.
    pub fn sub_view_mut(&mut self, rect: Rect) -> Result<ImageViewMut<'_, T>> {
        let (start, len, w, h) = sub_range(self.width, self.height, self.stride, rect)?;
        Ok(ImageViewMut {
            data: &mut self.data[start..start + len],
            width: w,
            height: h,
            stride: self.stride,
        })
    }

    /// Consumes the view and returns a writable view of `rect` with the original lifetime.
    ///
    /// Errors: as [`ImageViewMut::sub_view_mut`].
    pub fn into_sub_view(self, rect: Rect) -> Result<ImageViewMut<'a, T>> {
        let (start, len, w, h) = sub_range(self.width, self.height, self.stride, rect)?;
        Ok(ImageViewMut {
            data: &mut self.data[start..start + len],
            width: w,
            height: h,
            stride: self.stride,
        })
    }
}

/// Checks that `a` and `b` have the same size.
///
/// Errors: [`Error::SizeMismatch`] otherwise.
pub(crate) fn same_size(a: (usize, usize), b: (usize, usize)) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::SizeMismatch)
    }
}
