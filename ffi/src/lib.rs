//! # mvision-ffi — the C ABI of libmvision
//!
//! Builds `libmvision.a` and `libmvision.so`; `include/mvision.h` is generated from this crate by
//! a pinned cbindgen (see `tests/header.rs`). Conventions, as in rustls-ffi:
//! * fallible functions return an [`mv_status`]; outputs come last and are written only when
//!   the call returns `MV_STATUS_OK`;
//! * every pointer is checked; NULL gives `MV_STATUS_NULL_POINTER`;
//! * no panic crosses the boundary: a panic becomes `MV_STATUS_PANIC`;
//! * objects are freed exactly once by their `_destroy`, which accepts NULL.
//!
//! One module per C "class": [`status`], [`image`], [`geometry`], [`filter`], [`integral`],
//! [`resample`], [`cpu`] (instruction-set levels), [`context`], [`buffer`] (device-resident images and `mv_submit_*`), [`tld`]
//! (the TLD tracker), [`kcf`] (the KCF and KCFDP trackers), [`net`] (a CNN from a `.mvnn`
//! model file); [`mod@panic`] holds the boundary
//! guard, `tracker_handle` the trackers' handle-in-workspace layout.
#![deny(missing_docs)]
#![allow(non_camel_case_types)]

pub mod buffer;
pub mod context;
pub mod cpu;
pub mod filter;
pub mod geometry;
pub mod image;
pub mod integral;
pub mod kcf;
pub mod net;
pub mod panic;
pub mod resample;
pub mod status;
pub mod tld;
mod tracker_handle;
pub mod version;

pub use status::mv_status;
