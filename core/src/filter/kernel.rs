//! Filter kernels: dense `k × k` and separable, fixed-point (for `u8` images) and `f32`.
//!
//! Fixed-point kernels hold integer coefficients with `shift` fractional bits: a `u8` output
//! pixel is `clamp(floor((Σ cᵢ·pᵢ + 2^(shift−1)) / 2^shift), 0, 255)`, computed exactly in `i32`
//! (halves round towards +∞). Construction rejects kernels whose worst case (every pixel 255,
//! every coefficient's sign against you) could overflow `i32`, so the arithmetic never wraps.
//! This is the contract GPU kernels reproduce bit for bit.

use super::MAX_KERNEL_SIZE;
use crate::error::{Error, Result};

/// Largest number of taps in a dense kernel (`15 × 15`).
pub const MAX_TAPS_2D: usize = MAX_KERNEL_SIZE * MAX_KERNEL_SIZE;

/// Fractional bits used when float kernels are quantised automatically (`from_f32_auto`).
pub const DEFAULT_SHIFT: u32 = 14;

/// Largest allowed `shift` (fractional bits) of a fixed-point kernel.
pub const MAX_SHIFT: u32 = 24;

fn check_size(size: usize) -> Result<()> {
    if size == 0 {
        return Err(Error::ZeroSize);
    }
    if size.is_multiple_of(2) || size > MAX_KERNEL_SIZE {
        return Err(Error::InvalidKernel);
    }
    Ok(())
}

/// Checks that `255 · gain + 2^(shift−1)` fits an `i32` accumulator.
fn check_range(gain: i64, shift: u32) -> Result<()> {
    if shift > MAX_SHIFT {
        return Err(Error::InvalidArgument);
    }
    let worst = gain.checked_mul(255).ok_or(Error::InvalidKernel)? + ((1i64 << shift) >> 1);
    if worst > i32::MAX as i64 {
        return Err(Error::InvalidKernel);
    }
    Ok(())
}

fn abs_sum(c: &[i32]) -> i64 {
    c.iter().map(|&v| (v as i64).abs()).sum()
}

/// Quantises `f` to fixed point with `shift` fractional bits (nearest, halves away from zero).
fn quantise(f: f32, shift: u32) -> Result<i32> {
    if !f.is_finite() {
        return Err(Error::InvalidKernel);
    }
    let q = libm::round(f as f64 * (1u64 << shift) as f64);
    if q.abs() > i32::MAX as f64 {
        return Err(Error::InvalidKernel);
    }
    Ok(q as i32)
}

/// A dense `size × size` fixed-point kernel for `u8` images (row-major coefficients).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel2dQ {
    size: usize,
    shift: u32,
    coeffs: [i32; MAX_TAPS_2D],
}

impl Kernel2dQ {
    /// A kernel from `size²` row-major integer coefficients with `shift` fractional bits.
    ///
    /// Errors: [`Error::ZeroSize`] for size 0; [`Error::InvalidKernel`] for an even size,
    /// size > 15, `coeffs.len() != size²`, or coefficients whose worst-case sum overflows `i32`;
    /// [`Error::InvalidArgument`] for `shift` > [`MAX_SHIFT`].
    pub fn new(size: usize, coeffs: &[i32], shift: u32) -> Result<Self> {
        check_size(size)?;
        if coeffs.len() != size * size {
            return Err(Error::InvalidKernel);
        }
        check_range(abs_sum(coeffs), shift)?;
        let mut k = Self {
            size,
            shift,
            coeffs: [0; MAX_TAPS_2D],
        };
        k.coeffs[..coeffs.len()].copy_from_slice(coeffs);
        Ok(k)
    }

    /// Quantises `size²` float coefficients to `shift` fractional bits (nearest, halves away
    /// from zero).
    ///
    /// Errors: as [`Kernel2dQ::new`], and [`Error::InvalidKernel`] for non-finite coefficients.
    pub fn from_f32(size: usize, coeffs: &[f32], shift: u32) -> Result<Self> {
        check_size(size)?;
        if coeffs.len() != size * size || shift > MAX_SHIFT {
            return Err(if shift > MAX_SHIFT {
                Error::InvalidArgument
            } else {
                Error::InvalidKernel
            });
        }
        let mut q = [0i32; MAX_TAPS_2D];
        for (d, &c) in q.iter_mut().zip(coeffs) {
            *d = quantise(c, shift)?;
        }
        Self::new(size, &q[..coeffs.len()], shift)
    }

    /// Quantises float coefficients at the largest shift ≤ [`DEFAULT_SHIFT`] whose worst case
    /// still fits the `i32` accumulator (large gains get fewer fractional bits).
    ///
    /// Errors: as [`Kernel2dQ::from_f32`] when no shift fits.
    pub fn from_f32_auto(size: usize, coeffs: &[f32]) -> Result<Self> {
        let mut last = Error::InvalidKernel;
        for shift in (0..=DEFAULT_SHIFT).rev() {
            match Self::from_f32(size, coeffs, shift) {
                Ok(k) => return Ok(k),
                Err(Error::InvalidKernel) if coeffs.iter().all(|c| c.is_finite()) => {
                    last = Error::InvalidKernel
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Side length in pixels.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Fractional bits of the coefficients.
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// The `size²` row-major coefficients.
    pub fn coeffs(&self) -> &[i32] {
        &self.coeffs[..self.size * self.size]
    }
}

/// A dense `size × size` float kernel for `f32` images (row-major coefficients).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel2dF32 {
    size: usize,
    coeffs: [f32; MAX_TAPS_2D],
}

impl Kernel2dF32 {
    /// A kernel from `size²` row-major coefficients.
    ///
    /// Errors: [`Error::ZeroSize`] for size 0; [`Error::InvalidKernel`] for an even size,
    /// size > 15, `coeffs.len() != size²` or a non-finite coefficient.
    pub fn new(size: usize, coeffs: &[f32]) -> Result<Self> {
        check_size(size)?;
        if coeffs.len() != size * size || coeffs.iter().any(|c| !c.is_finite()) {
            return Err(Error::InvalidKernel);
        }
        let mut k = Self {
            size,
            coeffs: [0.0; MAX_TAPS_2D],
        };
        k.coeffs[..coeffs.len()].copy_from_slice(coeffs);
        Ok(k)
    }

    /// Side length in pixels.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The `size²` row-major coefficients.
    pub fn coeffs(&self) -> &[f32] {
        &self.coeffs[..self.size * self.size]
    }
}

/// A separable fixed-point kernel for `u8` images: `kx` along rows, then `ky` down columns;
/// the product has `shift` fractional bits in total and is rounded once, at the end.
#[derive(Clone, Debug, PartialEq)]
pub struct SepKernelQ {
    kx: [i32; MAX_KERNEL_SIZE],
    ky: [i32; MAX_KERNEL_SIZE],
    kx_len: usize,
    ky_len: usize,
    shift: u32,
}

impl SepKernelQ {
    /// A separable kernel from row and column coefficients (each of odd length ≤ 15).
    ///
    /// Errors: [`Error::ZeroSize`] for an empty vector; [`Error::InvalidKernel`] for an even or
    /// too long vector, or if `255·Σ|kx|·Σ|ky|` overflows `i32`; [`Error::InvalidArgument`]
    /// for `shift` > [`MAX_SHIFT`].
    pub fn new(kx: &[i32], ky: &[i32], shift: u32) -> Result<Self> {
        check_size(kx.len())?;
        check_size(ky.len())?;
        let gain = abs_sum(kx)
            .checked_mul(abs_sum(ky))
            .ok_or(Error::InvalidKernel)?;
        check_range(gain, shift)?;
        let mut k = Self {
            kx: [0; MAX_KERNEL_SIZE],
            ky: [0; MAX_KERNEL_SIZE],
            kx_len: kx.len(),
            ky_len: ky.len(),
            shift,
        };
        k.kx[..kx.len()].copy_from_slice(kx);
        k.ky[..ky.len()].copy_from_slice(ky);
        Ok(k)
    }

    /// Quantises float row and column vectors to `shift_x` and `shift_y` fractional bits
    /// (total shift `shift_x + shift_y`).
    ///
    /// Errors: as [`SepKernelQ::new`], and [`Error::InvalidKernel`] for non-finite values.
    pub fn from_f32(kx: &[f32], ky: &[f32], shift_x: u32, shift_y: u32) -> Result<Self> {
        check_size(kx.len())?;
        check_size(ky.len())?;
        let total = shift_x.checked_add(shift_y).ok_or(Error::InvalidArgument)?;
        if total > MAX_SHIFT {
            return Err(Error::InvalidArgument);
        }
        let mut qx = [0i32; MAX_KERNEL_SIZE];
        let mut qy = [0i32; MAX_KERNEL_SIZE];
        for (d, &c) in qx.iter_mut().zip(kx) {
            *d = quantise(c, shift_x)?;
        }
        for (d, &c) in qy.iter_mut().zip(ky) {
            *d = quantise(c, shift_y)?;
        }
        Self::new(&qx[..kx.len()], &qy[..ky.len()], total)
    }

    /// Quantises float vectors with the same number of fractional bits per axis, the largest
    /// ≤ `DEFAULT_SHIFT / 2` whose worst case fits the `i32` accumulator.
    ///
    /// Errors: as [`SepKernelQ::from_f32`] when no shift fits.
    pub fn from_f32_auto(kx: &[f32], ky: &[f32]) -> Result<Self> {
        let mut last = Error::InvalidKernel;
        for s in (0..=DEFAULT_SHIFT / 2).rev() {
            match Self::from_f32(kx, ky, s, s) {
                Ok(k) => return Ok(k),
                Err(Error::InvalidKernel) if kx.iter().chain(ky).all(|c| c.is_finite()) => {
                    last = Error::InvalidKernel
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Row (horizontal) coefficients.
    pub fn kx(&self) -> &[i32] {
        &self.kx[..self.kx_len]
    }

    /// Column (vertical) coefficients.
    pub fn ky(&self) -> &[i32] {
        &self.ky[..self.ky_len]
    }

    /// Total fractional bits of the product.
    pub fn shift(&self) -> u32 {
        self.shift
    }
}

/// Takes the powers of two common to all taps of each axis out of the taps and out of `shift`
/// (at most `shift` in all, the horizontal axis first), writing the reduced taps to the front of
/// `rx` and `ry`, and returns the reduced shift: `Σ ky·Σ kx·p = 2^z·Σ ky'·Σ kx'·p`, and rounding
/// `2^z·s` at `shift` equals rounding `s` at `shift − z`, so the filter's result is the same,
/// while Q10 Gaussian tables such as `[256 512 256]` become narrow taps (`[1 2 1]`). The CPU's
/// separable `u8` filters and the GPU plans that must sum the same integers both reduce so.
///
/// # Panics
/// If `rx` or `ry` is shorter than `kx` or `ky`.
pub fn reduce_separable_taps(
    kx: &[i32],
    ky: &[i32],
    shift: u32,
    rx: &mut [i32],
    ry: &mut [i32],
) -> u32 {
    let mut budget = shift;
    let mut reduce = |k: &[i32], out: &mut [i32]| {
        let common = k.iter().fold(0i32, |acc, &c| acc | c).trailing_zeros();
        let z = common.min(budget).min(31);
        budget -= z;
        for (o, &c) in out[..k.len()].iter_mut().zip(k) {
            *o = c >> z;
        }
    };
    reduce(kx, rx);
    reduce(ky, ry);
    budget
}

/// A separable float kernel for `f32` images: `kx` along rows, then `ky` down columns.
#[derive(Clone, Debug, PartialEq)]
pub struct SepKernelF32 {
    kx: [f32; MAX_KERNEL_SIZE],
    ky: [f32; MAX_KERNEL_SIZE],
    kx_len: usize,
    ky_len: usize,
}

impl SepKernelF32 {
    /// A separable kernel from row and column coefficients (each of odd length ≤ 15).
    ///
    /// Errors: [`Error::ZeroSize`] for an empty vector; [`Error::InvalidKernel`] for an even or
    /// too long vector or a non-finite coefficient.
    pub fn new(kx: &[f32], ky: &[f32]) -> Result<Self> {
        check_size(kx.len())?;
        check_size(ky.len())?;
        if kx.iter().chain(ky).any(|c| !c.is_finite()) {
            return Err(Error::InvalidKernel);
        }
        let mut k = Self {
            kx: [0.0; MAX_KERNEL_SIZE],
            ky: [0.0; MAX_KERNEL_SIZE],
            kx_len: kx.len(),
            ky_len: ky.len(),
        };
        k.kx[..kx.len()].copy_from_slice(kx);
        k.ky[..ky.len()].copy_from_slice(ky);
        Ok(k)
    }

    /// Row (horizontal) coefficients.
    pub fn kx(&self) -> &[f32] {
        &self.kx[..self.kx_len]
    }

    /// Column (vertical) coefficients.
    pub fn ky(&self) -> &[f32] {
        &self.ky[..self.ky_len]
    }
}
