//! # mvision-cuda
//!
//! The CUDA backend of libmvision: the kernels of `mvision-kernels`, compiled at run time with
//! NVRTC for the GPU present, run on one stream per [`Context`], with results identical to the
//! CPU reference of `mvision-core` (bit-exact for integer outputs, within 1e-5 relative for
//! `f32`).
//!
//! Layers, bottom up:
//! * [`loader`]: finds libcuda and NVRTC at run time. A machine without them gets
//!   [`Error::Unavailable`] from every entry point, never a panic or an abort, so one binary
//!   serves machines with and without a GPU.
//! * [`nvrtc`]: compiles a kernel set for a target architecture. It needs NVRTC only (no driver,
//!   no GPU), which is how CI checks every program for Jetson Orin (`sm_87`) and H100/H200
//!   (`sm_90`).
//! * [`devices`] / [`DeviceInfo`]: enumeration, for `mvision info` and for launch limits.
//! * [`Context`]: one device, one stream, a cache of compiled programs keyed by
//!   `(KernelSet, Tile)`, and [`DeviceImage`]s in device memory or in mapped (zero-copy) host
//!   memory. Its operations mirror `mvision-core` and the OpenCL driver (`kernels/SPEC.md`):
//!   validated exactly like the core (same [`mvision_core::Error`] in [`Error::Invalid`]), then
//!   enqueued; [`Context::download`], [`Context::map`] and [`Context::sync`] wait. Their
//!   checks, argument lists and launch geometry are `mvision_kernels::plan`'s, shared with the
//!   OpenCL driver; this crate binds each planned launch to a CUDA function and launches it.
//!
//! ```no_run
//! use mvision_core::{Border, ImageView, ImageViewMut};
//! use mvision_cuda::Context;
//!
//! let ctx = Context::from_env()?; // MVISION_CUDA_DEVICE=1, … (default: device 0)
//! let pixels = vec![0u8; 640 * 480];
//! let mut src = ctx.alloc::<u8>(640, 480)?;
//! let mut dst = ctx.alloc::<u8>(640, 480)?;
//! ctx.upload(&ImageView::packed(&pixels, 640, 480)?, &mut src)?;
//! ctx.box_blur_u8(&src, &mut dst, 5, Border::Reflect101)?;
//! let mut out = vec![0u8; 640 * 480];
//! ctx.download(&dst, &mut ImageViewMut::packed(&mut out, 640, 480)?)?;
//! # Ok::<(), mvision_cuda::Error>(())
//! ```
//!
//! ## Which CUDA
//! `cudarc` is built against the CUDA 11.4 API (`cuda-11040`), the oldest it offers: JetPack 5
//! ships CUDA 11.4, JetPack 6 CUDA 12.2, and the data-centre machines run driver 580 with
//! toolkit 13. The driver API is backward compatible — a newer libcuda exports every entry point
//! of older versions — so bindings for 11.4 work on all three, while bindings for 12.x would
//! call symbols a JetPack 5 driver lacks. Nothing here needs a newer API.
//!
//! Both libraries are opened with `dlopen` (`dynamic-loading`), trying the names of
//! `cudarc::get_lib_name_candidates`: `libcuda.so`, `libcuda.so.1`, ... for the driver and
//! `libnvrtc.so`, `libnvrtc.so.11`, `libnvrtc.so.12`, ... for NVRTC. CUDA 13's
//! `libnvrtc.so.13` is not among them (the list is generated for the 11.4 API level), but its
//! unversioned `libnvrtc.so` is: a CUDA 13 toolkit installs it in `/usr/local/cuda/lib64`, so
//! NVRTC 13 is found once that folder is on `LD_LIBRARY_PATH` (as the GPU runner sets it). The
//! `nvidia-cuda-nvrtc-cu12` wheel, used by CI, ships `libnvrtc.so.12`.
//!
//! ## Zero-copy images
//! [`Context::alloc_mapped`] allocates page-locked host memory mapped into the device address
//! space (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`). On Jetson, host and GPU share
//! DRAM and pinned memory is cache-coherent (I/O coherence on Xavier and Orin), so kernels and
//! the CPU work on one buffer with no copy. Managed memory (`cuMemAllocManaged`, which `cudarc`
//! also offers) was not chosen: Jetson reports no concurrent managed access, so the CPU touching
//! any managed buffer while any kernel runs faults, a rule a caller of a vision library cannot
//! be expected to keep.
#![deny(missing_docs)]

mod context;
mod device;
mod error;
mod image;
pub mod loader;
pub mod nvrtc;
mod ops;

pub use context::{Context, DEVICE_ENV};
pub use device::{devices, DeviceInfo};
pub use error::{Error, Result};
pub use image::{DeviceImage, MappedImage};
pub use mvision_kernels::{KernelSet, Tile, Variant};
