//! Buffers, transfers, mapped (zero-copy) images, and argument checks identical to the core.

use mvision_core::filter::{
    box_blur_u8, filter2d_scratch_len, filter2d_u8, separable_scratch_len, Kernel2dQ,
};
use mvision_core::integral::integral_u8;
use mvision_core::pyramid::{pyr_down_scratch_len, pyr_down_u8};
use mvision_core::Error as CoreError;
use mvision_cuda::Error;

use super::*;

#[test]
fn device_info_is_plausible() {
    let Some(ctx) = gpu("device_info_is_plausible") else {
        return;
    };
    let info = ctx.info();
    eprintln!("{info:?}, NVRTC target {}", ctx.target().arch_flag());
    assert!(!info.name.is_empty());
    assert!(info.compute_units > 0 && info.max_work_group_size >= 256);
    assert!(info.local_mem_bytes >= 16 * 1024 && info.global_mem_bytes > 0);
    assert!(info.compute_capability.0 >= 5);
    assert_eq!(devices().unwrap()[info.index], *info);
}

#[test]
fn strided_round_trip_leaves_row_gaps_alone() {
    let Some(ctx) = gpu("strided_round_trip_leaves_row_gaps_alone") else {
        return;
    };
    let mut rng = Rng::new(30);
    for &(w, h) in SIZES {
        for _ in 0..3 {
            let host = Host::from_fn(&mut rng, w, h, 0u16, |r| r.next_u64() as u16);
            let img = upload(&ctx, &host);
            let mut back = Host::from_fn(&mut rng, w, h, 0xBEEF, |_| 0xBEEF);
            let gaps_before: Vec<u16> = back.buf.clone();
            ctx.download(&img, &mut back.view_mut()).unwrap();
            assert_exact(&back.pixels(), &host.pixels(), w, &format!("u16 {w}x{h}"));
            for (i, (&b, &g)) in back.buf.iter().zip(&gaps_before).enumerate() {
                if i % back.stride >= w {
                    assert_eq!(b, g, "download wrote into a row gap at {i}");
                }
            }
        }
    }
}

#[test]
fn device_to_device_copy_and_mapped_images() {
    let Some(ctx) = gpu("device_to_device_copy_and_mapped_images") else {
        return;
    };
    let mut rng = Rng::new(31);
    let (w, h) = (97, 61);
    let host = random_u8(&mut rng, w, h);
    let src = upload(&ctx, &host);

    // Device → mapped → device.
    let mut mapped = ctx.alloc_mapped::<u8>(w, h).unwrap();
    assert!(mapped.is_host_mapped() && !src.is_host_mapped());
    ctx.copy(&src, &mut mapped).unwrap();
    let seen = ctx.map(&mut mapped).unwrap().as_slice().to_vec();
    assert_exact(&seen, &host.pixels(), w, "dtod into mapped");
    let mut dev = ctx.alloc::<u8>(w, h).unwrap();
    ctx.copy(&mapped, &mut dev).unwrap();
    assert_exact(&download(&ctx, &dev), &host.pixels(), w, "dtod from mapped");

    // The CPU writes the input in place, kernels read and write mapped memory.
    let mut input = ctx.alloc_mapped::<u8>(w, h).unwrap();
    {
        let mut m = ctx.map(&mut input).unwrap();
        let mut view = m.view_mut();
        for y in 0..h {
            view.row_mut(y).copy_from_slice(host.view().row(y));
        }
        m.unmap().unwrap();
    }
    let mut output = ctx.alloc_mapped::<u8>(w, h).unwrap();
    let kernel = Kernel2dQ::new(3, &[1, 2, 1, 2, 4, 2, 1, 2, 1], 4).unwrap();
    let mut want = Host::filled(&mut rng, w, h, 0u8);
    let mut scratch = vec![0; filter2d_scratch_len(w, 3)];
    filter2d_u8(
        &host.view(),
        &mut want.view_mut(),
        &kernel,
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    for variant in [Variant::Naive, Variant::default()] {
        ctx.filter2d_u8(&input, &mut output, &kernel, Border::Reflect101, variant)
            .unwrap();
        let got = ctx.map(&mut output).unwrap().view().as_slice().to_vec();
        assert_exact(
            &got,
            &want.pixels(),
            w,
            &format!("filter on mapped images, {variant:?}"),
        );
        assert_exact(
            &download(&ctx, &output),
            &want.pixels(),
            w,
            "download of a mapped image",
        );
    }
    let mut re = ctx.alloc_mapped::<u8>(w, h).unwrap();
    ctx.upload(&host.view(), &mut re).unwrap();
    assert_exact(
        &download(&ctx, &re),
        &host.pixels(),
        w,
        "upload into a mapped image",
    );
}

#[test]
fn map_of_a_device_image_writes_back() {
    let Some(ctx) = gpu("map_of_a_device_image_writes_back") else {
        return;
    };
    let mut rng = Rng::new(33);
    let host = random_f32(&mut rng, 17, 13);
    let mut img = upload(&ctx, &host);
    {
        let mut m = ctx.map(&mut img).unwrap();
        assert_eq!(m.as_slice(), &host.pixels()[..]);
        m.as_mut_slice()[0] = 42.0;
        // Dropped without `unmap`: the write-back still happens.
    }
    let mut want = host.pixels();
    want[0] = 42.0;
    assert_eq!(download(&ctx, &img), want);
    let mut m = ctx.map(&mut img).unwrap();
    m.view_mut().row_mut(12)[16] = -1.0;
    m.unmap().unwrap();
    want[12 * 17 + 16] = -1.0;
    assert_eq!(download(&ctx, &img), want);
}

#[test]
fn sizes_are_checked_like_the_core() {
    let Some(ctx) = gpu("sizes_are_checked_like_the_core") else {
        return;
    };
    let mut rng = Rng::new(32);
    let inv = |e: CoreError| Err::<(), _>(Error::Invalid(e));

    // Allocation: zero sizes, more than i32::MAX elements.
    assert_eq!(
        ctx.alloc::<u8>(0, 5).unwrap_err(),
        Error::Invalid(CoreError::ZeroSize)
    );
    assert_eq!(
        ctx.alloc::<u8>(1 << 16, 1 << 15).unwrap_err(),
        Error::Invalid(CoreError::Overflow)
    );

    let host = random_u8(&mut rng, 9, 7);
    let src = upload(&ctx, &host);
    let mut wrong = ctx.alloc::<u8>(9, 6).unwrap();
    let mut cpu_wrong = Host::filled(&mut rng, 9, 6, 0u8);
    let k3 = Kernel2dQ::new(3, &[0, 0, 0, 0, 1, 0, 0, 0, 0], 0).unwrap();

    // Same error as the core for the same mistake.
    let mut scratch = vec![0; filter2d_scratch_len(9, 15)];
    let core = filter2d_u8(
        &host.view(),
        &mut cpu_wrong.view_mut(),
        &k3,
        Border::Replicate,
        &mut scratch,
    );
    assert_eq!(core, Err(CoreError::SizeMismatch));
    for variant in VARIANTS.iter().copied() {
        let gpu = ctx.filter2d_u8(&src, &mut wrong, &k3, Border::Replicate, variant);
        assert_eq!(gpu, inv(CoreError::SizeMismatch));
    }
    let mut scratch = vec![0; separable_scratch_len(9, 15, 15)];
    for ksize in [0, 4, 17] {
        let mut ok = Host::filled(&mut rng, 9, 7, 0u8);
        let core = box_blur_u8(
            &host.view(),
            &mut ok.view_mut(),
            ksize,
            Border::Replicate,
            &mut scratch,
        );
        let mut dst = ctx.alloc::<u8>(9, 7).unwrap();
        let gpu = ctx.box_blur_u8(&src, &mut dst, ksize, Border::Replicate);
        assert_eq!(gpu, core.map_err(Error::Invalid), "box ksize {ksize}");
        assert!(gpu.is_err());
    }
    let mut scratch = vec![0; pyr_down_scratch_len(9)];
    let core = pyr_down_u8(
        &host.view(),
        &mut cpu_wrong.view_mut(),
        Border::Replicate,
        &mut scratch,
    );
    let gpu = ctx.pyr_down_u8(&src, &mut wrong, Border::Replicate);
    assert_eq!(gpu, core.map_err(Error::Invalid));
    assert!(gpu.is_err());

    let mut cpu_sum = Host::filled(&mut rng, 10, 7, 0u32);
    let mut sum = ctx.alloc::<u32>(10, 7).unwrap();
    let core = integral_u8(&host.view(), &mut cpu_sum.view_mut(), None);
    assert_eq!(
        ctx.integral_u8(&src, &mut sum, None),
        core.map_err(Error::Invalid)
    );
    assert_eq!(core, Err(CoreError::SizeMismatch));

    let (mut dx, mut dy) = (
        ctx.alloc::<i16>(9, 7).unwrap(),
        ctx.alloc::<i16>(8, 7).unwrap(),
    );
    assert_eq!(
        ctx.sobel_u8(&src, &mut dx, &mut dy, Border::Replicate),
        inv(CoreError::SizeMismatch)
    );

    let mut small = Host::filled(&mut rng, 9, 6, 0u8);
    assert_eq!(
        ctx.upload(&small.view(), &mut ctx.alloc(9, 7).unwrap()),
        inv(CoreError::SizeMismatch)
    );
    assert_eq!(
        ctx.download(&src, &mut small.view_mut()),
        inv(CoreError::SizeMismatch)
    );
    assert_eq!(ctx.copy(&src, &mut wrong), inv(CoreError::SizeMismatch));
}

#[test]
fn tiles_the_device_cannot_run_are_refused() {
    let Some(ctx) = gpu("tiles_the_device_cannot_run_are_refused") else {
        return;
    };
    let src = ctx.alloc::<u8>(16, 16).unwrap();
    let mut dst = ctx.alloc::<u8>(16, 16).unwrap();
    let k = Kernel2dQ::new(1, &[1], 0).unwrap();
    let run = |w, h, dst: &mut DeviceImage<u8>| {
        ctx.filter2d_u8(&src, dst, &k, Border::Replicate, Variant::Tiled { w, h })
    };
    for (w, h) in [(0, 4), (4, 0)] {
        assert_eq!(
            run(w, h, &mut dst),
            Err(Error::Invalid(CoreError::ZeroSize))
        );
    }
    for (w, h) in [(64, 64), (2048, 1), (1, 2048)] {
        assert!(
            matches!(run(w, h, &mut dst), Err(Error::Device { code: 1, .. })),
            "tile {w}x{h}"
        );
    }
    // Odd tiles that fit are fine, and so is compiling ahead.
    run(7, 3, &mut dst).unwrap();
    ctx.prepare(
        mvision_cuda::KernelSet::Filter,
        mvision_cuda::Tile::new(32, 32),
    )
    .unwrap();
    assert_eq!(ctx.default_tile(), mvision_cuda::Tile::DEFAULT);
    ctx.sync().unwrap();
}

#[test]
fn a_compile_error_on_the_device_carries_the_log() {
    let Some(ctx) = gpu("a_compile_error_on_the_device_carries_the_log") else {
        return;
    };
    ctx.build_custom("extern \"C\" __global__ void fine(int* p) { p[0] = 1; }")
        .unwrap();
    match ctx.build_custom("extern \"C\" __global__ void bad() { no_such_fn(); }") {
        Err(Error::KernelBuild { kernel, log }) => {
            assert!(kernel.contains("custom"), "{kernel}");
            assert!(log.contains("no_such_fn"), "{log}");
        }
        other => panic!("expected KernelBuild, got {other:?}"),
    }
}

#[test]
fn images_of_another_context_are_refused() {
    let Some(a) = gpu("images_of_another_context_are_refused") else {
        return;
    };
    let b = Context::new(a.info().index).unwrap();
    let img_a = a.alloc::<u8>(4, 4).unwrap();
    let mut img_b = b.alloc::<u8>(4, 4).unwrap();
    let foreign = |r: mvision_cuda::Result<()>| {
        matches!(r, Err(Error::Invalid(mvision_core::Error::InvalidArgument)))
    };
    assert!(foreign(b.copy(&img_a, &mut img_b)));
    assert!(foreign(a.box_blur_u8(
        &img_a,
        &mut img_b,
        3,
        Border::Replicate
    )));
    // Dropping images after their context is fine: they keep the CUDA context alive.
    drop(a);
    drop(img_a);
    b.sync().unwrap();
}
