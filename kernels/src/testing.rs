//! Test support shared by the test suites of the drivers and of the runtime (feature
//! `testing`): a seeded generator, host images whose row gaps hold garbage that no operation
//! may read or write, and the comparison rules of `kernels/SPEC.md`.
//!
//! Comparison rules: integer outputs must be exactly equal ([`assert_exact`]). `f32` outputs
//! must satisfy `|got − want| ≤ 1e-5·|want| + 1e-5·scale` ([`assert_close`]), where `scale` is
//! the largest magnitude a partial sum of the output can reach (`Σ|taps| · max|pixel|`): the
//! contract's relative bound, plus an absolute term at the scale of the terms summed, for
//! outputs that cancel to near zero.

use mvision_core::rng::SplitMix64;
use mvision_core::{Border, ImageView, ImageViewMut, Pixel};

/// The core's SplitMix64 with the draws test inputs need; seedable, the same on every platform.
#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Self(SplitMix64(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// A random byte.
    pub fn u8(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// Uniform in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// A random odd kernel length in `1..=15`.
    pub fn odd_len(&mut self) -> usize {
        2 * self.below(8) + 1
    }
}

/// A host image whose rows are `stride ≥ width` elements apart; what lies between rows is a
/// gap value that no operation may read (it would show in the result) or write.
#[derive(Clone, Debug, PartialEq)]
pub struct HostImage<T: Pixel> {
    /// Pixels and gaps: `stride · (height − 1) + width` elements.
    pub data: Vec<T>,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Elements between row starts.
    pub stride: usize,
    /// What the gaps hold.
    pub gap: T,
}

impl<T: Pixel> HostImage<T> {
    /// A `width × height` image with rows `stride` apart, pixels from `pixel`, gaps of `gap`.
    pub fn new(
        width: usize,
        height: usize,
        stride: usize,
        gap: T,
        mut pixel: impl FnMut() -> T,
    ) -> Self {
        assert!(width > 0 && height > 0 && stride >= width);
        let mut data = vec![gap; stride * (height - 1) + width];
        for y in 0..height {
            for p in &mut data[y * stride..y * stride + width] {
                *p = pixel();
            }
        }
        Self {
            data,
            width,
            height,
            stride,
            gap,
        }
    }

    /// A destination full of `fill` (pixels and gaps alike), rows a random `0..=5` elements
    /// wider than the image.
    pub fn filled(rng: &mut Rng, width: usize, height: usize, fill: T) -> Self {
        let stride = random_stride(rng, width);
        Self::new(width, height, stride, fill, || fill)
    }

    /// The core view of the pixels.
    pub fn view(&self) -> ImageView<'_, T> {
        ImageView::new(&self.data, self.width, self.height, self.stride).unwrap()
    }

    /// The writable core view of the pixels.
    pub fn view_mut(&mut self) -> ImageViewMut<'_, T> {
        ImageViewMut::new(&mut self.data, self.width, self.height, self.stride).unwrap()
    }

    /// The pixels, packed row after row.
    pub fn packed(&self) -> Vec<T> {
        let v = self.view();
        (0..self.height).flat_map(|y| v.row(y).to_vec()).collect()
    }

    /// Panics unless every gap still holds the gap value (compared bit for bit: NaN gaps too).
    #[track_caller]
    pub fn assert_gaps_untouched(&self, what: &str) {
        for y in 0..self.height - 1 {
            let gap = &self.data[y * self.stride + self.width..(y + 1) * self.stride];
            assert!(
                gap.iter().all(|v| same_value(v, &self.gap)),
                "{what}: the gap after row {y} was written"
            );
        }
    }
}

/// Whether two pixels are the same value, NaN included.
#[allow(clippy::eq_op)] // NaN is the one value unequal to itself.
fn same_value<T: Pixel>(a: &T, b: &T) -> bool {
    a == b || (a != a && b != b)
}

/// A row stride for a `width`-wide image: often packed, sometimes 1, 2 or 5 elements wider.
pub fn random_stride(rng: &mut Rng, width: usize) -> usize {
    width + [0, 0, 1, 2, 5][rng.below(5)]
}

/// A random `u8` image with a random stride; gaps hold `0xA5`.
pub fn random_u8(rng: &mut Rng, width: usize, height: usize) -> HostImage<u8> {
    let stride = random_stride(rng, width);
    HostImage::new(width, height, stride, 0xA5, || rng.u8())
}

/// A random `f32` image with a random stride, pixels in `[-8, 8)`; gaps are NaN, so a stray
/// read would show in the result.
pub fn random_f32(rng: &mut Rng, width: usize, height: usize) -> HostImage<f32> {
    let stride = random_stride(rng, width);
    HostImage::new(width, height, stride, f32::NAN, || rng.f32_in(-8.0, 8.0))
}

/// The three border modes for `u8` images, the constant drawn at random.
pub fn borders_u8(rng: &mut Rng) -> [Border<u8>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.u8()),
    ]
}

/// The three border modes for `f32` images, the constant drawn at random in `[-8, 8)`.
pub fn borders_f32(rng: &mut Rng) -> [Border<f32>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.f32_in(-8.0, 8.0)),
    ]
}

/// The largest magnitude among the pixels of `img` and the constant of `border` (at least 1),
/// for the `scale` of [`assert_close`].
pub fn max_abs(img: &HostImage<f32>, border: Border<f32>) -> f32 {
    let c = match border {
        Border::Constant(v) => v.abs(),
        _ => 0.0,
    };
    img.packed().iter().fold(c.max(1.0), |m, v| m.max(v.abs()))
}

/// The pixels `download` writes into a fresh packed host view of `size`, e.g.
/// `read_packed(img.size(), |v| ctx.download(&img, v))` in a driver's tests.
#[track_caller]
pub fn read_packed<T: Pixel, E: core::fmt::Debug>(
    size: (usize, usize),
    download: impl FnOnce(&mut ImageViewMut<'_, T>) -> Result<(), E>,
) -> Vec<T> {
    let mut out = vec![T::default(); size.0 * size.1];
    download(&mut ImageViewMut::packed(&mut out, size.0, size.1).unwrap()).unwrap();
    out
}

/// Integer outputs: exactly equal, or a panic naming how many pixels differ and the first one.
#[track_caller]
pub fn assert_exact<T: PartialEq + core::fmt::Debug>(
    got: &[T],
    want: &[T],
    width: usize,
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}: pixel count");
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        let bad = got.iter().zip(want).filter(|(g, w)| g != w).count();
        panic!(
            "{what}: {bad} pixel(s) differ; first at (x {}, y {}): got {:?}, want {:?}",
            i % width,
            i / width,
            got[i],
            want[i]
        );
    }
}

/// Float outputs: `|got − want| ≤ 1e-5·|want| + 1e-5·scale` (see the module docs).
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32], width: usize, scale: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: pixel count");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs() + 1e-5 * scale;
        assert!(
            (g - w).abs() <= tol,
            "{what}: (x {}, y {}): got {g}, want {w} (|diff| {} > {tol})",
            i % width,
            i / width,
            (g - w).abs()
        );
    }
}
