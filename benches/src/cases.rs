//! The filter benchmark catalogue: which operations are measured, on what input, with which
//! kernels, and each one made ready to run on the CPU with its buffers allocated up front.
//!
//! Two front ends run these cases and must agree on them: `mvision bench filter` (median of N
//! runs, a table and JSON, compared against OpenCV by `bench/opencv_compare.py`) and the
//! criterion benches of this crate. Nothing here measures time; it only defines the work.
//!
//! This file is compiled twice: as `mvision_benches::cases`, and into the `mvision` CLI through a
//! `#[path]` module (so the CLI's benchmark and the criterion one cannot drift apart). It must
//! therefore depend on nothing but `std` and `mvision_core`, and name no `crate::` items.

use mvision_core::filter::{
    self, filter2d_scratch_len, separable_scratch_len, Kernel2dF32, Kernel2dQ,
};
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::integral::{integral_size, integral_u8, MAX_INTEGRAL_PIXELS};
use mvision_core::rng::SplitMix64;
use mvision_core::{Border, Error, Result};

/// Every filter reads outside the image as OpenCV's default does (`BORDER_REFLECT_101`), so the
/// OpenCV comparison runs the same border code path.
pub const BORDER: Border<u8> = Border::Reflect101;

/// The `f32` counterpart of [`BORDER`].
pub const BORDER_F32: Border<f32> = Border::Reflect101;

/// Seed of the input generator: fixed, so every run and every machine filters the same pixels.
pub const INPUT_SEED: u64 = 0x6d76_6265_6e63_6821;

/// Largest pixel count a case accepts: the `u32` integral table's limit, so that one size list
/// is valid for every case.
pub const MAX_BENCH_PIXELS: u64 = MAX_INTEGRAL_PIXELS;

/// The operation a case measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Dense `ksize × ksize` convolution with [`dense_kernel`]`(ksize)`.
    Filter2d {
        /// Kernel side length in pixels.
        ksize: usize,
    },
    /// Separable Gaussian blur, σ derived from `ksize` by OpenCV's rule
    /// (`0.3·((ksize − 1)/2 − 1) + 0.8`), as `cv2.GaussianBlur(src, (k, k), 0)` does.
    Gaussian {
        /// Kernel side length in pixels.
        ksize: usize,
    },
    /// Mean over a `ksize × ksize` window.
    Box {
        /// Window side length in pixels.
        ksize: usize,
    },
    /// Summed-area table of a `u8` image (`u32`), and with `squared` also the table of squares
    /// (`u64`).
    Integral {
        /// Whether the squared table is computed too.
        squared: bool,
    },
}

/// The arithmetic a case runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `u8` pixels; fixed-point kernels with exact `i32` sums.
    U8,
    /// `f32` pixels and kernels.
    F32,
}

impl Precision {
    /// `"u8"` or `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::U8 => "u8",
            Precision::F32 => "f32",
        }
    }
}

/// One benchmark case: an operation in one arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// What is computed.
    pub op: Op,
    /// In which arithmetic.
    pub precision: Precision,
}

impl Case {
    /// A stable identifier for JSON and criterion (`filter2d_3x3_u8`, `gaussian_7_f32`,
    /// `box_5_u8`, `integral_u8`, `integral_sq_u8`); the comparison script keys on it.
    pub fn id(&self) -> String {
        let p = self.precision.name();
        match self.op {
            Op::Filter2d { ksize } => format!("filter2d_{ksize}x{ksize}_{p}"),
            Op::Gaussian { ksize } => format!("gaussian_{ksize}_{p}"),
            Op::Box { ksize } => format!("box_{ksize}_{p}"),
            Op::Integral { squared: false } => format!("integral_{p}"),
            Op::Integral { squared: true } => format!("integral_sq_{p}"),
        }
    }

    /// A short human label for tables (`filter2d 3x3 u8`, `sep gaussian 7 f32`).
    pub fn label(&self) -> String {
        let p = self.precision.name();
        match self.op {
            Op::Filter2d { ksize } => format!("filter2d {ksize}x{ksize} {p}"),
            Op::Gaussian { ksize } => format!("sep gaussian {ksize} {p}"),
            Op::Box { ksize } => format!("box {ksize}x{ksize} {p}"),
            Op::Integral { squared: false } => format!("integral {p}"),
            Op::Integral { squared: true } => format!("integral+sq {p}"),
        }
    }
}

const fn case(op: Op, precision: Precision) -> Case {
    Case { op, precision }
}

/// Every case, in report order.
pub const CASES: [Case; 12] = [
    case(Op::Filter2d { ksize: 3 }, Precision::U8),
    case(Op::Filter2d { ksize: 3 }, Precision::F32),
    case(Op::Filter2d { ksize: 7 }, Precision::U8),
    case(Op::Filter2d { ksize: 7 }, Precision::F32),
    case(Op::Gaussian { ksize: 3 }, Precision::U8),
    case(Op::Gaussian { ksize: 3 }, Precision::F32),
    case(Op::Gaussian { ksize: 7 }, Precision::U8),
    case(Op::Gaussian { ksize: 7 }, Precision::F32),
    case(Op::Box { ksize: 5 }, Precision::U8),
    case(Op::Box { ksize: 5 }, Precision::F32),
    case(Op::Integral { squared: false }, Precision::U8),
    case(Op::Integral { squared: true }, Precision::U8),
];

/// Kernel sizes of the dense cases, for reports that list the kernels used.
pub const DENSE_KERNEL_SIZES: [usize; 2] = [3, 7];

/// The dense benchmark kernel: `ksize²` row-major weights that are all non-zero (the `u8`
/// engine skips zero taps, so a kernel with zeros would flatter it), neither symmetric nor
/// separable (so no shortcut applies), and normalised to sum 1 (so `u8` results stay in range
/// rather than saturating). Weight `(r, c)` is `1 + (5·(r·ksize + c) + r) mod 7`, divided by the
/// total.
pub fn dense_kernel(ksize: usize) -> Vec<f32> {
    let raw: Vec<u32> = (0..ksize * ksize)
        .map(|i| 1 + ((5 * i + i / ksize) % 7) as u32)
        .collect();
    let total: u32 = raw.iter().sum();
    raw.iter().map(|&w| w as f32 / total as f32).collect()
}

/// The benchmark input: `width × height` uniformly random gray levels from [`INPUT_SEED`],
/// tightly packed. Random content has no flat regions, so nothing data-dependent can help.
pub fn input_u8(width: usize, height: usize) -> Vec<u8> {
    let mut rng = SplitMix64(INPUT_SEED);
    let mut px = vec![0u8; width * height];
    for chunk in px.chunks_mut(8) {
        let bytes = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    px
}

/// Source, destination and scratch of a filter case, allocated once.
struct Planes<T, A> {
    src: Vec<T>,
    dst: Vec<T>,
    scratch: Vec<A>,
}

impl<T: mvision_core::Pixel, A> Planes<T, A> {
    fn new(src: Vec<T>, scratch: Vec<A>) -> Self {
        Self {
            dst: vec![T::default(); src.len()],
            src,
            scratch,
        }
    }

    /// Runs `op` over views of the planes; building views is O(1) (a bounds check), so doing it
    /// per run costs nothing measurable and keeps the struct free of self-borrows.
    fn apply(
        &mut self,
        (w, h): (usize, usize),
        op: impl FnOnce(&ImageView<'_, T>, &mut ImageViewMut<'_, T>, &mut [A]) -> Result<()>,
    ) -> Result<()> {
        let src = ImageView::packed(&self.src, w, h)?;
        let mut dst = ImageViewMut::packed(&mut self.dst, w, h)?;
        op(&src, &mut dst, &mut self.scratch)
    }
}

/// What a prepared case holds: its kernel (built once, as a caller would) and its buffers.
enum Work {
    DenseU8(Kernel2dQ, Planes<u8, i32>),
    DenseF32(Kernel2dF32, Planes<f32, f32>),
    GaussianU8(usize, Planes<u8, i32>),
    GaussianF32(usize, Planes<f32, f32>),
    BoxU8(usize, Planes<u8, i32>),
    BoxF32(usize, Planes<f32, f32>),
    Integral {
        src: Vec<u8>,
        sum: Vec<u32>,
        sqsum: Option<Vec<u64>>,
    },
}

/// A scratch buffer of `len` zeros; `usize::MAX` is the core's "no buffer can satisfy this".
fn scratch<A: Clone + Default>(len: usize) -> Result<Vec<A>> {
    if len == usize::MAX {
        return Err(Error::Overflow);
    }
    Ok(vec![A::default(); len])
}

/// One case on one image size, ready to run on the CPU: input generated, kernel built, output
/// and scratch allocated. [`CpuCase::run`] does only the core call.
pub struct CpuCase {
    size: (usize, usize),
    work: Work,
}

impl CpuCase {
    /// Prepares `case` on a `width × height` image from [`input_u8`] (widened to `f32` on the
    /// `f32` path).
    ///
    /// Errors: [`Error::ZeroSize`] for an empty image; [`Error::Overflow`] above
    /// [`MAX_BENCH_PIXELS`]; [`Error::InvalidArgument`] for a case outside [`CASES`]'s shapes
    /// (an `f32` integral); the core's kernel errors for a bad kernel size.
    pub fn new(case: Case, width: usize, height: usize) -> Result<Self> {
        if width == 0 || height == 0 {
            return Err(Error::ZeroSize);
        }
        if (width as u64).saturating_mul(height as u64) > MAX_BENCH_PIXELS {
            return Err(Error::Overflow);
        }
        let src = input_u8(width, height);
        let widen = |src: Vec<u8>| src.into_iter().map(f32::from).collect::<Vec<f32>>();
        let work = match (case.op, case.precision) {
            (Op::Filter2d { ksize }, p) => {
                let coeffs = dense_kernel(ksize);
                let len = filter2d_scratch_len(width, ksize);
                match p {
                    Precision::U8 => Work::DenseU8(
                        Kernel2dQ::from_f32_auto(ksize, &coeffs)?,
                        Planes::new(src, scratch(len)?),
                    ),
                    Precision::F32 => Work::DenseF32(
                        Kernel2dF32::new(ksize, &coeffs)?,
                        Planes::new(widen(src), scratch(len)?),
                    ),
                }
            }
            (Op::Gaussian { ksize }, p) => {
                // Resolving the kernel validates `ksize` before anything is allocated.
                filter::gaussian_kernel_q(ksize, 0.0)?;
                let len = separable_scratch_len(width, ksize, ksize);
                match p {
                    Precision::U8 => Work::GaussianU8(ksize, Planes::new(src, scratch(len)?)),
                    Precision::F32 => {
                        Work::GaussianF32(ksize, Planes::new(widen(src), scratch(len)?))
                    }
                }
            }
            (Op::Box { ksize }, p) => {
                let len = separable_scratch_len(width, ksize, ksize);
                match p {
                    Precision::U8 => Work::BoxU8(ksize, Planes::new(src, scratch(len)?)),
                    Precision::F32 => Work::BoxF32(ksize, Planes::new(widen(src), scratch(len)?)),
                }
            }
            (Op::Integral { squared }, Precision::U8) => {
                let (tw, th) = integral_size(width, height);
                Work::Integral {
                    src,
                    sum: vec![0; tw * th],
                    sqsum: squared.then(|| vec![0; tw * th]),
                }
            }
            (Op::Integral { .. }, Precision::F32) => return Err(Error::InvalidArgument),
        };
        let mut prepared = Self {
            size: (width, height),
            work,
        };
        // One run now surfaces any parameter error at preparation, not in the timed loop.
        prepared.run()?;
        Ok(prepared)
    }

    /// Pixels processed per run (output pixels; source pixels for the integral image), the
    /// unit of the reported throughput.
    pub fn pixels(&self) -> usize {
        self.size.0 * self.size.1
    }

    /// Runs the core call once, overwriting the whole output.
    ///
    /// Errors: none for a case that [`CpuCase::new`] accepted (it runs once to make sure).
    pub fn run(&mut self) -> Result<()> {
        let size = self.size;
        match &mut self.work {
            Work::DenseU8(k, p) => p.apply(size, |s, d, t| filter::filter2d_u8(s, d, k, BORDER, t)),
            Work::DenseF32(k, p) => {
                p.apply(size, |s, d, t| filter::filter2d_f32(s, d, k, BORDER_F32, t))
            }
            Work::GaussianU8(k, p) => p.apply(size, |s, d, t| {
                filter::gaussian_blur_u8(s, d, *k, 0.0, BORDER, t)
            }),
            Work::GaussianF32(k, p) => p.apply(size, |s, d, t| {
                filter::gaussian_blur_f32(s, d, *k, 0.0, BORDER_F32, t)
            }),
            Work::BoxU8(k, p) => p.apply(size, |s, d, t| filter::box_blur_u8(s, d, *k, BORDER, t)),
            Work::BoxF32(k, p) => p.apply(size, |s, d, t| {
                filter::box_blur_f32(s, d, *k, BORDER_F32, t)
            }),
            Work::Integral { src, sum, sqsum } => {
                let (w, h) = size;
                let (tw, th) = integral_size(w, h);
                let src = ImageView::packed(src, w, h)?;
                let mut sum = ImageViewMut::packed(sum, tw, th)?;
                match sqsum {
                    Some(sq) => {
                        let mut sq = ImageViewMut::packed(sq, tw, th)?;
                        integral_u8(&src, &mut sum, Some(&mut sq))
                    }
                    None => integral_u8(&src, &mut sum, None),
                }
            }
        }
    }
}
