//! CPU instruction-set levels: which compiled variant of the hot loops (filters, convolution)
//! runs. The library detects the level once at run time (x86-64: baseline SSE2, x86-64-v3 with
//! AVX2 + FMA, x86-64-v4 with AVX-512); a caller may cap it, for example to compare speeds or to
//! rule out a CPU-specific fault. Every level computes bit-identical results.

use crate::panic::{guard, guard_value};
use crate::status::mv_status::{self, *};
use mvision_core::cpu::{self, Level};

/// A CPU instruction-set level (one of the `MV_CPU_*` values).
pub type mv_cpu_level = u32;
/// The build target's baseline (x86-64: SSE2; AArch64: NEON); the only level off x86.
pub const MV_CPU_BASELINE: mv_cpu_level = 1;
/// x86-64-v3: AVX2 and FMA.
pub const MV_CPU_X86_64_V3: mv_cpu_level = 2;
/// x86-64-v4: AVX-512 F, BW, DQ and VL.
pub const MV_CPU_X86_64_V4: mv_cpu_level = 3;

fn to_c(l: Level) -> mv_cpu_level {
    match l {
        Level::Baseline => MV_CPU_BASELINE,
        Level::X86V3 => MV_CPU_X86_64_V3,
        Level::X86V4 => MV_CPU_X86_64_V4,
    }
}

/// The highest level this CPU and operating system support (`MV_CPU_*`).
#[no_mangle]
pub extern "C" fn mv_cpu_detected() -> mv_cpu_level {
    guard_value(MV_CPU_BASELINE, || to_c(cpu::detected()))
}

/// The level in use: the lower of `mv_cpu_detected()` and the cap set by
/// `mv_cpu_set_max_level` (`MV_CPU_*`).
#[no_mangle]
pub extern "C" fn mv_cpu_active() -> mv_cpu_level {
    guard_value(MV_CPU_BASELINE, || to_c(cpu::active()))
}

/// Caps the level used from now on, for the whole process (`MV_CPU_X86_64_V4` removes the cap;
/// a cap above `mv_cpu_detected()` has no effect). Image operations and trackers give the same
/// results at every level; network outputs agree within `f32` rounding. A cap below
/// `mv_cpu_detected()` also keeps large matrix products on the library's own portable GEMM.
///
/// Errors: `MV_STATUS_INVALID_ARGUMENT` if `level` is not an `MV_CPU_*` value.
#[no_mangle]
pub extern "C" fn mv_cpu_set_max_level(level: mv_cpu_level) -> mv_status {
    guard(|| {
        let l = match level {
            MV_CPU_BASELINE => Level::Baseline,
            MV_CPU_X86_64_V3 => Level::X86V3,
            MV_CPU_X86_64_V4 => Level::X86V4,
            _ => return Err(MV_STATUS_INVALID_ARGUMENT),
        };
        cpu::set_cap(l);
        Ok(())
    })
}
