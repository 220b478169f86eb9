//! Features of the KCF tracker, computed on a patch resampled from the frame: Felzenszwalb's
//! 31-channel FHOG (18 contrast-sensitive and 9 contrast-insensitive orientation channels plus
//! 4 texture/energy channels, cells of `cell_px` pixels) and one mean-subtracted gray channel
//! (the cell average of the patch, divided by 255, minus its mean over the patch).
//!
//! Frames are gray or packed RGB ([`Frame`]). On colour frames FHOG takes, at each pixel, the
//! gradient of the channel with the largest magnitude (as Felzenszwalb's `features.cc`); the
//! gray channel is the mean of R, G and B. On a gray-valued colour frame (R = G = B) both are
//! exactly the gray frame's features.
//!
//! FHOG follows `features.cc` (voc-release5): central differences, orientation snapped to the
//! nearest of 18 directions (branch-free, same bins as its dot-product search), magnitude split bilinearly among the 4 nearest cells,
//! each cell normalised by the energies of the four 2 × 2 cell blocks around it, truncated at
//! 0.2. The output keeps every cell (block energies at the border use the nearest cells), so a
//! `cells_x × cells_y` grid gives `cells_x × cells_y` values a channel.

use crate::arena::{Arena, ArenaLen};
use crate::error::{Error, Result};
use crate::image::ImageView;

/// Channels of FHOG: 18 contrast-sensitive + 9 contrast-insensitive orientations + 4 texture.
pub const FHOG_CHANNELS: usize = 31;

/// Contrast-insensitive orientation bins (the sensitive ones are twice as many).
pub const FHOG_ORIENTATIONS: usize = 9;

/// First contrast-insensitive channel of FHOG.
pub const FHOG_INSENSITIVE: usize = 18;

/// First texture (block energy) channel of FHOG.
pub const FHOG_TEXTURE: usize = 27;

/// Truncation of the normalised histogram values (Felzenszwalb).
const TRUNCATION: f32 = 0.2;

/// Added to block energies before the square root (Felzenszwalb's `eps`), in squared grey
/// levels.
const NORM_EPS: f32 = 1e-4;

/// `cos` and `sin` of the 9 boundaries `10° + 20°·j` between the orientation bins of the
/// upper half-plane.
const BOUND_COS: [f32; 9] = [
    0.984_807_8,
    0.866_025_4,
    0.642_787_6,
    0.342_020_1,
    0.0,
    -0.342_020_1,
    -0.642_787_6,
    -0.866_025_4,
    -0.984_807_8,
];
const BOUND_SIN: [f32; 9] = [
    0.173_648_2,
    0.5,
    0.766_044_4,
    0.939_692_6,
    1.0,
    0.939_692_6,
    0.766_044_4,
    0.5,
    0.173_648_2,
];

/// The contrast-sensitive bin (of 18, 20° each, bin `o` centred on `o·20°`) of a non-zero
/// gradient: the nearest direction, ties to the lower angle, as Felzenszwalb's search for the
/// largest dot product, but without branches. The gradient is folded into the upper
/// half-plane (`dy > 0`, or `dy = 0 < dx`) and binned by counting the boundaries it passes;
/// folding makes `−g` land exactly 9 bins from `g`.
#[inline]
fn orientation_bin(dx: f32, dy: f32) -> usize {
    let upper = dy > 0.0 || (dy == 0.0 && dx > 0.0);
    let (ux, uy) = if upper { (dx, dy) } else { (-dx, -dy) };
    let mut b = 0usize;
    for j in 0..FHOG_ORIENTATIONS {
        b += (BOUND_COS[j] * uy > BOUND_SIN[j] * ux) as usize;
    }
    if upper {
        b % (2 * FHOG_ORIENTATIONS)
    } else {
        (b + FHOG_ORIENTATIONS) % (2 * FHOG_ORIENTATIONS)
    }
}

/// Which features the tracker correlates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KcfFeatures {
    /// FHOG only (31 channels).
    Fhog,
    /// Mean-subtracted gray only (1 channel): the original KCF's raw-pixel variant.
    Gray,
    /// FHOG followed by mean-subtracted gray (32 channels).
    #[default]
    FhogGray,
}

impl KcfFeatures {
    /// Number of channels.
    pub const fn channels(self) -> usize {
        match self {
            KcfFeatures::Fhog => FHOG_CHANNELS,
            KcfFeatures::Gray => 1,
            KcfFeatures::FhogGray => FHOG_CHANNELS + 1,
        }
    }

    const fn has_fhog(self) -> bool {
        !matches!(self, KcfFeatures::Gray)
    }

    const fn has_gray(self) -> bool {
        !matches!(self, KcfFeatures::Fhog)
    }
}

/// A frame as the tracker reads it.
#[derive(Clone, Copy, Debug)]
pub enum Frame<'a> {
    /// 8-bit gray, one byte a pixel.
    Gray(ImageView<'a, u8>),
    /// Packed 8-bit RGB: a byte view `3·width` bytes wide, pixel `x` at bytes `3x, 3x+1, 3x+2`
    /// (R, G, B) of its row; the view's stride is in bytes. Build with [`Frame::rgb`].
    Rgb(ImageView<'a, u8>),
}

impl<'a> Frame<'a> {
    /// A packed RGB frame of `width × height` pixels whose rows start `stride_bytes` apart.
    ///
    /// Errors: [`Error::ZeroSize`], [`Error::StrideTooSmall`] (stride below `3·width`),
    /// [`Error::BufferTooSmall`], [`Error::Overflow`], as [`ImageView::new`] on the byte view.
    pub fn rgb(data: &'a [u8], width: usize, height: usize, stride_bytes: usize) -> Result<Self> {
        let bytes = width.checked_mul(3).ok_or(Error::Overflow)?;
        Ok(Frame::Rgb(ImageView::new(
            data,
            bytes,
            height,
            stride_bytes,
        )?))
    }

    /// Bytes a pixel: 1 (gray) or 3 (RGB).
    pub fn channels(&self) -> usize {
        match self {
            Frame::Gray(_) => 1,
            Frame::Rgb(_) => 3,
        }
    }

    /// `(width, height)` in pixels.
    pub fn size(&self) -> (usize, usize) {
        match self {
            Frame::Gray(v) => v.size(),
            Frame::Rgb(v) => (v.width() / 3, v.height()),
        }
    }

    fn view(&self) -> &ImageView<'a, u8> {
        match self {
            Frame::Gray(v) | Frame::Rgb(v) => v,
        }
    }

    /// Checks that the frame is `width × height` pixels and, for RGB, that its byte view is a
    /// whole number of pixels wide.
    ///
    /// Errors: [`Error::SizeMismatch`].
    pub fn check_size(&self, width: usize, height: usize) -> Result<()> {
        let whole = match self {
            Frame::Gray(_) => true,
            Frame::Rgb(v) => v.width() % 3 == 0,
        };
        if !whole || self.size() != (width, height) {
            return Err(Error::SizeMismatch);
        }
        Ok(())
    }
}

/// Where a patch is sampled from the frame: its centre and the frame pixels per patch pixel on
/// each axis. Patch pixel `u` (of `pw`) reads frame column `center_x + (u + ½ − pw/2)·scale_x
/// − ½` (bilinear; columns and rows outside the frame replicate the border).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleWindow {
    /// Centre, frame pixels (continuous coordinates: pixel `i` covers `[i, i+1)`).
    pub center_x: f32,
    /// Centre, frame pixels.
    pub center_y: f32,
    /// Frame pixels per patch pixel, horizontally (> 0).
    pub scale_x: f32,
    /// Frame pixels per patch pixel, vertically (> 0).
    pub scale_y: f32,
}

/// Working storage of feature extraction, for grids up to a side and an area fixed at creation.
#[derive(Debug)]
pub struct FeatureScratch<'a> {
    max_side: usize,
    max_cells: usize,
    cell: usize,
    col_off: &'a mut [u32],
    col_frac: &'a mut [f32],
    row_idx: &'a mut [u32],
    row_frac: &'a mut [f32],
    bin_col: &'a mut [u32],
    bin_weight: &'a mut [f32],
    planes: &'a mut [f32],
    hist: &'a mut [f32],
    energy: &'a mut [f32],
    blocks: &'a mut [f32],
}

macro_rules! feature_takes {
    ($a:expr, $m:ident, $side:expr, $cells:expr, $cell:expr) => {{
        // A `gx × gy` grid has gx, gy ≤ side and gx·gy ≤ cells, so gx + gy ≤ side + cells.
        let span = $side * $cell + 2;
        let perimeter = $side + $cells;
        let plane = $cells * $cell * $cell + 2 * $cell * perimeter + 4;
        let bordered = $cells + 2 * perimeter + 4;
        (
            $a.$m::<u32>(2 * span)?,
            $a.$m::<f32>(span)?,
            $a.$m::<u32>(2 * span)?,
            $a.$m::<f32>(span)?,
            $a.$m::<u32>(span)?,
            $a.$m::<f32>(span)?,
            $a.$m::<f32>(3 * plane)?,
            $a.$m::<f32>(bordered * 2 * FHOG_ORIENTATIONS)?,
            $a.$m::<f32>($cells)?,
            $a.$m::<f32>(bordered)?,
        )
    }};
}

fn check_grid(max_side: usize, max_cells: usize, cell_px: usize) -> Result<()> {
    if max_side == 0 || max_cells == 0 || cell_px == 0 {
        return Err(Error::ZeroSize);
    }
    if max_side > 1024 || max_cells > 1 << 20 || cell_px > 64 {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

impl<'a> FeatureScratch<'a> {
    /// Adds to `len` the storage for grids of cells of `cell_px` pixels whose sides have at
    /// most `max_side` cells and whose area is at most `max_cells` cells.
    ///
    /// Errors: [`Error::ZeroSize`] for a zero argument; [`Error::InvalidArgument`] above 1024
    /// cells a side, 2²⁰ cells or 64 px a cell; [`Error::Overflow`].
    pub fn declare(
        len: &mut ArenaLen,
        max_side: usize,
        max_cells: usize,
        cell_px: usize,
    ) -> Result<()> {
        check_grid(max_side, max_cells, cell_px)?;
        let _ = feature_takes!(len, add, max_side, max_cells, cell_px);
        Ok(())
    }

    /// Carves the storage from `arena` (the takes of [`FeatureScratch::declare`]).
    ///
    /// Errors: as [`FeatureScratch::declare`]; [`Error::BufferTooSmall`] when the arena runs
    /// out.
    pub fn new(
        arena: &mut Arena<'a>,
        max_side: usize,
        max_cells: usize,
        cell_px: usize,
    ) -> Result<Self> {
        check_grid(max_side, max_cells, cell_px)?;
        let (
            col_off,
            col_frac,
            row_idx,
            row_frac,
            bin_col,
            bin_weight,
            planes,
            hist,
            energy,
            blocks,
        ) = feature_takes!(arena, take, max_side, max_cells, cell_px);
        Ok(Self {
            max_side,
            max_cells,
            cell: cell_px,
            col_off,
            col_frac,
            row_idx,
            row_frac,
            bin_col,
            bin_weight,
            planes,
            hist,
            energy,
            blocks,
        })
    }

    /// Samples a `cells_x·cell_px × cells_y·cell_px` patch at `window` and writes `features`
    /// channel by channel to `out` (channel `c`, cell `(x, y)` at `c·cells_x·cells_y +
    /// y·cells_x + x`): FHOG channels first (see [`FHOG_INSENSITIVE`], [`FHOG_TEXTURE`]), the
    /// gray channel last.
    ///
    /// Errors: [`Error::ZeroSize`] for an empty grid; [`Error::InvalidArgument`] for a grid
    /// larger than the scratch was made for, or a non-finite or non-positive window scale or
    /// non-finite centre; [`Error::BufferTooSmall`] when `out` is shorter than
    /// `channels·cells_x·cells_y`.
    pub fn extract(
        &mut self,
        frame: &Frame<'_>,
        window: &SampleWindow,
        features: KcfFeatures,
        cells_x: usize,
        cells_y: usize,
        out: &mut [f32],
    ) -> Result<()> {
        if cells_x == 0 || cells_y == 0 {
            return Err(Error::ZeroSize);
        }
        let finite_pos = |v: f32| v.is_finite() && v > 0.0;
        if cells_x > self.max_side
            || cells_y > self.max_side
            || cells_x * cells_y > self.max_cells
            || !finite_pos(window.scale_x)
            || !finite_pos(window.scale_y)
            || !window.center_x.is_finite()
            || !window.center_y.is_finite()
        {
            return Err(Error::InvalidArgument);
        }
        let cells = cells_x * cells_y;
        if out.len() < features.channels() * cells {
            return Err(Error::BufferTooSmall);
        }
        let (pw, ph) = (cells_x * self.cell, cells_y * self.cell);
        self.sample(frame, window, pw, ph);
        let np = frame.channels();
        if features.has_fhog() {
            self.fhog(np, cells_x, cells_y, &mut out[..FHOG_CHANNELS * cells]);
        }
        if features.has_gray() {
            let c = features.channels() - 1;
            self.gray(np, cells_x, cells_y, &mut out[c * cells..(c + 1) * cells]);
        }
        Ok(())
    }

    /// Bilinear samples of the `(pw+2) × (ph+2)` patch (a one-pixel border for the gradients),
    /// one plane per frame channel.
    fn sample(&mut self, frame: &Frame<'_>, win: &SampleWindow, pw: usize, ph: usize) {
        let (fw, fh) = frame.size();
        let np = frame.channels();
        let (bw, bh) = (pw + 2, ph + 2);
        let clamp = |v: f32, n: usize| -> u32 {
            // `as` saturates; the bounds keep the index inside the frame.
            v.max(0.0).min((n - 1) as f32) as u32
        };
        let half_w = pw as f32 * 0.5;
        for u in 0..bw {
            let x = win.center_x + (u as f32 - 0.5 - half_w) * win.scale_x - 0.5;
            let x0 = libm::floorf(x);
            self.col_off[2 * u] = clamp(x0, fw) * np as u32;
            self.col_off[2 * u + 1] = clamp(x0 + 1.0, fw) * np as u32;
            self.col_frac[u] = x - x0;
        }
        let half_h = ph as f32 * 0.5;
        for v in 0..bh {
            let y = win.center_y + (v as f32 - 0.5 - half_h) * win.scale_y - 0.5;
            let y0 = libm::floorf(y);
            self.row_idx[2 * v] = clamp(y0, fh);
            self.row_idx[2 * v + 1] = clamp(y0 + 1.0, fh);
            self.row_frac[v] = y - y0;
        }
        let view = frame.view();
        let plane_len = bw * bh;
        for v in 0..bh {
            let r0 = view.row(self.row_idx[2 * v] as usize);
            let r1 = view.row(self.row_idx[2 * v + 1] as usize);
            let fy = self.row_frac[v];
            for p in 0..np {
                let dst = &mut self.planes[p * plane_len + v * bw..p * plane_len + (v + 1) * bw];
                for (u, d) in dst.iter_mut().enumerate() {
                    let c0 = self.col_off[2 * u] as usize + p;
                    let c1 = self.col_off[2 * u + 1] as usize + p;
                    let fx = self.col_frac[u];
                    let (a, b) = (r0[c0] as f32, r0[c1] as f32);
                    let (c, e) = (r1[c0] as f32, r1[c1] as f32);
                    let top = a + (b - a) * fx;
                    let bottom = c + (e - c) * fx;
                    *d = top + (bottom - top) * fy;
                }
            }
        }
    }

    fn fhog(&mut self, np: usize, cells_x: usize, cells_y: usize, out: &mut [f32]) {
        let cell = self.cell;
        let (pw, ph) = (cells_x * cell, cells_y * cell);
        let bw = pw + 2;
        let plane_len = bw * (ph + 2);
        let cells = cells_x * cells_y;
        let bins = 2 * FHOG_ORIENTATIONS;
        // The histogram has a one-cell border all round, so every pixel adds to its four
        // cells without bounds tests; the border is dropped.
        let hstride = (cells_x + 2) * bins;
        let hist = &mut self.hist[..hstride * (cells_y + 2)];
        hist.fill(0.0);
        let two_cell = 2 * cell as i32;
        let inv_two_cell = 1.0 / two_cell as f32;
        // Bordered cell index and weight of the lower cell along an axis: the pixel centre in
        // cell units minus ½, split between its floor and the next cell.
        let split = |i: usize| -> (usize, f32) {
            let t = 2 * i as i32 + 1 - cell as i32;
            let k = t.div_euclid(two_cell);
            let frac = (t - k * two_cell) as f32 * inv_two_cell;
            ((k + 1) as usize, 1.0 - frac)
        };
        for x in 0..pw {
            let (k, w) = split(x);
            self.bin_col[x] = (k * bins) as u32;
            self.bin_weight[x] = w;
        }
        for y in 0..ph {
            let (iy, wy0) = split(y);
            let wy1 = 1.0 - wy0;
            let r0 = iy * hstride;
            let r1 = r0 + hstride;
            for x in 0..pw {
                let idx = (y + 1) * bw + x + 1;
                let (mut dx, mut dy, mut m) = (0.0f32, 0.0f32, 0.0f32);
                for p in 0..np {
                    let pl = &self.planes[p * plane_len..(p + 1) * plane_len];
                    let gx = pl[idx + 1] - pl[idx - 1];
                    let gy = pl[idx + bw] - pl[idx - bw];
                    let mm = gx * gx + gy * gy;
                    if p == 0 || mm > m {
                        (dx, dy, m) = (gx, gy, mm);
                    }
                }
                if m == 0.0 {
                    continue;
                }
                let o = orientation_bin(dx, dy);
                let mag = libm::sqrtf(m);
                let c = self.bin_col[x] as usize + o;
                let wx0 = self.bin_weight[x];
                let wx1 = 1.0 - wx0;
                hist[r0 + c] += wx0 * wy0 * mag;
                hist[r0 + c + bins] += wx1 * wy0 * mag;
                hist[r1 + c] += wx0 * wy1 * mag;
                hist[r1 + c + bins] += wx1 * wy1 * mag;
            }
        }
        // Interior histogram of cell c.
        let cell_hist = |c: usize| {
            let start = (c / cells_x + 1) * hstride + (c % cells_x + 1) * bins;
            start..start + bins
        };
        // Energy of each cell over the contrast-insensitive orientations.
        let energy = &mut self.energy[..cells];
        for (c, e) in energy.iter_mut().enumerate() {
            let h = &hist[cell_hist(c)];
            let mut s = 0.0f32;
            for o in 0..FHOG_ORIENTATIONS {
                let v = h[o] + h[o + FHOG_ORIENTATIONS];
                s += v * v;
            }
            *e = s;
        }
        // Block (bx, by) covers cells bx−1..=bx, by−1..=by, clamped to the grid.
        let bwc = cells_x + 1;
        let blocks = &mut self.blocks[..bwc * (cells_y + 1)];
        for by in 0..=cells_y {
            let y0 = by.saturating_sub(1);
            let y1 = by.min(cells_y - 1);
            for bx in 0..=cells_x {
                let x0 = bx.saturating_sub(1);
                let x1 = bx.min(cells_x - 1);
                blocks[by * bwc + bx] = energy[y0 * cells_x + x0]
                    + energy[y0 * cells_x + x1]
                    + energy[y1 * cells_x + x0]
                    + energy[y1 * cells_x + x1];
            }
        }
        for cy in 0..cells_y {
            for cx in 0..cells_x {
                let c = cy * cells_x + cx;
                let n = [
                    1.0 / libm::sqrtf(blocks[cy * bwc + cx] + NORM_EPS),
                    1.0 / libm::sqrtf(blocks[cy * bwc + cx + 1] + NORM_EPS),
                    1.0 / libm::sqrtf(blocks[(cy + 1) * bwc + cx] + NORM_EPS),
                    1.0 / libm::sqrtf(blocks[(cy + 1) * bwc + cx + 1] + NORM_EPS),
                ];
                let h = &hist[cell_hist(c)];
                let mut t = [0.0f32; 4];
                for (o, &v) in h.iter().enumerate() {
                    let mut s = 0.0f32;
                    for k in 0..4 {
                        let hk = (v * n[k]).min(TRUNCATION);
                        s += hk;
                        t[k] += hk;
                    }
                    out[o * cells + c] = 0.5 * s;
                }
                for o in 0..FHOG_ORIENTATIONS {
                    let v = h[o] + h[o + FHOG_ORIENTATIONS];
                    let mut s = 0.0f32;
                    for nk in n {
                        s += (v * nk).min(TRUNCATION);
                    }
                    out[(FHOG_INSENSITIVE + o) * cells + c] = 0.5 * s;
                }
                for (k, tk) in t.iter().enumerate() {
                    out[(FHOG_TEXTURE + k) * cells + c] = 0.235_702_6 * tk;
                }
            }
        }
    }

    /// Cell averages of the patch's gray level / 255, minus their mean.
    fn gray(&mut self, np: usize, cells_x: usize, cells_y: usize, out: &mut [f32]) {
        let cell = self.cell;
        let bw = cells_x * cell + 2;
        let plane_len = bw * (cells_y * cell + 2);
        let scale = 1.0 / (255.0 * (cell * cell * np) as f32);
        let mut total = 0.0f32;
        for cy in 0..cells_y {
            for cx in 0..cells_x {
                let mut s = 0.0f32;
                for p in 0..np {
                    let pl = &self.planes[p * plane_len..(p + 1) * plane_len];
                    for y in 0..cell {
                        let row = (cy * cell + y + 1) * bw + cx * cell + 1;
                        for &v in &pl[row..row + cell] {
                            s += v;
                        }
                    }
                }
                let g = s * scale;
                out[cy * cells_x + cx] = g;
                total += g;
            }
        }
        let mean = total / (cells_x * cells_y) as f32;
        for v in out.iter_mut() {
            *v -= mean;
        }
    }
}
