//! The interface every tracker implements, after OpenCV's: `init(frame, box)` once, then
//! `update(frame)` on each following frame. "Target not found" is a normal result
//! (`bbox: None`), not an error; errors are for what stops tracking altogether.

use anyhow::Result;
use mvision_core::{Rect, RectF};

use crate::Frame;

/// What a tracker reports for one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrackOutput {
    /// The target's box in pixels, or `None` when the tracker reports the target absent (out of
    /// view, occluded, lost).
    pub bbox: Option<RectF>,
    /// The tracker's confidence in `bbox`, in the tracker's own scale (TLD: conservative
    /// similarity in `[0, 1]`; KCF: peak-to-sidelobe ratio); 0 when absent or unknown.
    pub confidence: f32,
    /// Other candidate boxes in pixels (for example the detector's), for drawing only; may be
    /// empty.
    pub detections: Vec<RectF>,
}

impl TrackOutput {
    /// The target found at `bbox` with `confidence`, no detections.
    pub fn found(bbox: RectF, confidence: f32) -> Self {
        Self {
            bbox: Some(bbox),
            confidence,
            detections: Vec::new(),
        }
    }

    /// The target reported absent.
    pub fn absent() -> Self {
        Self::default()
    }
}

/// A single-target tracker.
pub trait Tracker {
    /// A short lowercase name, as on the command line (`tld`).
    fn name(&self) -> &str;

    /// Starts tracking the target inside `bbox` (pixels) on `frame`; forgets any earlier target.
    ///
    /// # Errors
    /// A box that is empty or outside the frame, or a frame the tracker cannot take (size).
    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()>;

    /// Finds the target on the next frame.
    ///
    /// # Errors
    /// Only failures that end tracking (not initialised, a frame of another size); a lost
    /// target is `Ok` with `bbox: None`.
    fn update(&mut self, frame: &Frame) -> Result<TrackOutput>;
}
