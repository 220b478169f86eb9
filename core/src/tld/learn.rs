//! P-N learning of the TLD tracker (OpenTLD's `TLD::init` training, `learn`, `evaluate`): which
//! examples the fern ensemble and the NN classifier learn from, at init and after each frame
//! whose result is valid.
//!
//! * **P-expert** — the windows closest to the target (IoU > 0.6, at most 10) are positives for
//!   the ferns, each seen unwarped and under random warps; the target's own patch is the NN's
//!   positive.
//! * **N-expert** — windows far from the target (IoU < 0.2) are negatives: for the ferns, those
//!   whose fern score shows they could fool the detector; for the NN, the candidates the
//!   detector considered this frame (at init, background patches drawn at random).
//! * **Init thresholds** — half of the init negatives are held out; the detector's fern and NN
//!   thresholds rise to the highest score any of them gets, so the detector starts without
//!   known false alarms.

use crate::error::{Error, Result};
use crate::geometry::{Rect, RectF};
use crate::image::ImageView;

use super::fern::fern_codes;
use super::patch::{extract_patch, Patch, PATCH_LEN};
use super::tracker::{inner_rect, Tld};
use super::tracker::{FAST_CHANGE_SIMILARITY, NEGATIVE_FERN_PREFILTER, SAME_PATCH_SIMILARITY};
use super::variance::passes_variance;
use super::warp::warp_region;

impl Tld<'_> {
    /// IoU of every grid window with `target`, into `overlap`; returns the best window.
    fn compute_overlaps(&mut self, target: RectF) -> usize {
        let mut best = (0usize, f32::NEG_INFINITY);
        for i in 0..self.grid.len {
            let o = self.grid.window(i).to_f32().iou(&target);
            self.overlap[i] = o;
            if o > best.1 {
                best = (i, o);
            }
        }
        best.0
    }

    /// The `closest_positives` windows of highest overlap above `positive_overlap` into
    /// `good` (best first, ties to the lower index); returns how many.
    fn select_good(&mut self) -> usize {
        let cap = self.params.closest_positives as usize;
        let thr = self.params.positive_overlap;
        let mut g = 0;
        for i in 0..self.grid.len {
            let o = self.overlap[i];
            if o <= thr || (g == cap && o <= self.overlap[self.good[g - 1] as usize]) {
                continue;
            }
            // Insert after every entry of higher or equal overlap.
            let mut pos = g.min(cap - 1);
            if g < cap {
                g += 1;
            }
            while pos > 0 && self.overlap[self.good[pos - 1] as usize] < o {
                self.good[pos] = self.good[pos - 1];
                pos -= 1;
            }
            self.good[pos] = i as u32;
        }
        self.good_count = g;
        g
    }

    /// Fern codes of the good windows on the blurred frame and on `warps − 1` warped copies of
    /// their hull (the first copy unwarped); trains each as a positive. Returns the number of
    /// examples offered.
    fn train_positive_ferns(&mut self, warps: usize) -> Result<usize> {
        let g = self.good_count;
        if g == 0 {
            return Ok(0);
        }
        let ferns = self.params.fern.ferns as usize;
        let mut hull = self.grid.window(self.good[0] as usize);
        for &wi in &self.good[1..g] {
            let r = self.grid.window(wi as usize);
            let (x1, y1) = (hull.right().max(r.right()), hull.bottom().max(r.bottom()));
            hull.x = hull.x.min(r.x);
            hull.y = hull.y.min(r.y);
            hull.width = (x1 - hull.x as i64) as i32;
            hull.height = (y1 - hull.y as i64) as i32;
        }
        let fern = self.params.fern_params();
        let ranges = self.params.warp_ranges();
        let (w, h) = (self.width, self.height);
        let warps = warps.max(1);
        for k in 0..warps {
            if k > 0 {
                warp_region(
                    self.blurred,
                    self.warped,
                    w,
                    h,
                    hull,
                    &ranges,
                    self.noise,
                    &mut self.rng,
                );
            }
            let src = if k == 0 {
                &*self.blurred
            } else {
                &*self.warped
            };
            let view = ImageView::packed(src, w, h)?;
            let grid = self.grid.view(w, h);
            fern_codes(
                &fern,
                &view,
                &grid,
                self.offsets,
                &self.good[..g],
                &mut self.positive_codes[k * g * ferns..(k + 1) * g * ferns],
            )?;
        }
        Ok(warps * g)
    }

    /// Raises the detection thresholds of the ferns (used at init).
    fn raise_fern_threshold(&mut self, to: f32) -> Result<()> {
        if to > self.fern_threshold {
            self.fern_threshold = to.min(1.0);
            let neg = self.params.fern.negative_threshold;
            self.ferns.set_thresholds(self.fern_threshold, neg)?;
        }
        Ok(())
    }

    /// Trains both classifiers from the first frame (already prepared: blurred, integrals,
    /// grid built) and sets the detector's thresholds from held-out negatives.
    pub(super) fn learn_init(&mut self, frame: &ImageView<'_, u8>, bbox: Rect) -> Result<()> {
        let best = self.compute_overlaps(bbox.to_f32());
        if self.overlap[best] <= 0.0 {
            return Err(Error::InvalidArgument);
        }
        if self.select_good() == 0 {
            // No window is close enough: learn from the closest one.
            self.good[0] = best as u32;
            self.good_count = 1;
        }
        // NN: the closest window's patch is the first positive template.
        let mut patch: Patch = [0.0; PATCH_LEN];
        extract_patch(frame, self.grid.window(best), &mut patch)?;
        self.nn.learn_positive(&patch);
        // NN negatives: background windows drawn at random, half to train, half held out.
        let neg_thr = self.params.negative_overlap;
        let mut bad = 0;
        for i in 0..self.grid.len {
            if self.overlap[i] < neg_thr {
                self.order[bad] = i as u32;
                bad += 1;
            }
        }
        let k = (self.params.init_negative_patches as usize).min(bad);
        for i in 0..k {
            let j = i + self.rng.below((bad - i) as u32) as usize;
            self.order.swap(i, j);
        }
        let train = k.div_ceil(2);
        for i in 0..train {
            extract_patch(frame, self.grid.window(self.order[i] as usize), &mut patch)?;
            self.nn.learn_negative(&patch);
        }
        let mut nn_threshold = self.params.nn.detect_threshold;
        for i in train..k {
            extract_patch(frame, self.grid.window(self.order[i] as usize), &mut patch)?;
            nn_threshold = nn_threshold.max(self.nn.classify(&patch).relative);
        }
        let mut nn = self.params.nn;
        nn.detect_threshold = nn_threshold;
        nn.valid_threshold = nn.valid_threshold.max(nn_threshold);
        self.nn.set_thresholds(&nn)?;
        // Ferns: positives from warps, negatives from the variance survivors far from the box.
        let positives = self.train_positive_ferns(self.params.warps_init as usize + 1)?;
        self.scan_ferns(false)?;
        let n = self.survivor_count;
        let (mut n_train, mut n_test) = (0, n);
        for j in 0..n {
            let wi = self.survivors[j] as usize;
            if self.overlap[wi] >= neg_thr {
                continue;
            }
            if self.rng.next_u64() >> 63 == 0 {
                self.order[n_train] = j as u32;
                n_train += 1;
            } else {
                n_test -= 1;
                self.order[n_test] = j as u32;
            }
        }
        // Shuffle the training negatives, then merge the positives in at random positions:
        // a uniformly random interleaving, as OpenTLD's shuffle of all examples.
        for i in (1..n_train).rev() {
            let j = self.rng.below(i as u32 + 1) as usize;
            self.order.swap(i, j);
        }
        let ferns = self.params.fern.ferns as usize;
        let (mut p, mut q) = (0, 0);
        while p < positives || q < n_train {
            let left = (positives - p + n_train - q) as u32;
            if (self.rng.below(left) as usize) < positives - p {
                let code = &self.positive_codes[p * ferns..(p + 1) * ferns];
                self.ferns.train(code, true)?;
                p += 1;
            } else {
                let j = self.order[q] as usize;
                self.ferns
                    .train(&self.codes[j * ferns..(j + 1) * ferns], false)?;
                q += 1;
            }
        }
        // Held-out negatives set the fern threshold.
        let mut max_conf = 0.0f32;
        for t in n_test..n {
            let j = self.order[t] as usize;
            max_conf = max_conf.max(
                self.ferns
                    .confidence(&self.codes[j * ferns..(j + 1) * ferns])?,
            );
        }
        self.raise_fern_threshold(max_conf)?;
        Ok(())
    }

    /// P-N learning from the current frame's result `bbox` (the detector has run on this
    /// frame). Returns whether anything was learnt; skipped (false) when the box is mostly
    /// outside the frame, its appearance changed too fast, its variance is too low, or it looks
    /// like a known negative.
    pub(super) fn learn_update(&mut self, frame: &ImageView<'_, u8>, bbox: RectF) -> Result<bool> {
        let Some(r) = inner_rect(bbox, self.width, self.height) else {
            return Ok(false);
        };
        let mut patch: Patch = [0.0; PATCH_LEN];
        extract_patch(frame, r, &mut patch)?;
        let sim = self.nn.classify(&patch);
        if sim.relative < FAST_CHANGE_SIMILARITY || sim.max_negative > SAME_PATCH_SIMILARITY {
            return Ok(false);
        }
        let integral = self.integral()?;
        let s = integral.window_sum(r)? as u64;
        let q = integral.window_sq_sum(r)?;
        if !passes_variance(r.area() as u32, s, q, self.variance) {
            return Ok(false);
        }
        self.compute_overlaps(bbox);
        if self.select_good() == 0 {
            return Ok(false);
        }
        let ferns = self.params.fern.ferns as usize;
        let positives = self.train_positive_ferns(self.params.warps_update as usize + 1)?;
        for p in 0..positives {
            let code = &self.positive_codes[p * ferns..(p + 1) * ferns];
            self.ferns.train(code, true)?;
        }
        let neg_thr = self.params.negative_overlap;
        // Codes below the scan floor are partial; those windows would not be learnt anyway
        // (the floor is at most the negative-learning threshold).
        let prefilter = NEGATIVE_FERN_PREFILTER.max(self.scan_floor);
        for j in 0..self.survivor_count {
            let wi = self.survivors[j] as usize;
            if self.overlap[wi] < neg_thr && self.fern_conf[j] >= prefilter {
                self.ferns
                    .train(&self.codes[j * ferns..(j + 1) * ferns], false)?;
            }
        }
        self.nn.learn_positive(&patch);
        for c in 0..self.cand_count {
            let wi = self.cand_window[c] as usize;
            if self.overlap[wi] < neg_thr {
                extract_patch(frame, self.grid.window(wi), &mut patch)?;
                self.nn.learn_negative(&patch);
            }
        }
        Ok(true)
    }
}
