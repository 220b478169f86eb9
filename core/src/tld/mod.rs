//! TLD (Tracking-Learning-Detection) after OpenTLD (Kalal et al.) and seeds 000 and 003: the
//! scanning grid ([`grid`]), the detection cascade (variance filter [`variance`], fern ensemble
//! [`fern`], nearest-neighbour classifier on normalised patches [`nn`], [`patch`]), the
//! Median-Flow tracker ([`flow`]), and the tracker object [`Tld`] that ties them together with
//! P-N learning and the integrator ([`tracker`]).
//!
//! Layouts are GPU-friendly (structure-of-arrays grids, fern codes as integers, fixed summation
//! orders) because a later stage runs the cascade on the GPU and must match this code exactly.
//! Everything works in caller-provided storage; nothing allocates.

mod cluster;
pub mod fern;
pub mod flow;
pub mod grid;
mod learn;
pub mod nn;
pub mod patch;
pub mod tracker;
pub mod variance;
mod warp;

pub use tracker::{workspace_len, Tld, TldOutput, TldParams};
