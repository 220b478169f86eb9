//! Run-time instruction-set levels, without `std`: which vector extensions this CPU and its
//! operating system support, detected once with `cpuid`/`xgetbv`, and an optional cap that a
//! caller (the C API, the CLI, a test) lowers to force a slower path.
//!
//! The core is compiled for its target's baseline (SSE2 on x86-64) so that one binary runs on
//! every CPU of the architecture; hot loops are additionally compiled for the x86-64-v3 (AVX2 +
//! FMA) and x86-64-v4 (AVX-512 F/BW/DQ/VL) levels and pick one with [`active`]. The variants run
//! the same Rust source: Rust never contracts `a * b + c` into a fused multiply-add on its own,
//! and integer arithmetic is exact, so every level computes **bit-identical** results; only the
//! speed differs. On other architectures (AArch64, where NEON is baseline, and the Cortex-M
//! targets) there is one level, [`Level::Baseline`].
//!
//! The detected level and the cap are process-wide atomics (relaxed: each is a single byte
//! whose every value is valid, and a stale read only selects another correct path).

use core::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level for which the core's hot loops have a compiled variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// What the build target guarantees (x86-64: SSE2; AArch64: NEON; Cortex-M: scalar).
    Baseline = 1,
    /// x86-64-v3: AVX, AVX2 and FMA with the OS saving 256-bit registers.
    X86V3 = 2,
    /// x86-64-v4: v3 plus AVX-512 F, BW, DQ and VL with the OS saving 512-bit registers.
    X86V4 = 3,
}

impl Level {
    /// Every level, slowest first.
    pub const ALL: [Level; 3] = [Level::Baseline, Level::X86V3, Level::X86V4];

    /// The short name used by `MVISION_CPU` and reports: `baseline`, `x86-64-v3`, `x86-64-v4`.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::X86V3 => "x86-64-v3",
            Level::X86V4 => "x86-64-v4",
        }
    }

    /// Parses [`Level::name`] (also `v3`, `v4`, `avx2`, `avx512`, `sse2`); `None` otherwise.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "baseline" | "sse2" | "none" => Some(Level::Baseline),
            "x86-64-v3" | "v3" | "avx2" => Some(Level::X86V3),
            "x86-64-v4" | "v4" | "avx512" => Some(Level::X86V4),
            _ => None,
        }
    }

    fn from_u8(v: u8) -> Level {
        match v {
            3 => Level::X86V4,
            2 => Level::X86V3,
            _ => Level::Baseline,
        }
    }
}

/// 0 until the first detection.
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// The highest level callers allow (`X86V4` unless lowered).
static CAP: AtomicU8 = AtomicU8::new(Level::X86V4 as u8);

/// The highest level this CPU and OS support (detected on first use, then cached).
pub fn detected() -> Level {
    let v = DETECTED.load(Ordering::Relaxed);
    if v != 0 {
        return Level::from_u8(v);
    }
    let level = detect();
    DETECTED.store(level as u8, Ordering::Relaxed);
    level
}

/// The level hot loops use now: the lower of [`detected`] and the cap set by [`set_cap`].
#[inline]
pub fn active() -> Level {
    detected().min(Level::from_u8(CAP.load(Ordering::Relaxed)))
}

/// Caps the level used from now on, process-wide (e.g. `Level::Baseline` to measure or debug
/// the portable path). Raising the cap above [`detected`] has no effect. Image operations and
/// trackers give the same results at every level; the CNN's fused AVX-512 kernels agree with
/// the portable ones within `f32` rounding (see the README). A cap below [`detected`] also keeps
/// `nn::gemm::sgemm` off the `gemm` crate (feature `gemm-crate`), which picks its own
/// instruction set.
pub fn set_cap(level: Level) {
    CAP.store(level as u8, Ordering::Relaxed);
}

/// The current cap ([`Level::X86V4`] unless [`set_cap`] lowered it).
pub fn cap() -> Level {
    Level::from_u8(CAP.load(Ordering::Relaxed))
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
fn detect() -> Level {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{__cpuid, __cpuid_count, _xgetbv};
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

    // SAFETY: `cpuid` exists on every x86-64 CPU and on every 32-bit x86 CPU Rust supports
    // (i586 and later); leaf 0 reports the highest standard leaf, checked before leaf 7.
    #[allow(unused_unsafe)]
    let (max_leaf, l1, l7) = unsafe {
        let max_leaf = __cpuid(0).eax;
        let l1 = __cpuid(1);
        let l7 = if max_leaf >= 7 {
            Some(__cpuid_count(7, 0))
        } else {
            None
        };
        (max_leaf, l1, l7)
    };
    let _ = max_leaf;
    let Some(l7) = l7 else {
        return Level::Baseline;
    };
    let bit = |reg: u32, n: u32| reg & (1 << n) != 0;
    let osxsave = bit(l1.ecx, 27);
    if !osxsave {
        return Level::Baseline;
    }
    // SAFETY: OSXSAVE (CPUID.1:ECX[27]) says the OS enabled `xgetbv`, which `_xgetbv` needs.
    let xcr0 = unsafe { _xgetbv(0) };
    let ymm_saved = xcr0 & 0b110 == 0b110; // SSE and AVX state
    let zmm_saved = xcr0 & 0b1110_0110 == 0b1110_0110; // + opmask, ZMM_Hi256, Hi16_ZMM
    let v3 = ymm_saved
        && bit(l1.ecx, 28) // AVX
        && bit(l1.ecx, 12) // FMA
        && bit(l7.ebx, 5); // AVX2
    let v4 = v3
        && zmm_saved
        && bit(l7.ebx, 16) // AVX512F
        && bit(l7.ebx, 17) // AVX512DQ
        && bit(l7.ebx, 30) // AVX512BW
        && bit(l7.ebx, 31); // AVX512VL
    if v4 {
        Level::X86V4
    } else if v3 {
        Level::X86V3
    } else {
        Level::Baseline
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn detect() -> Level {
    Level::Baseline
}

/// Defines a function `$name` that runs the `#[inline(always)]` function `$body` (same
/// signature) compiled for the [`active`] level: `$name` is safe, the per-level copies are
/// private. `$body` must be `#[inline(always)]` and should keep its hot loop inside itself (or
/// in further `#[inline(always)]` helpers), since only inlined code gets the level's
/// instructions.
macro_rules! multiversion {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? => $body:ident
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            {
                #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
                fn v4 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn v3 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                match $crate::cpu::active() {
                    // SAFETY: `active()` only reports a level whose features the CPU and the OS
                    // support (`cpu::detect`).
                    #[allow(unsafe_code)]
                    $crate::cpu::Level::X86V4 => return unsafe { v4($($arg),*) },
                    #[allow(unsafe_code)]
                    $crate::cpu::Level::X86V3 => return unsafe { v3($($arg),*) },
                    $crate::cpu::Level::Baseline => {}
                }
            }
            $body($($arg),*)
        }
    };
}
#[allow(unused_imports)] // used by the hot loops as they adopt it
pub(crate) use multiversion;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Level::ALL {
            assert_eq!(Level::parse(l.name()), Some(l));
        }
        assert_eq!(Level::parse("avx1024"), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn detection_agrees_with_std() {
        let v3 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl");
        let expect = if v4 {
            Level::X86V4
        } else if v3 {
            Level::X86V3
        } else {
            Level::Baseline
        };
        assert_eq!(detected(), expect);
    }

    #[inline(always)]
    fn dot_body(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }
    multiversion! {
        fn dot(a: &[f32], b: &[f32]) -> f32 => dot_body
    }

    #[test]
    fn multiversion_runs_the_same_arithmetic() {
        let a: std::vec::Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: std::vec::Vec<f32> = (0..1000).map(|i| (i as f32 * 0.11).cos()).collect();
        // The per-level copies are private; compare the dispatcher with the body (the level
        // cap is process-wide, so this test does not change it).
        assert_eq!(dot(&a, &b).to_bits(), dot_body(&a, &b).to_bits());
    }
}
