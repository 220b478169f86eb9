//! `mv_image`: a caller-owned, strided image (one channel, or packed RGB for the KCF trackers),
//! and the checks that turn one into a core view.
//!
//! An image is validated on every call, before anything is written: non-NULL data, a known
//! format the function accepts, non-zero size, a stride that is a multiple of the pixel size and
//! covers a row, a byte count that does not overflow, and `data_size` covering
//! `stride·(height−1) + width·bytes_per_pixel`. An output that overlaps an input is allowed (the
//! input is copied first, so in-place filtering works); two outputs may not overlap.

use crate::geometry::mv_rect;
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::{Border, ImageView, ImageViewMut, Pixel, PixelFormat};
use std::ffi::c_void;

/// Pixel format of an `mv_image` (one of the `MV_PIXEL_*` constants).
pub type mv_pixel_format = u32;
/// 8-bit unsigned.
pub const MV_PIXEL_U8: mv_pixel_format = 1;
/// 16-bit unsigned.
pub const MV_PIXEL_U16: mv_pixel_format = 2;
/// 16-bit signed.
pub const MV_PIXEL_I16: mv_pixel_format = 3;
/// 32-bit unsigned.
pub const MV_PIXEL_U32: mv_pixel_format = 4;
/// 64-bit unsigned.
pub const MV_PIXEL_U64: mv_pixel_format = 5;
/// 32-bit float.
pub const MV_PIXEL_F32: mv_pixel_format = 6;
/// Packed 8-bit RGB: 3 bytes a pixel (R, G, B), no alignment requirement. Accepted by
/// `mv_image_init`, `mv_image_roi`, `mv_pixel_format_size` and the KCF trackers (`mv_kcf_*`);
/// every other function returns `MV_STATUS_UNSUPPORTED_FORMAT` for it.
pub const MV_PIXEL_RGB8: mv_pixel_format = 7;

/// A caller-owned image: one channel, or packed RGB (`MV_PIXEL_RGB8`, accepted by few functions).
/// The library never frees or keeps `data`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mv_image {
    /// First pixel (top-left).
    pub data: *mut c_void,
    /// Bytes available from `data` on; must cover `stride·(height−1) + width·pixel size`.
    pub data_size: usize,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes between the starts of consecutive rows; a multiple of the pixel size (any value
    /// for `MV_PIXEL_RGB8`).
    pub stride: usize,
    /// One of the `MV_PIXEL_*` constants.
    pub format: mv_pixel_format,
}

/// Border mode of a filter (one of the `MV_BORDER_*` constants).
pub type mv_border_mode = u32;
/// Repeat the edge pixel: `aaa|abcd|ddd`.
pub const MV_BORDER_REPLICATE: mv_border_mode = 0;
/// Mirror without repeating the edge pixel: `dcb|abcd|cba` (OpenCV's default).
pub const MV_BORDER_REFLECT_101: mv_border_mode = 1;
/// A constant value outside the image.
pub const MV_BORDER_CONSTANT: mv_border_mode = 2;

/// How a filter reads pixels outside the image.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mv_border {
    /// One of the `MV_BORDER_*` constants.
    pub mode: mv_border_mode,
    /// The outside value for `MV_BORDER_CONSTANT`; for `u8` images an integer in 0..255.
    pub value: f32,
}

pub(crate) fn format_of(f: mv_pixel_format) -> Result<PixelFormat, mv_status> {
    Ok(match f {
        MV_PIXEL_U8 => PixelFormat::U8,
        MV_PIXEL_U16 => PixelFormat::U16,
        MV_PIXEL_I16 => PixelFormat::I16,
        MV_PIXEL_U32 => PixelFormat::U32,
        MV_PIXEL_U64 => PixelFormat::U64,
        MV_PIXEL_F32 => PixelFormat::F32,
        _ => return Err(MV_STATUS_UNSUPPORTED_FORMAT),
    })
}

/// Bytes per pixel of any known format constant (the core formats and `MV_PIXEL_RGB8`).
fn pixel_bytes(f: mv_pixel_format) -> Result<usize, mv_status> {
    match f {
        MV_PIXEL_RGB8 => Ok(3),
        _ => format_of(f).map(|f| f.bytes()),
    }
}

/// The constant for a core pixel format.
pub(crate) fn format_code(f: PixelFormat) -> mv_pixel_format {
    match f {
        PixelFormat::U8 => MV_PIXEL_U8,
        PixelFormat::U16 => MV_PIXEL_U16,
        PixelFormat::I16 => MV_PIXEL_I16,
        PixelFormat::U32 => MV_PIXEL_U32,
        PixelFormat::U64 => MV_PIXEL_U64,
        PixelFormat::F32 => MV_PIXEL_F32,
    }
}

/// A validated image: its address range and geometry in elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checked {
    pub ptr: *mut u8,
    pub bytes: usize,
    pub width: usize,
    pub height: usize,
    pub stride_elems: usize,
    pub format: PixelFormat,
}

impl Checked {
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    fn overlaps(&self, o: &Checked) -> bool {
        let (a0, b0) = (self.ptr as usize, o.ptr as usize);
        a0 < b0.saturating_add(o.bytes) && b0 < a0.saturating_add(self.bytes)
    }

    /// `Err(MV_STATUS_UNSUPPORTED_FORMAT)` unless the image has format `f`.
    pub fn expect(&self, f: PixelFormat) -> Result<(), mv_status> {
        if self.format == f {
            Ok(())
        } else {
            Err(MV_STATUS_UNSUPPORTED_FORMAT)
        }
    }
}

/// Validates `*img` (see the module docs).
///
/// # Safety
/// `img` must be NULL or point to a readable `mv_image`.
pub(crate) unsafe fn check(img: *const mv_image) -> Result<Checked, mv_status> {
    non_null(img)?;
    // SAFETY: non-null, and the caller guarantees it points to an mv_image.
    let im = unsafe { *img };
    validate(&im)
}

pub(crate) fn validate(im: &mv_image) -> Result<Checked, mv_status> {
    non_null(im.data)?;
    let format = format_of(im.format)?;
    let bytes = layout(im)?;
    Ok(Checked {
        ptr: im.data.cast(),
        bytes,
        width: im.width as usize,
        height: im.height as usize,
        stride_elems: im.stride / format.bytes(),
        format,
    })
}

/// Checks the geometry of an image of any known format (see the module docs) and returns the
/// bytes it spans, `stride·(height−1) + width·bytes_per_pixel`. Elements must be aligned to
/// their size (`MV_PIXEL_RGB8`: bytes, so any stride and address).
fn layout(im: &mv_image) -> Result<usize, mv_status> {
    non_null(im.data)?;
    let bpp = pixel_bytes(im.format)?;
    let align = if im.format == MV_PIXEL_RGB8 { 1 } else { bpp };
    if im.width == 0 || im.height == 0 {
        return Err(MV_STATUS_ZERO_SIZE);
    }
    let (w, h) = (im.width as usize, im.height as usize);
    let row_bytes = w.checked_mul(bpp).ok_or(MV_STATUS_OVERFLOW)?;
    if im.stride < row_bytes {
        return Err(MV_STATUS_STRIDE_TOO_SMALL);
    }
    if !im.stride.is_multiple_of(align) || !(im.data as usize).is_multiple_of(align) {
        return Err(MV_STATUS_MISALIGNED);
    }
    let bytes = im
        .stride
        .checked_mul(h - 1)
        .and_then(|n| n.checked_add(row_bytes))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or(MV_STATUS_OVERFLOW)?;
    if im.data_size < bytes {
        return Err(MV_STATUS_BUFFER_TOO_SMALL);
    }
    if (im.data as usize).checked_add(bytes).is_none() {
        return Err(MV_STATUS_OVERFLOW);
    }
    Ok(bytes)
}

/// A validated `MV_PIXEL_RGB8` image: its bytes (`stride·(height−1) + 3·width`), size in
/// pixels and stride in bytes.
pub(crate) struct Rgb8<'a> {
    pub data: &'a [u8],
    pub width: usize,
    pub height: usize,
    pub stride: usize,
}

/// Validates `*img` as an `MV_PIXEL_RGB8` image (`MV_STATUS_UNSUPPORTED_FORMAT` for another
/// format).
///
/// # Safety
/// `img` NULL or a readable `mv_image` whose pixels stay readable for `'a` and are not written
/// meanwhile.
pub(crate) unsafe fn check_rgb8<'a>(img: *const mv_image) -> Result<Rgb8<'a>, mv_status> {
    non_null(img)?;
    // SAFETY: non-null, and the caller guarantees it points to an mv_image.
    let im = unsafe { *img };
    let bytes = layout(&im)?;
    if im.format != MV_PIXEL_RGB8 {
        return Err(MV_STATUS_UNSUPPORTED_FORMAT);
    }
    Ok(Rgb8 {
        // SAFETY: the range was validated by layout; the caller guarantees it stays readable.
        data: unsafe { std::slice::from_raw_parts(im.data as *const u8, bytes) },
        width: im.width as usize,
        height: im.height as usize,
        stride: im.stride,
    })
}

/// `Err(MV_STATUS_OVERLAP)` if any two outputs share memory.
pub(crate) fn disjoint_outputs(outputs: &[&Checked]) -> Result<(), mv_status> {
    for (i, a) in outputs.iter().enumerate() {
        if outputs[i + 1..].iter().any(|b| a.overlaps(b)) {
            return Err(MV_STATUS_OVERLAP);
        }
    }
    Ok(())
}

/// Storage for an input that had to be copied because an output overlaps it.
pub(crate) struct InputCopy<T>(Vec<T>);

impl<T> Default for InputCopy<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// A read-only view of a validated input. If any of `outputs` overlaps it, the pixels are first
/// copied into `hold`, so the view never aliases an output.
///
/// # Safety
/// `c` must come from [`check`] on an image whose memory is valid for reads for the whole call,
/// and must have pixel type `T`.
pub(crate) unsafe fn input_view<'a, T: Pixel>(
    c: &Checked,
    outputs: &[&Checked],
    hold: &'a mut InputCopy<T>,
) -> Result<ImageView<'a, T>, mv_status> {
    debug_assert_eq!(c.format, T::FORMAT);
    let elems = c.bytes / c.format.bytes();
    let slice: &'a [T] = if outputs.iter().any(|o| o.overlaps(c)) {
        hold.0
            .try_reserve_exact(elems)
            .map_err(|_| MV_STATUS_OUT_OF_MEMORY)?;
        // SAFETY: the range was validated by `check`; it is copied before any output is
        // borrowed mutably, and `hold` has capacity for `elems` elements.
        unsafe {
            std::ptr::copy_nonoverlapping(c.ptr as *const T, hold.0.as_mut_ptr(), elems);
            hold.0.set_len(elems);
        }
        &hold.0
    } else {
        // SAFETY: validated range, aligned for T, not overlapping any output of this call.
        unsafe { std::slice::from_raw_parts(c.ptr as *const T, elems) }
    };
    ImageView::new(slice, c.width, c.height, c.stride_elems).map_err(Into::into)
}

/// A writable view of a validated output.
///
/// # Safety
/// `c` must come from [`check`] on an image whose memory is valid for writes for the whole
/// call, with pixel type `T`, and must not overlap any other live view of this call (inputs
/// are copied by [`input_view`]; outputs are checked by [`disjoint_outputs`]).
pub(crate) unsafe fn output_view<'a, T: Pixel>(
    c: &Checked,
) -> Result<ImageViewMut<'a, T>, mv_status> {
    debug_assert_eq!(c.format, T::FORMAT);
    let elems = c.bytes / c.format.bytes();
    // SAFETY: see the function's contract.
    let slice: &'a mut [T] = unsafe { std::slice::from_raw_parts_mut(c.ptr as *mut T, elems) };
    ImageViewMut::new(slice, c.width, c.height, c.stride_elems).map_err(Into::into)
}

/// Converts a C border to a core border for `u8` images (constant must be an integer 0..255).
pub(crate) fn border_u8(b: mv_border) -> Result<Border<u8>, mv_status> {
    match b.mode {
        MV_BORDER_REPLICATE => Ok(Border::Replicate),
        MV_BORDER_REFLECT_101 => Ok(Border::Reflect101),
        MV_BORDER_CONSTANT => {
            let v = b.value;
            if (0.0..=255.0).contains(&v) && v.fract() == 0.0 {
                Ok(Border::Constant(v as u8))
            } else {
                Err(MV_STATUS_INVALID_ARGUMENT)
            }
        }
        _ => Err(MV_STATUS_INVALID_ARGUMENT),
    }
}

/// Converts a C border to a core border for `f32` images (constant must be finite).
pub(crate) fn border_f32(b: mv_border) -> Result<Border<f32>, mv_status> {
    match b.mode {
        MV_BORDER_REPLICATE => Ok(Border::Replicate),
        MV_BORDER_REFLECT_101 => Ok(Border::Reflect101),
        MV_BORDER_CONSTANT if b.value.is_finite() => Ok(Border::Constant(b.value)),
        _ => Err(MV_STATUS_INVALID_ARGUMENT),
    }
}

/// Allocates a zeroed scratch buffer of `len` elements, or `MV_STATUS_OUT_OF_MEMORY`.
pub(crate) fn scratch<T: Default + Clone>(len: usize) -> Result<Vec<T>, mv_status> {
    if len == usize::MAX {
        return Err(MV_STATUS_OVERFLOW);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| MV_STATUS_OUT_OF_MEMORY)?;
    v.resize(len, T::default());
    Ok(v)
}

/// Bytes per pixel of a format constant, or 0 for an unknown format.
#[no_mangle]
pub extern "C" fn mv_pixel_format_size(format: mv_pixel_format) -> usize {
    pixel_bytes(format).unwrap_or(0)
}

/// Describes a caller buffer as an image after validating it: `stride` in bytes (0 means tightly
/// packed, `width × pixel size`). Writes `*out` only on success.
///
/// Errors: `MV_STATUS_NULL_POINTER` (`out` or `data`), `MV_STATUS_UNSUPPORTED_FORMAT`,
/// `MV_STATUS_ZERO_SIZE`, `MV_STATUS_STRIDE_TOO_SMALL`, `MV_STATUS_MISALIGNED`,
/// `MV_STATUS_OVERFLOW`, `MV_STATUS_BUFFER_TOO_SMALL`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_image_init(
    data: *mut c_void,
    data_size: usize,
    width: u32,
    height: u32,
    stride: usize,
    format: mv_pixel_format,
    out: *mut mv_image,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        let bpp = pixel_bytes(format)?;
        let stride = if stride == 0 {
            (width as usize)
                .checked_mul(bpp)
                .ok_or(MV_STATUS_OVERFLOW)?
        } else {
            stride
        };
        let im = mv_image {
            data,
            data_size,
            width,
            height,
            stride,
            format,
        };
        layout(&im)?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(im) };
        Ok(())
    })
}

/// A sub-image (region of interest) of `img` covering `rect`, sharing its memory. Writes `*out`
/// only on success.
///
/// Errors: those of `mv_image_init` for `img`; `MV_STATUS_ZERO_SIZE` for an empty rectangle;
/// `MV_STATUS_OUT_OF_BOUNDS` unless `rect` lies inside the image.
///
/// # Safety
/// `img` must be NULL or a readable `mv_image`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_image_roi(
    img: *const mv_image,
    rect: mv_rect,
    out: *mut mv_image,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        non_null(img)?;
        // SAFETY: non-null, and the caller guarantees it points to an mv_image.
        let im = unsafe { *img };
        layout(&im)?;
        let r = rect.to_core();
        if r.is_empty() {
            return Err(MV_STATUS_ZERO_SIZE);
        }
        if !r.is_inside(im.width as usize, im.height as usize) {
            return Err(MV_STATUS_OUT_OF_BOUNDS);
        }
        let bpp = pixel_bytes(im.format)?;
        let offset = r.y as usize * im.stride + r.x as usize * bpp;
        let sub = mv_image {
            // SAFETY: offset < bytes validated by layout (rect inside the image).
            data: unsafe { im.data.cast::<u8>().add(offset) }.cast(),
            data_size: im.data_size - offset,
            width: r.width as u32,
            height: r.height as u32,
            stride: im.stride,
            format: im.format,
        };
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(sub) };
        Ok(())
    })
}
