//! Gaussian pyramid levels and bilinear resize.

use crate::filter::{dispatch_u8_f32, run_unary};
use crate::image::{check, mv_border, mv_image, scratch};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len};
use mvision_core::PixelFormat;

/// The size of the next pyramid level of a `width × height` image: `(⌈w/2⌉, ⌈h/2⌉)`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if an output is NULL; `MV_STATUS_ZERO_SIZE` for a zero size.
///
/// # Safety
/// Outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_pyr_down_size(
    width: u32,
    height: u32,
    out_width: *mut u32,
    out_height: *mut u32,
) -> mv_status {
    guard(|| {
        non_null(out_width)?;
        non_null(out_height)?;
        if width == 0 || height == 0 {
            return Err(MV_STATUS_ZERO_SIZE);
        }
        let (w, h) = pyr_down_size(width as usize, height as usize);
        // SAFETY: non-null; the caller guarantees writability.
        unsafe {
            out_width.write(w as u32);
            out_height.write(h as u32);
        }
        Ok(())
    })
}

/// One Gaussian pyramid level down: `[1 4 6 4 1]/16` in both directions, keeping even rows and
/// columns. `dst` must be `mv_pyr_down_size` of `src`, same format (`U8`, exact with one
/// rounding, or `F32`).
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT`; `MV_STATUS_SIZE_MISMATCH`;
/// `MV_STATUS_INVALID_ARGUMENT` for a bad border.
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_pyr_down(
    src: *const mv_image,
    dst: *const mv_image,
    border: mv_border,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (check(src)?, check(dst)?) };
        if s.format != d.format {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        if d.size() != pyr_down_size(s.width, s.height) {
            return Err(MV_STATUS_SIZE_MISMATCH);
        }
        // SAFETY: validated pair.
        unsafe {
            dispatch_u8_f32(
                &s,
                &d,
                border,
                pyr_down_scratch_len(s.width),
                pyr_down_u8,
                pyr_down_f32,
            )
        }
    })
}

/// Bilinear resize of `src` to `dst`'s size (any sizes; same format, `U8` or `F32`), with
/// pixel-centre alignment: destination pixel `d` samples `(d + ½)·src/dst − ½`, clamped.
/// Coordinates use 11 fractional bits; `U8` is pure integer arithmetic with one rounding.
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT`; `MV_STATUS_OVERFLOW` for a source
/// wider than `INT32_MAX`; `MV_STATUS_OUT_OF_MEMORY` if the column table (`2·dst width`
/// integers) cannot be allocated.
///
/// # Safety
/// Images NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_resize_bilinear(
    src: *const mv_image,
    dst: *const mv_image,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, d) = unsafe { (check(src)?, check(dst)?) };
        if s.format != d.format {
            return Err(MV_STATUS_UNSUPPORTED_FORMAT);
        }
        let mut tmp = scratch::<i32>(resize_scratch_len(d.width))?;
        match s.format {
            // SAFETY: validated pair of u8 images.
            PixelFormat::U8 => unsafe {
                run_unary(&s, &d, |a, o| resize_bilinear_u8(a, o, &mut tmp))
            },
            // SAFETY: validated pair of f32 images.
            PixelFormat::F32 => unsafe {
                run_unary(&s, &d, |a, o| resize_bilinear_f32(a, o, &mut tmp))
            },
            _ => Err(MV_STATUS_UNSUPPORTED_FORMAT),
        }
    })
}
