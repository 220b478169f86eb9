//! The OpenCL backend against the CPU reference, on whatever device `MVISION_OPENCL_DEVICE`
//! selects (PoCL in CI). One test binary, so every test shares one context and each program is
//! compiled once.

mod common;
mod filter;
mod imgproc;
mod memory;
