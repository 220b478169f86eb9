//! Adapter from the core's KCF tracker ([`mvision_core::kcf::Kcf`]) to [`Tracker`]: as
//! [`crate::tld`], the core tracker lives in one heap block owned by the adapter, allocated once
//! at creation, held as a raw pointer (the tracker borrows it for the adapter's life) and freed
//! after the tracker in `drop`. Colour frames are passed as packed RGB.
#![allow(unsafe_code)]

use anyhow::{anyhow, Context, Result};
use mvision_core::kcf::{workspace_len, Frame as KcfFrame, Kcf, KcfParams};
use mvision_core::Rect;

use crate::{Frame, TrackOutput, Tracker};

/// KCF (Henriques et al., TPAMI 2015; FHOG + gray, see [`KcfParams`]) as a [`Tracker`].
pub struct KcfTracker {
    /// The core tracker, borrowing `workspace` for `'static` (see [`KcfTracker::new`]); always
    /// `Some` until `drop`, which drops it before the workspace.
    kcf: Option<Kcf<'static>>,
    /// The workspace block, from `Box::into_raw`; freed in `drop`.
    workspace: *mut [u8],
}

impl std::fmt::Debug for KcfTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KcfTracker")
            .field("kcf", &self.kcf)
            .finish()
    }
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
        let len = workspace_len(params, width, height)
            .map_err(|e| anyhow!("KCF for {width}x{height} frames: {e}"))?;
        let mut block = Vec::new();
        block
            .try_reserve_exact(len)
            .with_context(|| format!("KCF workspace of {len} bytes"))?;
        block.resize(len, 0u8);
        let workspace = Box::into_raw(block.into_boxed_slice());
        // SAFETY: `workspace` comes from `Box::into_raw` and is only freed in `drop`, after the
        // tracker borrowing it has been dropped; nothing else accesses the block meanwhile.
        let slice: &'static mut [u8] = unsafe { &mut *workspace };
        match Kcf::new(params, width, height, slice) {
            Ok(kcf) => Ok(Self {
                kcf: Some(kcf),
                workspace,
            }),
            Err(e) => {
                // SAFETY: as above; the failed `Kcf::new` kept no borrow.
                drop(unsafe { Box::from_raw(workspace) });
                Err(anyhow!("KCF for {width}x{height} frames: {e}"))
            }
        }
    }

    fn kcf(&mut self) -> &mut Kcf<'static> {
        self.kcf.as_mut().expect("the tracker exists until drop")
    }
}

impl Drop for KcfTracker {
    fn drop(&mut self) {
        // The tracker (the borrow of the block) ends here, before the block is freed.
        self.kcf = None;
        // SAFETY: from `Box::into_raw` in `new`; the only borrow (the tracker) is gone.
        drop(unsafe { Box::from_raw(self.workspace) });
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

impl Tracker for KcfTracker {
    fn name(&self) -> &str {
        "kcf"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        let f = rgb(frame)?;
        self.kcf()
            .init(&f, bbox.to_f32())
            .map_err(|e| anyhow!("KCF init with box {bbox:?}: {e}"))
    }

    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let f = rgb(frame)?;
        let out = self
            .kcf()
            .update(&f)
            .map_err(|e| anyhow!("KCF update: {e}"))?;
        Ok(TrackOutput {
            bbox: out.bbox,
            // The peak-to-sidelobe ratio (unbounded; about 10–80 on target), 0 when lost.
            confidence: if out.bbox.is_some() { out.psr } else { 0.0 },
            detections: Vec::new(),
        })
    }
}
