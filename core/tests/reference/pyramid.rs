use super::*;

const PYR_SIZES: &[(usize, usize)] = &[(2, 2), (4, 4), (5, 5), (1, 2), (2, 1), (6, 9)];

#[test]
fn pyr_down_u8_is_exact() {
    let mut rng = Rng::new(40);
    for &(w, h) in SIZES.iter().chain(PYR_SIZES) {
        for border in borders_u8(&mut rng) {
            let src = random_u8(&mut rng, w, h);
            let want = common::pyr_down_u8(&src.plane(), border);
            let (dw, dh) = pyr_down_size(w, h);
            assert_eq!((dw, dh), (want.width, want.height));
            let mut dst = Img::<u8>::garbage(&mut rng, dw, dh);
            let before = dst.snapshot();
            let mut scratch = scratch_i32(&mut rng, pyr_down_scratch_len(w));
            pyr_down_u8(&src.view(), &mut dst.view_mut(), border, &mut scratch).unwrap();
            let ctx = format!("pyr_down_u8 {w}x{h} {border:?}");
            dst.assert_pixels_eq(&want, &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
        }
    }
    // Hand-computed: an impulse of 255 at (2, 2) of a 5×5 zero image, Constant(0): the
    // centre output sees weight 36/256 → round(35.86) = 36; output (1, 1) sees 1/256 → 1.
    let mut rng2 = Rng::new(0);
    let src = Img::from_fn(
        &mut rng2,
        5,
        5,
        |_, x, y| if (x, y) == (2, 2) { 255u8 } else { 0 },
    );
    let mut dst = Img::<u8>::garbage(&mut rng, 3, 3);
    let mut s = vec![0; pyr_down_scratch_len(5)];
    pyr_down_u8(
        &src.view(),
        &mut dst.view_mut(),
        Border::Constant(0),
        &mut s,
    )
    .unwrap();
    // (255·36 + 128) >> 8 = 36; corners see weight 1·1 at distance 2: (255 + 128) >> 8 = 1.
    // Edge centres see 6·1: (1530 + 128) >> 8 = 6.
    assert_eq!(dst.plane().px, vec![1, 6, 1, 6, 36, 6, 1, 6, 1]);
}

#[test]
fn pyr_down_f32_within_tolerance() {
    let mut rng = Rng::new(41);
    for &(w, h) in SIZES.iter().chain(PYR_SIZES) {
        for border in borders_f32(&mut rng) {
            let src = random_f32(&mut rng, w, h, -300.0, 300.0);
            let (want, abs) = common::pyr_down_f64(&src.plane(), border);
            let (dw, dh) = pyr_down_size(w, h);
            let mut dst = Img::<f32>::garbage(&mut rng, dw, dh);
            let before = dst.snapshot();
            let mut scratch = scratch_f32(&mut rng, pyr_down_scratch_len(w));
            pyr_down_f32(&src.view(), &mut dst.view_mut(), border, &mut scratch).unwrap();
            let ctx = format!("pyr_down_f32 {w}x{h} {border:?}");
            dst.assert_close(&want, |x, y| sum_tol(10, abs.at(x, y)), &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
        }
    }
}
