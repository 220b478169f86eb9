use super::*;

#[test]
fn kernel2d_q_validation() {
    let c = [1i32; MAX_TAPS_2D + 1];
    assert_eq!(Kernel2dQ::new(0, &[], 0).unwrap_err(), Error::ZeroSize);
    for size in [2, 4, 14, 16, 17, 31] {
        let n = (size * size).min(c.len());
        assert_eq!(
            Kernel2dQ::new(size, &c[..n], 0).unwrap_err(),
            Error::InvalidKernel
        );
    }
    assert_eq!(
        Kernel2dQ::new(3, &c[..8], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::new(3, &c[..10], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::new(1, &c[..9], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::new(3, &c[..9], MAX_SHIFT + 1).unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        Kernel2dQ::new(3, &c[..9], u32::MAX).unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        Kernel2dQ::new(1, &[i32::MIN], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::new(1, &[i32::MAX], 0).unwrap_err(),
        Error::InvalidKernel
    );

    // The accumulator limit, exactly: 255·Σ|c| + 2^(shift−1) ≤ i32::MAX.
    for shift in [0, 1, 8, 16, MAX_SHIFT] {
        for k in [1usize, 3, 15] {
            let budget = abs_budget(shift);
            let n = (k * k) as i64;
            let mut c = vec![(budget / n) as i32; k * k];
            c[0] += (budget % n) as i32;
            if k > 1 {
                c[k * k - 1] = -c[k * k - 1];
            }
            let ok = Kernel2dQ::new(k, &c, shift).unwrap();
            assert_eq!((ok.size(), ok.shift(), ok.coeffs()), (k, shift, &c[..]));
            let mut over = c.clone();
            over[0] += 1;
            assert_eq!(
                Kernel2dQ::new(k, &over, shift).unwrap_err(),
                Error::InvalidKernel,
                "k={k} shift={shift}"
            );
            if k > 1 {
                over[0] -= 1;
                over[k * k - 1] -= 1; // magnitude counts, not sign
                assert_eq!(
                    Kernel2dQ::new(k, &over, shift).unwrap_err(),
                    Error::InvalidKernel
                );
            }
        }
    }
}

#[test]
fn kernel2d_q_from_f32_quantises_halves_away_from_zero() {
    let k =
        Kernel2dQ::from_f32(3, &[0.25, -0.25, 0.75, -0.75, 1.0, 0.0, 0.2, -0.3, 2.5], 1).unwrap();
    assert_eq!(k.coeffs(), &[1, -1, 2, -2, 2, 0, 0, -1, 5]);
    assert_eq!(k.shift(), 1);
    let mut rng = Rng::new(6);
    for _ in 0..200 {
        let size = rng.odd_len();
        let shift = rng.range(0, MAX_SHIFT as i64) as u32;
        let f: Vec<f32> = (0..size * size).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let want: Vec<i32> = f
            .iter()
            .map(|&v| (v as f64 * (1u64 << shift) as f64).round() as i32)
            .collect();
        let sum: i64 = want.iter().map(|&v| (v as i64).abs()).sum();
        let got = Kernel2dQ::from_f32(size, &f, shift);
        if sum <= abs_budget(shift) {
            assert_eq!(got.unwrap().coeffs(), &want[..]);
        } else {
            assert_eq!(got.unwrap_err(), Error::InvalidKernel);
        }
    }
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(
            Kernel2dQ::from_f32(1, &[bad], 4).unwrap_err(),
            Error::InvalidKernel
        );
    }
    assert_eq!(
        Kernel2dQ::from_f32(1, &[3e9], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::from_f32(1, &[0.5], 25).unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        Kernel2dQ::from_f32(3, &[0.5; 8], 2).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::from_f32(4, &[0.5; 16], 2).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(Kernel2dQ::from_f32(0, &[], 2).unwrap_err(), Error::ZeroSize);
}

#[test]
fn float_and_separable_kernel_validation() {
    let f = [0.5f32; MAX_TAPS_2D];
    assert_eq!(Kernel2dF32::new(0, &[]).unwrap_err(), Error::ZeroSize);
    assert_eq!(
        Kernel2dF32::new(2, &f[..4]).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(Kernel2dF32::new(17, &f).unwrap_err(), Error::InvalidKernel);
    assert_eq!(
        Kernel2dF32::new(3, &f[..8]).unwrap_err(),
        Error::InvalidKernel
    );
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut c = [1.0f32; 9];
        c[4] = bad;
        assert_eq!(Kernel2dF32::new(3, &c).unwrap_err(), Error::InvalidKernel);
        assert_eq!(
            SepKernelF32::new(&c[3..6], &[1.0]).unwrap_err(),
            Error::InvalidKernel
        );
        assert_eq!(
            SepKernelF32::new(&[1.0], &c[3..6]).unwrap_err(),
            Error::InvalidKernel
        );
        assert_eq!(
            SepKernelQ::from_f32(&c[3..6], &[1.0], 2, 2).unwrap_err(),
            Error::InvalidKernel
        );
    }
    let k = Kernel2dF32::new(15, &f).unwrap();
    assert_eq!((k.size(), k.coeffs().len()), (15, 225));

    let one = [1i32; 17];
    assert_eq!(
        SepKernelQ::new(&[], &one[..3], 0).unwrap_err(),
        Error::ZeroSize
    );
    assert_eq!(
        SepKernelQ::new(&one[..3], &[], 0).unwrap_err(),
        Error::ZeroSize
    );
    assert_eq!(
        SepKernelQ::new(&one[..2], &one[..3], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        SepKernelQ::new(&one[..3], &one[..17], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        SepKernelQ::new(&one[..3], &one[..3], MAX_SHIFT + 1).unwrap_err(),
        Error::InvalidArgument
    );
    // Product gain at the limit, then one over (either axis).
    let budget = abs_budget(MAX_SHIFT);
    let (a, b) = (1024i64, budget / 1024);
    let ok = SepKernelQ::new(&[a as i32], &[-b as i32, 0, 0], MAX_SHIFT).unwrap();
    assert_eq!(
        (ok.kx(), ok.ky(), ok.shift()),
        (&[1024][..], &[-b as i32, 0, 0][..], 24)
    );
    let big = budget / 1024 + 1;
    assert_eq!(
        SepKernelQ::new(&[a as i32], &[big as i32], MAX_SHIFT).unwrap_err(),
        Error::InvalidKernel
    );
    // Σ|kx|·Σ|ky| beyond i64 must not wrap into acceptance.
    let huge = [i32::MIN; 15];
    assert_eq!(
        SepKernelQ::new(&huge, &huge, 0).unwrap_err(),
        Error::InvalidKernel
    );

    let q = SepKernelQ::from_f32(&[0.25, 0.5, -0.25], &[0.125], 1, 3).unwrap();
    assert_eq!((q.kx(), q.ky(), q.shift()), (&[1, 1, -1][..], &[1][..], 4));
    assert_eq!(
        SepKernelQ::from_f32(&[1.0], &[1.0], 20, 5).unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        SepKernelQ::from_f32(&[1.0], &[1.0], u32::MAX, 1).unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        SepKernelQ::from_f32(&[1.0, 1.0], &[1.0], 1, 1).unwrap_err(),
        Error::InvalidKernel
    );
    let s = SepKernelF32::new(&[1.0, 2.0, 3.0], &[4.0]).unwrap();
    assert_eq!((s.kx(), s.ky()), (&[1.0, 2.0, 3.0][..], &[4.0][..]));
    assert_eq!(
        SepKernelF32::new(&[1.0; 16], &[1.0]).unwrap_err(),
        Error::InvalidKernel
    );
}

fn derived_sigma(k: usize) -> f64 {
    0.3 * ((k as f64 - 1.0) * 0.5 - 1.0) + 0.8
}

#[test]
fn gaussian_kernels_match_the_formula() {
    for (sigma, want) in [
        (0.1f32, 3usize),
        (0.2, 3),
        (0.5, 5),
        (0.8, 7),
        (1.0, 7),
        (1.2, 9),
        (1.5, 11),
        (2.0, 13),
        (2.2, 15),
        (7.0 / 3.0, 15),
    ] {
        let by_formula = 2 * (3.0 * sigma as f64).ceil() as usize + 1;
        assert_eq!(by_formula, want, "reference, sigma {sigma}");
        assert_eq!(gaussian_kernel_size(sigma), Ok(want), "sigma {sigma}");
    }
    assert_eq!(gaussian_kernel_size(2.34), Err(Error::InvalidKernel));
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(
            gaussian_kernel_size(bad),
            Err(Error::InvalidArgument),
            "{bad}"
        );
    }

    let one = 1i64 << GAUSSIAN_SHIFT_PER_AXIS;
    for k in (1..=15).step_by(2) {
        for sigma in [0.0f32, -1.0, 0.3, 0.6, 1.0, 2.0, 5.0, 100.0] {
            let s = if sigma > 0.0 {
                sigma as f64
            } else {
                derived_sigma(k)
            };
            // OpenCV's getGaussianKernel uses fixed tables (small_gaussian_tab) for sigma <= 0
            // and sizes up to 7, not its sigma formula.
            const OPENCV_SMALL: [&[f64]; 4] = [
                &[1.0],
                &[0.25, 0.5, 0.25],
                &[0.0625, 0.25, 0.375, 0.25, 0.0625],
                &[
                    0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125,
                ],
            ];
            let w = if sigma <= 0.0 && k <= 7 {
                OPENCV_SMALL[k / 2].to_vec()
            } else {
                common::gaussian_weights(k, s)
            };
            let ctx = format!("k={k} sigma={sigma}");

            let q = gaussian_kernel_q(k, sigma).unwrap();
            assert_eq!(q.shift(), 2 * GAUSSIAN_SHIFT_PER_AXIS, "{ctx}");
            assert_eq!(q.kx(), q.ky(), "{ctx}");
            assert_eq!(q.kx().len(), k, "{ctx}");
            for (i, (&c, &wi)) in q.kx().iter().zip(&w).enumerate() {
                if i != k / 2 {
                    let diff = (c as f64 - wi * one as f64).abs();
                    assert!(
                        diff <= 0.5 + 1e-9,
                        "{ctx} tap {i}: {c} vs {}",
                        wi * one as f64
                    );
                }
            }
            assert_eq!(q.kx().iter().map(|&c| c as i64).sum::<i64>(), one, "{ctx}");

            let f = gaussian_kernel_f32(k, sigma).unwrap();
            assert_eq!(f.kx(), f.ky(), "{ctx}");
            for (&c, &wi) in f.kx().iter().zip(&w) {
                assert!((c as f64 - wi).abs() <= 1e-7, "{ctx}: {c} vs {wi}");
            }
        }
    }
    // ksize 0: size from sigma.
    let q = gaussian_kernel_q(0, 1.0).unwrap();
    assert_eq!(q.kx().len(), 7);
    assert_eq!(gaussian_kernel_f32(0, 2.0).unwrap().kx().len(), 13);
    for (k, s, e) in [
        (0, 0.0, Error::InvalidArgument),
        (0, -2.0, Error::InvalidArgument),
        (0, 3.0, Error::InvalidKernel),
        (3, f32::NAN, Error::InvalidArgument),
        (3, f32::INFINITY, Error::InvalidArgument),
        (4, 1.0, Error::InvalidKernel),
        (17, 1.0, Error::InvalidKernel),
        (16, 0.0, Error::InvalidKernel),
    ] {
        assert_eq!(gaussian_kernel_q(k, s).unwrap_err(), e, "{k} {s}");
        assert_eq!(gaussian_kernel_f32(k, s).unwrap_err(), e, "{k} {s}");
    }
}
