//! Dense (every variant), separable, box, Gaussian and Sobel filters against
//! `mvision_core::filter`.

use mvision_core::filter::{
    self as f, filter2d_scratch_len, separable_scratch_len, Kernel2dF32, Kernel2dQ, SepKernelF32,
    SepKernelQ, MAX_KERNEL_SIZE,
};
use mvision_core::Border;
use mvision_kernels::testing::{borders_f32, borders_u8, max_abs, random_f32, random_u8, Rng};
use mvision_kernels::{FilterTuning, FmaMode};
use mvision_runtime::{ops, Backend, Variant};

use crate::{
    alloc, assert_close, assert_exact, contexts, download, reference, run_everywhere, run_where,
    upload, zeros, HostImage, SIZES, VARIANTS,
};

/// The `f32` filter rule: with fused multiply-adds (`MVISION_FILTER_FMA=on`, the default)
/// every backend is within the contract's tolerance of the CPU; without them
/// (`MVISION_FILTER_FMA=off`, a CI step) every backend equals the CPU bit for bit.
#[track_caller]
fn assert_f32(got: &[(Backend, Vec<f32>)], want: &HostImage<f32>, scale: f32, what: &str) {
    match FilterTuning::get().fma {
        FmaMode::On => assert_close(got, want, scale, what),
        FmaMode::Off => assert_exact(got, want, &format!("{what} (MVISION_FILTER_FMA=off)")),
    }
}

/// Kernel sizes per image: every odd size on small images, the extremes and a few between on
/// the VGA frame (the CPU reference is the slow part).
fn ksizes(w: usize) -> Vec<usize> {
    if w >= 640 {
        vec![1, 3, 7, 15]
    } else {
        (1..=MAX_KERNEL_SIZE).step_by(2).collect()
    }
}

/// A random fixed-point kernel, by turns a smoothing one (positive taps summing to about
/// `2^shift`) and a signed one that saturates at both ends, with shifts 0 to 14.
fn random_kernel_q(rng: &mut Rng, k: usize, trial: usize) -> Kernel2dQ {
    let shift = [8u32, 14, 0, 4, 2][trial % 5];
    let one = 1i64 << shift;
    let coeffs: Vec<i32> = (0..k * k)
        .map(|_| {
            if trial.is_multiple_of(2) {
                rng.range(0, (2 * one / (k * k) as i64).max(1)) as i32
            } else {
                rng.range(-one.max(64), one.max(64)) as i32
            }
        })
        .collect();
    Kernel2dQ::new(k, &coeffs, shift).unwrap()
}

/// The CPU runs every variant the same way: it runs the first one only.
fn runs_variant(b: Backend, v: usize) -> bool {
    b != Backend::Cpu || v == 0
}

#[test]
fn filter2d_u8_matches_the_cpu_bit_exactly_in_every_variant() {
    let mut rng = Rng::new(0x2d08);
    let mut trial = 0;
    for (w, h) in SIZES {
        let src = random_u8(&mut rng, w, h);
        for k in ksizes(w) {
            for border in borders_u8(&mut rng) {
                trial += 1;
                let kernel = random_kernel_q(&mut rng, k, trial);
                let want = reference(&src, (w, h), |a, b| {
                    f::filter2d_u8(
                        a,
                        b,
                        &kernel,
                        border,
                        &mut vec![0; filter2d_scratch_len(w, k)],
                    )
                });
                for (i, v) in VARIANTS.into_iter().enumerate() {
                    let got = run_where(
                        |b| runs_variant(b, i),
                        &src,
                        (w, h),
                        |a, o| ops::filter2d_u8(a, o, &kernel, border, v),
                    );
                    let what = format!("filter2d_u8 {w}x{h} k{k} {border:?} {v:?}");
                    assert_exact(&got, &want, &what);
                }
            }
        }
    }
}

/// A random dense `f32` kernel of `k × k` taps in [−1, 1], the CPU's image of `src` under it
/// with `border`, and the `scale` of [`assert_f32`]'s tolerance.
fn dense_f32_case(
    rng: &mut Rng,
    src: &HostImage<f32>,
    (w, h): (usize, usize),
    k: usize,
    border: Border<f32>,
) -> (Kernel2dF32, HostImage<f32>, f32) {
    let coeffs: Vec<f32> = (0..k * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
    let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
    let want = reference(src, (w, h), |a, b| {
        let mut scratch = vec![0.0; filter2d_scratch_len(w, k)];
        f::filter2d_f32(a, b, &kernel, border, &mut scratch)
    });
    let scale = coeffs.iter().map(|c| c.abs()).sum::<f32>() * max_abs(src, border);
    (kernel, want, scale)
}

#[test]
fn filter2d_f32_matches_the_cpu_in_every_variant() {
    let mut rng = Rng::new(0x2df3);
    for (w, h) in SIZES {
        let src = random_f32(&mut rng, w, h);
        for k in ksizes(w) {
            for border in borders_f32(&mut rng) {
                let (kernel, want, scale) = dense_f32_case(&mut rng, &src, (w, h), k, border);
                for (i, v) in VARIANTS.into_iter().enumerate() {
                    let got = run_where(
                        |b| runs_variant(b, i),
                        &src,
                        (w, h),
                        |a, o| ops::filter2d_f32(a, o, &kernel, border, v),
                    );
                    let what = format!("filter2d_f32 {w}x{h} k{k} {border:?} {v:?}");
                    assert_f32(&got, &want, scale, &what);
                }
            }
        }
    }
}

/// Dense `f32` filters on an image of at least `DENSE_COLS_WIDE_MIN_PIXELS`, where the GPUs run
/// the column tile in wider work-groups (`DENSE_COLS_WIDE_TILE`), against the CPU; an odd
/// width, so rows do not start 16-byte aligned and the border tiles map pixel by pixel too.
#[test]
fn filter2d_f32_on_a_large_image_matches_the_cpu() {
    let mut rng = Rng::new(0x2d4b);
    let (w, h) = (2055, 2042);
    assert!(w * h >= mvision_kernels::DENSE_COLS_WIDE_MIN_PIXELS);
    let src = random_f32(&mut rng, w, h);
    let [replicate, _, constant] = borders_f32(&mut rng);
    for (k, border) in [(3, constant), (7, replicate), (7, Border::Reflect101)] {
        let (kernel, want, scale) = dense_f32_case(&mut rng, &src, (w, h), k, border);
        let got = run_everywhere(&src, (w, h), |a, o| {
            ops::filter2d_f32(a, o, &kernel, border, Variant::default())
        });
        assert_f32(
            &got,
            &want,
            scale,
            &format!("filter2d_f32 {w}x{h} k{k} {border:?}"),
        );
    }
}

/// Row and column vector lengths, equal and unequal.
const SEP_LENS: [(usize, usize); 9] = [
    (1, 1),
    (3, 3),
    (5, 1),
    (1, 5),
    (5, 3),
    (15, 3),
    (3, 15),
    (7, 11),
    (15, 15),
];

#[test]
fn sep_filter_u8_matches_the_cpu_bit_exactly() {
    let mut rng = Rng::new(0x5e08);
    for (w, h) in SIZES {
        let src = random_u8(&mut rng, w, h);
        for (i, (lx, ly)) in SEP_LENS.into_iter().enumerate() {
            for border in borders_u8(&mut rng) {
                // By turns non-negative taps and signed ones that saturate; shifts 0 to 10.
                let (lo, hi) = if i % 2 == 1 { (-64, 64) } else { (0, 24) };
                let kx: Vec<i32> = (0..lx).map(|_| rng.range(lo, hi) as i32).collect();
                let ky: Vec<i32> = (0..ly).map(|_| rng.range(lo, hi) as i32).collect();
                let kernel = SepKernelQ::new(&kx, &ky, rng.below(11) as u32).unwrap();
                let want = reference(&src, (w, h), |a, b| {
                    let mut scratch = vec![0; separable_scratch_len(w, lx, ly)];
                    f::sep_filter_u8(a, b, &kernel, border, &mut scratch)
                });
                let got = run_everywhere(&src, (w, h), |a, o| {
                    ops::sep_filter_u8(a, o, &kernel, border)
                });
                let what = format!("sep_filter_u8 {w}x{h} {lx}x{ly} {border:?}");
                assert_exact(&got, &want, &what);
            }
        }
    }
}

/// The `u8` column tiles (`mv_sep_filter_u8_cols`, summing in `f32`, and, where the device has
/// dp2a, `mv_sep_filter_u8_cols_dp`), which the plans run only while every sum stays an integer
/// below 2²⁴: taps at that bound (255 · 273 · 241 = 2²⁴ − 1), signed
/// so that a checkerboard of 0 and 255 reaches it at every inside pixel, and random images,
/// under every border, bit-exact on every backend.
#[test]
fn sep_filter_u8_is_exact_at_the_f32_bound() {
    let mut rng = Rng::new(0xb0d);
    let (kx, ky) = ([91, -91, 91], [81, -79, 81]);
    for (w, h) in [(67, 45), (640, 480)] {
        let mut i = 0usize;
        let board = HostImage::new(w, h, w + 4, 7u8, || {
            let (x, y) = (i % w, i / w);
            i += 1;
            if (x + y) % 2 == 0 {
                255
            } else {
                0
            }
        });
        for src in [board, random_u8(&mut rng, w, h)] {
            for (shift, border) in [16, 24, 0].into_iter().zip(borders_u8(&mut rng)) {
                let kernel = SepKernelQ::new(&kx, &ky, shift).unwrap();
                let want = reference(&src, (w, h), |a, b| {
                    let mut scratch = vec![0; separable_scratch_len(w, 3, 3)];
                    f::sep_filter_u8(a, b, &kernel, border, &mut scratch)
                });
                let got = run_everywhere(&src, (w, h), |a, o| {
                    ops::sep_filter_u8(a, o, &kernel, border)
                });
                assert_exact(
                    &got,
                    &want,
                    &format!("bound {w}x{h} shift {shift} {border:?}"),
                );
            }
        }
    }
}

#[test]
fn sep_filter_f32_matches_the_cpu() {
    let mut rng = Rng::new(0x5ef3);
    for (w, h) in SIZES {
        let src = random_f32(&mut rng, w, h);
        for (lx, ly) in SEP_LENS {
            for border in borders_f32(&mut rng) {
                let kx: Vec<f32> = (0..lx).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let ky: Vec<f32> = (0..ly).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let kernel = SepKernelF32::new(&kx, &ky).unwrap();
                let want = reference(&src, (w, h), |a, b| {
                    let mut scratch = vec![0.0; separable_scratch_len(w, lx, ly)];
                    f::sep_filter_f32(a, b, &kernel, border, &mut scratch)
                });
                let got = run_everywhere(&src, (w, h), |a, o| {
                    ops::sep_filter_f32(a, o, &kernel, border)
                });
                let gain: f32 = kx.iter().map(|c| c.abs()).sum::<f32>()
                    * ky.iter().map(|c| c.abs()).sum::<f32>();
                let what = format!("sep_filter_f32 {w}x{h} {lx}x{ly} {border:?}");
                assert_f32(&got, &want, gain * max_abs(&src, border), &what);
            }
        }
    }
}

#[test]
fn box_blur_matches_the_cpu_for_every_size() {
    let mut rng = Rng::new(0xb0c5);
    for (w, h) in SIZES {
        let (src8, src32) = (random_u8(&mut rng, w, h), random_f32(&mut rng, w, h));
        for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
            let len = separable_scratch_len(w, k, k);
            for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
                let want = reference(&src8, (w, h), |a, b| {
                    f::box_blur_u8(a, b, k, b8, &mut vec![0; len])
                });
                let got = run_everywhere(&src8, (w, h), |a, o| ops::box_blur_u8(a, o, k, b8));
                assert_exact(&got, &want, &format!("box_blur_u8 {w}x{h} k{k} {b8:?}"));

                let want = reference(&src32, (w, h), |a, b| {
                    f::box_blur_f32(a, b, k, b32, &mut vec![0.0; len])
                });
                let got = run_everywhere(&src32, (w, h), |a, o| ops::box_blur_f32(a, o, k, b32));
                let what = format!("box_blur_f32 {w}x{h} k{k} {b32:?}");
                assert_f32(&got, &want, max_abs(&src32, b32), &what);
            }
        }
    }
}

#[test]
fn gaussian_blur_matches_the_cpu() {
    let mut rng = Rng::new(0x6a55);
    // `ksize` 0: from sigma; sigma 0: from `ksize`; both given.
    let params = [
        (3, 0.0f32),
        (0, 0.8),
        (0, 1.0),
        (0, 2.0),
        (0, 2.3),
        (5, 0.0),
        (7, 1.5),
        (15, 0.0),
        (15, 2.3),
        (3, 0.8),
    ];
    for (w, h) in SIZES {
        let (src8, src32) = (random_u8(&mut rng, w, h), random_f32(&mut rng, w, h));
        let len = separable_scratch_len(w, MAX_KERNEL_SIZE, MAX_KERNEL_SIZE);
        for (k, s) in params {
            for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
                let want = reference(&src8, (w, h), |a, b| {
                    f::gaussian_blur_u8(a, b, k, s, b8, &mut vec![0; len])
                });
                let got =
                    run_everywhere(&src8, (w, h), |a, o| ops::gaussian_blur_u8(a, o, k, s, b8));
                let what = format!("gaussian_blur_u8 {w}x{h} k{k} s{s} {b8:?}");
                assert_exact(&got, &want, &what);

                let want = reference(&src32, (w, h), |a, b| {
                    f::gaussian_blur_f32(a, b, k, s, b32, &mut vec![0.0; len])
                });
                let got = run_everywhere(&src32, (w, h), |a, o| {
                    ops::gaussian_blur_f32(a, o, k, s, b32)
                });
                let what = format!("gaussian_blur_f32 {w}x{h} k{k} s{s} {b32:?}");
                assert_f32(&got, &want, max_abs(&src32, b32), &what);
            }
        }
    }
}

#[test]
fn sobel_matches_the_cpu() {
    let mut rng = Rng::new(0x50be);
    for (w, h) in SIZES {
        let (src8, src32) = (random_u8(&mut rng, w, h), random_f32(&mut rng, w, h));
        let len = separable_scratch_len(w, 3, 3);
        for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let (mut wx, mut wy) = (zeros::<i16>((w, h)), zeros::<i16>((w, h)));
            let (v8, mut vx, mut vy) = (src8.view(), wx.view_mut(), wy.view_mut());
            f::sobel_u8(&v8, &mut vx, &mut vy, b8, &mut vec![0; len]).unwrap();
            let (mut fx, mut fy) = (zeros::<f32>((w, h)), zeros::<f32>((w, h)));
            let (v32, mut vx, mut vy) = (src32.view(), fx.view_mut(), fy.view_mut());
            f::sobel_f32(&v32, &mut vx, &mut vy, b32, &mut vec![0.0; len]).unwrap();
            // Σ|taps| of a Sobel kernel is 8.
            let scale = 8.0 * max_abs(&src32, b32);
            for (b, ctx) in contexts() {
                let a = upload(ctx, *b, &src8);
                let (mut gx, mut gy) = (alloc::<i16>(ctx, *b, (w, h)), alloc(ctx, *b, (w, h)));
                ops::sobel_u8(&a, &mut gx, &mut gy, b8).unwrap();
                let what = format!("sobel_u8 {w}x{h} {b8:?}");
                assert_exact(&[(*b, download(*b, &gx))], &wx, &format!("{what} dx"));
                assert_exact(&[(*b, download(*b, &gy))], &wy, &format!("{what} dy"));

                let a = upload(ctx, *b, &src32);
                let (mut gx, mut gy) = (alloc::<f32>(ctx, *b, (w, h)), alloc(ctx, *b, (w, h)));
                ops::sobel_f32(&a, &mut gx, &mut gy, b32).unwrap();
                let what = format!("sobel_f32 {w}x{h} {b32:?}");
                assert_f32(
                    &[(*b, download(*b, &gx))],
                    &fx,
                    scale,
                    &format!("{what} dx"),
                );
                assert_f32(
                    &[(*b, download(*b, &gy))],
                    &fy,
                    scale,
                    &format!("{what} dy"),
                );
            }
        }
    }
}

/// Sizes for the streaming kernels (separable 3, 5, 7 taps; dense 3; CI also runs this file with
/// `MVISION_FILTER_STREAM=on`, without which separable filters stream on large images only):
/// rows a multiple of 4 pixels, so that
/// inside work-items take the aligned-load path, with work-items cut by the right edge (width
/// not a multiple of 4 nor of 8), bottom strips of every height, and images just tall enough for
/// one inside strip.
const STREAM_SIZES: [(usize, usize); 5] = [(100, 70), (36, 40), (64, 33), (13, 22), (44, 23)];

#[test]
fn streaming_filters_match_the_cpu_inside_and_at_every_edge() {
    let mut rng = Rng::new(0x57e4);
    let mut trial = 0;
    for (w, h) in STREAM_SIZES {
        let (src8, src32) = (random_u8(&mut rng, w, h), random_f32(&mut rng, w, h));
        for k in [3, 5, 7] {
            for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
                trial += 1;
                let kernel = random_kernel_q(&mut rng, k, trial);
                let want = reference(&src8, (w, h), |a, b| {
                    f::filter2d_u8(a, b, &kernel, b8, &mut vec![0; filter2d_scratch_len(w, k)])
                });
                let got = run_everywhere(&src8, (w, h), |a, o| {
                    ops::filter2d_u8(a, o, &kernel, b8, VARIANTS[1])
                });
                assert_exact(&got, &want, &format!("filter2d_u8 {w}x{h} k{k} {b8:?}"));

                let coeffs: Vec<f32> = (0..k * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let dense = Kernel2dF32::new(k, &coeffs).unwrap();
                let want = reference(&src32, (w, h), |a, b| {
                    let mut scratch = vec![0.0; filter2d_scratch_len(w, k)];
                    f::filter2d_f32(a, b, &dense, b32, &mut scratch)
                });
                let got = run_everywhere(&src32, (w, h), |a, o| {
                    ops::filter2d_f32(a, o, &dense, b32, VARIANTS[1])
                });
                let scale = coeffs.iter().map(|c| c.abs()).sum::<f32>() * max_abs(&src32, b32);
                assert_f32(
                    &got,
                    &want,
                    scale,
                    &format!("filter2d_f32 {w}x{h} k{k} {b32:?}"),
                );

                let len = separable_scratch_len(w, k, k);
                let kx: Vec<i32> = (0..k).map(|_| rng.range(-64, 64) as i32).collect();
                let ky: Vec<i32> = (0..k).map(|_| rng.range(0, 24) as i32).collect();
                let sep = SepKernelQ::new(&kx, &ky, rng.below(11) as u32).unwrap();
                let want = reference(&src8, (w, h), |a, b| {
                    f::sep_filter_u8(a, b, &sep, b8, &mut vec![0; len])
                });
                let got = run_everywhere(&src8, (w, h), |a, o| ops::sep_filter_u8(a, o, &sep, b8));
                assert_exact(&got, &want, &format!("sep_filter_u8 {w}x{h} k{k} {b8:?}"));

                let want = reference(&src8, (w, h), |a, b| {
                    f::box_blur_u8(a, b, k, b8, &mut vec![0; len])
                });
                let got = run_everywhere(&src8, (w, h), |a, o| ops::box_blur_u8(a, o, k, b8));
                assert_exact(&got, &want, &format!("box_blur_u8 {w}x{h} k{k} {b8:?}"));

                let kx: Vec<f32> = (0..k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let ky: Vec<f32> = (0..k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let sep = SepKernelF32::new(&kx, &ky).unwrap();
                let want = reference(&src32, (w, h), |a, b| {
                    f::sep_filter_f32(a, b, &sep, b32, &mut vec![0.0; len])
                });
                let got =
                    run_everywhere(&src32, (w, h), |a, o| ops::sep_filter_f32(a, o, &sep, b32));
                let gain: f32 = kx.iter().map(|c| c.abs()).sum::<f32>()
                    * ky.iter().map(|c| c.abs()).sum::<f32>();
                let what = format!("sep_filter_f32 {w}x{h} k{k} {b32:?}");
                assert_f32(&got, &want, gain * max_abs(&src32, b32), &what);

                let want = reference(&src32, (w, h), |a, b| {
                    f::box_blur_f32(a, b, k, b32, &mut vec![0.0; len])
                });
                let got = run_everywhere(&src32, (w, h), |a, o| ops::box_blur_f32(a, o, k, b32));
                let what = format!("box_blur_f32 {w}x{h} k{k} {b32:?}");
                assert_f32(&got, &want, max_abs(&src32, b32), &what);
            }
        }
    }
}

/// Sizes for the matrix-unit filter (work-groups of 64 columns by 16 k rows): rows of 16-byte
/// multiples with work-groups wholly inside (208 × 150), rows that are not (211 × 97), and an
/// image smaller than one work-group (40 × 21).
const MMA_SIZES: [(usize, usize); 3] = [(208, 150), (211, 97), (40, 21)];

/// The filters of 3, 5 and 7 taps a side with coefficients of one, two and three byte planes
/// (`mv_filter2d_u8_mma` splits them so). CUDA and NVIDIA's OpenCL (sm_80 and later) run that
/// kernel by default only on large images, so CI and the GPU runs take this file again with
/// `MVISION_FILTER_MMA=on`, which takes it at every size on every device (PoCL computes its
/// products from local memory).
#[test]
fn matrix_unit_filters_match_the_cpu_for_every_plane_count() {
    let mut rng = Rng::new(0x3a3a);
    // Coefficient ranges of one, two and three planes, with shifts that keep them valid.
    let planes = [(-128, 127, 7), (-30_000, 30_000, 14), (-80_000, 80_000, 20)];
    for (w, h) in MMA_SIZES {
        let src = random_u8(&mut rng, w, h);
        for k in [3, 5, 7] {
            let len = separable_scratch_len(w, k, k);
            for (p, (lo, hi, shift)) in planes.into_iter().enumerate() {
                for border in borders_u8(&mut rng) {
                    let coeffs: Vec<i32> = (0..k * k).map(|_| rng.range(lo, hi) as i32).collect();
                    let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
                    let want = reference(&src, (w, h), |a, b| {
                        let mut scratch = vec![0; filter2d_scratch_len(w, k)];
                        f::filter2d_u8(a, b, &kernel, border, &mut scratch)
                    });
                    let got = run_everywhere(&src, (w, h), |a, o| {
                        ops::filter2d_u8(a, o, &kernel, border, VARIANTS[1])
                    });
                    let what = format!("filter2d_u8 {w}x{h} k{k} {} planes {border:?}", p + 1);
                    assert_exact(&got, &want, &what);
                }
            }
            for border in borders_u8(&mut rng) {
                // Taps whose products take three planes (beyond 16 bits), within the kernel's
                // partial-sum bound at 7 × 7.
                let kx: Vec<i32> = (0..k).map(|_| rng.range(-300, 300) as i32).collect();
                let ky: Vec<i32> = (0..k).map(|_| rng.range(0, 300) as i32).collect();
                let sep = SepKernelQ::new(&kx, &ky, 16).unwrap();
                let want = reference(&src, (w, h), |a, b| {
                    f::sep_filter_u8(a, b, &sep, border, &mut vec![0; len])
                });
                let got =
                    run_everywhere(&src, (w, h), |a, o| ops::sep_filter_u8(a, o, &sep, border));
                assert_exact(
                    &got,
                    &want,
                    &format!("sep_filter_u8 {w}x{h} k{k} {border:?}"),
                );

                let want = reference(&src, (w, h), |a, b| {
                    f::box_blur_u8(a, b, k, border, &mut vec![0; len])
                });
                let got = run_everywhere(&src, (w, h), |a, o| ops::box_blur_u8(a, o, k, border));
                assert_exact(&got, &want, &format!("box_blur_u8 {w}x{h} k{k} {border:?}"));
            }
        }
    }
}
