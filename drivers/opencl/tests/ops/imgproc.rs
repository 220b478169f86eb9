//! Integral images, pyramid levels and bilinear resize against the core.

use mvision_core::integral::{integral_size, integral_u8};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len};

use crate::common::*;
use crate::ctx_or_skip;

#[test]
fn integral_matches_cpu_exactly() {
    let ctx = ctx_or_skip!("integral_matches_cpu_exactly");
    let mut rng = Rng::new(0x1e7a);
    // Rows shorter than, equal to and longer than one scan group (256), so the carry from chunk
    // to chunk is exercised; all-255 images reach the largest sums.
    let extra = [(255, 2), (256, 3), (257, 4), (1000, 3), (3, 1000)];
    for (i, (w, h)) in SIZES.into_iter().chain(extra).enumerate() {
        let src = if i % 3 == 2 {
            HostImage::new(w, h, w + 1, || 255u8)
        } else {
            random_u8(&mut rng, w, h)
        };
        let d_src = upload(ctx, &src);
        let (tw, th) = integral_size(w, h);
        let (mut sum, mut sq) = (zeros::<u32>(tw, th), zeros::<u64>(tw, th));
        integral_u8(&src.view(), &mut sum.view_mut(), Some(&mut sq.view_mut())).unwrap();
        let mut d_sum = ctx.alloc::<u32>(tw, th).unwrap();
        let mut d_sq = ctx.alloc::<u64>(tw, th).unwrap();
        ctx.integral_u8(&d_src, &mut d_sum, Some(&mut d_sq))
            .unwrap();
        assert_exact(
            &download(ctx, &d_sum),
            &sum.data,
            tw,
            &format!("integral sum {w}x{h}"),
        );
        assert_exact(
            &download(ctx, &d_sq),
            &sq.data,
            tw,
            &format!("integral sqsum {w}x{h}"),
        );
        // Without the squared table; stale contents of the sum table must not leak through.
        let mut d_sum2 = ctx.alloc::<u32>(tw, th).unwrap();
        ctx.copy(&d_sum, &mut d_sum2).unwrap();
        ctx.integral_u8(&d_src, &mut d_sum2, None).unwrap();
        assert_exact(
            &download(ctx, &d_sum2),
            &sum.data,
            tw,
            &format!("integral only {w}x{h}"),
        );
    }
}

#[test]
fn pyr_down_matches_cpu() {
    let ctx = ctx_or_skip!("pyr_down_matches_cpu");
    let mut rng = Rng::new(0x9d0e);
    for (w, h) in SIZES.into_iter().chain([(2, 1), (1, 2), (4, 4), (5, 7)]) {
        let (ow, oh) = pyr_down_size(w, h);
        let src8 = random_u8(&mut rng, w, h);
        let src32 = random_f32(&mut rng, w, h);
        let (d8, d32) = (upload(ctx, &src8), upload(ctx, &src32));
        let mut o8 = ctx.alloc::<u8>(ow, oh).unwrap();
        let mut o32 = ctx.alloc::<f32>(ow, oh).unwrap();
        for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let mut want8 = zeros::<u8>(ow, oh);
            let mut scratch = vec![0; pyr_down_scratch_len(w)];
            pyr_down_u8(&src8.view(), &mut want8.view_mut(), b8, &mut scratch).unwrap();
            ctx.pyr_down_u8(&d8, &mut o8, b8).unwrap();
            assert_exact(
                &download(ctx, &o8),
                &want8.data,
                ow,
                &format!("pyr_down_u8 {w}x{h} {b8:?}"),
            );

            let mut want32 = zeros::<f32>(ow, oh);
            let mut scratch = vec![0.0; pyr_down_scratch_len(w)];
            pyr_down_f32(&src32.view(), &mut want32.view_mut(), b32, &mut scratch).unwrap();
            ctx.pyr_down_f32(&d32, &mut o32, b32).unwrap();
            let what = format!("pyr_down_f32 {w}x{h} {b32:?}");
            assert_close(
                &download(ctx, &o32),
                &want32.data,
                ow,
                max_abs(&src32, b32),
                &what,
            );
        }
    }
}

#[test]
fn resize_bilinear_matches_cpu() {
    let ctx = ctx_or_skip!("resize_bilinear_matches_cpu");
    let mut rng = Rng::new(0x4e51);
    let cases = [
        ((1, 1), (1, 1)),
        ((1, 1), (5, 3)),
        ((3, 7), (1, 1)),
        ((17, 5), (17, 5)),
        ((97, 61), (640, 480)),
        ((640, 480), (97, 61)),
        ((640, 480), (320, 240)),
        ((31, 33), (62, 11)),
        ((2, 3), (1000, 2)),
    ];
    for ((sw, sh), (dw, dh)) in cases {
        let src8 = random_u8(&mut rng, sw, sh);
        let src32 = random_f32(&mut rng, sw, sh);
        let (d8, d32) = (upload(ctx, &src8), upload(ctx, &src32));
        let mut o8 = ctx.alloc::<u8>(dw, dh).unwrap();
        let mut o32 = ctx.alloc::<f32>(dw, dh).unwrap();
        let mut scratch = vec![0; resize_scratch_len(dw)];

        let mut want8 = zeros::<u8>(dw, dh);
        resize_bilinear_u8(&src8.view(), &mut want8.view_mut(), &mut scratch).unwrap();
        ctx.resize_bilinear_u8(&d8, &mut o8).unwrap();
        let what = format!("resize_u8 {sw}x{sh} -> {dw}x{dh}");
        assert_exact(&download(ctx, &o8), &want8.data, dw, &what);

        let mut want32 = zeros::<f32>(dw, dh);
        resize_bilinear_f32(&src32.view(), &mut want32.view_mut(), &mut scratch).unwrap();
        ctx.resize_bilinear_f32(&d32, &mut o32).unwrap();
        let what = format!("resize_f32 {sw}x{sh} -> {dw}x{dh}");
        let scale = max_abs(&src32, mvision_core::Border::Replicate);
        assert_close(&download(ctx, &o32), &want32.data, dw, scale, &what);
    }
}
