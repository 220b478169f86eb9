//! Kernel sources of libmvision (`opencl/*.cl`, `cuda/*.cu`), embedded into the binary with
//! `include_str!` so no file is looked up at run time.
//!
//! The spine carries no kernels yet: the GPU-driver work adds them here, one file per kernel
//! family, each exposed as a `&'static str` constant next to its kernel id.
#![no_std]
#![deny(missing_docs)]
