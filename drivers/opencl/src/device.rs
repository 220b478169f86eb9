//! Device discovery: every device of every OpenCL platform, in a stable order, with the
//! properties the driver and `mvision info` need.
//!
//! `opencl3` is built with its `dynamic` feature: `libOpenCL.so.1` (the ICD loader) is opened on
//! first use, not linked, so a binary runs on machines without OpenCL. A failed load comes back
//! from every call as the status `DLOPEN_RUNTIME_LOAD_FAILED` (cl3 does not panic); an ICD
//! loader without vendors returns `CL_PLATFORM_NOT_FOUND_KHR`. Both become
//! [`Error::Unavailable`]. Enumeration also runs behind `catch_unwind`, so a panic in the binding
//! layer is reported as `Unavailable` instead of unwinding into the caller.

use std::panic::{catch_unwind, AssertUnwindSafe};

use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::CL_DEVICE_NOT_FOUND;
use opencl3::platform::get_platforms;

use crate::error::{Error, Result};

/// The kind of an OpenCL device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A CPU device (PoCL's `pthread` device, Intel's CPU runtime).
    Cpu,
    /// A GPU.
    Gpu,
    /// A dedicated accelerator (DSP, FPGA…).
    Accelerator,
    /// Anything else (custom devices).
    Other,
}

impl DeviceKind {
    /// Lower-case name (`"cpu"`, `"gpu"`…).
    pub const fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Other => "other",
        }
    }
}

/// What the driver knows about one OpenCL device.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// Position in [`devices`]: platforms in ICD order, each platform's devices in its order.
    pub index: usize,
    /// Platform name (`"Portable Computing Language"`).
    pub platform: String,
    /// Device name (`"pthread-skylake-avx512-…"`).
    pub name: String,
    /// Device version string (`"OpenCL 3.0 PoCL …"`).
    pub version: String,
    /// CPU, GPU, accelerator or other.
    pub kind: DeviceKind,
    /// Compute units (`CL_DEVICE_MAX_COMPUTE_UNITS`).
    pub compute_units: u32,
    /// Local memory per work-group, bytes (`CL_DEVICE_LOCAL_MEM_SIZE`).
    pub local_mem_bytes: u64,
    /// Global memory, bytes.
    pub global_mem_bytes: u64,
    /// Largest single buffer, bytes (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    /// Most work-items in one work-group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    pub max_work_group_size: usize,
    /// Most work-items along each of the first two work-group dimensions.
    pub max_work_item_sizes: [usize; 2],
    /// Most bytes of arguments one kernel takes (`CL_DEVICE_MAX_PARAMETER_SIZE`): from
    /// [`mvision_kernels::TAPS_PARAM_BYTES`] on, filter coefficients are passed by value.
    pub max_parameter_bytes: usize,
    /// Whether device and host share memory (`CL_DEVICE_HOST_UNIFIED_MEMORY`; for devices that
    /// no longer report it, true for CPU devices): then [`crate::Context::alloc_mapped`] images
    /// are zero-copy.
    pub unified_memory: bool,
    /// NVIDIA compute capability `(major, minor)` (`cl_nv_device_attribute_query`), `None` on
    /// other devices. From 6.1 on, the filter kernels are built with `-DMV_NV_PTX=1` and use
    /// the PTX `dp2a` instruction.
    pub nv_compute_capability: Option<(u32, u32)>,
}

impl DeviceInfo {
    /// Whether the device runs PTX `dp2a` (NVIDIA, compute capability 6.1 or later).
    pub fn has_dp2a(&self) -> bool {
        self.nv_compute_capability.is_some_and(|cc| cc >= (6, 1))
    }

    /// Whether the device runs PTX `mma.m16n8k16` with 8-bit integer operands (NVIDIA,
    /// compute capability 8.0 or later): its filter program is then built with
    /// `-DMV_NV_MMA=1`.
    pub fn has_mma(&self) -> bool {
        self.nv_compute_capability.is_some_and(|cc| cc >= (8, 0))
    }

    /// `"platform device"`, the string `MVISION_OPENCL_DEVICE` matches against.
    pub fn full_name(&self) -> String {
        format!("{} {}", self.platform, self.name)
    }
}

/// Runs `f`, turning a panic inside the OpenCL binding into [`Error::Unavailable`].
pub(crate) fn guarded<R>(what: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Err(Error::Unavailable(format!(
            "the OpenCL runtime failed during {what}: {msg}"
        )))
    })
}

/// Every device with its id, in [`DeviceInfo::index`] order.
pub(crate) fn enumerate() -> Result<Vec<(DeviceInfo, Device)>> {
    guarded("device enumeration", || {
        let platforms = get_platforms().map_err(Error::cl("clGetPlatformIDs"))?;
        let mut found = Vec::new();
        for platform in &platforms {
            let platform_name = platform
                .name()
                .map_err(Error::cl("clGetPlatformInfo"))?
                .trim()
                .to_owned();
            let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
                Ok(ids) => ids,
                // A platform without devices is not an error; skip it.
                Err(e) if e.0 == CL_DEVICE_NOT_FOUND => continue,
                Err(e) => return Err(Error::from_code("clGetDeviceIDs", e.0)),
            };
            for id in ids {
                let device = Device::new(id);
                let info = describe(found.len(), &platform_name, &device)?;
                found.push((info, device));
            }
        }
        if found.is_empty() {
            return Err(Error::Unavailable(format!(
                "no OpenCL device found ({} platform(s))",
                platforms.len()
            )));
        }
        Ok(found)
    })
}

fn describe(index: usize, platform: &str, d: &Device) -> Result<DeviceInfo> {
    let q = Error::cl("clGetDeviceInfo");
    let ty = d.dev_type().map_err(&q)?;
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceKind::Accelerator
    } else {
        DeviceKind::Other
    };
    let sizes = d.max_work_item_sizes().map_err(&q)?;
    let item = |i: usize| sizes.get(i).copied().unwrap_or(1);
    Ok(DeviceInfo {
        index,
        platform: platform.to_owned(),
        name: d.name().map_err(&q)?.trim().to_owned(),
        version: d.version().map_err(&q)?.trim().to_owned(),
        kind,
        compute_units: d.max_compute_units().map_err(&q)?,
        local_mem_bytes: d.local_mem_size().map_err(&q)?,
        global_mem_bytes: d.global_mem_size().map_err(&q)?,
        max_alloc_bytes: d.max_mem_alloc_size().map_err(&q)?,
        max_work_group_size: d.max_work_group_size().map_err(&q)?,
        max_work_item_sizes: [item(0), item(1)],
        max_parameter_bytes: d.max_parameter_size().map_err(&q)?,
        // Deprecated in OpenCL 2.0, so a 3.0 device may decline to answer.
        unified_memory: d.host_unified_memory().unwrap_or(kind == DeviceKind::Cpu),
        nv_compute_capability: nv_compute_capability(d),
    })
}

/// The compute capability of an NVIDIA device (`None` when the extension is missing or the
/// query fails).
fn nv_compute_capability(d: &Device) -> Option<(u32, u32)> {
    let ext = d.extensions().ok()?;
    if !ext
        .split_whitespace()
        .any(|e| e == "cl_nv_device_attribute_query")
    {
        return None;
    }
    Some((
        d.compute_capability_major_nv().ok()?,
        d.compute_capability_minor_nv().ok()?,
    ))
}

/// Every OpenCL device of every platform, for `mvision info` and device selection.
///
/// Errors: [`Error::Unavailable`] when the OpenCL library cannot be loaded or no platform or
/// device exists; [`Error::Device`] when a query fails.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    Ok(enumerate()?.into_iter().map(|(info, _)| info).collect())
}

/// Picks a device from the value of `MVISION_OPENCL_DEVICE`: empty → 0, a number → that index,
/// anything else → the first device whose `"platform device"` name contains it (ignoring case).
pub(crate) fn select(infos: &[DeviceInfo], spec: &str) -> Result<usize> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Ok(0);
    }
    if let Ok(i) = spec.parse::<usize>() {
        return Ok(i);
    }
    let needle = spec.to_lowercase();
    infos
        .iter()
        .position(|d| d.full_name().to_lowercase().contains(&needle))
        .ok_or_else(|| {
            let names: Vec<String> = infos
                .iter()
                .map(|d| format!("{}: {}", d.index, d.full_name()))
                .collect();
            Error::Unavailable(format!(
                "MVISION_OPENCL_DEVICE={spec:?} matches no device (have {})",
                names.join("; ")
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(index: usize, platform: &str, name: &str) -> DeviceInfo {
        DeviceInfo {
            index,
            platform: platform.to_owned(),
            name: name.to_owned(),
            version: String::new(),
            kind: DeviceKind::Gpu,
            compute_units: 1,
            local_mem_bytes: 1,
            global_mem_bytes: 1,
            max_alloc_bytes: 1,
            max_work_group_size: 1,
            max_work_item_sizes: [1, 1],
            max_parameter_bytes: 1,
            unified_memory: false,
            nv_compute_capability: None,
        }
    }

    #[test]
    fn env_selects_by_index_or_case_insensitive_name() {
        let all = [
            info(0, "Portable Computing Language", "pthread-skylake"),
            info(1, "NVIDIA CUDA", "NVIDIA H100"),
        ];
        assert_eq!(select(&all, ""), Ok(0));
        assert_eq!(select(&all, " 1 "), Ok(1));
        assert_eq!(
            select(&all, "7"),
            Ok(7),
            "out of range is Context::new's to report"
        );
        assert_eq!(select(&all, "portable"), Ok(0));
        assert_eq!(select(&all, "nvidia h1"), Ok(1));
        assert_eq!(
            select(&all, "cuda nvidia"),
            Ok(1),
            "\"platform device\" is one string"
        );
        match select(&all, "adreno") {
            Err(Error::Unavailable(why)) => assert!(why.contains("1: NVIDIA CUDA NVIDIA H100")),
            other => panic!("{other:?}"),
        }
    }
}
