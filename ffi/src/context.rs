//! Backends and the `mv_context` object.
//!
//! Backends are bit flags. A context is created for a set of backends and fails if any of them
//! is unavailable, so callers ask `mv_backends_available()` first and pick from what it
//! returns. In this release only the CPU backend is built; the GPU drivers fill in OpenCL and
//! CUDA behind the same API and header.

use crate::panic::{guard, guard_value, non_null};
use crate::status::mv_status::{self, *};

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

/// An execution context for a set of backends. Opaque; create with `mv_context_create`, free
/// with `mv_context_destroy`.
pub struct mv_context {
    backends: mv_backend,
}

fn available() -> mv_backend {
    MV_BACKEND_CPU
}

/// The backends usable on this machine, as an OR of `MV_BACKEND_*` flags (always includes
/// `MV_BACKEND_CPU`).
#[no_mangle]
pub extern "C" fn mv_backends_available() -> mv_backend {
    guard_value(MV_BACKEND_CPU, available)
}

/// Creates a context for `backends` (an OR of `MV_BACKEND_*` flags) into `*out`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `out` is NULL; `MV_STATUS_INVALID_ARGUMENT` for no flag
/// or an undefined flag; `MV_STATUS_BACKEND_UNAVAILABLE` if any requested backend is not
/// available (see `mv_backends_available`).
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
        if backends == 0 || backends & !MV_BACKEND_ALL != 0 {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        if backends & !available() != 0 {
            return Err(MV_STATUS_BACKEND_UNAVAILABLE);
        }
        let ctx = Box::into_raw(Box::new(mv_context { backends }));
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
/// `ctx` NULL or from `mv_context_create` and not destroyed; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_context_backends(
    ctx: *const mv_context,
    out: *mut mv_backend,
) -> mv_status {
    guard(|| {
        non_null(ctx)?;
        non_null(out)?;
        // SAFETY: the caller guarantees a live context and a writable output.
        unsafe { out.write((*ctx).backends) };
        Ok(())
    })
}

/// Frees a context. Accepts NULL (does nothing). Each context must be destroyed exactly once.
///
/// # Safety
/// `ctx` NULL or from `mv_context_create` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_context_destroy(ctx: *mut mv_context) {
    let _ = guard(|| {
        if !ctx.is_null() {
            // SAFETY: the caller guarantees it came from Box::into_raw in mv_context_create.
            drop(unsafe { Box::from_raw(ctx) });
        }
        Ok(())
    });
}
