//! The image operations `filter` and `demo` share: each wraps one core call on an owned gray
//! image, sizes its scratch from the core's `*_scratch_len` functions, and times the core call
//! alone (allocation and, on the `f32` path, the u8 ↔ f32 conversions are not timed).
//!
//! Timing is the best of a few runs after an untimed warm-up ([`time_best`]): a single cold run
//! mostly measures the kernel faulting in its freshly allocated output pages, which says
//! nothing about the filter. Every run overwrites the whole output, so repeating is harmless.
//!
//! Every operation has two arithmetic paths ([`Precision`]): the fixed-point `u8` path, which
//! is the bit-exact reference, and the `f32` path, whose result is rounded to nearest and
//! clamped to `0..=255` on the way back to 8 bits.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use image::GrayImage;
use mvision_core::filter::{
    self, filter2d_scratch_len, separable_scratch_len, Kernel2dF32, Kernel2dQ,
};
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::{pyramid, resize, Border, Error, Result};

/// Largest number of fractional bits tried when quantising a user kernel. 14 bits resolve a
/// coefficient to 1/16384 and still leave room for kernels whose `Σ|c|` reaches about 514;
/// larger kernels fall back to fewer bits (see [`quantise_kernel`]).
pub const KERNEL_SHIFT_MAX: u32 = 14;

/// The Sobel magnitude is divided by this before saturating to `u8`: the largest 3 × 3 Sobel
/// magnitude is `1020·√2 ≈ 1443`, so typical edges (a step of 64 gray levels gives 256) land
/// mid-range while only the strongest saturate.
pub const MAGNITUDE_DIVISOR: f32 = 4.0;

/// Sobel derivatives (range ±1020) are written as `128 + d / 8` rounded, so zero is mid-gray
/// (128) and the full range just fits: −1020 → 1 (from 0.5), +1020 → 255 (saturated 255.5).
pub const DERIVATIVE_DIVISOR: f32 = 8.0;

/// Which arithmetic an operation runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `u8` pixels, fixed-point kernels, exact integer sums (the reference path).
    U8,
    /// `f32` pixels and kernels; converted from and back to `u8` around the timed call.
    F32,
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::U8 => "u8",
            Precision::F32 => "f32",
        })
    }
}

/// A border mode as the user writes it, before it is typed for `u8` or `f32` pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BorderMode {
    /// `replicate`: repeat the edge pixel.
    Replicate,
    /// `reflect101`: mirror about the edge pixel (the default, as in OpenCV).
    Reflect101,
    /// `constant[:V]`: a fixed gray value outside the image (0 when `:V` is left out).
    Constant(u8),
}

impl BorderMode {
    /// The core's border for `u8` images.
    pub fn for_u8(self) -> Border<u8> {
        match self {
            BorderMode::Replicate => Border::Replicate,
            BorderMode::Reflect101 => Border::Reflect101,
            BorderMode::Constant(v) => Border::Constant(v),
        }
    }

    /// The core's border for `f32` images (the constant keeps its 0–255 scale).
    pub fn for_f32(self) -> Border<f32> {
        match self {
            BorderMode::Replicate => Border::Replicate,
            BorderMode::Reflect101 => Border::Reflect101,
            BorderMode::Constant(v) => Border::Constant(f32::from(v)),
        }
    }
}

impl FromStr for BorderMode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "replicate" => Ok(BorderMode::Replicate),
            "reflect101" => Ok(BorderMode::Reflect101),
            "constant" => Ok(BorderMode::Constant(0)),
            other => match other.strip_prefix("constant:") {
                Some(v) => v
                    .trim()
                    .parse::<u8>()
                    .map(BorderMode::Constant)
                    .map_err(|_| {
                        format!("constant border value '{v}' is not an integer in 0..=255")
                    }),
                None => Err(format!(
                    "unknown border '{s}': use replicate, reflect101 or constant[:V]"
                )),
            },
        }
    }
}

impl fmt::Display for BorderMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BorderMode::Replicate => f.write_str("replicate"),
            BorderMode::Reflect101 => f.write_str("reflect101"),
            BorderMode::Constant(v) => write!(f, "constant:{v}"),
        }
    }
}

/// At most this many timed runs follow the warm-up.
const MAX_TIMED_RUNS: u32 = 5;

/// Timed runs stop early once they have used this much time, so large images stay quick.
const TIMING_BUDGET: Duration = Duration::from_millis(200);

/// An operation's result and the time its core call took.
#[derive(Clone, Debug)]
pub struct Timed<T> {
    /// What the operation produced.
    pub output: T,
    /// Wall time of the core call(s) alone: the fastest of `runs` timed runs.
    pub elapsed: Duration,
    /// How many timed runs `elapsed` is the best of.
    pub runs: u32,
}

/// Runs `op` once untimed, then up to [`MAX_TIMED_RUNS`] times within [`TIMING_BUDGET`] (at
/// least once), and returns the fastest time and the number of timed runs. The minimum, not the
/// mean, because interference (other processes, interrupts) only ever adds time.
pub fn time_best(mut op: impl FnMut() -> Result<()>) -> Result<(Duration, u32)> {
    op()?;
    let (mut best, mut spent, mut runs) = (Duration::MAX, Duration::ZERO, 0);
    while runs < MAX_TIMED_RUNS && (runs == 0 || spent < TIMING_BUDGET) {
        let start = Instant::now();
        op()?;
        let elapsed = start.elapsed();
        best = best.min(elapsed);
        spent += elapsed;
        runs += 1;
    }
    Ok((best, runs))
}

/// `(width, height)` of an image as `usize`, the core's unit.
pub fn dims(image: &GrayImage) -> (usize, usize) {
    (image.width() as usize, image.height() as usize)
}

/// A zeroed scratch buffer, or [`Error::Overflow`] where the core reported an unsatisfiable
/// length (`usize::MAX`) instead of letting the allocation abort the process.
fn scratch<T: Clone + Default>(len: usize) -> Result<Vec<T>> {
    if len == usize::MAX {
        return Err(Error::Overflow);
    }
    Ok(vec![T::default(); len])
}

/// A `width × height` output image; sizes beyond `u32` (the `image` crate's limit) are
/// [`Error::Overflow`].
fn new_image(width: usize, height: usize) -> Result<GrayImage> {
    let w = u32::try_from(width).map_err(|_| Error::Overflow)?;
    let h = u32::try_from(height).map_err(|_| Error::Overflow)?;
    Ok(GrayImage::new(w, h))
}

/// Rounds to nearest and saturates: the one way every `f32` result returns to 8 bits.
fn f32_to_u8(v: f32) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

/// Runs `op` on the `u8` path: `src` in, a fresh `dst_size` image out.
fn run_u8(
    src: &GrayImage,
    dst_size: (usize, usize),
    mut op: impl FnMut(&ImageView<'_, u8>, &mut ImageViewMut<'_, u8>) -> Result<()>,
) -> Result<Timed<GrayImage>> {
    let (w, h) = dims(src);
    let src_view = ImageView::packed(src.as_raw(), w, h)?;
    let mut out = new_image(dst_size.0, dst_size.1)?;
    let mut dst_view = ImageViewMut::packed(&mut out, dst_size.0, dst_size.1)?;
    let (elapsed, runs) = time_best(|| op(&src_view, &mut dst_view))?;
    Ok(Timed {
        output: out,
        elapsed,
        runs,
    })
}

/// Runs `op` on the `f32` path: `src` widened to `f32`, the result rounded back to `u8`.
fn run_f32(
    src: &GrayImage,
    dst_size: (usize, usize),
    mut op: impl FnMut(&ImageView<'_, f32>, &mut ImageViewMut<'_, f32>) -> Result<()>,
) -> Result<Timed<GrayImage>> {
    let (w, h) = dims(src);
    let src_f: Vec<f32> = src.as_raw().iter().map(|&p| f32::from(p)).collect();
    let src_view = ImageView::packed(&src_f, w, h)?;
    let mut dst_f = vec![0.0f32; dst_size.0 * dst_size.1];
    let mut dst_view = ImageViewMut::packed(&mut dst_f, dst_size.0, dst_size.1)?;
    let (elapsed, runs) = time_best(|| op(&src_view, &mut dst_view))?;
    let mut out = new_image(dst_size.0, dst_size.1)?;
    for (o, &v) in out.iter_mut().zip(&dst_f) {
        *o = f32_to_u8(v);
    }
    Ok(Timed {
        output: out,
        elapsed,
        runs,
    })
}

/// Gaussian blur; `ksize` 0 derives the size from `sigma_px`, `sigma_px` ≤ 0 derives σ from
/// `ksize` (the core's rules).
pub fn gaussian(
    src: &GrayImage,
    ksize: usize,
    sigma_px: f32,
    border: BorderMode,
    precision: Precision,
) -> Result<Timed<GrayImage>> {
    // Resolving the kernel first validates the parameters and gives the exact scratch size.
    let k = filter::gaussian_kernel_q(ksize, sigma_px)?.kx().len();
    let (w, h) = dims(src);
    let len = separable_scratch_len(w, k, k);
    match precision {
        Precision::U8 => {
            let mut s = scratch(len)?;
            run_u8(src, (w, h), |a, b| {
                filter::gaussian_blur_u8(a, b, ksize, sigma_px, border.for_u8(), &mut s)
            })
        }
        Precision::F32 => {
            let mut s = scratch(len)?;
            run_f32(src, (w, h), |a, b| {
                filter::gaussian_blur_f32(a, b, ksize, sigma_px, border.for_f32(), &mut s)
            })
        }
    }
}

/// Mean over a `ksize × ksize` window.
pub fn box_blur(
    src: &GrayImage,
    ksize: usize,
    border: BorderMode,
    precision: Precision,
) -> Result<Timed<GrayImage>> {
    let (w, h) = dims(src);
    let len = separable_scratch_len(w, ksize, ksize);
    match precision {
        Precision::U8 => {
            let mut s = scratch(len)?;
            run_u8(src, (w, h), |a, b| {
                filter::box_blur_u8(a, b, ksize, border.for_u8(), &mut s)
            })
        }
        Precision::F32 => {
            let mut s = scratch(len)?;
            run_f32(src, (w, h), |a, b| {
                filter::box_blur_f32(a, b, ksize, border.for_f32(), &mut s)
            })
        }
    }
}

/// Quantises a float kernel with the most fractional bits (≤ [`KERNEL_SHIFT_MAX`]) whose
/// worst-case sum still fits the core's `i32` accumulator, so small kernels keep full
/// precision and large-gain kernels still run rather than fail.
///
/// Errors: [`Error::InvalidKernel`] if even 0 fractional bits overflow, or for a bad size.
pub fn quantise_kernel(size: usize, coeffs: &[f32]) -> Result<Kernel2dQ> {
    for shift in (0..=KERNEL_SHIFT_MAX).rev() {
        match Kernel2dQ::from_f32(size, coeffs, shift) {
            Ok(k) => return Ok(k),
            // Range overflow at this shift: try one bit fewer.
            Err(Error::InvalidKernel) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::InvalidKernel)
}

/// Dense convolution with a `size × size` row-major kernel: quantised by [`quantise_kernel`]
/// on the `u8` path, used as given on the `f32` path.
pub fn dense(
    src: &GrayImage,
    size: usize,
    coeffs: &[f32],
    border: BorderMode,
    precision: Precision,
) -> Result<Timed<GrayImage>> {
    let (w, h) = dims(src);
    let len = filter2d_scratch_len(w, size);
    match precision {
        Precision::U8 => {
            let kernel = quantise_kernel(size, coeffs)?;
            let mut s = scratch(len)?;
            run_u8(src, (w, h), |a, b| {
                filter::filter2d_u8(a, b, &kernel, border.for_u8(), &mut s)
            })
        }
        Precision::F32 => {
            let kernel = Kernel2dF32::new(size, coeffs)?;
            let mut s = scratch(len)?;
            run_f32(src, (w, h), |a, b| {
                filter::filter2d_f32(a, b, &kernel, border.for_f32(), &mut s)
            })
        }
    }
}

/// One Gaussian pyramid level down (`⌈w/2⌉ × ⌈h/2⌉`).
pub fn pyr_down(
    src: &GrayImage,
    border: BorderMode,
    precision: Precision,
) -> Result<Timed<GrayImage>> {
    let (w, h) = dims(src);
    let dst = pyramid::pyr_down_size(w, h);
    let len = pyramid::pyr_down_scratch_len(w);
    match precision {
        Precision::U8 => {
            let mut s = scratch(len)?;
            run_u8(src, dst, |a, b| {
                pyramid::pyr_down_u8(a, b, border.for_u8(), &mut s)
            })
        }
        Precision::F32 => {
            let mut s = scratch(len)?;
            run_f32(src, dst, |a, b| {
                pyramid::pyr_down_f32(a, b, border.for_f32(), &mut s)
            })
        }
    }
}

/// Bilinear resize to `width × height`.
pub fn resize_bilinear(
    src: &GrayImage,
    width: usize,
    height: usize,
    precision: Precision,
) -> Result<Timed<GrayImage>> {
    let mut s = scratch::<i32>(resize::resize_scratch_len(width))?;
    match precision {
        Precision::U8 => run_u8(src, (width, height), |a, b| {
            resize::resize_bilinear_u8(a, b, &mut s)
        }),
        Precision::F32 => run_f32(src, (width, height), |a, b| {
            resize::resize_bilinear_f32(a, b, &mut s)
        }),
    }
}

/// Sobel derivatives and gradient magnitude, widened to `f32` whatever the path so both paths
/// share one mapping to 8 bits.
#[derive(Clone, Debug)]
pub struct Gradient {
    width: u32,
    height: u32,
    dx: Vec<f32>,
    dy: Vec<f32>,
    magnitude: Vec<f32>,
}

impl Gradient {
    /// Magnitude as `min(round(m / MAGNITUDE_DIVISOR), 255)`.
    pub fn magnitude_u8(&self) -> GrayImage {
        self.map(&self.magnitude, |m| f32_to_u8(m / MAGNITUDE_DIVISOR))
    }

    /// Horizontal derivative as `128 + d / DERIVATIVE_DIVISOR`, rounded and saturated.
    pub fn dx_u8(&self) -> GrayImage {
        self.map(&self.dx, derivative_to_u8)
    }

    /// Vertical derivative, mapped as [`Gradient::dx_u8`].
    pub fn dy_u8(&self) -> GrayImage {
        self.map(&self.dy, derivative_to_u8)
    }

    fn map(&self, plane: &[f32], f: impl Fn(f32) -> u8) -> GrayImage {
        let mut out = GrayImage::new(self.width, self.height);
        for (o, &v) in out.iter_mut().zip(plane) {
            *o = f(v);
        }
        out
    }
}

fn derivative_to_u8(d: f32) -> u8 {
    f32_to_u8(128.0 + d / DERIVATIVE_DIVISOR)
}

/// 3 × 3 Sobel derivatives and their magnitude; the timing covers both core calls
/// (derivatives, then polar form).
pub fn sobel(src: &GrayImage, border: BorderMode, precision: Precision) -> Result<Timed<Gradient>> {
    let (w, h) = dims(src);
    let n = w * h;
    let len = separable_scratch_len(w, 3, 3);
    let mut magnitude = vec![0.0f32; n];
    let mut orientation = vec![0.0f32; n];
    let (dx, dy, (elapsed, runs)) = match precision {
        Precision::U8 => {
            let src_view = ImageView::packed(src.as_raw(), w, h)?;
            let mut s = scratch::<i32>(len)?;
            let (mut dx, mut dy) = (vec![0i16; n], vec![0i16; n]);
            let timing = {
                let mut dxv = ImageViewMut::packed(&mut dx, w, h)?;
                let mut dyv = ImageViewMut::packed(&mut dy, w, h)?;
                let mut mv = ImageViewMut::packed(&mut magnitude, w, h)?;
                let mut ov = ImageViewMut::packed(&mut orientation, w, h)?;
                time_best(|| {
                    filter::sobel_u8(&src_view, &mut dxv, &mut dyv, border.for_u8(), &mut s)?;
                    filter::gradient_polar_i16(&dxv.as_view(), &dyv.as_view(), &mut mv, &mut ov)
                })?
            };
            let widen = |v: Vec<i16>| v.into_iter().map(f32::from).collect::<Vec<_>>();
            (widen(dx), widen(dy), timing)
        }
        Precision::F32 => {
            let src_f: Vec<f32> = src.as_raw().iter().map(|&p| f32::from(p)).collect();
            let src_view = ImageView::packed(&src_f, w, h)?;
            let mut s = scratch::<f32>(len)?;
            let (mut dx, mut dy) = (vec![0.0f32; n], vec![0.0f32; n]);
            let timing = {
                let mut dxv = ImageViewMut::packed(&mut dx, w, h)?;
                let mut dyv = ImageViewMut::packed(&mut dy, w, h)?;
                let mut mv = ImageViewMut::packed(&mut magnitude, w, h)?;
                let mut ov = ImageViewMut::packed(&mut orientation, w, h)?;
                time_best(|| {
                    filter::sobel_f32(&src_view, &mut dxv, &mut dyv, border.for_f32(), &mut s)?;
                    filter::gradient_polar_f32(&dxv.as_view(), &dyv.as_view(), &mut mv, &mut ov)
                })?
            };
            (dx, dy, timing)
        }
    };
    Ok(Timed {
        output: Gradient {
            width: src.width(),
            height: src.height(),
            dx,
            dy,
            magnitude,
        },
        elapsed,
        runs,
    })
}

/// Output pixels per second in millions, or `None` when the clock did not advance (a tiny
/// image on a coarse timer) and a rate would be meaningless.
pub fn mpixel_per_s(pixels: usize, elapsed: Duration) -> Option<f64> {
    let secs = elapsed.as_secs_f64();
    (secs > 0.0).then(|| pixels as f64 / secs / 1e6)
}

/// Milliseconds with three decimals and the throughput, formatted for reports.
pub fn format_timing(pixels: usize, elapsed: Duration) -> (String, String) {
    let ms = format!("{:.3}", elapsed.as_secs_f64() * 1e3);
    let rate = match mpixel_per_s(pixels, elapsed) {
        Some(r) => format!("{r:.1}"),
        None => "n/a".to_string(),
    };
    (ms, rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantise_kernel_keeps_the_most_fractional_bits_that_fit() {
        assert_eq!(
            quantise_kernel(1, &[1.0]).unwrap().shift(),
            KERNEL_SHIFT_MAX
        );
        // 255 · 1000 · 2¹⁴ overflows i32; 2¹³ fits.
        assert_eq!(quantise_kernel(1, &[1000.0]).unwrap().shift(), 13);
        assert_eq!(quantise_kernel(1, &[1e9]), Err(Error::InvalidKernel));
    }

    #[test]
    fn border_modes_parse_and_print_back() {
        for text in ["replicate", "reflect101", "constant:0", "constant:255"] {
            let mode: BorderMode = text.parse().unwrap();
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!("constant".parse(), Ok(BorderMode::Constant(0)));
        assert_eq!(" Constant: 9 ".parse(), Ok(BorderMode::Constant(9)));
        assert!("constant:256".parse::<BorderMode>().is_err());
        assert!("wrap".parse::<BorderMode>().is_err());
    }

    #[test]
    fn float_results_round_to_nearest_and_saturate() {
        assert_eq!(f32_to_u8(-3.0), 0);
        assert_eq!(f32_to_u8(2.5), 3);
        assert_eq!(f32_to_u8(254.4), 254);
        assert_eq!(f32_to_u8(1e9), 255);
        assert_eq!(derivative_to_u8(-1020.0), 1);
        assert_eq!(derivative_to_u8(0.0), 128);
        assert_eq!(derivative_to_u8(1020.0), 255);
    }
}
