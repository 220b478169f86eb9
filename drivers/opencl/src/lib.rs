//! # mvision-opencl
//!
//! The OpenCL backend of libmvision: the filters, integral images, pyramid and resize of
//! `mvision-core`, run on any OpenCL 1.2+ device with the portable kernels of
//! `mvision-kernels`, reproducing the CPU reference bit for bit on integer outputs and to 1e-5
//! relative on `f32` (float sums keep the CPU's order and are not contracted into FMAs).
//!
//! Layers, bottom up:
//! * [`device`]: discovery ([`devices`], [`DeviceInfo`]). `libOpenCL.so.1` is loaded at run
//!   time (`opencl3`'s `dynamic` feature), so a machine without it gets
//!   [`Error::Unavailable`], never a link failure, panic or abort.
//! * [`Context`]: one device, one in-order queue, a program cache keyed by
//!   `(KernelSet, Tile)` filled at first use; build failures carry the compiler log
//!   ([`Error::KernelBuild`]).
//! * [`DeviceImage`]: packed device buffers; upload and download from strided core views,
//!   device-to-device copy, and zero-copy host access ([`Context::alloc_mapped`],
//!   [`Context::map`]) on unified-memory devices.
//! * Operations ([`Context::filter2d_u8`] and the rest): validated exactly like the core (same
//!   [`mvision_core::Error`] in [`Error::Invalid`]) before anything is enqueued, then enqueued
//!   asynchronously; [`Context::download`], [`Context::map`] and [`Context::sync`] wait. Their
//!   checks, argument lists and launch geometry are `mvision_kernels::plan`'s, shared with the
//!   CUDA driver; this crate binds each planned launch to an OpenCL kernel and enqueues it.
//!
//! ```no_run
//! use mvision_core::{Border, ImageView, ImageViewMut};
//! use mvision_opencl::{Context, Variant};
//!
//! let ctx = Context::from_env()?; // MVISION_OPENCL_DEVICE=portable, =1, … (default: device 0)
//! let pixels = vec![0u8; 640 * 480];
//! let mut src = ctx.alloc::<u8>(640, 480)?;
//! let mut dst = ctx.alloc::<u8>(640, 480)?;
//! ctx.upload(&ImageView::packed(&pixels, 640, 480)?, &mut src)?;
//! ctx.box_blur_u8(&src, &mut dst, 5, Border::Reflect101)?;
//! let mut out = vec![0u8; 640 * 480];
//! ctx.download(&dst, &mut ImageViewMut::packed(&mut out, 640, 480)?)?;
//! # Ok::<(), mvision_opencl::Error>(())
//! ```
#![deny(missing_docs)]

mod context;
pub mod device;
mod error;
mod image;
mod ops;

pub use context::{Context, DEVICE_ENV, NV_MAX_REGISTERS};
pub use device::{devices, DeviceInfo, DeviceKind};
pub use error::{Error, Result};
pub use image::{DeviceImage, MappedImage};
pub use mvision_kernels::{KernelSet, Tile, Variant};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Context>();
        send_sync::<DeviceImage<u8>>();
        send_sync::<DeviceImage<f32>>();
        send_sync::<Error>();
        assert_eq!(Variant::default(), Variant::Tiled { w: 16, h: 16 });
    }
}
