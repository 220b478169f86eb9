//! Matrix multiplication: SGEMM `C = α·op(A)·op(B) + β·C` (BLAS semantics, row- or column-major
//! operands, optional transposes), an exact `i8 × i8 → i32` GEMM for fixed-point networks, and
//! the two variants of seeds 000/001 kept for study and benchmarks ([`sgemm_naive`],
//! [`sgemm_tiled32`]).
//!
//! [`sgemm`] is the Goto/BLIS algorithm: loops over `NC` columns of `B`, `KC` of the inner
//! dimension and `MC` rows of `A`; each `KC × NC` panel of `B` and `MC × KC` block of `A` is
//! copied ("packed") into the caller's `pack` buffer as slivers `NR` columns wide / `MR` rows
//! high, zero-padded at the edges, so that the register micro-kernel streams both
//! from contiguous memory and never branches on the edge. The micro-kernel keeps an `MR × NR`
//! tile of `C` in an `[[f32; NR]; MR]` array that LLVM unrolls and keeps in vector registers;
//! `MR`, `NR` and the block sizes are chosen per target at compile time (see the constants).
//! That portable kernel vectorises for SSE2 and NEON and runs as scalar code on FPU-only
//! microcontrollers. Builds with AVX and FMA enabled (`-C target-cpu=x86-64-v3` or `native`)
//! use an explicit 6×16 FMA kernel instead (`Micro::avx_fma`; with the `gemm` crate call, the
//! only `unsafe` here): LLVM does not fuse multiply-adds on its own, and on AVX-512 it
//! vectorises the portable kernel badly (gathers, ~3 GFLOP/s). The portable kernel is
//! unit-tested against it.
//!
//! With the `gemm-crate` feature (std builds), products of at least [`GEMM_CRATE_MIN_FLOP`]
//! multiply-adds are handed to the [`gemm`](https://crates.io/crates/gemm) crate, which picks
//! AVX-512, AVX2+FMA or NEON kernels at run time and beats this portable code by several times
//! on a desktop CPU (see BENCHMARKS.md); it allocates its own packing memory, so that path is not
//! allocation-free. The argument checks, errors and results (up to rounding) are the same on
//! both paths. The crate cannot be told to stay below an instruction set, so while a caller
//! caps the level below the CPU's ([`crate::cpu::set_cap`], `MVISION_CPU`,
//! `mv_cpu_set_max_level`) every product takes the portable path, as [`sgemm_portable`].
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
// A: x86 AVX (and AVX-512 builds, which use the same 8-lane FMA kernel; std builds reach AVX-512
// through the gemm crate) 16 × 8 lanes (6 × 16 = 12 registers of accumulators), SSE2 16 × 4
// lanes (6 × 8 = 12), AArch64 NEON 32 × 4 lanes (8 × 8 = 16); FPU-only cores (Cortex-M4F: 32
// single registers) get 4 × 4. KC is chosen so that
// one A sliver and one B sliver (MR·KC + KC·NR floats) stay in a 32–48 KiB L1, MC so that the
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
    pub const NR: usize = 8;
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
mod block {
    pub const MR: usize = 4;
    pub const NR: usize = 4;
}

/// Rows of the register tile of `C` (the micro-kernel's height) on this target.
pub const MR: usize = block::MR;
/// Columns of the register tile of `C` (the micro-kernel's width) on this target.
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
pub const NC: usize = 2048;
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

/// Length in `f32` elements of the `pack` buffer that [`sgemm`] needs for an `m × n × k` product:
/// one packed `min(m, MC) × min(k, KC)` block of A and one `min(k, KC) × min(n, NC)` panel of B,
/// each rounded up to whole slivers. At most `(MC + NC)·KC` (1 114 112 bytes on 64-bit targets,
/// 49 152 bytes on 32-bit ones), whatever the shape.
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
    gemm_strided(m, n, k, alpha, a, sa, b, sb, beta, c, sc, pack, allow_crate);
    Ok(())
}

/// The validated SGEMM on strided operands (`allow_crate`: large products may go to the `gemm`
/// crate when the feature is on).
#[allow(clippy::too_many_arguments)]
fn gemm_strided(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    sa: Strides,
    b: &[f32],
    sb: Strides,
    beta: f32,
    c: &mut [f32],
    sc: Strides,
    pack: &mut [f32],
    allow_crate: bool,
) {
    let _ = allow_crate; // read only with the `gemm-crate` feature
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 || alpha == 0.0 {
        scale(m, n, beta, c, sc);
        return;
    }
    // The crate picks its own instruction set (AVX-512 where the CPU has it), so a caller who
    // capped the level below the CPU's (`cpu::set_cap`) gets the portable path instead.
    #[cfg(feature = "gemm-crate")]
    if allow_crate
        && crate::cpu::cap() >= crate::cpu::detected()
        && (m as u64) * (n as u64) * (k as u64) >= GEMM_CRATE_MIN_FLOP
    {
        crate_gemm(m, n, k, alpha, a, sa, b, sb, beta, c, sc);
        return;
    }
    let (a_pack, b_pack) = pack.split_at_mut(round_up(min(m, MC), MR) * min(k, KC));
    for jc in (0..n).step_by(NC) {
        let nc = min(NC, n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = min(KC, k - pc);
            pack_b(b, sb, pc, jc, kc, nc, b_pack);
            for ic in (0..m).step_by(MC) {
                let mc = min(MC, m - ic);
                pack_a(a, sa, ic, pc, mc, kc, a_pack);
                macro_kernel(
                    mc,
                    nc,
                    kc,
                    alpha,
                    a_pack,
                    b_pack,
                    if pc == 0 { Some(beta) } else { None },
                    c,
                    sc,
                    ic,
                    jc,
                );
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
fn pack_a(a: &[f32], sa: Strides, ic: usize, pc: usize, mc: usize, kc: usize, out: &mut [f32]) {
    for (s, sliver) in out
        .chunks_exact_mut(MR * kc)
        .take(mc.div_ceil(MR))
        .enumerate()
    {
        let i0 = ic + s * MR;
        let rows = min(MR, mc - s * MR);
        if sa.cs == 1 {
            for i in 0..MR {
                if i < rows {
                    let src = &a[(i0 + i) * sa.rs + pc..][..kc];
                    for (dst, &v) in sliver[i..].iter_mut().step_by(MR).zip(src) {
                        *dst = v;
                    }
                } else {
                    sliver[i..].iter_mut().step_by(MR).for_each(|x| *x = 0.0);
                }
            }
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
fn pack_b(b: &[f32], sb: Strides, pc: usize, jc: usize, kc: usize, nc: usize, out: &mut [f32]) {
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

/// One `mc × nc` block of C from packed A and B: every `MR × NR` tile by the micro-kernel, then
/// written back. `beta` is `Some` for the first `KC` block (C ← α·AB + β·C), `None` after
/// (C ← C + α·AB).
#[allow(clippy::too_many_arguments)]
fn macro_kernel(
    mc: usize,
    nc: usize,
    kc: usize,
    alpha: f32,
    a_pack: &[f32],
    b_pack: &[f32],
    beta: Option<f32>,
    c: &mut [f32],
    sc: Strides,
    ic: usize,
    jc: usize,
) {
    for (s_b, b_sliver) in b_pack
        .chunks_exact(NR * kc)
        .take(nc.div_ceil(NR))
        .enumerate()
    {
        let j0 = s_b * NR;
        let cols = min(NR, nc - j0);
        for (s_a, a_sliver) in a_pack
            .chunks_exact(MR * kc)
            .take(mc.div_ceil(MR))
            .enumerate()
        {
            let i0 = s_a * MR;
            let rows = min(MR, mc - i0);
            let acc = Micro::run(a_sliver, b_sliver);
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
pub(crate) struct Micro;

/// Whether this build uses the explicit AVX + FMA micro-kernel (`Micro::avx_fma`, compiled only there).
const AVX_FMA: bool = cfg!(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_feature = "avx",
    target_feature = "fma"
));

impl Micro {
    /// `acc[i][j] = Σ_p a[p·MR + i] · b[p·NR + j]` over the slivers' common length: the explicit
    /// AVX + FMA kernel where the build enables both, the portable one elsewhere.
    #[inline(always)]
    pub(crate) fn run(a: &[f32], b: &[f32]) -> [[f32; NR]; MR] {
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
    pub(crate) fn portable(a: &[f32], b: &[f32]) -> [[f32; NR]; MR] {
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

    /// The explicit x86 kernel for `MR × NR = 6 × 16`: two 8-lane rows of B, six broadcasts of
    /// A, twelve fused multiply-adds per step, the twelve accumulators in registers. Results
    /// differ from [`Micro::portable`] only by FMA's single rounding.
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "avx",
        target_feature = "fma"
    ))]
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn avx_fma(a: &[f32], b: &[f32]) -> [[f32; NR]; MR] {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;
        const _: () = assert!(MR == 6 && NR == 16);
        let steps = (a.len() / MR).min(b.len() / NR);
        let mut out = [[0.0f32; NR]; MR];
        // SAFETY: AVX and FMA are enabled for the whole build (the cfg above). For `p < steps`
        // the loads read `a[p·MR .. p·MR + MR]` (six scalars) and `b[p·NR .. p·NR + 16]` (two
        // unaligned 8-lane loads), inside both slices because `steps·MR ≤ a.len()` and
        // `steps·NR ≤ b.len()`; the stores write the 16 floats of each `out` row.
        unsafe {
            let mut c = [[_mm256_setzero_ps(); 2]; MR];
            let (pa, pb) = (a.as_ptr(), b.as_ptr());
            for p in 0..steps {
                let b0 = _mm256_loadu_ps(pb.add(p * NR));
                let b1 = _mm256_loadu_ps(pb.add(p * NR + 8));
                for (i, ci) in c.iter_mut().enumerate() {
                    let ai = _mm256_broadcast_ss(&*pa.add(p * MR + i));
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
}

/// The `gemm` crate's kernel on the validated operands (single-threaded).
#[cfg(feature = "gemm-crate")]
#[allow(clippy::too_many_arguments)]
#[allow(unsafe_code)]
fn crate_gemm(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    sa: Strides,
    b: &[f32],
    sb: Strides,
    beta: f32,
    c: &mut [f32],
    sc: Strides,
) {
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

    /// The explicit kernel (where built) against the portable one, on random slivers.
    #[test]
    fn micro_kernels_agree() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for kc in [0, 1, 7, KC] {
            let a: [f32; MR * KC] = core::array::from_fn(|_| next());
            let b: [f32; NR * KC] = core::array::from_fn(|_| next());
            let (a, b) = (&a[..MR * kc], &b[..NR * kc]);
            let want = Micro::portable(a, b);
            let got = Micro::run(a, b);
            for i in 0..MR {
                for j in 0..NR {
                    let bound: f32 = (0..kc).map(|p| (a[p * MR + i] * b[p * NR + j]).abs()).sum();
                    let tol = f32::EPSILON * (kc as f32 + 1.0) * bound;
                    assert!((got[i][j] - want[i][j]).abs() <= tol, "kc={kc} [{i}][{j}]");
                }
            }
        }
    }
}
