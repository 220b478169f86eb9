//! Backends as values and as bit sets (the same bits as the C API's `MV_BACKEND_*`).

use std::sync::OnceLock;

/// One backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU reference implementation (`mvision-core`).
    Cpu,
    /// OpenCL (any ICD: NVIDIA, PoCL, Adreno, Mali…).
    OpenCl,
    /// CUDA through the driver API and NVRTC.
    Cuda,
}

impl Backend {
    /// Every backend, in flag order.
    pub const ALL: [Backend; 3] = [Backend::Cpu, Backend::OpenCl, Backend::Cuda];

    /// The backend's bit (`1`, `2`, `4`, as `MV_BACKEND_CPU/OPENCL/CUDA`).
    pub const fn bit(self) -> u32 {
        match self {
            Backend::Cpu => 1,
            Backend::OpenCl => 2,
            Backend::Cuda => 4,
        }
    }

    /// Lower-case name (`"cpu"`, `"opencl"`, `"cuda"`).
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::OpenCl => "opencl",
            Backend::Cuda => "cuda",
        }
    }
}

/// A set of backends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BackendSet(u32);

impl BackendSet {
    /// Only the CPU.
    pub const CPU: BackendSet = BackendSet(1);
    /// Every defined backend.
    pub const ALL: BackendSet = BackendSet(7);

    /// The set with these bits, or `None` if a bit names no backend.
    pub const fn from_bits(bits: u32) -> Option<Self> {
        if bits & !Self::ALL.0 == 0 {
            Some(Self(bits))
        } else {
            None
        }
    }

    /// The bits of the set.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// True if `b` is in the set.
    pub const fn contains(self, b: Backend) -> bool {
        self.0 & b.bit() != 0
    }

    /// The set with `b` added.
    pub const fn with(self, b: Backend) -> Self {
        Self(self.0 | b.bit())
    }

    /// The backends in the set, in flag order.
    pub fn iter(self) -> impl Iterator<Item = Backend> {
        Backend::ALL.into_iter().filter(move |b| self.contains(*b))
    }
}

/// The backends with at least one usable device on this machine (probed once, then cached).
/// The CPU is always included; a missing driver library simply leaves its backend out.
pub fn available() -> BackendSet {
    static PROBED: OnceLock<BackendSet> = OnceLock::new();
    *PROBED.get_or_init(|| {
        let mut set = BackendSet::CPU;
        if mvision_opencl::devices().is_ok_and(|d| !d.is_empty()) {
            set = set.with(Backend::OpenCl);
        }
        if mvision_cuda::devices().is_ok_and(|d| !d.is_empty()) {
            set = set.with(Backend::Cuda);
        }
        set
    })
}

/// What `mvision info` and the C API report about one device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSummary {
    /// The backend the device belongs to.
    pub backend: Backend,
    /// Index for [`crate::Context::with_device`].
    pub index: usize,
    /// Platform name (OpenCL), driver version (CUDA), "host" (CPU).
    pub platform: String,
    /// Device name.
    pub name: String,
    /// Compute units (OpenCL) or streaming multiprocessors (CUDA); logical cores on the CPU.
    pub compute_units: u32,
    /// Local (shared) memory per work-group in bytes; 0 on the CPU.
    pub local_mem_bytes: u64,
    /// Largest work-group (thread block) size; 1 on the CPU.
    pub max_work_group_size: usize,
    /// Global memory in bytes; 0 on the CPU (not probed).
    pub global_mem_bytes: u64,
    /// Whether the device shares memory with the host (zero-copy images possible).
    pub unified_memory: bool,
    /// Most bytes of arguments one kernel launch takes (OpenCL `CL_DEVICE_MAX_PARAMETER_SIZE`;
    /// CUDA's guaranteed 4096; 0 on the CPU). Filter coefficients travel as kernel arguments
    /// where at least `mvision_kernels::TAPS_PARAM_BYTES` fit, else in an uploaded table.
    pub max_parameter_bytes: usize,
    /// Whether its filter kernels take their coefficients as arguments (by value) rather than
    /// from an uploaded table ([`crate::FilterTuning::taps_by_value`], which also reads
    /// `MVISION_FILTER_TAPS`); false on the CPU.
    pub taps_by_value: bool,
}

/// Bytes of kernel arguments every CUDA device takes (the limit before CUDA 12.1 on Volta).
const CUDA_PARAMETER_BYTES: usize = 4096;

/// The summary of a driver's `DeviceInfo` (both drivers name these fields alike).
macro_rules! summary {
    ($backend:expr, $kb:expr, $d:ident, $platform:expr, $params:expr) => {
        DeviceSummary {
            backend: $backend,
            index: $d.index,
            platform: $platform,
            name: $d.name,
            compute_units: $d.compute_units,
            local_mem_bytes: $d.local_mem_bytes,
            max_work_group_size: $d.max_work_group_size,
            global_mem_bytes: $d.global_mem_bytes,
            unified_memory: $d.unified_memory,
            max_parameter_bytes: $params,
            taps_by_value: $crate::FilterTuning::get().taps_by_value($kb, $params),
        }
    };
}

/// The devices of `backend` on this machine (one for the CPU).
///
/// Errors: the driver's [`crate::ErrorKind::Unavailable`] when its library or platform is
/// missing.
pub fn devices(backend: Backend) -> crate::Result<Vec<DeviceSummary>> {
    Ok(match backend {
        Backend::Cpu => vec![DeviceSummary {
            backend,
            index: 0,
            platform: "host".into(),
            name: format!("{} CPU", std::env::consts::ARCH),
            compute_units: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            local_mem_bytes: 0,
            max_work_group_size: 1,
            global_mem_bytes: 0,
            unified_memory: true,
            max_parameter_bytes: 0,
            taps_by_value: false,
        }],
        Backend::OpenCl => mvision_opencl::devices()?
            .into_iter()
            .map(|d| {
                summary!(
                    backend,
                    mvision_kernels::Backend::OpenCl,
                    d,
                    d.platform,
                    d.max_parameter_bytes
                )
            })
            .collect(),
        Backend::Cuda => mvision_cuda::devices()?
            .into_iter()
            .map(|d| {
                let (major, minor) = d.driver_version;
                let (sm_major, sm_minor) = d.compute_capability;
                let platform = format!("CUDA driver {major}.{minor}, sm_{sm_major}{sm_minor}");
                summary!(
                    backend,
                    mvision_kernels::Backend::Cuda,
                    d,
                    platform,
                    CUDA_PARAMETER_BYTES
                )
            })
            .collect(),
    })
}
