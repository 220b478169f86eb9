//! `mv_buffer`: an image resident on one backend (host memory for the CPU, a device buffer for
//! OpenCL or CUDA), and the `mv_submit_*` operations that run where their buffers live.
//!
//! Buffers let a caller keep data on the GPU across operations: upload once, submit several
//! operations, download once. Device operations are asynchronous; `mv_buffer_download` and
//! `mv_context_sync` wait. All buffers of one call must live on the same backend and device
//! (`MV_STATUS_BACKEND_MISMATCH` otherwise), and an output may not be one of the inputs
//! (`MV_STATUS_OVERLAP`). Results equal the immediate functions' (`mv_filter2d`…) exactly for
//! integer formats and within 1e-5 relative for `F32`.
//!
//! Threads: contexts and buffers may be used from any thread, but a buffer must not be used by
//! two calls at the same time (the caller serialises them, as for any mutable object).

use crate::context::{mv_backend, mv_context, one_backend};
use crate::filter::{kernel_len, read_array};
use crate::image::{
    border_f32, border_u8, check, input_view, mv_border, mv_image, mv_pixel_format, output_view,
    InputCopy, MV_PIXEL_F32, MV_PIXEL_I16, MV_PIXEL_U16, MV_PIXEL_U32, MV_PIXEL_U64, MV_PIXEL_U8,
};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::filter::{Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::{ImageView, Pixel};
use mvision_runtime::{ops, Image, Variant};

/// An image resident on one backend. Opaque; create with `mv_buffer_create`, free with
/// `mv_buffer_destroy`. Usable from any thread, by one call at a time.
pub struct mv_buffer {
    image: AnyImage,
}

enum AnyImage {
    U8(Image<u8>),
    U16(Image<u16>),
    I16(Image<i16>),
    U32(Image<u32>),
    U64(Image<u64>),
    F32(Image<f32>),
}

/// Runs `$body` with `$img` bound to the typed image inside `$any`.
macro_rules! with_image {
    ($any:expr, |$img:ident| $body:expr) => {
        match $any {
            AnyImage::U8($img) => $body,
            AnyImage::U16($img) => $body,
            AnyImage::I16($img) => $body,
            AnyImage::U32($img) => $body,
            AnyImage::U64($img) => $body,
            AnyImage::F32($img) => $body,
        }
    };
}

impl AnyImage {
    fn format(&self) -> mv_pixel_format {
        match self {
            AnyImage::U8(_) => MV_PIXEL_U8,
            AnyImage::U16(_) => MV_PIXEL_U16,
            AnyImage::I16(_) => MV_PIXEL_I16,
            AnyImage::U32(_) => MV_PIXEL_U32,
            AnyImage::U64(_) => MV_PIXEL_U64,
            AnyImage::F32(_) => MV_PIXEL_F32,
        }
    }
}

/// Creates a `width × height` buffer of `format` on `backend` (exactly one `MV_BACKEND_*`
/// flag) of `ctx` into `*out`. Contents are unspecified until uploaded or written. The buffer
/// keeps its device alive: it may outlive `ctx`.
///
/// Errors: `MV_STATUS_NULL_POINTER`; `MV_STATUS_INVALID_ARGUMENT` unless `backend` is one flag;
/// `MV_STATUS_BACKEND_UNAVAILABLE` if `ctx` was not created with it;
/// `MV_STATUS_UNSUPPORTED_FORMAT`; `MV_STATUS_ZERO_SIZE`; `MV_STATUS_OVERFLOW`;
/// `MV_STATUS_OUT_OF_DEVICE_MEMORY`.
///
/// # Safety
/// `ctx` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_buffer_create(
    ctx: *const mv_context,
    backend: mv_backend,
    width: u32,
    height: u32,
    format: mv_pixel_format,
    out: *mut *mut mv_buffer,
) -> mv_status {
    guard(|| {
        non_null(ctx)?;
        non_null(out)?;
        let b = one_backend(backend)?;
        // SAFETY: the caller guarantees a live context.
        let c = unsafe { &(*ctx).inner };
        let (w, h) = (width as usize, height as usize);
        let image = match format {
            MV_PIXEL_U8 => AnyImage::U8(Image::new(c, b, w, h)?),
            MV_PIXEL_U16 => AnyImage::U16(Image::new(c, b, w, h)?),
            MV_PIXEL_I16 => AnyImage::I16(Image::new(c, b, w, h)?),
            MV_PIXEL_U32 => AnyImage::U32(Image::new(c, b, w, h)?),
            MV_PIXEL_U64 => AnyImage::U64(Image::new(c, b, w, h)?),
            MV_PIXEL_F32 => AnyImage::F32(Image::new(c, b, w, h)?),
            _ => return Err(MV_STATUS_UNSUPPORTED_FORMAT),
        };
        let buf = Box::into_raw(Box::new(mv_buffer { image }));
        // SAFETY: non-null; the caller guarantees writability.
        unsafe { out.write(buf) };
        Ok(())
    })
}

/// Frees a buffer. Accepts NULL (does nothing).
///
/// # Safety
/// `buf` NULL or from `mv_buffer_create` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_buffer_destroy(buf: *mut mv_buffer) {
    let _ = guard(|| {
        if !buf.is_null() {
            // SAFETY: the caller guarantees it came from Box::into_raw in mv_buffer_create.
            drop(unsafe { Box::from_raw(buf) });
        }
        Ok(())
    });
}

/// Size, format and backend of a buffer; each output may be NULL if not wanted.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `buf` is NULL.
///
/// # Safety
/// `buf` NULL or live; outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_buffer_info(
    buf: *const mv_buffer,
    width: *mut u32,
    height: *mut u32,
    format: *mut mv_pixel_format,
    backend: *mut mv_backend,
) -> mv_status {
    guard(|| {
        non_null(buf)?;
        // SAFETY: the caller guarantees a live buffer.
        let img = unsafe { &(*buf).image };
        let ((w, h), b) = with_image!(img, |i| (i.size(), i.backend()));
        // SAFETY: each output is written only if non-null; the caller guarantees writability.
        unsafe {
            if !width.is_null() {
                width.write(w as u32);
            }
            if !height.is_null() {
                height.write(h as u32);
            }
            if !format.is_null() {
                format.write(img.format());
            }
            if !backend.is_null() {
                backend.write(b.bit());
            }
        }
        Ok(())
    })
}

fn upload_typed<T: Pixel>(img: &mut Image<T>, src: &ImageView<'_, T>) -> Result<(), mv_status> {
    Ok(img.upload(src)?)
}

/// Copies the host image `src` (same size and format) into `buf`.
///
/// Errors: `MV_STATUS_NULL_POINTER`; image errors of `src`; `MV_STATUS_UNSUPPORTED_FORMAT` if
/// the formats differ; `MV_STATUS_SIZE_MISMATCH`; `MV_STATUS_DEVICE_ERROR`.
///
/// # Safety
/// `buf` NULL or live; `src` NULL or a valid `mv_image`.
#[no_mangle]
pub unsafe extern "C" fn mv_buffer_upload(buf: *mut mv_buffer, src: *const mv_image) -> mv_status {
    guard(|| {
        non_null(buf)?;
        // SAFETY: forwarded contract.
        let s = unsafe { check(src)? };
        // SAFETY: the caller guarantees a live buffer.
        let img = unsafe { &mut (*buf).image };
        if img.format() != crate::image::format_code(s.format) {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        with_image!(img, |i| {
            let mut hold = InputCopy::default();
            // SAFETY: validated host image of the buffer's pixel type; no outputs.
            let v = unsafe { input_view(&s, &[], &mut hold)? };
            upload_typed(i, &v)
        })
    })
}

/// Copies `buf` into the host image `dst` (same size and format), waiting for pending work on
/// the buffer's device. `dst` is written only if the whole transfer succeeds.
///
/// Errors: as `mv_buffer_upload`.
///
/// # Safety
/// `buf` NULL or live; `dst` NULL or a valid `mv_image`.
#[no_mangle]
pub unsafe extern "C" fn mv_buffer_download(
    buf: *const mv_buffer,
    dst: *const mv_image,
) -> mv_status {
    guard(|| {
        non_null(buf)?;
        // SAFETY: forwarded contract.
        let d = unsafe { check(dst)? };
        // SAFETY: the caller guarantees a live buffer.
        let img = unsafe { &(*buf).image };
        if img.format() != crate::image::format_code(d.format) {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        with_image!(img, |i| {
            if i.size() != d.size() {
                return Err(MV_STATUS_SIZE_MISMATCH);
            }
            // Staged, so a failed transfer leaves the caller's memory untouched.
            let (w, h) = i.size();
            let mut staging = crate::image::scratch(w * h)?;
            i.download(&mut mvision_core::ImageViewMut::packed(&mut staging, w, h)?)?;
            // SAFETY: validated host image of the buffer's pixel type, the only output.
            let mut out = unsafe { output_view(&d)? };
            for (y, row) in staging.chunks_exact(w).enumerate() {
                out.row_mut(y).copy_from_slice(row);
            }
            Ok(())
        })
    })
}

/// Borrows an input and an output buffer of one call, rejecting NULL and `src == dst`.
///
/// # Safety
/// Pointers NULL or live buffers.
unsafe fn pair<'a>(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
) -> Result<(&'a AnyImage, &'a mut AnyImage), mv_status> {
    non_null(src)?;
    non_null(dst)?;
    if std::ptr::eq(src, dst) {
        return Err(MV_STATUS_OVERLAP);
    }
    // SAFETY: distinct live buffers (checked above; the caller guarantees liveness).
    Ok(unsafe { (&(*src).image, &mut (*dst).image) })
}

/// As `mv_filter2d`, on buffers (`U8` → `U8` fixed-point, `F32` → `F32`), with the tiled
/// device kernel on GPU backends. `U8` results equal the CPU's bit for bit; GPU `F32` results
/// are within 1e-5 relative of them (the kernels fuse multiply-adds; the environment variable
/// `MVISION_FILTER_FMA=off`, read once per process, makes them bit-identical). The same holds
/// for the other `mv_submit_*` filters.
///
/// Errors: as `mv_filter2d`; `MV_STATUS_BACKEND_MISMATCH`; `MV_STATUS_OVERLAP` if
/// `src == dst`; device errors.
///
/// # Safety
/// Buffers NULL or live; `kernel` NULL or `ksize²` readable floats.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_filter2d(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
    kernel: *const f32,
    ksize: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        let k = kernel_len(ksize)?;
        // SAFETY: k ≤ 15 validated; the caller provides k² values.
        let c = unsafe { read_array(kernel, k * k)? };
        let v = Variant::default();
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => Ok(ops::filter2d_u8(
                a,
                b,
                &Kernel2dQ::from_f32_auto(k, c)?,
                border_u8(border)?,
                v,
            )?),
            (AnyImage::F32(a), AnyImage::F32(b)) => Ok(ops::filter2d_f32(
                a,
                b,
                &Kernel2dF32::new(k, c)?,
                border_f32(border)?,
                v,
            )?),
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_sep_filter2d`, on buffers.
///
/// Errors: as `mv_submit_filter2d`.
///
/// # Safety
/// Buffers NULL or live; `kx`, `ky` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_sep_filter2d(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
    kx: *const f32,
    kx_len: u32,
    ky: *const f32,
    ky_len: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        let (nx, ny) = (kernel_len(kx_len)?, kernel_len(ky_len)?);
        // SAFETY: lengths validated; the caller provides them.
        let (vx, vy) = unsafe { (read_array(kx, nx)?, read_array(ky, ny)?) };
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => Ok(ops::sep_filter_u8(
                a,
                b,
                &SepKernelQ::from_f32_auto(vx, vy)?,
                border_u8(border)?,
            )?),
            (AnyImage::F32(a), AnyImage::F32(b)) => Ok(ops::sep_filter_f32(
                a,
                b,
                &SepKernelF32::new(vx, vy)?,
                border_f32(border)?,
            )?),
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_gaussian_blur`, on buffers.
///
/// Errors: as `mv_submit_filter2d` and `mv_gaussian_blur`.
///
/// # Safety
/// Buffers NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_gaussian_blur(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
    ksize: u32,
    sigma: f32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        let k = ksize as usize;
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => {
                Ok(ops::gaussian_blur_u8(a, b, k, sigma, border_u8(border)?)?)
            }
            (AnyImage::F32(a), AnyImage::F32(b)) => {
                Ok(ops::gaussian_blur_f32(a, b, k, sigma, border_f32(border)?)?)
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_box_blur`, on buffers.
///
/// Errors: as `mv_submit_filter2d`.
///
/// # Safety
/// Buffers NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_box_blur(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
    ksize: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        let k = kernel_len(ksize)?;
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => {
                Ok(ops::box_blur_u8(a, b, k, border_u8(border)?)?)
            }
            (AnyImage::F32(a), AnyImage::F32(b)) => {
                Ok(ops::box_blur_f32(a, b, k, border_f32(border)?)?)
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_sobel` for a `U8` source buffer and `I16` derivative buffers.
///
/// Errors: as `mv_submit_filter2d`; `MV_STATUS_OVERLAP` if any two buffers are the same.
///
/// # Safety
/// Buffers NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_sobel(
    src: *const mv_buffer,
    dx: *mut mv_buffer,
    dy: *mut mv_buffer,
    border: mv_border,
) -> mv_status {
    guard(|| {
        non_null(dy)?;
        // SAFETY: forwarded contract; dy is checked distinct below before borrowing.
        let (s, x) = unsafe { pair(src, dx)? };
        if std::ptr::eq(dy, dx) || std::ptr::eq(dy.cast_const(), src) {
            return Err(MV_STATUS_OVERLAP);
        }
        // SAFETY: distinct live buffer.
        let y = unsafe { &mut (*dy).image };
        match (s, x, y) {
            (AnyImage::U8(a), AnyImage::I16(gx), AnyImage::I16(gy)) => {
                Ok(ops::sobel_u8(a, gx, gy, border_u8(border)?)?)
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_integral`, on buffers (`U8` source, `U32` table, optional `U64` squared table).
///
/// Errors: as `mv_submit_filter2d`; `MV_STATUS_OVERLAP` if any two buffers are the same.
///
/// # Safety
/// `src`, `sum` NULL or live; `sqsum` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_integral(
    src: *const mv_buffer,
    sum: *mut mv_buffer,
    sqsum: *mut mv_buffer,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, t) = unsafe { pair(src, sum)? };
        let q = if sqsum.is_null() {
            None
        } else {
            if std::ptr::eq(sqsum, sum) || std::ptr::eq(sqsum.cast_const(), src) {
                return Err(MV_STATUS_OVERLAP);
            }
            // SAFETY: distinct live buffer.
            match unsafe { &mut (*sqsum).image } {
                AnyImage::U64(q) => Some(q),
                _ => return Err(MV_STATUS_UNSUPPORTED_FORMAT),
            }
        };
        match (s, t) {
            (AnyImage::U8(a), AnyImage::U32(b)) => Ok(ops::integral_u8(a, b, q)?),
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_pyr_down`, on buffers.
///
/// Errors: as `mv_submit_filter2d`.
///
/// # Safety
/// Buffers NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_pyr_down(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => Ok(ops::pyr_down_u8(a, b, border_u8(border)?)?),
            (AnyImage::F32(a), AnyImage::F32(b)) => {
                Ok(ops::pyr_down_f32(a, b, border_f32(border)?)?)
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// As `mv_resize_bilinear`, on buffers.
///
/// Errors: as `mv_submit_filter2d`.
///
/// # Safety
/// Buffers NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_submit_resize_bilinear(
    src: *const mv_buffer,
    dst: *mut mv_buffer,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { pair(src, dst)? };
        match (s, d) {
            (AnyImage::U8(a), AnyImage::U8(b)) => Ok(ops::resize_bilinear_u8(a, b)?),
            (AnyImage::F32(a), AnyImage::F32(b)) => Ok(ops::resize_bilinear_f32(a, b)?),
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}
