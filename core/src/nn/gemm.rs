//! Matrix multiplication: SGEMM `C = α·op(A)·op(B) + β·C` (BLAS semantics, row- or column-major
//! operands, optional transposes), an exact `i8 × i8 → i32` GEMM for fixed-point networks, and
//! the two variants of seeds 000/001 kept for study and benchmarks ([`sgemm_naive`],
//! [`sgemm_tiled32`]).
//!
//! [`sgemm`] is the Goto/BLIS algorithm: loops over `NC` columns of `B`, `KC` of the inner
//! dimension and `MC` rows of `A`; each `KC × NC` panel of `B` and `MC × KC` block of `A` is
//! copied ("packed") into the caller's `pack` buffer as slivers `NR` columns wide / `MR` rows
//! high, zero-padded at the edges, so that the register micro-kernel streams both
//! from contiguous memory and never branches on the edge. On x86 the micro-kernel is chosen at
//! run time by the active instruction-set level ([`kernel_at`], [`crate::cpu`]), in `no_std`
//! builds too: a 12 × 32 AVX-512 kernel (24 accumulators; tiles at the edge of `C` sum only
//! their used rows and columns) at x86-64-v4, a 6 × 16 AVX2 + FMA kernel at x86-64-v3 (both
//! read a row-major `B` in place instead of packing it for products of at most 208 rows, and a
//! row-major `A` for those of at most 128 columns), and below them the build's own: an
//! `[[f32; NR]; MR]` loop that LLVM unrolls and keeps in vector registers (SSE2, NEON, scalar
//! on FPU-only microcontrollers), or the 6 × 16 FMA kernel where the build itself enables AVX
//! and FMA (LLVM does not fuse multiply-adds on its own).
//! This is the path `libmvision` runs: it allocates nothing.
//!
//! With the `gemm-crate` feature (std builds), products of at least [`GEMM_CRATE_MIN_FLOP`]
//! multiply-adds are handed to the [`gemm`](https://crates.io/crates/gemm) crate, which picks
//! AVX-512, AVX2+FMA or NEON kernels at run time and still beats the core's own kernels on some
//! shapes (see BENCHMARKS.md); it allocates its own packing memory, so that path is not
//! allocation-free (`libmvision` never takes it; the CLI only with `MVISION_GEMM=crate`, see
//! `set_gemm_crate`). The argument checks, errors and results (up to rounding) are the same
//! on both paths. The crate cannot be told to stay below an instruction set, so while a caller
//! caps the level below the CPU's ([`crate::cpu::set_cap`], `MVISION_CPU`,
//! `mv_cpu_set_max_level`) every product takes the core's own path, as [`sgemm_portable`].
//!
//! **β = 0** follows the reference BLAS: `C` is then write-only, so NaN or infinity already in
//! `C` does not propagate. **α = 0 or k = 0** scales `C` by β without reading `A` or `B`.

use crate::error::{Error, Result};

/// Storage order of every matrix in one [`sgemm`] call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Element `(i, j)` of a matrix with leading dimension `ld` is at `i·ld + j`.
    RowMajor,
    /// Element `(i, j)` of a matrix with leading dimension `ld` is at `i + j·ld`.
    ColMajor,
}

/// Whether an operand is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transpose {
    /// `op(X) = X`.
    No,
    /// `op(X) = Xᵀ`.
    Yes,
}

// --- Blocking parameters, per target --------------------------------------------------------
//
// MR × NR accumulators must fit the register file with room for one row of B and a broadcast of
// A. The build's own kernel (`block`): x86 AVX builds 16 × 8 lanes (6 × 16 = 12 registers of
// accumulators), SSE2 16 × 4 lanes (6 × 8 = 12), AArch64 NEON 32 × 4 lanes (8 × 12 = 24, the
// explicit `neon` kernel: two vectors of A, three of B, multiply-adds by lane); FPU-only cores
// (Cortex-M4F: 32 single registers) get 4 × 4. On x86 the run-time kernels add 6 × 16 (AVX2 +
// FMA) and 12 × 32 (AVX-512, 32 × 16 lanes), which set `MR` and `NR` there. KC is chosen so
// that one A sliver and one B sliver (MR·KC + KC·NR floats) stay in a 32–48 KiB L1, MC so that the
// packed A block (MC·KC) stays in L2, NC so that the packed B panel (KC·NC) stays in L3.

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_feature = "avx"
))]
mod block {
    pub const MR: usize = 6;
    pub const NR: usize = 16;
}
#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    not(target_feature = "avx")
))]
mod block {
    pub const MR: usize = 6;
    pub const NR: usize = 8;
}
#[cfg(target_arch = "aarch64")]
mod block {
    pub const MR: usize = 8;
    pub const NR: usize = 12;
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
mod block {
    pub const MR: usize = 4;
    pub const NR: usize = 4;
}

/// Rows of the largest register tile of `C` on this target: the packed slivers of `A` are at
/// most this high (on x86 the AVX-512 micro-kernel's 12; the build's own kernel may be lower).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
pub const MR: usize = 12;
/// Columns of the largest register tile of `C` on this target: the packed slivers of `B` are at
/// most this wide (on x86 the AVX-512 micro-kernel's 32).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
pub const NR: usize = 32;
/// Rows of the register tile of `C` (the micro-kernel's height) on this target.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
pub const MR: usize = block::MR;
/// Columns of the register tile of `C` (the micro-kernel's width) on this target.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
pub const NR: usize = block::NR;

/// Inner-dimension block: one packed sliver of A and of B (`MR·KC + KC·NR` floats) fits L1.
#[cfg(target_pointer_width = "64")]
pub const KC: usize = 256;
/// Inner-dimension block: one packed sliver of A and of B (`MR·KC + KC·NR` floats) fits L1.
#[cfg(not(target_pointer_width = "64"))]
pub const KC: usize = 128;

/// Row block of A (a multiple of [`MR`]): the packed `MC × KC` block stays in L2.
#[cfg(target_pointer_width = "64")]
pub const MC: usize = 128usize.div_ceil(MR) * MR;
/// Row block of A (a multiple of [`MR`]): the packed `MC × KC` block stays in L2.
#[cfg(not(target_pointer_width = "64"))]
pub const MC: usize = 32;

/// Column block of B (a multiple of [`NR`]): the packed `KC × NC` panel stays in L3 (or, on
/// microcontrollers, keeps the packing buffer at 48 KiB).
#[cfg(target_pointer_width = "64")]
pub const NC: usize = 2048usize.div_ceil(NR) * NR;
/// Column block of B (a multiple of [`NR`]): the packed `KC × NC` panel stays in L3 (or, on
/// microcontrollers, keeps the packing buffer at 48 KiB).
#[cfg(not(target_pointer_width = "64"))]
pub const NC: usize = 64;

/// Smallest `m·n·k` (multiply-adds) that [`sgemm`] hands to the `gemm` crate when the
/// `gemm-crate` feature is on; smaller products stay on the portable path, whose lower fixed
/// cost wins there. Measured single-threaded on the AMD EPYC (Zen 5) of BENCHMARKS.md: the
/// crate costs ≈ 0.27 µs even for a 4³ product (the portable path 0.11 µs), the two are equal at
/// 8³–12³, and the crate is 3× faster from 16³ on.
pub const GEMM_CRATE_MIN_FLOP: u64 = 12 * 12 * 12;

// Every kernel's slivers tile the blocks: MC and NC are multiples of each kernel's height and
// width (the build's own, and on x86 the run-time 6 × 16 and 12 × 32 ones).
const _: () = assert!(
    MC.is_multiple_of(MR)
        && MC.is_multiple_of(block::MR)
        && NC.is_multiple_of(NR)
        && NC.is_multiple_of(block::NR)
);
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
const _: () = assert!(MC.is_multiple_of(6) && NC.is_multiple_of(16));
const _: () = assert!(MR >= block::MR && NR >= block::NR);

/// Length in `f32` elements of the `pack` buffer that [`sgemm`] needs for an `m × n × k` product:
/// one packed `min(m, MC) × min(k, KC)` block of A and one `min(k, KC) × min(n, NC)` panel of B,
/// each rounded up to whole slivers. At most `(MC + NC)·KC` (2 232 320 bytes on x86-64 and
/// AArch64, 49 152 bytes on 32-bit targets), whatever the shape.
/// 0 when `m`, `n` or `k` is 0 (nothing is multiplied).
pub const fn gemm_pack_len(m: usize, n: usize, k: usize) -> usize {
    if m == 0 || n == 0 || k == 0 {
        return 0;
    }
    let mc = round_up(min(m, MC), MR);
    let kc = min(k, KC);
    let nc = round_up(min(n, NC), NR);
    mc * kc + kc * nc
}

const fn min(a: usize, b: usize) -> usize {
    if a < b {
        a
    } else {
        b
    }
}

const fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

/// A validated operand: element `(i, j)` of `op(X)` is at `i·rs + j·cs`.
#[derive(Clone, Copy)]
struct Strides {
    rs: usize,
    cs: usize,
}

/// Checks one operand of `rows × cols` (after `op`) stored in `len` elements with leading
/// dimension `ld`, and returns its strides.
fn operand(
    order: Order,
    trans: Transpose,
    rows: usize,
    cols: usize,
    ld: usize,
    len: usize,
) -> Result<Strides> {
    let (sr, sc) = match trans {
        Transpose::No => (rows, cols),
        Transpose::Yes => (cols, rows),
    };
    // The stored matrix is `sr × sc`; `ld` strides over its outer dimension.
    let (outer, inner, stored) = match order {
        Order::RowMajor => (sr, sc, Strides { rs: ld, cs: 1 }),
        Order::ColMajor => (sc, sr, Strides { rs: 1, cs: ld }),
    };
    if ld < inner.max(1) {
        return Err(Error::StrideTooSmall);
    }
    if outer > 0 && inner > 0 {
        let need = (outer - 1)
            .checked_mul(ld)
            .and_then(|x| x.checked_add(inner))
            .ok_or(Error::Overflow)?;
        if len < need {
            return Err(Error::BufferTooSmall);
        }
    }
    Ok(match trans {
        Transpose::No => stored,
        Transpose::Yes => Strides {
            rs: stored.cs,
            cs: stored.rs,
        },
    })
}

/// SGEMM: `C ← α·op(A)·op(B) + β·C` with `op(A)` `m × k`, `op(B)` `k × n`, `C` `m × n`, all three
/// stored in `order` with leading dimensions `lda`, `ldb`, `ldc` (elements). Elements of the
/// buffers outside the three matrices (row gaps, tails) are neither read nor written.
///
/// `pack` is working memory of at least [`gemm_pack_len`]`(m, n, k)` elements; its contents on
/// entry and exit are meaningless. `m`, `n` or `k` may be 0 (then nothing, respectively only
/// `C ← β·C`, is computed). See the module documentation for β = 0 (NaN in `C` ignored) and for
/// the `gemm-crate` path.
///
/// # Errors
/// * [`Error::StrideTooSmall`] if a leading dimension is below the stored row length (row-major)
///   or column length (column-major), or 0;
/// * [`Error::BufferTooSmall`] if `a`, `b` or `c` does not cover its matrix, or `pack` is
///   shorter than [`gemm_pack_len`];
/// * [`Error::Overflow`] if a matrix's extent overflows `usize`.
///
/// Nothing is written on error.
#[allow(clippy::too_many_arguments)] // The BLAS signature, argument for argument.
pub fn sgemm(
    order: Order,
    transa: Transpose,
    transb: Transpose,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
    pack: &mut [f32],
) -> Result<()> {
    checked_gemm(
        order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pack, true,
    )
}

/// [`sgemm`] on the portable path only, even when the `gemm-crate` feature is on: what a
/// `no_std` build runs, so that a std build (the CLI's `bench gemm`) can measure both paths.
/// Arguments, errors and results are those of [`sgemm`]; allocates nothing.
///
/// # Errors
/// As [`sgemm`].
#[allow(clippy::too_many_arguments)] // The BLAS signature, argument for argument.
pub fn sgemm_portable(
    order: Order,
    transa: Transpose,
    transb: Transpose,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
    pack: &mut [f32],
) -> Result<()> {
    checked_gemm(
        order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pack, false,
    )
}

/// [`sgemm`]'s argument checks, then [`gemm_strided`] (`allow_crate` as there).
#[allow(clippy::too_many_arguments)]
fn checked_gemm(
    order: Order,
    transa: Transpose,
    transb: Transpose,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
    pack: &mut [f32],
    allow_crate: bool,
) -> Result<()> {
    let sa = operand(order, transa, m, k, lda, a.len())?;
    let sb = operand(order, transb, k, n, ldb, b.len())?;
    let sc = operand(order, Transpose::No, m, n, ldc, c.len())?;
    if pack.len() < gemm_pack_len(m, n, k) {
        return Err(Error::BufferTooSmall);
    }
    let p = Product {
        m,
        n,
        k,
        alpha,
        a,
        sa,
        b,
        sb,
        beta,
    };
    gemm_strided(&p, c, sc, pack, allow_crate);
    Ok(())
}

/// A validated product `C ← α·op(A)·op(B) + β·C`: `op(A)` `m × k` and `op(B)` `k × n` with
/// their strides ([`operand`]).
#[derive(Clone, Copy)]
struct Product<'a> {
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &'a [f32],
    sa: Strides,
    b: &'a [f32],
    sb: Strides,
    beta: f32,
}

/// The validated SGEMM `p` into `c` (strides `sc`) (`allow_crate`: large products may go to the
/// `gemm` crate when the feature is on).
fn gemm_strided(p: &Product<'_>, c: &mut [f32], sc: Strides, pack: &mut [f32], allow_crate: bool) {
    let _ = allow_crate; // read only with the `gemm-crate` feature
    let Product {
        m,
        n,
        k,
        alpha,
        beta,
        ..
    } = *p;
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 || alpha == 0.0 {
        scale(m, n, beta, c, sc);
        return;
    }
    // The crate picks its own instruction set (AVX-512 where the CPU has it), so a caller who
    // capped the level below the CPU's (`cpu::set_cap`) gets the core's own path instead.
    #[cfg(feature = "gemm-crate")]
    if allow_crate
        && CRATE_ON.load(core::sync::atomic::Ordering::Relaxed)
        && crate::cpu::cap() >= crate::cpu::detected()
        && (m as u64) * (n as u64) * (k as u64) >= GEMM_CRATE_MIN_FLOP
    {
        crate_gemm(p, c, sc);
        return;
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        let level = crate::cpu::active();
        if level >= crate::cpu::Level::X86V4 {
            // SAFETY: x86-64-v4 is active: AVX-512 F, AVX2 and FMA are supported (`cpu::detect`).
            #[allow(unsafe_code)]
            unsafe {
                x86::gemm_avx512(p, c, sc, pack)
            };
            return;
        }
        if level >= crate::cpu::Level::X86V3 {
            // SAFETY: x86-64-v3 is active: AVX2 and FMA are supported (`cpu::detect`).
            #[allow(unsafe_code)]
            unsafe {
                x86::gemm_fma(p, c, sc, pack)
            };
            return;
        }
    }
    // SAFETY: `Built` needs only the build's own instruction set.
    #[allow(unsafe_code)]
    unsafe {
        blis::<{ block::MR }, { block::NR }, Built>(p, c, sc, pack)
    };
}

/// The micro-kernel [`sgemm`]'s own path runs at `level` on this target: on x86 the 12 × 32
/// AVX-512 kernel at x86-64-v4, the 6 × 16 AVX2 + FMA kernel at x86-64-v3, below them the
/// build's own ([`MR`] × [`NR`] or smaller, portable unless the build enables AVX and FMA); on
/// AArch64 the 8 × 12 NEON kernel at every level; elsewhere the portable one.
/// Kernels sum each product in the same order; they differ in rounding only where one fuses
/// the multiply-add and another does not.
pub fn kernel_at(level: crate::cpu::Level) -> Kernel {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        if level >= crate::cpu::Level::X86V4 {
            return Kernel::Avx512;
        }
        if level >= crate::cpu::Level::X86V3 || AVX_FMA {
            return Kernel::Fma;
        }
    }
    let _ = level;
    if cfg!(target_arch = "aarch64") {
        return Kernel::Neon;
    }
    Kernel::Portable
}

/// A register micro-kernel of [`sgemm`]'s own path ([`kernel_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Fixed-size loops that LLVM vectorises for the build's instruction set (separate
    /// multiply and add).
    Portable,
    /// x86: 6 × 16 with AVX2 fused multiply-adds (two 8-lane rows of `B`, six broadcasts).
    Fma,
    /// x86: 12 × 32 with AVX-512 fused multiply-adds (two 16-lane rows of `B`, twelve
    /// broadcasts, 24 accumulators).
    Avx512,
    /// AArch64: 8 × 12 with NEON fused multiply-adds by lane (three 4-lane vectors of `B`, two
    /// of `A`, 24 accumulators); `B` read in place for products of few rows.
    Neon,
}

/// A register micro-kernel: the `R × C` tile `acc[i][j] = Σ_p a[p·R + i]·b[p·C + j]`, `p` below
/// `kc`, over packed slivers (or `A`, `B` in place, where the kernel takes them).
#[allow(unsafe_code)]
trait Tile<const R: usize, const C: usize> {
    /// The tile; only its first `rows` (≥ 1) rows and `cols` columns are used (the rest are the
    /// slivers' zero padding), so a kernel may leave the others unsummed. `A` is a packed sliver
    /// (`lda` = 0: step `p`, row `i` at `a[p·R + i]`, `a.len() ≥ kc·R`) or in place (`lda` > 0,
    /// only where [`Tile::DIRECT_A`]: `a[i·lda + p]` for `i < rows`); step `p` of `B` starts at
    /// `b[p·ldb]` (`ldb` = `C` unless [`Tile::DIRECT_B`]), `b.len() ≥ (kc − 1)·ldb + C`.
    ///
    /// # Safety
    /// The kernel's instruction set is enabled where it is called.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        a: &[f32],
        lda: usize,
        b: &[f32],
        ldb: usize,
        kc: usize,
        rows: usize,
        cols: usize,
    ) -> [[f32; C]; R];

    /// Whether [`Tile::run`] takes `B` in place (step `p` at `b[p·ldb ..]`, `ldb` any): then
    /// products of few rows ([`DIRECT_B_MAX_M`]) skip packing `B`, which they would read only
    /// once or twice. Otherwise `ldb` is always `C` (packed slivers).
    const DIRECT_B: bool = false;

    /// Whether [`Tile::run`] takes `A` in place (row `i` at `a[i·lda ..]`): then products of
    /// few columns ([`DIRECT_A_MAX_N`]) skip packing `A`.
    const DIRECT_A: bool = false;

    /// Packs one sliver of a row-major `op(A)` for this kernel: `rows[i]` is row `i`'s `kc`
    /// steps (empty past the sliver's last row), written as `sliver[p·R + i]` (zero for the
    /// empty rows). [`pack_a`]'s row-major case; a kernel may do it faster with its
    /// instruction set.
    ///
    /// # Safety
    /// The kernel's instruction set is enabled where it is called.
    #[inline(always)]
    unsafe fn pack_rows(rows: &[&[f32]; R], kc: usize, sliver: &mut [f32]) {
        for (i, row) in rows.iter().enumerate() {
            if row.is_empty() {
                sliver[i..].iter_mut().step_by(R).for_each(|x| *x = 0.0);
            } else {
                for (dst, &v) in sliver[i..].iter_mut().step_by(R).zip(&row[..kc]) {
                    *dst = v;
                }
            }
        }
    }
}

/// Most columns of `op(B)` for which a kernel that can ([`Tile::DIRECT_A`]) reads a row-major
/// `op(A)` in place instead of packing it: each element of `A` then feeds at most four slivers
/// of `B`, fewer multiply-adds than its copy costs. Winograd's per-call products
/// (weights transformed 64 output channels at a time) have 64. libmvision without the `gemm`
/// crate, weights as stored (`mv_net_create`'s default), ResNet-18 forward: packed always
/// 16.5–16.6 ms, in place up to 64 columns 14.1–14.5, up to 128 14.0–14.1 (the crate 13.1);
/// FastPoorNet's 2916 × 64 × 363 GEMM 160 → 241 GFLOP/s (BENCHMARKS.md, twentieth session).
const DIRECT_A_MAX_N: usize = 128;

/// Most rows of `op(A)` for which a kernel that can ([`Tile::DIRECT_B`]) reads a row-major
/// `op(B)` in place instead of packing it: each element of `B` is then used by at most 18
/// slivers of `A`, and copying it first cost more than it saved. Measured with the AVX-512
/// kernel on Winograd's products (16 and 49 rows of tiles against up to 512 × 512 weights),
/// libmvision without the `gemm` crate, ResNet-18 / AlexNet forward in ms: packed always
/// 18.9 / 12.5, in place up to 24 rows 15.8 / 12.2, 64 rows 15.6 / 11.9, 208 rows 15.4 / 11.4
/// (before the kernel prefetched `B`); with the prefetch, in place for every row count ran
/// 1024³ and 2048³ products at 157–183 GFLOP/s against 204–233 (BENCHMARKS.md, twentieth
/// session).
const DIRECT_B_MAX_M: usize = 208;

/// The build's own kernel ([`Micro::run`]; on AArch64 the NEON kernel, which also reads `B`
/// in place).
struct Built;

#[allow(unsafe_code)]
impl Tile<{ block::MR }, { block::NR }> for Built {
    const DIRECT_B: bool = cfg!(target_arch = "aarch64");

    #[inline(always)]
    unsafe fn run(
        a: &[f32],
        _: usize,
        b: &[f32],
        ldb: usize,
        kc: usize,
        _: usize,
        _: usize,
    ) -> [[f32; block::NR]; block::MR] {
        #[cfg(target_arch = "aarch64")]
        return neon::tile_8x12(a, b, ldb, kc);
        #[cfg(not(target_arch = "aarch64"))]
        {
            let _ = ldb; // packed slivers only: `ldb` = NR
            Micro::run(&a[..kc * block::MR], &b[..kc * block::NR])
        }
    }
}

/// The Goto/BLIS loops around micro-kernel `T` (`R × C` slivers): `NC` columns of `B`, `KC` of
/// the inner dimension, `MC` rows of `A`, each block packed into `pack` (which holds
/// [`gemm_pack_len`] elements: `R ≤ MR`, `C ≤ NR`).
///
/// # Safety
/// `T`'s instruction set is enabled in the caller (`#[inline(always)]`: compiled into each
/// entry point with its target features).
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn blis<const R: usize, const C: usize, T: Tile<R, C>>(
    p: &Product<'_>,
    c: &mut [f32],
    sc: Strides,
    pack: &mut [f32],
) {
    let Product {
        m,
        n,
        k,
        alpha,
        a,
        sa,
        b,
        sb,
        beta,
    } = *p;
    let (a_pack, b_pack) = pack.split_at_mut(round_up(min(m, MC), R) * min(k, KC));
    let direct_b = T::DIRECT_B && sb.cs == 1 && m <= DIRECT_B_MAX_M;
    let direct_a = T::DIRECT_A && sa.cs == 1 && n <= DIRECT_A_MAX_N;
    for jc in (0..n).step_by(NC) {
        let nc = min(NC, n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = min(KC, k - pc);
            let b_src = if direct_b {
                BSource::Direct { b, sb, pc }
            } else {
                pack_b::<C>(b, sb, pc, jc, kc, nc, b_pack);
                BSource::Packed
            };
            for ic in (0..m).step_by(MC) {
                let mc = min(MC, m - ic);
                let a_src = if direct_a {
                    ASource::Direct { a, sa, ic, pc }
                } else {
                    // SAFETY: the caller's contract.
                    unsafe { pack_a::<R, C, T>(a, sa, ic, pc, mc, kc, a_pack) };
                    ASource::Packed(a_pack)
                };
                // SAFETY: the caller's contract.
                unsafe {
                    macro_kernel::<R, C, T>(
                        mc,
                        nc,
                        kc,
                        alpha,
                        a_src,
                        b_src,
                        b_pack,
                        if pc == 0 { Some(beta) } else { None },
                        c,
                        sc,
                        ic,
                        jc,
                    )
                };
            }
        }
    }
}

/// `C ← β·C` (β = 0 writes zeros).
fn scale(m: usize, n: usize, beta: f32, c: &mut [f32], sc: Strides) {
    for i in 0..m {
        for j in 0..n {
            let x = &mut c[i * sc.rs + j * sc.cs];
            *x = if beta == 0.0 { 0.0 } else { beta * *x };
        }
    }
}

/// Packs `op(A)[ic..ic+mc, pc..pc+kc]` as slivers of `MR` rows: sliver `s`, column `p`, row `i`
/// at `s·MR·kc + p·MR + i`; rows past `mc` are zero. Contiguous rows or columns of `op(A)` are
/// read as slices: a general strided loop is vectorised by LLVM into gathers and scatters on
/// AVX-512, ten times slower than these copies.
///
/// # Safety
/// `T`'s instruction set is enabled in the caller (its [`Tile::pack_rows`] packs the
/// row-major case).
#[inline(always)]
#[allow(clippy::too_many_arguments, unsafe_code)]
unsafe fn pack_a<const MR: usize, const NR: usize, T: Tile<MR, NR>>(
    a: &[f32],
    sa: Strides,
    ic: usize,
    pc: usize,
    mc: usize,
    kc: usize,
    out: &mut [f32],
) {
    for (s, sliver) in out
        .chunks_exact_mut(MR * kc)
        .take(mc.div_ceil(MR))
        .enumerate()
    {
        let i0 = ic + s * MR;
        let rows = min(MR, mc - s * MR);
        if sa.cs == 1 {
            let mut src: [&[f32]; MR] = [&[]; MR];
            for (i, row) in src.iter_mut().enumerate().take(rows) {
                *row = &a[(i0 + i) * sa.rs + pc..][..kc];
            }
            // SAFETY: the caller's contract.
            unsafe { T::pack_rows(&src, kc, sliver) };
        } else if sa.rs == 1 {
            for (p, col) in sliver.chunks_exact_mut(MR).enumerate() {
                col[..rows].copy_from_slice(&a[(pc + p) * sa.cs + i0..][..rows]);
                col[rows..].fill(0.0);
            }
        } else {
            for (p, col) in sliver.chunks_exact_mut(MR).enumerate() {
                for (i, x) in col.iter_mut().enumerate() {
                    *x = if i < rows {
                        a[(pc + p) * sa.cs + (i0 + i) * sa.rs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// Packs `op(B)[pc..pc+kc, jc..jc+nc]` as slivers of `NR` columns: sliver `s`, row `p`, column
/// `j` at `s·NR·kc + p·NR + j`; columns past `nc` are zero. Contiguous rows or columns are read
/// as slices, as in [`pack_a`].
#[inline(always)]
fn pack_b<const NR: usize>(
    b: &[f32],
    sb: Strides,
    pc: usize,
    jc: usize,
    kc: usize,
    nc: usize,
    out: &mut [f32],
) {
    for (s, sliver) in out
        .chunks_exact_mut(NR * kc)
        .take(nc.div_ceil(NR))
        .enumerate()
    {
        let j0 = jc + s * NR;
        let cols = min(NR, nc - s * NR);
        if sb.cs == 1 {
            for (p, row) in sliver.chunks_exact_mut(NR).enumerate() {
                row[..cols].copy_from_slice(&b[(pc + p) * sb.rs + j0..][..cols]);
                row[cols..].fill(0.0);
            }
        } else if sb.rs == 1 {
            for j in 0..NR {
                if j < cols {
                    let src = &b[(j0 + j) * sb.cs + pc..][..kc];
                    for (dst, &v) in sliver[j..].iter_mut().step_by(NR).zip(src) {
                        *dst = v;
                    }
                } else {
                    sliver[j..].iter_mut().step_by(NR).for_each(|x| *x = 0.0);
                }
            }
        } else {
            for (p, row) in sliver.chunks_exact_mut(NR).enumerate() {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = if j < cols {
                        b[(pc + p) * sb.rs + (j0 + j) * sb.cs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// Where [`macro_kernel`] finds the slivers of `A`.
#[derive(Clone, Copy)]
enum ASource<'a> {
    /// Packed by [`pack_a`] (this slice).
    Packed(&'a [f32]),
    /// In place: `op(A)` row-major (`sa.cs == 1`), the block's rows from `ic`, columns from `pc`.
    Direct {
        /// `op(A)`'s storage.
        a: &'a [f32],
        /// Its strides.
        sa: Strides,
        /// First row of the block.
        ic: usize,
        /// First column of the block.
        pc: usize,
    },
}

/// Where [`macro_kernel`] finds the slivers of `B`.
#[derive(Clone, Copy)]
enum BSource<'a> {
    /// Packed into the `pack` buffer by [`pack_b`].
    Packed,
    /// In place: `op(B)` row-major (`sb.cs == 1`), the block's rows from `pc`.
    Direct {
        /// `op(B)`'s storage.
        b: &'a [f32],
        /// Its strides.
        sb: Strides,
        /// First row of the block.
        pc: usize,
    },
}

/// One `mc × nc` block of C from packed A and B: every `MR × NR` tile by the micro-kernel, then
/// written back. `beta` is `Some` for the first `KC` block (C ← α·AB + β·C), `None` after
/// (C ← C + α·AB).
///
/// # Safety
/// `T`'s instruction set is enabled in the caller.
#[inline(always)]
#[allow(clippy::too_many_arguments, unsafe_code)]
unsafe fn macro_kernel<const MR: usize, const NR: usize, T: Tile<MR, NR>>(
    mc: usize,
    nc: usize,
    kc: usize,
    alpha: f32,
    a_src: ASource<'_>,
    b_src: BSource<'_>,
    b_pack: &mut [f32],
    beta: Option<f32>,
    c: &mut [f32],
    sc: Strides,
    ic: usize,
    jc: usize,
) {
    for s_b in 0..nc.div_ceil(NR) {
        let j0 = s_b * NR;
        let cols = min(NR, nc - j0);
        let (b_sliver, ldb): (&[f32], usize) = match b_src {
            BSource::Packed => (&b_pack[s_b * NR * kc..][..NR * kc], NR),
            BSource::Direct { b, sb, pc } if cols == NR => {
                // Row `p` of the sliver at `(pc + p)·rs + jc + j0`, its NR columns contiguous.
                let start = pc * sb.rs + jc + j0;
                (&b[start..start + (kc - 1) * sb.rs + NR], sb.rs)
            }
            BSource::Direct { b, sb, pc } => {
                // A last, narrower sliver: packed (zero-padded), as it may end the buffer.
                pack_b::<NR>(b, sb, pc, jc + j0, kc, cols, b_pack);
                (&b_pack[..NR * kc], NR)
            }
        };
        for s_a in 0..mc.div_ceil(MR) {
            let i0 = s_a * MR;
            let rows = min(MR, mc - i0);
            let (a_sliver, lda): (&[f32], usize) = match a_src {
                ASource::Packed(a_pack) => (&a_pack[s_a * MR * kc..][..MR * kc], 0),
                ASource::Direct { a, sa, ic, pc } => {
                    // Row `i` of the sliver at `(ic + i0 + i)·rs + pc`, its kc steps contiguous.
                    let start = (ic + i0) * sa.rs + pc;
                    (&a[start..start + (rows - 1) * sa.rs + kc], sa.rs)
                }
            };
            // SAFETY: the caller's contract.
            let acc = unsafe { T::run(a_sliver, lda, b_sliver, ldb, kc, rows, cols) };
            let base = (ic + i0) * sc.rs + (jc + j0) * sc.cs;
            for (i, acc_row) in acc.iter().enumerate().take(rows) {
                let row = base + i * sc.rs;
                if sc.cs == 1 {
                    store_row(&mut c[row..row + cols], &acc_row[..cols], alpha, beta);
                } else {
                    for (j, &v) in acc_row.iter().enumerate().take(cols) {
                        let x = &mut c[row + j * sc.cs];
                        *x = update(*x, v, alpha, beta);
                    }
                }
            }
        }
    }
}

/// `C ← α·acc + β·C` (`beta = Some(β)`; β = 0 does not read C, so NaN in it does not
/// propagate) or `C ← C + α·acc` (`None`, later `KC` blocks).
#[inline(always)]
fn update(c: f32, acc: f32, alpha: f32, beta: Option<f32>) -> f32 {
    match beta {
        Some(b) => {
            if b == 0.0 {
                alpha * acc
            } else {
                alpha * acc + b * c
            }
        }
        None => c + alpha * acc,
    }
}

/// [`update`] over one contiguous row segment (vectorised).
#[inline(always)]
fn store_row(c: &mut [f32], acc: &[f32], alpha: f32, beta: Option<f32>) {
    for (x, &v) in c.iter_mut().zip(acc) {
        *x = update(*x, v, alpha, beta);
    }
}

/// The register micro-kernel: `MR × NR` tile of `Σ_p a[p]·b[p]ᵀ` over packed slivers.
/// (AArch64 builds run `neon::tile_8x12` instead; their unit tests still check these.)
#[cfg_attr(target_arch = "aarch64", allow(dead_code))]
pub(crate) struct Micro;

/// Whether this build uses the explicit AVX + FMA micro-kernel (`Micro::avx_fma`, compiled only there).
#[cfg_attr(target_arch = "aarch64", allow(dead_code))]
const AVX_FMA: bool = cfg!(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_feature = "avx",
    target_feature = "fma"
));

#[cfg_attr(target_arch = "aarch64", allow(dead_code))]
impl Micro {
    /// `acc[i][j] = Σ_p a[p·MR + i] · b[p·NR + j]` over the slivers' common length: the explicit
    /// AVX + FMA kernel where the build enables both, the portable one elsewhere.
    #[inline(always)]
    pub(crate) fn run(a: &[f32], b: &[f32]) -> [[f32; block::NR]; block::MR] {
        if AVX_FMA {
            #[cfg(all(
                any(target_arch = "x86_64", target_arch = "x86"),
                target_feature = "avx",
                target_feature = "fma"
            ))]
            return Self::avx_fma(a, b);
        }
        Self::portable(a, b)
    }

    /// The portable kernel, written for LLVM's vectorisers: fixed-size rows, constant trip
    /// counts. (On AVX-512 builds LLVM vectorises its `p` loop as an in-order reduction with
    /// gathers, ten times slower, which is one reason those builds take `Micro::avx_fma`.)
    #[inline(always)]
    pub(crate) fn portable(a: &[f32], b: &[f32]) -> [[f32; block::NR]; block::MR] {
        const MR: usize = block::MR;
        const NR: usize = block::NR;
        let mut acc = [[0.0f32; NR]; MR];
        for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
            // Copies into fixed-size arrays: every loop below then has a constant trip count,
            // is unrolled, and the NR-wide rows become vector operations on registers.
            let av: [f32; MR] = core::array::from_fn(|i| ap[i]);
            let bv: [f32; NR] = core::array::from_fn(|j| bp[j]);
            for i in 0..MR {
                for j in 0..NR {
                    acc[i][j] += av[i] * bv[j];
                }
            }
        }
        acc
    }

    /// The explicit x86 kernel for `6 × 16` ([`x86::fma_6x16`]) in builds that enable AVX and
    /// FMA. Results differ from [`Micro::portable`] only by FMA's single rounding.
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "avx",
        target_feature = "fma"
    ))]
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn avx_fma(a: &[f32], b: &[f32]) -> [[f32; block::NR]; block::MR] {
        // SAFETY: AVX and FMA are enabled for the whole build (the cfg above).
        unsafe { x86::fma_6x16(a, b) }
    }
}

/// The x86 micro-kernels chosen at run time ([`kernel_at`]) and their entry points.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
#[allow(unsafe_code)]
mod x86 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{blis, Product, Strides, Tile};

    /// Where a kernel of `RU` rows finds step `p` of row `i` of `A`: at `row[i] + p·step`. `A`
    /// packed in slivers `height` rows high (`a[p·height + i]`), or in place (`DIRECT_A`:
    /// `a[i·lda + p]`, rows past `rows` pointing at row `rows − 1`). The pointers are only
    /// computed here (wrapping); the kernels read through them inside `a` by their assertions.
    #[inline(always)]
    fn a_rows<const RU: usize, const DIRECT_A: bool>(
        a: &[f32],
        lda: usize,
        rows: usize,
        height: usize,
    ) -> ([*const f32; RU], usize) {
        let pa = a.as_ptr();
        if DIRECT_A {
            let last = rows.saturating_sub(1);
            (
                core::array::from_fn(|i| pa.wrapping_add(i.min(last) * lda)),
                1,
            )
        } else {
            (core::array::from_fn(|i| pa.wrapping_add(i)), height)
        }
    }

    /// The 6 × 16 AVX2 + FMA tile: two 8-lane rows of B, six broadcasts of A, twelve fused
    /// multiply-adds per step, the twelve accumulators in registers.
    ///
    /// # Safety
    /// AVX and FMA are enabled in the caller.
    #[inline(always)]
    #[cfg_attr(
        not(all(target_feature = "avx", target_feature = "fma")),
        allow(dead_code) // Only builds that enable AVX and FMA call it (`Micro::avx_fma`).
    )]
    pub(super) unsafe fn fma_6x16(a: &[f32], b: &[f32]) -> [[f32; 16]; 6] {
        // SAFETY: the caller's contract; packed slivers (`ldb` = 16).
        unsafe { fma_6x16_ld::<false, false>((a, 0, b, 16, a.len() / 6, 6)) }
    }

    /// [`fma_6x16`] on a `B` whose step `p` starts at `b[p·ldb]` (`PREFETCH`: ask for the row
    /// [`B_AHEAD`] steps on, for a `B` read in place), over `kc` steps, and an `A` packed
    /// (`DIRECT_A` false: `a[p·6 + i]`) or in place (`a[min(i, rows − 1)·lda + p]`).
    ///
    /// # Safety
    /// AVX and FMA are enabled in the caller; `1 ≤ rows`.
    #[inline(always)]
    unsafe fn fma_6x16_ld<const PREFETCH: bool, const DIRECT_A: bool>(
        (a, lda, b, ldb, kc, rows): PartArgs<'_>,
    ) -> [[f32; 16]; 6] {
        const R: usize = 6;
        const C: usize = 16;
        assert!(kc == 0 || (ldb >= C && b.len() >= (kc - 1) * ldb + C));
        if DIRECT_A {
            assert!(rows >= 1 && a.len() >= (rows - 1) * lda + kc);
        } else {
            assert!(a.len() >= kc * R);
        }
        let mut out = [[0.0f32; C]; R];
        // SAFETY: for `p < kc` the loads read `a[p·6 + i]` (packed) or
        // `a[min(i, rows − 1)·lda + p]` (in place), and `b[p·ldb .. p·ldb + 16]` (two unaligned
        // 8-lane loads), inside both slices by the assertions above; the stores write the 16
        // floats of each `out` row. The caller enables AVX and FMA.
        unsafe {
            let mut c = [[_mm256_setzero_ps(); 2]; R];
            let pb = b.as_ptr();
            let (row, step) = a_rows::<R, DIRECT_A>(a, lda, rows, R);
            for p in 0..kc {
                if PREFETCH {
                    // A hint; it never faults.
                    let ahead = pb.wrapping_add((p + B_AHEAD) * ldb);
                    _mm_prefetch::<_MM_HINT_T1>(ahead.cast());
                }
                let b0 = _mm256_loadu_ps(pb.add(p * ldb));
                let b1 = _mm256_loadu_ps(pb.add(p * ldb + 8));
                for (ci, &ri) in c.iter_mut().zip(&row) {
                    let ai = _mm256_broadcast_ss(&*ri.add(p * step));
                    ci[0] = _mm256_fmadd_ps(ai, b0, ci[0]);
                    ci[1] = _mm256_fmadd_ps(ai, b1, ci[1]);
                }
            }
            for (row, ci) in out.iter_mut().zip(&c) {
                _mm256_storeu_ps(row.as_mut_ptr(), ci[0]);
                _mm256_storeu_ps(row.as_mut_ptr().add(8), ci[1]);
            }
        }
        out
    }

    /// The 6 × 16 AVX2 + FMA kernel.
    struct Fma;

    impl Tile<6, 16> for Fma {
        #[inline(always)]
        unsafe fn run(
            a: &[f32],
            lda: usize,
            b: &[f32],
            ldb: usize,
            kc: usize,
            rows: usize,
            _: usize,
        ) -> [[f32; 16]; 6] {
            let args = (a, lda, b, ldb, kc, rows);
            // SAFETY (every call): the trait's contract (AVX2 and FMA enabled).
            match (ldb != 16, lda != 0) {
                (false, false) => unsafe { fma_6x16_ld::<false, false>(args) },
                (true, false) => unsafe { fma_6x16_ld::<true, false>(args) },
                (false, true) => unsafe { fma_6x16_ld::<false, true>(args) },
                (true, true) => unsafe { fma_6x16_ld::<true, true>(args) },
            }
        }

        const DIRECT_B: bool = true;
        const DIRECT_A: bool = true;
    }

    /// The 12 × 32 AVX-512 kernel: two 16-lane rows of B, twelve broadcasts of A, 24 fused
    /// multiply-adds per step into 24 accumulators (27 of the 32 registers in use). A tile at
    /// the edge of `C` sums only its first 4 or 8 rows and its first 16 columns where the rest
    /// are padding (so 16 rows cost 12 + 4, not 24; Winograd's 7 × 7 maps have 16 tiles).
    struct Avx512;

    /// Rows of the AVX-512 kernel's slivers of A.
    const R512: usize = 12;
    /// Columns of the AVX-512 kernel's slivers of B.
    const C512: usize = 32;
    /// Steps ahead at which the AVX-512 kernel prefetches a `B` read in place. libmvision
    /// without the `gemm` crate, ResNet-18 / AlexNet forward in ms (two alternating rounds):
    /// no prefetch 15.4–15.7 / 11.3–11.9, 8 steps 14.7–15.0 / 11.2–12.0, 16 14.0–14.1 /
    /// 10.9–11.5, 32 13.0–13.3 / 10.3–11.0, 48 12.5–12.8 / 10.4–10.7, 64 12.5–12.6 / 10.6.
    const B_AHEAD: usize = 48;

    /// The first `RU` rows and `16·V` columns of the AVX-512 tile (the rest stay zero), over
    /// `kc` steps; `A` packed (`DIRECT_A` false: `a[p·12 + i]`) or in place (`a[i·lda + p]`,
    /// rows past `rows` reading row `rows − 1` again, their sums unused).
    ///
    /// # Safety
    /// AVX-512 F is enabled in the caller; `RU ≤ 12`, `V ≤ 2`, `1 ≤ rows`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn avx512_part<
        const RU: usize,
        const V: usize,
        const PREFETCH: bool,
        const DIRECT_A: bool,
    >(
        a: &[f32],
        lda: usize,
        b: &[f32],
        ldb: usize,
        kc: usize,
        rows: usize,
    ) -> [[f32; C512]; R512] {
        assert!(kc == 0 || (ldb >= C512 && b.len() >= (kc - 1) * ldb + C512));
        if DIRECT_A {
            assert!(rows >= 1 && a.len() >= (rows - 1) * lda + kc);
        } else {
            assert!(a.len() >= kc * R512);
        }
        let mut out = [[0.0f32; C512]; R512];
        // SAFETY: for `p < kc` the loads read `a[p·12 + i]` for `i < RU ≤ 12` (packed) or
        // `a[min(i, rows − 1)·lda + p]` (in place), and `b[p·ldb .. p·ldb + 16·V]` (V ≤ 2
        // unaligned 16-lane loads), inside both slices by the assertions above; the stores
        // write 16·V ≤ 32 floats of rows `i < RU ≤ 12` of `out`. The caller enables AVX-512 F.
        unsafe {
            let mut c = [[_mm512_setzero_ps(); V]; RU];
            let pb = b.as_ptr();
            let (row, step) = a_rows::<RU, DIRECT_A>(a, lda, rows, R512);
            for p in 0..kc {
                if PREFETCH {
                    // `B` read in place: its rows are `ldb` apart (a new pair of lines each
                    // step), so ask for the row B_AHEAD steps on (a hint; it never faults).
                    let ahead = pb.wrapping_add((p + B_AHEAD) * ldb);
                    for v in 0..V {
                        _mm_prefetch::<_MM_HINT_T1>(ahead.wrapping_add(16 * v).cast());
                    }
                }
                // A plain loop: a closure (`array::from_fn`) would not inherit the target
                // features, and its intrinsic could stay a call.
                let mut bv = [_mm512_setzero_ps(); V];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = _mm512_loadu_ps(pb.add(p * ldb + 16 * v));
                }
                for (ci, &ri) in c.iter_mut().zip(&row) {
                    let ai = _mm512_set1_ps(*ri.add(p * step));
                    for (acc, &bj) in ci.iter_mut().zip(&bv) {
                        *acc = _mm512_fmadd_ps(ai, bj, *acc);
                    }
                }
            }
            for (row, ci) in out.iter_mut().zip(&c) {
                for (v, &acc) in ci.iter().enumerate() {
                    _mm512_storeu_ps(row.as_mut_ptr().add(16 * v), acc);
                }
            }
        }
        out
    }

    /// [`avx512_part`] with the row count `RU` chosen, the rest by value.
    ///
    /// # Safety
    /// As [`avx512_part`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn avx512_rows<const RU: usize>(
        a: &[f32],
        lda: usize,
        b: &[f32],
        ldb: usize,
        kc: usize,
        rows: usize,
        cols: usize,
    ) -> [[f32; C512]; R512] {
        let args = (a, lda, b, ldb, kc, rows);
        // SAFETY (every call): the caller's contract.
        unsafe {
            match (cols > 16, ldb != C512, lda != 0) {
                (false, false, false) => call::<RU, 1, false, false>(args),
                (true, false, false) => call::<RU, 2, false, false>(args),
                (false, true, false) => call::<RU, 1, true, false>(args),
                (true, true, false) => call::<RU, 2, true, false>(args),
                (false, false, true) => call::<RU, 1, false, true>(args),
                (true, false, true) => call::<RU, 2, false, true>(args),
                (false, true, true) => call::<RU, 1, true, true>(args),
                (true, true, true) => call::<RU, 2, true, true>(args),
            }
        }
    }

    /// The arguments of [`avx512_part`] after its const parameters.
    type PartArgs<'a> = (&'a [f32], usize, &'a [f32], usize, usize, usize);

    /// [`avx512_part`] on a tuple of arguments.
    ///
    /// # Safety
    /// As [`avx512_part`].
    #[inline(always)]
    unsafe fn call<const RU: usize, const V: usize, const PF: bool, const DA: bool>(
        (a, lda, b, ldb, kc, rows): PartArgs<'_>,
    ) -> [[f32; C512]; R512] {
        // SAFETY: the caller's contract.
        unsafe { avx512_part::<RU, V, PF, DA>(a, lda, b, ldb, kc, rows) }
    }

    impl Tile<R512, C512> for Avx512 {
        #[inline(always)]
        unsafe fn run(
            a: &[f32],
            lda: usize,
            b: &[f32],
            ldb: usize,
            kc: usize,
            rows: usize,
            cols: usize,
        ) -> [[f32; C512]; R512] {
            // SAFETY (every call): the trait's contract (AVX-512 F enabled); RU ≤ 12.
            match rows {
                0..=4 => unsafe { avx512_rows::<4>(a, lda, b, ldb, kc, rows, cols) },
                5..=8 => unsafe { avx512_rows::<8>(a, lda, b, ldb, kc, rows, cols) },
                _ => unsafe { avx512_rows::<12>(a, lda, b, ldb, kc, rows, cols) },
            }
        }

        const DIRECT_B: bool = true;
        const DIRECT_A: bool = true;

        /// 16 steps of the sliver's rows loaded as vectors, transposed, and stored 12 lanes a
        /// step (the default loop's strided stores became scatters, one per value).
        #[inline(always)]
        unsafe fn pack_rows(rows: &[&[f32]; R512], kc: usize, sliver: &mut [f32]) {
            assert!(
                sliver.len() >= R512 * kc && rows.iter().all(|r| r.is_empty() || r.len() >= kc)
            );
            let dst = sliver.as_mut_ptr();
            for p0 in (0..kc).step_by(16) {
                let w = 16.min(kc - p0);
                let m: __mmask16 = ((1u32 << w) - 1) as u16;
                let mut r = [_mm512_setzero_ps(); 16];
                // SAFETY: lanes `< w` of a non-empty row are `row[p0 .. p0 + w]`, inside its `kc`
                // values (asserted); masked-off lanes are not read. Empty rows stay zero.
                for (ri, row) in r.iter_mut().zip(rows).filter(|(_, row)| !row.is_empty()) {
                    *ri = unsafe { _mm512_maskz_loadu_ps(m, row.as_ptr().add(p0)) };
                }
                // SAFETY: the trait's contract (AVX-512 F enabled).
                let t = unsafe { crate::nn::depthwise_channels::avx512::transpose16(r) };
                for (q, tq) in t.iter().enumerate().take(w) {
                    // SAFETY: 12 floats at `(p0 + q)·12 ≤ (kc − 1)·12`, inside the sliver's
                    // `12·kc` (asserted); lanes 12–15 are masked off.
                    unsafe { _mm512_mask_storeu_ps(dst.add((p0 + q) * R512), 0x0FFF, *tq) };
                }
            }
        }
    }

    /// The AVX2 + FMA tile, for the unit tests.
    ///
    /// # Safety
    /// AVX2 and FMA are supported by the CPU and OS.
    #[cfg(test)]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fma_tile(a: &[f32], b: &[f32]) -> [[f32; 16]; 6] {
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { Fma::run(a, 0, b, 16, a.len() / 6, 6, 16) }
    }

    /// The AVX-512 tile, for the unit tests.
    ///
    /// # Safety
    /// AVX-512 F is supported by the CPU and OS.
    #[cfg(test)]
    #[target_feature(enable = "avx2,fma,avx512f")]
    pub(super) unsafe fn avx512_tile(
        a: &[f32],
        b: &[f32],
        rows: usize,
        cols: usize,
    ) -> [[f32; 32]; 12] {
        // SAFETY: AVX-512 F is enabled here.
        unsafe { Avx512::run(a, 0, b, 32, a.len() / 12, rows, cols) }
    }

    /// [`super::gemm_strided`]'s own path with the AVX-512 kernel.
    ///
    /// # Safety
    /// AVX-512 F, AVX2 and FMA are supported by the CPU and OS.
    #[target_feature(enable = "avx2,fma,avx512f")]
    pub(super) unsafe fn gemm_avx512(
        p: &Product<'_>,
        c: &mut [f32],
        sc: Strides,
        pack: &mut [f32],
    ) {
        // SAFETY: AVX-512 F is enabled here.
        unsafe { blis::<R512, C512, Avx512>(p, c, sc, pack) }
    }

    /// [`super::gemm_strided`]'s own path with the AVX2 + FMA kernel.
    ///
    /// # Safety
    /// AVX2 and FMA are supported by the CPU and OS.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemm_fma(p: &Product<'_>, c: &mut [f32], sc: Strides, pack: &mut [f32]) {
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { blis::<6, 16, Fma>(p, c, sc, pack) }
    }
}

/// The AArch64 micro-kernel (NEON is part of the base instruction set there).
#[cfg(target_arch = "aarch64")]
#[allow(unsafe_code)]
mod neon {
    use core::arch::aarch64::*;

    /// The 8 × 12 tile `acc[i][j] = Σ_p a[p·8 + i]·b[p·ldb + j]`, `p` below `kc`: per step two
    /// 4-lane vectors of the packed `A` sliver and three of `B` (a packed sliver, `ldb` = 12,
    /// or in place), and 24 fused multiply-adds of a `B` vector by one lane of `A` into 24
    /// accumulator registers.
    ///
    /// # Panics
    /// If `a` holds fewer than `8·kc` elements or `b` fewer than `(kc − 1)·ldb + 12`.
    #[inline(always)]
    pub(super) fn tile_8x12(a: &[f32], b: &[f32], ldb: usize, kc: usize) -> [[f32; 12]; 8] {
        assert!(a.len() >= 8 * kc && (kc == 0 || b.len() >= (kc - 1) * ldb + 12));
        let mut out = [[0.0f32; 12]; 8];
        // SAFETY: NEON is part of AArch64's base instruction set; every load below reads step
        // `p < kc` at `a[8p .. 8p + 8]` and `b[p·ldb .. p·ldb + 12]`, inside the slices by the
        // assertion; the stores write `out`'s rows of 12.
        unsafe {
            let zero = vdupq_n_f32(0.0);
            let mut acc = [[zero; 3]; 8];
            let (mut pa, mut pb) = (a.as_ptr(), b.as_ptr());
            for _ in 0..kc {
                let (a0, a1) = (vld1q_f32(pa), vld1q_f32(pa.add(4)));
                let bv = [vld1q_f32(pb), vld1q_f32(pb.add(4)), vld1q_f32(pb.add(8))];
                macro_rules! row {
                    ($i:literal, $a:ident, $lane:literal) => {
                        for (acc, &b) in acc[$i].iter_mut().zip(&bv) {
                            *acc = vfmaq_laneq_f32::<$lane>(*acc, b, $a);
                        }
                    };
                }
                row!(0, a0, 0);
                row!(1, a0, 1);
                row!(2, a0, 2);
                row!(3, a0, 3);
                row!(4, a1, 0);
                row!(5, a1, 1);
                row!(6, a1, 2);
                row!(7, a1, 3);
                pa = pa.wrapping_add(8);
                pb = pb.wrapping_add(ldb);
            }
            for (row, acc) in out.iter_mut().zip(&acc) {
                for (dst, &v) in row.chunks_exact_mut(4).zip(acc) {
                    vst1q_f32(dst.as_mut_ptr(), v);
                }
            }
        }
        out
    }
}

/// Whether [`sgemm`] may hand products to the `gemm` crate ([`set_gemm_crate`]).
#[cfg(feature = "gemm-crate")]
static CRATE_ON: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(true);

/// Lets [`sgemm`] hand large products to the `gemm` crate (`true`, the default with the
/// `gemm-crate` feature) or keeps every product on the core's own kernels (`false`, what
/// `libmvision` runs), for the whole process. Results differ by rounding only.
#[cfg(feature = "gemm-crate")]
pub fn set_gemm_crate(on: bool) {
    CRATE_ON.store(on, core::sync::atomic::Ordering::Relaxed);
}

/// Whether [`sgemm`] may hand products to the `gemm` crate ([`set_gemm_crate`]).
#[cfg(feature = "gemm-crate")]
pub fn gemm_crate_enabled() -> bool {
    CRATE_ON.load(core::sync::atomic::Ordering::Relaxed)
}

/// The `gemm` crate's kernel on the validated operands (single-threaded).
#[cfg(feature = "gemm-crate")]
#[allow(unsafe_code)]
fn crate_gemm(p: &Product<'_>, c: &mut [f32], sc: Strides) {
    let Product {
        m,
        n,
        k,
        alpha,
        a,
        sa,
        b,
        sb,
        beta,
    } = *p;
    // Strides are at most a slice length, and slices never exceed isize::MAX bytes.
    let s = |x: usize| x as isize;
    // SAFETY: `operand` checked that every element `(i, j)` of the three matrices, at
    // `i·rs + j·cs` for `i`, `j` below their dimensions, lies inside `a`, `b` and `c`
    // respectively; `c` is borrowed exclusively, so it overlaps neither `a` nor `b`. The crate
    // computes `dst ← α'·dst + β'·lhs·rhs` (reading `dst` only when `read_dst`), hence the
    // swapped `beta, alpha` and `read_dst = beta ≠ 0` (BLAS's β = 0 semantics).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            s(sc.cs),
            s(sc.rs),
            beta != 0.0,
            a.as_ptr(),
            s(sa.cs),
            s(sa.rs),
            b.as_ptr(),
            s(sb.cs),
            s(sb.rs),
            beta,
            alpha,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

// --- The seed variants ----------------------------------------------------------------------

fn packed_lens(m: usize, n: usize, k: usize, a: usize, b: usize, c: usize) -> Result<()> {
    let mk = m.checked_mul(k).ok_or(Error::Overflow)?;
    let kn = k.checked_mul(n).ok_or(Error::Overflow)?;
    let mn = m.checked_mul(n).ok_or(Error::Overflow)?;
    if a < mk || b < kn || c < mn {
        return Err(Error::BufferTooSmall);
    }
    Ok(())
}

/// Seed 001's first kernel on the CPU: `C = A·B` with packed row-major `A` (`m × k`), `B`
/// (`k × n`) and `C` (`m × n`), one dot product per element of C. For study and benchmarks.
///
/// # Errors
/// [`Error::BufferTooSmall`] if a buffer is shorter than its matrix; [`Error::Overflow`] if a
/// matrix's element count overflows.
pub fn sgemm_naive(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) -> Result<()> {
    packed_lens(m, n, k, a.len(), b.len(), c.len())?;
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f32;
            for p in 0..k {
                s += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = s;
        }
    }
    Ok(())
}

/// Tile side of [`sgemm_tiled32`].
pub const TILE32: usize = 32;

/// Working length (elements) of [`sgemm_tiled32`]: `A` and `B` copied zero-padded to multiples of
/// 32, `M₃₂·K₃₂ + K₃₂·N₃₂`.
///
/// # Errors
/// [`Error::Overflow`] if it does not fit `usize`.
pub fn tiled32_work_len(m: usize, n: usize, k: usize) -> Result<usize> {
    let r = |x: usize| x.checked_next_multiple_of(TILE32).ok_or(Error::Overflow);
    let (m, n, k) = (r(m)?, r(n)?, r(k)?);
    m.checked_mul(k)
        .and_then(|x| x.checked_add(k.checked_mul(n)?))
        .ok_or(Error::Overflow)
}

/// Seeds 000/001's optimised GPU kernel, transcribed to the CPU: `A` and `B` zero-padded to
/// multiples of 32 (no edge branches), then one 32×32 tile of C at a time, accumulated over
/// 32×32 tiles of A and B. Same operands as [`sgemm_naive`]; `work` holds at least
/// [`tiled32_work_len`] elements.
///
/// # Errors
/// Those of [`sgemm_naive`]; [`Error::BufferTooSmall`] if `work` is short.
pub fn sgemm_tiled32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    work: &mut [f32],
) -> Result<()> {
    packed_lens(m, n, k, a.len(), b.len(), c.len())?;
    if work.len() < tiled32_work_len(m, n, k)? {
        return Err(Error::BufferTooSmall);
    }
    const T: usize = TILE32;
    let (mp, np, kp) = (m.div_ceil(T) * T, n.div_ceil(T) * T, k.div_ceil(T) * T);
    let (ap, rest) = work.split_at_mut(mp * kp);
    let bp = &mut rest[..kp * np];
    ap.fill(0.0);
    bp.fill(0.0);
    for i in 0..m {
        ap[i * kp..i * kp + k].copy_from_slice(&a[i * k..(i + 1) * k]);
    }
    for p in 0..k {
        bp[p * np..p * np + n].copy_from_slice(&b[p * n..(p + 1) * n]);
    }
    for ti in (0..mp).step_by(T) {
        for tj in (0..np).step_by(T) {
            let mut acc = [[0.0f32; T]; T];
            for tk in (0..kp).step_by(T) {
                for (i, acc_row) in acc.iter_mut().enumerate() {
                    let a_row = &ap[(ti + i) * kp + tk..][..T];
                    for (p, &av) in a_row.iter().enumerate() {
                        let b_row = &bp[(tk + p) * np + tj..][..T];
                        for (x, &bv) in acc_row.iter_mut().zip(b_row) {
                            *x += av * bv;
                        }
                    }
                }
            }
            for (i, acc_row) in acc.iter().enumerate().take(m.saturating_sub(ti)) {
                let cols = min(T, n - tj.min(n));
                c[(ti + i) * n + tj..][..cols].copy_from_slice(&acc_row[..cols]);
            }
        }
    }
    Ok(())
}

// --- Integer GEMM ---------------------------------------------------------------------------

/// Largest inner dimension [`igemm_i8`] accepts: `k · 128²` must not exceed `i32::MAX`, so every
/// sum is exact.
pub const IGEMM_I8_MAX_K: usize = (i32::MAX as usize) / (128 * 128);

/// Integer GEMM for fixed-point networks: `C = A·B` exactly, with row-major `A` (`m × k`, `i8`,
/// leading dimension `lda`), `B` (`k × n`, `i8`, `ldb`) and `C` (`m × n`, `i32`, `ldc`).
/// Elements outside the matrices are not touched. Needs no working memory.
///
/// # Errors
/// [`Error::StrideTooSmall`] if a leading dimension is below its row length (or 0);
/// [`Error::BufferTooSmall`] if a buffer does not cover its matrix; [`Error::Overflow`] if
/// `k > IGEMM_I8_MAX_K` (a sum could overflow `i32`) or an extent overflows.
#[allow(clippy::too_many_arguments)]
pub fn igemm_i8(
    m: usize,
    n: usize,
    k: usize,
    a: &[i8],
    lda: usize,
    b: &[i8],
    ldb: usize,
    c: &mut [i32],
    ldc: usize,
) -> Result<()> {
    if k > IGEMM_I8_MAX_K {
        return Err(Error::Overflow);
    }
    let row = Order::RowMajor;
    operand(row, Transpose::No, m, k, lda, a.len())?;
    operand(row, Transpose::No, k, n, ldb, b.len())?;
    operand(row, Transpose::No, m, n, ldc, c.len())?;
    for i in 0..m {
        let c_row = &mut c[i * ldc..i * ldc + n];
        c_row.fill(0);
        for (p, &av) in a[i * lda..i * lda + k].iter().enumerate() {
            let av = i32::from(av);
            for (x, &bv) in c_row.iter_mut().zip(&b[p * ldb..p * ldb + n]) {
                *x += av * i32::from(bv);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `got` against the plain sums of `R × C` slivers `a`, `b` within the rounding of `kc`
    /// multiply-adds.
    fn check_tile<const R: usize, const C: usize>(a: &[f32], b: &[f32], got: &[[f32; C]; R]) {
        let kc = a.len() / R;
        for i in 0..R {
            for j in 0..C {
                let want: f64 = (0..kc)
                    .map(|p| a[p * R + i] as f64 * b[p * C + j] as f64)
                    .sum();
                let bound: f32 = (0..kc).map(|p| (a[p * R + i] * b[p * C + j]).abs()).sum();
                let tol = f32::EPSILON * (kc as f32 + 1.0) * bound;
                let err = (got[i][j] as f64 - want).abs();
                assert!(err <= tol as f64, "{R}x{C} kc={kc} [{i}][{j}]: {err}");
            }
        }
    }

    /// The packing buffer's bound in [`gemm_pack_len`]'s documentation.
    #[test]
    fn pack_len_bound() {
        let most = gemm_pack_len(usize::MAX / 4, usize::MAX / 4, usize::MAX / 4);
        assert_eq!(most, (MC + NC) * KC);
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert_eq!(most * 4, 2_232_320);
        #[cfg(target_pointer_width = "32")]
        assert_eq!(most * 4, 49_152);
    }

    /// Every micro-kernel this CPU runs (the build's own, and on x86 the run-time AVX2 + FMA
    /// and AVX-512 ones) against exact sums, on random slivers of 0 to `KC + 3` steps.
    #[test]
    #[allow(unsafe_code)]
    fn micro_kernels_agree() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let mut a = [0.0f32; MR * (KC + 3)];
        let mut b = [0.0f32; NR * (KC + 3)];
        for kc in [0, 1, 7, KC, KC + 3] {
            a.iter_mut().for_each(|x| *x = next());
            b.iter_mut().for_each(|x| *x = next());
            let (ab, bb) = (&a[..block::MR * kc], &b[..block::NR * kc]);
            check_tile(ab, bb, &Micro::portable(ab, bb));
            check_tile(ab, bb, &Micro::run(ab, bb));
            #[cfg(target_arch = "aarch64")]
            {
                check_tile(ab, bb, &neon::tile_8x12(ab, bb, block::NR, kc));
                // `B` in place: step `p` at `p·ldb`, rows longer than the tile.
                const LDB: usize = block::NR + 5;
                let mut wide = [0.0f32; LDB * (KC + 3)];
                wide.iter_mut().for_each(|x| *x = next());
                let direct = &wide[..kc.saturating_sub(1) * LDB + block::NR];
                let packed: [f32; NR * (KC + 3)] =
                    core::array::from_fn(|x| wide[x / block::NR * LDB + x % block::NR]);
                let bp = &packed[..block::NR * kc];
                check_tile(ab, bp, &neon::tile_8x12(ab, direct, LDB, kc));
            }
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            {
                let level = crate::cpu::detected();
                let (a6, b16) = (&a[..6 * kc], &b[..16 * kc]);
                if level >= crate::cpu::Level::X86V3 {
                    // SAFETY: AVX2 and FMA are supported (`cpu::detect`).
                    check_tile(a6, b16, &unsafe { x86::fma_tile(a6, b16) });
                }
                let (a12, b32) = (&a[..12 * kc], &b[..32 * kc]);
                if level >= crate::cpu::Level::X86V4 {
                    for (rows, cols) in [(12, 32), (12, 16), (8, 32), (8, 9), (4, 32), (1, 1)] {
                        // SAFETY: AVX-512 F is supported (`cpu::detect`).
                        let got = unsafe { x86::avx512_tile(a12, b32, rows, cols) };
                        let mut want = [[0.0f32; 32]; 12];
                        for (w, g) in want.iter_mut().zip(&got).take(rows) {
                            w[..cols].copy_from_slice(&g[..cols]);
                        }
                        // The used part is right; the rest of the tile is never read.
                        let exact = {
                            let mut t = [[0.0f32; 32]; 12];
                            // SAFETY: as above.
                            let full = unsafe { x86::avx512_tile(a12, b32, 12, 32) };
                            check_tile(a12, b32, &full);
                            for (t, f) in t.iter_mut().zip(&full).take(rows) {
                                t[..cols].copy_from_slice(&f[..cols]);
                            }
                            t
                        };
                        assert_eq!(want, exact, "{rows} x {cols}");
                    }
                }
            }
        }
    }
}
