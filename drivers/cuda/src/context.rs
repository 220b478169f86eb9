//! A context: one device, one stream, its compiled programs and the images it allocates.
//!
//! Everything a context enqueues goes to its one non-blocking stream, in call order, so work on
//! an image never needs events: uploads, kernels and downloads on the same context are ordered
//! by the stream itself. That is why `cudarc`'s per-buffer event tracking is switched off (it
//! would record two events per buffer per launch), and why a context refuses images that
//! another context allocated.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use mvision_core::{Error as CoreError, Pixel};
use mvision_kernels::{KernelSet, Tile};

use crate::device::{self, DeviceInfo};
use crate::error::{driver, Error, Result};
use crate::image::DeviceImage;
use crate::loader;
use crate::nvrtc::{self, Target};

/// Coefficient tables kept on the device per context (a filter reused frame after frame is
/// uploaded once); beyond this many distinct tables the cache starts over.
const COEFF_CACHE_ENTRIES: usize = 64;

/// The environment variable [`Context::from_env`] reads: a device index.
pub const DEVICE_ENV: &str = "MVISION_CUDA_DEVICE";

/// One CUDA device with one stream and a cache of compiled kernel programs.
///
/// Operations enqueue work and return; [`Context::download`] and [`Context::sync`] wait.
#[derive(Debug)]
pub struct Context {
    pub(crate) id: u64,
    info: DeviceInfo,
    target: Target,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    programs: Mutex<HashMap<(KernelSet, Tile), Arc<Module>>>,
    coeffs: Mutex<HashMap<Vec<u8>, CudaSlice<u8>>>,
}

/// A loaded program and the functions looked up in it so far.
#[derive(Debug)]
struct Module {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
}

/// Held from a coefficient lookup until the launch that reads the tables is queued.
pub(crate) type CoeffGuard<'a> = std::sync::MutexGuard<'a, HashMap<Vec<u8>, CudaSlice<u8>>>;

/// One kernel argument, by value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    /// A device pointer (`T*` in the kernel).
    Ptr(CUdeviceptr),
    /// An `int`.
    I32(i32),
    /// A `float`.
    F32(f32),
}

impl Context {
    /// Opens device `index` of [`crate::devices`]: its primary context, a new stream, and the
    /// NVRTC target that matches its compute capability.
    ///
    /// Errors: [`Error::Unavailable`] without libcuda or NVRTC, or without device `index`;
    /// [`Error::Device`] / [`Error::OutOfDeviceMemory`] if the driver fails.
    pub fn new(index: usize) -> Result<Self> {
        loader::require_driver()?;
        loader::require_nvrtc()?;
        loader::guard("CUDA driver", || {
            if !device::init()? {
                return Err(Error::Unavailable("the CUDA driver sees no device".into()));
            }
            device::require_driver_version()?;
            let info = device::query(index)?;
            let target = nvrtc::target_for(info.compute_capability)?;
            let ctx = CudaContext::new(index).map_err(driver("cuDevicePrimaryCtxRetain"))?;
            // SAFETY: every buffer this context allocates is used on `stream` only (images of
            // other contexts are refused), so stream order replaces cudarc's event tracking.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
            static NEXT_ID: AtomicU64 = AtomicU64::new(1);
            Ok(Self {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                info,
                target,
                ctx,
                stream,
                programs: Mutex::new(HashMap::new()),
                coeffs: Mutex::new(HashMap::new()),
            })
        })
    }

    /// Opens the device named by `MVISION_CUDA_DEVICE` (an index into [`crate::devices`]), or
    /// device 0 when it is unset.
    ///
    /// Errors: as [`Context::new`]; [`Error::Invalid`] (`InvalidArgument`) when the variable is
    /// set but is not an index.
    pub fn from_env() -> Result<Self> {
        // Whether CUDA is here at all comes first: without it, the variable does not matter.
        loader::require_driver()?;
        let index = match std::env::var(DEVICE_ENV) {
            Ok(v) => v
                .trim()
                .parse::<usize>()
                .map_err(|_| Error::Invalid(CoreError::InvalidArgument))?,
            Err(_) => 0,
        };
        Self::new(index)
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The NVRTC target programs are compiled for on this device.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The block shape of the kernels that take no [`crate::Variant`] (separable, Sobel,
    /// naive dense, pyramid, resize): 16 × 16, which every CUDA device runs.
    pub fn default_tile(&self) -> Tile {
        Tile::DEFAULT
    }

    /// Compiles and loads `set` for `tile` now rather than at first use (each `(set, tile)` is
    /// compiled once per context; the tile only matters for [`KernelSet::Filter`]).
    ///
    /// Errors: [`Error::KernelBuild`] with the NVRTC log; [`Error::Device`].
    pub fn prepare(&self, set: KernelSet, tile: Tile) -> Result<()> {
        self.module(set, tile).map(|_| ())
    }

    /// Compiles an arbitrary CUDA source with NVRTC for this device, without loading or caching
    /// it: a diagnostic hook (tests use it to check that compiler errors surface as
    /// [`Error::KernelBuild`] with the log). The library's own kernels never go through it.
    ///
    /// Errors: [`Error::KernelBuild`] (kernel `"custom"`) with the NVRTC log.
    pub fn build_custom(&self, src: &str) -> Result<()> {
        nvrtc::compile("custom", src, self.target, &[]).map(|_| ())
    }

    /// Waits for all work queued on this context.
    ///
    /// Errors: [`Error::Device`] for a failed kernel or copy queued earlier.
    pub fn sync(&self) -> Result<()> {
        self.stream_sync()
    }

    pub(crate) fn stream_sync(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))?;
        // Errors from drops (asynchronous frees) are parked in the context; report them here.
        self.ctx.check_err().map_err(driver("cuMemFreeAsync"))
    }

    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(driver("cuCtxSetCurrent"))
    }

    /// Refuses images that another context allocated: their work is ordered on another stream
    /// (or lives on another device), so this one cannot use them safely.
    ///
    /// Errors: [`Error::Invalid`] (`InvalidArgument`).
    pub(crate) fn owns<T: Pixel>(&self, img: &DeviceImage<T>) -> Result<()> {
        if img.context_id() == self.id {
            Ok(())
        } else {
            Err(Error::Invalid(CoreError::InvalidArgument))
        }
    }

    /// The device addresses of coefficient tables with these bytes, uploading each on first
    /// use. All tables of one launch come from one call, and the caller holds the returned
    /// guard until the launch is queued: the cache may start over (freeing tables in stream
    /// order) only on entry, never between a lookup and the launch that reads the tables, even
    /// with other threads launching on this context.
    pub(crate) fn coeffs<const N: usize>(
        &self,
        tables: [&[u8]; N],
    ) -> Result<(CoeffGuard<'_>, [CUdeviceptr; N])> {
        let mut cache = self.coeffs.lock().unwrap_or_else(PoisonError::into_inner);
        let missing = tables.iter().filter(|t| !cache.contains_key(**t)).count();
        if cache.len() + missing > COEFF_CACHE_ENTRIES {
            // Frees are stream-ordered: kernels queued earlier still read valid tables.
            cache.clear();
        }
        let mut ptrs = [0; N];
        for (ptr, bytes) in ptrs.iter_mut().zip(tables) {
            if !cache.contains_key(bytes) {
                let mut slice = self
                    .stream
                    .alloc_zeros::<u8>(bytes.len().max(1))
                    .map_err(driver("cuMemAllocAsync"))?;
                if !bytes.is_empty() {
                    self.stream
                        .memcpy_htod(bytes, &mut slice)
                        .map_err(driver("cuMemcpyHtoDAsync"))?;
                }
                cache.insert(bytes.to_vec(), slice);
            }
            *ptr = cache[bytes].device_ptr(&self.stream).0;
        }
        Ok((cache, ptrs))
    }

    /// The compiled and loaded program of `set` built for `tile`, compiling it on first use.
    fn module(&self, set: KernelSet, tile: Tile) -> Result<Arc<Module>> {
        let tile = nvrtc::program_tile(set, tile);
        let mut programs = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = programs.get(&(set, tile)) {
            return Ok(m.clone());
        }
        let compiled = nvrtc::compile_kernel_set(set, tile, self.target)?;
        let image = match compiled.cubin {
            Some(cubin) => Ptx::from_binary(cubin),
            None => Ptx::from_src(compiled.ptx),
        };
        let module = loader::guard("CUDA driver", || {
            self.ctx
                .load_module(image)
                .map_err(driver("cuModuleLoadData"))
        })?;
        let m = Arc::new(Module {
            module,
            functions: Mutex::new(HashMap::new()),
        });
        programs.insert((set, tile), m.clone());
        Ok(m)
    }

    /// Launches kernel `name` of `set` (built for `tile`) over a `grid` of `block`s.
    pub(crate) fn launch(
        &self,
        set: KernelSet,
        tile: Tile,
        name: &'static str,
        grid: (u32, u32),
        block: (u32, u32),
        args: &[Arg],
    ) -> Result<()> {
        let module = self.module(set, tile)?;
        let func = {
            let mut functions = module
                .functions
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match functions.get(name) {
                Some(f) => f.clone(),
                None => {
                    let f = module
                        .module
                        .load_function(name)
                        .map_err(driver("cuModuleGetFunction"))?;
                    functions.insert(name, f.clone());
                    f
                }
            }
        };
        let mut builder = self.stream.launch_builder(&func);
        for arg in args {
            match arg {
                Arg::Ptr(p) => builder.arg(p),
                Arg::I32(v) => builder.arg(v),
                Arg::F32(v) => builder.arg(v),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (grid.0, grid.1, 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `args` match the kernel's parameters in number, order and type (each op
        // builds them from kernels/SPEC.md's table); every pointer is a live allocation of this
        // context sized for the `grid × block` range, which the kernels bounds-check.
        unsafe { builder.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Kernels still queued may come from the modules about to be unloaded. Images outlive
        // the context safely (they hold the stream and the CUDA context by reference count).
        let _ = self.stream.synchronize();
    }
}
