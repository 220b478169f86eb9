//! Shared parts of the OpenCL tests: the one context of this test binary, random strided host
//! images, transfers, and the comparisons with the CPU reference.
//!
//! Comparison rules: integer outputs must be exactly equal. `f32` outputs must satisfy
//! `|gpu − cpu| ≤ 1e-5·|cpu| + 1e-5·S`, where `S` is the largest magnitude a partial sum of the
//! output can reach (`Σ|coefficients| · max|pixel|`): the relative bound of the contract, plus an
//! absolute term at the scale of the terms summed, for outputs that cancel to near 0.

use std::sync::OnceLock;

use mvision_core::{Border, ImageView, ImageViewMut, Pixel};
use mvision_opencl::{Context, DeviceImage, Error};

/// The context shared by every test of this binary (programs are compiled once per context, and
/// PoCL compiles slowly), or `None` — with a visible message — when there is no OpenCL device.
/// Under CI (`CI` set) a missing device fails the test instead.
pub fn ctx(test: &str) -> Option<&'static Context> {
    static CTX: OnceLock<Result<Context, Error>> = OnceLock::new();
    match CTX.get_or_init(Context::from_env) {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI requires an OpenCL device (install PoCL), got: {e}")
        }
        Err(e) => {
            // Straight to the process's stderr: libtest captures `eprintln!` of passing tests,
            // and a skip must be visible.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no OpenCL device: {e}");
            None
        }
    }
}

/// The shared context, or return from the test (see [`ctx`]).
#[macro_export]
macro_rules! ctx_or_skip {
    ($name:expr) => {
        match $crate::common::ctx($name) {
            Some(c) => c,
            None => return,
        }
    };
}

/// SplitMix64: tiny, seedable, good enough to draw test inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    pub fn u8(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// Uniform in `[lo, hi)`.
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
}

/// Image sizes every operation is tried on: a single pixel, tiny and odd shapes (narrower than
/// a 15-tap kernel's radius, so reflect-101 reflects repeatedly), sizes that are not multiples
/// of any tile, and a VGA frame.
pub const SIZES: [(usize, usize); 6] = [(1, 1), (2, 3), (17, 5), (31, 33), (97, 61), (640, 480)];

pub fn borders_u8(rng: &mut Rng) -> [Border<u8>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.u8()),
    ]
}

pub fn borders_f32(rng: &mut Rng) -> [Border<f32>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(rng.f32(-8.0, 8.0)),
    ]
}

/// A host image whose rows are `stride ≥ width` apart; the gaps hold garbage that no
/// operation may read or write.
pub struct HostImage<T: Pixel> {
    pub data: Vec<T>,
    pub width: usize,
    pub height: usize,
    pub stride: usize,
}

impl<T: Pixel> HostImage<T> {
    pub fn new(width: usize, height: usize, stride: usize, mut pixel: impl FnMut() -> T) -> Self {
        let data = (0..stride * (height - 1) + width)
            .map(|_| pixel())
            .collect();
        Self {
            data,
            width,
            height,
            stride,
        }
    }

    pub fn view(&self) -> ImageView<'_, T> {
        ImageView::new(&self.data, self.width, self.height, self.stride).unwrap()
    }

    pub fn view_mut(&mut self) -> ImageViewMut<'_, T> {
        ImageViewMut::new(&mut self.data, self.width, self.height, self.stride).unwrap()
    }

    /// The pixels, packed.
    pub fn packed(&self) -> Vec<T> {
        let v = self.view();
        (0..self.height).flat_map(|y| v.row(y).to_vec()).collect()
    }
}

pub fn random_u8(rng: &mut Rng, w: usize, h: usize) -> HostImage<u8> {
    let stride = w + (rng.next_u64() % 3) as usize;
    HostImage::new(w, h, stride, || rng.u8())
}

pub fn random_f32(rng: &mut Rng, w: usize, h: usize) -> HostImage<f32> {
    let stride = w + (rng.next_u64() % 3) as usize;
    HostImage::new(w, h, stride, || rng.f32(-8.0, 8.0))
}

/// A packed host image of `T::default()` pixels.
pub fn zeros<T: Pixel>(w: usize, h: usize) -> HostImage<T> {
    HostImage::new(w, h, w, T::default)
}

pub fn upload<T: Pixel>(ctx: &Context, img: &HostImage<T>) -> DeviceImage<T> {
    let mut d = ctx.alloc::<T>(img.width, img.height).unwrap();
    ctx.upload(&img.view(), &mut d).unwrap();
    d
}

/// The device image's pixels, packed.
pub fn download<T: Pixel>(ctx: &Context, img: &DeviceImage<T>) -> Vec<T> {
    let mut out = vec![T::default(); img.len()];
    ctx.download(
        img,
        &mut ImageViewMut::packed(&mut out, img.width(), img.height()).unwrap(),
    )
    .unwrap();
    out
}

/// Integer outputs: exactly equal, or a message naming the first differing pixel.
pub fn assert_exact<T: PartialEq + std::fmt::Debug>(
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

/// Largest pixel magnitude of an `f32` image (at least 1, for the constant border too).
pub fn max_abs(img: &HostImage<f32>, border: Border<f32>) -> f32 {
    let c = match border {
        Border::Constant(v) => v.abs(),
        _ => 0.0,
    };
    img.packed().iter().fold(c.max(1.0), |m, v| m.max(v.abs()))
}
