//! The driver's error type: what failed, in terms a caller can act on.
//!
//! CUDA and NVRTC status codes are kept as numbers (`Device { call, code }`) with the name of the
//! call that returned them; running out of device memory gets its own variant because callers
//! commonly retry smaller or fall back to the CPU. Size and argument errors are the core's own
//! [`mvision_core::Error`], so a driver call rejects exactly what the CPU reference rejects.

use core::fmt;

use cudarc::driver::{sys::cudaError_enum, DriverError};

/// What went wrong in a CUDA driver call. The variants are those of `kernels/SPEC.md`, shared
/// with the OpenCL driver, so callers match both exhaustively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No usable CUDA here: libcuda or NVRTC is missing, no device has the requested index, or
    /// the device lacks a feature the call needs. The text says which.
    Unavailable(String),
    /// A CUDA driver or NVRTC call failed with status `code` (a `CUresult` or `nvrtcResult`).
    Device {
        /// The failing API call, e.g. `"cuLaunchKernel"`.
        call: &'static str,
        /// Its status code.
        code: i32,
    },
    /// NVRTC rejected a kernel program; `log` is the compiler's log.
    KernelBuild {
        /// The program (kernel set, tile and target) that failed.
        kernel: String,
        /// NVRTC's log, verbatim.
        log: String,
    },
    /// The device ran out of memory (`CUDA_ERROR_OUT_OF_MEMORY`).
    OutOfDeviceMemory,
    /// The arguments are invalid, exactly as the CPU reference would report them.
    Invalid(mvision_core::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(why) => write!(f, "CUDA unavailable: {why}"),
            Error::Device { call, code } => write!(f, "{call} failed with status {code}"),
            Error::KernelBuild { kernel, log } => {
                write!(f, "NVRTC could not build {kernel}:\n{log}")
            }
            Error::OutOfDeviceMemory => f.write_str("out of CUDA device memory"),
            Error::Invalid(e) => write!(f, "invalid argument: {e}"),
        }
    }
}

// `std::error::Error`, `From<mvision_core::Error>`, `From<PlanError>`: as in the other driver.
mvision_kernels::driver_error_conversions!(
    Error,
    mvision_kernels::Backend::Cuda,
    cudaError_enum::CUDA_ERROR_INVALID_VALUE as i32
);

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

/// Maps a driver status returned by `call` to an [`Error`].
pub(crate) fn driver(call: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| from_status(call, e.0)
}

/// Maps a raw `CUresult` returned by `call` to an [`Error`].
pub(crate) fn from_status(call: &'static str, status: cudaError_enum) -> Error {
    match status {
        cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfDeviceMemory,
        // The driver library loaded but sees no GPU: nothing the caller did wrong.
        cudaError_enum::CUDA_ERROR_NO_DEVICE => Error::Unavailable("no CUDA device".into()),
        // The toolkit's link stub (`lib64/stubs/libcuda.so`) was found instead of a driver.
        cudaError_enum::CUDA_ERROR_STUB_LIBRARY => {
            Error::Unavailable("libcuda is the toolkit's stub, not an NVIDIA driver".into())
        }
        other => Error::Device {
            call,
            code: other as i32,
        },
    }
}

/// Turns a raw `CUresult` into `Ok(())` or the [`Error`] for `call`.
pub(crate) fn check(call: &'static str, status: cudaError_enum) -> Result<()> {
    if status == cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(from_status(call, status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mvision_kernels::plan::{PlanError, Refusal};

    #[test]
    fn refused_launches_are_invalid_value_errors() {
        assert_eq!(
            Error::from(PlanError::Invalid(mvision_core::Error::ZeroSize)),
            Error::Invalid(mvision_core::Error::ZeroSize)
        );
        for refusal in [Refusal::TileWorkGroup, Refusal::TileLocalMemory] {
            match Error::from(PlanError::Refused(refusal)) {
                // CUDA_ERROR_INVALID_VALUE
                Error::Device { call, code: 1 } => assert!(call.contains("tile"), "{call}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            from_status("cuMemAlloc", cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY),
            Error::OutOfDeviceMemory
        );
    }
}
