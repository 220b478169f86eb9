//! OpenCL backend of libmvision.
//!
//! Not built out yet: the GPU-driver work loads OpenCL through `opencl3` (dynamic ICD loading),
//! compiles the kernels of `mvision-kernels` per context and runs them against the CPU reference
//! in `mvision-core`. Until then the C API reports `MV_BACKEND_OPENCL` as unavailable.
#![deny(missing_docs)]
