//! A generated tracking sequence with exact ground truth, for demos and regression tests that
//! need no files: a textured object (a two-colour checker under smooth noise, with a bright
//! centre disc and a dark rim) moves along a smooth Lissajous path over a textured background
//! while its size swings between 0.7× and 1.4×; once, a striped panel sweeps across the frame
//! and hides the object completely for a few frames (ground truth "absent" exactly while the
//! panel covers the whole box; present, unchanged, while only part of it is covered).
//!
//! Everything derives from a seed through SplitMix64 and `f64` arithmetic done in a fixed
//! order, so a seed gives the same frames on every platform. Frames are rendered on demand.

use anyhow::{ensure, Result};
use mvision_core::rng::SplitMix64;
use mvision_core::{Rect, RectF};

use crate::{Frame, Sequence};

/// Smallest accepted frame side, in pixels: below it the object would be a few pixels wide.
pub const MIN_SIDE_PX: usize = 64;

/// Sequences shorter than this have no occlusion (it would cover a large share of the run).
pub const MIN_FRAMES_FOR_OCCLUSION: usize = 30;

/// Parameters of the generated sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticParams {
    /// Frame width in pixels (default 320, at least [`MIN_SIDE_PX`]).
    pub width: usize,
    /// Frame height in pixels (default 240, at least [`MIN_SIDE_PX`]).
    pub height: usize,
    /// Number of frames (default 300, at least 1).
    pub frames: usize,
    /// Seed of every random choice: textures, path phases (default 1).
    pub seed: u64,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        Self {
            width: 320,
            height: 240,
            frames: 300,
            seed: 1,
        }
    }
}

/// Smooth value noise on a `cells × cells` lattice over `[0, 1)²`, wrapping around.
struct ValueNoise {
    cells: usize,
    lattice: Vec<f64>,
}

impl ValueNoise {
    fn new(cells: usize, rng: &mut SplitMix64) -> Self {
        Self {
            cells,
            lattice: (0..cells * cells).map(|_| rng.unit_f64()).collect(),
        }
    }

    /// Noise in `[0, 1]` at `(u, v)` (any real; wraps with period 1).
    fn at(&self, u: f64, v: f64) -> f64 {
        let n = self.cells;
        let (fu, fv) = (u.rem_euclid(1.0) * n as f64, v.rem_euclid(1.0) * n as f64);
        let (i0, j0) = (fu.floor() as usize % n, fv.floor() as usize % n);
        let (i1, j1) = ((i0 + 1) % n, (j0 + 1) % n);
        let smooth = |t: f64| t * t * (3.0 - 2.0 * t);
        let (a, b) = (smooth(fu.fract()), smooth(fv.fract()));
        let l = |i: usize, j: usize| self.lattice[j * n + i];
        let top = l(i0, j0) * (1.0 - a) + l(i1, j0) * a;
        let bottom = l(i0, j1) * (1.0 - a) + l(i1, j1) * a;
        top * (1.0 - b) + bottom * b
    }
}

/// The generated sequence (see the module documentation).
pub struct SyntheticSequence {
    params: SyntheticParams,
    background: Vec<u8>,
    object_noise: ValueNoise,
    /// The object's box on every frame, hidden or not.
    boxes: Vec<Rect>,
    /// The occluding panel's columns `[x0, x1)` on every frame, when any part is in view.
    occluder: Vec<Option<(i64, i64)>>,
    ground_truth: Vec<Option<RectF>>,
}

/// Clamps a channel value to 0..=255.
fn channel(v: f64) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

impl SyntheticSequence {
    /// Generates the background, the textures, the path and the ground truth for `params`.
    ///
    /// # Errors
    /// A side below [`MIN_SIDE_PX`] or zero frames.
    pub fn new(params: SyntheticParams) -> Result<Self> {
        let (w, h) = (params.width, params.height);
        ensure!(
            w >= MIN_SIDE_PX && h >= MIN_SIDE_PX,
            "synthetic frames must be at least {MIN_SIDE_PX}x{MIN_SIDE_PX} pixels, got {w}x{h}"
        );
        ensure!(
            params.frames > 0,
            "a synthetic sequence needs at least one frame"
        );
        let mut rng = SplitMix64(params.seed);

        // Background: coarse blotches plus fine grain, in muted greens and browns.
        let coarse = ValueNoise::new(6, &mut rng);
        let fine = ValueNoise::new(40, &mut rng);
        let mut background = Vec::with_capacity(3 * w * h);
        for y in 0..h {
            for x in 0..w {
                let (u, v) = (x as f64 / w as f64, y as f64 / h as f64);
                let (c, f) = (coarse.at(u, v), fine.at(u, v * w as f64 / h as f64));
                background.push(channel(50.0 + 110.0 * c + 50.0 * f));
                background.push(channel(70.0 + 70.0 * c + 70.0 * f));
                background.push(channel(40.0 + 60.0 * (1.0 - c) + 40.0 * f));
            }
        }
        let object_noise = ValueNoise::new(5, &mut rng);
        let phase: [f64; 4] = std::array::from_fn(|_| rng.unit_f64() * std::f64::consts::TAU);

        // Path: a Lissajous figure sized so the largest box stays inside the frame.
        let base = 0.2 * w.min(h) as f64;
        let (aspect, max_scale) = (1.2, 1.4);
        let amp_x = (w as f64 - base * aspect * max_scale) / 2.0 - 3.0;
        let amp_y = (h as f64 - base * max_scale) / 2.0 - 3.0;
        let tau = std::f64::consts::TAU;
        let centre_at = |t: f64| {
            (
                w as f64 / 2.0 + amp_x * (tau * t / 220.0 + phase[0]).sin(),
                h as f64 / 2.0 + amp_y * (tau * t / 170.0 + phase[1]).sin(),
            )
        };
        let boxes: Vec<Rect> = (0..params.frames)
            .map(|i| {
                let t = i as f64;
                let scale = 1.05 + 0.35 * (tau * t / 150.0 + phase[2]).sin();
                let (bw, bh) = (base * aspect * scale, base * scale);
                let (cx, cy) = centre_at(t);
                let bw_px = (bw.round() as i32).max(4);
                let bh_px = (bh.round() as i32).max(4);
                let x = ((cx - bw / 2.0).round() as i32).clamp(0, w as i32 - bw_px);
                let y = ((cy - bh / 2.0).round() as i32).clamp(0, h as i32 - bh_px);
                Rect::new(x, y, bw_px, bh_px)
            })
            .collect();

        // Occluder: a full-height panel 1.8× the object's width at mid-occlusion, centred on the
        // object then and moving against it at 6 px/frame.
        let mut occluder = vec![None; params.frames];
        if params.frames >= MIN_FRAMES_FOR_OCCLUSION {
            let mid = (params.frames as f64 * 0.55) as usize;
            let (cx_mid, _) = centre_at(mid as f64);
            let (cx_next, _) = centre_at(mid as f64 + 1.0);
            let speed = if cx_next >= cx_mid { -6.0 } else { 6.0 };
            let panel_w = (1.8 * boxes[mid].width as f64).round() as i64;
            let centre_mid = boxes[mid].x as f64 + boxes[mid].width as f64 / 2.0;
            for (i, o) in occluder.iter_mut().enumerate() {
                let c = centre_mid + speed * (i as f64 - mid as f64);
                let x0 = (c - panel_w as f64 / 2.0).round() as i64;
                if x0 < w as i64 && x0 + panel_w > 0 {
                    *o = Some((x0, x0 + panel_w));
                }
            }
        }
        let ground_truth = boxes
            .iter()
            .zip(&occluder)
            .map(|(b, o)| match o {
                Some((x0, x1)) if *x0 <= b.x as i64 && *x1 >= b.right() => None,
                _ => Some(b.to_f32()),
            })
            .collect();

        Ok(Self {
            params,
            background,
            object_noise,
            boxes,
            occluder,
            ground_truth,
        })
    }

    /// The parameters this sequence was made from.
    pub fn params(&self) -> SyntheticParams {
        self.params
    }

    /// The object's box on frame `index`, also while it is hidden; `None` past the end.
    pub fn object_box(&self, index: usize) -> Option<Rect> {
        self.boxes.get(index).copied()
    }

    /// The colour of the object's texture at `(u, v)` in `[0, 1)²` of its box.
    fn object_color(&self, u: f64, v: f64) -> [u8; 3] {
        let (du, dv) = (u - 0.5, v - 0.5);
        let interior = 0.06..=0.94;
        if !interior.contains(&u) || !interior.contains(&v) {
            return [20, 20, 25]; // dark rim
        }
        if du * du + dv * dv < 0.18 * 0.18 {
            return [245, 240, 220]; // bright centre disc
        }
        let shade = 0.7 + 0.6 * self.object_noise.at(u, v);
        let checker = ((u * 4.0) as i32 + (v * 4.0) as i32) % 2 == 0;
        let base = if checker {
            [230.0, 110.0, 30.0]
        } else {
            [40.0, 60.0, 170.0]
        };
        [
            channel(base[0] * shade),
            channel(base[1] * shade),
            channel(base[2] * shade),
        ]
    }
}

impl Sequence for SyntheticSequence {
    fn name(&self) -> &str {
        "synthetic"
    }

    fn len(&self) -> usize {
        self.params.frames
    }

    fn size(&self) -> (usize, usize) {
        (self.params.width, self.params.height)
    }

    fn frame(&self, index: usize) -> Result<Frame> {
        ensure!(
            index < self.params.frames,
            "frame {index} is past the end of the synthetic sequence ({} frames)",
            self.params.frames
        );
        let w = self.params.width;
        let mut rgb = self.background.clone();
        let b = self.boxes[index];
        for y in b.y..b.bottom() as i32 {
            for x in b.x..b.right() as i32 {
                let u = (x - b.x) as f64 / b.width as f64;
                let v = (y - b.y) as f64 / b.height as f64;
                let i = 3 * (y as usize * w + x as usize);
                rgb[i..i + 3].copy_from_slice(&self.object_color(u, v));
            }
        }
        if let Some((x0, x1)) = self.occluder[index] {
            for y in 0..self.params.height {
                for x in x0.max(0)..x1.min(w as i64) {
                    // Stripes fixed to the panel, so they move with it.
                    let dark = ((x - x0) / 7) % 2 == 0;
                    let v = if dark { 70 } else { 150 } + (y % 13) as u8;
                    let i = 3 * (y * w + x as usize);
                    rgb[i..i + 3].copy_from_slice(&[v, v - 8, v - 16]);
                }
            }
        }
        Frame::from_rgb(w, self.params.height, rgb)
    }

    fn ground_truth(&self) -> Option<&[Option<RectF>]> {
        Some(&self.ground_truth)
    }
}
