//! `mv_status`: the one result code of every fallible C function, with stable numbers.

use mvision_core::Error;
use mvision_runtime::ErrorKind;
use std::cell::RefCell;
use std::ffi::c_char;

/// Result of a libmvision call. Numbers are stable and never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mv_status {
    /// Success; outputs were written.
    MV_STATUS_OK = 0,
    /// A required pointer argument (or an image's data pointer) is NULL.
    MV_STATUS_NULL_POINTER = 1,
    /// A width, height or kernel size is zero.
    MV_STATUS_ZERO_SIZE = 2,
    /// An image's stride is smaller than one row (`width × bytes per pixel`).
    MV_STATUS_STRIDE_TOO_SMALL = 3,
    /// A buffer (`data_size` of an image, or a caller buffer) is too small.
    MV_STATUS_BUFFER_TOO_SMALL = 4,
    /// A size computation overflows (for example `stride × height` in bytes).
    MV_STATUS_OVERFLOW = 5,
    /// Image sizes that must agree do not.
    MV_STATUS_SIZE_MISMATCH = 6,
    /// The pixel format is unknown or not accepted by this function (or two images that
    /// must share a format do not).
    MV_STATUS_UNSUPPORTED_FORMAT = 7,
    /// A data pointer or stride is not a multiple of the pixel size.
    MV_STATUS_MISALIGNED = 8,
    /// A filter kernel is invalid (even or > 15 size, non-finite, or accumulator overflow).
    MV_STATUS_INVALID_KERNEL = 9,
    /// An argument is outside its documented range.
    MV_STATUS_INVALID_ARGUMENT = 10,
    /// A rectangle lies outside the image it addresses.
    MV_STATUS_OUT_OF_BOUNDS = 11,
    /// Two output images overlap in memory.
    MV_STATUS_OVERLAP = 12,
    /// Host memory for working buffers could not be allocated.
    MV_STATUS_OUT_OF_MEMORY = 13,
    /// A stateful object was used out of order (for example a tracker updated before init).
    MV_STATUS_NOT_INITIALIZED = 14,
    /// Serialized data (a model file) is malformed: wrong magic, truncated, an offset or size
    /// out of range, a checksum mismatch.
    MV_STATUS_MALFORMED = 15,
    /// Serialized data (a model file) has a format version this build cannot read.
    MV_STATUS_UNSUPPORTED_VERSION = 16,
    /// A requested backend is not compiled in, or its driver or device is missing.
    MV_STATUS_BACKEND_UNAVAILABLE = 20,
    /// A device (GPU) call failed.
    MV_STATUS_DEVICE_ERROR = 21,
    /// A device kernel failed to compile.
    MV_STATUS_KERNEL_BUILD_FAILED = 22,
    /// Device memory is exhausted.
    MV_STATUS_OUT_OF_DEVICE_MEMORY = 23,
    /// The images or buffers of one call live on different backends or devices.
    MV_STATUS_BACKEND_MISMATCH = 24,
    /// An internal error (a Rust panic) was caught at the boundary. Please report it.
    MV_STATUS_PANIC = 100,
}

use mv_status::*;

impl From<Error> for mv_status {
    fn from(e: Error) -> Self {
        match e {
            Error::ZeroSize => MV_STATUS_ZERO_SIZE,
            Error::StrideTooSmall => MV_STATUS_STRIDE_TOO_SMALL,
            Error::BufferTooSmall => MV_STATUS_BUFFER_TOO_SMALL,
            Error::Overflow => MV_STATUS_OVERFLOW,
            Error::SizeMismatch => MV_STATUS_SIZE_MISMATCH,
            Error::InvalidKernel => MV_STATUS_INVALID_KERNEL,
            Error::InvalidArgument => MV_STATUS_INVALID_ARGUMENT,
            Error::OutOfBounds => MV_STATUS_OUT_OF_BOUNDS,
            Error::NotInitialized => MV_STATUS_NOT_INITIALIZED,
            Error::Misaligned => MV_STATUS_MISALIGNED,
            Error::Malformed => MV_STATUS_MALFORMED,
            Error::UnsupportedVersion => MV_STATUS_UNSUPPORTED_VERSION,
            _ => MV_STATUS_INVALID_ARGUMENT,
        }
    }
}

impl From<mvision_runtime::Error> for mv_status {
    fn from(e: mvision_runtime::Error) -> Self {
        let status = match e.kind() {
            ErrorKind::Unavailable => MV_STATUS_BACKEND_UNAVAILABLE,
            ErrorKind::Device => MV_STATUS_DEVICE_ERROR,
            ErrorKind::KernelBuild => MV_STATUS_KERNEL_BUILD_FAILED,
            ErrorKind::OutOfDeviceMemory => MV_STATUS_OUT_OF_DEVICE_MEMORY,
            ErrorKind::Invalid(c) => c.into(),
            ErrorKind::BackendMismatch => MV_STATUS_BACKEND_MISMATCH,
        };
        set_last_error_detail(e.to_string());
        status
    }
}

thread_local! {
    /// Detail of the last failure on this thread that had more to say than its status (driver
    /// call and code, a kernel compiler log).
    static LAST_DETAIL: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `detail` as this thread's last error detail.
pub(crate) fn set_last_error_detail(detail: String) {
    LAST_DETAIL.with(|d| *d.borrow_mut() = detail);
}

const ALL: [mv_status; 23] = [
    MV_STATUS_OK,
    MV_STATUS_NULL_POINTER,
    MV_STATUS_ZERO_SIZE,
    MV_STATUS_STRIDE_TOO_SMALL,
    MV_STATUS_BUFFER_TOO_SMALL,
    MV_STATUS_OVERFLOW,
    MV_STATUS_SIZE_MISMATCH,
    MV_STATUS_UNSUPPORTED_FORMAT,
    MV_STATUS_MISALIGNED,
    MV_STATUS_INVALID_KERNEL,
    MV_STATUS_INVALID_ARGUMENT,
    MV_STATUS_OUT_OF_BOUNDS,
    MV_STATUS_OVERLAP,
    MV_STATUS_OUT_OF_MEMORY,
    MV_STATUS_NOT_INITIALIZED,
    MV_STATUS_MALFORMED,
    MV_STATUS_UNSUPPORTED_VERSION,
    MV_STATUS_BACKEND_UNAVAILABLE,
    MV_STATUS_DEVICE_ERROR,
    MV_STATUS_KERNEL_BUILD_FAILED,
    MV_STATUS_OUT_OF_DEVICE_MEMORY,
    MV_STATUS_BACKEND_MISMATCH,
    MV_STATUS_PANIC,
];

impl mv_status {
    /// The status with number `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL.iter().copied().find(|s| *s as u32 == code)
    }

    /// NUL-terminated name and description.
    fn texts(self) -> (&'static str, &'static str) {
        match self {
            MV_STATUS_OK => ("MV_STATUS_OK\0", "success\0"),
            MV_STATUS_NULL_POINTER => ("MV_STATUS_NULL_POINTER\0", "a required pointer is NULL\0"),
            MV_STATUS_ZERO_SIZE => ("MV_STATUS_ZERO_SIZE\0", "a size is zero\0"),
            MV_STATUS_STRIDE_TOO_SMALL => (
                "MV_STATUS_STRIDE_TOO_SMALL\0",
                "image stride is smaller than one row\0",
            ),
            MV_STATUS_BUFFER_TOO_SMALL => ("MV_STATUS_BUFFER_TOO_SMALL\0", "buffer is too small\0"),
            MV_STATUS_OVERFLOW => ("MV_STATUS_OVERFLOW\0", "size computation overflows\0"),
            MV_STATUS_SIZE_MISMATCH => ("MV_STATUS_SIZE_MISMATCH\0", "image sizes do not match\0"),
            MV_STATUS_UNSUPPORTED_FORMAT => (
                "MV_STATUS_UNSUPPORTED_FORMAT\0",
                "pixel format not supported here\0",
            ),
            MV_STATUS_MISALIGNED => (
                "MV_STATUS_MISALIGNED\0",
                "pointer or stride not a multiple of the pixel size\0",
            ),
            MV_STATUS_INVALID_KERNEL => ("MV_STATUS_INVALID_KERNEL\0", "invalid filter kernel\0"),
            MV_STATUS_INVALID_ARGUMENT => {
                ("MV_STATUS_INVALID_ARGUMENT\0", "argument out of range\0")
            }
            MV_STATUS_OUT_OF_BOUNDS => (
                "MV_STATUS_OUT_OF_BOUNDS\0",
                "rectangle lies outside the image\0",
            ),
            MV_STATUS_OVERLAP => ("MV_STATUS_OVERLAP\0", "output images overlap in memory\0"),
            MV_STATUS_OUT_OF_MEMORY => ("MV_STATUS_OUT_OF_MEMORY\0", "out of host memory\0"),
            MV_STATUS_NOT_INITIALIZED => (
                "MV_STATUS_NOT_INITIALIZED\0",
                "object used before it was initialised\0",
            ),
            MV_STATUS_MALFORMED => (
                "MV_STATUS_MALFORMED\0",
                "malformed data (bad magic, sizes, offsets or checksum)\0",
            ),
            MV_STATUS_UNSUPPORTED_VERSION => (
                "MV_STATUS_UNSUPPORTED_VERSION\0",
                "unsupported format version\0",
            ),
            MV_STATUS_BACKEND_UNAVAILABLE => {
                ("MV_STATUS_BACKEND_UNAVAILABLE\0", "backend not available\0")
            }
            MV_STATUS_DEVICE_ERROR => ("MV_STATUS_DEVICE_ERROR\0", "device call failed\0"),
            MV_STATUS_KERNEL_BUILD_FAILED => (
                "MV_STATUS_KERNEL_BUILD_FAILED\0",
                "device kernel failed to compile\0",
            ),
            MV_STATUS_OUT_OF_DEVICE_MEMORY => {
                ("MV_STATUS_OUT_OF_DEVICE_MEMORY\0", "out of device memory\0")
            }
            MV_STATUS_BACKEND_MISMATCH => (
                "MV_STATUS_BACKEND_MISMATCH\0",
                "buffers of one call live on different backends or devices\0",
            ),
            MV_STATUS_PANIC => ("MV_STATUS_PANIC\0", "internal error (caught panic)\0"),
        }
    }

    /// The status name, e.g. `"MV_STATUS_OK"`.
    pub fn name(self) -> &'static str {
        let n = self.texts().0;
        &n[..n.len() - 1]
    }
}

/// The name of a status (`"MV_STATUS_OK"`…), or `"MV_STATUS_UNKNOWN"` for a number that is not
/// a status. The string is static: never free it. Never returns NULL.
#[no_mangle]
pub extern "C" fn mv_status_name(status: u32) -> *const c_char {
    mv_status::from_code(status)
        .map_or("MV_STATUS_UNKNOWN\0", |s| s.texts().0)
        .as_ptr()
        .cast()
}

/// A one-line English description of a status, or `"unknown status"`. Static; never NULL.
#[no_mangle]
pub extern "C" fn mv_status_description(status: u32) -> *const c_char {
    mv_status::from_code(status)
        .map_or("unknown status\0", |s| s.texts().1)
        .as_ptr()
        .cast()
}

/// Copies the detail of the last failed call on this thread that carried one (a device call and
/// its code, or a kernel compiler log) into `buf` as a NUL-terminated string, truncated to
/// `len − 1` bytes, and its full length (without NUL) into `*out_len`. An empty string if there is
/// none. Lets C callers read kernel build logs without any allocation crossing the boundary.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `buf` (with `len > 0`) or `out_len` is NULL;
/// `MV_STATUS_BUFFER_TOO_SMALL` if `len` is 0.
///
/// # Safety
/// `buf` NULL or writable for `len` bytes; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_last_error_detail(
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> mv_status {
    crate::panic::guard(|| {
        crate::panic::non_null(out_len)?;
        if len == 0 {
            return Err(MV_STATUS_BUFFER_TOO_SMALL);
        }
        crate::panic::non_null(buf)?;
        LAST_DETAIL.with(|d| {
            let d = d.borrow();
            let n = d.len().min(len - 1);
            // SAFETY: buf is writable for len > n bytes; out_len is writable.
            unsafe {
                std::ptr::copy_nonoverlapping(d.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
                out_len.write(d.len());
            }
        });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for s in ALL {
            assert_eq!(mv_status::from_code(s as u32), Some(s));
            assert!(s.name().starts_with("MV_STATUS_"));
        }
        let mut codes: Vec<u32> = ALL.iter().map(|s| *s as u32).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ALL.len());
        assert_eq!(mv_status::from_code(99), None);
    }
}
