//! Finding libcuda and NVRTC at run time, without ever panicking when they are absent.
//!
//! `cudarc` opens both libraries lazily on the first call and panics if it cannot (and again if a
//! symbol is missing). Every entry point of this crate therefore asks [`driver_present`] or
//! [`nvrtc_present`] first, which try the same library names `cudarc` would, and turns a miss
//! into [`Error::Unavailable`]. As a second line of defence, the calls themselves run inside
//! `catch_unwind`, so a panic from a half-installed library (a libcuda without a symbol we need)
//! becomes an error too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Whether libcuda (`libcuda.so.1` and the other names `cudarc` tries) can be opened.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only dlopens candidate names (running their initialisers, which
    // is what loading the driver means) and drops the handle; it touches no other state.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// Whether NVRTC (`libnvrtc.so`, `libnvrtc.so.12`, `libnvrtc.so.11`, ...) can be opened.
pub fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: as in `driver_present`.
    *PRESENT.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

/// `Ok(())` if libcuda can be opened, else [`Error::Unavailable`] saying so.
pub(crate) fn require_driver() -> Result<()> {
    if driver_present() {
        Ok(())
    } else {
        Err(Error::Unavailable(
            "libcuda.so.1 not found (no NVIDIA driver installed)".into(),
        ))
    }
}

/// `Ok(())` if NVRTC can be opened, else [`Error::Unavailable`] saying so.
pub(crate) fn require_nvrtc() -> Result<()> {
    if nvrtc_present() {
        Ok(())
    } else {
        Err(Error::Unavailable(
            "NVRTC not found: put libnvrtc.so (CUDA toolkit lib64, or the nvidia-cuda-nvrtc \
             wheel's lib folder) on LD_LIBRARY_PATH"
                .into(),
        ))
    }
}

/// Runs `f`, turning a panic inside `cudarc` (a library that loaded but lacks a symbol) into
/// [`Error::Unavailable`] naming `what`.
pub(crate) fn guard<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("panic");
            Err(Error::Unavailable(format!("{what}: {msg}")))
        }
    }
}
