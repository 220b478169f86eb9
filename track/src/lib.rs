//! The std-side tracking toolkit of libmvision: everything around a tracker that a benchmark or a
//! demo needs, so that each tracker (TLD, KCF) plugs in by implementing one trait.
//!
//! The layers, bottom up:
//!
//! * [`frame`]: a decoded frame, as packed 8-bit gray (what trackers read) and packed RGB (what
//!   drawing writes on), and the one Rec. 709 luma rule of the SDK's tools;
//! * [`tracker`]: the [`Tracker`] trait — `init(frame, box)`, then `update(frame)` per frame,
//!   where "target absent" is a normal result, not an error;
//! * [`sequence`] and [`synthetic`]: the [`Sequence`] abstraction over OTB folders, plain image
//!   folders and a generated sequence with exact ground truth; frames are produced one at a time;
//! * [`run`]: one tracker over one sequence, timed ([`run_sequence`]);
//! * [`metrics`]: the OTB success and precision measures, exactly as `../shared/data/README.md`
//!   defines them;
//! * [`output`], [`draw`], [`plot`]: OTB result files and JSON summaries, annotated frames (PNG
//!   and GIF), and OTB precision/success plots (PNG, with an embedded font);
//! * [`tld`], [`kcf`]: adapters from the core's trackers (TLD, KCF, KCFDP) to [`Tracker`], each
//!   owning its core tracker's workspace (`workspace`, the crate's only `unsafe`);
//! * [`registry`]: trackers by name, for the command-line tool; [`baseline`] holds the
//!   `static` lower-bound tracker.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod baseline;
pub mod draw;
pub mod frame;
pub mod kcf;
pub mod metrics;
pub mod output;
pub mod plot;
pub mod registry;
pub mod run;
pub mod sequence;
pub mod synthetic;
pub mod tld;
pub mod tracker;
mod workspace;

pub use frame::Frame;
pub use metrics::Scores;
pub use mvision_core::{Rect, RectF};
pub use registry::{make_tracker, tracker_names};
pub use run::{run_sequence, run_sequence_with, RunOptions, RunResult};
pub use sequence::{open_sequence, FolderSequence, Sequence};
pub use synthetic::{SyntheticParams, SyntheticSequence};
pub use tracker::{TrackOutput, Tracker};
