//! Every filter gives bit-identical results at every instruction-set level this CPU has
//! (`cpu::Level` up to `cpu::detected()`), compared with `Level::Baseline`: dense, separable,
//! Gaussian, box, Sobel, pyramid and the integral images, `u8` and `f32`, at sizes around the
//! vector widths (1×1 included), with odd strides and every border mode.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

use mvision_core::border::Border;
use mvision_core::cpu::{self, Level};
use mvision_core::filter::{self, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::integral::integral_u8;
use mvision_core::pyramid::{pyr_down_f32, pyr_down_size, pyr_down_u8};

const SIZES: [(usize, usize); 11] = [
    (1, 1),
    (2, 3),
    (7, 5),
    (8, 9),
    (15, 4),
    (16, 16),
    (17, 7),
    (33, 11),
    (64, 3),
    (131, 29),
    // Wide enough for whole 128-pixel blocks (AVX-512 f32 rows of long kernels) and a tail.
    (300, 19),
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 32) as u32
    }
    fn f32(&mut self) -> f32 {
        // Some exact zeros and negative zeros, the rest in [-2, 2).
        match self.next() % 16 {
            0 => 0.0,
            1 => -0.0,
            _ => (self.next() % 4096) as f32 / 1024.0 - 2.0,
        }
    }
    /// A kernel of `n` taps summing to about 1 (some negative).
    fn kernel(&mut self, n: usize) -> Vec<f32> {
        let raw: Vec<f32> = (0..n).map(|_| (self.next() % 200) as f32 - 60.0).collect();
        let sum: f32 = raw.iter().sum::<f32>().abs().max(1.0);
        raw.iter().map(|v| v / sum).collect()
    }
}

fn borders<T: Copy>(c: T) -> [Border<T>; 3] {
    [Border::Reflect101, Border::Replicate, Border::Constant(c)]
}

/// An image buffer with an odd stride (`w + 3`), padding filled with a marker.
fn buffer<T: Copy>(w: usize, h: usize, fill: T) -> (Vec<T>, usize) {
    let stride = w + 3;
    (vec![fill; stride * (h - 1) + w], stride)
}

fn bytes_u8(v: &[u8]) -> Vec<u8> {
    v.to_vec()
}
fn bytes_i16(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
}

/// Runs every case; returns `(case name, output bytes)`.
fn run_all() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for &(w, h) in &SIZES {
        let (mut src8, stride) = buffer(w, h, 0u8);
        src8.iter_mut().for_each(|p| *p = rng.next() as u8);
        let (mut srcf, _) = buffer(w, h, 0.0f32);
        srcf.iter_mut().for_each(|p| *p = rng.f32());
        let s8 = ImageView::new(&src8, w, h, stride).unwrap();
        let sf = ImageView::new(&srcf, w, h, stride).unwrap();
        let scratch_len =
            filter::separable_scratch_len(w, 15, 15).max(filter::filter2d_scratch_len(w, 15));
        let mut si = vec![0i32; scratch_len];
        let mut sfl = vec![0f32; scratch_len];

        let mut run_u8 =
            |name: String, f: &mut dyn FnMut(&mut ImageViewMut<'_, u8>, &mut [i32])| {
                let (mut d, st) = buffer(w, h, 0xA5u8);
                let mut dv = ImageViewMut::new(&mut d, w, h, st).unwrap();
                f(&mut dv, &mut si);
                (format!("{name} {w}x{h}"), bytes_u8(&d))
            };
        for (bi, b) in borders(77u8).into_iter().enumerate() {
            for k in [1usize, 3, 5, 7, 9, 15] {
                let kern = Kernel2dQ::from_f32_auto(k, &rng.kernel(k * k)).unwrap();
                out.push(run_u8(format!("filter2d_u8 k{k} b{bi}"), &mut |d, s| {
                    filter::filter2d_u8(&s8, d, &kern, b, s).unwrap()
                }));
                // Large coefficients (gain above 2): the generic path.
                let big: Vec<f32> = rng.kernel(k * k).iter().map(|v| v * 3.0).collect();
                if let Ok(kern) = Kernel2dQ::from_f32_auto(k, &big) {
                    out.push(run_u8(
                        format!("filter2d_u8 big k{k} b{bi}"),
                        &mut |d, s| filter::filter2d_u8(&s8, d, &kern, b, s).unwrap(),
                    ));
                }
            }
            for (kx, ky) in [(1usize, 3usize), (3, 3), (5, 3), (7, 7), (9, 5), (15, 15)] {
                let kern = SepKernelQ::from_f32_auto(&rng.kernel(kx), &rng.kernel(ky)).unwrap();
                out.push(run_u8(format!("sep_u8 {kx}x{ky} b{bi}"), &mut |d, s| {
                    filter::sep_filter_u8(&s8, d, &kern, b, s).unwrap()
                }));
            }
            for k in [1usize, 3, 5, 7, 9, 15] {
                for sigma in [0.0f32, 1.3] {
                    out.push(run_u8(
                        format!("gaussian_u8 k{k} s{sigma} b{bi}"),
                        &mut |d, s| filter::gaussian_blur_u8(&s8, d, k, sigma, b, s).unwrap(),
                    ));
                }
                out.push(run_u8(format!("box_u8 k{k} b{bi}"), &mut |d, s| {
                    filter::box_blur_u8(&s8, d, k, b, s).unwrap()
                }));
            }
            {
                let (mut dx, st) = buffer(w, h, 0x55i16);
                let (mut dy, _) = buffer(w, h, 0x55i16);
                let mut dxv = ImageViewMut::new(&mut dx, w, h, st).unwrap();
                let mut dyv = ImageViewMut::new(&mut dy, w, h, st).unwrap();
                filter::sobel_u8(&s8, &mut dxv, &mut dyv, b, &mut vec![0i32; scratch_len]).unwrap();
                out.push((format!("sobel_u8 dx b{bi} {w}x{h}"), bytes_i16(&dx)));
                out.push((format!("sobel_u8 dy b{bi} {w}x{h}"), bytes_i16(&dy)));
            }
            {
                let (pw, ph) = pyr_down_size(w, h);
                let mut d = vec![0xA5u8; pw * ph];
                let mut dv = ImageViewMut::packed(&mut d, pw, ph).unwrap();
                let mut s = vec![0i32; filter::separable_scratch_len(w, 5, 5)];
                pyr_down_u8(&s8, &mut dv, b, &mut s).unwrap();
                out.push((format!("pyr_down_u8 b{bi} {w}x{h}"), d));
            }
        }

        let mut run_f32 =
            |name: String, f: &mut dyn FnMut(&mut ImageViewMut<'_, f32>, &mut [f32])| {
                let (mut d, st) = buffer(w, h, 1234.5f32);
                let mut dv = ImageViewMut::new(&mut d, w, h, st).unwrap();
                f(&mut dv, &mut sfl);
                (format!("{name} {w}x{h}"), bytes_f32(&d))
            };
        for (bi, b) in borders(0.25f32).into_iter().enumerate() {
            for k in [1usize, 3, 5, 7, 9, 15] {
                let kern = Kernel2dF32::new(k, &rng.kernel(k * k)).unwrap();
                out.push(run_f32(format!("filter2d_f32 k{k} b{bi}"), &mut |d, s| {
                    filter::filter2d_f32(&sf, d, &kern, b, s).unwrap()
                }));
            }
            for (kx, ky) in [(1usize, 3usize), (3, 3), (5, 3), (7, 7), (9, 5), (15, 15)] {
                let kern = SepKernelF32::new(&rng.kernel(kx), &rng.kernel(ky)).unwrap();
                out.push(run_f32(format!("sep_f32 {kx}x{ky} b{bi}"), &mut |d, s| {
                    filter::sep_filter_f32(&sf, d, &kern, b, s).unwrap()
                }));
            }
            for k in [1usize, 3, 5, 7, 9, 15] {
                for sigma in [0.0f32, 1.3] {
                    out.push(run_f32(
                        format!("gaussian_f32 k{k} s{sigma} b{bi}"),
                        &mut |d, s| filter::gaussian_blur_f32(&sf, d, k, sigma, b, s).unwrap(),
                    ));
                }
                out.push(run_f32(format!("box_f32 k{k} b{bi}"), &mut |d, s| {
                    filter::box_blur_f32(&sf, d, k, b, s).unwrap()
                }));
            }
            {
                let (mut dx, st) = buffer(w, h, 0.5f32);
                let (mut dy, _) = buffer(w, h, 0.5f32);
                let mut dxv = ImageViewMut::new(&mut dx, w, h, st).unwrap();
                let mut dyv = ImageViewMut::new(&mut dy, w, h, st).unwrap();
                filter::sobel_f32(&sf, &mut dxv, &mut dyv, b, &mut vec![0f32; scratch_len])
                    .unwrap();
                out.push((format!("sobel_f32 dx b{bi} {w}x{h}"), bytes_f32(&dx)));
                out.push((format!("sobel_f32 dy b{bi} {w}x{h}"), bytes_f32(&dy)));
            }
            {
                let (pw, ph) = pyr_down_size(w, h);
                let mut d = vec![7.0f32; pw * ph];
                let mut dv = ImageViewMut::packed(&mut d, pw, ph).unwrap();
                let mut s = vec![0f32; filter::separable_scratch_len(w, 5, 5)];
                pyr_down_f32(&sf, &mut dv, b, &mut s).unwrap();
                out.push((format!("pyr_down_f32 b{bi} {w}x{h}"), bytes_f32(&d)));
            }
        }

        {
            let (tw, th) = (w + 1, h + 1);
            let tstride = tw + 5;
            let mut sum = vec![0xDEADu32; tstride * (th - 1) + tw];
            let mut sq = vec![0xDEADu64; tstride * (th - 1) + tw];
            let mut sv = ImageViewMut::new(&mut sum, tw, th, tstride).unwrap();
            let mut qv = ImageViewMut::new(&mut sq, tw, th, tstride).unwrap();
            integral_u8(&s8, &mut sv, Some(&mut qv)).unwrap();
            let mut only = vec![0xDEADu32; tstride * (th - 1) + tw];
            let mut ov = ImageViewMut::new(&mut only, tw, th, tstride).unwrap();
            integral_u8(&s8, &mut ov, None).unwrap();
            assert_eq!(sum, only);
            let b: Vec<u8> = sum
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .chain(sq.iter().flat_map(|x| x.to_le_bytes()))
                .collect();
            out.push((format!("integral_u8 {w}x{h}"), b));
        }
    }
    out
}

#[test]
fn every_level_gives_the_baseline_results() {
    cpu::set_cap(Level::Baseline);
    let want = run_all();
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l > Level::Baseline && l <= cpu::detected())
        .collect();
    if levels.is_empty() {
        eprintln!(
            "cpu_levels: only the baseline level exists here ({}); nothing to compare",
            cpu::detected().name()
        );
    }
    for level in levels {
        cpu::set_cap(level);
        assert_eq!(cpu::active(), level);
        let got = run_all();
        assert_eq!(got.len(), want.len());
        for ((name, g), (_, w)) in got.iter().zip(&want) {
            assert!(g == w, "{name}: {} differs from baseline", level.name());
        }
        eprintln!(
            "cpu_levels: {} matches baseline on {} cases",
            level.name(),
            got.len()
        );
    }
    cpu::set_cap(Level::X86V4);
}
