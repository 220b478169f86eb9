//! Adapter from the core's TLD tracker ([`mvision_core::tld::Tld`]) to [`Tracker`]: the core
//! tracker lives in one heap block owned by the adapter (`workspace`), allocated once
//! at creation.

use anyhow::{anyhow, Result};
use mvision_core::tld::{workspace_len, Tld, TldParams};
use mvision_core::Rect;

use crate::workspace::OwnedWorkspace;
use crate::{Frame, TrackOutput, Tracker};

/// TLD (Kalal et al., TPAMI 2012; OpenTLD's defaults, see [`TldParams`]) as a [`Tracker`].
#[derive(Debug)]
pub struct TldTracker {
    tld: OwnedWorkspace<Tld<'static>>,
}

impl TldTracker {
    /// A tracker with the default parameters for frames of `width × height` pixels.
    ///
    /// # Errors
    /// A frame size the core tracker cannot take (zero, a side above 65 535 px), or no memory.
    pub fn new(width: usize, height: usize) -> Result<Self> {
        Self::with_params(&TldParams::default(), width, height)
    }

    /// A tracker with `params` for frames of `width × height` pixels.
    ///
    /// # Errors
    /// Parameters out of range, a frame size the core cannot take, or no memory.
    pub fn with_params(params: &TldParams, width: usize, height: usize) -> Result<Self> {
        let what = format!("TLD for {width}x{height} frames");
        let len = workspace_len(params, width, height).map_err(|e| anyhow!("{what}: {e}"))?;
        let tld = OwnedWorkspace::new(len, &what, |ws| Tld::new(params, width, height, ws))?;
        Ok(Self { tld })
    }
}

impl Tracker for TldTracker {
    fn name(&self) -> &str {
        "tld"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        self.tld
            .get()
            .init(&frame.gray(), bbox)
            .map_err(|e| anyhow!("TLD init with box {bbox:?}: {e}"))
    }

    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let tld = self.tld.get();
        let out = tld
            .update(&frame.gray())
            .map_err(|e| anyhow!("TLD update: {e}"))?;
        let detections = (0..out.detections as usize)
            .filter_map(|i| tld.detection(i).map(|(r, _)| r.to_f32()))
            .collect();
        Ok(TrackOutput {
            bbox: out.bbox,
            confidence: out.confidence,
            detections,
        })
    }
}
