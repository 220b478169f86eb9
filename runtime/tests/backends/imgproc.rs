//! Integral images, pyramid levels and bilinear resize against `mvision_core::{integral,
//! pyramid, resize}`. Every output is compared bit for bit, `f32` included: the integral and
//! resample programs are always built without contracted multiply-adds (`kernels/SPEC.md`).

use mvision_core::integral::{integral_size, integral_u8};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len};
use mvision_kernels::testing::{
    borders_f32, borders_u8, random_f32, random_stride, random_u8, HostImage, Rng,
};
use mvision_runtime::ops;

use crate::{
    alloc, assert_exact, contexts, download, reference, run_everywhere, upload, zeros, SIZES,
};

#[test]
fn integral_matches_the_cpu_exactly_with_and_without_squares() {
    let mut rng = Rng::new(0x1e7a);
    // Rows shorter than, equal to and longer than one scan group and one tile (256 columns),
    // columns around one tile (32 rows) and many tiles, so the carries from tile to tile are
    // exercised both ways; all-255 images reach the largest sums (a full-HD one the largest
    // squared sums).
    let extra = [
        (255, 2),
        (256, 3),
        (257, 4),
        (1000, 3),
        (3, 1000),
        (3001, 2),
        (1920, 1080),
        (1, 31),
        (1, 32),
        (1, 33),
        (3, 65),
        (255, 32),
        (257, 33),
        (513, 97),
        (3841, 5),
        (5, 2160),
        (777, 2161),
        (3840, 2160),
    ];
    for (i, (w, h)) in SIZES.into_iter().chain(extra).enumerate() {
        let src = if i % 3 == 2 || (w, h) == (1920, 1080) {
            let stride = random_stride(&mut rng, w);
            HostImage::new(w, h, stride, 0xA5, || 255u8)
        } else {
            random_u8(&mut rng, w, h)
        };
        let (tw, th) = integral_size(w, h);
        let (mut sum, mut sq) = (zeros::<u32>((tw, th)), zeros::<u64>((tw, th)));
        integral_u8(&src.view(), &mut sum.view_mut(), Some(&mut sq.view_mut())).unwrap();
        for (b, ctx) in contexts() {
            let a = upload(ctx, *b, &src);
            let (mut s, mut q) = (alloc(ctx, *b, (tw, th)), alloc(ctx, *b, (tw, th)));
            ops::integral_u8(&a, &mut s, Some(&mut q)).unwrap();
            let what = format!("integral {w}x{h}");
            assert_exact(&[(*b, download(*b, &s))], &sum, &what);
            assert_exact(&[(*b, download(*b, &q))], &sq, &format!("squared {what}"));
            // Without the squared table, into the same table: its stale contents must not
            // leak through.
            ops::integral_u8(&a, &mut s, None).unwrap();
            assert_exact(
                &[(*b, download(*b, &s))],
                &sum,
                &format!("{what}, no squares"),
            );
        }
    }
}

#[test]
fn pyr_down_matches_the_cpu() {
    let mut rng = Rng::new(0x9d0e);
    for (w, h) in SIZES.into_iter().chain([(2, 1), (1, 2), (4, 4), (5, 7)]) {
        let out = pyr_down_size(w, h);
        let (src8, src32) = (random_u8(&mut rng, w, h), random_f32(&mut rng, w, h));
        let len = pyr_down_scratch_len(w);
        for (b8, b32) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let want = reference(&src8, out, |a, b| pyr_down_u8(a, b, b8, &mut vec![0; len]));
            let got = run_everywhere(&src8, out, |a, o| ops::pyr_down_u8(a, o, b8));
            assert_exact(&got, &want, &format!("pyr_down_u8 {w}x{h} {b8:?}"));

            let want = reference(&src32, out, |a, b| {
                pyr_down_f32(a, b, b32, &mut vec![0.0; len])
            });
            let got = run_everywhere(&src32, out, |a, o| ops::pyr_down_f32(a, o, b32));
            let what = format!("pyr_down_f32 {w}x{h} {b32:?}");
            assert_exact(&got, &want, &what);
        }
    }
}

#[test]
fn resize_bilinear_matches_the_cpu_up_and_down() {
    let mut rng = Rng::new(0x4e51);
    let mut cases = vec![
        ((1, 1), (5, 3)),
        ((5, 3), (1, 1)),
        ((3, 7), (1, 1)),
        ((2, 3), (17, 13)),
        ((2, 3), (1000, 2)),
        ((9, 1), (1, 7)),
        ((31, 33), (62, 11)),
        ((97, 61), (640, 480)),
        ((640, 480), (97, 61)),
        ((640, 480), (320, 240)),
        ((640, 480), (641, 479)),
    ];
    // Each size to one pixel, enlarged unevenly, shrunk unevenly, and to itself.
    for (w, h) in SIZES {
        for to in [
            (1, 1),
            (w * 2 + 1, h + 3),
            ((w / 3).max(1), (h / 2).max(1)),
            (w, h),
        ] {
            cases.push(((w, h), to));
        }
    }
    for ((sw, sh), out) in cases {
        let (src8, src32) = (random_u8(&mut rng, sw, sh), random_f32(&mut rng, sw, sh));
        let len = resize_scratch_len(out.0);
        let what = format!("{sw}x{sh} -> {}x{}", out.0, out.1);

        let want = reference(&src8, out, |a, b| {
            resize_bilinear_u8(a, b, &mut vec![0; len])
        });
        let got = run_everywhere(&src8, out, ops::resize_bilinear_u8);
        assert_exact(&got, &want, &format!("resize_u8 {what}"));

        let want = reference(&src32, out, |a, b| {
            resize_bilinear_f32(a, b, &mut vec![0; len])
        });
        let got = run_everywhere(&src32, out, ops::resize_bilinear_f32);
        assert_exact(&got, &want, &format!("resize_f32 {what}"));
    }
}
