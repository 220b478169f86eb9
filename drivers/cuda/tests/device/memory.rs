//! Device attributes, device-to-device copies, mapped (zero-copy) and staged maps, the
//! transfers' own checks, images of a foreign context, NVRTC logs.

use mvision_core::filter::{filter2d_scratch_len, filter2d_u8, Kernel2dQ};
use mvision_core::{Border, Error as CoreError};
use mvision_cuda::{Error, KernelSet, Tile, Variant};
use mvision_kernels::testing::{assert_exact, random_f32, random_u8, HostImage, Rng};

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
    assert_exact(&seen, &host.packed(), w, "dtod into mapped");
    let mut dev = ctx.alloc::<u8>(w, h).unwrap();
    ctx.copy(&mapped, &mut dev).unwrap();
    assert_exact(&download(&ctx, &dev), &host.packed(), w, "dtod from mapped");

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
    let mut want = HostImage::filled(&mut rng, w, h, 0u8);
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
            &want.packed(),
            w,
            &format!("filter on mapped images, {variant:?}"),
        );
        assert_exact(
            &download(&ctx, &output),
            &want.packed(),
            w,
            "download of a mapped image",
        );
    }
    let mut re = ctx.alloc_mapped::<u8>(w, h).unwrap();
    ctx.upload(&host.view(), &mut re).unwrap();
    assert_exact(
        &download(&ctx, &re),
        &host.packed(),
        w,
        "upload into a mapped image",
    );

    // The driver's own size checks (the runtime checks before it calls them); nothing written.
    let mismatch = Err(Error::Invalid(CoreError::SizeMismatch));
    let sentinel = HostImage::new(8, 6, 8, 77u8, || 77);
    let mut wrong = upload(&ctx, &sentinel);
    let src = upload(&ctx, &random_u8(&mut rng, 9, 6));
    assert_eq!(ctx.copy(&src, &mut wrong), mismatch);
    let mut small = HostImage::filled(&mut rng, 9, 5, 0u8);
    assert_eq!(ctx.download(&src, &mut small.view_mut()), mismatch);
    assert_eq!(
        ctx.upload(&small.view(), &mut ctx.alloc(9, 6).unwrap()),
        mismatch
    );
    assert_eq!(download(&ctx, &wrong), sentinel.data);
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
        assert_eq!(m.as_slice(), &host.packed()[..]);
        m.as_mut_slice()[0] = 42.0;
        // Dropped without `unmap`: the write-back still happens.
    }
    let mut want = host.packed();
    want[0] = 42.0;
    assert_eq!(download(&ctx, &img), want);
    let mut m = ctx.map(&mut img).unwrap();
    m.view_mut().row_mut(12)[16] = -1.0;
    m.unmap().unwrap();
    want[12 * 17 + 16] = -1.0;
    assert_eq!(download(&ctx, &img), want);
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
    // The library's own programs compile ahead of use, for any tile the device can run.
    assert_eq!(ctx.default_tile(), Tile::DEFAULT);
    for set in KernelSet::ALL {
        ctx.prepare(set, ctx.default_tile()).unwrap();
    }
    ctx.prepare(KernelSet::Filter, Tile::new(32, 32)).unwrap();
    ctx.sync().unwrap();
}

#[test]
fn images_of_another_context_are_refused() {
    let Some(a) = gpu("images_of_another_context_are_refused") else {
        return;
    };
    let b = Context::new(a.info().index).unwrap();
    let img_a = a.alloc::<u8>(4, 4).unwrap();
    let mut img_b = b.alloc::<u8>(4, 4).unwrap();
    let foreign =
        |r: mvision_cuda::Result<()>| matches!(r, Err(Error::Invalid(CoreError::InvalidArgument)));
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
