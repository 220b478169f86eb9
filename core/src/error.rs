//! Errors returned by the core: one small enum, each variant naming what the caller got wrong.
//!
//! Every fallible function in `mvision-core` returns [`Result<T>`]. Errors are detected before
//! any output is written, so an `Err` leaves the caller's output buffers untouched.

use core::fmt;

/// What went wrong in a core call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// A width, height or kernel size is zero where a positive value is required.
    ZeroSize,
    /// A row stride (in elements) is smaller than the row width.
    StrideTooSmall,
    /// A buffer is shorter than the view or scratch it must hold.
    BufferTooSmall,
    /// A size computation (bytes, elements, accumulator range) would overflow.
    Overflow,
    /// Two images that must have related sizes do not (for example a filter's source and
    /// destination, or an integral image that is not `(w + 1) × (h + 1)`).
    SizeMismatch,
    /// A filter kernel is invalid: even or too large a size, coefficient count not `size²`,
    /// or coefficients whose worst-case sum cannot be accumulated without overflow.
    InvalidKernel,
    /// A parameter is outside its documented range (NaN or non-positive sigma, shift too large…).
    InvalidArgument,
    /// A rectangle lies (partly) outside the image it must address.
    OutOfBounds,
    /// A stateful object was used out of order (for example a tracker updated before `init`).
    NotInitialized,
    /// A byte buffer that must be viewed as typed data (a model file) does not start at a
    /// multiple of the type's alignment.
    Misaligned,
    /// Serialized data (a model file) is malformed: wrong magic, truncated, a section or offset
    /// out of range, a checksum mismatch, text that is not UTF-8.
    Malformed,
    /// Serialized data (a model file) has a format version this build cannot read.
    UnsupportedVersion,
}

impl Error {
    /// A short, stable, human-readable description of the error.
    pub const fn message(self) -> &'static str {
        match self {
            Error::ZeroSize => "size must be positive",
            Error::StrideTooSmall => "row stride is smaller than the row width",
            Error::BufferTooSmall => "buffer is too small for the requested view or scratch",
            Error::Overflow => "size or accumulator range overflows",
            Error::SizeMismatch => "image sizes do not match",
            Error::InvalidKernel => "invalid filter kernel",
            Error::InvalidArgument => "argument out of range",
            Error::OutOfBounds => "rectangle lies outside the image",
            Error::NotInitialized => "object used before it was initialised",
            Error::Misaligned => "data is not aligned for its type",
            Error::Malformed => "malformed data (bad magic, sizes, offsets or checksum)",
            Error::UnsupportedVersion => "unsupported format version",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

#[cfg(any(test, feature = "std"))]
extern crate std;

#[cfg(any(test, feature = "std"))]
impl std::error::Error for Error {}

/// Result alias used throughout the core.
pub type Result<T> = core::result::Result<T, Error>;
