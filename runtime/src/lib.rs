//! # mvision-runtime
//!
//! One API over the three backends. A [`Context`] owns the devices a caller asked for; an
//! [`Image`] lives on one backend (host memory for the CPU, a device buffer for OpenCL or
//! CUDA); operations in [`ops`] run where their images live. The CPU path is the reference
//! implementation of `mvision-core`; GPU results match it exactly for integer outputs and within
//! 1e-5 relative for `f32`.
//!
//! Choosing a backend per call is choosing where the images of that call live; images of one
//! call must share a backend and device ([`ErrorKind::BackendMismatch`] otherwise). Device
//! operations are asynchronous: [`Image::download`] and [`Context::sync`] wait for them.
#![deny(missing_docs)]

mod backend;
mod error;
mod image;
pub mod ops;

pub use backend::{available, devices, Backend, BackendSet, DeviceSummary};
pub use error::{Error, ErrorKind, Result};
pub use image::Image;
/// The dense-filter implementation on GPU backends (ignored on the CPU), the drivers' own.
pub use mvision_kernels::{
    ColsMode, DotMode, FilterTuning, IntegralScan, IntegralTuning, MmaMode, Variant,
};

use std::sync::Arc;

/// The devices a caller works with: the CPU always, plus one OpenCL and/or one CUDA device.
pub struct Context {
    backends: BackendSet,
    pub(crate) opencl: Option<Arc<mvision_opencl::Context>>,
    pub(crate) cuda: Option<Arc<mvision_cuda::Context>>,
}

impl Context {
    /// A context for `backends` (the CPU is always included), each GPU backend on the device
    /// its environment variable names (`MVISION_OPENCL_DEVICE`, `MVISION_CUDA_DEVICE`) or on
    /// device 0.
    ///
    /// Errors: [`ErrorKind::Unavailable`] if a requested backend has no usable device; driver
    /// errors from creating it.
    pub fn new(backends: BackendSet) -> Result<Self> {
        let opencl = if backends.contains(Backend::OpenCl) {
            Some(Arc::new(mvision_opencl::Context::from_env()?))
        } else {
            None
        };
        let cuda = if backends.contains(Backend::Cuda) {
            Some(Arc::new(mvision_cuda::Context::from_env()?))
        } else {
            None
        };
        Ok(Self {
            backends: backends.with(Backend::Cpu),
            opencl,
            cuda,
        })
    }

    /// A context with the CPU and device `index` of one GPU `backend` (for `Backend::Cpu`,
    /// `index` must be 0).
    ///
    /// Errors: [`ErrorKind::Unavailable`] if there is no such device; driver errors.
    pub fn with_device(backend: Backend, index: usize) -> Result<Self> {
        let mut ctx = Self::new(BackendSet::CPU)?;
        match backend {
            Backend::Cpu if index == 0 => {}
            Backend::Cpu => {
                return Err(Error::new(
                    ErrorKind::Unavailable,
                    "the CPU backend has one device",
                ))
            }
            Backend::OpenCl => ctx.opencl = Some(Arc::new(mvision_opencl::Context::new(index)?)),
            Backend::Cuda => ctx.cuda = Some(Arc::new(mvision_cuda::Context::new(index)?)),
        }
        ctx.backends = ctx.backends.with(backend);
        Ok(ctx)
    }

    /// The backends this context can run on.
    pub fn backends(&self) -> BackendSet {
        self.backends
    }

    /// The name of the device behind `backend`, or `None` if the context lacks it.
    pub fn device_name(&self, backend: Backend) -> Option<String> {
        match backend {
            Backend::Cpu => Some("host CPU".to_string()),
            Backend::OpenCl => self.opencl.as_ref().map(|c| c.info().name.clone()),
            Backend::Cuda => self.cuda.as_ref().map(|c| c.info().name.clone()),
        }
    }

    /// Waits until every operation submitted on this context's devices has finished.
    ///
    /// Errors: driver errors reported by the wait.
    pub fn sync(&self) -> Result<()> {
        if let Some(c) = &self.opencl {
            c.sync()?;
        }
        if let Some(c) = &self.cuda {
            c.sync()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The C API documents contexts and images as usable from any thread (one call at a time
    /// per image); that rests on these bounds.
    #[test]
    fn contexts_and_images_can_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<crate::Context>();
        send_sync::<crate::Image<u8>>();
        send_sync::<crate::Image<f32>>();
    }
}
