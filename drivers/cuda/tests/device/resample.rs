//! Integral images, pyramid levels and bilinear resize against the core.

use mvision_core::integral::{integral_size, integral_u8};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len};

use super::*;

#[test]
fn integral_matches_the_cpu_with_and_without_squares() {
    let Some(ctx) = gpu("integral_matches_the_cpu_with_and_without_squares") else {
        return;
    };
    let mut rng = Rng::new(20);
    // Widths beyond the 256-wide scan chunk carry partial sums from chunk to chunk.
    let extra = [(255, 2), (256, 3), (257, 4), (1000, 3), (3001, 2)];
    for &(w, h) in SIZES.iter().chain(&extra) {
        let host = random_u8(&mut rng, w, h);
        let (tw, th) = integral_size(w, h);
        let mut want_sum = Host::filled(&mut rng, tw, th, 0u32);
        let mut want_sq = Host::filled(&mut rng, tw, th, 0u64);
        integral_u8(
            &host.view(),
            &mut want_sum.view_mut(),
            Some(&mut want_sq.view_mut()),
        )
        .unwrap();
        let src = upload(&ctx, &host);
        let mut sum = ctx.alloc::<u32>(tw, th).unwrap();
        let mut sq = ctx.alloc::<u64>(tw, th).unwrap();
        ctx.integral_u8(&src, &mut sum, Some(&mut sq)).unwrap();
        let what = format!("integral {w}x{h}");
        assert_exact(&download(&ctx, &sum), &want_sum.pixels(), tw, &what);
        assert_exact(
            &download(&ctx, &sq),
            &want_sq.pixels(),
            tw,
            &format!("sq {what}"),
        );

        // Without squares, into a table holding stale values from the run above.
        ctx.integral_u8(&src, &mut sum, None).unwrap();
        assert_exact(&download(&ctx, &sum), &want_sum.pixels(), tw, &what);
    }
}

#[test]
fn integral_of_an_all_255_image_is_exact() {
    let Some(ctx) = gpu("integral_of_an_all_255_image_is_exact") else {
        return;
    };
    let mut rng = Rng::new(21);
    let (w, h) = (1920, 1080);
    let host = Host::from_fn(&mut rng, w, h, 0, |_| 255u8);
    let (tw, th) = integral_size(w, h);
    let mut want_sum = Host::filled(&mut rng, tw, th, 0u32);
    let mut want_sq = Host::filled(&mut rng, tw, th, 0u64);
    integral_u8(
        &host.view(),
        &mut want_sum.view_mut(),
        Some(&mut want_sq.view_mut()),
    )
    .unwrap();
    let src = upload(&ctx, &host);
    let mut sum = ctx.alloc::<u32>(tw, th).unwrap();
    let mut sq = ctx.alloc::<u64>(tw, th).unwrap();
    ctx.integral_u8(&src, &mut sum, Some(&mut sq)).unwrap();
    assert_exact(&download(&ctx, &sum), &want_sum.pixels(), tw, "sum of 255s");
    assert_exact(
        &download(&ctx, &sq),
        &want_sq.pixels(),
        tw,
        "squares of 255s",
    );
}

#[test]
fn pyr_down_matches_the_cpu() {
    let Some(ctx) = gpu("pyr_down_matches_the_cpu") else {
        return;
    };
    let mut rng = Rng::new(22);
    for &(w, h) in SIZES {
        let (dw, dh) = pyr_down_size(w, h);
        let host8 = random_u8(&mut rng, w, h);
        let hostf = random_f32(&mut rng, w, h);
        let (src8, srcf) = (upload(&ctx, &host8), upload(&ctx, &hostf));
        let mut dst8 = ctx.alloc::<u8>(dw, dh).unwrap();
        let mut dstf = ctx.alloc::<f32>(dw, dh).unwrap();
        for (b8, bf) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let mut want8 = Host::filled(&mut rng, dw, dh, 0u8);
            let mut scratch = vec![0; pyr_down_scratch_len(w)];
            pyr_down_u8(&host8.view(), &mut want8.view_mut(), b8, &mut scratch).unwrap();
            ctx.pyr_down_u8(&src8, &mut dst8, b8).unwrap();
            let what = format!("pyr_down_u8 {w}x{h} {b8:?}");
            assert_exact(&download(&ctx, &dst8), &want8.pixels(), dw, &what);

            let mut wantf = Host::filled(&mut rng, dw, dh, 0f32);
            let mut scratch = vec![0.0; pyr_down_scratch_len(w)];
            pyr_down_f32(&hostf.view(), &mut wantf.view_mut(), bf, &mut scratch).unwrap();
            ctx.pyr_down_f32(&srcf, &mut dstf, bf).unwrap();
            let what = format!("pyr_down_f32 {w}x{h} {bf:?}");
            assert_close(&download(&ctx, &dstf), &wantf.pixels(), dw, &what);
        }
    }
}

#[test]
fn resize_matches_the_cpu_up_and_down() {
    let Some(ctx) = gpu("resize_matches_the_cpu_up_and_down") else {
        return;
    };
    let mut rng = Rng::new(23);
    let pairs = [
        ((1, 1), (5, 3)),
        ((5, 3), (1, 1)),
        ((2, 3), (17, 13)),
        ((97, 61), (640, 480)),
        ((640, 480), (97, 61)),
        ((640, 480), (320, 240)),
        ((640, 480), (641, 479)),
        ((17, 13), (17, 13)),
        ((9, 1), (1, 7)),
    ];
    for ((sw, sh), (dw, dh)) in pairs {
        let host8 = random_u8(&mut rng, sw, sh);
        let hostf = random_f32(&mut rng, sw, sh);
        let mut scratch = vec![0; resize_scratch_len(dw)];
        let mut want8 = Host::filled(&mut rng, dw, dh, 0u8);
        resize_bilinear_u8(&host8.view(), &mut want8.view_mut(), &mut scratch).unwrap();
        let mut wantf = Host::filled(&mut rng, dw, dh, 0f32);
        resize_bilinear_f32(&hostf.view(), &mut wantf.view_mut(), &mut scratch).unwrap();

        let (src8, srcf) = (upload(&ctx, &host8), upload(&ctx, &hostf));
        let mut dst8 = ctx.alloc::<u8>(dw, dh).unwrap();
        let mut dstf = ctx.alloc::<f32>(dw, dh).unwrap();
        ctx.resize_bilinear_u8(&src8, &mut dst8).unwrap();
        ctx.resize_bilinear_f32(&srcf, &mut dstf).unwrap();
        let what = format!("resize {sw}x{sh} -> {dw}x{dh}");
        assert_exact(&download(&ctx, &dst8), &want8.pixels(), dw, &what);
        assert_close(&download(&ctx, &dstf), &wantf.pixels(), dw, &what);
    }
}
