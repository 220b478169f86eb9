//! Shared parts of the conformance tests: a seeded PRNG, random strided images whose row gaps and
//! tails hold garbage, and the plain reference implementations the core is compared with.
//!
//! The references are written from the documented definitions only (nested loops, no code from
//! the core): borders by explicit, repeated reflection; integer results in `i64` with one
//! explicit floor division; float results in `f64`, which for our kernel sizes is exact enough
//! to stand for the true real-number result. They read pixels through [`Plane`], a packed copy
//! of an image's pixels, so nothing they compute can depend on a stride.

use mvision_core::pixel::Pixel;
use mvision_core::{Border, ImageView, ImageViewMut};

// ---------------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------------

/// SplitMix64: tiny, seedable, good enough to draw test inputs.
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

    /// Uniform in `lo..=hi` (the modulo bias is irrelevant for drawing test inputs).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi);
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next_u64() as u128 % span) as i128) as i64
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }

    /// A random byte.
    pub fn u8(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`, as `f32`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        (lo as f64 + (hi as f64 - lo as f64) * self.unit()) as f32
    }

    /// A random element of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A random odd kernel length in `1..=15`.
    pub fn odd_len(&mut self) -> usize {
        2 * self.below(8) + 1
    }
}

// ---------------------------------------------------------------------------------------------
// Pixels and strided test images
// ---------------------------------------------------------------------------------------------

/// What the tests need of a pixel type beyond the core's [`Pixel`].
pub trait TestPixel: Pixel {
    /// A value for row gaps and unwritten outputs: whatever a stray read or write would expose.
    /// Float garbage is NaN, so a stray read poisons every result it reaches.
    fn garbage(rng: &mut Rng) -> Self;
    /// The bit pattern, so that NaN garbage compares equal to itself.
    fn bits(self) -> u64;
}

impl TestPixel for u8 {
    fn garbage(rng: &mut Rng) -> Self {
        rng.u8()
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

impl TestPixel for i16 {
    fn garbage(rng: &mut Rng) -> Self {
        rng.next_u64() as i16
    }
    fn bits(self) -> u64 {
        self as u16 as u64
    }
}

impl TestPixel for u32 {
    fn garbage(rng: &mut Rng) -> Self {
        rng.next_u64() as u32
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

impl TestPixel for u64 {
    fn garbage(rng: &mut Rng) -> Self {
        rng.next_u64()
    }
    fn bits(self) -> u64 {
        self
    }
}

impl TestPixel for f32 {
    fn garbage(rng: &mut Rng) -> Self {
        // Quiet NaNs with random sign and payload.
        f32::from_bits(0x7FC0_0000 | (rng.next_u64() as u32 & 0x803F_FFFF))
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

/// A `width × height` image in an owned buffer with an arbitrary `stride ≥ width` and a few
/// spare elements after the last row. Everything that is not a pixel holds garbage that the core
/// must neither read (sources) nor write (destinations).
#[derive(Clone, Debug)]
pub struct Img<T> {
    /// The whole buffer, gaps and tail included.
    pub buf: Vec<T>,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Distance between row starts, in elements.
    pub stride: usize,
}

/// A random row padding: often none, often a little, sometimes a lot.
fn random_pad(rng: &mut Rng) -> usize {
    match rng.below(4) {
        0 => 0,
        1 | 2 => 1 + rng.below(3),
        _ => 4 + rng.below(29),
    }
}

impl<T: TestPixel> Img<T> {
    /// An image whose every element, pixels included, is garbage (a destination: a pixel the
    /// core forgets to write keeps its garbage and fails the comparison).
    pub fn garbage(rng: &mut Rng, width: usize, height: usize) -> Self {
        Self::from_fn(rng, width, height, |rng, _, _| T::garbage(rng))
    }

    /// An image with pixels from `f(rng, x, y)` and garbage everywhere else.
    pub fn from_fn(
        rng: &mut Rng,
        width: usize,
        height: usize,
        mut f: impl FnMut(&mut Rng, usize, usize) -> T,
    ) -> Self {
        assert!(width > 0 && height > 0);
        let stride = width + random_pad(rng);
        let len = stride * (height - 1) + width + rng.below(4);
        let mut buf: Vec<T> = (0..len).map(|_| T::garbage(rng)).collect();
        for y in 0..height {
            for x in 0..width {
                buf[y * stride + x] = f(rng, x, y);
            }
        }
        Self {
            buf,
            width,
            height,
            stride,
        }
    }

    /// The pixel at `(x, y)`.
    pub fn at(&self, x: usize, y: usize) -> T {
        assert!(x < self.width && y < self.height);
        self.buf[y * self.stride + x]
    }

    /// A read-only core view of the pixels.
    pub fn view(&self) -> ImageView<'_, T> {
        ImageView::new(&self.buf, self.width, self.height, self.stride).expect("valid test image")
    }

    /// A writable core view of the pixels.
    pub fn view_mut(&mut self) -> ImageViewMut<'_, T> {
        ImageViewMut::new(&mut self.buf, self.width, self.height, self.stride)
            .expect("valid test image")
    }

    /// A packed copy of the pixels.
    pub fn plane(&self) -> Plane<T> {
        let mut px = Vec::with_capacity(self.width * self.height);
        for y in 0..self.height {
            for x in 0..self.width {
                px.push(self.at(x, y));
            }
        }
        Plane {
            width: self.width,
            height: self.height,
            px,
        }
    }

    /// True if buffer index `i` is a pixel (not a gap or the tail).
    pub fn is_pixel(&self, i: usize) -> bool {
        i / self.stride < self.height && i % self.stride < self.width
    }

    /// Bit patterns of the whole buffer, to compare with after a call.
    pub fn snapshot(&self) -> Vec<u64> {
        self.buf.iter().map(|v| v.bits()).collect()
    }

    /// Panics unless every non-pixel element still has the bits it had in `before`.
    pub fn assert_gaps_unchanged(&self, before: &[u64], what: &str) {
        for (i, (v, &b)) in self.buf.iter().zip(before).enumerate() {
            if !self.is_pixel(i) {
                assert_eq!(
                    v.bits(),
                    b,
                    "{what}: element {i} outside the pixels was written"
                );
            }
        }
    }

    /// Panics unless the whole buffer still has the bits it had in `before`.
    pub fn assert_unchanged(&self, before: &[u64], what: &str) {
        for (i, (v, &b)) in self.buf.iter().zip(before).enumerate() {
            assert_eq!(
                v.bits(),
                b,
                "{what}: element {i} was written by a failing call"
            );
        }
    }

    /// Panics unless the pixels equal `want` bit for bit.
    pub fn assert_pixels_eq(&self, want: &Plane<T>, what: &str) {
        assert_eq!(
            (self.width, self.height),
            (want.width, want.height),
            "{what}"
        );
        for y in 0..self.height {
            for x in 0..self.width {
                let (g, w) = (self.at(x, y), want.at(x, y));
                assert_eq!(
                    g.bits(),
                    w.bits(),
                    "{what}: at ({x}, {y}) got {g:?}, want {w:?}"
                );
            }
        }
    }
}

/// A random `u8` image.
pub fn random_u8(rng: &mut Rng, width: usize, height: usize) -> Img<u8> {
    Img::from_fn(rng, width, height, |rng, _, _| rng.u8())
}

/// A random `f32` image with pixels uniform in `[lo, hi)`.
pub fn random_f32(rng: &mut Rng, width: usize, height: usize, lo: f32, hi: f32) -> Img<f32> {
    Img::from_fn(rng, width, height, |rng, _, _| rng.f32_in(lo, hi))
}

impl Img<f32> {
    /// Panics unless every pixel is within `tol(x, y)` of `want`; a NaN in `want` demands NaN.
    pub fn assert_close(&self, want: &Plane<f64>, tol: impl Fn(usize, usize) -> f64, what: &str) {
        assert_eq!(
            (self.width, self.height),
            (want.width, want.height),
            "{what}"
        );
        for y in 0..self.height {
            for x in 0..self.width {
                let (g, w) = (self.at(x, y) as f64, want.at(x, y));
                if w.is_nan() {
                    assert!(g.is_nan(), "{what}: at ({x}, {y}) got {g}, want NaN");
                    continue;
                }
                let t = tol(x, y);
                assert!(
                    (g - w).abs() <= t,
                    "{what}: at ({x}, {y}) got {g}, want {w} (|diff| {} > tol {t})",
                    (g - w).abs()
                );
            }
        }
    }
}

/// Test sizes: 1×1, single rows and columns, odd widths, a few larger.
pub const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 6),
    (9, 1),
    (2, 3),
    (3, 2),
    (3, 3),
    (7, 5),
    (13, 4),
    (31, 3),
    (33, 17),
    (16, 16),
    (97, 61),
];

/// Every border mode, with the constant drawn at random (and the two extremes).
pub fn borders_u8(rng: &mut Rng) -> [Border<u8>; 5] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(0),
        Border::Constant(255),
        Border::Constant(rng.u8()),
    ]
}

/// Every border mode, with a random constant.
pub fn borders_f32(rng: &mut Rng) -> [Border<f32>; 4] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(0.0),
        Border::Constant(rng.f32_in(-100.0, 100.0)),
    ]
}

// ---------------------------------------------------------------------------------------------
// Reference images and borders
// ---------------------------------------------------------------------------------------------

/// Packed pixels of an image: what the references read and produce.
#[derive(Clone, Debug, PartialEq)]
pub struct Plane<T> {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Row-major pixels, `width · height` of them.
    pub px: Vec<T>,
}

impl<T: Copy> Plane<T> {
    /// A plane with pixels `f(x, y)`.
    pub fn from_fn(width: usize, height: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut px = Vec::with_capacity(width * height);
        for y in 0..height {
            for x in 0..width {
                px.push(f(x, y));
            }
        }
        Self { width, height, px }
    }

    /// The pixel at `(x, y)` (inside).
    pub fn at(&self, x: usize, y: usize) -> T {
        assert!(x < self.width && y < self.height);
        self.px[y * self.width + x]
    }

    /// The pixel at a coordinate that may lie outside, as the border mode defines it.
    pub fn fetch(&self, x: i64, y: i64, border: Border<T>) -> T {
        let (w, h) = (self.width as i64, self.height as i64);
        match border {
            Border::Replicate => self.at(replicate(x, w) as usize, replicate(y, h) as usize),
            Border::Reflect101 => self.at(reflect101(x, w) as usize, reflect101(y, h) as usize),
            Border::Constant(v) => {
                if (0..w).contains(&x) && (0..h).contains(&y) {
                    self.at(x as usize, y as usize)
                } else {
                    v
                }
            }
        }
    }

    /// The `w × h` rectangle at `(x, y)`.
    pub fn crop(&self, x: usize, y: usize, w: usize, h: usize) -> Self {
        Self::from_fn(w, h, |i, j| self.at(x + i, y + j))
    }
}

/// The nearest inside coordinate on an axis of `n` pixels.
pub fn replicate(i: i64, n: i64) -> i64 {
    if i < 0 {
        0
    } else if i >= n {
        n - 1
    } else {
        i
    }
}

/// Reflect-101 by its definition: mirror about the edge pixel (not repeating it), again and
/// again, until the coordinate lands inside. An axis of one pixel maps everything to it.
pub fn reflect101(mut i: i64, n: i64) -> i64 {
    if n == 1 {
        return 0;
    }
    loop {
        if i < 0 {
            i = -i;
        } else if i >= n {
            i = 2 * (n - 1) - i;
        } else {
            return i;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Convolution references
// ---------------------------------------------------------------------------------------------

/// `Σ c[j][i] · p(cx − kw/2 + i, cy − kh/2 + j)` over a `kw × kh` row-major kernel, in `i64`.
pub fn corr_i64(
    src: &Plane<u8>,
    kw: usize,
    kh: usize,
    coeffs: &[i64],
    border: Border<u8>,
    cx: i64,
    cy: i64,
) -> i64 {
    assert_eq!(coeffs.len(), kw * kh);
    let (rx, ry) = ((kw / 2) as i64, (kh / 2) as i64);
    let mut s = 0i64;
    for j in 0..kh {
        for i in 0..kw {
            let p = src.fetch(cx - rx + i as i64, cy - ry + j as i64, border);
            s += coeffs[j * kw + i] * p as i64;
        }
    }
    s
}

/// The same sum for `f32` pixels, in `f64`, with `Σ |c · p|` (the scale of its rounding error
/// in any `f32` evaluation order).
pub fn corr_f64(
    src: &Plane<f32>,
    kw: usize,
    kh: usize,
    coeffs: &[f64],
    border: Border<f32>,
    cx: i64,
    cy: i64,
) -> (f64, f64) {
    assert_eq!(coeffs.len(), kw * kh);
    let (rx, ry) = ((kw / 2) as i64, (kh / 2) as i64);
    let (mut s, mut a) = (0.0f64, 0.0f64);
    for j in 0..kh {
        for i in 0..kw {
            let p = src.fetch(cx - rx + i as i64, cy - ry + j as i64, border) as f64;
            s += coeffs[j * kw + i] * p;
            a += (coeffs[j * kw + i] * p).abs();
        }
    }
    (s, a)
}

/// `clamp(floor((s + 2^(shift−1)) / 2^shift), 0, 255)` (for shift 0, just the clamp).
pub fn round_shift_sat(s: i64, shift: u32) -> u8 {
    let half = if shift == 0 { 0 } else { 1i64 << (shift - 1) };
    (s + half).div_euclid(1i64 << shift).clamp(0, 255) as u8
}

/// Dense fixed-point filter of a `u8` image: [`corr_i64`] at every pixel, one rounding.
pub fn filter_u8(
    src: &Plane<u8>,
    kw: usize,
    kh: usize,
    coeffs: &[i64],
    shift: u32,
    border: Border<u8>,
) -> Plane<u8> {
    Plane::from_fn(src.width, src.height, |x, y| {
        round_shift_sat(
            corr_i64(src, kw, kh, coeffs, border, x as i64, y as i64),
            shift,
        )
    })
}

/// Dense float filter of an `f32` image: the sums and their `Σ |c · p|`.
pub fn filter_f64(
    src: &Plane<f32>,
    kw: usize,
    kh: usize,
    coeffs: &[f64],
    border: Border<f32>,
) -> (Plane<f64>, Plane<f64>) {
    let mut abs = Vec::with_capacity(src.px.len());
    let sums = Plane::from_fn(src.width, src.height, |x, y| {
        let (s, a) = corr_f64(src, kw, kh, coeffs, border, x as i64, y as i64);
        abs.push(a);
        s
    });
    let abs = Plane {
        width: src.width,
        height: src.height,
        px: abs,
    };
    (sums, abs)
}

/// The dense `kx.len() × ky.len()` kernel `c[j][i] = ky[j] · kx[i]` of a separable pair.
pub fn outer<T: Copy + core::ops::Mul<Output = T>>(kx: &[T], ky: &[T]) -> Vec<T> {
    let mut c = Vec::with_capacity(kx.len() * ky.len());
    for &b in ky {
        for &a in kx {
            c.push(b * a);
        }
    }
    c
}

/// Box blur of a `u8` image: the window sum over `k × k`, `(sum + area/2) / area`.
pub fn box_u8(src: &Plane<u8>, k: usize, border: Border<u8>) -> Plane<u8> {
    let ones = vec![1i64; k * k];
    let area = (k * k) as i64;
    Plane::from_fn(src.width, src.height, |x, y| {
        let s = corr_i64(src, k, k, &ones, border, x as i64, y as i64);
        ((s + area / 2) / area) as u8
    })
}

/// The 3 × 3 Sobel x-derivative kernel, row-major.
pub const SOBEL_X: [i64; 9] = [-1, 0, 1, -2, 0, 2, -1, 0, 1];
/// The 3 × 3 Sobel y-derivative kernel, row-major.
pub const SOBEL_Y: [i64; 9] = [-1, -2, -1, 0, 0, 0, 1, 2, 1];

/// Sobel derivatives of a `u8` image.
pub fn sobel_i16(src: &Plane<u8>, border: Border<u8>) -> (Plane<i16>, Plane<i16>) {
    let d = |k: &[i64; 9]| {
        Plane::from_fn(src.width, src.height, |x, y| {
            corr_i64(src, 3, 3, k, border, x as i64, y as i64) as i16
        })
    };
    (d(&SOBEL_X), d(&SOBEL_Y))
}

/// The 5 × 5 pyramid kernel `[1 4 6 4 1] ⊗ [1 4 6 4 1]` (sum 256), row-major.
pub fn pyr_kernel() -> Vec<i64> {
    outer(&[1, 4, 6, 4, 1], &[1, 4, 6, 4, 1])
}

/// One pyramid level down of a `u8` image: the 5 × 5 sum centred on `(2x, 2y)`, `(s+128) >> 8`.
pub fn pyr_down_u8(src: &Plane<u8>, border: Border<u8>) -> Plane<u8> {
    let k = pyr_kernel();
    let (w, h) = (src.width.div_ceil(2), src.height.div_ceil(2));
    Plane::from_fn(w, h, |x, y| {
        let s = corr_i64(src, 5, 5, &k, border, 2 * x as i64, 2 * y as i64);
        ((s + 128) >> 8) as u8
    })
}

/// One pyramid level down of an `f32` image, in `f64`: values and `Σ |c · p| / 256`.
pub fn pyr_down_f64(src: &Plane<f32>, border: Border<f32>) -> (Plane<f64>, Plane<f64>) {
    let k: Vec<f64> = pyr_kernel().iter().map(|&c| c as f64 / 256.0).collect();
    let (w, h) = (src.width.div_ceil(2), src.height.div_ceil(2));
    let mut abs = Vec::new();
    let v = Plane::from_fn(w, h, |x, y| {
        let (s, a) = corr_f64(src, 5, 5, &k, border, 2 * x as i64, 2 * y as i64);
        abs.push(a);
        s
    });
    (
        v,
        Plane {
            width: w,
            height: h,
            px: abs,
        },
    )
}

/// Normalised 1-D Gaussian weights `exp(−d²/2σ²) / Σ` for `d = −k/2 ..= k/2`.
pub fn gaussian_weights(k: usize, sigma: f64) -> Vec<f64> {
    let r = (k / 2) as f64;
    let w: Vec<f64> = (0..k)
        .map(|i| {
            let d = i as f64 - r;
            (-(d * d) / (2.0 * sigma * sigma)).exp()
        })
        .collect();
    let s: f64 = w.iter().sum();
    w.into_iter().map(|v| v / s).collect()
}

// ---------------------------------------------------------------------------------------------
// Integral images
// ---------------------------------------------------------------------------------------------

/// Sum and sum of squares of the pixels in `[x0, x1) × [y0, y1)`, by brute force.
pub fn window_sums(src: &Plane<u8>, x0: usize, y0: usize, x1: usize, y1: usize) -> (u64, u64) {
    let (mut s, mut q) = (0u64, 0u64);
    for y in y0..y1 {
        for x in x0..x1 {
            let p = src.at(x, y) as u64;
            s += p;
            q += p * p;
        }
    }
    (s, q)
}

/// Mean and population variance of the pixels in a window, two-pass in `f64`.
pub fn window_mean_var(src: &Plane<u8>, x0: usize, y0: usize, x1: usize, y1: usize) -> (f64, f64) {
    let n = ((x1 - x0) * (y1 - y0)) as f64;
    let mut mean = 0.0;
    for y in y0..y1 {
        for x in x0..x1 {
            mean += src.at(x, y) as f64;
        }
    }
    mean /= n;
    let mut var = 0.0;
    for y in y0..y1 {
        for x in x0..x1 {
            let d = src.at(x, y) as f64 - mean;
            var += d * d;
        }
    }
    (mean, var / n)
}

// ---------------------------------------------------------------------------------------------
// Resize
// ---------------------------------------------------------------------------------------------

/// Number of fractional bits of the documented resize coordinates.
pub const Q: u32 = 11;

/// The documented source coordinate of destination index `d`, in Q11:
/// `floor(((d + ½)·src/dst − ½) · 2¹¹)`, clamped to `[0, (src − 1) · 2¹¹]`.
/// Written as `floor(((2d + 1)·src − dst) · 2¹⁰ / dst)`, with the floor spelled out.
pub fn source_coord_q11(d: usize, src_n: usize, dst_n: usize) -> i64 {
    let num = ((2 * d as i128 + 1) * src_n as i128 - dst_n as i128) * (1i128 << (Q - 1));
    let den = dst_n as i128;
    let mut q = num / den; // truncates towards zero
    if num % den != 0 && num < 0 {
        q -= 1; // …so step down once for negative non-integers: floor
    }
    q.max(0).min((src_n as i128 - 1) << Q) as i64
}

/// Bilinear resize of a `u8` image: the four neighbours of the Q11 source coordinate weighted by
/// Q11 × Q11 products, summed, rounded once (halves up).
pub fn resize_u8(src: &Plane<u8>, dw: usize, dh: usize) -> Plane<u8> {
    let one = 1i64 << Q;
    Plane::from_fn(dw, dh, |dx, dy| {
        let sx = source_coord_q11(dx, src.width, dw);
        let sy = source_coord_q11(dy, src.height, dh);
        let (x0, fx) = ((sx / one) as usize, sx % one);
        let (y0, fy) = ((sy / one) as usize, sy % one);
        let x1 = (x0 + 1).min(src.width - 1);
        let y1 = (y0 + 1).min(src.height - 1);
        let p = |x, y| src.at(x, y) as i64;
        let s = (one - fx) * (one - fy) * p(x0, y0)
            + fx * (one - fy) * p(x1, y0)
            + (one - fx) * fy * p(x0, y1)
            + fx * fy * p(x1, y1);
        ((s + (1 << (2 * Q - 1))) >> (2 * Q)) as u8
    })
}

/// Bilinear resize of an `f32` image in `f64` with the same source coordinates, and the largest
/// magnitude among each output's four neighbours (the scale of its rounding error).
pub fn resize_f64(src: &Plane<f32>, dw: usize, dh: usize) -> (Plane<f64>, Plane<f64>) {
    let one = (1i64 << Q) as f64;
    let mut scale = Vec::new();
    let v = Plane::from_fn(dw, dh, |dx, dy| {
        let sx = source_coord_q11(dx, src.width, dw);
        let sy = source_coord_q11(dy, src.height, dh);
        let (x0, y0) = ((sx >> Q) as usize, (sy >> Q) as usize);
        let (x1, y1) = ((x0 + 1).min(src.width - 1), (y0 + 1).min(src.height - 1));
        let (wx, wy) = (
            (sx - ((x0 as i64) << Q)) as f64 / one,
            (sy - ((y0 as i64) << Q)) as f64 / one,
        );
        let p = |x, y| src.at(x, y) as f64;
        let (p00, p10, p01, p11) = (p(x0, y0), p(x1, y0), p(x0, y1), p(x1, y1));
        scale.push(p00.abs().max(p10.abs()).max(p01.abs()).max(p11.abs()));
        (1.0 - wx) * (1.0 - wy) * p00
            + wx * (1.0 - wy) * p10
            + (1.0 - wx) * wy * p01
            + wx * wy * p11
    });
    (
        v,
        Plane {
            width: dw,
            height: dh,
            px: scale,
        },
    )
}

/// Smooth value noise in `[0, 255]`: bilinear interpolation of a hashed lattice `cell` px apart
/// (generated test textures).
#[allow(dead_code)] // Not every test binary draws textures.
pub fn value_noise(seed: u64, x: f32, y: f32, cell: f32) -> f32 {
    let hash = |i: i64, j: i64| {
        let mut z = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j as u64) << 32;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 56) as f32
    };
    let (fx, fy) = (x / cell, y / cell);
    let (i, j) = (fx.floor() as i64, fy.floor() as i64);
    let (tx, ty) = (fx - i as f32, fy - j as f32);
    let top = hash(i, j) * (1.0 - tx) + hash(i + 1, j) * tx;
    let bottom = hash(i, j + 1) * (1.0 - tx) + hash(i + 1, j + 1) * tx;
    top * (1.0 - ty) + bottom * ty
}
