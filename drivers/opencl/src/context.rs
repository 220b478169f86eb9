//! The context: one device, one in-order queue, and the programs compiled for it.
//!
//! Programs are compiled from `mvision_kernels::source` at first use and cached per
//! `(KernelSet, Tile)`; a failed build is cached too, so a broken program is reported (with its
//! log) on every use without recompiling. Each kernel object sits behind its own mutex: setting
//! arguments and enqueueing is one critical section, so a `Context` can be shared by threads.

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mvision_kernels::{build_options, source, Backend, KernelSet, Tile};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::Device;
use opencl3::error_codes::{
    CL_BUILD_PROGRAM_FAILURE, CL_INVALID_KERNEL_NAME, CL_INVALID_WORK_GROUP_SIZE,
};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY};
use opencl3::program::Program;
use opencl3::types::cl_mem;

use crate::device::{enumerate, guarded, select, DeviceInfo};
use crate::error::{Error, Result};

/// Environment variable naming the device [`Context::from_env`] opens.
pub const DEVICE_ENV: &str = "MVISION_OPENCL_DEVICE";

static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A compiled program and its kernels.
struct Built {
    _program: Program,
    /// Each kernel with the largest work-group it may run with on this device.
    kernels: HashMap<&'static str, (Mutex<Kernel>, usize)>,
}

type ProgramSlot = Arc<OnceLock<Result<Arc<Built>>>>;

/// One OpenCL device with an in-order queue and a program cache.
///
/// Operations enqueue their work and return; [`Context::download`], [`Context::map`] and
/// [`Context::sync`] wait for it. Dropping a context waits for its queue to drain.
pub struct Context {
    info: DeviceInfo,
    device: Device,
    // Field order is drop order: programs and queue before the context they belong to.
    programs: Mutex<HashMap<(KernelSet, Tile), ProgramSlot>>,
    queue: CommandQueue,
    context: ClContext,
    default_tile: Tile,
    id: u64,
}

/// One kernel argument, in the order of `kernels/SPEC.md`.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// A buffer (`__global T*`).
    Mem(cl_mem),
    /// A null buffer pointer (an optional output that is not wanted).
    NullMem,
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
}

impl Context {
    /// Opens device `index` of [`crate::devices`].
    ///
    /// Errors: [`Error::Unavailable`] without OpenCL or without that device; [`Error::Device`] /
    /// [`Error::OutOfDeviceMemory`] when the context or queue cannot be created.
    pub fn new(index: usize) -> Result<Self> {
        let mut all = enumerate()?;
        let count = all.len();
        if index >= count {
            return Err(Error::Unavailable(format!(
                "no OpenCL device {index} ({count} found)"
            )));
        }
        let (info, device) = all.swap_remove(index);
        guarded("context creation", || Self::open(info, device))
    }

    /// Opens the device named by `MVISION_OPENCL_DEVICE`: an index into [`crate::devices`], or
    /// a case-insensitive substring of `"platform device"` (e.g. `portable` for PoCL, whose
    /// platform is "Portable Computing Language", or `nvidia`); unset or empty means device 0.
    ///
    /// Errors: as [`Context::new`]; [`Error::Unavailable`] when the name matches no device.
    pub fn from_env() -> Result<Self> {
        let spec = std::env::var(DEVICE_ENV).unwrap_or_default();
        let infos: Vec<DeviceInfo> = enumerate()?.into_iter().map(|(i, _)| i).collect();
        Self::new(select(&infos, &spec)?)
    }

    fn open(info: DeviceInfo, device: Device) -> Result<Self> {
        let context = ClContext::from_device(&device).map_err(Error::cl("clCreateContext"))?;
        // In-order, no profiling. clCreateCommandQueue exists in every OpenCL version (deprecated
        // but present in 2.x and 3.0), unlike its 2.0 replacement.
        let queue =
            CommandQueue::create_default(&context, 0).map_err(Error::cl("clCreateCommandQueue"))?;
        let default_tile = default_tile(&info);
        Ok(Self {
            info,
            device,
            programs: Mutex::new(HashMap::new()),
            queue,
            context,
            default_tile,
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The work-group shape used for the separable, Sobel, naive, pyramid and resize kernels:
    /// 16 × 16, or the largest of 16 × 8, 8 × 8, 8 × 4, 4 × 4, 2 × 2, 1 × 1 the device accepts.
    pub fn default_tile(&self) -> Tile {
        self.default_tile
    }

    /// Waits until every enqueued operation has finished.
    ///
    /// Errors: [`Error::Device`] if the queue reports a failure.
    pub fn sync(&self) -> Result<()> {
        self.queue.finish().map_err(Error::cl("clFinish"))
    }

    /// Compiles `set` for `tile` now rather than at first use (each `(set, tile)` is compiled
    /// once per context; the tile only matters for [`KernelSet::Filter`]).
    ///
    /// Errors: [`Error::KernelBuild`] with the compiler log; [`Error::Device`].
    pub fn prepare(&self, set: KernelSet, tile: Tile) -> Result<()> {
        self.program(set, tile).map(|_| ())
    }

    /// Compiles an arbitrary OpenCL C source for this device, without caching it: a
    /// diagnostic hook (used by the tests to check that a compiler error surfaces as
    /// [`Error::KernelBuild`] with its log). The library's own kernels never go through it.
    ///
    /// Errors: [`Error::KernelBuild`] (kernel `"custom"`) with the compiler log.
    pub fn build_custom(&self, src: &str) -> Result<()> {
        self.build_program("custom".to_owned(), src, "").map(|_| ())
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn cl_context(&self) -> &ClContext {
        &self.context
    }

    pub(crate) fn queue(&self) -> &CommandQueue {
        &self.queue
    }

    fn build_program(&self, name: String, src: &str, options: &str) -> Result<Program> {
        let mut program = Program::create_from_source(&self.context, src)
            .map_err(Error::cl("clCreateProgramWithSource"))?;
        match program.build(&[self.device.id()], options) {
            Ok(()) => Ok(program),
            Err(e) if e.0 == CL_BUILD_PROGRAM_FAILURE => {
                let log = program
                    .get_build_log(self.device.id())
                    .unwrap_or_else(|e| format!("(no build log: {})", Error::code_name(e.0)));
                Err(Error::KernelBuild { kernel: name, log })
            }
            Err(e) => Err(Error::from_code("clBuildProgram", e.0)),
        }
    }

    fn compile(&self, set: KernelSet, tile: Tile) -> Result<Arc<Built>> {
        let name = format!("the {} kernels (tile {}x{})", set.name(), tile.w, tile.h);
        let program =
            self.build_program(name, &source(set, Backend::OpenCl), &build_options(tile))?;
        let mut kernels = HashMap::new();
        for &k in set.kernel_names() {
            let kernel = Kernel::create(&program, k).map_err(Error::cl("clCreateKernel"))?;
            let max_group = kernel
                .get_work_group_size(self.device.id())
                .map_err(Error::cl("clGetKernelWorkGroupInfo"))?;
            kernels.insert(k, (Mutex::new(kernel), max_group));
        }
        Ok(Arc::new(Built {
            _program: program,
            kernels,
        }))
    }

    /// The program of `(set, tile)`, compiled on first use. Concurrent first uses of one key
    /// compile it once; different keys compile in parallel.
    fn program(&self, set: KernelSet, tile: Tile) -> Result<Arc<Built>> {
        let tile = if set.uses_tile() { tile } else { Tile::DEFAULT };
        let slot: ProgramSlot = {
            let mut map = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
            map.entry((set, tile)).or_default().clone()
        };
        slot.get_or_init(|| guarded("kernel compilation", || self.compile(set, tile)))
            .clone()
    }

    /// The largest work-group kernel `name` of `(set, tile)` may run with on this device
    /// (`CL_KERNEL_WORK_GROUP_SIZE`; compiles the program if needed).
    pub(crate) fn kernel_max_group(
        &self,
        set: KernelSet,
        tile: Tile,
        name: &'static str,
    ) -> Result<usize> {
        let built = self.program(set, tile)?;
        built
            .kernels
            .get(name)
            .map(|(_, n)| *n)
            .ok_or(Error::Device {
                call: "clCreateKernel",
                code: CL_INVALID_KERNEL_NAME,
            })
    }

    /// Sets `args` on kernel `name` of `(set, tile)` and enqueues it over `global` (rounded up
    /// to whole work-groups) with work-groups of `local`.
    pub(crate) fn launch(
        &self,
        set: KernelSet,
        tile: Tile,
        name: &'static str,
        global: [usize; 2],
        local: [usize; 2],
        args: &[Arg],
    ) -> Result<()> {
        let built = self.program(set, tile)?;
        let (kernel, max_group) = built.kernels.get(name).ok_or(Error::Device {
            call: "clCreateKernel",
            code: CL_INVALID_KERNEL_NAME,
        })?;
        if local[0] * local[1] > *max_group {
            return Err(Error::Device {
                call: "work-group larger than the compiled kernel allows on this device",
                code: CL_INVALID_WORK_GROUP_SIZE,
            });
        }
        let kernel = kernel.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, arg) in args.iter().enumerate() {
            let i = i as u32;
            let null: cl_mem = ptr::null_mut();
            // SAFETY: every call site passes the arguments of `kernels/SPEC.md` for `name`, in
            // order, with the kernel's C types: buffers as `cl_mem` handles that outlive the
            // enqueue (OpenCL retains them until the kernel has run), `int` as i32, `float` as
            // f32; a null `cl_mem` is allowed for a buffer argument the kernel does not read.
            let set = unsafe {
                match arg {
                    Arg::Mem(m) => kernel.set_arg(i, m),
                    Arg::NullMem => kernel.set_arg(i, &null),
                    Arg::I32(v) => kernel.set_arg(i, v),
                    Arg::F32(v) => kernel.set_arg(i, v),
                }
            };
            set.map_err(Error::cl("clSetKernelArg"))?;
        }
        let global = [
            global[0].div_ceil(local[0]) * local[0],
            global[1].div_ceil(local[1]) * local[1],
        ];
        // SAFETY: the kernel's arguments are all set above; `global` and `local` are arrays of
        // the 2 dimensions given; no event wait list.
        unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                2,
                ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(Error::cl("clEnqueueNDRangeKernel"))?;
        Ok(())
    }

    /// A read-only device copy of `data` (filter coefficients). The buffer may be dropped right
    /// after the kernel using it is enqueued: OpenCL keeps it alive until the kernel has run.
    pub(crate) fn constant_buffer<C: Copy>(&self, data: &[C]) -> Result<Buffer<C>> {
        // SAFETY: CL_MEM_COPY_HOST_PTR copies `data.len()` elements from the pointer during the
        // call; the pointer is valid (and only read) for that long.
        unsafe {
            Buffer::<C>::create(
                &self.context,
                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                data.len(),
                data.as_ptr() as *mut c_void,
            )
        }
        .map_err(Error::cl("clCreateBuffer"))
    }

    /// Checks that a tile for the tiled filters is positive and fits this device's work-group
    /// and local-memory limits (before anything is compiled for it).
    pub(crate) fn check_tile(&self, w: usize, h: usize) -> Result<Tile> {
        if w == 0 || h == 0 {
            return Err(Error::Invalid(mvision_core::Error::ZeroSize));
        }
        let tile = Tile::new(w, h);
        if !fits_work_group(&self.info, tile) {
            return Err(Error::Device {
                call: "tiled filter: the tile exceeds the device's work-group size limits",
                code: CL_INVALID_WORK_GROUP_SIZE,
            });
        }
        if !fits_local_mem(&self.info, tile) {
            return Err(Error::Device {
                call: "tiled filter: the tile's halo exceeds the device's local memory",
                code: CL_INVALID_WORK_GROUP_SIZE,
            });
        }
        Ok(tile)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Nothing enqueued refers to host memory (uploads block, downloads wait), so this only
        // keeps teardown orderly; an error here has nowhere to go.
        let _ = self.queue.finish();
    }
}

/// The handle of a buffer, for [`Arg::Mem`].
pub(crate) fn mem<T>(b: &Buffer<T>) -> Arg {
    Arg::Mem(b.get())
}

fn fits_work_group(info: &DeviceInfo, t: Tile) -> bool {
    t.w.checked_mul(t.h)
        .is_some_and(|n| n <= info.max_work_group_size)
        && t.w <= info.max_work_item_sizes[0]
        && t.h <= info.max_work_item_sizes[1]
}

fn fits_local_mem(info: &DeviceInfo, t: Tile) -> bool {
    (KernelSet::Filter.local_mem_bytes(t) as u64) <= info.local_mem_bytes
}

fn default_tile(info: &DeviceInfo) -> Tile {
    [(16, 16), (16, 8), (8, 8), (8, 4), (4, 4), (2, 2)]
        .into_iter()
        .map(|(w, h)| Tile::new(w, h))
        .find(|&t| fits_work_group(info, t) && fits_local_mem(info, t))
        .unwrap_or(Tile::new(1, 1))
}
