//! Immediate filtering functions: dense and separable convolution, Gaussian and box blur,
//! Sobel derivatives and gradient polar form. All accept `MV_PIXEL_U8` (fixed-point, the
//! bit-exact reference of GPU kernels) and `MV_PIXEL_F32` images; source and destination have
//! the same size and format unless stated otherwise. In-place calls (`dst` = `src`) are allowed.

use crate::image::{
    border_f32, border_u8, check, disjoint_outputs, input_view, mv_border, mv_image, output_view,
    scratch, Checked, InputCopy,
};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::filter::{self as f, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::{Border, ImageView, ImageViewMut, Pixel, PixelFormat};

/// Runs `op` on a validated input/output pair (the input is copied first if they overlap).
///
/// # Safety
/// `src` and `dst` come from [`check`], with pixel types `S` and `D`.
pub(crate) unsafe fn run_unary<S: Pixel, D: Pixel>(
    src: &Checked,
    dst: &Checked,
    op: impl FnOnce(&ImageView<'_, S>, &mut ImageViewMut<'_, D>) -> mvision_core::Result<()>,
) -> Result<(), mv_status> {
    src.expect(S::FORMAT)?;
    dst.expect(D::FORMAT)?;
    let mut hold = InputCopy::default();
    // SAFETY: forwarded contract; inputs are viewed before outputs.
    let s = unsafe { input_view::<S>(src, &[dst], &mut hold)? };
    let mut d = unsafe { output_view::<D>(dst)? };
    op(&s, &mut d).map_err(Into::into)
}

/// Runs a same-format operation on a validated pair: `on_u8` for U8 images (with an `i32`
/// scratch of `scratch_len`), `on_f32` for F32 images (with an `f32` scratch). The border is
/// converted for the format first; other formats give `MV_STATUS_UNSUPPORTED_FORMAT`.
///
/// # Safety
/// `src` and `dst` come from [`check`].
pub(crate) unsafe fn dispatch_u8_f32(
    src: &Checked,
    dst: &Checked,
    border: mv_border,
    scratch_len: usize,
    on_u8: impl FnOnce(
        &ImageView<'_, u8>,
        &mut ImageViewMut<'_, u8>,
        Border<u8>,
        &mut [i32],
    ) -> mvision_core::Result<()>,
    on_f32: impl FnOnce(
        &ImageView<'_, f32>,
        &mut ImageViewMut<'_, f32>,
        Border<f32>,
        &mut [f32],
    ) -> mvision_core::Result<()>,
) -> Result<(), mv_status> {
    match src.format {
        PixelFormat::U8 => {
            let b = border_u8(border)?;
            let mut tmp = scratch::<i32>(scratch_len)?;
            // SAFETY: forwarded contract; formats are checked by run_unary.
            unsafe { run_unary(src, dst, |a, o| on_u8(a, o, b, &mut tmp)) }
        }
        PixelFormat::F32 => {
            let b = border_f32(border)?;
            let mut tmp = scratch::<f32>(scratch_len)?;
            // SAFETY: forwarded contract; formats are checked by run_unary.
            unsafe { run_unary(src, dst, |a, o| on_f32(a, o, b, &mut tmp)) }
        }
        _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
    }
}

/// Validates a pair of images and dispatches on the (shared) source format.
///
/// # Safety
/// Pointers NULL or valid `mv_image`s.
unsafe fn same_format_pair(
    src: *const mv_image,
    dst: *const mv_image,
) -> Result<(Checked, Checked), mv_status> {
    // SAFETY: forwarded contract.
    let (s, d) = unsafe { (check(src)?, check(dst)?) };
    if s.format != d.format {
        return Err(MV_STATUS_UNSUPPORTED_FORMAT);
    }
    if s.size() != d.size() {
        return Err(MV_STATUS_SIZE_MISMATCH);
    }
    Ok((s, d))
}

/// Reads `n` values from a caller array after checking the pointer.
///
/// # Safety
/// `p` NULL or valid for `n` reads.
pub(crate) unsafe fn read_array<'a, T>(p: *const T, n: usize) -> Result<&'a [T], mv_status> {
    non_null(p)?;
    // SAFETY: non-null; the caller guarantees n readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Validates a kernel side length (odd, 1..=15) before any coefficient is read.
pub(crate) fn kernel_len(ksize: u32) -> Result<usize, mv_status> {
    match ksize {
        0 => Err(MV_STATUS_ZERO_SIZE),
        k if k % 2 == 0 || k as usize > f::MAX_KERNEL_SIZE => Err(MV_STATUS_INVALID_KERNEL),
        k => Ok(k as usize),
    }
}

/// Dense `ksize × ksize` convolution (correlation, kernel not flipped) with float coefficients
/// (row-major). For `u8` images the kernel is quantised to fixed point at the largest shift
/// ≤ 14 whose worst case fits `i32`, then applied exactly (round half up, saturate).
///
/// Errors: `MV_STATUS_NULL_POINTER`; image errors (see `mv_image_init`);
/// `MV_STATUS_UNSUPPORTED_FORMAT` unless both are U8 or both F32; `MV_STATUS_SIZE_MISMATCH`;
/// `MV_STATUS_ZERO_SIZE` / `MV_STATUS_INVALID_KERNEL` for a bad size or coefficients;
/// `MV_STATUS_INVALID_ARGUMENT` for a bad border; `MV_STATUS_OUT_OF_MEMORY` if the working
/// buffer (about `ksize·(width+ksize)` integers) cannot be allocated. Every filter below can
/// also return `MV_STATUS_OUT_OF_MEMORY` for its working buffer.
///
/// # Safety
/// Images NULL or valid; `kernel` NULL or `ksize²` readable floats.
#[no_mangle]
pub unsafe extern "C" fn mv_filter2d(
    src: *const mv_image,
    dst: *const mv_image,
    kernel: *const f32,
    ksize: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        non_null(kernel)?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        let k = kernel_len(ksize)?;
        // SAFETY: k ≤ 15 validated; caller provides k² values.
        let coeffs = unsafe { read_array(kernel, k * k)? };
        let len = f::filter2d_scratch_len(s.width, k);
        // SAFETY: validated pair.
        unsafe {
            dispatch_u8_f32(
                &s,
                &d,
                border,
                len,
                |a, o, b, t| f::filter2d_u8(a, o, &Kernel2dQ::from_f32_auto(k, coeffs)?, b, t),
                |a, o, b, t| f::filter2d_f32(a, o, &Kernel2dF32::new(k, coeffs)?, b, t),
            )
        }
    })
}

/// Dense fixed-point convolution of a `u8` image: `ksize²` integer coefficients (row-major)
/// with `shift` fractional bits; each output is `clamp(floor((Σ c·p + 2^(shift−1)) / 2^shift),
/// 0, 255)`, exact.
///
/// Errors: as `mv_filter2d` (U8 only); `MV_STATUS_INVALID_KERNEL` if
/// `255·Σ|c| + 2^(shift−1)` exceeds `INT32_MAX`; `MV_STATUS_INVALID_ARGUMENT` for `shift > 24`.
///
/// # Safety
/// Images NULL or valid; `kernel` NULL or `ksize²` readable values.
#[no_mangle]
pub unsafe extern "C" fn mv_filter2d_fixed(
    src: *const mv_image,
    dst: *const mv_image,
    kernel: *const i32,
    ksize: u32,
    shift: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        non_null(kernel)?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        s.expect(PixelFormat::U8)?;
        let k = kernel_len(ksize)?;
        // SAFETY: k ≤ 15 validated; caller provides k² values.
        let kq = Kernel2dQ::new(k, unsafe { read_array(kernel, k * k)? }, shift)?;
        let b = border_u8(border)?;
        let mut tmp = scratch::<i32>(f::filter2d_scratch_len(s.width, k))?;
        // SAFETY: validated pair of u8 images.
        unsafe { run_unary(&s, &d, |a, o| f::filter2d_u8(a, o, &kq, b, &mut tmp)) }
    })
}

/// Separable convolution: `kx` (`kx_len` taps) along rows, then `ky` (`ky_len` taps) down
/// columns, float coefficients. For `u8` images both vectors are quantised with the same
/// number of fractional bits per axis (the largest ≤ 7 that fits) and the result is rounded
/// once.
///
/// Errors: as `mv_filter2d`.
///
/// # Safety
/// Images NULL or valid; `kx`, `ky` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn mv_sep_filter2d(
    src: *const mv_image,
    dst: *const mv_image,
    kx: *const f32,
    kx_len: u32,
    ky: *const f32,
    ky_len: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        non_null(kx)?;
        non_null(ky)?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        let (nx, ny) = (kernel_len(kx_len)?, kernel_len(ky_len)?);
        // SAFETY: lengths ≤ 15 validated; caller provides them.
        let (vx, vy) = unsafe { (read_array(kx, nx)?, read_array(ky, ny)?) };
        let len = f::separable_scratch_len(s.width, nx, ny);
        // SAFETY: validated pair.
        unsafe {
            dispatch_u8_f32(
                &s,
                &d,
                border,
                len,
                |a, o, b, t| f::sep_filter_u8(a, o, &SepKernelQ::from_f32_auto(vx, vy)?, b, t),
                |a, o, b, t| f::sep_filter_f32(a, o, &SepKernelF32::new(vx, vy)?, b, t),
            )
        }
    })
}

/// Separable fixed-point convolution of a `u8` image: integer vectors whose product has
/// `shift` fractional bits in total; exact integer sums, one rounding (half up), saturation.
///
/// Errors: as `mv_filter2d_fixed` (the range check uses `255·Σ|kx|·Σ|ky|`).
///
/// # Safety
/// Images NULL or valid; `kx`, `ky` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn mv_sep_filter2d_fixed(
    src: *const mv_image,
    dst: *const mv_image,
    kx: *const i32,
    kx_len: u32,
    ky: *const i32,
    ky_len: u32,
    shift: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        non_null(kx)?;
        non_null(ky)?;
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        s.expect(PixelFormat::U8)?;
        let (nx, ny) = (kernel_len(kx_len)?, kernel_len(ky_len)?);
        // SAFETY: lengths ≤ 15 validated; caller provides them.
        let kq = unsafe { SepKernelQ::new(read_array(kx, nx)?, read_array(ky, ny)?, shift)? };
        let b = border_u8(border)?;
        let mut tmp = scratch::<i32>(f::separable_scratch_len(s.width, nx, ny))?;
        // SAFETY: validated pair of u8 images.
        unsafe { run_unary(&s, &d, |a, o| f::sep_filter_u8(a, o, &kq, b, &mut tmp)) }
    })
}

/// Gaussian blur. `ksize` 0 derives the size from `sigma` (`2·ceil(3σ)+1`); `sigma` ≤ 0 uses, as
/// OpenCV does, fixed kernels for `ksize` ≤ 7 (`[1 2 1]/4`, `[1 4 6 4 1]/16`, …) and
/// `σ = 0.3·((ksize−1)/2 − 1) + 0.8` above. `u8` uses the fixed-point kernel (10 fractional bits
/// per axis, taps summing exactly to 1024).
///
/// Errors: image errors; `MV_STATUS_INVALID_ARGUMENT` if `ksize` is 0 and `sigma` ≤ 0, sigma
/// is NaN/∞, or a bad border; `MV_STATUS_OUT_OF_MEMORY` if scratch cannot be allocated; `MV_STATUS_INVALID_KERNEL` for an even size or one above 15
/// (σ > 7/3 with `ksize` 0).
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_gaussian_blur(
    src: *const mv_image,
    dst: *const mv_image,
    ksize: u32,
    sigma: f32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        // Validates ksize/sigma (the f32 and fixed kernels share the size rule).
        let k = f::gaussian_kernel_f32(ksize as usize, sigma)?.kx().len();
        let len = f::separable_scratch_len(s.width, k, k);
        // SAFETY: validated pair.
        unsafe {
            dispatch_u8_f32(
                &s,
                &d,
                border,
                len,
                |a, o, b, t| f::gaussian_blur_u8(a, o, ksize as usize, sigma, b, t),
                |a, o, b, t| f::gaussian_blur_f32(a, o, ksize as usize, sigma, b, t),
            )
        }
    })
}

/// Box blur: mean over a `ksize × ksize` window. `u8`: exact sum divided by `ksize²`, rounded to
/// nearest (halves up).
///
/// Errors: image errors; `MV_STATUS_ZERO_SIZE` / `MV_STATUS_INVALID_KERNEL` for a bad size;
/// `MV_STATUS_INVALID_ARGUMENT` for a bad border.
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_box_blur(
    src: *const mv_image,
    dst: *const mv_image,
    ksize: u32,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { same_format_pair(src, dst)? };
        let k = kernel_len(ksize)?;
        let len = f::separable_scratch_len(s.width, k, k);
        // SAFETY: validated pair.
        unsafe {
            dispatch_u8_f32(
                &s,
                &d,
                border,
                len,
                |a, o, b, t| f::box_blur_u8(a, o, k, b, t),
                |a, o, b, t| f::box_blur_f32(a, o, k, b, t),
            )
        }
    })
}

/// 3 × 3 Sobel derivatives `dx` (`[−1 0 1]` across, `[1 2 1]` down) and `dy` (transposed),
/// unscaled. `U8` source → `I16` outputs (range ±1020); `F32` → `F32`.
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT` for other format combinations;
/// `MV_STATUS_SIZE_MISMATCH`; `MV_STATUS_OVERLAP` if `dx` and `dy` overlap;
/// `MV_STATUS_INVALID_ARGUMENT` for a bad border.
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_sobel(
    src: *const mv_image,
    dx: *const mv_image,
    dy: *const mv_image,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, gx, gy) = unsafe { (check(src)?, check(dx)?, check(dy)?) };
        if gx.format != gy.format {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        if s.size() != gx.size() || s.size() != gy.size() {
            return Err(MV_STATUS_SIZE_MISMATCH);
        }
        disjoint_outputs(&[&gx, &gy])?;
        let len = f::separable_scratch_len(s.width, 3, 3);
        match (s.format, gx.format) {
            (PixelFormat::U8, PixelFormat::I16) => {
                let b = border_u8(border)?;
                let mut tmp = scratch::<i32>(len)?;
                let mut hold = InputCopy::default();
                // SAFETY: validated; input viewed (copied if needed) before outputs.
                unsafe {
                    let sv = input_view::<u8>(&s, &[&gx, &gy], &mut hold)?;
                    let (mut ox, mut oy) = (output_view(&gx)?, output_view(&gy)?);
                    f::sobel_u8(&sv, &mut ox, &mut oy, b, &mut tmp)?;
                }
                Ok(())
            }
            (PixelFormat::F32, PixelFormat::F32) => {
                let b = border_f32(border)?;
                let mut tmp = scratch::<f32>(len)?;
                let mut hold = InputCopy::default();
                // SAFETY: validated; input viewed (copied if needed) before outputs.
                unsafe {
                    let sv = input_view::<f32>(&s, &[&gx, &gy], &mut hold)?;
                    let (mut ox, mut oy) = (output_view(&gx)?, output_view(&gy)?);
                    f::sobel_f32(&sv, &mut ox, &mut oy, b, &mut tmp)?;
                }
                Ok(())
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}

/// Gradient magnitude `√(dx² + dy²)` and orientation `atan2(dy, dx)` in radians, in `(−π, π]`.
/// `dx`, `dy`: both `I16` or both `F32`; `magnitude`, `orientation`: `F32`; one size for all.
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT`; `MV_STATUS_SIZE_MISMATCH`;
/// `MV_STATUS_OVERLAP` if the two outputs overlap.
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_gradient_polar(
    dx: *const mv_image,
    dy: *const mv_image,
    magnitude: *const mv_image,
    orientation: *const mv_image,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (gx, gy, m, o) = unsafe {
            (
                check(dx)?,
                check(dy)?,
                check(magnitude)?,
                check(orientation)?,
            )
        };
        if gx.format != gy.format {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        m.expect(PixelFormat::F32)?;
        o.expect(PixelFormat::F32)?;
        if [gy.size(), m.size(), o.size()]
            .iter()
            .any(|s| *s != gx.size())
        {
            return Err(MV_STATUS_SIZE_MISMATCH);
        }
        disjoint_outputs(&[&m, &o])?;
        let outs = [&m, &o];
        match gx.format {
            PixelFormat::I16 => {
                let (mut h1, mut h2) = (InputCopy::default(), InputCopy::default());
                // SAFETY: validated; inputs viewed (copied if needed) before outputs.
                unsafe {
                    let a = input_view::<i16>(&gx, &outs, &mut h1)?;
                    let b = input_view::<i16>(&gy, &outs, &mut h2)?;
                    let (mut mv, mut ov) = (output_view(&m)?, output_view(&o)?);
                    f::gradient_polar_i16(&a, &b, &mut mv, &mut ov)?;
                }
                Ok(())
            }
            PixelFormat::F32 => {
                let (mut h1, mut h2) = (InputCopy::default(), InputCopy::default());
                // SAFETY: validated; inputs viewed (copied if needed) before outputs.
                unsafe {
                    let a = input_view::<f32>(&gx, &outs, &mut h1)?;
                    let b = input_view::<f32>(&gy, &outs, &mut h2)?;
                    let (mut mv, mut ov) = (output_view(&m)?, output_view(&o)?);
                    f::gradient_polar_f32(&a, &b, &mut mv, &mut ov)?;
                }
                Ok(())
            }
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}
