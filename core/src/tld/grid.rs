//! The scanning grid: every window the TLD detector tests, built once at init from the frame size
//! and the initial box, after OpenTLD's `buildGrid` (Kalal's C++ port).
//!
//! Convention (all integer, so every platform and the GPU build the same grid):
//! * Scales are `1.2^k` for `k ∈ [−steps, steps]` (default 10, so 21 candidates). A window side
//!   is `round(side·6^k / 5^k)` (or `·5^m / 6^m` for `k = −m`) computed exactly in integers,
//!   halves rounded up. OpenTLD multiplies by a 5-digit float table (`0.16151 … 6.19174`), which
//!   can differ by one pixel when `side·1.2^k` lies within about 10⁻³ of a half.
//! * A scale is kept when `min(w, h) ≥ min_window_px` and at least one window fits (below).
//!   OpenTLD also keeps a scale whose window is 1 or 2 px smaller than the frame but holds no
//!   window; we drop it, so the window set is identical and every listed scale is used.
//! * The shift is `round(shift_percent·min(w, h) / 100)`, halves up, at least 1 px, the same in
//!   x and y (OpenTLD's C++ `round(SHIFT·min_bb_side)`; the Matlab `bb_scan` uses 10 % of the
//!   height in y).
//! * Positions follow OpenTLD's loop exactly: `for y = 1; y < H − h; y += shift`, inside it
//!   `for x = 1; x < W − w; x += shift`, that is 1 px in from the top-left and up to
//!   `y + h ≤ H − 1`, `x + w ≤ W − 1` (one pixel of margin on every side).
//!
//! Windows are stored scale-major, then row-major (`y` outer, `x` inner), as a
//! structure-of-arrays of `u16` (x, y, width, height) plus a `u8` scale index, ready for upload
//! to a GPU. The distinct scales ([`GridScale`]) also give, for each scale, the first window and
//! the number of columns and rows, so window `i` of a scale is `first + row·cols + col`.

use crate::error::{Error, Result};
use crate::geometry::Rect;

/// Largest accepted [`GridParams::scale_steps`]: at most `2·20 + 1 = 41` scales.
pub const MAX_SCALE_STEPS: u32 = 20;

/// Parameters of the scanning grid; [`Default`] gives OpenTLD's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridParams {
    /// Smallest accepted window side in pixels (both sides must reach it). Default 24; at least 1.
    pub min_window_px: u32,
    /// Shift between neighbouring windows, in percent of the window's shorter side. Default 10;
    /// 1 to 100.
    pub shift_percent: u32,
    /// Scales `1.2^k` are tried for `k ∈ [−scale_steps, scale_steps]`. Default 10; at most
    /// [`MAX_SCALE_STEPS`].
    pub scale_steps: u32,
}

impl Default for GridParams {
    fn default() -> Self {
        Self {
            min_window_px: 24,
            shift_percent: 10,
            scale_steps: 10,
        }
    }
}

/// One distinct window size of the grid and where its windows lie in the window arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct GridScale {
    /// Window width in pixels.
    pub width: u16,
    /// Window height in pixels.
    pub height: u16,
    /// Step between neighbouring windows in pixels, in x and y.
    pub shift_px: u16,
    /// The exponent `k` of the scale `1.2^k` (0: the initial box's size).
    pub step: i8,
    /// Padding (always 0), so that the layout has no implicit holes.
    pub reserved: u8,
    /// Index of the scale's first window in the window arrays.
    pub first: u32,
    /// Windows per row.
    pub cols: u32,
    /// Rows of windows.
    pub rows: u32,
}

impl GridScale {
    /// Number of windows of this scale (`cols · rows`).
    pub fn len(&self) -> usize {
        self.cols as usize * self.rows as usize
    }

    /// True if the scale has no window (never the case for a scale of a built grid).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Caller storage for [`build_grid`]: one element per window in each window array (at least
/// [`grid_len`]) and one per scale in `scales` (at least [`grid_scale_count`]).
#[derive(Debug)]
pub struct GridStorage<'a> {
    /// Left edges in pixels.
    pub x: &'a mut [u16],
    /// Top edges in pixels.
    pub y: &'a mut [u16],
    /// Widths in pixels.
    pub width: &'a mut [u16],
    /// Heights in pixels.
    pub height: &'a mut [u16],
    /// Index into `scales` of each window.
    pub scale: &'a mut [u8],
    /// The distinct scales.
    pub scales: &'a mut [GridScale],
}

/// A built scanning grid: read-only views of the caller's storage, trimmed to the windows.
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    frame_width: usize,
    frame_height: usize,
    x: &'a [u16],
    y: &'a [u16],
    width: &'a [u16],
    height: &'a [u16],
    scale: &'a [u8],
    scales: &'a [GridScale],
}

impl<'a> Grid<'a> {
    /// A view of arrays [`build_grid`] filled earlier (trusted: the crate keeps them intact).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        frame_width: usize,
        frame_height: usize,
        x: &'a [u16],
        y: &'a [u16],
        width: &'a [u16],
        height: &'a [u16],
        scale: &'a [u8],
        scales: &'a [GridScale],
    ) -> Self {
        Self {
            frame_width,
            frame_height,
            x,
            y,
            width,
            height,
            scale,
            scales,
        }
    }

    /// Number of windows.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True if no window fits the frame.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// `(width, height)` of the frame the grid was built for, in pixels.
    pub fn frame_size(&self) -> (usize, usize) {
        (self.frame_width, self.frame_height)
    }

    /// Left edges of the windows in pixels.
    pub fn x(&self) -> &'a [u16] {
        self.x
    }

    /// Top edges of the windows in pixels.
    pub fn y(&self) -> &'a [u16] {
        self.y
    }

    /// Widths of the windows in pixels.
    pub fn width(&self) -> &'a [u16] {
        self.width
    }

    /// Heights of the windows in pixels.
    pub fn height(&self) -> &'a [u16] {
        self.height
    }

    /// Scale index (into [`Grid::scales`]) of every window.
    pub fn scale_index(&self) -> &'a [u8] {
        self.scale
    }

    /// The distinct scales, smallest first.
    pub fn scales(&self) -> &'a [GridScale] {
        self.scales
    }

    /// Window `i` as a rectangle. Panics if `i ≥ len()`.
    pub fn window(&self, i: usize) -> Rect {
        Rect::new(
            self.x[i] as i32,
            self.y[i] as i32,
            self.width[i] as i32,
            self.height[i] as i32,
        )
    }
}

/// The first `n` elements of `s`, giving up write access for the whole lifetime.
fn shared_prefix<T>(s: &mut [T], n: usize) -> &[T] {
    &s[..n]
}

/// `round(side · num / den)` with halves rounded up, exactly.
fn scaled_side(side: u128, num: u128, den: u128) -> u128 {
    (2 * side * num + den) / (2 * den)
}

/// Calls `f` with every kept scale, smallest first, and returns the window count.
fn for_each_scale(
    params: &GridParams,
    frame_w: usize,
    frame_h: usize,
    init_box: Rect,
    mut f: impl FnMut(GridScale),
) -> Result<usize> {
    if params.min_window_px == 0
        || params.shift_percent == 0
        || params.shift_percent > 100
        || params.scale_steps > MAX_SCALE_STEPS
    {
        return Err(Error::InvalidArgument);
    }
    if frame_w == 0 || frame_h == 0 || init_box.is_empty() {
        return Err(Error::ZeroSize);
    }
    if frame_w > u16::MAX as usize || frame_h > u16::MAX as usize {
        return Err(Error::InvalidArgument);
    }
    let (fw, fh) = (frame_w as u128, frame_h as u128);
    let steps = params.scale_steps as i32;
    let mut total: u64 = 0;
    for k in -steps..=steps {
        let (num, den) = if k >= 0 {
            (6u128.pow(k as u32), 5u128.pow(k as u32))
        } else {
            (5u128.pow((-k) as u32), 6u128.pow((-k) as u32))
        };
        let w = scaled_side(init_box.width as u128, num, den);
        let h = scaled_side(init_box.height as u128, num, den);
        let min_side = w.min(h);
        // A window fits when x = 1 and x + w ≤ W − 1, i.e. w ≤ W − 2 (likewise in y).
        if min_side < params.min_window_px as u128 || w + 2 > fw || h + 2 > fh {
            continue;
        }
        let shift = ((min_side * params.shift_percent as u128 + 50) / 100).max(1);
        // x ∈ {1, 1 + s, …} with x + w ≤ W − 1.
        let cols = (fw - 2 - w) / shift + 1;
        let rows = (fh - 2 - h) / shift + 1;
        // All of these are below the frame size (≤ u16::MAX).
        f(GridScale {
            width: w as u16,
            height: h as u16,
            shift_px: shift as u16,
            step: k as i8,
            reserved: 0,
            first: total.min(u32::MAX as u64) as u32,
            cols: cols as u32,
            rows: rows as u32,
        });
        total += (cols * rows) as u64;
        if total > u32::MAX as u64 {
            return Err(Error::Overflow);
        }
    }
    Ok(total as usize)
}

/// Exact number of windows of the grid for a `frame_w × frame_h` frame (pixels) and an initial
/// box (only its width and height matter).
///
/// Errors: [`Error::ZeroSize`] for an empty frame or box; [`Error::InvalidArgument`] for
/// parameters outside their documented ranges or a frame side above 65 535 px;
/// [`Error::Overflow`] if the count exceeds `u32::MAX`.
pub fn grid_len(
    params: &GridParams,
    frame_w: usize,
    frame_h: usize,
    init_box: Rect,
) -> Result<usize> {
    for_each_scale(params, frame_w, frame_h, init_box, |_| {})
}

/// Exact number of distinct scales of the grid (at most `2·scale_steps + 1`).
///
/// Errors: as [`grid_len`].
pub fn grid_scale_count(
    params: &GridParams,
    frame_w: usize,
    frame_h: usize,
    init_box: Rect,
) -> Result<usize> {
    let mut n = 0;
    for_each_scale(params, frame_w, frame_h, init_box, |_| n += 1)?;
    Ok(n)
}

/// An upper bound of [`grid_len`] over every initial box that fits a `frame_w × frame_h`
/// frame: what storage sized once per frame size (before the box is known) must hold.
///
/// A scale's windows are all at least its shorter side `m` wide and high, and its step depends
/// on `m` only, so `((W − 2 − m)/step + 1)·((H − 2 − m)/step + 1)` bounds its window count; `m`
/// at step `k` is the initial box's shorter side scaled by `1.2^k` (the rounding is monotone).
/// The bound is the largest sum over every shorter side from 1 to `min(W, H)` px.
///
/// Errors: as [`grid_len`] (the frame and parameter checks).
pub fn grid_len_bound(params: &GridParams, frame_w: usize, frame_h: usize) -> Result<usize> {
    // Validates the parameters and the frame with a 1 × 1 box.
    for_each_scale(params, frame_w, frame_h, Rect::new(0, 0, 1, 1), |_| {})?;
    let (fw, fh) = (frame_w as u128, frame_h as u128);
    let steps = params.scale_steps as i32;
    let mut best: u128 = 0;
    for side in 1..=fw.min(fh) {
        let mut total: u128 = 0;
        for k in -steps..=steps {
            let (num, den) = if k >= 0 {
                (6u128.pow(k as u32), 5u128.pow(k as u32))
            } else {
                (5u128.pow((-k) as u32), 6u128.pow((-k) as u32))
            };
            let m = scaled_side(side, num, den);
            if m < params.min_window_px as u128 || m + 2 > fw.min(fh) {
                continue;
            }
            let shift = ((m * params.shift_percent as u128 + 50) / 100).max(1);
            total += ((fw - 2 - m) / shift + 1) * ((fh - 2 - m) / shift + 1);
        }
        best = best.max(total);
    }
    if best > u32::MAX as u128 {
        return Err(Error::Overflow);
    }
    Ok(best as usize)
}

/// The most scales any grid can have: `2·scale_steps + 1`.
pub fn grid_scale_bound(params: &GridParams) -> usize {
    2 * params.scale_steps.min(MAX_SCALE_STEPS) as usize + 1
}

/// Builds the scanning grid into `storage` and returns a view of it. An empty grid (no scale
/// fits the frame) is not an error.
///
/// Errors: those of [`grid_len`]; [`Error::BufferTooSmall`] if a window array is shorter than
/// [`grid_len`] or `scales` shorter than [`grid_scale_count`] (nothing is written then).
pub fn build_grid<'a>(
    params: &GridParams,
    frame_w: usize,
    frame_h: usize,
    init_box: Rect,
    storage: GridStorage<'a>,
) -> Result<Grid<'a>> {
    let mut n_scales = 0;
    let n = for_each_scale(params, frame_w, frame_h, init_box, |_| n_scales += 1)?;
    let GridStorage {
        x,
        y,
        width,
        height,
        scale,
        scales,
    } = storage;
    if [x.len(), y.len(), width.len(), height.len(), scale.len()]
        .iter()
        .any(|&l| l < n)
        || scales.len() < n_scales
    {
        return Err(Error::BufferTooSmall);
    }
    let mut si = 0;
    for_each_scale(params, frame_w, frame_h, init_box, |s| {
        scales[si] = s;
        si += 1;
    })?;
    for (si, s) in scales[..n_scales].iter().enumerate() {
        let mut i = s.first as usize;
        for row in 0..s.rows {
            // Bounded by the frame side (≤ 65 535), checked when the scale was kept.
            let wy = (1 + row * s.shift_px as u32) as u16;
            for col in 0..s.cols {
                x[i] = (1 + col * s.shift_px as u32) as u16;
                y[i] = wy;
                width[i] = s.width;
                height[i] = s.height;
                scale[i] = si as u8;
                i += 1;
            }
        }
    }
    Ok(Grid {
        frame_width: frame_w,
        frame_height: frame_h,
        x: shared_prefix(x, n),
        y: shared_prefix(y, n),
        width: shared_prefix(width, n),
        height: shared_prefix(height, n),
        scale: shared_prefix(scale, n),
        scales: shared_prefix(scales, n_scales),
    })
}
