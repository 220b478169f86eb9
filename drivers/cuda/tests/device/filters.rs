//! Dense, separable, box and Sobel filters against `mvision_core::filter`.

use mvision_core::filter::{
    box_blur_f32, box_blur_u8, filter2d_f32, filter2d_scratch_len, filter2d_u8, gaussian_blur_f32,
    gaussian_blur_u8, gaussian_kernel_f32, gaussian_kernel_q, sep_filter_f32, sep_filter_u8,
    separable_scratch_len, sobel_f32, sobel_u8, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ,
    MAX_KERNEL_SIZE,
};
use mvision_core::Border;

use super::*;

/// Kernel sizes: all of them on small images, a few on VGA (the CPU reference is the slow part).
fn ksizes(w: usize, h: usize) -> Vec<usize> {
    if w * h > 100_000 {
        vec![1, 3, 7, 15]
    } else {
        (1..=MAX_KERNEL_SIZE).step_by(2).collect()
    }
}

#[test]
fn filter2d_u8_matches_the_cpu_in_every_variant() {
    let Some(ctx) = gpu("filter2d_u8_matches_the_cpu_in_every_variant") else {
        return;
    };
    let mut rng = Rng::new(1);
    for &(w, h) in SIZES {
        let host = random_u8(&mut rng, w, h);
        let src = upload(&ctx, &host);
        let mut dst = ctx.alloc::<u8>(w, h).unwrap();
        for k in ksizes(w, h) {
            for border in borders_u8(&mut rng) {
                let shift = rng.below(9) as u32;
                let coeffs: Vec<i32> = (0..k * k).map(|_| rng.int(-64, 64)).collect();
                let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
                let mut want = Host::filled(&mut rng, w, h, 0u8);
                let mut scratch = vec![0; filter2d_scratch_len(w, k)];
                filter2d_u8(
                    &host.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                for &variant in VARIANTS {
                    ctx.filter2d_u8(&src, &mut dst, &kernel, border, variant)
                        .unwrap();
                    let what = format!("filter2d_u8 {w}x{h} k={k} {border:?} {variant:?}");
                    assert_exact(&download(&ctx, &dst), &want.pixels(), w, &what);
                }
            }
        }
    }
}

#[test]
fn filter2d_f32_matches_the_cpu_in_every_variant() {
    let Some(ctx) = gpu("filter2d_f32_matches_the_cpu_in_every_variant") else {
        return;
    };
    let mut rng = Rng::new(2);
    for &(w, h) in SIZES {
        let host = random_f32(&mut rng, w, h);
        let src = upload(&ctx, &host);
        let mut dst = ctx.alloc::<f32>(w, h).unwrap();
        for k in ksizes(w, h) {
            for border in borders_f32(&mut rng) {
                let coeffs: Vec<f32> = (0..k * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
                let kernel = Kernel2dF32::new(k, &coeffs).unwrap();
                let mut want = Host::filled(&mut rng, w, h, 0f32);
                let mut scratch = vec![0.0; filter2d_scratch_len(w, k)];
                filter2d_f32(
                    &host.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                for &variant in VARIANTS {
                    ctx.filter2d_f32(&src, &mut dst, &kernel, border, variant)
                        .unwrap();
                    let what = format!("filter2d_f32 {w}x{h} k={k} {border:?} {variant:?}");
                    assert_close(&download(&ctx, &dst), &want.pixels(), w, &what);
                }
            }
        }
    }
}

#[test]
fn sep_filter_u8_matches_the_cpu() {
    let Some(ctx) = gpu("sep_filter_u8_matches_the_cpu") else {
        return;
    };
    let mut rng = Rng::new(3);
    for &(w, h) in SIZES {
        let host = random_u8(&mut rng, w, h);
        let src = upload(&ctx, &host);
        let mut dst = ctx.alloc::<u8>(w, h).unwrap();
        for round in 0..10 {
            for border in borders_u8(&mut rng) {
                // Random lengths (independent per axis), and a Gaussian now and then.
                let kernel = if round % 4 == 3 {
                    gaussian_kernel_q(rng.odd_len(), 0.0).unwrap()
                } else {
                    let kx: Vec<i32> = (0..rng.odd_len()).map(|_| rng.int(-40, 40)).collect();
                    let ky: Vec<i32> = (0..rng.odd_len()).map(|_| rng.int(-40, 40)).collect();
                    SepKernelQ::new(&kx, &ky, rng.below(11) as u32).unwrap()
                };
                let mut want = Host::filled(&mut rng, w, h, 0u8);
                let (kx, ky) = (kernel.kx().len(), kernel.ky().len());
                let mut scratch = vec![0; separable_scratch_len(w, kx, ky)];
                sep_filter_u8(
                    &host.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                ctx.sep_filter_u8(&src, &mut dst, &kernel, border).unwrap();
                let what = format!("sep_filter_u8 {w}x{h} {kx}x{ky} {border:?}");
                assert_exact(&download(&ctx, &dst), &want.pixels(), w, &what);
            }
        }
    }
}

#[test]
fn sep_filter_f32_matches_the_cpu() {
    let Some(ctx) = gpu("sep_filter_f32_matches_the_cpu") else {
        return;
    };
    let mut rng = Rng::new(4);
    for &(w, h) in SIZES {
        let host = random_f32(&mut rng, w, h);
        let src = upload(&ctx, &host);
        let mut dst = ctx.alloc::<f32>(w, h).unwrap();
        for round in 0..10 {
            for border in borders_f32(&mut rng) {
                let kernel = if round % 4 == 3 {
                    gaussian_kernel_f32(rng.odd_len(), 0.0).unwrap()
                } else {
                    let kx: Vec<f32> = (0..rng.odd_len()).map(|_| rng.f32_in(-1., 1.)).collect();
                    let ky: Vec<f32> = (0..rng.odd_len()).map(|_| rng.f32_in(-1., 1.)).collect();
                    SepKernelF32::new(&kx, &ky).unwrap()
                };
                let mut want = Host::filled(&mut rng, w, h, 0f32);
                let (kx, ky) = (kernel.kx().len(), kernel.ky().len());
                let mut scratch = vec![0.0; separable_scratch_len(w, kx, ky)];
                sep_filter_f32(
                    &host.view(),
                    &mut want.view_mut(),
                    &kernel,
                    border,
                    &mut scratch,
                )
                .unwrap();
                ctx.sep_filter_f32(&src, &mut dst, &kernel, border).unwrap();
                let what = format!("sep_filter_f32 {w}x{h} {kx}x{ky} {border:?}");
                assert_close(&download(&ctx, &dst), &want.pixels(), w, &what);
            }
        }
    }
}

#[test]
fn box_blur_matches_the_cpu_for_every_size() {
    let Some(ctx) = gpu("box_blur_matches_the_cpu_for_every_size") else {
        return;
    };
    let mut rng = Rng::new(5);
    for &(w, h) in SIZES {
        let host8 = random_u8(&mut rng, w, h);
        let hostf = random_f32(&mut rng, w, h);
        let (src8, srcf) = (upload(&ctx, &host8), upload(&ctx, &hostf));
        let mut dst8 = ctx.alloc::<u8>(w, h).unwrap();
        let mut dstf = ctx.alloc::<f32>(w, h).unwrap();
        for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
            let (b8, bf) = (borders_u8(&mut rng), borders_f32(&mut rng));
            let (b8, bf) = (b8[k % 3], bf[(k + 1) % 3]);
            let mut want8 = Host::filled(&mut rng, w, h, 0u8);
            let mut scratch = vec![0; separable_scratch_len(w, k, k)];
            box_blur_u8(&host8.view(), &mut want8.view_mut(), k, b8, &mut scratch).unwrap();
            ctx.box_blur_u8(&src8, &mut dst8, k, b8).unwrap();
            let what = format!("box_blur_u8 {w}x{h} k={k} {b8:?}");
            assert_exact(&download(&ctx, &dst8), &want8.pixels(), w, &what);

            let mut wantf = Host::filled(&mut rng, w, h, 0f32);
            let mut scratch = vec![0.0; separable_scratch_len(w, k, k)];
            box_blur_f32(&hostf.view(), &mut wantf.view_mut(), k, bf, &mut scratch).unwrap();
            ctx.box_blur_f32(&srcf, &mut dstf, k, bf).unwrap();
            let what = format!("box_blur_f32 {w}x{h} k={k} {bf:?}");
            assert_close(&download(&ctx, &dstf), &wantf.pixels(), w, &what);
        }
    }
}

#[test]
fn sobel_matches_the_cpu() {
    let Some(ctx) = gpu("sobel_matches_the_cpu") else {
        return;
    };
    let mut rng = Rng::new(6);
    for &(w, h) in SIZES {
        let host8 = random_u8(&mut rng, w, h);
        let hostf = random_f32(&mut rng, w, h);
        let (src8, srcf) = (upload(&ctx, &host8), upload(&ctx, &hostf));
        let (mut dx8, mut dy8) = (ctx.alloc::<i16>(w, h).unwrap(), ctx.alloc(w, h).unwrap());
        let (mut dxf, mut dyf) = (ctx.alloc::<f32>(w, h).unwrap(), ctx.alloc(w, h).unwrap());
        for (b8, bf) in borders_u8(&mut rng).into_iter().zip(borders_f32(&mut rng)) {
            let mut wx = Host::filled(&mut rng, w, h, 0i16);
            let mut wy = Host::filled(&mut rng, w, h, 0i16);
            let mut scratch = vec![0; separable_scratch_len(w, 3, 3)];
            sobel_u8(
                &host8.view(),
                &mut wx.view_mut(),
                &mut wy.view_mut(),
                b8,
                &mut scratch,
            )
            .unwrap();
            ctx.sobel_u8(&src8, &mut dx8, &mut dy8, b8).unwrap();
            assert_exact(
                &download(&ctx, &dx8),
                &wx.pixels(),
                w,
                &format!("sobel dx {b8:?}"),
            );
            assert_exact(
                &download(&ctx, &dy8),
                &wy.pixels(),
                w,
                &format!("sobel dy {b8:?}"),
            );

            let mut wx = Host::filled(&mut rng, w, h, 0f32);
            let mut wy = Host::filled(&mut rng, w, h, 0f32);
            let mut scratch = vec![0.0; separable_scratch_len(w, 3, 3)];
            sobel_f32(
                &hostf.view(),
                &mut wx.view_mut(),
                &mut wy.view_mut(),
                bf,
                &mut scratch,
            )
            .unwrap();
            ctx.sobel_f32(&srcf, &mut dxf, &mut dyf, bf).unwrap();
            assert_close(
                &download(&ctx, &dxf),
                &wx.pixels(),
                w,
                &format!("sobel dx {bf:?}"),
            );
            assert_close(
                &download(&ctx, &dyf),
                &wy.pixels(),
                w,
                &format!("sobel dy {bf:?}"),
            );
        }
    }
}

#[test]
fn gaussian_blur_matches_the_cpu() {
    let Some(ctx) = gpu("gaussian_blur_matches_the_cpu") else {
        return;
    };
    let mut rng = Rng::new(8);
    for &(w, h) in SIZES {
        let host8 = random_u8(&mut rng, w, h);
        let hostf = random_f32(&mut rng, w, h);
        let (src8, srcf) = (upload(&ctx, &host8), upload(&ctx, &hostf));
        let mut dst8 = ctx.alloc::<u8>(w, h).unwrap();
        let mut dstf = ctx.alloc::<f32>(w, h).unwrap();
        for (ksize, sigma) in [(0, 0.8f32), (5, 0.0), (7, 1.5), (0, 2.3), (15, 0.0)] {
            let mut scratch = vec![0; separable_scratch_len(w, 15, 15)];
            let mut want8 = Host::filled(&mut rng, w, h, 0u8);
            let b8 = Border::Reflect101;
            gaussian_blur_u8(
                &host8.view(),
                &mut want8.view_mut(),
                ksize,
                sigma,
                b8,
                &mut scratch,
            )
            .unwrap();
            ctx.gaussian_blur_u8(&src8, &mut dst8, ksize, sigma, b8)
                .unwrap();
            let what = format!("gaussian_blur_u8 {w}x{h} k={ksize} sigma={sigma}");
            assert_exact(&download(&ctx, &dst8), &want8.pixels(), w, &what);

            let mut scratch = vec![0.0; separable_scratch_len(w, 15, 15)];
            let mut wantf = Host::filled(&mut rng, w, h, 0f32);
            let bf = Border::Constant(0.25);
            gaussian_blur_f32(
                &hostf.view(),
                &mut wantf.view_mut(),
                ksize,
                sigma,
                bf,
                &mut scratch,
            )
            .unwrap();
            ctx.gaussian_blur_f32(&srcf, &mut dstf, ksize, sigma, bf)
                .unwrap();
            let what = format!("gaussian_blur_f32 {w}x{h} k={ksize} sigma={sigma}");
            assert_close(&download(&ctx, &dstf), &wantf.pixels(), w, &what);
        }
    }
    // Invalid parameters fail exactly as the core's kernel builders do.
    let src = ctx.alloc::<u8>(4, 4).unwrap();
    let mut dst = ctx.alloc::<u8>(4, 4).unwrap();
    let r = ctx.gaussian_blur_u8(&src, &mut dst, 0, 0.0, Border::Replicate);
    assert_eq!(
        r,
        Err(mvision_cuda::Error::Invalid(
            mvision_core::Error::InvalidArgument
        ))
    );
}

/// A chain of operations queued without waiting: the stream orders them, one download reads
/// the end result.
#[test]
fn queued_operations_run_in_order() {
    let Some(ctx) = gpu("queued_operations_run_in_order") else {
        return;
    };
    let mut rng = Rng::new(7);
    let (w, h) = (97, 61);
    let host = random_u8(&mut rng, w, h);
    let g = gaussian_kernel_q(5, 0.0).unwrap();
    let mut a = Host::filled(&mut rng, w, h, 0u8);
    let mut b = Host::filled(&mut rng, w, h, 0u8);
    let mut scratch = vec![0; separable_scratch_len(w, 15, 15)];
    sep_filter_u8(
        &host.view(),
        &mut a.view_mut(),
        &g,
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    box_blur_u8(
        &a.view(),
        &mut b.view_mut(),
        3,
        Border::Replicate,
        &mut scratch,
    )
    .unwrap();

    let src = upload(&ctx, &host);
    let mut t1 = ctx.alloc::<u8>(w, h).unwrap();
    let mut t2 = ctx.alloc::<u8>(w, h).unwrap();
    for _ in 0..5 {
        ctx.sep_filter_u8(&src, &mut t1, &g, Border::Reflect101)
            .unwrap();
        ctx.box_blur_u8(&t1, &mut t2, 3, Border::Replicate).unwrap();
    }
    assert_exact(&download(&ctx, &t2), &b.pixels(), w, "gaussian then box");
}

/// More distinct coefficient tables than the per-context cache holds, all queued before any
/// result is read: evicted tables must stay valid for the kernels queued before the eviction.
#[test]
fn many_distinct_kernels_queued_without_waiting() {
    let Some(ctx) = gpu("many_distinct_kernels_queued_without_waiting") else {
        return;
    };
    let mut rng = Rng::new(9);
    let (w, h) = (17, 13);
    let host = random_u8(&mut rng, w, h);
    let src = upload(&ctx, &host);
    let mut jobs = Vec::new();
    for i in 0..150 {
        let kx: Vec<i32> = (0..rng.odd_len()).map(|_| rng.int(-40, 40)).collect();
        let ky: Vec<i32> = (0..rng.odd_len()).map(|_| rng.int(-40, 40)).collect();
        let kernel = SepKernelQ::new(&kx, &ky, (i % 9) as u32).unwrap();
        let mut dst = ctx.alloc::<u8>(w, h).unwrap();
        ctx.sep_filter_u8(&src, &mut dst, &kernel, Border::Reflect101)
            .unwrap();
        jobs.push((kernel, dst));
    }
    for (i, (kernel, dst)) in jobs.iter().enumerate() {
        let mut want = Host::filled(&mut rng, w, h, 0u8);
        let (kx, ky) = (kernel.kx().len(), kernel.ky().len());
        let mut scratch = vec![0; separable_scratch_len(w, kx, ky)];
        sep_filter_u8(
            &host.view(),
            &mut want.view_mut(),
            kernel,
            Border::Reflect101,
            &mut scratch,
        )
        .unwrap();
        let what = format!("queued sep filter #{i}");
        assert_exact(&download(&ctx, dst), &want.pixels(), w, &what);
    }
}
