//! Device images and moving pixels between them and the host.
//!
//! A [`DeviceImage`] owns one OpenCL buffer of `width × height` packed elements (row pitch =
//! width). Uploads copy from strided core views (`clEnqueueWriteBufferRect` when the view has
//! gaps between rows) and block until the source may be reused; downloads map the buffer for
//! reading and copy row by row into the destination view, leaving its row gaps untouched.
//!
//! Zero copy: [`Context::alloc_mapped`] allocates with `CL_MEM_ALLOC_HOST_PTR`, which on
//! devices that share memory with the host ([`crate::DeviceInfo::unified_memory`]: integrated
//! GPUs such as Mali, Adreno and Tegra, and CPU devices such as PoCL) places the buffer in
//! host-visible memory. [`Context::map`] then hands out that memory itself as an image view —
//! the host writes the input and reads the result in place, and no copy is made in either
//! direction. On a discrete GPU the same calls still work; the runtime copies behind the map.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr;

use mvision_core::{ImageView, ImageViewMut, Pixel};
use mvision_kernels::plan::{image_len, same_size, Img};
use opencl3::error_codes::CL_INVALID_VALUE;
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_map_flags, cl_mem, cl_mem_flags, CL_BLOCKING};

use crate::context::Context;
use crate::error::{Error, Result};

/// A `width × height` single-channel image in device memory (packed rows).
///
/// Created by [`Context::alloc`] or [`Context::alloc_mapped`] and usable only with that
/// context; operations given an image of another context return
/// `Error::Invalid(InvalidArgument)`. Dropping it releases the buffer once every enqueued
/// operation that uses it has finished.
#[derive(Debug)]
pub struct DeviceImage<T: Pixel> {
    buffer: Buffer<T>,
    width: usize,
    height: usize,
    host_mapped: bool,
    context_id: u64,
}

impl<T: Pixel> DeviceImage<T> {
    /// Whether the image was allocated in host-visible memory ([`Context::alloc_mapped`]).
    pub fn is_host_mapped(&self) -> bool {
        self.host_mapped
    }

    /// The image as the plans of `mvision_kernels` see it.
    pub(crate) fn plan_img(&self) -> Img<cl_mem> {
        Img {
            buf: self.buffer.get(),
            width: self.width,
            height: self.height,
            context: self.context_id,
        }
    }

    fn bytes(&self) -> usize {
        self.len() * size_of::<T>()
    }
}

impl Context {
    /// Allocates an uninitialised `width × height` device image.
    ///
    /// Errors: `Invalid(ZeroSize)` for a zero dimension; `Invalid(Overflow)` when
    /// `width · height` does not fit `i32` (the kernels index with `int`);
    /// [`Error::OutOfDeviceMemory`] beyond the device's largest allocation or when it is full.
    pub fn alloc<T: Pixel>(&self, width: usize, height: usize) -> Result<DeviceImage<T>> {
        self.allocate(width, height, CL_MEM_READ_WRITE, false)
    }

    /// Allocates a `width × height` image in host-visible memory (`CL_MEM_ALLOC_HOST_PTR`) for
    /// zero-copy access through [`Context::map`]; see the module docs for when that avoids
    /// copies. Errors: as [`Context::alloc`].
    pub fn alloc_mapped<T: Pixel>(&self, width: usize, height: usize) -> Result<DeviceImage<T>> {
        self.allocate(
            width,
            height,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            true,
        )
    }

    fn allocate<T: Pixel>(
        &self,
        width: usize,
        height: usize,
        flags: cl_mem_flags,
        host_mapped: bool,
    ) -> Result<DeviceImage<T>> {
        let len = image_len(width, height)?;
        if (len * size_of::<T>()) as u64 > self.info().max_alloc_bytes {
            return Err(Error::OutOfDeviceMemory);
        }
        // SAFETY: no host pointer is passed (null with neither USE_ nor COPY_HOST_PTR set);
        // `len` elements of a plain-data pixel type.
        let buffer = unsafe { Buffer::<T>::create(self.cl_context(), flags, len, ptr::null_mut()) }
            .map_err(Error::cl("clCreateBuffer"))?;
        Ok(DeviceImage {
            buffer,
            width,
            height,
            host_mapped,
            context_id: self.planner().context(),
        })
    }

    /// Checks that `image` belongs to this context.
    fn own<T: Pixel>(&self, image: &DeviceImage<T>) -> Result<()> {
        Ok(self.planner().owns(image.context_id)?)
    }

    /// Copies the host view `src` into `dst` and returns when `src` may be reused.
    ///
    /// Errors: `Invalid(SizeMismatch)` unless both have one size; [`Error::Device`].
    pub fn upload<T: Pixel>(&self, src: &ImageView<'_, T>, dst: &mut DeviceImage<T>) -> Result<()> {
        self.own(dst)?;
        same_size(src.size(), dst.size())?;
        let (w, h) = src.size();
        let data = src.as_slice();
        let blocked = if src.stride() == w {
            // SAFETY: a blocking write of exactly the image's `w·h` packed elements, all of
            // which `data` holds (a packed view's slice is `w·h` long).
            unsafe {
                self.queue().enqueue_write_buffer(
                    &mut dst.buffer,
                    CL_BLOCKING,
                    0,
                    &data[..w * h],
                    &[],
                )
            }
        } else {
            let sz = size_of::<T>();
            let origin = [0usize; 3];
            let region = [w * sz, h, 1];
            // SAFETY: a blocking rectangular write reading `h` rows of `w·sz` bytes, `stride·sz`
            // bytes apart, from `data`, which the view guarantees holds `stride·(h−1) + w`
            // elements; the destination is the buffer's packed `w × h` elements.
            unsafe {
                self.queue().enqueue_write_buffer_rect(
                    &mut dst.buffer,
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    w * sz,
                    0,
                    src.stride() * sz,
                    0,
                    data.as_ptr() as *mut c_void,
                    &[],
                )
            }
        };
        blocked.map(drop).map_err(Error::cl("clEnqueueWriteBuffer"))
    }

    /// Waits for the queue and copies `src` into the host view `dst` (row gaps untouched).
    ///
    /// Errors: `Invalid(SizeMismatch)` unless both have one size; [`Error::Device`].
    pub fn download<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut ImageViewMut<'_, T>,
    ) -> Result<()> {
        self.own(src)?;
        same_size(src.size(), dst.size())?;
        let w = src.width;
        match self.map_raw(&src.buffer, src.len(), CL_MAP_READ)? {
            Some(p) => {
                // SAFETY: a completed blocking map makes the buffer's `len` elements readable at
                // `p` (aligned for T, checked by map_raw) until the unmap below.
                let pixels = unsafe { std::slice::from_raw_parts(p as *const T, src.len()) };
                for (y, row) in pixels.chunks_exact(w).enumerate() {
                    dst.row_mut(y).copy_from_slice(row);
                }
                self.unmap_raw(&src.buffer, p)
            }
            None => {
                // The runtime mapped to a pointer not aligned for T: read into aligned memory.
                let mut pixels = vec![T::default(); src.len()];
                // SAFETY: a blocking read of the buffer's `len` elements into as many.
                unsafe {
                    self.queue()
                        .enqueue_read_buffer(&src.buffer, CL_BLOCKING, 0, &mut pixels, &[])
                }
                .map_err(Error::cl("clEnqueueReadBuffer"))?;
                for (y, row) in pixels.chunks_exact(w).enumerate() {
                    dst.row_mut(y).copy_from_slice(row);
                }
                Ok(())
            }
        }
    }

    /// Enqueues a device-to-device copy of `src` into `dst`.
    ///
    /// Errors: `Invalid(SizeMismatch)` unless both have one size; [`Error::Device`].
    pub fn copy<T: Pixel>(&self, src: &DeviceImage<T>, dst: &mut DeviceImage<T>) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        same_size(src.size(), dst.size())?;
        // SAFETY: both buffers hold `bytes` bytes; they are distinct (one is borrowed mutably).
        unsafe {
            self.queue()
                .enqueue_copy_buffer(&src.buffer, &mut dst.buffer, 0, 0, src.bytes(), &[])
        }
        .map(drop)
        .map_err(Error::cl("clEnqueueCopyBuffer"))
    }

    /// Waits for the queue and maps `image` into host memory for reading and writing. While the
    /// returned [`MappedImage`] lives the image is borrowed, so no operation can use it; dropping
    /// it (or [`MappedImage::unmap`]) hands the memory back to the device. With an image from
    /// [`Context::alloc_mapped`] on a unified-memory device this is zero-copy.
    ///
    /// Errors: [`Error::Device`]; `Device { code: CL_INVALID_VALUE }` if the runtime maps to a
    /// pointer not aligned for `T`.
    pub fn map<'a, T: Pixel>(
        &'a self,
        image: &'a mut DeviceImage<T>,
    ) -> Result<MappedImage<'a, T>> {
        self.own(image)?;
        let p = self
            .map_raw(&image.buffer, image.len(), CL_MAP_READ | CL_MAP_WRITE)?
            .ok_or(Error::Device {
                call: "clEnqueueMapBuffer (pointer not aligned for the pixel type)",
                code: CL_INVALID_VALUE,
            })?;
        Ok(MappedImage {
            context: self,
            image,
            ptr: p,
            _pixels: PhantomData,
        })
    }

    /// Blocking map of a whole buffer; `None` (already unmapped) if the pointer is misaligned.
    fn map_raw<T: Pixel>(
        &self,
        buffer: &Buffer<T>,
        len: usize,
        flags: cl_map_flags,
    ) -> Result<Option<*mut T>> {
        let mut p: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the buffer's whole `len·size_of::<T>()` bytes; on success
        // `p` points at host-accessible memory of that size until unmapped.
        unsafe {
            self.queue().enqueue_map_buffer(
                buffer,
                CL_BLOCKING,
                flags,
                0,
                len * size_of::<T>(),
                &mut p,
                &[],
            )
        }
        .map_err(Error::cl("clEnqueueMapBuffer"))?;
        let p = p as *mut T;
        if p.is_null() || !(p as usize).is_multiple_of(align_of::<T>()) {
            self.unmap_raw(buffer, p)?;
            return Ok(None);
        }
        Ok(Some(p))
    }

    fn unmap_raw<T: Pixel>(&self, buffer: &Buffer<T>, p: *mut T) -> Result<()> {
        // SAFETY: `p` is the pointer the map of this buffer returned, not used after this.
        unsafe {
            self.queue()
                .enqueue_unmap_mem_object(buffer.get(), p as *mut c_void, &[])
        }
        .map(drop)
        .map_err(Error::cl("clEnqueueUnmapMemObject"))
    }
}

/// A device image mapped into host memory by [`Context::map`]: its pixels as packed host views.
/// Unmapped when dropped or by [`MappedImage::unmap`], which reports errors.
pub struct MappedImage<'a, T: Pixel> {
    context: &'a Context,
    image: &'a mut DeviceImage<T>,
    ptr: *mut T,
    _pixels: PhantomData<&'a mut [T]>,
}

// `width`, `height`, `size`, `len`, `is_empty`, `view` and `view_mut`, as in the other driver.
mvision_kernels::device_image_accessors!(DeviceImage, MappedImage);

impl<T: Pixel> MappedImage<'_, T> {
    /// The pixels, row-major and packed (`width · height` elements).
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the map (blocking, read+write) made `len` aligned elements accessible at
        // `ptr` until unmap, which needs `self` by value or drop; `&self` borrows them.
        unsafe { std::slice::from_raw_parts(self.ptr, self.image.len()) }
    }

    /// The pixels, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as `as_slice`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.image.len()) }
    }

    /// Hands the memory back to the device (operations enqueued afterwards see the writes).
    ///
    /// Errors: [`Error::Device`] if the unmap cannot be enqueued.
    pub fn unmap(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        this.context.unmap_raw(&this.image.buffer, this.ptr)
    }
}

impl<T: Pixel> Drop for MappedImage<'_, T> {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; `unmap` reports them.
        let _ = self.context.unmap_raw(&self.image.buffer, self.ptr);
    }
}
