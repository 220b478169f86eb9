//! [`Image`]: a packed image resident on one backend.

use crate::{Backend, Context, Error, ErrorKind, Result};
use mvision_core::{ImageView, ImageViewMut, Pixel};
use std::sync::Arc;

/// Where an image's pixels live.
pub(crate) enum Store<T: Pixel> {
    /// Host memory, packed rows.
    Cpu(Vec<T>),
    /// An OpenCL buffer, with the context that owns its device.
    OpenCl(Arc<mvision_opencl::Context>, mvision_opencl::DeviceImage<T>),
    /// A CUDA allocation, with the context that owns its device.
    Cuda(Arc<mvision_cuda::Context>, mvision_cuda::DeviceImage<T>),
}

/// A `width × height` image resident on one backend. Create with [`Image::new`] or
/// [`Image::from_view`]; move pixels in and out with [`Image::upload`] / [`Image::download`].
pub struct Image<T: Pixel> {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) store: Store<T>,
}

fn unavailable(b: Backend) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!("the context was not created with the {} backend", b.name()),
    )
}

impl<T: Pixel> Image<T> {
    /// A zero-initialised (CPU) or uninitialised (GPU) image on `backend` of `ctx`.
    ///
    /// Errors: [`ErrorKind::Unavailable`] if `ctx` lacks the backend;
    /// `Invalid(ZeroSize | Overflow)` for bad sizes; driver allocation errors.
    pub fn new(ctx: &Context, backend: Backend, width: usize, height: usize) -> Result<Self> {
        Self::alloc(ctx, backend, width, height, false)
    }

    /// Allocates on `backend`: host memory for the CPU, device memory or (`mapped`)
    /// host-visible memory for a GPU.
    fn alloc(
        ctx: &Context,
        backend: Backend,
        width: usize,
        height: usize,
        mapped: bool,
    ) -> Result<Self> {
        mvision_core::image::required_len(width, height, width)?;
        let store = match backend {
            Backend::Cpu => {
                let mut v = Vec::new();
                v.try_reserve_exact(width * height).map_err(|_| {
                    Error::new(
                        ErrorKind::Invalid(mvision_core::Error::Overflow),
                        "host memory",
                    )
                })?;
                v.resize(width * height, T::default());
                Store::Cpu(v)
            }
            Backend::OpenCl => {
                let c = ctx.opencl.as_ref().ok_or_else(|| unavailable(backend))?;
                let img = if mapped {
                    c.alloc_mapped(width, height)?
                } else {
                    c.alloc(width, height)?
                };
                Store::OpenCl(c.clone(), img)
            }
            Backend::Cuda => {
                let c = ctx.cuda.as_ref().ok_or_else(|| unavailable(backend))?;
                let img = if mapped {
                    c.alloc_mapped(width, height)?
                } else {
                    c.alloc(width, height)?
                };
                Store::Cuda(c.clone(), img)
            }
        };
        Ok(Self {
            width,
            height,
            store,
        })
    }

    /// An image on `backend` holding a copy of `src`.
    ///
    /// Errors: as [`Image::new`] and [`Image::upload`].
    pub fn from_view(ctx: &Context, backend: Backend, src: &ImageView<'_, T>) -> Result<Self> {
        let mut img = Self::new(ctx, backend, src.width(), src.height())?;
        img.upload(src)?;
        Ok(img)
    }

    /// An image in host-visible memory that the device reads and writes in place: zero-copy on
    /// unified-memory devices (Jetson, Snapdragon, PoCL), pinned mapped host memory on discrete
    /// GPUs (every device access then crosses the bus). On the CPU, the same as [`Image::new`].
    /// Fill and read it with [`Image::with_host`].
    ///
    /// Errors: as [`Image::new`].
    pub fn new_mapped(
        ctx: &Context,
        backend: Backend,
        width: usize,
        height: usize,
    ) -> Result<Self> {
        Self::alloc(ctx, backend, width, height, true)
    }

    /// Runs `f` on the pixels (packed rows) in host memory, after pending device work on the
    /// image has finished: in place for CPU and mapped images, through a staged copy written
    /// back afterwards for other device images.
    ///
    /// Errors: driver errors of the map or the write-back.
    pub fn with_host<R>(&mut self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        match &mut self.store {
            Store::Cpu(v) => Ok(f(v)),
            Store::OpenCl(c, d) => {
                let mut m = c.map(d)?;
                let r = f(m.as_mut_slice());
                m.unmap()?;
                Ok(r)
            }
            Store::Cuda(c, d) => {
                let mut m = c.map(d)?;
                let r = f(m.as_mut_slice());
                m.unmap()?;
                Ok(r)
            }
        }
    }

    /// The backend the pixels live on.
    pub fn backend(&self) -> Backend {
        match self.store {
            Store::Cpu(_) => Backend::Cpu,
            Store::OpenCl(..) => Backend::OpenCl,
            Store::Cuda(..) => Backend::Cuda,
        }
    }

    /// `(width, height)` in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Copies `src` (same size) into the image.
    ///
    /// Errors: `Invalid(SizeMismatch)`; driver transfer errors.
    pub fn upload(&mut self, src: &ImageView<'_, T>) -> Result<()> {
        if src.size() != self.size() {
            return Err(mvision_core::Error::SizeMismatch.into());
        }
        match &mut self.store {
            Store::Cpu(v) => {
                for (y, row) in v.chunks_exact_mut(self.width).enumerate() {
                    row.copy_from_slice(src.row(y));
                }
                Ok(())
            }
            Store::OpenCl(c, d) => Ok(c.upload(src, d)?),
            Store::Cuda(c, d) => Ok(c.upload(src, d)?),
        }
    }

    /// Copies the image into `dst` (same size), waiting for pending device work.
    ///
    /// Errors: `Invalid(SizeMismatch)`; driver transfer errors.
    pub fn download(&self, dst: &mut ImageViewMut<'_, T>) -> Result<()> {
        if dst.size() != self.size() {
            return Err(mvision_core::Error::SizeMismatch.into());
        }
        match &self.store {
            Store::Cpu(v) => {
                for (y, row) in v.chunks_exact(self.width).enumerate() {
                    dst.row_mut(y).copy_from_slice(row);
                }
                Ok(())
            }
            Store::OpenCl(c, d) => Ok(c.download(d, dst)?),
            Store::Cuda(c, d) => Ok(c.download(d, dst)?),
        }
    }

    /// A host view of a CPU image (`None` for device images).
    pub fn host_view(&self) -> Option<ImageView<'_, T>> {
        match &self.store {
            Store::Cpu(v) => ImageView::packed(v, self.width, self.height).ok(),
            _ => None,
        }
    }
}
