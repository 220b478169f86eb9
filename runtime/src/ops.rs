//! Image operations, each running on the backend its images live on. Semantics (arithmetic,
//! rounding, borders, sizes, errors) are those of the same-named functions in `mvision-core`.

use crate::image::Store;
use crate::{Error, Image, Result, Variant};
use mvision_core::filter::{self as f, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::{integral, pyramid, resize, Border, ImageView, ImageViewMut};
use std::sync::Arc;

/// Runs a one-input, one-output operation where its images live: the core function
/// `module::op` on packed host views with `args` and a scratch of `scratch` elements, or the
/// driver method `op` (each driver names its methods as the core names its functions) with
/// `args`, then `gpu_only` (what the core does not take), on device images of either GPU
/// backend. Images on different backends or devices are a
/// [`crate::ErrorKind::BackendMismatch`].
macro_rules! unary {
    (
        $src:ident, $dst:ident, $m:ident::$op:ident($($arg:expr),*),
        scratch: $len:expr $(, gpu_only: $extra:expr)?
    ) => {{
        let (sw, sh, dw, dh) = ($src.width, $src.height, $dst.width, $dst.height);
        match (&$src.store, &mut $dst.store) {
            (Store::Cpu(s), Store::Cpu(d)) => {
                let a = ImageView::packed(s, sw, sh)?;
                let mut b = ImageViewMut::packed(d, dw, dh)?;
                Ok($m::$op(&a, &mut b, $($arg,)* &mut scratch($len))?)
            }
            (Store::OpenCl(c, x), Store::OpenCl(c2, y)) if Arc::ptr_eq(c, c2) => {
                Ok(c.$op(x, y, $($arg,)* $($extra)?)?)
            }
            (Store::Cuda(c, x), Store::Cuda(c2, y)) if Arc::ptr_eq(c, c2) => {
                Ok(c.$op(x, y, $($arg,)* $($extra)?)?)
            }
            _ => Err(Error::mismatch()),
        }
    }};
}

/// Scratch for a CPU call (host side of the runtime may allocate; the core never does).
fn scratch<T: Default + Clone>(len: usize) -> Vec<T> {
    vec![T::default(); len]
}

/// Dense fixed-point convolution of a `u8` image ([`mvision_core::filter::filter2d_u8`]).
///
/// Errors: as the core function; [`crate::ErrorKind::BackendMismatch`]; driver errors.
pub fn filter2d_u8(
    src: &Image<u8>,
    dst: &mut Image<u8>,
    k: &Kernel2dQ,
    border: Border<u8>,
    variant: Variant,
) -> Result<()> {
    let len = f::filter2d_scratch_len(src.width, k.size());
    unary!(src, dst, f::filter2d_u8(k, border), scratch: len, gpu_only: variant)
}

/// Dense float convolution of an `f32` image ([`mvision_core::filter::filter2d_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn filter2d_f32(
    src: &Image<f32>,
    dst: &mut Image<f32>,
    k: &Kernel2dF32,
    border: Border<f32>,
    variant: Variant,
) -> Result<()> {
    let len = f::filter2d_scratch_len(src.width, k.size());
    unary!(src, dst, f::filter2d_f32(k, border), scratch: len, gpu_only: variant)
}

/// Separable fixed-point convolution of a `u8` image ([`mvision_core::filter::sep_filter_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn sep_filter_u8(
    src: &Image<u8>,
    dst: &mut Image<u8>,
    k: &SepKernelQ,
    border: Border<u8>,
) -> Result<()> {
    let len = f::separable_scratch_len(src.width, k.kx().len(), k.ky().len());
    unary!(src, dst, f::sep_filter_u8(k, border), scratch: len)
}

/// Separable float convolution of an `f32` image ([`mvision_core::filter::sep_filter_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn sep_filter_f32(
    src: &Image<f32>,
    dst: &mut Image<f32>,
    k: &SepKernelF32,
    border: Border<f32>,
) -> Result<()> {
    let len = f::separable_scratch_len(src.width, k.kx().len(), k.ky().len());
    unary!(src, dst, f::sep_filter_f32(k, border), scratch: len)
}

/// Gaussian blur of a `u8` image with the fixed-point kernel
/// ([`mvision_core::filter::gaussian_blur_u8`]).
///
/// Errors: kernel errors of [`mvision_core::filter::gaussian_kernel_q`]; as [`filter2d_u8`].
pub fn gaussian_blur_u8(
    src: &Image<u8>,
    dst: &mut Image<u8>,
    ksize: usize,
    sigma_px: f32,
    border: Border<u8>,
) -> Result<()> {
    sep_filter_u8(src, dst, &f::gaussian_kernel_q(ksize, sigma_px)?, border)
}

/// Gaussian blur of an `f32` image ([`mvision_core::filter::gaussian_blur_f32`]).
///
/// Errors: as [`gaussian_blur_u8`].
pub fn gaussian_blur_f32(
    src: &Image<f32>,
    dst: &mut Image<f32>,
    ksize: usize,
    sigma_px: f32,
    border: Border<f32>,
) -> Result<()> {
    sep_filter_f32(src, dst, &f::gaussian_kernel_f32(ksize, sigma_px)?, border)
}

/// Box blur of a `u8` image ([`mvision_core::filter::box_blur_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn box_blur_u8(
    src: &Image<u8>,
    dst: &mut Image<u8>,
    ksize: usize,
    border: Border<u8>,
) -> Result<()> {
    let len = f::separable_scratch_len(src.width, ksize, ksize);
    unary!(src, dst, f::box_blur_u8(ksize, border), scratch: len)
}

/// Box blur of an `f32` image ([`mvision_core::filter::box_blur_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn box_blur_f32(
    src: &Image<f32>,
    dst: &mut Image<f32>,
    ksize: usize,
    border: Border<f32>,
) -> Result<()> {
    let len = f::separable_scratch_len(src.width, ksize, ksize);
    unary!(src, dst, f::box_blur_f32(ksize, border), scratch: len)
}

/// One Gaussian pyramid level down of a `u8` image ([`mvision_core::pyramid::pyr_down_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn pyr_down_u8(src: &Image<u8>, dst: &mut Image<u8>, border: Border<u8>) -> Result<()> {
    let len = pyramid::pyr_down_scratch_len(src.width);
    unary!(src, dst, pyramid::pyr_down_u8(border), scratch: len)
}

/// One Gaussian pyramid level down of an `f32` image ([`mvision_core::pyramid::pyr_down_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn pyr_down_f32(src: &Image<f32>, dst: &mut Image<f32>, border: Border<f32>) -> Result<()> {
    let len = pyramid::pyr_down_scratch_len(src.width);
    unary!(src, dst, pyramid::pyr_down_f32(border), scratch: len)
}

/// Bilinear resize of a `u8` image ([`mvision_core::resize::resize_bilinear_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn resize_bilinear_u8(src: &Image<u8>, dst: &mut Image<u8>) -> Result<()> {
    let len = resize::resize_scratch_len(dst.width);
    unary!(src, dst, resize::resize_bilinear_u8(), scratch: len)
}

/// Bilinear resize of an `f32` image ([`mvision_core::resize::resize_bilinear_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn resize_bilinear_f32(src: &Image<f32>, dst: &mut Image<f32>) -> Result<()> {
    let len = resize::resize_scratch_len(dst.width);
    unary!(src, dst, resize::resize_bilinear_f32(), scratch: len)
}

/// Runs a Sobel operation where its three images live: `cpu` (a core function) on packed host
/// views, or the driver method `dev` (as named in both drivers) on device images.
macro_rules! sobel {
    ($src:expr, $dx:expr, $dy:expr, $border:expr, $cpu:path, $dev:ident) => {{
        let (w, h) = $src.size();
        // The core checks `dy` before `dx`.
        if $dy.size() != (w, h) {
            return Err(mvision_core::Error::SizeMismatch.into());
        }
        let (dxw, dxh) = $dx.size();
        match (&$src.store, &mut $dx.store, &mut $dy.store) {
            (Store::Cpu(s), Store::Cpu(gx), Store::Cpu(gy)) => {
                let a = ImageView::packed(s, w, h)?;
                let (mut ox, mut oy) = (
                    ImageViewMut::packed(gx, dxw, dxh)?,
                    ImageViewMut::packed(gy, w, h)?,
                );
                let mut tmp = scratch(f::separable_scratch_len(w, 3, 3));
                Ok($cpu(&a, &mut ox, &mut oy, $border, &mut tmp)?)
            }
            (Store::OpenCl(c, s), Store::OpenCl(c2, gx), Store::OpenCl(c3, gy))
                if Arc::ptr_eq(c, c2) && Arc::ptr_eq(c, c3) =>
            {
                Ok(c.$dev(s, gx, gy, $border)?)
            }
            (Store::Cuda(c, s), Store::Cuda(c2, gx), Store::Cuda(c3, gy))
                if Arc::ptr_eq(c, c2) && Arc::ptr_eq(c, c3) =>
            {
                Ok(c.$dev(s, gx, gy, $border)?)
            }
            _ => Err(Error::mismatch()),
        }
    }};
}

/// Sobel derivatives of a `u8` image ([`mvision_core::filter::sobel_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn sobel_u8(
    src: &Image<u8>,
    dx: &mut Image<i16>,
    dy: &mut Image<i16>,
    border: Border<u8>,
) -> Result<()> {
    sobel!(src, dx, dy, border, f::sobel_u8, sobel_u8)
}

/// Sobel derivatives of an `f32` image ([`mvision_core::filter::sobel_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn sobel_f32(
    src: &Image<f32>,
    dx: &mut Image<f32>,
    dy: &mut Image<f32>,
    border: Border<f32>,
) -> Result<()> {
    sobel!(src, dx, dy, border, f::sobel_f32, sobel_f32)
}

/// Integral image (and optionally the squared one) of a `u8` image
/// ([`mvision_core::integral::integral_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn integral_u8(
    src: &Image<u8>,
    sum: &mut Image<u32>,
    sqsum: Option<&mut Image<u64>>,
) -> Result<()> {
    let (w, h) = src.size();
    let (tw, th) = sum.size();
    match (&src.store, &mut sum.store, sqsum) {
        (Store::Cpu(s), Store::Cpu(t), None) => {
            let a = ImageView::packed(s, w, h)?;
            Ok(integral::integral_u8(
                &a,
                &mut ImageViewMut::packed(t, tw, th)?,
                None,
            )?)
        }
        (Store::Cpu(s), Store::Cpu(t), Some(q)) => {
            let (qw, qh) = q.size();
            let Store::Cpu(qv) = &mut q.store else {
                return Err(Error::mismatch());
            };
            let a = ImageView::packed(s, w, h)?;
            let mut qview = ImageViewMut::packed(qv, qw, qh)?;
            Ok(integral::integral_u8(
                &a,
                &mut ImageViewMut::packed(t, tw, th)?,
                Some(&mut qview),
            )?)
        }
        (Store::OpenCl(c, s), Store::OpenCl(c2, t), q) if Arc::ptr_eq(c, c2) => {
            let q = match q {
                None => None,
                Some(Image {
                    store: Store::OpenCl(c3, qd),
                    ..
                }) if Arc::ptr_eq(c, c3) => Some(qd),
                Some(_) => return Err(Error::mismatch()),
            };
            Ok(c.integral_u8(s, t, q)?)
        }
        (Store::Cuda(c, s), Store::Cuda(c2, t), q) if Arc::ptr_eq(c, c2) => {
            let q = match q {
                None => None,
                Some(Image {
                    store: Store::Cuda(c3, qd),
                    ..
                }) if Arc::ptr_eq(c, c3) => Some(qd),
                Some(_) => return Err(Error::mismatch()),
            };
            Ok(c.integral_u8(s, t, q)?)
        }
        _ => Err(Error::mismatch()),
    }
}

/// Copies `src` into `dst` (same size) on their backend: a device-to-device copy on a GPU, the
/// reference for kernel bandwidth.
///
/// Errors: `Invalid(SizeMismatch)`; [`crate::ErrorKind::BackendMismatch`]; driver errors.
pub fn copy<T: mvision_core::Pixel>(src: &Image<T>, dst: &mut Image<T>) -> Result<()> {
    if src.size() != dst.size() {
        return Err(mvision_core::Error::SizeMismatch.into());
    }
    match (&src.store, &mut dst.store) {
        (Store::Cpu(s), Store::Cpu(d)) => {
            d.copy_from_slice(s);
            Ok(())
        }
        (Store::OpenCl(c, x), Store::OpenCl(c2, y)) if Arc::ptr_eq(c, c2) => Ok(c.copy(x, y)?),
        (Store::Cuda(c, x), Store::Cuda(c2, y)) if Arc::ptr_eq(c, c2) => Ok(c.copy(x, y)?),
        _ => Err(Error::mismatch()),
    }
}
