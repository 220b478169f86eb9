use super::*;

/// Destination sizes for a `w × h` source: identity, up, down, mixed, 1×1, and odd ones.
fn targets(w: usize, h: usize) -> Vec<(usize, usize)> {
    vec![
        (w, h),
        (2 * w, 2 * h),
        (3 * w + 1, h + 2),
        (w.div_ceil(2), h.div_ceil(3)),
        (1, 1),
        (1, 7),
        (13, 1),
        (97, 61),
        (w + 1, (h / 2).max(1)),
    ]
}

#[test]
fn reference_mapping_follows_the_documented_formula() {
    assert_eq!(RESIZE_FRAC_BITS, common::Q);
    for src_n in 1..40usize {
        for dst_n in 1..40usize {
            for d in 0..dst_n {
                let exact = (d as f64 + 0.5) * src_n as f64 / dst_n as f64 - 0.5;
                let clamped = exact.clamp(0.0, (src_n - 1) as f64);
                let q = common::source_coord_q11(d, src_n, dst_n) as f64 / 2048.0;
                assert!(
                    q <= clamped && clamped - q < 1.0 / 2048.0,
                    "{d} {src_n} {dst_n}"
                );
            }
        }
    }
}

#[test]
fn resize_bilinear_u8_is_exact() {
    let mut rng = Rng::new(50);
    for &(w, h) in SIZES {
        for (dw, dh) in targets(w, h) {
            let src = random_u8(&mut rng, w, h);
            let want = common::resize_u8(&src.plane(), dw, dh);
            let mut dst = Img::<u8>::garbage(&mut rng, dw, dh);
            let before = dst.snapshot();
            let mut scratch = scratch_i32(&mut rng, resize_scratch_len(dw));
            resize_bilinear_u8(&src.view(), &mut dst.view_mut(), &mut scratch).unwrap();
            let ctx = format!("resize_bilinear_u8 {w}x{h} -> {dw}x{dh}");
            dst.assert_pixels_eq(&want, &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
            if (dw, dh) == (w, h) {
                dst.assert_pixels_eq(&src.plane(), &format!("{ctx}: identity"));
            }
            if (w, h) == (1, 1) {
                let v = src.at(0, 0);
                dst.assert_pixels_eq(&Plane::from_fn(dw, dh, |_, _| v), &ctx);
            }
        }
    }
    // Hand-computed: [0 255] to 4 pixels samples 0, ¼, ¾, 1 (clamped ends).
    let src = Img::from_fn(&mut rng, 2, 1, |_, x, _| [0u8, 255][x]);
    let mut dst = Img::<u8>::garbage(&mut rng, 4, 1);
    let mut s = vec![0; resize_scratch_len(4)];
    resize_bilinear_u8(&src.view(), &mut dst.view_mut(), &mut s).unwrap();
    assert_eq!(dst.plane().px, vec![0, 64, 191, 255]);
    // Halving averages pairs: (10 + 21)/2 = 15.5 → 16 (halves up).
    let src = Img::from_fn(&mut rng, 2, 2, |_, x, y| [[10u8, 21], [10, 21]][y][x]);
    let mut dst = Img::<u8>::garbage(&mut rng, 1, 1);
    resize_bilinear_u8(&src.view(), &mut dst.view_mut(), &mut s).unwrap();
    assert_eq!(dst.at(0, 0), 16);
}

#[test]
fn resize_bilinear_f32_within_tolerance() {
    // Tolerance: 8·ε_f32 times the largest of the four neighbours (a few lerp roundings).
    let mut rng = Rng::new(51);
    for &(w, h) in SIZES {
        for (dw, dh) in targets(w, h) {
            let src = random_f32(&mut rng, w, h, -500.0, 500.0);
            let (want, scale) = common::resize_f64(&src.plane(), dw, dh);
            let mut dst = Img::<f32>::garbage(&mut rng, dw, dh);
            let before = dst.snapshot();
            let mut scratch = scratch_i32(&mut rng, resize_scratch_len(dw));
            resize_bilinear_f32(&src.view(), &mut dst.view_mut(), &mut scratch).unwrap();
            let ctx = format!("resize_bilinear_f32 {w}x{h} -> {dw}x{dh}");
            let tol = |x, y| 8.0 * f32::EPSILON as f64 * scale.at(x, y);
            dst.assert_close(&want, tol, &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
            if (dw, dh) == (w, h) {
                dst.assert_pixels_eq(&src.plane(), &format!("{ctx}: identity"));
            }
        }
    }
}

#[test]
fn resize_error_paths() {
    let mut rng = Rng::new(52);
    let src = random_u8(&mut rng, 7, 3);
    let srcf = random_f32(&mut rng, 7, 3, 0.0, 1.0);
    for (dw, dh) in [(1, 1), (9, 4), (14, 6)] {
        for len in [0, resize_scratch_len(dw) - 1] {
            let mut dst = Img::<u8>::garbage(&mut rng, dw, dh);
            let mut dstf = Img::<f32>::garbage(&mut rng, dw, dh);
            let (b, bf) = (dst.snapshot(), dstf.snapshot());
            let mut s = vec![0; len];
            let r = resize_bilinear_u8(&src.view(), &mut dst.view_mut(), &mut s);
            assert_eq!(r, Err(Error::BufferTooSmall));
            let r = resize_bilinear_f32(&srcf.view(), &mut dstf.view_mut(), &mut s);
            assert_eq!(r, Err(Error::BufferTooSmall));
            dst.assert_unchanged(&b, "resize u8 short scratch");
            dstf.assert_unchanged(&bf, "resize f32 short scratch");
        }
    }
}
