use super::*;

#[test]
fn filter2d_u8_is_exact() {
    let mut rng = Rng::new(10);
    let shifts = [0, 1, 3, 7, 8, 12, 16, 20, 23, MAX_SHIFT];
    let mut n = 0;
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        for &(w, h) in SIZES {
            for border in borders_u8(&mut rng) {
                let shift = shifts[n % shifts.len()];
                n += 1;
                let coeffs = random_coeffs(&mut rng, k * k, shift, abs_budget(shift));
                let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
                let src = random_u8(&mut rng, w, h);
                let want = common::filter_u8(&src.plane(), k, k, &wide(&coeffs), shift, border);
                let mut dst = Img::<u8>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_i32(&mut rng, filter2d_scratch_len(w, k));
                filter2d_u8(
                    &src.view(),
                    &mut dst.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!(
                    "filter2d_u8 k={k} shift={shift} {w}x{h} strides {}/{} {border:?}",
                    src.stride, dst.stride
                );
                dst.assert_pixels_eq(&want, &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

/// Every pixel 255, every coefficient at the documented limit: the largest and the most
/// negative sums the accumulator can see must not wrap.
#[test]
fn filter2d_u8_worst_case_accumulator() {
    let mut rng = Rng::new(11);
    for shift in [0, 8, 16, MAX_SHIFT] {
        for k in [1usize, 3, 15] {
            let m = (abs_budget(shift) / (k * k) as i64) as i32;
            for sign in [1, -1] {
                let coeffs = vec![sign * m; k * k];
                let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
                let src = Img::from_fn(&mut rng, 20, 9, |_, _, _| 255u8);
                for border in [Border::Replicate, Border::Constant(255)] {
                    let want = common::filter_u8(&src.plane(), k, k, &wide(&coeffs), shift, border);
                    let mut dst = Img::<u8>::garbage(&mut rng, 20, 9);
                    let mut scratch = vec![0; filter2d_scratch_len(20, k)];
                    filter2d_u8(
                        &src.view(),
                        &mut dst.view_mut(),
                        &kernel,
                        border,
                        &mut scratch,
                    )
                    .unwrap();
                    let ctx = format!("k={k} shift={shift} sign={sign}");
                    dst.assert_pixels_eq(&want, &ctx);
                }
            }
        }
    }
}

/// Hand-computed results, so that the reference itself is checked by something.
#[test]
fn hand_computed_cases() {
    let mut rng = Rng::new(12);
    // 1×1 image, 3×3 box: Replicate/Reflect101 see the pixel nine times, Constant(0) once.
    let src = Img::from_fn(&mut rng, 1, 1, |_, _, _| 200u8);
    let mut s = vec![0; separable_scratch_len(1, 15, 15)];
    for (border, want) in [
        (Border::Replicate, 200u8),
        (Border::Reflect101, 200),
        (Border::Constant(0), 22),  // (200 + 4) / 9
        (Border::Constant(10), 31), // (200 + 80 + 4) / 9
    ] {
        let mut dst = Img::<u8>::garbage(&mut rng, 1, 1);
        box_blur_u8(&src.view(), &mut dst.view_mut(), 3, border, &mut s).unwrap();
        assert_eq!(dst.at(0, 0), want, "{border:?}");
    }
    // Row [10 20 30], 1×3 kernel [1 2 4] (correlation: not flipped), shift 0.
    let src = Img::from_fn(&mut rng, 3, 1, |_, x, _| [10u8, 20, 30][x]);
    let k = Kernel2dQ::new(3, &[0, 0, 0, 1, 2, 4, 0, 0, 0], 2).unwrap();
    let mut s = vec![0; filter2d_scratch_len(3, 3)];
    let cases: [(Border<u8>, [u8; 3]); 3] = [
        // (p[-1] + 2p[0] + 4p[1] + 2) >> 2
        (
            Border::Replicate,
            [
                (10 + 20 + 80 + 2) >> 2,
                (10 + 40 + 120 + 2) >> 2,
                (20 + 60 + 120 + 2) >> 2,
            ],
        ),
        (
            Border::Reflect101,
            [(20 + 20 + 80 + 2) >> 2, 43, (20 + 60 + 80 + 2) >> 2],
        ),
        (
            Border::Constant(0),
            [(20 + 80 + 2) >> 2, 43, (20 + 60 + 2) >> 2],
        ),
    ];
    for (border, want) in cases {
        let mut dst = Img::<u8>::garbage(&mut rng, 3, 1);
        filter2d_u8(&src.view(), &mut dst.view_mut(), &k, border, &mut s).unwrap();
        assert_eq!(dst.plane().px, want.to_vec(), "{border:?}");
    }
    // Rounding: halves go up; negatives floor; saturation both ways.
    let src = Img::from_fn(&mut rng, 1, 1, |_, _, _| 1u8);
    let mut s = vec![0; filter2d_scratch_len(1, 1)];
    for (c, shift, want) in [
        (3, 1, 2u8),
        (1, 1, 1),
        (-1, 1, 0),
        (-3, 2, 0),
        (1000, 1, 255),
    ] {
        let k = Kernel2dQ::new(1, &[c], shift).unwrap();
        let mut dst = Img::<u8>::garbage(&mut rng, 1, 1);
        filter2d_u8(
            &src.view(),
            &mut dst.view_mut(),
            &k,
            Border::Replicate,
            &mut s,
        )
        .unwrap();
        assert_eq!(dst.at(0, 0), want, "c={c} shift={shift}");
    }
}

#[test]
fn filter2d_f32_within_tolerance() {
    let mut rng = Rng::new(13);
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        for &(w, h) in SIZES {
            for border in borders_f32(&mut rng) {
                let coeffs: Vec<f32> = (0..k * k)
                    .map(|_| {
                        if rng.chance(1, 8) {
                            0.0
                        } else {
                            rng.f32_in(-1.0, 1.0)
                        }
                    })
                    .collect();
                let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
                let src = random_f32(&mut rng, w, h, -50.0, 200.0);
                let (want, abs) = common::filter_f64(&src.plane(), k, k, &wide_f(&coeffs), border);
                let mut dst = Img::<f32>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_f32(&mut rng, filter2d_scratch_len(w, k));
                filter2d_f32(
                    &src.view(),
                    &mut dst.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!(
                    "filter2d_f32 k={k} {w}x{h} strides {}/{} {border:?}",
                    src.stride, dst.stride
                );
                dst.assert_close(&want, |x, y| sum_tol(k * k, abs.at(x, y)), &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

/// NaN pixels poison every output whose window holds them, zero coefficients included
/// (`0 · NaN` is NaN), exactly as in the reference.
#[test]
fn float_filters_propagate_nan_like_the_reference() {
    let mut rng = Rng::new(14);
    for _ in 0..30 {
        let (w, h) = (1 + rng.below(20), 1 + rng.below(12));
        let src = Img::from_fn(&mut rng, w, h, |rng, _, _| {
            if rng.chance(1, 40) {
                f32::NAN
            } else {
                rng.f32_in(-10.0, 10.0)
            }
        });
        let borders = borders_f32(&mut rng);
        let border = rng.pick(&borders);
        let k = rng.odd_len();
        let coeffs: Vec<f32> = (0..k * k)
            .map(|_| {
                if rng.chance(1, 3) {
                    0.0
                } else {
                    rng.f32_in(-1.0, 1.0)
                }
            })
            .collect();
        let (want, abs) = common::filter_f64(&src.plane(), k, k, &wide_f(&coeffs), border);
        let mut dst = Img::<f32>::garbage(&mut rng, w, h);
        let mut s = vec![0.0; filter2d_scratch_len(w, k)];
        let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
        filter2d_f32(&src.view(), &mut dst.view_mut(), &kernel, border, &mut s).unwrap();
        let ctx = format!("filter2d_f32 NaN k={k} {w}x{h} {border:?}");
        dst.assert_close(&want, |x, y| sum_tol(k * k, abs.at(x, y)), &ctx);
        for y in 0..h {
            for x in 0..w {
                assert_eq!(
                    dst.at(x, y).is_nan(),
                    want.at(x, y).is_nan(),
                    "{ctx} ({x},{y})"
                );
            }
        }

        let (kx, ky) = (rng.odd_len(), rng.odd_len());
        let fx: Vec<f32> = (0..kx)
            .map(|i| if i % 2 == 1 { 0.0 } else { 0.5 })
            .collect();
        let fy: Vec<f32> = (0..ky)
            .map(|i| if i % 3 == 1 { 0.0 } else { -0.25 })
            .collect();
        let (want, abs) = common::filter_f64(
            &src.plane(),
            kx,
            ky,
            &wide_f(&common::outer(&fx, &fy)),
            border,
        );
        let kernel = SepKernelF32::new(&fx, &fy).unwrap();
        let mut s = vec![0.0; separable_scratch_len(w, kx, ky)];
        sep_filter_f32(&src.view(), &mut dst.view_mut(), &kernel, border, &mut s).unwrap();
        let ctx = format!("sep_filter_f32 NaN {kx}x{ky} {w}x{h} {border:?}");
        dst.assert_close(&want, |x, y| sum_tol(kx + ky, abs.at(x, y)), &ctx);
    }
}

/// Random separable fixed-point kernel within the documented product limit.
fn random_sep_q(rng: &mut Rng, lx: usize, ly: usize, shift: u32) -> (Vec<i32>, Vec<i32>) {
    let budget = abs_budget(shift);
    loop {
        let (kx, ky) = if rng.chance(1, 3) {
            // Near the limit: split the budget between the axes.
            let bx = ((budget as f64).sqrt() as i64).max(1);
            let kx = random_coeffs(rng, lx, 0, bx);
            let sx: i64 = kx.iter().map(|&c| (c as i64).abs()).sum::<i64>().max(1);
            let ky = random_coeffs(rng, ly, 0, budget / sx);
            (kx, ky)
        } else {
            let (sx, sy) = (shift / 2, shift - shift / 2);
            let ax = ((2i64 << sx) / lx as i64).max(1);
            let ay = ((2i64 << sy) / ly as i64).max(1);
            let kx = (0..lx).map(|_| rng.range(-ax / 2, ax) as i32).collect();
            let ky = (0..ly).map(|_| rng.range(-ay / 2, ay) as i32).collect();
            (kx, ky)
        };
        let gain: i64 = kx.iter().map(|&c: &i32| (c as i64).abs()).sum::<i64>()
            * ky.iter().map(|&c: &i32| (c as i64).abs()).sum::<i64>();
        if gain <= budget {
            return (kx, ky);
        }
    }
}

#[test]
fn sep_filter_u8_is_exact() {
    let mut rng = Rng::new(15);
    let shifts = [0, 2, 8, 11, 16, 20, MAX_SHIFT];
    let mut n = 0;
    for &(w, h) in SIZES {
        for border in borders_u8(&mut rng) {
            for _ in 0..4 {
                let (lx, ly) = (rng.odd_len(), rng.odd_len());
                let shift = shifts[n % shifts.len()];
                n += 1;
                let (kx, ky) = random_sep_q(&mut rng, lx, ly, shift);
                let kernel = SepKernelQ::new(&kx, &ky, shift).unwrap();
                let src = random_u8(&mut rng, w, h);
                let dense = wide(&common::outer(&kx, &ky));
                let want = common::filter_u8(&src.plane(), lx, ly, &dense, shift, border);
                let mut dst = Img::<u8>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, lx, ly));
                sep_filter_u8(
                    &src.view(),
                    &mut dst.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!(
                    "sep_filter_u8 {lx}x{ly} {kx:?} {ky:?} shift={shift} {w}x{h} {border:?}"
                );
                dst.assert_pixels_eq(&want, &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
    // Kernels larger than the image in both directions, every border.
    for (w, h) in [(1, 1), (2, 3), (3, 2), (1, 2)] {
        for border in borders_u8(&mut rng) {
            let (kx, ky) = random_sep_q(&mut rng, 15, 15, 12);
            let kernel = SepKernelQ::new(&kx, &ky, 12).unwrap();
            let src = random_u8(&mut rng, w, h);
            let dense = wide(&common::outer(&kx, &ky));
            let want = common::filter_u8(&src.plane(), 15, 15, &dense, 12, border);
            let mut dst = Img::<u8>::garbage(&mut rng, w, h);
            let mut s = vec![0; separable_scratch_len(w, 15, 15)];
            sep_filter_u8(&src.view(), &mut dst.view_mut(), &kernel, border, &mut s).unwrap();
            dst.assert_pixels_eq(&want, &format!("sep 15x15 on {w}x{h} {border:?}"));
        }
    }
}

#[test]
fn sep_filter_f32_within_tolerance() {
    let mut rng = Rng::new(16);
    for &(w, h) in SIZES {
        for border in borders_f32(&mut rng) {
            for _ in 0..4 {
                let (lx, ly) = (rng.odd_len(), rng.odd_len());
                let kx: Vec<f32> = (0..lx).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let ky: Vec<f32> = (0..ly).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let kernel = SepKernelF32::new(&kx, &ky).unwrap();
                let src = random_f32(&mut rng, w, h, -100.0, 100.0);
                let dense: Vec<f64> = common::outer(&wide_f(&kx), &wide_f(&ky));
                let (want, abs) = common::filter_f64(&src.plane(), lx, ly, &dense, border);
                let mut dst = Img::<f32>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_f32(&mut rng, separable_scratch_len(w, lx, ly));
                sep_filter_f32(
                    &src.view(),
                    &mut dst.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!("sep_filter_f32 {lx}x{ly} {w}x{h} {border:?}");
                dst.assert_close(&want, |x, y| sum_tol(lx + ly, abs.at(x, y)), &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

/// `(ksize, sigma)` pairs covering explicit sizes, derived sizes and derived sigmas.
const GAUSS: &[(usize, f32)] = &[
    (1, 1.0),
    (3, 0.0),
    (3, 0.8),
    (5, 1.1),
    (7, 0.0),
    (0, 0.5),
    (0, 1.0),
    (9, 3.0),
    (15, 0.0),
    (0, 2.3),
    (13, 0.4),
];

#[test]
fn gaussian_blur_u8_is_exact() {
    let mut rng = Rng::new(17);
    for &(k, sigma) in GAUSS {
        let q = gaussian_kernel_q(k, sigma).unwrap();
        let n = q.kx().len();
        let dense = wide(&common::outer(q.kx(), q.ky()));
        for &(w, h) in SIZES {
            for border in borders_u8(&mut rng) {
                let src = random_u8(&mut rng, w, h);
                let want = common::filter_u8(&src.plane(), n, n, &dense, q.shift(), border);
                let mut dst = Img::<u8>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, n, n));
                gaussian_blur_u8(
                    &src.view(),
                    &mut dst.view_mut(),
                    k,
                    sigma,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!("gaussian_blur_u8 k={k} sigma={sigma} {w}x{h} {border:?}");
                dst.assert_pixels_eq(&want, &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
    // Flat images stay flat (each axis sums to exactly 2^10).
    let src = Img::from_fn(&mut rng, 9, 7, |_, _, _| 173u8);
    let mut dst = Img::<u8>::garbage(&mut rng, 9, 7);
    let mut s = vec![0; separable_scratch_len(9, 15, 15)];
    gaussian_blur_u8(
        &src.view(),
        &mut dst.view_mut(),
        0,
        2.0,
        Border::Reflect101,
        &mut s,
    )
    .unwrap();
    dst.assert_pixels_eq(&Plane::from_fn(9, 7, |_, _| 173), "flat");
}

#[test]
fn gaussian_blur_f32_within_tolerance() {
    let mut rng = Rng::new(18);
    for &(k, sigma) in GAUSS {
        let g = gaussian_kernel_f32(k, sigma).unwrap();
        let n = g.kx().len();
        let dense = common::outer(&wide_f(g.kx()), &wide_f(g.ky()));
        for &(w, h) in SIZES {
            for border in borders_f32(&mut rng) {
                let src = random_f32(&mut rng, w, h, 0.0, 255.0);
                let (want, abs) = common::filter_f64(&src.plane(), n, n, &dense, border);
                let mut dst = Img::<f32>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_f32(&mut rng, separable_scratch_len(w, n, n));
                gaussian_blur_f32(
                    &src.view(),
                    &mut dst.view_mut(),
                    k,
                    sigma,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let ctx = format!("gaussian_blur_f32 k={k} sigma={sigma} {w}x{h} {border:?}");
                dst.assert_close(&want, |x, y| sum_tol(2 * n, abs.at(x, y)), &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

#[test]
fn box_blur_u8_is_exact() {
    let mut rng = Rng::new(19);
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        for &(w, h) in SIZES {
            for border in borders_u8(&mut rng) {
                // Some all-255 images: the largest sums and the rounding at the top.
                let src = if rng.chance(1, 6) {
                    Img::from_fn(&mut rng, w, h, |_, _, _| 255)
                } else {
                    random_u8(&mut rng, w, h)
                };
                let want = common::box_u8(&src.plane(), k, border);
                let mut dst = Img::<u8>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, k, k));
                box_blur_u8(&src.view(), &mut dst.view_mut(), k, border, &mut scratch).unwrap();
                let ctx = format!("box_blur_u8 k={k} {w}x{h} {border:?}");
                dst.assert_pixels_eq(&want, &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

#[test]
fn box_blur_f32_within_tolerance() {
    let mut rng = Rng::new(20);
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        let ones = vec![1.0 / (k * k) as f64; k * k];
        for &(w, h) in SIZES {
            for border in borders_f32(&mut rng) {
                let src = random_f32(&mut rng, w, h, -1000.0, 1000.0);
                let (want, abs) = common::filter_f64(&src.plane(), k, k, &ones, border);
                let mut dst = Img::<f32>::garbage(&mut rng, w, h);
                let before = dst.snapshot();
                let mut scratch = scratch_f32(&mut rng, separable_scratch_len(w, k, k));
                box_blur_f32(&src.view(), &mut dst.view_mut(), k, border, &mut scratch).unwrap();
                let ctx = format!("box_blur_f32 k={k} {w}x{h} {border:?}");
                dst.assert_close(&want, |x, y| sum_tol(2 * k + 1, abs.at(x, y)), &ctx);
                dst.assert_gaps_unchanged(&before, &ctx);
            }
        }
    }
}

#[test]
fn sobel_u8_is_exact() {
    let mut rng = Rng::new(21);
    for &(w, h) in SIZES {
        for border in borders_u8(&mut rng) {
            let src = random_u8(&mut rng, w, h);
            let (want_x, want_y) = common::sobel_i16(&src.plane(), border);
            let mut dx = Img::<i16>::garbage(&mut rng, w, h);
            let mut dy = Img::<i16>::garbage(&mut rng, w, h);
            let (bx, by) = (dx.snapshot(), dy.snapshot());
            let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, 3, 3));
            sobel_u8(
                &src.view(),
                &mut dx.view_mut(),
                &mut dy.view_mut(),
                border,
                &mut scratch,
            )
            .unwrap();
            let ctx = format!("sobel_u8 {w}x{h} {border:?}");
            dx.assert_pixels_eq(&want_x, &format!("{ctx} dx"));
            dy.assert_pixels_eq(&want_y, &format!("{ctx} dy"));
            dx.assert_gaps_unchanged(&bx, &ctx);
            dy.assert_gaps_unchanged(&by, &ctx);
        }
    }
    // The extremes of the documented range ±1020.
    let mut rng2 = Rng::new(0);
    let src = Img::from_fn(&mut rng2, 3, 3, |_, x, y| if x + y > 2 { 255u8 } else { 0 });
    let src2 = Img::from_fn(&mut rng2, 3, 3, |_, x, _| if x == 2 { 255u8 } else { 0 });
    let mut dx = Img::<i16>::garbage(&mut rng, 3, 3);
    let mut dy = Img::<i16>::garbage(&mut rng, 3, 3);
    let mut s = vec![0; separable_scratch_len(3, 3, 3)];
    sobel_u8(
        &src2.view(),
        &mut dx.view_mut(),
        &mut dy.view_mut(),
        Border::Replicate,
        &mut s,
    )
    .unwrap();
    assert_eq!(dx.at(1, 1), 1020);
    assert_eq!(dy.at(1, 1), 0);
    sobel_u8(
        &src.view(),
        &mut dx.view_mut(),
        &mut dy.view_mut(),
        Border::Constant(0),
        &mut s,
    )
    .unwrap();
    assert_eq!((dx.at(1, 1), dy.at(1, 1)), (3 * 255, 3 * 255));
}

#[test]
fn sobel_f32_matches_reference() {
    let mut rng = Rng::new(22);
    let kx = wide_f(&[-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]);
    let ky = wide_f(&[-1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0]);
    for &(w, h) in SIZES {
        for border in borders_f32(&mut rng) {
            // Integer-valued pixels: every partial sum is exact, so the result must be.
            let integer = rng.chance(1, 2);
            let src = if integer {
                Img::from_fn(&mut rng, w, h, |rng, _, _| rng.range(-300, 300) as f32)
            } else {
                random_f32(&mut rng, w, h, -100.0, 100.0)
            };
            let border = match (integer, border) {
                (true, Border::Constant(v)) => Border::Constant(v.round()),
                (_, b) => b,
            };
            let (wx, ax) = common::filter_f64(&src.plane(), 3, 3, &kx, border);
            let (wy, ay) = common::filter_f64(&src.plane(), 3, 3, &ky, border);
            let mut dx = Img::<f32>::garbage(&mut rng, w, h);
            let mut dy = Img::<f32>::garbage(&mut rng, w, h);
            let (bx, by) = (dx.snapshot(), dy.snapshot());
            let mut scratch = scratch_f32(&mut rng, separable_scratch_len(w, 3, 3));
            sobel_f32(
                &src.view(),
                &mut dx.view_mut(),
                &mut dy.view_mut(),
                border,
                &mut scratch,
            )
            .unwrap();
            let ctx = format!("sobel_f32 {w}x{h} {border:?} integer={integer}");
            if integer {
                dx.assert_close(&wx, |_, _| 0.0, &ctx);
                dy.assert_close(&wy, |_, _| 0.0, &ctx);
            } else {
                dx.assert_close(&wx, |x, y| sum_tol(6, ax.at(x, y)), &ctx);
                dy.assert_close(&wy, |x, y| sum_tol(6, ay.at(x, y)), &ctx);
            }
            dx.assert_gaps_unchanged(&bx, &ctx);
            dy.assert_gaps_unchanged(&by, &ctx);
        }
    }
}

/// Magnitude within 4 ulp (relative) of `√(dx² + dy²)`, orientation within 1e-6 rad of
/// `atan2(dy, dx)`, both from `f64`.
fn check_polar(dx: &Plane<f64>, dy: &Plane<f64>, mag: &Img<f32>, ori: &Img<f32>, ctx: &str) {
    let want_m = Plane::from_fn(dx.width, dx.height, |x, y| dx.at(x, y).hypot(dy.at(x, y)));
    let want_o = Plane::from_fn(dx.width, dx.height, |x, y| dy.at(x, y).atan2(dx.at(x, y)));
    mag.assert_close(
        &want_m,
        |x, y| 4.0 * f32::EPSILON as f64 * want_m.at(x, y),
        ctx,
    );
    ori.assert_close(&want_o, |_, _| 1e-6, ctx);
}

#[test]
fn gradient_polar_matches_reference() {
    let mut rng = Rng::new(23);
    for &(w, h) in SIZES {
        let gx = Img::from_fn(&mut rng, w, h, |rng, _, _| match rng.below(6) {
            0 => 0i16,
            1 => i16::MIN,
            2 => i16::MAX,
            _ => rng.next_u64() as i16,
        });
        let gy = Img::from_fn(&mut rng, w, h, |rng, _, _| match rng.below(5) {
            0 => 0i16,
            1 => i16::MIN,
            _ => rng.range(-1020, 1020) as i16,
        });
        let mut mag = Img::<f32>::garbage(&mut rng, w, h);
        let mut ori = Img::<f32>::garbage(&mut rng, w, h);
        let (bm, bo) = (mag.snapshot(), ori.snapshot());
        gradient_polar_i16(
            &gx.view(),
            &gy.view(),
            &mut mag.view_mut(),
            &mut ori.view_mut(),
        )
        .unwrap();
        let to64 = |p: Plane<i16>| Plane::from_fn(w, h, |x, y| p.at(x, y) as f64);
        let ctx = format!("gradient_polar_i16 {w}x{h}");
        check_polar(&to64(gx.plane()), &to64(gy.plane()), &mag, &ori, &ctx);
        mag.assert_gaps_unchanged(&bm, &ctx);
        ori.assert_gaps_unchanged(&bo, &ctx);
        for y in 0..h {
            for x in 0..w {
                let o = ori.at(x, y);
                assert!(
                    o > -std::f32::consts::PI && o <= std::f32::consts::PI,
                    "{o}"
                );
            }
        }

        let fx = Img::from_fn(&mut rng, w, h, |rng, _, _| {
            if rng.chance(1, 6) {
                0.0
            } else {
                rng.f32_in(-1e3, 1e3)
            }
        });
        let fy = random_f32(&mut rng, w, h, -1e3, 1e3);
        gradient_polar_f32(
            &fx.view(),
            &fy.view(),
            &mut mag.view_mut(),
            &mut ori.view_mut(),
        )
        .unwrap();
        let to64 = |p: Plane<f32>| Plane::from_fn(w, h, |x, y| p.at(x, y) as f64);
        let ctx = format!("gradient_polar_f32 {w}x{h}");
        check_polar(&to64(fx.plane()), &to64(fy.plane()), &mag, &ori, &ctx);
        mag.assert_gaps_unchanged(&bm, &ctx);
        ori.assert_gaps_unchanged(&bo, &ctx);
    }
    // The axes.
    let mut rng = Rng::new(0);
    let gx = Img::from_fn(&mut rng, 5, 1, |_, x, _| [0i16, 3, 0, -3, 0][x]);
    let gy = Img::from_fn(&mut rng, 5, 1, |_, x, _| [0i16, 0, 4, 0, -4][x]);
    let mut mag = Img::<f32>::garbage(&mut rng, 5, 1);
    let mut ori = Img::<f32>::garbage(&mut rng, 5, 1);
    gradient_polar_i16(
        &gx.view(),
        &gy.view(),
        &mut mag.view_mut(),
        &mut ori.view_mut(),
    )
    .unwrap();
    assert_eq!(mag.plane().px, vec![0.0, 3.0, 4.0, 3.0, 4.0]);
    let pi = std::f32::consts::PI;
    assert_eq!(ori.plane().px, vec![0.0, 0.0, pi / 2.0, pi, -pi / 2.0]);

    // Float edge cases: atan2(−0, −1) is −π, folded to π; magnitudes beyond √f32::MAX stay
    // finite (a² + b² would overflow).
    let fx = Img::from_fn(&mut rng, 3, 1, |_, x, _| [-1.0f32, 3e19, -3e30][x]);
    let fy = Img::from_fn(&mut rng, 3, 1, |_, x, _| [-0.0f32, 4e19, 4e30][x]);
    let mut mag = Img::<f32>::garbage(&mut rng, 3, 1);
    let mut ori = Img::<f32>::garbage(&mut rng, 3, 1);
    gradient_polar_f32(
        &fx.view(),
        &fy.view(),
        &mut mag.view_mut(),
        &mut ori.view_mut(),
    )
    .unwrap();
    assert_eq!(ori.at(0, 0), pi);
    assert!((mag.at(1, 0) / 5e19 - 1.0).abs() < 1e-6, "{}", mag.at(1, 0));
    assert!((mag.at(2, 0) / 5e30 - 1.0).abs() < 1e-6, "{}", mag.at(2, 0));
}

/// Random sizes and strides beyond the fixed list, one random operation each, for every
/// integer-exact filter.
#[test]
fn random_sizes_sweep_u8() {
    let mut rng = Rng::new(27);
    for case in 0..400 {
        let (w, h) = (1 + rng.below(48), 1 + rng.below(40));
        let borders = borders_u8(&mut rng);
        let border = rng.pick(&borders);
        let src = random_u8(&mut rng, w, h);
        let p = src.plane();
        let mut dst = Img::<u8>::garbage(&mut rng, w, h);
        let before = dst.snapshot();
        let (lx, ly) = (rng.odd_len(), rng.odd_len());
        let shift = rng.range(0, MAX_SHIFT as i64) as u32;
        let mut t = scratch_i32(
            &mut rng,
            filter2d_scratch_len(w, 15).max(separable_scratch_len(w, 15, 15)),
        );
        let ctx = format!("case {case}: {w}x{h} {border:?} {lx}x{ly} shift {shift}");
        let want = match case % 4 {
            0 => {
                let c = random_coeffs(&mut rng, lx * lx, shift, abs_budget(shift));
                let k = Kernel2dQ::new(lx, &c, shift).unwrap();
                filter2d_u8(&src.view(), &mut dst.view_mut(), &k, border, &mut t).unwrap();
                common::filter_u8(&p, lx, lx, &wide(&c), shift, border)
            }
            1 => {
                let (kx, ky) = random_sep_q(&mut rng, lx, ly, shift);
                let k = SepKernelQ::new(&kx, &ky, shift).unwrap();
                sep_filter_u8(&src.view(), &mut dst.view_mut(), &k, border, &mut t).unwrap();
                common::filter_u8(&p, lx, ly, &wide(&common::outer(&kx, &ky)), shift, border)
            }
            2 => {
                box_blur_u8(&src.view(), &mut dst.view_mut(), lx, border, &mut t).unwrap();
                common::box_u8(&p, lx, border)
            }
            _ => {
                let (dw, dh) = pyr_down_size(w, h);
                let mut pd = Img::<u8>::garbage(&mut rng, dw, dh);
                let pb = pd.snapshot();
                pyr_down_u8(&src.view(), &mut pd.view_mut(), border, &mut t).unwrap();
                pd.assert_pixels_eq(&common::pyr_down_u8(&p, border), &ctx);
                pd.assert_gaps_unchanged(&pb, &ctx);
                let (rw, rh) = (1 + rng.below(60), 1 + rng.below(60));
                let mut rd = Img::<u8>::garbage(&mut rng, rw, rh);
                let rb = rd.snapshot();
                resize_bilinear_u8(&src.view(), &mut rd.view_mut(), &mut t).unwrap();
                let rctx = format!("{ctx} resize to {rw}x{rh}");
                rd.assert_pixels_eq(&common::resize_u8(&p, rw, rh), &rctx);
                rd.assert_gaps_unchanged(&rb, &rctx);
                continue;
            }
        };
        dst.assert_pixels_eq(&want, &ctx);
        dst.assert_gaps_unchanged(&before, &ctx);
    }
}

// -----------------------------------------------------------------------------------------
// Error paths
// -----------------------------------------------------------------------------------------

/// `call(src, dst, scratch)` must fail with `SizeMismatch` for every wrongly sized `dst` and
/// with `BufferTooSmall` for scratch one element short of `scratch_len(width)` (or empty),
/// leaving `dst` bit-for-bit untouched each time; with exactly `scratch_len` it succeeds.
fn check_errors<T: common::TestPixel, S: Copy + Default>(
    rng: &mut Rng,
    what: &str,
    dst_size: impl Fn(usize, usize) -> (usize, usize),
    scratch_len: impl Fn(usize) -> usize,
    call: impl Fn(&ImageView<'_, T>, &mut ImageViewMut<'_, T>, &mut [S]) -> Result<()>,
) {
    for (w, h) in [(1, 1), (2, 3), (7, 5), (33, 17)] {
        let src = Img::<T>::from_fn(rng, w, h, |_, _, _| T::default());
        let (dw, dh) = dst_size(w, h);
        let mut big = vec![S::default(); scratch_len(w + 2) + 64];
        for (bw, bh) in [(dw + 1, dh), (dw, dh + 1), (dw - 1, dh), (dw, dh - 1)] {
            if bw == 0 || bh == 0 {
                continue;
            }
            let mut dst = Img::<T>::garbage(rng, bw, bh);
            let before = dst.snapshot();
            let r = call(&src.view(), &mut dst.view_mut(), &mut big);
            let ctx = format!("{what}: {w}x{h} into {bw}x{bh}");
            assert_eq!(r, Err(Error::SizeMismatch), "{ctx}");
            dst.assert_unchanged(&before, &ctx);
        }
        let need = scratch_len(w);
        let mut dst = Img::<T>::garbage(rng, dw, dh);
        let before = dst.snapshot();
        for short in [need.saturating_sub(1), 0] {
            if short >= need {
                continue;
            }
            let mut scratch = vec![S::default(); short];
            let r = call(&src.view(), &mut dst.view_mut(), &mut scratch);
            let ctx = format!("{what}: {w}x{h}, scratch {short} of {need}");
            assert_eq!(r, Err(Error::BufferTooSmall), "{ctx}");
            dst.assert_unchanged(&before, &ctx);
        }
        let mut scratch = vec![S::default(); need];
        call(&src.view(), &mut dst.view_mut(), &mut scratch)
            .unwrap_or_else(|e| panic!("{what}: {w}x{h} with exact scratch: {e}"));
    }
}

fn same(w: usize, h: usize) -> (usize, usize) {
    (w, h)
}

#[test]
fn filter_error_paths() {
    let mut rng = Rng::new(24);
    let kq = Kernel2dQ::new(5, &[3; 25], 6).unwrap();
    let kf = Kernel2dF32::new(7, &[0.1; 49]).unwrap();
    let sq = SepKernelQ::new(&[1, 2, 1], &[1; 9], 4).unwrap();
    let sf = SepKernelF32::new(&[1.0; 11], &[0.5; 3]).unwrap();
    let bu = Border::Reflect101;
    let bf = Border::Constant(1.5);
    check_errors::<u8, i32>(
        &mut rng,
        "filter2d_u8",
        same,
        |w| filter2d_scratch_len(w, 5),
        |s, d, t| filter2d_u8(s, d, &kq, bu, t),
    );
    check_errors::<f32, f32>(
        &mut rng,
        "filter2d_f32",
        same,
        |w| filter2d_scratch_len(w, 7),
        |s, d, t| filter2d_f32(s, d, &kf, bf, t),
    );
    check_errors::<u8, i32>(
        &mut rng,
        "sep_filter_u8",
        same,
        |w| separable_scratch_len(w, 3, 9),
        |s, d, t| sep_filter_u8(s, d, &sq, bu, t),
    );
    check_errors::<f32, f32>(
        &mut rng,
        "sep_filter_f32",
        same,
        |w| separable_scratch_len(w, 11, 3),
        |s, d, t| sep_filter_f32(s, d, &sf, bf, t),
    );
    check_errors::<u8, i32>(
        &mut rng,
        "gaussian_blur_u8",
        same,
        |w| separable_scratch_len(w, 7, 7),
        |s, d, t| gaussian_blur_u8(s, d, 0, 1.0, bu, t),
    );
    check_errors::<f32, f32>(
        &mut rng,
        "gaussian_blur_f32",
        same,
        |w| separable_scratch_len(w, 5, 5),
        |s, d, t| gaussian_blur_f32(s, d, 5, 0.0, bf, t),
    );
    check_errors::<u8, i32>(
        &mut rng,
        "box_blur_u8",
        same,
        |w| separable_scratch_len(w, 13, 13),
        |s, d, t| box_blur_u8(s, d, 13, bu, t),
    );
    check_errors::<f32, f32>(
        &mut rng,
        "box_blur_f32",
        same,
        |w| separable_scratch_len(w, 1, 1),
        |s, d, t| box_blur_f32(s, d, 1, bf, t),
    );
    check_errors::<u8, i32>(
        &mut rng,
        "pyr_down_u8",
        pyr_down_size,
        pyr_down_scratch_len,
        |s, d, t| pyr_down_u8(s, d, bu, t),
    );
    check_errors::<f32, f32>(
        &mut rng,
        "pyr_down_f32",
        pyr_down_size,
        pyr_down_scratch_len,
        |s, d, t| pyr_down_f32(s, d, bf, t),
    );
}

#[test]
fn invalid_blur_parameters_leave_dst_untouched() {
    let mut rng = Rng::new(25);
    let src = random_u8(&mut rng, 6, 4);
    let srcf = random_f32(&mut rng, 6, 4, 0.0, 1.0);
    let mut dst = Img::<u8>::garbage(&mut rng, 6, 4);
    let mut dstf = Img::<f32>::garbage(&mut rng, 6, 4);
    let (before, beforef) = (dst.snapshot(), dstf.snapshot());
    let mut s = vec![0; separable_scratch_len(6, 15, 15)];
    let mut sf = vec![0.0; separable_scratch_len(6, 15, 15)];
    let b = Border::Replicate;
    for (k, sigma, want) in [
        (4, 1.0, Error::InvalidKernel),
        (17, 1.0, Error::InvalidKernel),
        (0, 0.0, Error::InvalidArgument),
        (0, 5.0, Error::InvalidKernel),
        (5, f32::NAN, Error::InvalidArgument),
    ] {
        let r = gaussian_blur_u8(&src.view(), &mut dst.view_mut(), k, sigma, b, &mut s);
        assert_eq!(r, Err(want), "gaussian_blur_u8 {k} {sigma}");
        let bf = Border::Replicate;
        let r = gaussian_blur_f32(&srcf.view(), &mut dstf.view_mut(), k, sigma, bf, &mut sf);
        assert_eq!(r, Err(want), "gaussian_blur_f32 {k} {sigma}");
    }
    for (k, want) in [
        (0, Error::ZeroSize),
        (2, Error::InvalidKernel),
        (17, Error::InvalidKernel),
    ] {
        let r = box_blur_u8(&src.view(), &mut dst.view_mut(), k, b, &mut s);
        assert_eq!(r, Err(want), "box_blur_u8 {k}");
        let r = box_blur_f32(
            &srcf.view(),
            &mut dstf.view_mut(),
            k,
            Border::Replicate,
            &mut sf,
        );
        assert_eq!(r, Err(want), "box_blur_f32 {k}");
    }
    dst.assert_unchanged(&before, "blur errors");
    dstf.assert_unchanged(&beforef, "blur errors");
}

#[test]
fn sobel_and_polar_error_paths_write_nothing() {
    let mut rng = Rng::new(26);
    let (w, h) = (9, 5);
    let src = random_u8(&mut rng, w, h);
    let srcf = random_f32(&mut rng, w, h, 0.0, 1.0);
    let need = separable_scratch_len(w, 3, 3);
    for ((xw, xh), (yw, yh), len, want) in [
        ((w, h), (w + 1, h), need, Error::SizeMismatch),
        ((w, h), (w, h - 1), need, Error::SizeMismatch),
        ((w - 1, h), (w, h), need, Error::SizeMismatch),
        ((w, h + 1), (w, h + 1), need, Error::SizeMismatch),
        ((w, h), (w, h), need - 1, Error::BufferTooSmall),
        ((w, h), (w, h), 0, Error::BufferTooSmall),
    ] {
        let ctx = format!("dx {xw}x{xh} dy {yw}x{yh} scratch {len}");
        let mut dx = Img::<i16>::garbage(&mut rng, xw, xh);
        let mut dy = Img::<i16>::garbage(&mut rng, yw, yh);
        let (bx, by) = (dx.snapshot(), dy.snapshot());
        let mut s = vec![0; len];
        let r = sobel_u8(
            &src.view(),
            &mut dx.view_mut(),
            &mut dy.view_mut(),
            Border::Replicate,
            &mut s,
        );
        assert_eq!(r, Err(want), "sobel_u8 {ctx}");
        dx.assert_unchanged(&bx, &ctx);
        dy.assert_unchanged(&by, &ctx);

        let mut fx = Img::<f32>::garbage(&mut rng, xw, xh);
        let mut fy = Img::<f32>::garbage(&mut rng, yw, yh);
        let (bx, by) = (fx.snapshot(), fy.snapshot());
        let mut s = vec![0.0; len];
        let r = sobel_f32(
            &srcf.view(),
            &mut fx.view_mut(),
            &mut fy.view_mut(),
            Border::Reflect101,
            &mut s,
        );
        assert_eq!(r, Err(want), "sobel_f32 {ctx}");
        fx.assert_unchanged(&bx, &ctx);
        fy.assert_unchanged(&by, &ctx);
    }

    let gx = Img::from_fn(&mut rng, w, h, |rng, _, _| rng.next_u64() as i16);
    let gf = random_f32(&mut rng, w, h, -1.0, 1.0);
    let sizes = [(w, h), (w + 1, h), (w, h + 1), (w - 1, h)];
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                if a == 0 && b == 0 && c == 0 {
                    continue;
                }
                let ctx = format!("polar sizes {:?} {:?} {:?}", sizes[a], sizes[b], sizes[c]);
                let gy = Img::from_fn(&mut rng, sizes[a].0, sizes[a].1, |_, _, _| 1i16);
                let gyf = Img::from_fn(&mut rng, sizes[a].0, sizes[a].1, |_, _, _| 1f32);
                let mut m = Img::<f32>::garbage(&mut rng, sizes[b].0, sizes[b].1);
                let mut o = Img::<f32>::garbage(&mut rng, sizes[c].0, sizes[c].1);
                let (bm, bo) = (m.snapshot(), o.snapshot());
                let r = gradient_polar_i16(
                    &gx.view(),
                    &gy.view(),
                    &mut m.view_mut(),
                    &mut o.view_mut(),
                );
                assert_eq!(r, Err(Error::SizeMismatch), "{ctx}");
                let r = gradient_polar_f32(
                    &gf.view(),
                    &gyf.view(),
                    &mut m.view_mut(),
                    &mut o.view_mut(),
                );
                assert_eq!(r, Err(Error::SizeMismatch), "{ctx}");
                m.assert_unchanged(&bm, &ctx);
                o.assert_unchanged(&bo, &ctx);
            }
        }
    }
}

#[test]
fn scratch_len_functions() {
    // Documented: ksize·(width + ksize − 1) + width.
    for (w, k) in [(1, 1), (1, 15), (97, 3), (33, 15)] {
        assert_eq!(filter2d_scratch_len(w, k), k * (w + k - 1) + w);
    }
    assert_eq!(filter2d_scratch_len(usize::MAX, 3), usize::MAX);
    assert_eq!(separable_scratch_len(usize::MAX, 3, 3), usize::MAX);
    assert_eq!(pyr_down_scratch_len(usize::MAX), usize::MAX);
    assert_eq!(resize_scratch_len(usize::MAX), usize::MAX);
    assert_eq!(resize_scratch_len(7), 14);
    assert!(separable_scratch_len(10, 5, 7) >= 10 + 4);
}

/// Outputs of 16 MiB or more with a stride of whole 16 bytes take non-temporal stores in the
/// separable `f32` filters (from each row's first 16-byte boundary); the same image into rows
/// one element longer (plain stores) must give the same bits, for the Gaussian, the box and a
/// general separable kernel, with rows starting on 16 bytes and 4 bytes past, at sizes whose
/// rows end in a partial block.
#[test]
fn streamed_f32_outputs_match_plain_stores() {
    let mut rng = Rng::new(0x5eed);
    for (w, h) in [(2048, 2048), (2900, 1450)] {
        let src: Vec<f32> = (0..w * h).map(|_| rng.f32_in(-2.0, 2.0)).collect();
        let src = ImageView::new(&src, w, h, w).unwrap();
        let mut scratch = vec![0.0f32; separable_scratch_len(w, 7, 7)];
        let kernel =
            SepKernelF32::new(&[0.1, -0.2, 0.3, 0.5, 0.3, -0.2, 0.1], &[0.25, 0.5, 0.25]).unwrap();
        type Run<'k> = dyn Fn(&ImageView<'_, f32>, &mut ImageViewMut<'_, f32>, &mut [f32]) + 'k;
        let runs: [(&str, Box<Run<'_>>); 3] = [
            (
                "gaussian 5",
                Box::new(|s, d, t| gaussian_blur_f32(s, d, 5, 1.1, Border::Reflect101, t).unwrap()),
            ),
            (
                "box 3",
                Box::new(|s, d, t| box_blur_f32(s, d, 3, Border::Replicate, t).unwrap()),
            ),
            (
                "separable 7 × 3",
                Box::new(|s, d, t| {
                    sep_filter_f32(s, d, &kernel, Border::Constant(0.5), t).unwrap()
                }),
            ),
        ];
        for (name, run) in &runs {
            let mut b = vec![0.0f32; (w + 1) * h];
            let mut db = ImageViewMut::new(&mut b, w, h, w + 1).unwrap();
            run(&src, &mut db, &mut scratch);
            // Streamed: from the buffer's first 16-byte boundary (or one element past it, 3
            // leading pixels per row stored plainly), stride a multiple of 4.
            for past in [0, 1] {
                let mut a = vec![0.0f32; w * h + 4];
                let at = a.as_ptr().align_offset(16) + past;
                let mut da = ImageViewMut::new(&mut a[at..at + w * h], w, h, w).unwrap();
                run(&src, &mut da, &mut scratch);
                for y in 0..h {
                    let (ra, rb) = (&a[at + y * w..][..w], &b[y * (w + 1)..][..w]);
                    let same = ra.iter().zip(rb).all(|(p, q)| p.to_bits() == q.to_bits());
                    assert!(same, "{name} {w}×{h}, {past} past: row {y} differs");
                }
            }
        }
    }
}

/// The dense `f32` filter gives, bit for bit, the sum a scalar loop forms: from 0, each tap's
/// product added in kernel order (row-major), outside pixels through the test's own border
/// mapping (`Plane::fetch`): the
/// vector interior and the border columns alike, for every kernel size and border, on widths
/// just above the kernel and around the vector blocks.
#[test]
fn dense_f32_is_the_tap_order_sum() {
    let mut rng = Rng::new(0xd3e5);
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        let r = (k / 2) as i64;
        let coeffs: Vec<f32> = (0..k * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
        for (w, h) in [(k + 1, 3), (31, 4), (32, 5), (33, 3), (47, 4), (70, 3)] {
            let src = random_f32(&mut rng, w, h, -4.0, 4.0);
            for border in borders_f32(&mut rng) {
                let mut dst = Img::garbage(&mut rng, w, h);
                let mut scratch = vec![0.0f32; filter2d_scratch_len(w, k)];
                filter2d_f32(
                    &src.view(),
                    &mut dst.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                let plane = src.plane();
                for y in 0..h {
                    for x in 0..w {
                        let mut s = 0.0f32;
                        for t in 0..k {
                            for kx in 0..k {
                                let (px, py) = ((x + kx) as i64 - r, (y + t) as i64 - r);
                                let p = plane.fetch(px, py, border);
                                s += coeffs[t * k + kx] * p;
                            }
                        }
                        let got = dst.at(x, y);
                        assert_eq!(
                            got.to_bits(),
                            s.to_bits(),
                            "k {k} {w}×{h} {border:?} ({x}, {y})"
                        );
                    }
                }
            }
        }
    }
}
