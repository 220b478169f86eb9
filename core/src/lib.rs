//! # mvision-core
//!
//! The allocation-free, `no_std` core of libmvision: the CPU reference implementation that every
//! GPU kernel is tested against, and the code that runs on boards without a GPU (down to
//! Cortex-M class microcontrollers).
//!
//! Layers, bottom up:
//! * [`pixel`], [`image`]: pixel types and strided image views over caller buffers, validated once
//!   at construction.
//! * [`cpu`]: run-time instruction-set levels (x86-64-v3/v4) for the hot loops, detected
//!   without `std`, with a process-wide cap.
//! * [`arena`]: typed slices carved from one caller workspace (how stateful objects live in
//!   caller memory).
//! * [`geometry`]: integer and float rectangles, intersection, IoU, clamping.
//! * [`border`]: how filters read outside the image.
//! * [`filter`]: dense and separable convolution (fixed-point for `u8`, `f32`), Gaussian and box
//!   blur, Sobel.
//! * [`rng`]: SplitMix64, the one deterministic generator (tracker, generated test inputs).
//! * [`integral`], [`pyramid`], [`resize`]: summed-area tables with O(1) window statistics,
//!   Gaussian pyramid levels, bilinear resize.
//! * [`edgeboxes`]: EdgeBoxes object proposals (Zitnick & Dollár) on a Sobel edge map, with
//!   per-frame box constraints and border background suppression (KCFDP's scale and aspect
//!   search).
//! * [`tld`], [`kcf`]: trackers (TLD; KCF, the kernelised correlation filter, with its FFT and
//!   FHOG features), each living in one caller workspace.
//! * [`nn`]: CNN building blocks: NCHW shapes, SGEMM (portable, packed and cache-blocked; with
//!   the `gemm-crate` feature, large products go to the `gemm` crate), integer GEMM, and conv2d
//!   by direct, im2col, MEC and MFCA with their workspace formulas and a method selector; the
//!   layer operators (activations, conv with fused bias and activation, ONNX pooling, fully
//!   connected, softmax, reduce-mean, add, concat, flatten, pad, batch norm and its folding).
//!
//! Nothing here allocates: functions that need working memory take a `&mut [T]` scratch slice and
//! publish the length they need (`*_scratch_len`). Errors are values ([`Error`]), never panics,
//! and are detected before any output is written.
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod arena;
pub mod border;
pub mod cpu;
pub mod edgeboxes;
pub mod error;
pub mod filter;
pub mod geometry;
pub mod image;
pub mod integral;
pub mod kcf;
pub mod nn;
pub mod pixel;
pub mod pyramid;
pub mod resize;
pub mod rng;
pub mod tld;

pub use border::Border;
pub use error::{Error, Result};
pub use geometry::{Rect, RectF};
pub use image::{ImageView, ImageViewMut};
pub use pixel::{Pixel, PixelFormat};

/// The crate version, `MAJOR.MINOR.PATCH`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
