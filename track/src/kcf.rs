//! Adapters from the core's KCF and KCFDP trackers ([`mvision_core::kcf`]) to [`Tracker`]: as
//! [`crate::tld`], each core tracker lives in one heap block owned by the adapter
//! (`workspace`). Colour frames are passed as packed RGB.

use anyhow::{anyhow, Result};
use mvision_core::kcf::dp::workspace_len as kcfdp_workspace_len;
use mvision_core::kcf::{workspace_len, Frame as KcfFrame, Kcf, KcfDp, KcfDpParams, KcfParams};
use mvision_core::Rect;

use crate::workspace::OwnedWorkspace;
use crate::{Frame, TrackOutput, Tracker};

/// KCF (Henriques et al., TPAMI 2015; FHOG + gray, see [`KcfParams`]) as a [`Tracker`].
#[derive(Debug)]
pub struct KcfTracker {
    kcf: OwnedWorkspace<Kcf<'static>>,
}

impl KcfTracker {
    /// A tracker with the default parameters for frames of `width × height` pixels.
    ///
    /// # Errors
    /// A frame size the core tracker cannot take, or no memory.
    pub fn new(width: usize, height: usize) -> Result<Self> {
        Self::with_params(&KcfParams::default(), width, height)
    }

    /// A tracker with `params` for frames of `width × height` pixels.
    ///
    /// # Errors
    /// Parameters out of range, a frame size the core cannot take, or no memory.
    pub fn with_params(params: &KcfParams, width: usize, height: usize) -> Result<Self> {
        let what = format!("KCF for {width}x{height} frames");
        let len = workspace_len(params, width, height).map_err(|e| anyhow!("{what}: {e}"))?;
        let kcf = OwnedWorkspace::new(len, &what, |ws| Kcf::new(params, width, height, ws))?;
        Ok(Self { kcf })
    }
}

/// KCFDP (KCF + EdgeBoxes proposals for scale and aspect ratio, SEEDS.md 003, see
/// [`KcfDpParams`]) as a [`Tracker`].
#[derive(Debug)]
pub struct KcfDpTracker {
    kcfdp: OwnedWorkspace<KcfDp<'static>>,
}

impl KcfDpTracker {
    /// A tracker with the default parameters for frames of `width × height` pixels.
    ///
    /// # Errors
    /// A frame size the core tracker cannot take, or no memory.
    pub fn new(width: usize, height: usize) -> Result<Self> {
        Self::with_params(&KcfDpParams::default(), width, height)
    }

    /// A tracker with `params` for frames of `width × height` pixels.
    ///
    /// # Errors
    /// Parameters out of range, a frame size the core cannot take, or no memory.
    pub fn with_params(params: &KcfDpParams, width: usize, height: usize) -> Result<Self> {
        let what = format!("KCFDP for {width}x{height} frames");
        let len = kcfdp_workspace_len(params, width, height).map_err(|e| anyhow!("{what}: {e}"))?;
        let kcfdp = OwnedWorkspace::new(len, &what, |ws| KcfDp::new(params, width, height, ws))?;
        Ok(Self { kcfdp })
    }
}

fn rgb(frame: &Frame) -> Result<KcfFrame<'_>> {
    KcfFrame::rgb(
        frame.rgb_bytes(),
        frame.width(),
        frame.height(),
        3 * frame.width(),
    )
    .map_err(|e| anyhow!("KCF frame: {e}"))
}

/// The toolkit's output from KCF's: the confidence is the peak-to-sidelobe ratio (unbounded;
/// about 10–80 on target), 0 when lost.
fn output(out: mvision_core::kcf::KcfOutput) -> TrackOutput {
    TrackOutput {
        bbox: out.bbox,
        confidence: if out.bbox.is_some() { out.psr } else { 0.0 },
        detections: Vec::new(),
    }
}

impl Tracker for KcfTracker {
    fn name(&self) -> &str {
        "kcf"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        let f = rgb(frame)?;
        self.kcf
            .get()
            .init(&f, bbox.to_f32())
            .map_err(|e| anyhow!("KCF init with box {bbox:?}: {e}"))
    }

    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let f = rgb(frame)?;
        let out = self
            .kcf
            .get()
            .update(&f)
            .map_err(|e| anyhow!("KCF update: {e}"))?;
        Ok(output(out))
    }
}

impl Tracker for KcfDpTracker {
    fn name(&self) -> &str {
        "kcfdp"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        let f = rgb(frame)?;
        self.kcfdp
            .get()
            .init(&f, bbox.to_f32())
            .map_err(|e| anyhow!("KCFDP init with box {bbox:?}: {e}"))
    }

    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let f = rgb(frame)?;
        let out = self
            .kcfdp
            .get()
            .update(&f)
            .map_err(|e| anyhow!("KCFDP update: {e}"))?;
        Ok(output(out))
    }
}
