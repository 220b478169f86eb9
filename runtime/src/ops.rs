//! Image operations, each running on the backend its images live on. Semantics (arithmetic,
//! rounding, borders, sizes, errors) are those of the same-named functions in `mvision-core`.

use crate::image::Store;
use crate::{Error, Image, Result, Variant};
use mvision_core::filter::{self as f, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::{integral, pyramid, resize, Border, ImageView, ImageViewMut};
use std::sync::Arc;

macro_rules! driver_variant {
    ($m:ident) => {
        impl From<Variant> for $m::Variant {
            fn from(v: Variant) -> Self {
                match v {
                    Variant::Naive => $m::Variant::Naive,
                    Variant::Tiled { w, h } => $m::Variant::Tiled { w, h },
                }
            }
        }
    };
}
driver_variant!(mvision_opencl);
driver_variant!(mvision_cuda);

/// Runs a one-input, one-output operation where its images live: `cpu` on packed host views
/// `(a, b)`, `dev` with the device context `c` and device images `(x, y)` on either GPU
/// backend. Images on different backends or devices are a [`crate::ErrorKind::BackendMismatch`].
macro_rules! unary {
    ($src:expr, $dst:expr, |$a:ident, $b:ident| $cpu:expr, |$c:ident, $x:ident, $y:ident| $dev:expr) => {{
        let (sw, sh, dw, dh) = ($src.width, $src.height, $dst.width, $dst.height);
        match (&$src.store, &mut $dst.store) {
            (Store::Cpu(s), Store::Cpu(d)) => {
                let $a = ImageView::packed(s, sw, sh)?;
                let mut out = ImageViewMut::packed(d, dw, dh)?;
                let $b = &mut out;
                Ok($cpu?)
            }
            (Store::OpenCl($c, $x), Store::OpenCl(c2, $y)) if Arc::ptr_eq($c, c2) => Ok($dev?),
            (Store::Cuda($c, $x), Store::Cuda(c2, $y)) if Arc::ptr_eq($c, c2) => Ok($dev?),
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
    unary!(
        src,
        dst,
        |a, b| f::filter2d_u8(
            &a,
            b,
            k,
            border,
            &mut scratch(f::filter2d_scratch_len(a.width(), k.size()))
        ),
        |c, x, y| c.filter2d_u8(x, y, k, border, variant.into())
    )
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
    unary!(
        src,
        dst,
        |a, b| f::filter2d_f32(
            &a,
            b,
            k,
            border,
            &mut scratch(f::filter2d_scratch_len(a.width(), k.size()))
        ),
        |c, x, y| c.filter2d_f32(x, y, k, border, variant.into())
    )
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
    unary!(
        src,
        dst,
        |a, b| f::sep_filter_u8(
            &a,
            b,
            k,
            border,
            &mut scratch(f::separable_scratch_len(
                a.width(),
                k.kx().len(),
                k.ky().len()
            ))
        ),
        |c, x, y| c.sep_filter_u8(x, y, k, border)
    )
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
    unary!(
        src,
        dst,
        |a, b| f::sep_filter_f32(
            &a,
            b,
            k,
            border,
            &mut scratch(f::separable_scratch_len(
                a.width(),
                k.kx().len(),
                k.ky().len()
            ))
        ),
        |c, x, y| c.sep_filter_f32(x, y, k, border)
    )
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
    unary!(
        src,
        dst,
        |a, b| f::box_blur_u8(
            &a,
            b,
            ksize,
            border,
            &mut scratch(f::separable_scratch_len(a.width(), ksize, ksize))
        ),
        |c, x, y| c.box_blur_u8(x, y, ksize, border)
    )
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
    unary!(
        src,
        dst,
        |a, b| f::box_blur_f32(
            &a,
            b,
            ksize,
            border,
            &mut scratch(f::separable_scratch_len(a.width(), ksize, ksize))
        ),
        |c, x, y| c.box_blur_f32(x, y, ksize, border)
    )
}

/// One Gaussian pyramid level down of a `u8` image ([`mvision_core::pyramid::pyr_down_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn pyr_down_u8(src: &Image<u8>, dst: &mut Image<u8>, border: Border<u8>) -> Result<()> {
    unary!(
        src,
        dst,
        |a, b| pyramid::pyr_down_u8(
            &a,
            b,
            border,
            &mut scratch(pyramid::pyr_down_scratch_len(a.width()))
        ),
        |c, x, y| c.pyr_down_u8(x, y, border)
    )
}

/// One Gaussian pyramid level down of an `f32` image ([`mvision_core::pyramid::pyr_down_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn pyr_down_f32(src: &Image<f32>, dst: &mut Image<f32>, border: Border<f32>) -> Result<()> {
    unary!(
        src,
        dst,
        |a, b| pyramid::pyr_down_f32(
            &a,
            b,
            border,
            &mut scratch(pyramid::pyr_down_scratch_len(a.width()))
        ),
        |c, x, y| c.pyr_down_f32(x, y, border)
    )
}

/// Bilinear resize of a `u8` image ([`mvision_core::resize::resize_bilinear_u8`]).
///
/// Errors: as [`filter2d_u8`].
pub fn resize_bilinear_u8(src: &Image<u8>, dst: &mut Image<u8>) -> Result<()> {
    unary!(
        src,
        dst,
        |a, b| resize::resize_bilinear_u8(
            &a,
            b,
            &mut scratch(resize::resize_scratch_len(b.width()))
        ),
        |c, x, y| c.resize_bilinear_u8(x, y)
    )
}

/// Bilinear resize of an `f32` image ([`mvision_core::resize::resize_bilinear_f32`]).
///
/// Errors: as [`filter2d_u8`].
pub fn resize_bilinear_f32(src: &Image<f32>, dst: &mut Image<f32>) -> Result<()> {
    unary!(
        src,
        dst,
        |a, b| resize::resize_bilinear_f32(
            &a,
            b,
            &mut scratch(resize::resize_scratch_len(b.width()))
        ),
        |c, x, y| c.resize_bilinear_f32(x, y)
    )
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
    let (w, h) = src.size();
    if dy.size() != (w, h) {
        return Err(mvision_core::Error::SizeMismatch.into());
    }
    let (dyw, dyh) = dy.size();
    match (&src.store, &mut dx.store, &mut dy.store) {
        (Store::Cpu(s), Store::Cpu(gx), Store::Cpu(gy)) => {
            let a = ImageView::packed(s, w, h)?;
            let (mut ox, mut oy) = (
                ImageViewMut::packed(gx, dx.width, dx.height)?,
                ImageViewMut::packed(gy, dyw, dyh)?,
            );
            Ok(f::sobel_u8(
                &a,
                &mut ox,
                &mut oy,
                border,
                &mut scratch(f::separable_scratch_len(w, 3, 3)),
            )?)
        }
        (Store::OpenCl(c, s), Store::OpenCl(c2, gx), Store::OpenCl(c3, gy))
            if Arc::ptr_eq(c, c2) && Arc::ptr_eq(c, c3) =>
        {
            Ok(c.sobel_u8(s, gx, gy, border)?)
        }
        (Store::Cuda(c, s), Store::Cuda(c2, gx), Store::Cuda(c3, gy))
            if Arc::ptr_eq(c, c2) && Arc::ptr_eq(c, c3) =>
        {
            Ok(c.sobel_u8(s, gx, gy, border)?)
        }
        _ => Err(Error::mismatch()),
    }
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
