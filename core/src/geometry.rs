//! Axis-aligned rectangles in pixel units: integer [`Rect`] and sub-pixel [`RectF`].
//!
//! A rectangle is `(x, y)` of its top-left corner plus `width × height`; it covers columns
//! `x .. x+width` and rows `y .. y+height` (right and bottom edges exclusive). A rectangle with a
//! non-positive width or height is empty. Arithmetic on edges is done in `i64`, so no input
//! overflows.

/// Integer rectangle in pixels (top-left corner, width, height).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rect {
    /// Left edge (column of the first pixel).
    pub x: i32,
    /// Top edge (row of the first pixel).
    pub y: i32,
    /// Width in pixels; ≤ 0 means empty.
    pub width: i32,
    /// Height in pixels; ≤ 0 means empty.
    pub height: i32,
}

/// Sub-pixel rectangle in pixels (top-left corner, width, height).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct RectF {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width; ≤ 0 (or NaN) means empty.
    pub width: f32,
    /// Height; ≤ 0 (or NaN) means empty.
    pub height: f32,
}

impl Rect {
    /// A rectangle from its top-left corner and size.
    pub const fn new(x: i32, y: i32, width: i32, height: i32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// Exclusive right edge, `x + width`.
    pub const fn right(&self) -> i64 {
        self.x as i64 + self.width as i64
    }

    /// Exclusive bottom edge, `y + height`.
    pub const fn bottom(&self) -> i64 {
        self.y as i64 + self.height as i64
    }

    /// True if the rectangle covers no pixel.
    pub const fn is_empty(&self) -> bool {
        self.width <= 0 || self.height <= 0
    }

    /// Area in pixels (0 when empty).
    pub const fn area(&self) -> i64 {
        if self.is_empty() {
            0
        } else {
            self.width as i64 * self.height as i64
        }
    }

    /// Centre point `(x + w/2, y + h/2)` in pixels.
    pub fn center(&self) -> (f32, f32) {
        (
            (self.x as f64 + self.width as f64 * 0.5) as f32,
            (self.y as f64 + self.height as f64 * 0.5) as f32,
        )
    }

    /// True if the pixel `(px, py)` lies inside.
    pub const fn contains_point(&self, px: i32, py: i32) -> bool {
        px >= self.x && py >= self.y && (px as i64) < self.right() && (py as i64) < self.bottom()
    }

    /// True if `other` is non-empty and entirely inside `self`.
    pub const fn contains_rect(&self, other: &Rect) -> bool {
        !other.is_empty()
            && other.x >= self.x
            && other.y >= self.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }

    /// True if the rectangle is non-empty and inside a `width × height` frame at the origin.
    pub fn is_inside(&self, width: usize, height: usize) -> bool {
        !self.is_empty()
            && self.x >= 0
            && self.y >= 0
            && self.right() as u64 <= width as u64
            && self.bottom() as u64 <= height as u64
    }

    /// The overlap of two rectangles, or `None` if they do not overlap.
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = self.right().min(other.right());
        let y1 = self.bottom().min(other.bottom());
        if x1 <= x0 as i64 || y1 <= y0 as i64 {
            return None;
        }
        // Both widths are bounded by the input widths, so they fit in i32.
        Some(Rect::new(
            x0,
            y0,
            (x1 - x0 as i64) as i32,
            (y1 - y0 as i64) as i32,
        ))
    }

    /// Intersection over union in `[0, 1]`; 0 when either rectangle is empty.
    pub fn iou(&self, other: &Rect) -> f32 {
        let inter = self.intersection(other).map_or(0, |r| r.area());
        let union = self.area() + other.area() - inter;
        if union <= 0 {
            0.0
        } else {
            (inter as f64 / union as f64) as f32
        }
    }

    /// The part of the rectangle inside a `width × height` frame, or `None` if nothing is left.
    pub fn clamp_to(&self, width: usize, height: usize) -> Option<Rect> {
        // The frame may be wider than a `Rect` can hold, so clamp the edges in i64.
        let frame_w = width.min(i64::MAX as usize) as i64;
        let frame_h = height.min(i64::MAX as usize) as i64;
        let (x0, y0) = ((self.x as i64).max(0), (self.y as i64).max(0));
        let (x1, y1) = (self.right().min(frame_w), self.bottom().min(frame_h));
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        // The result lies inside `self`, so its fields fit i32.
        Some(Rect::new(
            x0 as i32,
            y0 as i32,
            (x1 - x0) as i32,
            (y1 - y0) as i32,
        ))
    }

    /// The same rectangle with `f32` coordinates.
    pub fn to_f32(&self) -> RectF {
        RectF::new(
            self.x as f32,
            self.y as f32,
            self.width as f32,
            self.height as f32,
        )
    }
}

impl RectF {
    /// A rectangle from its top-left corner and size.
    pub const fn new(x: f32, y: f32, width: f32, height: f32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// True if the rectangle has no area (non-positive or NaN width or height).
    pub fn is_empty(&self) -> bool {
        !(self.width > 0.0 && self.height > 0.0)
    }

    /// Area (0 when empty).
    pub fn area(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            self.width * self.height
        }
    }

    /// Centre point.
    pub fn center(&self) -> (f32, f32) {
        (self.x + self.width * 0.5, self.y + self.height * 0.5)
    }

    /// The overlap of two rectangles, or `None` if they do not overlap.
    pub fn intersection(&self, other: &RectF) -> Option<RectF> {
        if self.is_empty() || other.is_empty() {
            return None;
        }
        let (ax1, ay1) = (self.x + self.width, self.y + self.height);
        let (bx1, by1) = (other.x + other.width, other.y + other.height);
        // `f32::max`/`min` ignore a NaN operand, so a NaN edge (NaN x or y, or −∞ + ∞) would
        // silently take the other rectangle's edge; such a rectangle has no defined overlap.
        if [ax1, ay1, bx1, by1].iter().any(|v| v.is_nan()) {
            return None;
        }
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = ax1.min(bx1);
        let y1 = ay1.min(by1);
        let r = RectF::new(x0, y0, x1 - x0, y1 - y0);
        (!r.is_empty()).then_some(r)
    }

    /// Intersection over union in `[0, 1]`; 0 when either rectangle is empty.
    pub fn iou(&self, other: &RectF) -> f32 {
        let inter = self.intersection(other).map_or(0.0, |r| r.area());
        let union = self.area() + other.area() - inter;
        if union > 0.0 {
            inter / union
        } else {
            0.0
        }
    }

    /// The part of the rectangle inside a `width × height` frame, or `None` if nothing is left.
    pub fn clamp_to(&self, width: f32, height: f32) -> Option<RectF> {
        self.intersection(&RectF::new(0.0, 0.0, width, height))
    }

    /// The integer rectangle whose edges are this one's edges rounded to the nearest pixel,
    /// halves up (`floor(v + ½)`, with the edges summed in `f64` so nothing rounds twice). Halves up rather
    /// than away from zero keeps the result translation-invariant: a box straddling 0 is rounded
    /// like the same box anywhere else. Saturates to the `i32` range; NaN edges become 0.
    pub fn round(&self) -> Rect {
        let edge = |v: f64| libm::floor(v + 0.5) as i32; // `as` saturates, NaN → 0.
        let (x, y) = (self.x as f64, self.y as f64);
        let (x0, y0) = (edge(x), edge(y));
        Rect::new(
            x0,
            y0,
            edge(x + self.width as f64).saturating_sub(x0),
            edge(y + self.height as f64).saturating_sub(y0),
        )
    }
}

impl From<Rect> for RectF {
    fn from(r: Rect) -> Self {
        r.to_f32()
    }
}
