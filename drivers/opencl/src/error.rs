//! The driver's error type: what failed, in terms a caller can act on.
//!
//! OpenCL status codes are kept as numbers (`Device { call, code }`) with the name of the call
//! that returned them. Running out of device memory gets its own variant because callers commonly
//! retry smaller or fall back to the CPU; a missing runtime or device is `Unavailable`, never a
//! panic; size and argument errors are the core's own [`mvision_core::Error`], so a driver call
//! rejects exactly what the CPU reference rejects.

use core::fmt;

use opencl3::error_codes::{
    error_text, ClError, CL_DEVICE_NOT_FOUND, CL_INVALID_WORK_GROUP_SIZE,
    CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES,
    CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED,
};

/// What went wrong in an OpenCL driver call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No usable OpenCL here: `libOpenCL.so.1` could not be loaded, no platform or device is
    /// installed, or no device has the requested index or name. The text says which.
    Unavailable(String),
    /// An OpenCL call failed with status `code` (a negative `cl_int`, see
    /// [`Error::code_name`]).
    Device {
        /// The failing API call (e.g. `"clEnqueueNDRangeKernel"`), or for a request the driver
        /// rejects itself (a tile too large for the device), what was refused.
        call: &'static str,
        /// The OpenCL status code.
        code: i32,
    },
    /// The OpenCL compiler rejected a program; `log` is its build log.
    KernelBuild {
        /// The program that failed (kernel set and tile, or `"custom"`).
        kernel: String,
        /// The compiler's build log, verbatim.
        log: String,
    },
    /// The device ran out of memory or resources (`CL_OUT_OF_RESOURCES`,
    /// `CL_MEM_OBJECT_ALLOCATION_FAILURE`, `CL_OUT_OF_HOST_MEMORY`), or an image is larger than
    /// the device's largest allocation.
    OutOfDeviceMemory,
    /// The arguments are invalid, exactly as the CPU reference would report them.
    Invalid(mvision_core::Error),
}

impl Error {
    /// The symbolic name of an OpenCL status code (`"CL_INVALID_VALUE"`), or `"UNKNOWN_ERROR"`.
    pub fn code_name(code: i32) -> &'static str {
        error_text(code)
    }

    /// Maps the status `code` returned by `call` to an error.
    pub fn from_code(call: &'static str, code: i32) -> Self {
        match code {
            CL_OUT_OF_RESOURCES | CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_HOST_MEMORY => {
                Error::OutOfDeviceMemory
            }
            DLOPEN_RUNTIME_LOAD_FAILED => Error::Unavailable(
                "the OpenCL library (libOpenCL.so.1, or OPENCL_DYLIB_PATH) could not be loaded"
                    .to_owned(),
            ),
            DLOPEN_FUNCTION_NOT_AVAILABLE => Error::Unavailable(format!(
                "the OpenCL library lacks the function behind {call}"
            )),
            CL_PLATFORM_NOT_FOUND_KHR => {
                Error::Unavailable("no OpenCL platform is installed".to_owned())
            }
            CL_DEVICE_NOT_FOUND => Error::Unavailable("no OpenCL device was found".to_owned()),
            _ => Error::Device { call, code },
        }
    }

    /// A closure mapping an `opencl3` error of `call`, for `map_err`.
    pub(crate) fn cl(call: &'static str) -> impl Fn(ClError) -> Error {
        move |e| Error::from_code(call, e.0)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(why) => write!(f, "OpenCL unavailable: {why}"),
            Error::Device { call, code } => {
                write!(f, "{call} failed with {} ({code})", error_text(*code))
            }
            Error::KernelBuild { kernel, log } => {
                write!(f, "OpenCL could not build {kernel}:\n{log}")
            }
            Error::OutOfDeviceMemory => f.write_str("out of OpenCL device memory"),
            Error::Invalid(e) => write!(f, "invalid argument: {e}"),
        }
    }
}

// `std::error::Error`, `From<mvision_core::Error>`, `From<PlanError>`: as in the other driver.
mvision_kernels::driver_error_conversions!(
    Error,
    mvision_kernels::Backend::OpenCl,
    CL_INVALID_WORK_GROUP_SIZE
);

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;
    use mvision_kernels::plan::{PlanError, Refusal};
    use opencl3::error_codes::{CL_BUILD_PROGRAM_FAILURE, CL_INVALID_VALUE};

    #[test]
    fn codes_map_to_the_spec_variants() {
        for code in [
            CL_OUT_OF_RESOURCES,
            CL_MEM_OBJECT_ALLOCATION_FAILURE,
            CL_OUT_OF_HOST_MEMORY,
        ] {
            assert_eq!(Error::from_code("x", code), Error::OutOfDeviceMemory);
        }
        // What cl3's dynamic loader returns when libOpenCL.so.1 is missing: it reports the
        // failed dlopen as this code from every call (it does not panic).
        assert!(matches!(
            Error::from_code("clGetPlatformIDs", DLOPEN_RUNTIME_LOAD_FAILED),
            Error::Unavailable(_)
        ));
        assert!(matches!(
            Error::from_code("clGetPlatformIDs", CL_PLATFORM_NOT_FOUND_KHR),
            Error::Unavailable(_)
        ));
        assert_eq!(
            Error::from_code("clSetKernelArg", CL_INVALID_VALUE),
            Error::Device {
                call: "clSetKernelArg",
                code: CL_INVALID_VALUE
            }
        );
        let shown = Error::from_code("clBuildProgram", CL_BUILD_PROGRAM_FAILURE).to_string();
        assert!(shown.contains("CL_BUILD_PROGRAM_FAILURE"), "{shown}");
        assert_eq!(
            Error::from(mvision_core::Error::SizeMismatch),
            Error::Invalid(mvision_core::Error::SizeMismatch)
        );
        assert_eq!(
            Error::from(PlanError::Invalid(mvision_core::Error::ZeroSize)),
            Error::Invalid(mvision_core::Error::ZeroSize)
        );
        for refusal in [Refusal::TileWorkGroup, Refusal::TileLocalMemory] {
            let e = Error::from(PlanError::Refused(refusal));
            assert!(
                matches!(e, Error::Device { call, code: CL_INVALID_WORK_GROUP_SIZE } if call.contains("tile")),
                "{e:?}"
            );
            assert!(e.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"), "{e}");
        }
    }
}
