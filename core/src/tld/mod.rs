//! TLD (Tracking-Learning-Detection) building blocks, after OpenTLD (Kalal et al.) and seeds 000
//! and 003: the scanning grid, the detection cascade (variance filter, fern ensemble,
//! nearest-neighbour classifier on normalised patches) and the Median-Flow tracker (pyramidal
//! Lucas-Kanade, [`flow`]). Layouts are GPU-friendly (structure-of-arrays grids, fern codes as
//! integers, fixed summation orders) because a later stage runs the cascade on the GPU and must
//! match this code exactly. Everything works in caller-provided storage; nothing allocates.
//!
//! Not here yet (issue 5 continues): P-N learning with warped positives, the integrator, and
//! the tracker object that ties them together.

pub mod fern;
pub mod flow;
pub mod grid;
pub mod nn;
pub mod patch;
pub mod variance;
