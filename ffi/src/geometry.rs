//! `mv_rect`: integer rectangles, with intersection, IoU and clamping; `mv_rectf`: sub-pixel
//! rectangles (what a tracker reports).

use crate::panic::{guard, guard_value, non_null};
use mvision_core::{Rect, RectF};

/// An axis-aligned rectangle in pixels: top-left corner `(x, y)`, `width × height`. Covers
/// columns `x .. x+width−1` and rows `y .. y+height−1`; a non-positive width or height is empty.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mv_rect {
    /// Left edge in pixels.
    pub x: i32,
    /// Top edge in pixels.
    pub y: i32,
    /// Width in pixels.
    pub width: i32,
    /// Height in pixels.
    pub height: i32,
}

impl mv_rect {
    pub(crate) fn to_core(self) -> Rect {
        Rect::new(self.x, self.y, self.width, self.height)
    }

    pub(crate) fn from_core(r: Rect) -> Self {
        Self {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        }
    }
}

/// An axis-aligned rectangle in pixels with sub-pixel coordinates: top-left corner `(x, y)`,
/// `width × height`. A width or height that is not positive means empty.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct mv_rectf {
    /// Left edge in pixels.
    pub x: f32,
    /// Top edge in pixels.
    pub y: f32,
    /// Width in pixels.
    pub width: f32,
    /// Height in pixels.
    pub height: f32,
}

impl mv_rectf {
    pub(crate) fn from_core(r: RectF) -> Self {
        Self {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        }
    }
}

/// The overlap of `a` and `b` into `*out`; `{0, 0, 0, 0}` when they do not overlap.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_rect_intersection(
    a: mv_rect,
    b: mv_rect,
    out: *mut mv_rect,
) -> crate::mv_status {
    guard(|| {
        non_null(out)?;
        let r = a.to_core().intersection(&b.to_core()).unwrap_or_default();
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(mv_rect::from_core(r)) };
        Ok(())
    })
}

/// Intersection over union of `a` and `b`, in `[0, 1]`; 0 if either is empty.
#[no_mangle]
pub extern "C" fn mv_rect_iou(a: mv_rect, b: mv_rect) -> f32 {
    guard_value(0.0, || a.to_core().iou(&b.to_core()))
}

/// The part of `rect` inside a `width × height` frame into `*out`; `{0, 0, 0, 0}` when nothing
/// is left.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_rect_clamp(
    rect: mv_rect,
    width: u32,
    height: u32,
    out: *mut mv_rect,
) -> crate::mv_status {
    guard(|| {
        non_null(out)?;
        let r = rect
            .to_core()
            .clamp_to(width as usize, height as usize)
            .unwrap_or_default();
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(mv_rect::from_core(r)) };
        Ok(())
    })
}
