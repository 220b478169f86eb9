//! Linear filtering: dense and separable convolution, Gaussian and box blur, Sobel derivatives.
//!
//! Two arithmetic paths share one engine:
//! * `u8` images with fixed-point kernels ([`Kernel2dQ`], [`SepKernelQ`]): exact `i32`
//!   accumulation, one rounding at the end (halves towards +∞), saturation to `0..=255`. This path
//!   needs no FPU and is the bit-exact reference for GPU kernels. On x86 (SSE2, the x86-64
//!   baseline) and AArch64 (NEON) it runs explicit 16-bit SIMD where the coefficients fit `i16`
//!   (every normalised kernel's do), and the box blur runs on running sums; the integer results
//!   are the same on every path.
//! * `f32` images with float kernels ([`Kernel2dF32`], [`SepKernelF32`]): sums in a fixed order
//!   (kernel row-major; horizontal before vertical for separable kernels).
//!
//! Kernels are applied as correlation (not flipped), centred on the output pixel, with odd sizes
//! up to [`MAX_KERNEL_SIZE`]. Every function takes caller scratch and says how much it needs; the
//! destination must have the source's size and is written only when the call succeeds.

mod blur;
mod box_sum;
pub(crate) mod engine;
mod kernel;
mod sep_u16;
mod simd;
mod sobel;
mod taps_f32;

pub use blur::{
    box_blur_f32, box_blur_u8, gaussian_blur_f32, gaussian_blur_u8, gaussian_kernel_f32,
    gaussian_kernel_q, gaussian_kernel_size, GAUSSIAN_SHIFT_PER_AXIS,
};
pub use kernel::{
    reduce_separable_taps, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ, DEFAULT_SHIFT,
    MAX_SHIFT, MAX_TAPS_2D,
};
pub use sobel::{gradient_polar_f32, gradient_polar_i16, sobel_f32, sobel_u8};

use crate::border::Border;
use crate::error::Result;
use crate::image::{ImageView, ImageViewMut};

/// Largest kernel side length, in pixels.
pub const MAX_KERNEL_SIZE: usize = 15;

/// Scratch elements [`filter2d_u8`] / [`filter2d_f32`] need for a `width`-pixel image and a
/// `ksize × ksize` kernel: `ksize·(width + ksize − 1) + width`, or `usize::MAX` if that
/// overflows (no buffer can then satisfy it).
pub fn filter2d_scratch_len(width: usize, ksize: usize) -> usize {
    engine::conv2d_scratch_len(width, ksize.max(1)).unwrap_or(usize::MAX)
}

/// Scratch elements the separable filters (and blurs, Sobel) need for a `width`-pixel image and
/// kernel vectors of `kx_len` and `ky_len` taps, or `usize::MAX` on overflow.
pub fn separable_scratch_len(width: usize, kx_len: usize, ky_len: usize) -> usize {
    engine::separable_scratch_len(width, width, kx_len.max(1), ky_len).unwrap_or(usize::MAX)
}

/// Dense fixed-point convolution of a `u8` image (see the module docs for the arithmetic).
///
/// Errors: [`crate::Error::SizeMismatch`] if `dst` is not `src`'s size;
/// [`crate::Error::BufferTooSmall`] if `scratch` is shorter than
/// [`filter2d_scratch_len`]`(width, kernel.size())`.
pub fn filter2d_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    kernel: &Kernel2dQ,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    engine::conv2d_u8(
        src,
        dst,
        kernel.size(),
        kernel.coeffs(),
        kernel.shift(),
        border,
        scratch,
    )
}

/// Dense float convolution of an `f32` image.
///
/// Errors: as [`filter2d_u8`].
pub fn filter2d_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    kernel: &Kernel2dF32,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    taps_f32::conv2d_direct(src, dst, kernel.size(), kernel.coeffs(), border, scratch)
}

/// Separable fixed-point convolution of a `u8` image: exact integer sums, one rounding.
///
/// Errors: [`crate::Error::SizeMismatch`] if `dst` is not `src`'s size;
/// [`crate::Error::BufferTooSmall`] if `scratch` is shorter than [`separable_scratch_len`].
pub fn sep_filter_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    kernel: &SepKernelQ,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    engine::separable_round_u8(
        src,
        dst,
        kernel.kx(),
        kernel.ky(),
        kernel.shift(),
        border,
        scratch,
    )
}

/// Separable float convolution of an `f32` image (horizontal pass, then vertical).
///
/// Errors: as [`sep_filter_u8`].
pub fn sep_filter_f32(
    src: &ImageView<'_, f32>,
    dst: &mut ImageViewMut<'_, f32>,
    kernel: &SepKernelF32,
    border: Border<f32>,
    scratch: &mut [f32],
) -> Result<()> {
    engine::separable_f32(src, dst, kernel.kx(), kernel.ky(), border, scratch, None)
}
