//! The simplest possible tracker, kept as the lower bound of every comparison (OTB-style tables
//! read better with one) and as a tracker that always works, for end-to-end tests of the tools.

use anyhow::{ensure, Result};
use mvision_core::{Rect, RectF};

use crate::{Frame, TrackOutput, Tracker};

/// Reports the initial box on every frame, with confidence 0: it never moves and never says
/// the target is absent.
#[derive(Clone, Debug, Default)]
pub struct StaticTracker {
    bbox: Option<RectF>,
}

impl StaticTracker {
    /// A tracker with no target yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Tracker for StaticTracker {
    fn name(&self) -> &str {
        "static"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        ensure!(
            bbox.clamp_to(frame.width(), frame.height()).is_some(),
            "initial box {bbox:?} is empty or outside the {}x{} frame",
            frame.width(),
            frame.height()
        );
        self.bbox = Some(bbox.to_f32());
        Ok(())
    }

    fn update(&mut self, _frame: &Frame) -> Result<TrackOutput> {
        let bbox = self
            .bbox
            .ok_or_else(|| anyhow::anyhow!("static tracker updated before init"))?;
        Ok(TrackOutput::found(bbox, 0.0))
    }
}
