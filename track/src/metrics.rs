//! OTB evaluation measures, exactly as `../shared/data/README.md` defines them (a Python peer
//! script computes the same numbers, so every detail below is part of the contract).
//!
//! Per frame, including the first (where the result is the initial box), with ground truth `g`
//! and result `r`, each a box or "absent":
//!
//! * IoU of `g` and `r` as real rectangles `[x, x+w) × [y, y+h)` (no `+1` pixel convention);
//!   both absent → 1; exactly one absent → 0;
//! * centre error: both present → Euclidean distance of the centres `(x + w/2, y + h/2)` in
//!   pixels; both absent → 0; exactly one absent → +∞.
//!
//! The success curve `S(t)` is the share of frames with IoU **strictly** above `t`, for
//! `t = i/20`, `i = 0..=20`; the success AUC is the mean of those 21 values (so a perfect
//! tracker scores 20/21, because no IoU exceeds 1). The precision curve `P(d)` is the share of
//! frames with centre error at most `d` pixels, `d = 0..=50`; precision@20 is `P(20)`. Results
//! pooled over several sequences are computed over the concatenation of all their frames
//! (frame-weighted), never as a mean of per-sequence values. All arithmetic is `f64`.

use anyhow::{ensure, Result};
use mvision_core::RectF;

/// Number of points of the success curve (thresholds `0, 0.05, …, 1`).
pub const SUCCESS_POINTS: usize = 21;

/// Largest centre-error threshold of the precision curve, in pixels.
pub const PRECISION_MAX_PX: usize = 50;

/// The centre-error threshold of the headline precision figure, in pixels.
pub const PRECISION_THRESHOLD_PX: usize = 20;

/// The IoU threshold of point `i` of the success curve: `i / 20`.
pub fn success_threshold(i: usize) -> f64 {
    i as f64 / (SUCCESS_POINTS - 1) as f64
}

/// IoU of ground truth `gt` and result `result` (`None` = absent), by the rules in the module
/// documentation. A present box with no area overlaps nothing (IoU 0 unless both are absent).
pub fn iou(gt: Option<RectF>, result: Option<RectF>) -> f64 {
    match (gt, result) {
        (None, None) => 1.0,
        (Some(_), None) | (None, Some(_)) => 0.0,
        (Some(g), Some(r)) => {
            let (gx, gy, gw, gh) = (g.x as f64, g.y as f64, g.width as f64, g.height as f64);
            let (rx, ry, rw, rh) = (r.x as f64, r.y as f64, r.width as f64, r.height as f64);
            let iw = ((gx + gw).min(rx + rw) - gx.max(rx)).max(0.0);
            let ih = ((gy + gh).min(ry + rh) - gy.max(ry)).max(0.0);
            let inter = iw * ih;
            let union = gw.max(0.0) * gh.max(0.0) + rw.max(0.0) * rh.max(0.0) - inter;
            if union > 0.0 {
                inter / union
            } else {
                0.0
            }
        }
    }
}

/// Centre error in pixels of `result` against `gt` (`None` = absent), by the rules in the
/// module documentation: `f64::INFINITY` when exactly one is absent.
pub fn center_error(gt: Option<RectF>, result: Option<RectF>) -> f64 {
    match (gt, result) {
        (None, None) => 0.0,
        (Some(_), None) | (None, Some(_)) => f64::INFINITY,
        (Some(g), Some(r)) => {
            let centre = |b: RectF| {
                (
                    b.x as f64 + b.width as f64 / 2.0,
                    b.y as f64 + b.height as f64 / 2.0,
                )
            };
            let ((gx, gy), (rx, ry)) = (centre(g), centre(r));
            (gx - rx).hypot(gy - ry)
        }
    }
}

/// Per-frame IoU and centre error of one or more runs; the curves and headline figures are
/// computed from these.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores {
    ious: Vec<f64>,
    center_errors_px: Vec<f64>,
}

impl Scores {
    /// Scores each frame of `results` against the same frame of `ground_truth`.
    ///
    /// # Errors
    /// The two slices differ in length.
    pub fn new(ground_truth: &[Option<RectF>], results: &[Option<RectF>]) -> Result<Self> {
        ensure!(
            ground_truth.len() == results.len(),
            "{} ground-truth boxes for {} results",
            ground_truth.len(),
            results.len()
        );
        Ok(Self {
            ious: ground_truth
                .iter()
                .zip(results)
                .map(|(&g, &r)| iou(g, r))
                .collect(),
            center_errors_px: ground_truth
                .iter()
                .zip(results)
                .map(|(&g, &r)| center_error(g, r))
                .collect(),
        })
    }

    /// Scores pooled over several runs: the concatenation of their frames.
    pub fn pooled<'a>(parts: impl IntoIterator<Item = &'a Scores>) -> Self {
        let mut all = Self::default();
        for p in parts {
            all.ious.extend_from_slice(&p.ious);
            all.center_errors_px.extend_from_slice(&p.center_errors_px);
        }
        all
    }

    /// Number of frames scored.
    pub fn len(&self) -> usize {
        self.ious.len()
    }

    /// True if no frame was scored.
    pub fn is_empty(&self) -> bool {
        self.ious.is_empty()
    }

    /// Per-frame IoU values in `[0, 1]`.
    pub fn ious(&self) -> &[f64] {
        &self.ious
    }

    /// Per-frame centre errors in pixels (`+∞` where exactly one of the boxes is absent).
    pub fn center_errors_px(&self) -> &[f64] {
        &self.center_errors_px
    }

    /// Share of frames (in `[0, 1]`) satisfying `pred`; 0 for no frames.
    fn share(values: &[f64], pred: impl Fn(f64) -> bool) -> f64 {
        if values.is_empty() {
            return 0.0;
        }
        values.iter().filter(|&&v| pred(v)).count() as f64 / values.len() as f64
    }

    /// `S(t)` for `t = i/20`, `i = 0..=20`: the share of frames with IoU > t.
    pub fn success_curve(&self) -> [f64; SUCCESS_POINTS] {
        std::array::from_fn(|i| {
            let t = success_threshold(i);
            Self::share(&self.ious, |v| v > t)
        })
    }

    /// The success AUC: the mean of the 21 points of [`success_curve`](Self::success_curve).
    pub fn success_auc(&self) -> f64 {
        self.success_curve().iter().sum::<f64>() / SUCCESS_POINTS as f64
    }

    /// `P(d)` for `d = 0..=50` pixels: the share of frames with centre error ≤ d.
    pub fn precision_curve(&self) -> [f64; PRECISION_MAX_PX + 1] {
        std::array::from_fn(|d| Self::share(&self.center_errors_px, |v| v <= d as f64))
    }

    /// Precision at 20 pixels, `P(20)`.
    pub fn precision20(&self) -> f64 {
        Self::share(&self.center_errors_px, |v| {
            v <= PRECISION_THRESHOLD_PX as f64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(x: f32, y: f32, w: f32, h: f32) -> Option<RectF> {
        Some(RectF {
            x,
            y,
            width: w,
            height: h,
        })
    }

    #[test]
    fn identical_boxes_score_twenty_of_twenty_one() {
        let s = Scores::new(&[b(1.0, 2.0, 10.0, 20.0)], &[b(1.0, 2.0, 10.0, 20.0)]).unwrap();
        assert_eq!(s.success_auc(), 20.0 / 21.0);
        assert_eq!(s.precision20(), 1.0);
        assert_eq!(s.precision_curve()[0], 1.0);
    }

    #[test]
    fn absent_and_present_combinations() {
        assert_eq!(iou(None, None), 1.0);
        assert_eq!(center_error(None, None), 0.0);
        assert_eq!(iou(None, b(0.0, 0.0, 1.0, 1.0)), 0.0);
        assert_eq!(iou(b(0.0, 0.0, 1.0, 1.0), None), 0.0);
        assert_eq!(center_error(b(0.0, 0.0, 1.0, 1.0), None), f64::INFINITY);
        let s = Scores::new(&[None, None], &[None, b(0.0, 0.0, 4.0, 4.0)]).unwrap();
        // Frame 1 scores IoU 1 (> every t < 1, so 20 points), frame 2 scores 0 everywhere.
        assert_eq!(s.success_auc(), 0.5 * 20.0 / 21.0);
        assert_eq!(s.precision20(), 0.5);
        assert_eq!(s.precision_curve()[50], 0.5);
    }

    #[test]
    fn half_overlap_is_one_third() {
        // Shifted by half the width: intersection 5·10 = 50, union 150.
        let v = iou(b(0.0, 0.0, 10.0, 10.0), b(5.0, 0.0, 10.0, 10.0));
        assert!((v - 1.0 / 3.0).abs() < 1e-12, "{v}");
        let s = Scores::new(&[b(0.0, 0.0, 10.0, 10.0)], &[b(5.0, 0.0, 10.0, 10.0)]).unwrap();
        // IoU 1/3 exceeds t = 0, 0.05, …, 0.30: seven points.
        assert!((s.success_auc() - 7.0 / 21.0).abs() < 1e-12);
        assert_eq!(s.precision_curve()[4], 0.0);
        assert_eq!(s.precision_curve()[5], 1.0);
    }

    #[test]
    fn touching_boxes_do_not_overlap() {
        assert_eq!(iou(b(0.0, 0.0, 10.0, 10.0), b(10.0, 0.0, 10.0, 10.0)), 0.0);
    }

    #[test]
    fn three_four_five_centre_error() {
        let e = center_error(b(0.0, 0.0, 10.0, 10.0), b(3.0, 4.0, 10.0, 10.0));
        assert_eq!(e, 5.0);
        let s = Scores::new(&[b(0.0, 0.0, 10.0, 10.0)], &[b(3.0, 4.0, 10.0, 10.0)]).unwrap();
        assert_eq!(s.precision_curve()[4], 0.0);
        assert_eq!(s.precision_curve()[5], 1.0);
    }

    #[test]
    fn pooling_is_frame_weighted() {
        let a = Scores::new(&[None], &[None]).unwrap(); // AUC 20/21
        let c = Scores::new(&[None; 3], &[b(0.0, 0.0, 1.0, 1.0); 3]).unwrap(); // AUC 0
        let p = Scores::pooled([&a, &c]);
        assert_eq!(p.len(), 4);
        assert!((p.success_auc() - 0.25 * 20.0 / 21.0).abs() < 1e-12);
        assert_eq!(p.precision20(), 0.25);
        assert!(Scores::new(&[None], &[]).is_err());
    }
}
