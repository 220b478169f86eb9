//! Complex FFTs over power-of-two lengths 4 to 64 ([`MIN_FFT_LEN`]..=[`MAX_FFT_LEN`]), in place
//! on caller storage: 1-D by dispatching the run-time length to `microfft`'s fixed-size
//! radix-2 transforms, 2-D (row-major `width × height`) by rows then columns through a caller
//! column buffer of `height` elements.
//!
//! Conventions: the forward transform is unnormalised, `X[k] = Σₙ x[n]·e^{−2πi·kn/N}`; the
//! inverse divides by `N` (by `width·height` in 2-D), so a round trip returns the input up to
//! rounding. The order of every floating-point operation is fixed by the length alone, so
//! results are bit-identical from run to run.

use crate::error::{Error, Result};
pub use microfft::Complex32;

/// Shortest supported transform length.
pub const MIN_FFT_LEN: usize = 4;

/// Longest supported transform length (the `size-64` feature of `microfft`).
pub const MAX_FFT_LEN: usize = 64;

/// True for the lengths the transforms here accept: powers of two from 4 to 64.
pub const fn is_supported_len(n: usize) -> bool {
    n.is_power_of_two() && n >= MIN_FFT_LEN && n <= MAX_FFT_LEN
}

macro_rules! dispatch {
    ($data:expr, $module:ident, $($n:literal => $f:ident),*) => {
        match $data.len() {
            $($n => {
                let a: &mut [Complex32; $n] =
                    $data.try_into().map_err(|_| Error::InvalidArgument)?;
                let _ = microfft::$module::$f(a);
                Ok(())
            })*
            _ => Err(Error::InvalidArgument),
        }
    };
}

/// In-place forward transform of `data` (unnormalised).
///
/// Errors: [`Error::InvalidArgument`] when `data.len()` is not a supported length
/// ([`is_supported_len`]).
#[inline]
pub fn fft(data: &mut [Complex32]) -> Result<()> {
    dispatch!(data, complex, 4 => cfft_4, 8 => cfft_8, 16 => cfft_16, 32 => cfft_32, 64 => cfft_64)
}

/// In-place inverse transform of `data`, divided by its length.
///
/// Errors: [`Error::InvalidArgument`] when `data.len()` is not a supported length.
#[inline]
pub fn ifft(data: &mut [Complex32]) -> Result<()> {
    dispatch!(data, inverse, 4 => ifft_4, 8 => ifft_8, 16 => ifft_16, 32 => ifft_32, 64 => ifft_64)
}

fn transform_2d(
    data: &mut [Complex32],
    width: usize,
    height: usize,
    column: &mut [Complex32],
    f: fn(&mut [Complex32]) -> Result<()>,
) -> Result<()> {
    if !is_supported_len(width) || !is_supported_len(height) {
        return Err(Error::InvalidArgument);
    }
    if data.len() != width * height || column.len() < height {
        return Err(Error::BufferTooSmall);
    }
    for row in data.chunks_exact_mut(width) {
        f(row)?;
    }
    let column = &mut column[..height];
    for x in 0..width {
        for (y, c) in column.iter_mut().enumerate() {
            *c = data[y * width + x];
        }
        f(column)?;
        for (y, c) in column.iter().enumerate() {
            data[y * width + x] = *c;
        }
    }
    Ok(())
}

/// In-place forward 2-D transform of a row-major `width × height` array; `column` is scratch
/// of at least `height` elements.
///
/// Errors: [`Error::InvalidArgument`] for an unsupported width or height;
/// [`Error::BufferTooSmall`] when `data` is not exactly `width·height` long or `column` is
/// shorter than `height`. `data` is untouched on error.
pub fn fft_2d(
    data: &mut [Complex32],
    width: usize,
    height: usize,
    column: &mut [Complex32],
) -> Result<()> {
    transform_2d(data, width, height, column, fft)
}

/// In-place inverse 2-D transform (divided by `width·height`); arguments and errors as
/// [`fft_2d`].
pub fn ifft_2d(
    data: &mut [Complex32],
    width: usize,
    height: usize,
    column: &mut [Complex32],
) -> Result<()> {
    transform_2d(data, width, height, column, ifft)
}
