use super::*;

#[test]
fn integral_u8_is_exact() {
    let mut rng = Rng::new(30);
    for &(w, h) in SIZES {
        for with_sq in [true, false] {
            let src = if rng.chance(1, 4) {
                Img::from_fn(&mut rng, w, h, |_, _, _| 255u8)
            } else {
                random_u8(&mut rng, w, h)
            };
            let p = src.plane();
            let (tw, th) = integral_size(w, h);
            assert_eq!((tw, th), (w + 1, h + 1));
            let mut sum = Img::<u32>::garbage(&mut rng, tw, th);
            let mut sq = Img::<u64>::garbage(&mut rng, tw, th);
            let (bs, bq) = (sum.snapshot(), sq.snapshot());
            {
                let mut sqv = sq.view_mut();
                let sqv = if with_sq { Some(&mut sqv) } else { None };
                integral_u8(&src.view(), &mut sum.view_mut(), sqv).unwrap();
            }
            let ctx = format!("integral_u8 {w}x{h} sq={with_sq}");
            let (want_s, want_q): (Vec<u64>, Vec<u64>) = (0..th)
                .flat_map(|y| (0..tw).map(move |x| (x, y)))
                .map(|(x, y)| common::window_sums(&p, 0, 0, x, y))
                .unzip();
            let want_s = Plane {
                width: tw,
                height: th,
                px: want_s.iter().map(|&v| v as u32).collect(),
            };
            sum.assert_pixels_eq(&want_s, &ctx);
            sum.assert_gaps_unchanged(&bs, &ctx);
            if with_sq {
                sq.assert_pixels_eq(
                    &Plane {
                        width: tw,
                        height: th,
                        px: want_q,
                    },
                    &ctx,
                );
                sq.assert_gaps_unchanged(&bq, &ctx);
            } else {
                sq.assert_unchanged(&bq, &ctx);
            }
        }
    }
}

#[test]
fn window_queries_match_brute_force() {
    let mut rng = Rng::new(31);
    for &(w, h) in SIZES {
        let src = match rng.below(3) {
            0 => Img::from_fn(&mut rng, w, h, |rng, _, _| 250 + rng.below(6) as u8),
            _ => random_u8(&mut rng, w, h),
        };
        let p = src.plane();
        let (tw, th) = integral_size(w, h);
        let mut sum = Img::<u32>::garbage(&mut rng, tw, th);
        let mut sq = Img::<u64>::garbage(&mut rng, tw, th);
        integral_u8(&src.view(), &mut sum.view_mut(), Some(&mut sq.view_mut())).unwrap();
        let ii = IntegralImage::new(sum.view(), Some(sq.view())).unwrap();
        let plain = IntegralImage::new(sum.view(), None).unwrap();
        assert_eq!((ii.width(), ii.height()), (w, h));
        for _ in 0..300 {
            let r = Rect::new(
                rng.range(-2, w as i64 + 1) as i32,
                rng.range(-2, h as i64 + 1) as i32,
                rng.range(-1, w as i64 + 2) as i32,
                rng.range(-1, h as i64 + 2) as i32,
            );
            let (x0, y0) = (r.x as i64, r.y as i64);
            let (x1, y1) = (x0 + r.width as i64, y0 + r.height as i64);
            let ctx = format!("{w}x{h} {r:?}");
            if r.width <= 0 || r.height <= 0 {
                for e in [
                    ii.window_sum(r).err(),
                    ii.window_sq_sum(r).err(),
                    ii.window_mean(r).err(),
                    ii.window_variance(r).err(),
                    plain.window_sum(r).err(),
                ] {
                    assert_eq!(e, Some(Error::ZeroSize), "{ctx}");
                }
                continue;
            }
            if x0 < 0 || y0 < 0 || x1 > w as i64 || y1 > h as i64 {
                for e in [
                    ii.window_sum(r).err(),
                    ii.window_sq_sum(r).err(),
                    ii.window_mean(r).err(),
                    ii.window_variance(r).err(),
                ] {
                    assert_eq!(e, Some(Error::OutOfBounds), "{ctx}");
                }
                continue;
            }
            let (x0, y0, x1, y1) = (x0 as usize, y0 as usize, x1 as usize, y1 as usize);
            let (s, q) = common::window_sums(&p, x0, y0, x1, y1);
            let (mean, var) = common::window_mean_var(&p, x0, y0, x1, y1);
            assert_eq!(ii.window_sum(r), Ok(s as u32), "{ctx}");
            assert_eq!(plain.window_sum(r), Ok(s as u32), "{ctx}");
            assert_eq!(ii.window_sq_sum(r), Ok(q), "{ctx}");
            let m = ii.window_mean(r).unwrap();
            assert!(
                (m - mean).abs() <= 1e-12 * mean.max(1.0),
                "{ctx}: mean {m} vs {mean}"
            );
            let v = ii.window_variance(r).unwrap();
            assert!(
                (v - var).abs() <= 1e-9 * var + 1e-12,
                "{ctx}: var {v} vs {var}"
            );
            assert_eq!(plain.window_sq_sum(r), Err(Error::InvalidArgument), "{ctx}");
            assert_eq!(
                plain.window_variance(r),
                Err(Error::InvalidArgument),
                "{ctx}"
            );
        }
        let whole = Rect::new(0, 0, w as i32, h as i32);
        let (s, _) = common::window_sums(&p, 0, 0, w, h);
        assert_eq!(ii.window_sum(whole), Ok(s as u32));
        let huge = Rect::new(i32::MAX, i32::MAX, i32::MAX, i32::MAX);
        assert_eq!(ii.window_sum(huge), Err(Error::OutOfBounds));
    }
}

#[test]
fn integral_error_paths() {
    let mut rng = Rng::new(32);
    let src = random_u8(&mut rng, 5, 4);
    for ((sw, sh), (qw, qh)) in [
        ((5, 4), (6, 5)),
        ((6, 5), (6, 4)),
        ((6, 5), (5, 5)),
        ((7, 5), (6, 5)),
        ((6, 6), (6, 6)),
    ] {
        let ctx = format!("sum {sw}x{sh} sq {qw}x{qh}");
        let mut sum = Img::<u32>::garbage(&mut rng, sw, sh);
        let mut sq = Img::<u64>::garbage(&mut rng, qw, qh);
        let (bs, bq) = (sum.snapshot(), sq.snapshot());
        let r = integral_u8(&src.view(), &mut sum.view_mut(), Some(&mut sq.view_mut()));
        assert_eq!(r, Err(Error::SizeMismatch), "{ctx}");
        sum.assert_unchanged(&bs, &ctx);
        sq.assert_unchanged(&bq, &ctx);
    }
    let sum = Img::<u32>::garbage(&mut rng, 6, 5);
    let sq = Img::<u64>::garbage(&mut rng, 6, 4);
    assert_eq!(
        IntegralImage::new(sum.view(), Some(sq.view())).unwrap_err(),
        Error::SizeMismatch
    );
    // A 1×1 table describes a 0×0 image: every window is out of bounds.
    let one = Img::<u32>::garbage(&mut rng, 1, 1);
    let ii = IntegralImage::new(one.view(), None).unwrap();
    assert_eq!((ii.width(), ii.height()), (0, 0));
    assert_eq!(
        ii.window_sum(Rect::new(0, 0, 1, 1)),
        Err(Error::OutOfBounds)
    );
}

/// Tables that do not belong together (a sum table with another image's squared table)
/// are the caller's mistake, but must not panic: the variance stays finite and ≥ 0.
#[test]
fn inconsistent_tables_do_not_panic() {
    let mut rng = Rng::new(33);
    let bright = Img::from_fn(&mut rng, 6, 5, |_, _, _| 200u8);
    let dark = Img::from_fn(&mut rng, 6, 5, |_, _, _| 1u8);
    let (tw, th) = integral_size(6, 5);
    let mut sum = Img::<u32>::garbage(&mut rng, tw, th);
    let mut sq = Img::<u64>::garbage(&mut rng, tw, th);
    let mut unused = Img::<u32>::garbage(&mut rng, tw, th);
    integral_u8(&bright.view(), &mut sum.view_mut(), None).unwrap();
    integral_u8(
        &dark.view(),
        &mut unused.view_mut(),
        Some(&mut sq.view_mut()),
    )
    .unwrap();
    let ii = IntegralImage::new(sum.view(), Some(sq.view())).unwrap();
    let v = ii.window_variance(Rect::new(1, 1, 4, 3)).unwrap();
    assert!(v.is_finite() && v >= 0.0, "{v}");
}

/// The pixel limit of the `u32` table: at the limit an all-255 image sums to exactly
/// `u32::MAX`; one row more is refused before anything is written. The buffers come from
/// `vec![0; n]` (zeroed pages, lazily mapped), so the refused case costs no real memory.
#[test]
fn integral_pixel_limit() {
    assert!(255 * MAX_INTEGRAL_PIXELS <= u32::MAX as u64);
    assert!(255 * (MAX_INTEGRAL_PIXELS + 1) > u32::MAX as u64);
    // MAX_INTEGRAL_PIXELS = (2³² − 1) / 255 = 257 · 65537.
    let (w, h) = (65537usize, 257usize);
    assert_eq!((w * h) as u64, MAX_INTEGRAL_PIXELS);
    let (tw, th) = integral_size(w, h);

    {
        let src = vec![0u8; w * (h + 1)];
        let mut sum = vec![0u32; tw * (th + 1)];
        let r = integral_u8(
            &ImageView::packed(&src, w, h + 1).unwrap(),
            &mut ImageViewMut::packed(&mut sum, tw, th + 1).unwrap(),
            None,
        );
        assert_eq!(r, Err(Error::Overflow));
        assert!(sum.iter().all(|&v| v == 0));
    }

    let src = vec![255u8; w * h];
    let mut sum = vec![0u32; tw * th];
    integral_u8(
        &ImageView::packed(&src, w, h).unwrap(),
        &mut ImageViewMut::packed(&mut sum, tw, th).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(sum[tw * th - 1], u32::MAX);
    assert_eq!(sum[tw * (th - 1) + 1], 255 * (h as u32));
    let ii = IntegralImage::new(ImageView::packed(&sum, tw, th).unwrap(), None).unwrap();
    let whole = Rect::new(0, 0, w as i32, h as i32);
    assert_eq!(ii.window_sum(whole), Ok(u32::MAX));
    assert_eq!(ii.window_mean(whole), Ok(255.0));
    assert_eq!(
        ii.window_sum(Rect::new(1, 1, w as i32 - 1, h as i32 - 1)),
        Ok(255 * (w as u32 - 1) * (h as u32 - 1))
    );
}
