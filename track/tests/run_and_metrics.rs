//! `run_sequence` with test trackers whose results are known in advance, so every reported
//! figure can be checked against a hand computation.

use anyhow::{bail, Result};
use mvision_track::metrics::Scores;
use mvision_track::{
    run_sequence, run_sequence_with, Frame, Rect, RectF, RunOptions, Sequence, SyntheticParams,
    SyntheticSequence, TrackOutput, Tracker,
};

/// A sequence of uniform 32 × 32 frames with the given ground truth.
struct Fixed {
    gt: Vec<Option<RectF>>,
}

impl Sequence for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }
    fn len(&self) -> usize {
        self.gt.len()
    }
    fn size(&self) -> (usize, usize) {
        (32, 32)
    }
    fn frame(&self, index: usize) -> Result<Frame> {
        // The frame number is written into the first byte, so the tracker can look it up.
        let mut rgb = vec![0u8; 32 * 32 * 3];
        rgb[..3].fill(index as u8);
        Frame::from_rgb(32, 32, rgb)
    }
    fn ground_truth(&self) -> Option<&[Option<RectF>]> {
        Some(&self.gt)
    }
}

/// Returns the ground truth moved by `(dx, dy)`, and "absent" where the truth is absent.
struct Offset {
    gt: Vec<Option<RectF>>,
    dx: f32,
    dy: f32,
    init_box: Option<Rect>,
}

impl Tracker for Offset {
    fn name(&self) -> &str {
        "offset"
    }
    fn init(&mut self, _frame: &Frame, bbox: Rect) -> Result<()> {
        self.init_box = Some(bbox);
        Ok(())
    }
    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let index = frame.gray_bytes()[0] as usize;
        Ok(match self.gt[index] {
            Some(g) => TrackOutput::found(
                RectF {
                    x: g.x + self.dx,
                    y: g.y + self.dy,
                    ..g
                },
                0.5,
            ),
            None => TrackOutput::absent(),
        })
    }
}

fn b(x: f32, y: f32, w: f32, h: f32) -> Option<RectF> {
    Some(RectF {
        x,
        y,
        width: w,
        height: h,
    })
}

#[test]
fn run_scores_a_half_overlap_tracker_as_computed_by_hand() {
    let gt = vec![
        b(0.0, 0.0, 10.0, 10.0),
        b(2.0, 2.0, 10.0, 10.0),
        None,
        b(4.0, 4.0, 10.0, 10.0),
    ];
    let seq = Fixed { gt: gt.clone() };
    let mut tracker = Offset {
        gt,
        dx: 5.0,
        dy: 0.0,
        init_box: None,
    };
    let result = run_sequence(&mut tracker, &seq, &RunOptions::default()).unwrap();
    assert_eq!(tracker.init_box, Some(Rect::new(0, 0, 10, 10)));
    assert_eq!(result.frames(), 4);
    assert_eq!(result.boxes[0], b(0.0, 0.0, 10.0, 10.0));
    assert_eq!(result.boxes[2], None);
    assert_eq!(result.confidences, [1.0, 0.5, 0.0, 0.5]);
    assert!(result.fps() > 0.0);
    let s = result.scores.unwrap();
    // IoU per frame: 1, 1/3, 1 (both absent), 1/3. S(t) = 1 for t ≤ 0.30 (7 points), 1/2 for
    // 0.35 ≤ t ≤ 0.95 (13 points), 0 for t = 1.
    assert!(
        (s.success_auc() - (7.0 + 6.5) / 21.0).abs() < 1e-12,
        "{}",
        s.success_auc()
    );
    // Centre errors 0, 5, 0, 5.
    assert_eq!(s.precision_curve()[4], 0.5);
    assert_eq!(s.precision_curve()[5], 1.0);
    assert_eq!(s.precision20(), 1.0);
}

#[test]
fn init_box_option_overrides_ground_truth_and_frame_limit_applies() {
    let gt = vec![b(0.0, 0.0, 10.0, 10.0); 6];
    let seq = Fixed { gt: gt.clone() };
    let mut tracker = Offset {
        gt,
        dx: 0.0,
        dy: 0.0,
        init_box: None,
    };
    let options = RunOptions {
        init: b(3.4, 4.6, 8.0, 8.0),
        max_frames: Some(3),
        progress: false,
    };
    let result = run_sequence(&mut tracker, &seq, &options).unwrap();
    // The tracker gets the box rounded to whole pixels; frame 1's result is the box as given.
    assert_eq!(tracker.init_box, Some(Rect::new(3, 5, 8, 8)));
    assert_eq!(result.boxes[0], options.init);
    assert_eq!(result.frames(), 3);
    let s = result.scores.unwrap();
    assert_eq!(s.len(), 3);
    // Frames 2 and 3 match exactly (IoU 1: 20 points each); frame 1: 3.4..11.4 × 4.6..12.6
    // against 0..10 × 0..10 overlaps 6.6 × 5.4 = 35.64, union 100 + 64 − 35.64 = 128.36.
    let iou1 = 35.64 / 128.36;
    let above = (0..21).filter(|&i| iou1 > i as f64 / 20.0).count() as f64;
    let expected = (above + 40.0) / 63.0;
    assert!(
        (s.success_auc() - expected).abs() < 1e-6,
        "{} vs {expected}",
        s.success_auc()
    );
}

#[test]
fn runs_need_an_initial_box() {
    let seq = Fixed {
        gt: vec![None, b(0.0, 0.0, 4.0, 4.0)],
    };
    let mut tracker = Offset {
        gt: seq.gt.clone(),
        dx: 0.0,
        dy: 0.0,
        init_box: None,
    };
    let e = run_sequence(&mut tracker, &seq, &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("absent in the first"), "{e}");
    let options = RunOptions {
        init: b(0.0, 0.0, 0.2, 4.0),
        ..RunOptions::default()
    };
    assert!(run_sequence(&mut tracker, &seq, &options).is_err());
}

/// Fails on its third update.
struct Failing(usize);

impl Tracker for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn init(&mut self, _frame: &Frame, _bbox: Rect) -> Result<()> {
        Ok(())
    }
    fn update(&mut self, _frame: &Frame) -> Result<TrackOutput> {
        self.0 += 1;
        if self.0 == 3 {
            bail!("boom")
        }
        Ok(TrackOutput::absent())
    }
}

#[test]
fn tracker_errors_name_the_frame_and_callbacks_see_every_frame() {
    let seq = SyntheticSequence::new(SyntheticParams {
        frames: 10,
        ..SyntheticParams::default()
    })
    .unwrap();
    let mut seen = Vec::new();
    let e = run_sequence_with(&mut Failing(0), &seq, &RunOptions::default(), |i, f, _| {
        assert_eq!((f.width(), f.height()), (320, 240));
        seen.push(i);
        Ok(())
    })
    .unwrap_err();
    assert_eq!(format!("{e:#}"), "failing failed on frame 4: boom");
    assert_eq!(seen, [0, 1, 2]);
}

#[test]
fn an_always_absent_tracker_scores_only_the_hidden_frames() {
    let seq = SyntheticSequence::new(SyntheticParams::default()).unwrap();
    let gt = seq.ground_truth().unwrap();
    let hidden = gt.iter().filter(|g| g.is_none()).count();
    assert!(hidden > 0);
    let result = run_sequence(&mut Failing(usize::MAX / 2), &seq, &RunOptions::default()).unwrap();
    let s = result.scores.unwrap();
    // Frame 1 (the initial box) and the hidden frames score IoU 1 and error 0; all others fail.
    let share = (1 + hidden) as f64 / gt.len() as f64;
    assert!((s.precision20() - share).abs() < 1e-12);
    assert!((s.success_auc() - share * 20.0 / 21.0).abs() < 1e-12);
    // Pooling two copies changes nothing (frame-weighted).
    let pooled = Scores::pooled([&s, &s]);
    assert_eq!(pooled.len(), 2 * gt.len());
    assert!((pooled.success_auc() - s.success_auc()).abs() < 1e-12);
}
