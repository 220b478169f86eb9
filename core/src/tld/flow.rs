//! The Median-Flow tracker of TLD (Kalal et al., OpenTLD's `LKTracker`): a grid of points in the
//! box is tracked forward and backward with pyramidal Lucas-Kanade, the unreliable half is
//! dropped, and the box moves by the median displacement and scales by the median ratio of
//! pairwise point distances.
//!
//! * **Points**: `n × n` ([`FlowParams::points_per_side`]) on a regular grid spanning the box
//!   shrunk by a margin of `min(5 px, side/4)` on each side (OpenTLD's `bbox_points`, margin 5);
//!   one point sits at the centre when `n = 1`.
//! * **Lucas-Kanade** (Bouguet's pyramidal scheme): per point and level, the reference window
//!   and a one-pixel border are sampled bilinearly around the point; gradients are central
//!   differences of those samples, `(I(x+1) − I(x−1))/2` in grey levels per pixel. The next
//!   image's window is sampled bilinearly at the current guess and the update is
//!   `G⁻¹ Σ ∇I·(I − J)`, iterated up to [`FlowParams::max_iterations`] times or until
//!   `|update| < `[`FlowParams::epsilon_px`]; the guess doubles from each level to the next
//!   finer one. Samples outside an image replicate its edge pixels.
//! * **Failure of a point**: the gradient matrix `G` is near-singular, that is its smaller
//!   eigenvalue divided by the window's pixel count is below [`MIN_EIGENVALUE`] (a coarser level
//!   with such a window is skipped and keeps its guess, as OpenCV does; at full resolution the
//!   point fails); a guess moves farther than the window radius outside a level's image; the
//!   final position is not finite or lies outside `[0, w − 1] × [0, h − 1]`.
//! * **Pyramid**: [`pyr_down_u8`] with [`Border::Reflect101`]; level `l` is `2^l` times
//!   smaller and a point `p` sits at `p / 2^l`. Of the [`FlowParams::levels`] requested, levels
//!   whose width or height would fall below the window side are not built (full resolution is
//!   always used). Each frame's pyramid is built once: the tracked frame becomes the reference.
//! * **Reliability**: forward-backward error `FB = |p − back(forward(p))|`; NCC between
//!   [`FlowParams::ncc_patch_px`]-sided patches centred on the point in the reference frame and
//!   on its forward position in the next frame, both sampled bilinearly (edge pixels replicated;
//!   a flat patch scores 0). Of the points tracked both ways, those with `FB ≤ median FB` and
//!   `NCC ≥ median NCC` are kept.
//! * **Box**: shifted by the median `dx`, `dy` of the kept points and scaled about its centre by
//!   the median over all pairs of kept points of `distance(next) / distance(reference)` (1 with
//!   a single kept point).
//!
//! Medians of an even count are the mean of the two middle values. Every sum runs in `f32` in
//! one fixed order (row-major over windows, point order over the grid), without fused
//! multiply-adds, so results are bit-identical on every platform. All storage comes from one
//! [`Arena`]; nothing allocates.

use crate::arena::{Arena, ArenaLen};
use crate::border::Border;
use crate::error::{Error, Result};
use crate::geometry::RectF;
use crate::image::{ImageView, ImageViewMut};
use crate::pyramid::{pyr_down_scratch_len, pyr_down_size, pyr_down_u8};

/// Most pyramid levels [`FlowParams::levels`] may request.
pub const MAX_LEVELS: u32 = 8;

/// Smallest accepted eigenvalue of a window's gradient matrix divided by its pixel count, in
/// (grey levels per pixel)²: about OpenCV's `minEigThreshold = 1e-4` in its scaled units.
pub const MIN_EIGENVALUE: f32 = 0.1;

/// Grid margin inside the box, in pixels (OpenTLD's `bbox_points` margin), capped at a quarter
/// of the box side.
const GRID_MARGIN_PX: f32 = 5.0;

/// Parameters of [`MedianFlow`]. Defaults are OpenTLD's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowParams {
    /// Points per grid side, `1..=32`; the grid has `points_per_side²` points. Default 10.
    pub points_per_side: u32,
    /// Side of the Lucas-Kanade window in pixels, odd, `3..=31`. Default 9 (OpenTLD's
    /// half-size 4).
    pub window_px: u32,
    /// Pyramid levels including full resolution, `1..=`[`MAX_LEVELS`] (1 = no pyramid).
    /// Default 5.
    pub levels: u32,
    /// Most Lucas-Kanade iterations per level, `1..=100`. Default 20.
    pub max_iterations: u32,
    /// Iterations stop once an update is shorter than this, in pixels of the level; finite and
    /// `≥ 0`. Default 0.03.
    pub epsilon_px: f32,
    /// Tracking fails when the median forward-backward error exceeds this, in pixels; `> 0`
    /// (`+∞` disables the test). Default 10.
    pub max_median_fb_px: f32,
    /// Side of the NCC patches in pixels, `2..=64`. Default 10.
    pub ncc_patch_px: u32,
}

impl FlowParams {
    /// OpenTLD's values.
    pub const DEFAULT: FlowParams = FlowParams {
        points_per_side: 10,
        window_px: 9,
        levels: 5,
        max_iterations: 20,
        epsilon_px: 0.03,
        max_median_fb_px: 10.0,
        ncc_patch_px: 10,
    };

    /// Checks the documented ranges.
    ///
    /// Errors: [`Error::InvalidArgument`] if a field is outside its range (NaN included).
    pub fn validate(&self) -> Result<()> {
        let ok = (1..=32).contains(&self.points_per_side)
            && (3..=31).contains(&self.window_px)
            && self.window_px % 2 == 1
            && (1..=MAX_LEVELS).contains(&self.levels)
            && (1..=100).contains(&self.max_iterations)
            && self.epsilon_px.is_finite()
            && self.epsilon_px >= 0.0
            && self.max_median_fb_px > 0.0
            && (2..=64).contains(&self.ncc_patch_px);
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument)
        }
    }
}

impl Default for FlowParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What one [`MedianFlow::track`] call found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowOutcome {
    /// The box in the next frame, or `None` when tracking failed: no point kept, median
    /// forward-backward error above [`FlowParams::max_median_fb_px`], or a resulting box that is
    /// not finite, empty, or entirely outside the frame.
    pub bbox: Option<RectF>,
    /// Median forward-backward error over the points tracked both ways, in pixels
    /// (`f32::INFINITY` if none was).
    pub median_fb_px: f32,
    /// Points kept by the forward-backward and NCC filter.
    pub reliable_points: u32,
}

/// Where each pyramid level lives in a pyramid buffer (the same for both pyramids).
#[derive(Clone, Copy, Debug)]
struct Levels {
    count: usize,
    offset: [usize; MAX_LEVELS as usize],
    width: [usize; MAX_LEVELS as usize],
    height: [usize; MAX_LEVELS as usize],
    total: usize,
}

impl Levels {
    fn new(params: &FlowParams, width: usize, height: usize) -> Result<Self> {
        params.validate()?;
        if width == 0 || height == 0 {
            return Err(Error::ZeroSize);
        }
        let mut l = Levels {
            count: 0,
            offset: [0; MAX_LEVELS as usize],
            width: [0; MAX_LEVELS as usize],
            height: [0; MAX_LEVELS as usize],
            total: 0,
        };
        let (mut w, mut h) = (width, height);
        let win = params.window_px as usize;
        while l.count < params.levels as usize && (l.count == 0 || (w >= win && h >= win)) {
            let i = l.count;
            l.offset[i] = l.total;
            l.width[i] = w;
            l.height[i] = h;
            let len = w.checked_mul(h).ok_or(Error::Overflow)?;
            l.total = l.total.checked_add(len).ok_or(Error::Overflow)?;
            l.count += 1;
            (w, h) = pyr_down_size(w, h);
        }
        Ok(l)
    }

    #[inline]
    fn level<'b>(&self, buf: &'b [u8], l: usize) -> Img<'b> {
        let (w, h) = (self.width[l], self.height[l]);
        Img {
            px: &buf[self.offset[l]..self.offset[l] + w * h],
            w,
            h,
        }
    }
}

/// A packed pyramid level.
#[derive(Clone, Copy)]
struct Img<'b> {
    px: &'b [u8],
    w: usize,
    h: usize,
}

/// Samples `side × side` values bilinearly on the unit grid whose first sample is `(sx, sy)`,
/// replicating edge pixels outside. All samples share one set of weights, so the fast path (the
/// whole footprint inside) reads contiguous rows with four multiplies per sample. The caller
/// keeps `(sx, sy)` finite and within a few windows of the image.
fn sample(img: Img<'_>, sx: f32, sy: f32, side: usize, out: &mut [f32]) {
    let (fx0, fy0) = (libm::floorf(sx), libm::floorf(sy));
    let (ax, ay) = (sx - fx0, sy - fy0);
    let (w00, w10) = ((1.0 - ax) * (1.0 - ay), ax * (1.0 - ay));
    let (w01, w11) = ((1.0 - ax) * ay, ax * ay);
    let (x0, y0) = (fx0 as isize, fy0 as isize);
    let (w, h) = (img.w as isize, img.h as isize);
    let s = side as isize;
    if x0 >= 0 && y0 >= 0 && x0 + s < w && y0 + s < h {
        let (x0, y0) = (x0 as usize, y0 as usize);
        for (j, o) in out.chunks_exact_mut(side).take(side).enumerate() {
            let r0 = &img.px[(y0 + j) * img.w + x0..][..side + 1];
            let r1 = &img.px[(y0 + j + 1) * img.w + x0..][..side + 1];
            for i in 0..side {
                o[i] = w00 * r0[i] as f32
                    + w10 * r0[i + 1] as f32
                    + w01 * r1[i] as f32
                    + w11 * r1[i + 1] as f32;
            }
        }
    } else {
        let cx = |x: isize| x.clamp(0, w - 1) as usize;
        let cy = |y: isize| y.clamp(0, h - 1) as usize;
        for (j, o) in out.chunks_exact_mut(side).take(side).enumerate() {
            let yj = y0 + j as isize;
            let r0 = &img.px[cy(yj) * img.w..][..img.w];
            let r1 = &img.px[cy(yj + 1) * img.w..][..img.w];
            for (i, v) in o.iter_mut().enumerate() {
                let xi = x0 + i as isize;
                let (a, b) = (cx(xi), cx(xi + 1));
                *v = w00 * r0[a] as f32
                    + w10 * r0[b] as f32
                    + w01 * r1[a] as f32
                    + w11 * r1[b] as f32;
            }
        }
    }
}

/// Per-point working windows.
struct Windows<'a> {
    /// Reference window with a one-pixel border, `(win + 2)²`.
    bordered: &'a mut [f32],
    /// Reference intensities, x and y gradients, next-image intensities: `win²` each.
    ival: &'a mut [f32],
    ix: &'a mut [f32],
    iy: &'a mut [f32],
    jval: &'a mut [f32],
    /// NCC patches, `ncc_patch_px²` each.
    patch_a: &'a mut [f32],
    patch_b: &'a mut [f32],
}

/// Lucas-Kanade settings derived once from the parameters.
#[derive(Clone, Copy)]
struct Lk {
    win: usize,
    radius: f32,
    max_iterations: u32,
    epsilon_sq: f32,
}

/// Tracks `(x, y)` (full-resolution pixels) from pyramid `from` to pyramid `to`.
fn lk_track(
    lv: &Levels,
    lk: Lk,
    from: &[u8],
    to: &[u8],
    win: &mut Windows<'_>,
    x: f32,
    y: f32,
) -> Option<(f32, f32)> {
    let n = lk.win;
    let nb = n + 2;
    let npix = (n * n) as f32;
    let (mut gx, mut gy) = (0.0f32, 0.0f32);
    for l in (0..lv.count).rev() {
        let scale = 1.0 / (1u32 << l) as f32; // exact power of two
        let (px, py) = (x * scale, y * scale);
        let (a, b) = (lv.level(from, l), lv.level(to, l));
        sample(
            a,
            px - lk.radius - 1.0,
            py - lk.radius - 1.0,
            nb,
            win.bordered,
        );
        let (mut gxx, mut gxy, mut gyy) = (0.0f32, 0.0f32, 0.0f32);
        for j in 0..n {
            let up = &win.bordered[j * nb..][..nb];
            let mid = &win.bordered[(j + 1) * nb..][..nb];
            let down = &win.bordered[(j + 2) * nb..][..nb];
            let (iv, ix, iy) = (
                &mut win.ival[j * n..][..n],
                &mut win.ix[j * n..][..n],
                &mut win.iy[j * n..][..n],
            );
            for i in 0..n {
                let dx = (mid[i + 2] - mid[i]) * 0.5;
                let dy = (down[i + 1] - up[i + 1]) * 0.5;
                iv[i] = mid[i + 1];
                ix[i] = dx;
                iy[i] = dy;
                gxx += dx * dx;
                gxy += dx * dy;
                gyy += dy * dy;
            }
        }
        let det = gxx * gyy - gxy * gxy;
        let diff = gxx - gyy;
        let min_eig = (gxx + gyy - libm::sqrtf(diff * diff + 4.0 * gxy * gxy)) * 0.5 / npix;
        // Written as "well-conditioned" so that a NaN eigenvalue or determinant also rejects.
        let conditioned = min_eig >= MIN_EIGENVALUE && det > 0.0;
        if !conditioned {
            if l == 0 {
                return None;
            }
            gx *= 2.0;
            gy *= 2.0;
            continue;
        }
        let inv_det = 1.0 / det;
        let (lo_x, lo_y) = (-lk.radius, -lk.radius);
        let (hi_x, hi_y) = ((b.w - 1) as f32 + lk.radius, (b.h - 1) as f32 + lk.radius);
        for _ in 0..lk.max_iterations {
            let (qx, qy) = (px + gx, py + gy);
            if !(qx >= lo_x && qx <= hi_x && qy >= lo_y && qy <= hi_y) {
                return None;
            }
            sample(b, qx - lk.radius, qy - lk.radius, n, win.jval);
            let (mut bx, mut by) = (0.0f32, 0.0f32);
            for k in 0..n * n {
                let e = win.ival[k] - win.jval[k];
                bx += e * win.ix[k];
                by += e * win.iy[k];
            }
            let dx = (gyy * bx - gxy * by) * inv_det;
            let dy = (gxx * by - gxy * bx) * inv_det;
            gx += dx;
            gy += dy;
            if dx * dx + dy * dy < lk.epsilon_sq {
                break;
            }
        }
        if l > 0 {
            gx *= 2.0;
            gy *= 2.0;
        }
    }
    let (qx, qy) = (x + gx, y + gy);
    let (w, h) = ((lv.width[0] - 1) as f32, (lv.height[0] - 1) as f32);
    (qx >= 0.0 && qx <= w && qy >= 0.0 && qy <= h).then_some((qx, qy))
}

/// Normalised cross-correlation of two equally long sample sets (means removed), 0 when either
/// is flat. Sums run in index order.
fn ncc(a: &[f32], b: &[f32]) -> f32 {
    let inv = 1.0 / a.len() as f32;
    let (mut sa, mut sb) = (0.0f32, 0.0f32);
    for (&u, &v) in a.iter().zip(b) {
        sa += u;
        sb += v;
    }
    let (ma, mb) = (sa * inv, sb * inv);
    let (mut ab, mut aa, mut bb) = (0.0f32, 0.0f32, 0.0f32);
    for (&u, &v) in a.iter().zip(b) {
        let (du, dv) = (u - ma, v - mb);
        ab += du * dv;
        aa += du * du;
        bb += dv * dv;
    }
    let den = aa * bb;
    if den > 0.0 {
        ab / libm::sqrtf(den)
    } else {
        0.0
    }
}

/// Median of `v` (non-empty), reordering it: the middle value, or the mean of the two middle
/// values for an even count.
fn median(v: &mut [f32]) -> f32 {
    let n = v.len();
    let (left, hi, _) = v.select_nth_unstable_by(n / 2, f32::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = left.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    (lo + hi) * 0.5
}

/// Per-point arrays, `points_per_side²` each (pairs: `n(n − 1)/2`).
struct Points<'a> {
    x: &'a mut [f32],
    y: &'a mut [f32],
    fx: &'a mut [f32],
    fy: &'a mut [f32],
    fb: &'a mut [f32],
    ncc: &'a mut [f32],
    tracked: &'a mut [u8],
    scratch: &'a mut [f32],
    scratch2: &'a mut [f32],
    pairs: &'a mut [f32],
}

/// The Median-Flow tracker over frames of one size, in arena storage: two pyramids (the
/// reference and the next frame, which swap roles after each [`MedianFlow::track`]), pyramid
/// scratch, per-point arrays and the point-pair ratios.
pub struct MedianFlow<'a> {
    params: FlowParams,
    levels: Levels,
    lk: Lk,
    reference: &'a mut [u8],
    next: &'a mut [u8],
    pyr_scratch: &'a mut [i32],
    points: Points<'a>,
    windows: Windows<'a>,
    has_reference: bool,
}

/// The sequence of takes shared by [`MedianFlow::declare`] and [`MedianFlow::new`], written
/// once for both.
macro_rules! flow_takes {
    ($a:expr, $take:ident, $p:expr, $lv:expr, $width:expr) => {{
        let n = ($p.points_per_side * $p.points_per_side) as usize;
        let win = $p.window_px as usize;
        let patch = ($p.ncc_patch_px * $p.ncc_patch_px) as usize;
        let pyr_scratch = if $lv.count > 1 {
            pyr_down_scratch_len($width)
        } else {
            0
        };
        (
            $a.$take::<u8>($lv.total)?,
            $a.$take::<u8>($lv.total)?,
            $a.$take::<i32>(pyr_scratch)?,
            (
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<u8>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n)?,
                $a.$take::<f32>(n * (n - 1) / 2)?,
            ),
            (
                $a.$take::<f32>((win + 2) * (win + 2))?,
                $a.$take::<f32>(win * win)?,
                $a.$take::<f32>(win * win)?,
                $a.$take::<f32>(win * win)?,
                $a.$take::<f32>(win * win)?,
                $a.$take::<f32>(patch)?,
                $a.$take::<f32>(patch)?,
            ),
        )
    }};
}

impl<'a> MedianFlow<'a> {
    /// Adds this object's storage for `width × height` frames to `len`, in bytes.
    ///
    /// Errors: [`Error::InvalidArgument`] for invalid `params`, [`Error::ZeroSize`] for an empty
    /// frame size, [`Error::Overflow`] when the size does not fit `usize`.
    pub fn declare(
        len: &mut ArenaLen,
        params: &FlowParams,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let lv = Levels::new(params, width, height)?;
        let _ = flow_takes!(len, add, params, lv, width);
        Ok(())
    }

    /// Carves the storage from `arena` (the same sequence of takes as [`MedianFlow::declare`]).
    ///
    /// Errors: as [`MedianFlow::declare`]; [`Error::BufferTooSmall`] when the arena runs out.
    pub fn new(
        arena: &mut Arena<'a>,
        params: &FlowParams,
        width: usize,
        height: usize,
    ) -> Result<Self> {
        let lv = Levels::new(params, width, height)?;
        let (reference, next, pyr_scratch, pts, wins) = flow_takes!(arena, take, params, lv, width);
        let win = params.window_px as usize;
        Ok(Self {
            params: *params,
            levels: lv,
            lk: Lk {
                win,
                radius: (win / 2) as f32,
                max_iterations: params.max_iterations,
                epsilon_sq: params.epsilon_px * params.epsilon_px,
            },
            reference,
            next,
            pyr_scratch,
            points: Points {
                x: pts.0,
                y: pts.1,
                fx: pts.2,
                fy: pts.3,
                fb: pts.4,
                ncc: pts.5,
                tracked: pts.6,
                scratch: pts.7,
                scratch2: pts.8,
                pairs: pts.9,
            },
            windows: Windows {
                bordered: wins.0,
                ival: wins.1,
                ix: wins.2,
                iy: wins.3,
                jval: wins.4,
                patch_a: wins.5,
                patch_b: wins.6,
            },
            has_reference: false,
        })
    }

    /// The parameters the tracker was built with.
    pub fn params(&self) -> &FlowParams {
        &self.params
    }

    /// Pyramid levels actually built (those of [`FlowParams::levels`] whose sides are at least
    /// the window side; at least 1).
    pub fn levels_used(&self) -> usize {
        self.levels.count
    }

    /// Copies `frame` into `dst` and builds its pyramid there.
    fn build_pyramid(
        levels: &Levels,
        dst: &mut [u8],
        scratch: &mut [i32],
        frame: &ImageView<'_, u8>,
    ) -> Result<()> {
        let w = levels.width[0];
        for y in 0..levels.height[0] {
            dst[y * w..][..w].copy_from_slice(frame.row(y));
        }
        for l in 1..levels.count {
            let (head, tail) = dst.split_at_mut(levels.offset[l]);
            let src = ImageView::packed(
                &head[levels.offset[l - 1]..],
                levels.width[l - 1],
                levels.height[l - 1],
            )?;
            let mut out = ImageViewMut::packed(tail, levels.width[l], levels.height[l])?;
            pyr_down_u8(&src, &mut out, Border::Reflect101, scratch)?;
        }
        Ok(())
    }

    fn check_size(&self, frame: &ImageView<'_, u8>) -> Result<()> {
        if frame.size() == (self.levels.width[0], self.levels.height[0]) {
            Ok(())
        } else {
            Err(Error::SizeMismatch)
        }
    }

    /// Makes `frame` the reference frame (builds and keeps its pyramid).
    ///
    /// Errors: [`Error::SizeMismatch`] unless `frame` has the size given to
    /// [`MedianFlow::new`]; the tracker is unchanged on error.
    pub fn set_reference(&mut self, frame: &ImageView<'_, u8>) -> Result<()> {
        self.check_size(frame)?;
        Self::build_pyramid(&self.levels, self.reference, self.pyr_scratch, frame)?;
        self.has_reference = true;
        Ok(())
    }

    /// Tracks `bbox` (reference-frame pixels) from the reference frame to `next`, then `next`
    /// becomes the reference (whether or not tracking succeeded; its pyramid is kept). A failed
    /// track is `Ok` with `bbox: None` (see [`FlowOutcome`]); points whose start lies outside the
    /// frame fail, so a box entirely outside fails.
    ///
    /// Errors (the tracker is unchanged): [`Error::NotInitialized`] before any
    /// [`MedianFlow::set_reference`]; [`Error::SizeMismatch`] for a frame of another size;
    /// [`Error::InvalidArgument`] for a box with a non-finite field or a non-positive width or
    /// height.
    pub fn track(&mut self, next: &ImageView<'_, u8>, bbox: RectF) -> Result<FlowOutcome> {
        if !self.has_reference {
            return Err(Error::NotInitialized);
        }
        self.check_size(next)?;
        let finite = bbox.x.is_finite()
            && bbox.y.is_finite()
            && bbox.width.is_finite()
            && bbox.height.is_finite();
        if !finite || bbox.is_empty() {
            return Err(Error::InvalidArgument);
        }
        Self::build_pyramid(&self.levels, self.next, self.pyr_scratch, next)?;
        let outcome = self.track_points(bbox);
        core::mem::swap(&mut self.reference, &mut self.next);
        Ok(outcome)
    }

    /// The grid, forward-backward tracking, the filter and the box update.
    fn track_points(&mut self, bbox: RectF) -> FlowOutcome {
        let lv = &self.levels;
        let pts = &mut self.points;
        let win = &mut self.windows;
        let side = self.params.points_per_side as usize;
        let n = side * side;

        // Grid.
        let mx = GRID_MARGIN_PX.min(bbox.width * 0.25);
        let my = GRID_MARGIN_PX.min(bbox.height * 0.25);
        let (gw, gh) = (bbox.width - 2.0 * mx, bbox.height - 2.0 * my);
        let step = if side > 1 {
            1.0 / (side - 1) as f32
        } else {
            0.0
        };
        let at = |k: usize| if side > 1 { k as f32 * step } else { 0.5 };
        for j in 0..side {
            for i in 0..side {
                pts.x[j * side + i] = bbox.x + mx + gw * at(i);
                pts.y[j * side + i] = bbox.y + my + gh * at(j);
            }
        }

        // Forward, backward, FB error and NCC per point.
        let (wmax, hmax) = ((lv.width[0] - 1) as f32, (lv.height[0] - 1) as f32);
        let psz = self.params.ncc_patch_px as usize;
        let phalf = (psz - 1) as f32 * 0.5;
        let mut tracked = 0usize;
        for k in 0..n {
            let (x, y) = (pts.x[k], pts.y[k]);
            pts.tracked[k] = 0;
            if !(x >= 0.0 && x <= wmax && y >= 0.0 && y <= hmax) {
                continue;
            }
            let Some((fx, fy)) = lk_track(lv, self.lk, self.reference, self.next, win, x, y) else {
                continue;
            };
            let Some((bx, by)) = lk_track(lv, self.lk, self.next, self.reference, win, fx, fy)
            else {
                continue;
            };
            let (ex, ey) = (bx - x, by - y);
            pts.fx[k] = fx;
            pts.fy[k] = fy;
            pts.fb[k] = libm::sqrtf(ex * ex + ey * ey);
            sample(
                lv.level(self.reference, 0),
                x - phalf,
                y - phalf,
                psz,
                win.patch_a,
            );
            sample(
                lv.level(self.next, 0),
                fx - phalf,
                fy - phalf,
                psz,
                win.patch_b,
            );
            pts.ncc[k] = ncc(win.patch_a, win.patch_b);
            pts.tracked[k] = 1;
            pts.scratch[tracked] = pts.fb[k];
            pts.scratch2[tracked] = pts.ncc[k];
            tracked += 1;
        }
        let failed = |median_fb_px: f32, reliable_points: u32| FlowOutcome {
            bbox: None,
            median_fb_px,
            reliable_points,
        };
        if tracked == 0 {
            return failed(f32::INFINITY, 0);
        }
        let median_fb = median(&mut pts.scratch[..tracked]);
        let median_ncc = median(&mut pts.scratch2[..tracked]);

        // Keep the reliable half; compact their indices' displacements into the scratch arrays.
        let mut kept = 0usize;
        for k in 0..n {
            if pts.tracked[k] == 1 && pts.fb[k] <= median_fb && pts.ncc[k] >= median_ncc {
                pts.tracked[k] = 2;
                pts.scratch[kept] = pts.fx[k] - pts.x[k];
                pts.scratch2[kept] = pts.fy[k] - pts.y[k];
                kept += 1;
            }
        }
        if kept == 0 || median_fb > self.params.max_median_fb_px {
            return failed(median_fb, kept as u32);
        }
        let dx = median(&mut pts.scratch[..kept]);
        let dy = median(&mut pts.scratch2[..kept]);

        // Scale: median ratio of pairwise distances.
        let mut np = 0usize;
        for a in 0..n {
            if pts.tracked[a] != 2 {
                continue;
            }
            for b in a + 1..n {
                if pts.tracked[b] != 2 {
                    continue;
                }
                let (rx, ry) = (pts.x[b] - pts.x[a], pts.y[b] - pts.y[a]);
                let (qx, qy) = (pts.fx[b] - pts.fx[a], pts.fy[b] - pts.fy[a]);
                let d_ref = libm::sqrtf(rx * rx + ry * ry);
                if d_ref > 0.0 {
                    pts.pairs[np] = libm::sqrtf(qx * qx + qy * qy) / d_ref;
                    np += 1;
                }
            }
        }
        let s = if np > 0 {
            median(&mut pts.pairs[..np])
        } else {
            1.0
        };

        let (w, h) = (bbox.width * s, bbox.height * s);
        let x = bbox.x + dx - (w - bbox.width) * 0.5;
        let y = bbox.y + dy - (h - bbox.height) * 0.5;
        let out = RectF::new(x, y, w, h);
        let finite = x.is_finite() && y.is_finite() && w.is_finite() && h.is_finite();
        let frame = RectF::new(0.0, 0.0, lv.width[0] as f32, lv.height[0] as f32);
        if !finite || out.is_empty() || out.intersection(&frame).is_none() {
            return failed(median_fb, kept as u32);
        }
        FlowOutcome {
            bbox: Some(out),
            median_fb_px: median_fb,
            reliable_points: kept as u32,
        }
    }
}

/// Bytes of arena a [`MedianFlow`] for `width × height` frames needs (via [`ArenaLen`], so any
/// buffer alignment works).
///
/// Errors: as [`MedianFlow::declare`].
pub fn flow_workspace_len(params: &FlowParams, width: usize, height: usize) -> Result<usize> {
    let mut len = ArenaLen::new();
    MedianFlow::declare(&mut len, params, width, height)?;
    Ok(len.bytes())
}
