//! Adapter from the core's TLD tracker ([`mvision_core::tld::Tld`]) to [`Tracker`]: the core
//! tracker lives in a caller workspace; here that workspace is one heap block owned by the
//! adapter, allocated once at creation. The only `unsafe` of this crate is here: the core
//! tracker borrows that block for as long as the adapter lives (a self-reference), so the block
//! is held as a raw pointer and freed after the tracker in `drop`.
#![allow(unsafe_code)]

use anyhow::{anyhow, Context, Result};
use mvision_core::tld::{workspace_len, Tld, TldParams};
use mvision_core::Rect;

use crate::{Frame, TrackOutput, Tracker};

/// TLD (Kalal et al., TPAMI 2012; OpenTLD's defaults, see [`TldParams`]) as a [`Tracker`].
pub struct TldTracker {
    /// The core tracker, borrowing `workspace` for `'static` (see [`TldTracker::new`]); always
    /// `Some` until `drop`, which drops it before the workspace.
    tld: Option<Tld<'static>>,
    /// The workspace block, from `Box::into_raw`; freed in `drop`.
    workspace: *mut [u8],
}

impl std::fmt::Debug for TldTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TldTracker")
            .field("tld", &self.tld)
            .finish()
    }
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
        let len = workspace_len(params, width, height)
            .map_err(|e| anyhow!("TLD for {width}x{height} frames: {e}"))?;
        let mut block = Vec::new();
        block
            .try_reserve_exact(len)
            .with_context(|| format!("TLD workspace of {len} bytes"))?;
        block.resize(len, 0u8);
        let workspace = Box::into_raw(block.into_boxed_slice());
        // SAFETY: `workspace` comes from `Box::into_raw` and is only freed in `drop`, after the
        // tracker borrowing it has been dropped; nothing else accesses the block meanwhile.
        let slice: &'static mut [u8] = unsafe { &mut *workspace };
        match Tld::new(params, width, height, slice) {
            Ok(tld) => Ok(Self {
                tld: Some(tld),
                workspace,
            }),
            Err(e) => {
                // SAFETY: as above; the failed `Tld::new` kept no borrow.
                drop(unsafe { Box::from_raw(workspace) });
                Err(anyhow!("TLD for {width}x{height} frames: {e}"))
            }
        }
    }

    fn tld(&mut self) -> &mut Tld<'static> {
        self.tld.as_mut().expect("the tracker exists until drop")
    }
}

impl Drop for TldTracker {
    fn drop(&mut self) {
        // The tracker (the borrow of the block) ends here, before the block is freed.
        self.tld = None;
        // SAFETY: from `Box::into_raw` in `new`; the only borrow (the tracker) is gone.
        drop(unsafe { Box::from_raw(self.workspace) });
    }
}

impl Tracker for TldTracker {
    fn name(&self) -> &str {
        "tld"
    }

    fn init(&mut self, frame: &Frame, bbox: Rect) -> Result<()> {
        self.tld()
            .init(&frame.gray(), bbox)
            .map_err(|e| anyhow!("TLD init with box {bbox:?}: {e}"))
    }

    fn update(&mut self, frame: &Frame) -> Result<TrackOutput> {
        let tld = self.tld();
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
