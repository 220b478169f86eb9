//! Integral images and O(1) window statistics.

use crate::geometry::mv_rect;
use crate::image::{check, disjoint_outputs, input_view, mv_image, output_view, InputCopy};
use crate::panic::{guard, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::integral::{integral_size, integral_u8, IntegralImage};
use mvision_core::PixelFormat;

/// Integral image of a `U8` image into `sum` (`U32`, `(width+1) × (height+1)`, row 0 and
/// column 0 zero) and, if `sqsum` is not NULL, the squared integral into `sqsum` (`U64`, same
/// size).
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT`; `MV_STATUS_SIZE_MISMATCH` unless the
/// tables are `(width+1) × (height+1)`; `MV_STATUS_OVERFLOW` above 16 843 009 pixels (the `u32`
/// sum could wrap); `MV_STATUS_OVERLAP` if `sum` and `sqsum` overlap.
///
/// # Safety
/// `src`, `sum` NULL or valid; `sqsum` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn mv_integral(
    src: *const mv_image,
    sum: *const mv_image,
    sqsum: *const mv_image,
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let (s, t) = unsafe { (check(src)?, check(sum)?) };
        // SAFETY: forwarded contract.
        let q = if sqsum.is_null() {
            None
        } else {
            Some(unsafe { check(sqsum)? })
        };
        s.expect(PixelFormat::U8)?;
        t.expect(PixelFormat::U32)?;
        let size = integral_size(s.width, s.height);
        if t.size() != size {
            return Err(MV_STATUS_SIZE_MISMATCH);
        }
        if let Some(q) = &q {
            q.expect(PixelFormat::U64)?;
            if q.size() != size {
                return Err(MV_STATUS_SIZE_MISMATCH);
            }
        }
        let mut outs = vec![&t];
        outs.extend(q.as_ref());
        disjoint_outputs(&outs)?;
        let mut hold = InputCopy::default();
        // SAFETY: validated; input viewed (copied if needed) before outputs.
        unsafe {
            let sv = input_view::<u8>(&s, &outs, &mut hold)?;
            let mut tv = output_view::<u32>(&t)?;
            match &q {
                Some(q) => integral_u8(&sv, &mut tv, Some(&mut output_view::<u64>(q)?))?,
                None => integral_u8(&sv, &mut tv, None)?,
            }
        }
        Ok(())
    })
}

/// Sum of the source pixels inside `rect`, from an integral image made by `mv_integral`.
///
/// Errors: image errors; `MV_STATUS_UNSUPPORTED_FORMAT` unless `sum` is `U32`;
/// `MV_STATUS_ZERO_SIZE` for an empty rectangle or a table narrower or shorter than 2 (the
/// table of an empty source); `MV_STATUS_OUT_OF_BOUNDS` unless the rectangle lies inside the
/// source image (`(width−1) × (height−1)` of the table).
///
/// # Safety
/// `sum` NULL or valid; `out_sum` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_integral_window_sum(
    sum: *const mv_image,
    rect: mv_rect,
    out_sum: *mut u32,
) -> mv_status {
    guard(|| {
        non_null(out_sum)?;
        // SAFETY: forwarded contract.
        let t = unsafe { check(sum)? };
        t.expect(PixelFormat::U32)?;
        if t.width < 2 || t.height < 2 {
            return Err(MV_STATUS_ZERO_SIZE); // the table of a 0-pixel-wide or -high source
        }
        let mut hold = InputCopy::default();
        // SAFETY: validated input; no outputs alias it.
        let tv = unsafe { input_view::<u32>(&t, &[], &mut hold)? };
        let v = IntegralImage::new(tv, None)?.window_sum(rect.to_core())?;
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out_sum.write(v) };
        Ok(())
    })
}

/// Mean and population variance of the source pixels inside `rect`, from the integral and
/// squared integral images of `mv_integral`. The variance numerator `n·Σp² − (Σp)²` is exact;
/// the only rounding is the final division. Either output may be NULL if not wanted, but not
/// both.
///
/// Errors: as `mv_integral_window_sum`; `MV_STATUS_UNSUPPORTED_FORMAT` unless `sqsum` is
/// `U64`; `MV_STATUS_SIZE_MISMATCH` if the tables differ in size; `MV_STATUS_NULL_POINTER` if
/// both outputs are NULL.
///
/// # Safety
/// `sum`, `sqsum` NULL or valid; outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_integral_window_stats(
    sum: *const mv_image,
    sqsum: *const mv_image,
    rect: mv_rect,
    out_mean: *mut f64,
    out_variance: *mut f64,
) -> mv_status {
    guard(|| {
        if out_mean.is_null() && out_variance.is_null() {
            return Err(MV_STATUS_NULL_POINTER);
        }
        // SAFETY: forwarded contract.
        let (t, q) = unsafe { (check(sum)?, check(sqsum)?) };
        t.expect(PixelFormat::U32)?;
        q.expect(PixelFormat::U64)?;
        if t.width < 2 || t.height < 2 {
            return Err(MV_STATUS_ZERO_SIZE); // the table of a 0-pixel-wide or -high source
        }
        let (mut h1, mut h2) = (InputCopy::default(), InputCopy::default());
        // SAFETY: validated inputs; no outputs alias them.
        let (tv, qv) = unsafe {
            (
                input_view::<u32>(&t, &[], &mut h1)?,
                input_view::<u64>(&q, &[], &mut h2)?,
            )
        };
        let ii = IntegralImage::new(tv, Some(qv))?;
        let r = rect.to_core();
        let (mean, var) = (ii.window_mean(r)?, ii.window_variance(r)?);
        // SAFETY: each is written only if non-null; the caller guarantees writability.
        unsafe {
            if !out_mean.is_null() {
                out_mean.write(mean);
            }
            if !out_variance.is_null() {
                out_variance.write(var);
            }
        }
        Ok(())
    })
}
