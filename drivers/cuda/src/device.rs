//! Device enumeration: what `mvision info` prints and what [`crate::Context`] sizes launches by.
//!
//! Attributes are read with `cuDeviceGetAttribute` on the device handle alone, so listing devices
//! creates no context and allocates nothing on the GPUs.

use cudarc::driver::result;
use cudarc::driver::sys::{CUdevice, CUdevice_attribute, CUresult};

use crate::error::{driver, Error, Result};
use crate::loader;

/// One CUDA device, as the driver describes it (the fields shared with the OpenCL driver's
/// `DeviceInfo` have the same names and meaning).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// Index in [`devices`] (the CUDA device ordinal).
    pub index: usize,
    /// Marketing name, e.g. `"NVIDIA H100 80GB HBM3"` or `"Orin"`.
    pub name: String,
    /// Streaming multiprocessors (OpenCL's compute units).
    pub compute_units: u32,
    /// Shared memory one thread block may use statically, in bytes (OpenCL's local memory).
    pub local_mem_bytes: u64,
    /// Most threads one block may have (OpenCL's maximum work-group size).
    pub max_work_group_size: usize,
    /// Most threads along each of the first two block dimensions.
    pub max_work_item_sizes: [usize; 2],
    /// Compute capability `(major, minor)`: `(8, 7)` for Jetson Orin, `(9, 0)` for H100/H200.
    pub compute_capability: (u32, u32),
    /// The GPU shares physical memory with the CPU (an integrated GPU such as Jetson), so
    /// [`crate::Context::alloc_mapped`] images cost no copies and no bus traffic.
    pub unified_memory: bool,
    /// Device memory in bytes.
    pub global_mem_bytes: u64,
    /// The newest CUDA version the installed driver supports, `(major, minor)`.
    pub driver_version: (u32, u32),
}

impl DeviceInfo {
    /// The NVRTC target of this device, e.g. `"sm_87"`.
    pub fn sm_arch(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("sm_{major}{minor}")
    }
}

/// Every CUDA device of this machine, in ordinal order; empty when the driver sees none.
///
/// Errors: [`Error::Unavailable`] when libcuda is missing, cannot initialise (no kernel
/// module, a stub library) or is too old; [`Error::Device`] if the driver fails afterwards.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    loader::require_driver()?;
    loader::guard("CUDA driver", || {
        if !init()? {
            return Ok(Vec::new());
        }
        let count = result::device::get_count().map_err(driver("cuDeviceGetCount"))?;
        (0..count.max(0) as usize).map(query).collect()
    })
}

/// `cuInit(0)`: `Ok(false)` when the driver works but sees no device. Any other failure means
/// CUDA cannot run here at all (no kernel module, a container without the device nodes, the
/// toolkit's stub library), which is [`Error::Unavailable`], not a device error.
pub(crate) fn init() -> Result<bool> {
    match result::init() {
        Ok(()) => Ok(true),
        Err(e) if e.0 == CUresult::CUDA_ERROR_NO_DEVICE => Ok(false),
        Err(e) => Err(match driver("cuInit")(e) {
            Error::Device { code, .. } => Error::Unavailable(format!(
                "the CUDA driver failed to initialise (status {code})"
            )),
            other => other,
        }),
    }
}

/// The oldest driver this crate's bindings run on: CUDA 11.4 (`cudarc`'s `cuda-11040`).
const MIN_DRIVER_VERSION: i32 = 11040;

/// Refuses a driver older than CUDA 11.4, whose libcuda lacks entry points the bindings call
/// (stream-ordered allocation came with 11.2), before any of them is used.
pub(crate) fn require_driver_version() -> Result<()> {
    let version = driver_version()?;
    if version < MIN_DRIVER_VERSION {
        return Err(Error::Unavailable(format!(
            "the NVIDIA driver supports CUDA {}.{}; mvision-cuda needs 11.4 or newer",
            version / 1000,
            version % 1000 / 10
        )));
    }
    Ok(())
}

/// `cuDriverGetVersion`: `1000·major + 10·minor`.
fn driver_version() -> Result<i32> {
    let mut version = 0;
    // SAFETY: a valid out-pointer; callable before and after cuInit.
    crate::error::check("cuDriverGetVersion", unsafe {
        cudarc::driver::sys::cuDriverGetVersion(&mut version)
    })?;
    Ok(version.max(0))
}

/// Reads the attributes of device `index` (the driver is initialised).
pub(crate) fn query(index: usize) -> Result<DeviceInfo> {
    let count = result::device::get_count().map_err(driver("cuDeviceGetCount"))?;
    if index >= count.max(0) as usize {
        return Err(Error::Unavailable(format!(
            "no CUDA device with index {index} ({count} present)"
        )));
    }
    let dev = result::device::get(index as i32).map_err(driver("cuDeviceGet"))?;
    let attr = |a: CUdevice_attribute| attribute(dev, a);
    Ok(DeviceInfo {
        index,
        name: result::device::get_name(dev).map_err(driver("cuDeviceGetName"))?,
        compute_units: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        local_mem_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?
            as u64,
        max_work_group_size: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?
            as usize,
        max_work_item_sizes: [
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)? as usize,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)? as usize,
        ],
        compute_capability: (
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        unified_memory: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0,
        // SAFETY: `dev` is a valid handle returned by cuDeviceGet above.
        global_mem_bytes: unsafe { result::device::total_mem(dev) }
            .map_err(driver("cuDeviceTotalMem"))? as u64,
        driver_version: {
            let v = driver_version()?;
            (v as u32 / 1000, v as u32 % 1000 / 10)
        },
    })
}

/// One integer attribute of `dev`, as `u32` (all we read are small and non-negative).
pub(crate) fn attribute(dev: CUdevice, a: CUdevice_attribute) -> Result<u32> {
    // SAFETY: `dev` is a valid device handle; the attribute is a plain query.
    let v =
        unsafe { result::device::get_attribute(dev, a) }.map_err(driver("cuDeviceGetAttribute"))?;
    Ok(v.max(0) as u32)
}
