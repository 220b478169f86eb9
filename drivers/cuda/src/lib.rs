//! CUDA backend of libmvision.
//!
//! Not built out yet: the GPU-driver work loads the CUDA driver and NVRTC at run time through
//! `cudarc`, so one binary runs with or without a GPU. Until then the C API reports
//! `MV_BACKEND_CUDA` as unavailable.
#![deny(missing_docs)]
