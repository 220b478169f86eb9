//! One tracker over one sequence: initialise on the first frame, update on every following one,
//! time only the tracker, and score against the ground truth when there is one.
//!
//! Timing: FPS is frames ÷ the total wall time spent inside [`Tracker::init`] and
//! [`Tracker::update`]. Decoding or generating frames, drawing, the progress bar and the
//! per-frame callback are excluded, so the figure describes the tracker, not the disk.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mvision_core::RectF;

use crate::{Frame, Scores, Sequence, TrackOutput, Tracker};

/// Below this many frames no progress bar is shown: a short run finishes before it is useful.
const PROGRESS_MIN_FRAMES: usize = 50;

/// How a run is done.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The initial box in pixels; `None` takes the first ground-truth row.
    pub init: Option<RectF>,
    /// Process at most this many frames (including the first); `None` = all.
    pub max_frames: Option<usize>,
    /// Show a progress bar on stderr — only if stderr is a terminal and the run is long.
    pub progress: bool,
}

/// The outcome of one run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The tracker's name.
    pub tracker: String,
    /// The sequence's name.
    pub sequence: String,
    /// Frame size in pixels, `(width, height)`.
    pub frame_size: (usize, usize),
    /// The box the tracker was initialised with (pixels, as given; the tracker receives it
    /// rounded to whole pixels).
    pub init_box: RectF,
    /// One result per processed frame; frame 0 is `init_box`, `None` = reported absent.
    pub boxes: Vec<Option<RectF>>,
    /// The tracker's confidence per frame (1 on frame 0).
    pub confidences: Vec<f32>,
    /// Total time spent inside `init` and `update`.
    pub tracking_time: Duration,
    /// Scores against the ground truth of the processed frames, when the sequence has one.
    pub scores: Option<Scores>,
}

impl RunResult {
    /// Number of processed frames (the first included).
    pub fn frames(&self) -> usize {
        self.boxes.len()
    }

    /// Frames per second of tracker time (see the module documentation); 0 if no time was
    /// measured.
    pub fn fps(&self) -> f64 {
        let s = self.tracking_time.as_secs_f64();
        if s > 0.0 {
            self.frames() as f64 / s
        } else {
            0.0
        }
    }
}

/// Runs `tracker` over `sequence` (see [`run_sequence_with`]) with no per-frame callback.
///
/// # Errors
/// As [`run_sequence_with`].
pub fn run_sequence(
    tracker: &mut dyn Tracker,
    sequence: &dyn Sequence,
    options: &RunOptions,
) -> Result<RunResult> {
    run_sequence_with(tracker, sequence, options, |_, _, _| Ok(()))
}

/// Runs `tracker` over `sequence`: `init` on frame 0 with `options.init` or else the first
/// ground-truth box, then `update` on each following frame. `on_frame(index, frame, output)` is
/// called after every frame (frame 0 with the initial box as output) — for drawing or saving —
/// and is not timed.
///
/// # Errors
/// An empty sequence, no initial box (no `options.init` and no ground truth, or a first
/// ground-truth row marked absent), an initial box with no area, a frame that cannot be
/// decoded, a tracker error (with the frame number, 1-based as in OTB), or an error from
/// `on_frame`.
pub fn run_sequence_with(
    tracker: &mut dyn Tracker,
    sequence: &dyn Sequence,
    options: &RunOptions,
    mut on_frame: impl FnMut(usize, &Frame, &TrackOutput) -> Result<()>,
) -> Result<RunResult> {
    let total = sequence.len().min(options.max_frames.unwrap_or(usize::MAX));
    if total == 0 {
        bail!("sequence '{}' has no frames to track", sequence.name());
    }
    let init_box = match (options.init, sequence.ground_truth()) {
        (Some(b), _) => b,
        (None, Some(gt)) => gt[0].with_context(|| {
            format!(
                "the target is absent in the first ground-truth row of '{}': give an initial box",
                sequence.name()
            )
        })?,
        (None, None) => bail!(
            "sequence '{}' has no ground truth: give an initial box (x,y,w,h)",
            sequence.name()
        ),
    };
    let init_rect = init_box.round();
    if init_rect.is_empty() {
        bail!("the initial box {init_box:?} covers no whole pixel");
    }

    let bar = if options.progress && total >= PROGRESS_MIN_FRAMES && std::io::stderr().is_terminal()
    {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} frames, {per_sec} {eta}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(format!("{} on {}", tracker.name(), sequence.name()));
        bar
    } else {
        ProgressBar::hidden()
    };

    let mut boxes = Vec::with_capacity(total);
    let mut confidences = Vec::with_capacity(total);
    let mut tracking_time = Duration::ZERO;
    for index in 0..total {
        let frame = sequence.frame(index)?;
        let output = if index == 0 {
            let start = Instant::now();
            tracker
                .init(&frame, init_rect)
                .with_context(|| format!("{} failed to initialise on frame 1", tracker.name()))?;
            tracking_time += start.elapsed();
            TrackOutput::found(init_box, 1.0)
        } else {
            let start = Instant::now();
            let out = tracker
                .update(&frame)
                .with_context(|| format!("{} failed on frame {}", tracker.name(), index + 1))?;
            tracking_time += start.elapsed();
            out
        };
        boxes.push(output.bbox);
        confidences.push(output.confidence);
        on_frame(index, &frame, &output)?;
        bar.inc(1);
    }
    bar.finish_and_clear();

    let scores = match sequence.ground_truth() {
        Some(gt) => Some(Scores::new(&gt[..total], &boxes)?),
        None => None,
    };
    Ok(RunResult {
        tracker: tracker.name().to_string(),
        sequence: sequence.name().to_string(),
        frame_size: sequence.size(),
        init_box,
        boxes,
        confidences,
        tracking_time,
        scores,
    })
}
