//! Device images and moving pixels between them and the host.
//!
//! A [`DeviceImage`] holds `width × height` packed elements (row pitch = width, the contract's
//! layout) either in device memory (a [`CudaSlice`], `cuMemAllocAsync`) or in page-locked host
//! memory mapped into the device's address space ([`Context::alloc_mapped`]: `cuMemHostAlloc`
//! with `CU_MEMHOSTALLOC_DEVICEMAP`). Kernels see one device pointer either way. An image
//! remembers which [`Context`] made it: all work on it is ordered on that context's one stream,
//! and other contexts refuse it.
//!
//! Uploads from strided core views are one `cuMemcpy2DAsync` (one `cuMemcpyHtoDAsync` when the
//! view is packed) and return once the source may be reused; downloads copy into packed
//! staging and then row by row into the view, leaving its row gaps alone. [`Context::map`] gives
//! the CPU the pixels of a mapped image in place (zero copy), and a staged copy of a device
//! image, written back when the map ends.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUdevice_attribute, CUdeviceptr, CUmemorytype};
use cudarc::driver::{result, CudaSlice, CudaStream, DevicePtr, PinnedHostSlice};
use mvision_core::{Error as CoreError, ImageView, ImageViewMut, Pixel};
use mvision_kernels::plan::{image_len, same_size, Img};

use crate::context::Context;
use crate::error::{check, driver, Error, Result};

/// Where an image's bytes live (held for ownership: freed when the image is dropped).
#[derive(Debug)]
pub(crate) enum Storage {
    /// Device memory (never read: kernels use the image's pointer). Its drop frees it in
    /// stream order (`cuMemFreeAsync`), after the kernels queued before.
    Device(#[allow(dead_code)] CudaSlice<u8>),
    /// Page-locked host memory, mapped into the device address space, and the stream that may
    /// still be using it.
    Mapped(PinnedHostSlice<u8>, Arc<CudaStream>),
}

impl Drop for Storage {
    fn drop(&mut self) {
        // `cuMemFreeHost` is not stream-ordered: let queued kernels finish with the memory
        // first. A failure here is a failed kernel, which the next `sync` of the context reports.
        if let Storage::Mapped(_, stream) = self {
            let _ = stream.synchronize();
        }
    }
}

/// A packed `width × height` image of `T` owned by one [`Context`].
///
/// Created by [`Context::alloc`] or [`Context::alloc_mapped`]; operations given an image of
/// another context return `Error::Invalid(InvalidArgument)`. Dropping it frees the memory once
/// the work queued on it has finished; it may outlive its context.
#[derive(Debug)]
pub struct DeviceImage<T: Pixel> {
    storage: Storage,
    /// The device address of the first pixel (of either storage).
    pub(crate) ptr: CUdeviceptr,
    pub(crate) width: usize,
    pub(crate) height: usize,
    context_id: u64,
    _pixel: PhantomData<T>,
}

impl<T: Pixel> DeviceImage<T> {
    /// Whether the image lives in mapped host memory ([`Context::alloc_mapped`]).
    pub fn is_host_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(..))
    }

    /// The image as the plans of `mvision_kernels` see it.
    pub(crate) fn plan_img(&self) -> Img<CUdeviceptr> {
        Img {
            buf: self.ptr,
            width: self.width,
            height: self.height,
            context: self.context_id,
        }
    }

    /// Size in bytes.
    fn num_bytes(&self) -> usize {
        self.len() * T::FORMAT.bytes()
    }

    /// The pixels of a mapped image, packed (the caller has drained the stream).
    fn host_pixels(&self) -> Result<&[T]> {
        let Storage::Mapped(host, _) = &self.storage else {
            return Err(not_mapped());
        };
        let ptr = host.as_ptr().map_err(driver("cuEventSynchronize"))?;
        // SAFETY: the pinned allocation holds `num_bytes()` bytes, is page-aligned (so aligned
        // for every pixel type), every bit pattern is a valid `T` (plain integers and floats),
        // and the borrow of `self` keeps it alive and free of `&mut` aliases meanwhile.
        Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), self.len()) })
    }

    /// The writable pixels of a mapped image (the caller has drained the stream).
    fn host_pixels_mut(&mut self) -> Result<&mut [T]> {
        let len = self.len();
        let Storage::Mapped(host, _) = &mut self.storage else {
            return Err(not_mapped());
        };
        let ptr = host.as_mut_ptr().map_err(driver("cuEventSynchronize"))?;
        // SAFETY: as in `host_pixels`, and `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>(), len) })
    }
}

fn not_mapped() -> Error {
    Error::Invalid(CoreError::InvalidArgument)
}

/// Checks a requested image size ([`image_len`]: positive, fewer than 2³¹ elements, as the
/// kernels index with `int`) and returns it in bytes.
fn check_dims<T: Pixel>(width: usize, height: usize) -> core::result::Result<usize, CoreError> {
    image_len(width, height)?
        .checked_mul(T::FORMAT.bytes())
        .ok_or(CoreError::Overflow)
}

impl Context {
    /// Refuses images that another context allocated: their work is ordered on another stream
    /// (or lives on another device), so this one cannot use them safely.
    ///
    /// Errors: [`Error::Invalid`] (`InvalidArgument`).
    fn owns<T: Pixel>(&self, img: &DeviceImage<T>) -> Result<()> {
        Ok(self.planner().owns(img.context_id)?)
    }

    fn image<T: Pixel>(
        &self,
        storage: Storage,
        ptr: CUdeviceptr,
        w: usize,
        h: usize,
    ) -> DeviceImage<T> {
        DeviceImage {
            storage,
            ptr,
            width: w,
            height: h,
            context_id: self.planner().context(),
            _pixel: PhantomData,
        }
    }

    /// A zeroed `width × height` image in device memory.
    ///
    /// Errors: `Invalid(ZeroSize)` for a zero side; `Invalid(Overflow)` for more than
    /// `i32::MAX` pixels (the kernels index with `int`); [`Error::OutOfDeviceMemory`].
    pub fn alloc<T: Pixel>(&self, width: usize, height: usize) -> Result<DeviceImage<T>> {
        let bytes = check_dims::<T>(width, height)?;
        let slice = self
            .stream
            .alloc_zeros::<u8>(bytes)
            .map_err(driver("cuMemAllocAsync"))?;
        // Event tracking is off, so the guard returned with the pointer records nothing.
        let ptr = slice.device_ptr(&self.stream).0;
        Ok(self.image(Storage::Device(slice), ptr, width, height))
    }

    /// A zeroed `width × height` image in page-locked host memory mapped into the device's
    /// address space: kernels read and write it in place, and [`Context::map`] hands the CPU
    /// the same memory, with no copy either way.
    ///
    /// This is the zero-copy path for integrated GPUs ([`crate::DeviceInfo::unified_memory`],
    /// e.g. Jetson), where host and GPU share DRAM and pinned memory is cache-coherent. On a
    /// discrete GPU it works too, but every kernel access crosses the PCIe bus.
    ///
    /// Errors: as [`Context::alloc`]; [`Error::Unavailable`] if the device cannot map host
    /// memory.
    pub fn alloc_mapped<T: Pixel>(&self, width: usize, height: usize) -> Result<DeviceImage<T>> {
        let bytes = check_dims::<T>(width, height)?;
        let can_map = self
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)
            .map_err(driver("cuDeviceGetAttribute"))?;
        if can_map == 0 {
            return Err(Error::Unavailable(format!(
                "{} cannot map host memory",
                self.info().name
            )));
        }
        // Not write-combined: the CPU reads results back from this memory.
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: the memory is zeroed below before anyone reads it.
        let mut host = unsafe { self.ctx.alloc_pinned_with_flags::<u8>(bytes, flags) }
            .map_err(driver("cuMemHostAlloc"))?;
        host.as_mut_slice()
            .map_err(driver("cuEventSynchronize"))?
            .fill(0);
        let host_ptr = host.as_mut_ptr().map_err(driver("cuEventSynchronize"))?;
        let unified_addressing = self
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)
            .map_err(driver("cuDeviceGetAttribute"))?;
        let ptr = if unified_addressing != 0 {
            // With unified addressing (every 64-bit platform), pinned host memory is reachable
            // from kernels at its host address, whatever the context's CU_CTX_MAP_HOST flag.
            host_ptr as CUdeviceptr
        } else {
            let mut ptr: CUdeviceptr = 0;
            self.bind()?;
            // SAFETY: `host_ptr` is a live DEVICEMAP allocation of this context; valid
            // out-pointer; the flags argument must be 0.
            check("cuMemHostGetDevicePointer", unsafe {
                sys::cuMemHostGetDevicePointer_v2(&mut ptr, host_ptr.cast(), 0)
            })?;
            ptr
        };
        let storage = Storage::Mapped(host, self.stream.clone());
        Ok(self.image(storage, ptr, width, height))
    }

    /// Copies `src` into `dst` (same size) and waits for the copy, so `src` may be reused or
    /// freed on return whatever kind of host memory it is (an async copy from page-locked memory
    /// would still be reading it). A mapped `dst` is written by the CPU after the stream has
    /// drained (a queued kernel may still read it).
    ///
    /// Errors: `Invalid(SizeMismatch)` unless the sizes match; [`Error::Device`].
    pub fn upload<T: Pixel>(&self, src: &ImageView<'_, T>, dst: &mut DeviceImage<T>) -> Result<()> {
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        if dst.is_host_mapped() {
            self.stream_sync()?;
            let pixels = dst.host_pixels_mut()?;
            for (y, row) in pixels.chunks_exact_mut(src.width()).enumerate() {
                row.copy_from_slice(src.row(y));
            }
            return Ok(());
        }
        self.bind()?;
        if src.stride() == src.width() {
            // SAFETY: the packed view holds exactly the image's `len()` elements and stays
            // borrowed until the stream sync below has seen the copy finish.
            unsafe { result::memcpy_htod_async(dst.ptr, src.as_slice(), self.stream.cu_stream()) }
                .map_err(driver("cuMemcpyHtoDAsync"))?;
        } else {
            let elem = T::FORMAT.bytes();
            let copy = sys::CUDA_MEMCPY2D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                srcHost: src.as_slice().as_ptr().cast(),
                srcPitch: src.stride() * elem,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstDevice: dst.ptr,
                dstPitch: dst.width * elem,
                WidthInBytes: src.width() * elem,
                Height: src.height(),
                ..memcpy2d_zeroed()
            };
            // SAFETY: the view's slice spans `stride·(h−1)+w` elements, exactly what the 2-D
            // copy reads; `dst` holds `h` packed rows; the source stays borrowed until the
            // stream sync below.
            check("cuMemcpy2DAsync", unsafe {
                sys::cuMemcpy2DAsync_v2(&copy, self.stream.cu_stream())
            })?;
        }
        self.stream_sync()
    }

    /// Copies `src` into `dst` (same size), after all work queued before it, and waits.
    ///
    /// Errors: `Invalid(SizeMismatch)` unless the sizes match; [`Error::Device`], including
    /// errors of kernels queued earlier.
    pub fn download<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut ImageViewMut<'_, T>,
    ) -> Result<()> {
        self.owns(src)?;
        same_size(src.size(), dst.size())?;
        let staging;
        let pixels = if src.is_host_mapped() {
            self.stream_sync()?;
            src.host_pixels()?
        } else {
            // One packed copy, then rows: a writable view exposes its memory only row by row,
            // and a copy per row would cost a driver call each.
            staging = self.read_back(src)?;
            &staging[..]
        };
        for (y, row) in pixels.chunks_exact(src.width).enumerate() {
            dst.row_mut(y).copy_from_slice(row);
        }
        Ok(())
    }

    /// The pixels of a device-memory image, packed, after all queued work.
    fn read_back<T: Pixel>(&self, src: &DeviceImage<T>) -> Result<Vec<T>> {
        let mut staging = vec![T::default(); src.len()];
        self.bind()?;
        // SAFETY: `staging` holds exactly the image's `len()` elements; a copy into pageable
        // memory returns only once it has completed.
        unsafe { result::memcpy_dtoh_async(&mut staging, src.ptr, self.stream.cu_stream()) }
            .map_err(driver("cuMemcpyDtoHAsync"))?;
        self.stream_sync()?;
        Ok(staging)
    }

    /// Copies `src` into `dst` on the device (either may be mapped).
    ///
    /// Errors: `Invalid(SizeMismatch)` unless the sizes match; [`Error::Device`].
    pub fn copy<T: Pixel>(&self, src: &DeviceImage<T>, dst: &mut DeviceImage<T>) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        self.bind()?;
        // SAFETY: both images are live allocations of `num_bytes` bytes of this context (a
        // mapped one through its device pointer); they are distinct (one is borrowed mutably).
        unsafe {
            result::memcpy_dtod_async(dst.ptr, src.ptr, src.num_bytes(), self.stream.cu_stream())
        }
        .map_err(driver("cuMemcpyDtoDAsync"))
    }

    /// Waits for the work queued on this context, then gives the CPU the pixels of `image`:
    /// in place for a mapped image (zero copy), as a staged copy of a device image that is
    /// written back when the map ends. While the [`MappedImage`] lives, `image` is borrowed,
    /// so no operation can use it.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context; [`Error::Device`],
    /// including errors of kernels queued earlier.
    pub fn map<'a, T: Pixel>(
        &'a self,
        image: &'a mut DeviceImage<T>,
    ) -> Result<MappedImage<'a, T>> {
        self.owns(image)?;
        let staging = if image.is_host_mapped() {
            self.stream_sync()?;
            None
        } else {
            Some(self.read_back(image)?)
        };
        Ok(MappedImage {
            context: self,
            image,
            staging,
        })
    }

    /// Ends a map: writes a staged copy back to the device (a mapped image needs nothing).
    fn unmap<T: Pixel>(&self, image: &DeviceImage<T>, staging: Option<&[T]>) -> Result<()> {
        let Some(pixels) = staging else {
            return Ok(());
        };
        self.bind()?;
        // SAFETY: `pixels` holds the image's `len()` elements; staged before return.
        unsafe { result::memcpy_htod_async(image.ptr, pixels, self.stream.cu_stream()) }
            .map_err(driver("cuMemcpyHtoDAsync"))
    }
}

/// The pixels of a [`DeviceImage`] on the CPU, from [`Context::map`]: packed views of mapped
/// memory itself, or of a staged copy that [`MappedImage::unmap`] (or drop) writes back.
pub struct MappedImage<'a, T: Pixel> {
    context: &'a Context,
    image: &'a mut DeviceImage<T>,
    staging: Option<Vec<T>>,
}

// `width`, `height`, `size`, `len`, `is_empty`, `view` and `view_mut`, as in the other driver.
mvision_kernels::device_image_accessors!(DeviceImage, MappedImage);

impl<T: Pixel> MappedImage<'_, T> {
    /// The pixels, row-major and packed (`width · height` elements).
    pub fn as_slice(&self) -> &[T] {
        match &self.staging {
            Some(v) => v,
            // The map drained the stream and the image is borrowed: this cannot fail.
            None => self.image.host_pixels().unwrap_or(&[]),
        }
    }

    /// The pixels, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.staging {
            Some(v) => v,
            None => self.image.host_pixels_mut().unwrap_or(&mut []),
        }
    }

    /// Ends the map, writing a staged copy back (operations queued afterwards see the writes).
    ///
    /// Errors: [`Error::Device`] if the write-back cannot be queued.
    pub fn unmap(self) -> Result<()> {
        let mut this = std::mem::ManuallyDrop::new(self);
        let staging = this.staging.take();
        this.context.unmap(this.image, staging.as_deref())
    }
}

impl<T: Pixel> Drop for MappedImage<'_, T> {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; `unmap` reports them.
        let staging = self.staging.take();
        let _ = self.context.unmap(self.image, staging.as_deref());
    }
}

/// A `CUDA_MEMCPY2D` with every field zero (null pointers, offsets 0), to fill in.
fn memcpy2d_zeroed() -> sys::CUDA_MEMCPY2D {
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        srcPitch: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
        dstHost: std::ptr::null_mut(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        dstPitch: 0,
        WidthInBytes: 0,
        Height: 0,
    }
}
