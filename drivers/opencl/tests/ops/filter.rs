//! Dense, separable, box, Gaussian and Sobel filters against `mvision_core::filter`.

use mvision_core::filter::{
    self, filter2d_scratch_len, separable_scratch_len, Kernel2dF32, Kernel2dQ, SepKernelF32,
    SepKernelQ,
};
use mvision_opencl::Variant;

use crate::common::*;
use crate::ctx_or_skip;

const VARIANTS: [Variant; 4] = [
    Variant::Naive,
    Variant::Tiled { w: 16, h: 16 },
    Variant::Tiled { w: 8, h: 4 },
    Variant::Tiled { w: 32, h: 8 },
];

/// Kernel sizes per image size: every size on small images, the extremes on the VGA frame.
fn ksizes(w: usize) -> &'static [usize] {
    if w >= 640 {
        &[3, 15]
    } else {
        &[1, 3, 5, 15]
    }
}

/// A random fixed-point kernel: alternately a smoothing one (positive taps summing to about
/// `2^shift`) and a signed one that saturates at both ends.
fn random_kernel_q(rng: &mut Rng, k: usize, trial: usize) -> Kernel2dQ {
    let shift = [8u32, 14, 0, 4][trial % 4];
    let one = 1i64 << shift;
    let coeffs: Vec<i32> = (0..k * k)
        .map(|_| {
            if trial % 2 == 0 {
                rng.range(0, (2 * one / (k * k) as i64).max(1)) as i32
            } else {
                rng.range(-one, one) as i32
            }
        })
        .collect();
    Kernel2dQ::new(k, &coeffs, shift).unwrap()
}

#[test]
fn filter2d_u8_matches_cpu_bit_exactly() {
    let ctx = ctx_or_skip!("filter2d_u8_matches_cpu_bit_exactly");
    let mut rng = Rng::new(0x2d08);
    let mut trial = 0;
    for (w, h) in SIZES {
        let src = random_u8(&mut rng, w, h);
        let d_src = upload(ctx, &src);
        let mut d_dst = ctx.alloc::<u8>(w, h).unwrap();
        for &k in ksizes(w) {
            for border in borders_u8(&mut rng) {
                trial += 1;
                let kernel = random_kernel_q(&mut rng, k, trial);
                let mut want = zeros::<u8>(w, h);
                let mut scratch = vec![0; filter2d_scratch_len(w, k)];
                filter::filter2d_u8(
                    &src.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                for variant in VARIANTS {
                    ctx.filter2d_u8(&d_src, &mut d_dst, &kernel, border, variant)
                        .unwrap();
                    let what = format!("filter2d_u8 {w}x{h} k{k} {border:?} {variant:?}");
                    assert_exact(&download(ctx, &d_dst), &want.data, w, &what);
                }
            }
        }
    }
}

#[test]
fn filter2d_f32_matches_cpu() {
    let ctx = ctx_or_skip!("filter2d_f32_matches_cpu");
    let mut rng = Rng::new(0x2df3);
    for (w, h) in SIZES {
        let src = random_f32(&mut rng, w, h);
        let d_src = upload(ctx, &src);
        let mut d_dst = ctx.alloc::<f32>(w, h).unwrap();
        for &k in ksizes(w) {
            for border in borders_f32(&mut rng) {
                let coeffs: Vec<f32> = (0..k * k).map(|_| rng.f32(-1.0, 1.0)).collect();
                let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
                let mut want = zeros::<f32>(w, h);
                let mut scratch = vec![0.0; filter2d_scratch_len(w, k)];
                filter::filter2d_f32(
                    &src.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let scale = coeffs.iter().map(|c| c.abs()).sum::<f32>() * max_abs(&src, border);
                for variant in VARIANTS {
                    ctx.filter2d_f32(&d_src, &mut d_dst, &kernel, border, variant)
                        .unwrap();
                    let what = format!("filter2d_f32 {w}x{h} k{k} {border:?} {variant:?}");
                    assert_close(&download(ctx, &d_dst), &want.data, w, scale, &what);
                }
            }
        }
    }
}

/// Row and column vector lengths, including unequal ones.
const SEP_LENS: [(usize, usize); 5] = [(1, 1), (3, 3), (5, 1), (15, 3), (15, 15)];

#[test]
fn sep_filter_u8_matches_cpu_bit_exactly() {
    let ctx = ctx_or_skip!("sep_filter_u8_matches_cpu_bit_exactly");
    let mut rng = Rng::new(0x5e08);
    for (w, h) in SIZES {
        let src = random_u8(&mut rng, w, h);
        let d_src = upload(ctx, &src);
        let mut d_dst = ctx.alloc::<u8>(w, h).unwrap();
        for (i, (lx, ly)) in SEP_LENS.into_iter().enumerate() {
            for border in borders_u8(&mut rng) {
                let signed = i % 2 == 1;
                let mut tap = || {
                    if signed {
                        rng.range(-64, 64) as i32
                    } else {
                        rng.range(0, 24) as i32
                    }
                };
                let kx: Vec<i32> = (0..lx).map(|_| tap()).collect();
                let ky: Vec<i32> = (0..ly).map(|_| tap()).collect();
                let kernel = SepKernelQ::new(&kx, &ky, 10).unwrap();
                let mut want = zeros::<u8>(w, h);
                let mut scratch = vec![0; separable_scratch_len(w, lx, ly)];
                filter::sep_filter_u8(
                    &src.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                ctx.sep_filter_u8(&d_src, &mut d_dst, &kernel, border)
                    .unwrap();
                let what = format!("sep_filter_u8 {w}x{h} {lx}x{ly} {border:?}");
                assert_exact(&download(ctx, &d_dst), &want.data, w, &what);
            }
        }
    }
}

#[test]
fn sep_filter_f32_matches_cpu() {
    let ctx = ctx_or_skip!("sep_filter_f32_matches_cpu");
    let mut rng = Rng::new(0x5ef3);
    for (w, h) in SIZES {
        let src = random_f32(&mut rng, w, h);
        let d_src = upload(ctx, &src);
        let mut d_dst = ctx.alloc::<f32>(w, h).unwrap();
        for (lx, ly) in SEP_LENS {
            for border in borders_f32(&mut rng) {
                let kx: Vec<f32> = (0..lx).map(|_| rng.f32(-1.0, 1.0)).collect();
                let ky: Vec<f32> = (0..ly).map(|_| rng.f32(-1.0, 1.0)).collect();
                let kernel = SepKernelF32::new(&kx, &ky).unwrap();
                let mut want = zeros::<f32>(w, h);
                let mut scratch = vec![0.0; separable_scratch_len(w, lx, ly)];
                filter::sep_filter_f32(
                    &src.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                ctx.sep_filter_f32(&d_src, &mut d_dst, &kernel, border)
                    .unwrap();
                let gain: f32 = kx.iter().map(|c| c.abs()).sum::<f32>()
                    * ky.iter().map(|c| c.abs()).sum::<f32>();
                let what = format!("sep_filter_f32 {w}x{h} {lx}x{ly} {border:?}");
                let scale = gain * max_abs(&src, border);
                assert_close(&download(ctx, &d_dst), &want.data, w, scale, &what);
            }
        }
    }
}

#[test]
fn box_blur_matches_cpu() {
    let ctx = ctx_or_skip!("box_blur_matches_cpu");
    let mut rng = Rng::new(0xb0c5);
    for (w, h) in SIZES {
        let src8 = random_u8(&mut rng, w, h);
        let src32 = random_f32(&mut rng, w, h);
        let (d8, d32) = (upload(ctx, &src8), upload(ctx, &src32));
        let mut o8 = ctx.alloc::<u8>(w, h).unwrap();
        let mut o32 = ctx.alloc::<f32>(w, h).unwrap();
        for k in [1, 3, 7, 15] {
            for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
                let mut want8 = zeros::<u8>(w, h);
                let mut scratch = vec![0; separable_scratch_len(w, k, k)];
                filter::box_blur_u8(&src8.view(), &mut want8.view_mut(), k, b8, &mut scratch)
                    .unwrap();
                ctx.box_blur_u8(&d8, &mut o8, k, b8).unwrap();
                let what = format!("box_blur_u8 {w}x{h} k{k} {b8:?}");
                assert_exact(&download(ctx, &o8), &want8.data, w, &what);

                let mut want32 = zeros::<f32>(w, h);
                let mut scratch = vec![0.0; separable_scratch_len(w, k, k)];
                filter::box_blur_f32(&src32.view(), &mut want32.view_mut(), k, b32, &mut scratch)
                    .unwrap();
                ctx.box_blur_f32(&d32, &mut o32, k, b32).unwrap();
                let what = format!("box_blur_f32 {w}x{h} k{k} {b32:?}");
                assert_close(
                    &download(ctx, &o32),
                    &want32.data,
                    w,
                    max_abs(&src32, b32),
                    &what,
                );
            }
        }
    }
}

#[test]
fn gaussian_blur_matches_cpu() {
    let ctx = ctx_or_skip!("gaussian_blur_matches_cpu");
    let mut rng = Rng::new(0x6a55);
    for (w, h) in SIZES {
        let src8 = random_u8(&mut rng, w, h);
        let src32 = random_f32(&mut rng, w, h);
        let (d8, d32) = (upload(ctx, &src8), upload(ctx, &src32));
        let mut o8 = ctx.alloc::<u8>(w, h).unwrap();
        let mut o32 = ctx.alloc::<f32>(w, h).unwrap();
        for (k, sigma) in [(0, 1.0f32), (5, 0.0), (15, 2.3), (3, 0.8)] {
            for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
                let mut want8 = zeros::<u8>(w, h);
                let mut scratch = vec![0; separable_scratch_len(w, 15, 15)];
                filter::gaussian_blur_u8(
                    &src8.view(),
                    &mut want8.view_mut(),
                    k,
                    sigma,
                    b8,
                    &mut scratch,
                )
                .unwrap();
                ctx.gaussian_blur_u8(&d8, &mut o8, k, sigma, b8).unwrap();
                let what = format!("gaussian_blur_u8 {w}x{h} k{k} s{sigma} {b8:?}");
                assert_exact(&download(ctx, &o8), &want8.data, w, &what);

                let mut want32 = zeros::<f32>(w, h);
                let mut scratch = vec![0.0; separable_scratch_len(w, 15, 15)];
                filter::gaussian_blur_f32(
                    &src32.view(),
                    &mut want32.view_mut(),
                    k,
                    sigma,
                    b32,
                    &mut scratch,
                )
                .unwrap();
                ctx.gaussian_blur_f32(&d32, &mut o32, k, sigma, b32)
                    .unwrap();
                let what = format!("gaussian_blur_f32 {w}x{h} k{k} s{sigma} {b32:?}");
                assert_close(
                    &download(ctx, &o32),
                    &want32.data,
                    w,
                    max_abs(&src32, b32),
                    &what,
                );
            }
        }
    }
}

#[test]
fn sobel_matches_cpu() {
    let ctx = ctx_or_skip!("sobel_matches_cpu");
    let mut rng = Rng::new(0x50be);
    for (w, h) in SIZES {
        let src8 = random_u8(&mut rng, w, h);
        let src32 = random_f32(&mut rng, w, h);
        let (d8, d32) = (upload(ctx, &src8), upload(ctx, &src32));
        let (mut dx8, mut dy8) = (
            ctx.alloc::<i16>(w, h).unwrap(),
            ctx.alloc::<i16>(w, h).unwrap(),
        );
        let (mut dx32, mut dy32) = (
            ctx.alloc::<f32>(w, h).unwrap(),
            ctx.alloc::<f32>(w, h).unwrap(),
        );
        for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let (mut wx, mut wy) = (zeros::<i16>(w, h), zeros::<i16>(w, h));
            let mut scratch = vec![0; separable_scratch_len(w, 3, 3)];
            filter::sobel_u8(
                &src8.view(),
                &mut wx.view_mut(),
                &mut wy.view_mut(),
                b8,
                &mut scratch,
            )
            .unwrap();
            ctx.sobel_u8(&d8, &mut dx8, &mut dy8, b8).unwrap();
            assert_exact(
                &download(ctx, &dx8),
                &wx.data,
                w,
                &format!("sobel_u8 dx {w}x{h} {b8:?}"),
            );
            assert_exact(
                &download(ctx, &dy8),
                &wy.data,
                w,
                &format!("sobel_u8 dy {w}x{h} {b8:?}"),
            );

            let (mut fx, mut fy) = (zeros::<f32>(w, h), zeros::<f32>(w, h));
            let mut scratch = vec![0.0; separable_scratch_len(w, 3, 3)];
            filter::sobel_f32(
                &src32.view(),
                &mut fx.view_mut(),
                &mut fy.view_mut(),
                b32,
                &mut scratch,
            )
            .unwrap();
            ctx.sobel_f32(&d32, &mut dx32, &mut dy32, b32).unwrap();
            let scale = 8.0 * max_abs(&src32, b32);
            let what = format!("sobel_f32 {w}x{h} {b32:?}");
            assert_close(
                &download(ctx, &dx32),
                &fx.data,
                w,
                scale,
                &format!("{what} dx"),
            );
            assert_close(
                &download(ctx, &dy32),
                &fy.data,
                w,
                scale,
                &format!("{what} dy"),
            );
        }
    }
}
