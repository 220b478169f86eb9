//! Backends, devices and the `mv_context` object.
//!
//! Backends are bit flags. A context owns the CPU plus one device of each GPU backend it was
//! created with; creation fails if a requested backend has no usable device, so callers ask
//! `mv_backends_available()` first. Device choice: `mv_context_create` takes the device named by
//! `MVISION_OPENCL_DEVICE` / `MVISION_CUDA_DEVICE` (an index, or for OpenCL a substring of
//! "platform device") or device 0; `mv_context_create_device` takes an explicit index.

use crate::panic::{guard, guard_value, non_null};
use crate::status::mv_status::{self, *};
use mvision_runtime::{available, Backend, BackendSet, Context};
use std::ffi::c_char;

/// A set of backends (an OR of `MV_BACKEND_*` flags).
pub type mv_backend = u32;
/// The CPU backend (always available): the reference implementation.
pub const MV_BACKEND_CPU: mv_backend = 1;
/// The OpenCL backend.
pub const MV_BACKEND_OPENCL: mv_backend = 2;
/// The CUDA backend.
pub const MV_BACKEND_CUDA: mv_backend = 4;
/// Every defined backend flag.
pub const MV_BACKEND_ALL: mv_backend = MV_BACKEND_CPU | MV_BACKEND_OPENCL | MV_BACKEND_CUDA;

/// An execution context: the CPU plus the GPU devices it was created with. Opaque; create with
/// `mv_context_create` or `mv_context_create_device`, free with `mv_context_destroy`. May be
/// shared between threads; `mv_context_destroy` must not race with other calls on it.
pub struct mv_context {
    pub(crate) inner: Context,
}

/// The single backend named by `bit`, or `MV_STATUS_INVALID_ARGUMENT`.
pub(crate) fn one_backend(bit: mv_backend) -> Result<Backend, mv_status> {
    Backend::ALL
        .into_iter()
        .find(|b| b.bit() == bit)
        .ok_or(MV_STATUS_INVALID_ARGUMENT)
}

/// The backends usable on this machine, as an OR of `MV_BACKEND_*` flags (always includes
/// `MV_BACKEND_CPU`). Probed once: a backend whose driver library is missing is simply absent.
#[no_mangle]
pub extern "C" fn mv_backends_available() -> mv_backend {
    guard_value(MV_BACKEND_CPU, || available().bits())
}

/// Creates a context for `backends` (an OR of `MV_BACKEND_*` flags) into `*out`; GPU devices
/// are chosen by environment variable or default to device 0 (see the module docs).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL; `MV_STATUS_INVALID_ARGUMENT` for no flag
/// or an undefined flag; `MV_STATUS_BACKEND_UNAVAILABLE` if a requested backend has no usable
/// device; `MV_STATUS_DEVICE_ERROR` if a device fails to initialise.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_context_create(
    backends: mv_backend,
    out: *mut *mut mv_context,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        let set = BackendSet::from_bits(backends)
            .filter(|s| s.bits() != 0)
            .ok_or(MV_STATUS_INVALID_ARGUMENT)?;
        if set.bits() & !available().bits() != 0 {
            return Err(MV_STATUS_BACKEND_UNAVAILABLE);
        }
        let ctx = Box::into_raw(Box::new(mv_context {
            inner: Context::new(set)?,
        }));
        // SAFETY: non-null; the caller guarantees writability.
        unsafe { out.write(ctx) };
        Ok(())
    })
}

/// Creates a context with the CPU and device `index` (see `mv_device_count`) of one backend.
///
/// Errors: `MV_STATUS_NULL_POINTER`; `MV_STATUS_INVALID_ARGUMENT` unless `backend` is exactly
/// one flag; `MV_STATUS_BACKEND_UNAVAILABLE` if there is no such device;
/// `MV_STATUS_DEVICE_ERROR` if it fails to initialise.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_context_create_device(
    backend: mv_backend,
    index: u32,
    out: *mut *mut mv_context,
) -> mv_status {
    guard(|| {
        non_null(out)?;
        let b = one_backend(backend)?;
        let ctx = Box::into_raw(Box::new(mv_context {
            inner: Context::with_device(b, index as usize)?,
        }));
        // SAFETY: non-null; the caller guarantees writability.
        unsafe { out.write(ctx) };
        Ok(())
    })
}

/// The backends a context was created with, into `*out`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `ctx` or `out` is NULL.
///
/// # Safety
/// `ctx` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_context_backends(
    ctx: *const mv_context,
    out: *mut mv_backend,
) -> mv_status {
    guard(|| {
        non_null(ctx)?;
        non_null(out)?;
        // SAFETY: the caller guarantees a live context and a writable output.
        unsafe { out.write((*ctx).inner.backends().bits()) };
        Ok(())
    })
}

/// Copies the name of the device behind `backend` in `ctx` into `buf` (NUL-terminated,
/// truncated to `len − 1` bytes) and its full length into `*out_len`.
///
/// Errors: `MV_STATUS_NULL_POINTER`; `MV_STATUS_INVALID_ARGUMENT` unless `backend` is one flag;
/// `MV_STATUS_BACKEND_UNAVAILABLE` if the context lacks it; `MV_STATUS_BUFFER_TOO_SMALL` if
/// `len` is 0.
///
/// # Safety
/// `ctx` NULL or live; `buf` NULL or writable for `len` bytes; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_context_device_name(
    ctx: *const mv_context,
    backend: mv_backend,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> mv_status {
    guard(|| {
        non_null(ctx)?;
        non_null(out_len)?;
        non_null(buf)?;
        if len == 0 {
            return Err(MV_STATUS_BUFFER_TOO_SMALL);
        }
        let b = one_backend(backend)?;
        // SAFETY: the caller guarantees a live context.
        let name = unsafe { &(*ctx).inner }
            .device_name(b)
            .ok_or(MV_STATUS_BACKEND_UNAVAILABLE)?;
        let n = name.len().min(len - 1);
        // SAFETY: buf writable for len > n bytes; out_len writable.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
            out_len.write(name.len());
        }
        Ok(())
    })
}

/// Waits until all work submitted through `ctx`'s devices has finished.
///
/// Errors: `MV_STATUS_NULL_POINTER`; `MV_STATUS_DEVICE_ERROR` if a device reports a failure.
///
/// # Safety
/// `ctx` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn mv_context_sync(ctx: *mut mv_context) -> mv_status {
    guard(|| {
        non_null(ctx)?;
        // SAFETY: the caller guarantees a live context.
        Ok(unsafe { &(*ctx).inner }.sync()?)
    })
}

/// Frees a context. Accepts NULL (does nothing). Buffers created from it stay valid (they keep
/// their device alive) and are freed with `mv_buffer_destroy`.
///
/// # Safety
/// `ctx` NULL or from `mv_context_create*` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_context_destroy(ctx: *mut mv_context) {
    let _ = guard(|| {
        if !ctx.is_null() {
            // SAFETY: the caller guarantees it came from Box::into_raw in mv_context_create*.
            drop(unsafe { Box::from_raw(ctx) });
        }
        Ok(())
    });
}
