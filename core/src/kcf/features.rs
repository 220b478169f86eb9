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
//! best of 18 directions by dot product, magnitude split bilinearly among the 4 nearest cells,
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

/// `cos` and `sin` of the 9 orientations `k·π/9` (Felzenszwalb's `uu`, `vv`).
const UU: [f32; 9] = [
    1.0,
    0.939_692_6,
    0.766_044_4,
    0.5,
    0.173_648_2,
    -0.173_648_2,
    -0.5,
    -0.766_044_4,
    -0.939_692_6,
];
const VV: [f32; 9] = [
    0.0,
    0.342_020_1,
    0.642_787_6,
    0.866_025_4,
    0.984_807_8,
    0.984_807_8,
    0.866_025_4,
    0.642_787_6,
    0.342_020_1,
];

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

/// Working storage of feature extraction for grids up to `max_cells_x × max_cells_y` cells.
#[derive(Debug)]
pub struct FeatureScratch<'a> {
    max_cells_x: usize,
    max_cells_y: usize,
    cell: usize,
    col_off: &'a mut [u32],
    col_frac: &'a mut [f32],
    row_idx: &'a mut [u32],
    row_frac: &'a mut [f32],
    planes: &'a mut [f32],
    hist: &'a mut [f32],
    energy: &'a mut [f32],
    blocks: &'a mut [f32],
}

macro_rules! feature_takes {
    ($a:expr, $m:ident, $cx:expr, $cy:expr, $cell:expr) => {{
        let bw = $cx * $cell + 2;
        let bh = $cy * $cell + 2;
        let cells = $cx * $cy;
        (
            $a.$m::<u32>(2 * bw)?,
            $a.$m::<f32>(bw)?,
            $a.$m::<u32>(2 * bh)?,
            $a.$m::<f32>(bh)?,
            $a.$m::<f32>(3 * bw * bh)?,
            $a.$m::<f32>(cells * 2 * FHOG_ORIENTATIONS)?,
            $a.$m::<f32>(cells)?,
            $a.$m::<f32>(($cx + 1) * ($cy + 1))?,
        )
    }};
}

fn check_grid(max_cells_x: usize, max_cells_y: usize, cell_px: usize) -> Result<()> {
    if max_cells_x == 0 || max_cells_y == 0 || cell_px == 0 {
        return Err(Error::ZeroSize);
    }
    if max_cells_x > 1024 || max_cells_y > 1024 || cell_px > 64 {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

impl<'a> FeatureScratch<'a> {
    /// Adds the storage for grids up to `max_cells_x × max_cells_y` cells of `cell_px` pixels
    /// to `len`.
    ///
    /// Errors: [`Error::ZeroSize`] for a zero argument; [`Error::InvalidArgument`] above 1024
    /// cells a side or 64 px a cell; [`Error::Overflow`].
    pub fn declare(
        len: &mut ArenaLen,
        max_cells_x: usize,
        max_cells_y: usize,
        cell_px: usize,
    ) -> Result<()> {
        check_grid(max_cells_x, max_cells_y, cell_px)?;
        let _ = feature_takes!(len, add, max_cells_x, max_cells_y, cell_px);
        Ok(())
    }

    /// Carves the storage from `arena` (the takes of [`FeatureScratch::declare`]).
    ///
    /// Errors: as [`FeatureScratch::declare`]; [`Error::BufferTooSmall`] when the arena runs
    /// out.
    pub fn new(
        arena: &mut Arena<'a>,
        max_cells_x: usize,
        max_cells_y: usize,
        cell_px: usize,
    ) -> Result<Self> {
        check_grid(max_cells_x, max_cells_y, cell_px)?;
        let (col_off, col_frac, row_idx, row_frac, planes, hist, energy, blocks) =
            feature_takes!(arena, take, max_cells_x, max_cells_y, cell_px);
        Ok(Self {
            max_cells_x,
            max_cells_y,
            cell: cell_px,
            col_off,
            col_frac,
            row_idx,
            row_frac,
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
        if cells_x > self.max_cells_x
            || cells_y > self.max_cells_y
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
        let (bw, bh) = (pw + 2, ph + 2);
        let plane_len = bw * bh;
        let cells = cells_x * cells_y;
        let bins = 2 * FHOG_ORIENTATIONS;
        let hist = &mut self.hist[..cells * bins];
        hist.fill(0.0);
        let two_cell = 2 * cell as i32;
        let inv_two_cell = 1.0 / two_cell as f32;
        // Cell index and weight of the lower cell along an axis: the pixel centre in cell
        // units minus ½, split between its floor and the next cell.
        let split = |i: usize| -> (i32, f32) {
            let t = 2 * i as i32 + 1 - cell as i32;
            let k = t.div_euclid(two_cell);
            let frac = (t - k * two_cell) as f32 * inv_two_cell;
            (k, 1.0 - frac)
        };
        for y in 0..ph {
            let (iy, wy0) = split(y);
            let wy1 = 1.0 - wy0;
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
                let mut best_dot = 0.0f32;
                let mut best_o = 0usize;
                for o in 0..FHOG_ORIENTATIONS {
                    let dot = UU[o] * dx + VV[o] * dy;
                    if dot > best_dot {
                        best_dot = dot;
                        best_o = o;
                    } else if -dot > best_dot {
                        best_dot = -dot;
                        best_o = o + FHOG_ORIENTATIONS;
                    }
                }
                let mag = libm::sqrtf(m);
                let (ix, wx0) = split(x);
                let wx1 = 1.0 - wx0;
                let mut add = |cx: i32, cy: i32, w: f32| {
                    if cx >= 0 && cy >= 0 && (cx as usize) < cells_x && (cy as usize) < cells_y {
                        hist[(cy as usize * cells_x + cx as usize) * bins + best_o] += w * mag;
                    }
                };
                add(ix, iy, wx0 * wy0);
                add(ix + 1, iy, wx1 * wy0);
                add(ix, iy + 1, wx0 * wy1);
                add(ix + 1, iy + 1, wx1 * wy1);
            }
        }
        // Energy of each cell over the contrast-insensitive orientations.
        let energy = &mut self.energy[..cells];
        for (c, e) in energy.iter_mut().enumerate() {
            let h = &hist[c * bins..(c + 1) * bins];
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
                let h = &hist[c * bins..(c + 1) * bins];
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
