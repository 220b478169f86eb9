//! One error type for every backend, with a kind that the C API maps to `mv_status`.

use std::fmt;

/// What class of failure an [`Error`] is; generic code (and the C boundary) acts on this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The backend is not compiled in, its driver library is missing, or it has no device.
    Unavailable,
    /// A device call failed.
    Device,
    /// A device kernel failed to compile (the detail carries the compiler log).
    KernelBuild,
    /// Device memory is exhausted.
    OutOfDeviceMemory,
    /// An argument was rejected by the same checks the CPU core applies.
    Invalid(mvision_core::Error),
    /// The images of one call live on different backends or devices.
    BackendMismatch,
}

/// A runtime error: its kind plus a human-readable detail (driver call, code, compiler log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    detail: String,
}

impl Error {
    /// An error of `kind` with a detail message.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }

    /// The class of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The detail message (for kernel builds, the compiler log).
    pub fn detail(&self) -> &str {
        &self.detail
    }

    pub(crate) fn mismatch() -> Self {
        Self::new(
            ErrorKind::BackendMismatch,
            "images of one call must live on the same backend and device",
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Unavailable => "backend unavailable",
            ErrorKind::Device => "device error",
            ErrorKind::KernelBuild => "kernel build failed",
            ErrorKind::OutOfDeviceMemory => "out of device memory",
            ErrorKind::Invalid(e) => e.message(),
            ErrorKind::BackendMismatch => "backend mismatch",
        };
        if self.detail.is_empty() {
            f.write_str(what)
        } else {
            write!(f, "{what}: {}", self.detail)
        }
    }
}

impl std::error::Error for Error {}

impl From<mvision_core::Error> for Error {
    fn from(e: mvision_core::Error) -> Self {
        Self::new(ErrorKind::Invalid(e), "")
    }
}

/// Converts a driver error; both drivers share the variant set of `kernels/SPEC.md`.
macro_rules! from_driver {
    ($m:ident) => {
        impl From<$m::Error> for Error {
            fn from(e: $m::Error) -> Self {
                let detail = e.to_string();
                let kind = match e {
                    $m::Error::Unavailable(_) => ErrorKind::Unavailable,
                    $m::Error::Device { .. } => ErrorKind::Device,
                    $m::Error::KernelBuild { .. } => ErrorKind::KernelBuild,
                    $m::Error::OutOfDeviceMemory => ErrorKind::OutOfDeviceMemory,
                    $m::Error::Invalid(c) => ErrorKind::Invalid(c),
                };
                Error::new(kind, detail)
            }
        }
    };
}
from_driver!(mvision_opencl);
from_driver!(mvision_cuda);

/// Result alias of the runtime.
pub type Result<T> = std::result::Result<T, Error>;
