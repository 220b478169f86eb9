//! Run-time compilation of kernel programs with NVRTC.
//!
//! This module needs NVRTC only: nothing here touches libcuda, so CI machines without a GPU or
//! a driver compile every kernel program for the architectures we ship to (see
//! `tests/nvrtc_compile.rs`). A program is compiled for a *real* architecture (`sm_87`) when
//! NVRTC knows the device's, giving a CUBIN the driver loads without its PTX JIT (so a newer
//! NVRTC than the driver still works within one CUDA major version); for a device newer than
//! NVRTC, it is compiled for the newest *virtual* architecture NVRTC has (`compute_90`), and the
//! driver JIT-compiles the PTX.

use std::ffi::{c_char, c_int, CStr, CString};

use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

use mvision_kernels::{Backend, KernelSet, Tile};

use crate::error::{Error, Result};
use crate::loader;

/// A compilation target: `sm_XY` (PTX and CUBIN) or `compute_XY` (PTX only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A real architecture, compute capability `(major, minor)`: NVRTC emits SASS too.
    Real(u32, u32),
    /// A virtual architecture: PTX only, JIT-compiled by the driver at load time.
    Virtual(u32, u32),
}

impl Target {
    /// The value of `--gpu-architecture`, e.g. `sm_87` or `compute_90`.
    pub fn arch_flag(self) -> String {
        match self {
            Target::Real(ma, mi) => format!("sm_{ma}{mi}"),
            Target::Virtual(ma, mi) => format!("compute_{ma}{mi}"),
        }
    }
}

/// A compiled program: always its PTX, and the CUBIN for a [`Target::Real`] target.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// PTX text (what the driver JIT-compiles, and what tests search for kernel names).
    pub ptx: String,
    /// SASS for the real target, when there is one.
    pub cubin: Option<Vec<u8>>,
    /// NVRTC's log of a successful compile: empty, or its warnings.
    pub log: String,
}

/// The NVRTC version `(major, minor)`.
///
/// Errors: [`Error::Unavailable`] without NVRTC.
pub fn version() -> Result<(u32, u32)> {
    loader::require_nvrtc()?;
    loader::guard("NVRTC", || {
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: two valid out-pointers; nvrtcVersion has no other preconditions.
        status("nvrtcVersion", unsafe {
            sys::nvrtcVersion(&mut major, &mut minor)
        })?;
        Ok((major as u32, minor as u32))
    })
}

/// The real architectures this NVRTC can compile for, as `major·10 + minor` (`87`, `90`...).
///
/// Errors: [`Error::Unavailable`] without NVRTC.
pub fn supported_archs() -> Result<Vec<u32>> {
    loader::require_nvrtc()?;
    loader::guard("NVRTC", || {
        let mut n: c_int = 0;
        // SAFETY: a valid out-pointer.
        status("nvrtcGetNumSupportedArchs", unsafe {
            sys::nvrtcGetNumSupportedArchs(&mut n)
        })?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        // SAFETY: `archs` holds the `n` ints NVRTC said it will write.
        status("nvrtcGetSupportedArchs", unsafe {
            sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
        })?;
        Ok(archs.into_iter().map(|a| a.max(0) as u32).collect())
    })
}

/// The best target for a device of compute capability `cc`: the real architecture when NVRTC
/// supports it, else the newest virtual one below it.
///
/// Errors: [`Error::Unavailable`] without NVRTC or when NVRTC supports nothing at or below `cc`.
pub fn target_for(cc: (u32, u32)) -> Result<Target> {
    let want = cc.0 * 10 + cc.1;
    let archs = supported_archs()?;
    if archs.contains(&want) {
        return Ok(Target::Real(cc.0, cc.1));
    }
    archs
        .iter()
        .copied()
        .filter(|&a| a < want)
        .max()
        .map(|a| Target::Virtual(a / 10, a % 10))
        .ok_or_else(|| {
            Error::Unavailable(format!(
                "this NVRTC cannot target compute capability {}.{} (supports {archs:?})",
                cc.0, cc.1
            ))
        })
}

/// Compiles the CUDA program of kernel set `set` for work-group `tile` and `target`: the
/// source and options of `mvision_kernels` (prelude, constants, bodies; `-DMV_TILE_W/H`, and
/// `--fmad=false` except for the filter program under `MVISION_FILTER_FMA=on`, the default:
/// `mvision_kernels::program_option_list`). Sets that do not depend on the tile
/// ([`KernelSet::uses_tile`]) are built with [`Tile::DEFAULT`] whatever `tile` says, as
/// drivers key them.
///
/// Errors: as [`compile`].
pub fn compile_kernel_set(set: KernelSet, tile: Tile, target: Target) -> Result<Compiled> {
    let tile = set.program_tile(tile);
    compile(
        &format!("mv_{}_{}x{}.cu", set.name(), tile.w, tile.h),
        &mvision_kernels::source(set, Backend::Cuda),
        target,
        &mvision_kernels::program_option_list(
            set,
            tile,
            Backend::Cuda,
            mvision_kernels::FilterTuning::get().fma,
        ),
    )
}

/// Compiles `source` (named `name` in errors) for `target`, with `options` passed to NVRTC as
/// they are (one option per element, e.g. `-DMV_TILE_W=16`).
///
/// Floating-point contraction is switched off (`--fmad=false`) unless `options` choose: the
/// CPU reference computes `a·b + c` with two roundings, and a fused multiply-add would differ
/// in the last bits.
///
/// Errors: [`Error::Unavailable`] without NVRTC; [`Error::KernelBuild`] with NVRTC's log when
/// the program does not compile; [`Error::Device`] when NVRTC fails otherwise.
pub fn compile(name: &str, source: &str, target: Target, options: &[String]) -> Result<Compiled> {
    loader::require_nvrtc()?;
    let build_error = |log: String| Error::KernelBuild {
        kernel: format!("{name} ({})", target.arch_flag()),
        log,
    };
    let src = CString::new(source).map_err(|_| build_error("source contains a NUL byte".into()))?;
    let c_name = CString::new(name).map_err(|_| build_error("name contains a NUL byte".into()))?;
    let mut args = vec![format!("--gpu-architecture={}", target.arch_flag())];
    if !options
        .iter()
        .any(|o| o.trim_start_matches('-').starts_with("fmad"))
    {
        args.push("--fmad=false".to_string());
    }
    args.extend(options.iter().cloned());
    let c_args = args
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| build_error("an option contains a NUL byte".into()))?;
    let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();

    loader::guard("NVRTC", || {
        let prog = Program::create(&src, &c_name)?;
        // SAFETY: `prog` is live; `arg_ptrs` holds `len` NUL-terminated strings owned by `c_args`,
        // which outlives the call.
        let compiled =
            unsafe { sys::nvrtcCompileProgram(prog.0, arg_ptrs.len() as c_int, arg_ptrs.as_ptr()) };
        if compiled != nvrtcResult::NVRTC_SUCCESS {
            let log = prog.log().unwrap_or_default();
            let log = if log.trim().is_empty() {
                format!("{compiled:?} (options: {})", args.join(" "))
            } else {
                log
            };
            return Err(build_error(log));
        }
        let ptx = prog.ptx()?;
        let cubin = match target {
            Target::Real(..) => Some(prog.cubin()?),
            Target::Virtual(..) => None,
        };
        let log = prog.log()?;
        Ok(Compiled { ptx, cubin, log })
    })
}

/// An `nvrtcProgram`, destroyed on drop.
struct Program(nvrtcProgram);

impl Program {
    fn create(src: &CStr, name: &CStr) -> Result<Self> {
        let mut prog: nvrtcProgram = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `src` and `name` are NUL-terminated and outlive the program
        // (the caller holds them until the program is dropped); no headers are passed.
        status("nvrtcCreateProgram", unsafe {
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        })?;
        Ok(Self(prog))
    }

    /// Reads one of NVRTC's size-then-bytes outputs (log, PTX, CUBIN).
    fn read(
        &self,
        size_call: &'static str,
        size_fn: unsafe fn(nvrtcProgram, *mut usize) -> nvrtcResult,
        data_call: &'static str,
        data_fn: unsafe fn(nvrtcProgram, *mut c_char) -> nvrtcResult,
    ) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: `self.0` is a live program; valid out-pointer.
        status(size_call, unsafe { size_fn(self.0, &mut size) })?;
        let mut buf = vec![0u8; size];
        if size > 0 {
            // SAFETY: `buf` has the `size` bytes NVRTC reported for this output.
            status(data_call, unsafe {
                data_fn(self.0, buf.as_mut_ptr().cast())
            })?;
        }
        Ok(buf)
    }

    fn log(&self) -> Result<String> {
        let bytes = self.read(
            "nvrtcGetProgramLogSize",
            sys::nvrtcGetProgramLogSize,
            "nvrtcGetProgramLog",
            sys::nvrtcGetProgramLog,
        )?;
        Ok(text(bytes))
    }

    fn ptx(&self) -> Result<String> {
        let bytes = self.read(
            "nvrtcGetPTXSize",
            sys::nvrtcGetPTXSize,
            "nvrtcGetPTX",
            sys::nvrtcGetPTX,
        )?;
        Ok(text(bytes))
    }

    fn cubin(&self) -> Result<Vec<u8>> {
        self.read(
            "nvrtcGetCUBINSize",
            sys::nvrtcGetCUBINSize,
            "nvrtcGetCUBIN",
            sys::nvrtcGetCUBIN,
        )
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from nvrtcCreateProgram and is destroyed exactly once, here.
        // A failure cannot be reported from drop and leaks at most the program.
        let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// NVRTC's NUL-terminated output as a `String` (lossy: logs may quote source bytes).
fn text(mut bytes: Vec<u8>) -> String {
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn status(call: &'static str, r: nvrtcResult) -> Result<()> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Device {
            call,
            code: r as i32,
        })
    }
}
