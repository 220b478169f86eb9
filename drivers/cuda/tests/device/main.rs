//! Every operation of the CUDA driver against the `mvision-core` function it mirrors, on random
//! inputs: sizes from 1 × 1 through odd ones to 640 × 480, every border mode, kernel sizes up to
//! 15, the naive and several tiled variants, strided host views. Integer outputs must match
//! exactly, `f32` outputs within 1e-5 relative (plus 1e-5 absolute, for sums that cancel).
//!
//! The tests need a CUDA GPU. Where libcuda is missing, cannot initialise, or sees no device
//! they are skipped with a message; where a GPU is present but unusable (no NVRTC, say) they
//! fail.

mod filters;
mod memory;
mod resample;

use mvision_core::{Border, ImageView, ImageViewMut, Pixel};
use mvision_cuda::{devices, loader, Context, DeviceImage, Variant};

/// Sizes every operation is tried at: 1 × 1, thin, odd, not a multiple of any tile, VGA.
pub const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 7),
    (9, 1),
    (2, 3),
    (17, 13),
    (97, 61),
    (640, 480),
];

/// The dense-filter variants: naive, the default tile, the PowerVR seed's 8 × 4, a wide 32 × 8.
pub const VARIANTS: &[Variant] = &[
    Variant::Naive,
    Variant::Tiled { w: 16, h: 16 },
    Variant::Tiled { w: 8, h: 4 },
    Variant::Tiled { w: 32, h: 8 },
];

/// Says that `test` is skipped and why, on stderr itself: libtest captures `eprintln!` of
/// passing tests, and a skip must not be silent.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// A context on the device of `MVISION_CUDA_DEVICE` (default 0), or `None` (after saying so)
/// where there is no GPU.
pub fn gpu(test: &str) -> Option<Context> {
    if !loader::driver_present() {
        skip(test, "libcuda not found (no NVIDIA driver on this machine)");
        return None;
    }
    match devices() {
        Ok(list) if list.is_empty() => {
            skip(test, "the CUDA driver sees no device");
            return None;
        }
        Ok(_) => {}
        Err(mvision_cuda::Error::Unavailable(why)) => {
            skip(test, &why);
            return None;
        }
        Err(e) => panic!("{test}: libcuda is present but enumeration failed: {e}"),
    }
    match Context::from_env() {
        Ok(ctx) => Some(ctx),
        Err(e) => panic!("{test}: a CUDA device is present but unusable: {e}"),
    }
}

/// SplitMix64: tiny, seedable, enough to draw test inputs.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn int(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as usize) as i32
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

/// A host image with a random row stride (often packed, sometimes padded) and garbage in the
/// gaps, so uploads and downloads are exercised through strided views.
pub struct Host<T> {
    /// Pixels and gaps.
    pub buf: Vec<T>,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Elements between row starts.
    pub stride: usize,
}

impl<T: Pixel> Host<T> {
    /// Pixels from `f`, gaps from `gap`.
    pub fn from_fn(
        rng: &mut Rng,
        width: usize,
        height: usize,
        gap: T,
        mut f: impl FnMut(&mut Rng) -> T,
    ) -> Self {
        let stride = width + [0, 0, 1, 5][rng.below(4)];
        let mut buf = vec![gap; stride * (height - 1) + width];
        for y in 0..height {
            for x in 0..width {
                buf[y * stride + x] = f(rng);
            }
        }
        Self {
            buf,
            width,
            height,
            stride,
        }
    }

    /// A destination full of `fill` (pixels and gaps alike).
    pub fn filled(rng: &mut Rng, width: usize, height: usize, fill: T) -> Self {
        Self::from_fn(rng, width, height, fill, |_| fill)
    }

    /// The core view.
    pub fn view(&self) -> ImageView<'_, T> {
        ImageView::new(&self.buf, self.width, self.height, self.stride).unwrap()
    }

    /// The writable core view.
    pub fn view_mut(&mut self) -> ImageViewMut<'_, T> {
        ImageViewMut::new(&mut self.buf, self.width, self.height, self.stride).unwrap()
    }

    /// The pixels, packed row after row.
    pub fn pixels(&self) -> Vec<T> {
        let v = self.view();
        (0..self.height).flat_map(|y| v.row(y).to_vec()).collect()
    }
}

/// A random `u8` image.
pub fn random_u8(rng: &mut Rng, w: usize, h: usize) -> Host<u8> {
    Host::from_fn(rng, w, h, 0xA5, |r| r.next_u64() as u8)
}

/// A random `f32` image, pixels in `[-1, 1)`; gaps are NaN so a stray read would show.
pub fn random_f32(rng: &mut Rng, w: usize, h: usize) -> Host<f32> {
    Host::from_fn(rng, w, h, f32::NAN, |r| r.f32_in(-1.0, 1.0))
}

/// The three border modes, the constant drawn at random.
pub fn borders_u8(rng: &mut Rng) -> [Border<u8>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.next_u64() as u8),
    ]
}

/// The three border modes for `f32` images.
pub fn borders_f32(rng: &mut Rng) -> [Border<f32>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.f32_in(-2.0, 2.0)),
    ]
}

/// Uploads a host image into a new device image.
pub fn upload<T: Pixel>(ctx: &Context, host: &Host<T>) -> DeviceImage<T> {
    let mut img = ctx.alloc::<T>(host.width, host.height).unwrap();
    ctx.upload(&host.view(), &mut img).unwrap();
    img
}

/// Downloads a device image, packed.
pub fn download<T: Pixel>(ctx: &Context, img: &DeviceImage<T>) -> Vec<T> {
    let (w, h) = img.size();
    let mut out = vec![T::default(); w * h];
    ctx.download(img, &mut ImageViewMut::packed(&mut out, w, h).unwrap())
        .unwrap();
    out
}

/// Integer results: identical, or the first difference is reported with its position.
pub fn assert_exact<T: Pixel>(got: &[T], want: &[T], width: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: pixel ({}, {}) is {:?}, CPU says {:?}",
            i % width,
            i / width,
            got[i],
            want[i]
        );
    }
}

/// Float results: within 1e-5 relative, plus 1e-5 absolute for sums that cancel to near zero.
pub fn assert_close(got: &[f32], want: &[f32], width: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * g.abs().max(w.abs()) + 1e-5;
        assert!(
            (g - w).abs() <= tol || g.to_bits() == w.to_bits(),
            "{what}: pixel ({}, {}) is {g}, CPU says {w}",
            i % width,
            i / width
        );
    }
}
