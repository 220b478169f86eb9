//! Adapter from the core's TLD tracker to [`Tracker`]. Placeholder until the core tracker is
//! linked: `init` stores the box and `update` fails.

use anyhow::{bail, Result};
use mvision_core::Rect;

use crate::{Frame, TrackOutput, Tracker};

/// TLD (Kalal et al., TPAMI 2012) as a [`Tracker`]. Not linked yet: `update` returns an error.
#[derive(Debug)]
pub struct TldTracker {
    width: usize,
    height: usize,
    bbox: Option<Rect>,
}

impl TldTracker {
    /// A tracker for frames of `width × height` pixels.
    ///
    /// # Errors
    /// None yet.
    pub fn new(width: usize, height: usize) -> Result<Self> {
        Ok(Self {
            width,
            height,
            bbox: None,
        })
    }
}

impl Tracker for TldTracker {
    fn name(&self) -> &str {
        "tld"
    }

    fn init(&mut self, _frame: &Frame, bbox: Rect) -> Result<()> {
        let _ = (self.width, self.height);
        self.bbox = Some(bbox);
        Ok(())
    }

    fn update(&mut self, _frame: &Frame) -> Result<TrackOutput> {
        bail!("TLD adapter not linked yet")
    }
}
