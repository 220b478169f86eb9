//! Explicit SIMD for the `u8` fixed-point filters: 16-bit pixels, adjacent taps paired and
//! multiplied with one widening multiply-add (`pmaddwd` on x86 SSE2, `smlal` on AArch64 NEON),
//! exact `i32` sums, then the same rounding and saturation as the portable path; and the box
//! filter's running sums in 16-bit lanes.
//!
//! Ring rows are *pair rows*: `i32` element `x` holds padded pixels `x` and `x + 1` (0 past the
//! end) in its low and high 16 bits, which in memory are two `i16` lanes in that order on the
//! little-endian targets we enable; `pmaddwd` of four consecutive elements with a packed
//! coefficient pair `(c_kx, c_kx+1)` gives four outputs' contributions of two taps with no
//! shuffle. [`DenseQ16`] is the dense filter, [`SepQ16`] the separable one (whose horizontal
//! sums need more than 16 bits and are split, see there), [`box_update`] / [`box_row`] the box
//! filter.
//!
//! This module and its per-ISA files (`sse2.rs`, `avx2.rs` and, for the box filter,
//! `avx512.rs` on x86; `neon.rs`; `none.rs` elsewhere) hold the integer filters' `unsafe`
//! code: unaligned vector loads and stores through raw pointers whose bounds are checked once
//! per row, and the view of `i32` scratch as `u16`. The baseline set (SSE2, NEON) is chosen at
//! compile time, AVX2 and AVX-512 at run time ([`crate::cpu::active`]); where a path is
//! missing, its constructor returns `None` (or its function reports "not done") and callers
//! keep the portable loops, which compute the same results.
//!
//! Exactness: every product of a pixel (`0..=255`) and an `i16` coefficient is exact in `i32`,
//! and integer addition is associative, so pairing taps and summing in any order gives the sum
//! the portable path computes; the kernel constructors already guarantee that no sum of a
//! subset of the products overflows `i32`.

use super::MAX_KERNEL_SIZE;

/// Largest number of tap pairs of a dense kernel (`15 · 8`).
const MAX_PAIRS: usize = MAX_KERNEL_SIZE * MAX_KERNEL_SIZE.div_ceil(2);

/// Output pixels per vector step; rows narrower than this take the portable path.
pub(crate) const LANES: usize = 8;

/// Whether this build has a SIMD path.
const ENABLED: bool = cfg!(any(
    all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ),
    all(
        target_arch = "aarch64",
        target_feature = "neon",
        target_endian = "little"
    )
));

/// Writes `out[i] = row[i] | row[i + 1] << 16` for `i < row.len() − 1`, i.e. the interior of a
/// pair row (`out.len()` must be at least `row.len() − 1`).
pub(crate) fn pair_row_u8(row: &[u8], out: &mut [i32]) {
    let n = row.len().saturating_sub(1);
    let out = &mut out[..n];
    let mut done = 0;
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    if avx2_for(n) {
        // SAFETY: `avx2_for` checked that the CPU runs AVX2.
        done = unsafe { avx2::pair_row_u8(row, out) };
    }
    done += imp::pair_row_u8(&row[done..], &mut out[done..]);
    for (o, (&a, &b)) in out[done..]
        .iter_mut()
        .zip(row[done..].iter().zip(&row[done + 1..]))
    {
        *o = a as i32 | (b as i32) << 16;
    }
}

/// A dense `k × k` fixed-point kernel prepared for the SIMD row kernel: in each kernel row, taps
/// `kx` and `kx + 1` paired (the last of the row with a zero coefficient), each pair's two `i16`
/// coefficients packed into one `i32` (`lo | hi << 16`).
pub(crate) struct DenseQ16 {
    k: usize,
    shift: u32,
    /// Per pair: kernel row and column of its first tap.
    taps: [(u8, u8); MAX_PAIRS],
    packed: [Splat; MAX_PAIRS],
}

/// One packed coefficient pair repeated over a 16-byte vector, aligned so that x86 can use it as
/// a memory operand.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct Splat([i32; 4]);

impl DenseQ16 {
    /// `None` when this build has no SIMD path or a coefficient does not fit `i16` (a kernel of
    /// gain above 2 in Q14; every normalised kernel fits).
    pub(crate) fn new(k: usize, coeffs: &[i32], shift: u32) -> Option<Self> {
        debug_assert!(k % 2 == 1 && k <= MAX_KERNEL_SIZE && coeffs.len() == k * k);
        if !ENABLED || coeffs.iter().any(|&c| i16::try_from(c).is_err()) {
            return None;
        }
        let mut d = Self {
            k,
            shift,
            taps: [(0, 0); MAX_PAIRS],
            packed: [Splat([0; 4]); MAX_PAIRS],
        };
        let mut p = 0;
        for (t, row) in coeffs.chunks_exact(k).enumerate() {
            for kx in (0..k).step_by(2) {
                let c1 = row.get(kx + 1).copied().unwrap_or(0);
                d.taps[p] = (t as u8, kx as u8);
                d.packed[p] = Splat([(row[kx] & 0xFFFF) | (c1 << 16); 4]);
                p += 1;
            }
        }
        Some(d)
    }

    /// One output row: `rows[t]` is the padded source row for kernel row `t` as a pair row (at
    /// least `out.len() + k − 1` long); `out` gets the rounded, saturated sums. `out.len()` must
    /// be at least [`LANES`].
    pub(crate) fn row(&self, rows: &[&[i32]], out: &mut [u8]) {
        let (k, w) = (self.k, out.len());
        assert!(w >= LANES && rows.len() == k && rows.iter().all(|r| r.len() >= w + k - 1));
        match k {
            1 => self.row_k::<1>(rows, out),
            3 => self.row_k::<3>(rows, out),
            5 => self.row_k::<5>(rows, out),
            7 => self.row_k::<7>(rows, out),
            9 => self.row_k::<9>(rows, out),
            11 => self.row_k::<11>(rows, out),
            13 => self.row_k::<13>(rows, out),
            _ => self.row_k::<15>(rows, out),
        }
    }

    /// [`DenseQ16::row`] for a kernel side known at compile time, so the tap loop unrolls.
    #[inline(always)]
    fn row_k<const K: usize>(&self, rows: &[&[i32]], out: &mut [u8]) {
        let pairs = K * K.div_ceil(2);
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        if avx2_for(out.len()) {
            return self.row_avx2(rows, out);
        }
        let mut starts: [&[i32]; MAX_PAIRS] = [&[]; MAX_PAIRS];
        for (s, &(t, kx)) in starts.iter_mut().zip(&self.taps[..pairs]) {
            *s = &rows[t as usize][kx as usize..];
        }
        imp::dense_row(&starts[..pairs], &self.packed[..pairs], self.shift, out);
    }
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
impl DenseQ16 {
    /// [`DenseQ16::row`] with the AVX2 kernel (the caller checked [`avx2_for`]).
    fn row_avx2(&self, rows: &[&[i32]], out: &mut [u8]) {
        let mut starts: [&[i32]; MAX_PAIRS] = [&[]; MAX_PAIRS];
        let pairs = self.k * self.k.div_ceil(2);
        for (s, &(t, kx)) in starts.iter_mut().zip(&self.taps[..pairs]) {
            *s = &rows[t as usize][kx as usize..];
        }
        let (starts, packed) = (&starts[..pairs], &self.packed[..pairs]);
        // SAFETY (each arm): the caller checked `avx2_for`, so the CPU runs AVX2.
        #[allow(unsafe_code)]
        unsafe {
            match self.k {
                1 => avx2::dense_row::<1>(starts, packed, self.shift, out),
                3 => avx2::dense_row::<6>(starts, packed, self.shift, out),
                5 => avx2::dense_row::<15>(starts, packed, self.shift, out),
                7 => avx2::dense_row::<28>(starts, packed, self.shift, out),
                9 => avx2::dense_row::<45>(starts, packed, self.shift, out),
                11 => avx2::dense_row::<66>(starts, packed, self.shift, out),
                13 => avx2::dense_row::<91>(starts, packed, self.shift, out),
                _ => avx2::dense_row::<120>(starts, packed, self.shift, out),
            }
        }
    }
}

/// Whether the AVX2 kernels may run on a row of `w` pixels: the CPU (and the cap) allow
/// x86-64-v3 and the row holds at least one 16-pixel step.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
fn avx2_for(w: usize) -> bool {
    w >= avx2::WIDE && crate::cpu::active() >= crate::cpu::Level::X86V3
}

/// Whether the AVX-512 box kernels may run on a row of `w` pixels: the CPU (and the cap) allow
/// x86-64-v4 and the row holds at least one 32-pixel step.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
fn avx512_for(w: usize) -> bool {
    w >= avx512::WIDE && crate::cpu::active() >= crate::cpu::Level::X86V4
}

/// `i32` scratch seen as twice as many `u16` elements (for the box filter's column sums).
pub(crate) fn as_u16(scratch: &mut [i32]) -> &mut [u16] {
    let len = scratch.len() * 2;
    // SAFETY: `u16` has no invalid bit patterns and an alignment (2) dividing `i32`'s (4); the
    // new slice covers exactly the bytes of `scratch` and inherits its unique borrow.
    #[allow(unsafe_code)]
    unsafe {
        core::slice::from_raw_parts_mut(scratch.as_mut_ptr().cast::<u16>(), len)
    }
}

/// `sums[x] += enter[x] − leave[x]` (wrapping `u16`) for a prefix of the row, a multiple of 8
/// pixels long; returns its length (0 without SIMD). The three slices must have one length.
pub(crate) fn box_update(sums: &mut [u16], enter: &[u8], leave: &[u8]) -> usize {
    assert!(enter.len() == sums.len() && leave.len() == sums.len());
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    let done = {
        let wide = if avx512_for(sums.len()) {
            // SAFETY: `avx512_for` checked that the CPU runs AVX-512 BW.
            unsafe { avx512::box_update(sums, enter, leave) }
        } else {
            0
        };
        wide + if avx2_for(sums.len() - wide) {
            // SAFETY: `avx2_for` checked that the CPU runs AVX2.
            unsafe { avx2::box_update(&mut sums[wide..], &enter[wide..], &leave[wide..]) }
        } else {
            0
        }
    };
    #[cfg(not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    )))]
    let done = 0;
    done + imp::box_update(&mut sums[done..], &enter[done..], &leave[done..])
}

/// The exact division of the box filter in 16-bit lanes: for the window `k` (index `k / 2`),
/// `(m, sh)` with `⌊x / k²⌋ = ⌊x·m / 2^16⌋ >> sh` for every `x ≤ 255·k² + k²/2` (a
/// `pmulhuw` and a shift; checked exhaustively by a unit test). `k = 1` needs no division.
#[cfg_attr(
    not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    )),
    allow(dead_code)
)]
pub(crate) const BOX_DIV: [(u16, u32); MAX_KERNEL_SIZE.div_ceil(2)] = [
    (0, 0),
    (7282, 0),
    (5243, 1),
    (2675, 1),
    (6473, 3),
    (4333, 3),
    (49637, 7),
    (37283, 7),
];

/// One box-filter output row from column sums: `out[x] = ⌊(s + area/2) / area⌋` of the window
/// sum `s = Σ_{t<k} sums[x + t]` (what `div_round` computes): with AVX-512 or AVX2 by
/// [`BOX_DIV`]'s 16-bit multiply-high, with SSE2 as `div_round` does (`(s + area/2)·recip >>
/// 32`, in 16-bit pieces). Returns `false`, writing nothing, where this build has no SIMD path,
/// `out.len() < LANES`, `area` is 1 or not `k²`. `sums` must hold `out.len() + k − 1`
/// elements, each window sum must be at most `255·area`, and `recip = ⌈2^32 / area⌉`.
pub(crate) fn box_row(sums: &[u16], k: usize, area: u32, recip: u32, out: &mut [u8]) -> bool {
    let w = out.len();
    if !SSE2 || w < LANES || area < 2 || area as usize != k * k {
        return false;
    }
    assert!(sums.len() >= w + k - 1 && k <= MAX_KERNEL_SIZE);
    let half = (area / 2) as u16;
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    if avx512_for(w) {
        let (mul, sh) = BOX_DIV[k / 2];
        // SAFETY (each arm): `avx512_for` checked that the CPU runs AVX-512 BW.
        #[allow(unsafe_code)]
        unsafe {
            match k {
                1 => avx512::box_row::<1>(sums, half, mul, sh, out),
                3 => avx512::box_row::<3>(sums, half, mul, sh, out),
                5 => avx512::box_row::<5>(sums, half, mul, sh, out),
                7 => avx512::box_row::<7>(sums, half, mul, sh, out),
                9 => avx512::box_row::<9>(sums, half, mul, sh, out),
                11 => avx512::box_row::<11>(sums, half, mul, sh, out),
                13 => avx512::box_row::<13>(sums, half, mul, sh, out),
                _ => avx512::box_row::<15>(sums, half, mul, sh, out),
            }
        }
        return true;
    }
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    if avx2_for(w) {
        let (mul, sh) = BOX_DIV[k / 2];
        // SAFETY (each arm): `avx2_for` checked that the CPU runs AVX2.
        #[allow(unsafe_code)]
        unsafe {
            match k {
                1 => avx2::box_row::<1>(sums, half, mul, sh, out),
                3 => avx2::box_row::<3>(sums, half, mul, sh, out),
                5 => avx2::box_row::<5>(sums, half, mul, sh, out),
                7 => avx2::box_row::<7>(sums, half, mul, sh, out),
                9 => avx2::box_row::<9>(sums, half, mul, sh, out),
                11 => avx2::box_row::<11>(sums, half, mul, sh, out),
                13 => avx2::box_row::<13>(sums, half, mul, sh, out),
                _ => avx2::box_row::<15>(sums, half, mul, sh, out),
            }
        }
        return true;
    }
    // A compile-time window lets the tap loop unroll.
    match k {
        1 => imp::box_row::<1>(sums, half, recip, out),
        3 => imp::box_row::<3>(sums, half, recip, out),
        5 => imp::box_row::<5>(sums, half, recip, out),
        7 => imp::box_row::<7>(sums, half, recip, out),
        9 => imp::box_row::<9>(sums, half, recip, out),
        11 => imp::box_row::<11>(sums, half, recip, out),
        13 => imp::box_row::<13>(sums, half, recip, out),
        _ => imp::box_row::<15>(sums, half, recip, out),
    }
    true
}

/// Whether this build has the x86 SSE2 paths of the separable passes and the box filter (on
/// AArch64, NEON multiplies `i32` lanes natively and the portable loops vectorise well).
const SSE2: bool = cfg!(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
));

/// What [`SepQ16::vertical`] writes.
// Only the x86 path reads the variants; elsewhere `SepQ16::new` returns `None`.
#[cfg_attr(
    not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    )),
    allow(dead_code)
)]
pub(crate) enum VerticalOut<'a> {
    /// The exact sums.
    Sums(&'a mut [i32]),
    /// `u8` pixels: sums rounded with `shift` fractional bits and saturated, as
    /// `round_shift_sat_u8`.
    RoundU8 { shift: u32, out: &'a mut [u8] },
}

/// A separable fixed-point kernel prepared for the SIMD passes.
///
/// The horizontal pass pairs adjacent taps over a pair row, as [`DenseQ16`] does, and stores
/// each exact sum `h` *split*: `lo = h mod 2^15` in the low 16 bits and `hi = h >> 15` in the
/// high 16 bits, two `i16` lanes (`hi` fits because `255·Σ|kx| < 2^30` is required). The
/// vertical pass multiplies both lanes by the tap (`pmaddwd` with `(c, 0)` and `(0, c)`, no
/// shuffles) and recombines `Σ c·lo + 2^15·Σ c·hi`, which equals `Σ c·h` modulo `2^32`; the
/// true sum fits `i32` (the kernel constructors guarantee it), so it is exact.
///
/// *Narrow* kernels (`255·Σ|kx| ≤ 32767`, e.g. Sobel or a Gaussian table with its common power
/// of two taken out) skip the split: `h` itself fits the low lane (the high lane is its sign),
/// so the vertical pass needs only the `(c, 0)` multiply-add.
pub(crate) struct SepQ16 {
    narrow: bool,
    x_pairs: usize,
    x_packed: [Splat; MAX_KERNEL_SIZE.div_ceil(2)],
    ky_len: usize,
    /// Per vertical tap: `(c, 0)` and `(0, c)` as packed `i16` pairs.
    y_split: [[Splat; 2]; MAX_KERNEL_SIZE],
}

impl SepQ16 {
    /// `None` when this build has no separable SIMD path, a tap does not fit `i16`, or the
    /// horizontal sums could reach `2^30` in magnitude.
    pub(crate) fn new(kx: &[i32], ky: &[i32]) -> Option<Self> {
        debug_assert!(kx.len() <= MAX_KERNEL_SIZE && ky.len() <= MAX_KERNEL_SIZE);
        let fits = |c: &i32| i16::try_from(*c).is_ok();
        let gain_x: i64 = kx.iter().map(|&c| (c as i64).abs()).sum();
        if !SSE2 || !kx.iter().chain(ky).all(fits) || 255 * gain_x >= 1 << 30 {
            return None;
        }
        let mut d = Self {
            narrow: 255 * gain_x <= i16::MAX as i64,
            x_pairs: kx.len().div_ceil(2),
            x_packed: [Splat([0; 4]); MAX_KERNEL_SIZE.div_ceil(2)],
            ky_len: ky.len(),
            y_split: [[Splat([0; 4]); 2]; MAX_KERNEL_SIZE],
        };
        for (p, pair) in kx.chunks(2).enumerate() {
            let c1 = pair.get(1).copied().unwrap_or(0);
            d.x_packed[p] = Splat([(pair[0] & 0xFFFF) | (c1 << 16); 4]);
        }
        for (s, &c) in d.y_split.iter_mut().zip(ky) {
            *s = [Splat([c & 0xFFFF; 4]), Splat([c << 16; 4])];
        }
        Some(d)
    }

    /// The horizontal pass of one row: `pairs` is the padded source row as a pair row (at least
    /// `out.len() + kx.len() − 1` long); `out` (at least [`LANES`] long) gets the split sums.
    pub(crate) fn horizontal(&self, pairs: &[i32], out: &mut [i32]) {
        let w = out.len();
        assert!(w >= LANES && pairs.len() >= w + 2 * self.x_pairs - 2);
        // A compile-time pair count lets the tap loop unroll.
        match self.x_pairs {
            1 => self.horizontal_n::<1>(pairs, out),
            2 => self.horizontal_n::<2>(pairs, out),
            3 => self.horizontal_n::<3>(pairs, out),
            4 => self.horizontal_n::<4>(pairs, out),
            5 => self.horizontal_n::<5>(pairs, out),
            6 => self.horizontal_n::<6>(pairs, out),
            7 => self.horizontal_n::<7>(pairs, out),
            _ => self.horizontal_n::<8>(pairs, out),
        }
    }

    fn horizontal_n<const N: usize>(&self, pairs: &[i32], out: &mut [i32]) {
        let packed: &[Splat; N] = self.x_packed[..N].try_into().unwrap();
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        if avx2_for(out.len()) {
            // SAFETY (both arms): `avx2_for` checked that the CPU runs AVX2.
            #[allow(unsafe_code)]
            unsafe {
                match self.narrow {
                    true => avx2::sep_horizontal::<true, N>(pairs, packed, out),
                    false => avx2::sep_horizontal::<false, N>(pairs, packed, out),
                }
            }
            return;
        }
        match self.narrow {
            true => imp::sep_horizontal::<true>(pairs, packed, out),
            false => imp::sep_horizontal::<false>(pairs, packed, out),
        }
    }

    /// The vertical pass: `rows[t]` holds the split horizontal sums of the source row under
    /// vertical tap `t` (each at least as long as the output); the output (at least [`LANES`]
    /// long) gets the exact sums, or the pixels they round to.
    pub(crate) fn vertical(&self, rows: &[&[i32]], mut out: VerticalOut<'_>) {
        let w = match &mut out {
            VerticalOut::Sums(o) => o.len(),
            VerticalOut::RoundU8 { out, .. } => out.len(),
        };
        assert!(w >= LANES && rows.len() == self.ky_len && rows.iter().all(|r| r.len() >= w));
        let mut starts: [&[i32]; MAX_KERNEL_SIZE] = [&[]; MAX_KERNEL_SIZE];
        starts[..rows.len()].copy_from_slice(rows);
        // A compile-time tap count lets the tap loop unroll.
        match self.ky_len {
            1 => self.vertical_n::<1>(&starts, out),
            3 => self.vertical_n::<3>(&starts, out),
            5 => self.vertical_n::<5>(&starts, out),
            7 => self.vertical_n::<7>(&starts, out),
            9 => self.vertical_n::<9>(&starts, out),
            11 => self.vertical_n::<11>(&starts, out),
            13 => self.vertical_n::<13>(&starts, out),
            _ => self.vertical_n::<15>(&starts, out),
        }
    }

    fn vertical_n<const N: usize>(&self, starts: &[&[i32]], out: VerticalOut<'_>) {
        let starts: &[&[i32]; N] = starts[..N].try_into().unwrap();
        let split: &[[Splat; 2]; N] = self.y_split[..N].try_into().unwrap();
        #[cfg(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        ))]
        {
            let w = match &out {
                VerticalOut::Sums(o) => o.len(),
                VerticalOut::RoundU8 { out, .. } => out.len(),
            };
            if avx2_for(w) {
                // SAFETY (every arm): `avx2_for` checked that the CPU runs AVX2.
                #[allow(unsafe_code)]
                unsafe {
                    match (out, self.narrow) {
                        (VerticalOut::Sums(o), true) => {
                            avx2::sep_vertical_sums::<true, N>(starts, split, o)
                        }
                        (VerticalOut::Sums(o), false) => {
                            avx2::sep_vertical_sums::<false, N>(starts, split, o)
                        }
                        (VerticalOut::RoundU8 { shift, out }, true) => {
                            avx2::sep_vertical_round::<true, N>(starts, split, shift, out)
                        }
                        (VerticalOut::RoundU8 { shift, out }, false) => {
                            avx2::sep_vertical_round::<false, N>(starts, split, shift, out)
                        }
                    }
                }
                return;
            }
        }
        match self.narrow {
            true => imp::sep_vertical::<true>(starts, split, out),
            false => imp::sep_vertical::<false>(starts, split, out),
        }
    }
}

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
#[path = "sse2.rs"]
mod imp;

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
mod avx2;

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
mod avx512;

#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little"
))]
#[allow(unsafe_code)]
#[path = "neon.rs"]
mod imp;

#[cfg(not(any(
    all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ),
    all(
        target_arch = "aarch64",
        target_feature = "neon",
        target_endian = "little"
    )
)))]
#[path = "none.rs"]
mod imp;
