//! Transfers, zero-copy mapping, device enumeration, and the error paths: validation identical
//! to the core (and nothing written on error), tile limits, compiler errors.

use mvision_core::filter::{Kernel2dF32, Kernel2dQ, SepKernelQ};
use mvision_core::{Border, Error as CoreError, ImageViewMut};
use mvision_opencl::{devices, Context, Error, Variant};
use opencl_codes::CL_INVALID_WORK_GROUP_SIZE;

use crate::common::*;
use crate::ctx_or_skip;

mod opencl_codes {
    /// `CL_INVALID_WORK_GROUP_SIZE` (the tests do not depend on opencl3 directly).
    pub const CL_INVALID_WORK_GROUP_SIZE: i32 = -54;
}

#[test]
fn devices_are_described() {
    let ctx = ctx_or_skip!("devices_are_described");
    let all = devices().unwrap();
    assert!(!all.is_empty());
    for (i, d) in all.iter().enumerate() {
        assert_eq!(d.index, i);
        assert!(!d.platform.is_empty() && !d.name.is_empty(), "{d:?}");
        assert!(d.compute_units >= 1 && d.max_work_group_size >= 1, "{d:?}");
        assert!(d.local_mem_bytes > 0 && d.max_alloc_bytes > 0, "{d:?}");
    }
    assert!(all.contains(ctx.info()));
    eprintln!(
        "OpenCL device: {} ({}, {} CU, {} KiB local, max group {}, unified {})",
        ctx.info().full_name(),
        ctx.info().kind.name(),
        ctx.info().compute_units,
        ctx.info().local_mem_bytes / 1024,
        ctx.info().max_work_group_size,
        ctx.info().unified_memory
    );
    assert!(matches!(
        Context::new(all.len()),
        Err(Error::Unavailable(_))
    ));
}

#[test]
fn strided_upload_download_and_copy_round_trip() {
    let ctx = ctx_or_skip!("strided_upload_download_and_copy_round_trip");
    let mut rng = Rng::new(0x7a45);
    for (w, h) in SIZES {
        // Source rows 0..3 elements apart beyond the width, destination with a wider stride
        // whose gaps hold a sentinel that must survive the download.
        let src = HostImage::new(w, h, w + 3, || rng.u8());
        let d = upload(ctx, &src);
        let mut copy = ctx.alloc::<u8>(w, h).unwrap();
        ctx.copy(&d, &mut copy).unwrap();
        let mut out = HostImage::new(w, h, w + 5, || 0xA5u8);
        ctx.download(&copy, &mut out.view_mut()).unwrap();
        assert_eq!(out.packed(), src.packed(), "{w}x{h}");
        for y in 0..h - 1 {
            let gap = &out.data[y * out.stride + w..(y + 1) * out.stride];
            assert!(
                gap.iter().all(|&v| v == 0xA5),
                "row gap {y} written ({w}x{h})"
            );
        }
        // Every pixel type round-trips.
        let f = HostImage::new(w, h, w + 1, || rng.f32(-1e6, 1e6));
        assert_eq!(download(ctx, &upload(ctx, &f)), f.packed());
        let q = HostImage::new(w, h, w, || rng.next_u64());
        assert_eq!(download(ctx, &upload(ctx, &q)), q.packed());
        let s = HostImage::new(w, h, w + 2, || rng.next_u64() as i16);
        assert_eq!(download(ctx, &upload(ctx, &s)), s.packed());
    }
}

#[test]
fn mapped_images_round_trip_without_copies() {
    let ctx = ctx_or_skip!("mapped_images_round_trip_without_copies");
    let mut rng = Rng::new(0x3a99);
    let (w, h) = (97, 61);
    let mut src = ctx.alloc_mapped::<u8>(w, h).unwrap();
    let mut dst = ctx.alloc_mapped::<u8>(w, h).unwrap();
    assert!(src.is_host_mapped());
    let host = random_u8(&mut rng, w, h);
    let first_ptr = {
        let mut m = ctx.map(&mut src).unwrap();
        let mut v = m.view_mut();
        for y in 0..h {
            v.row_mut(y).copy_from_slice(host.view().row(y));
        }
        let p = m.as_slice().as_ptr();
        m.unmap().unwrap();
        p
    };
    ctx.box_blur_u8(&src, &mut dst, 5, Border::Reflect101)
        .unwrap();
    let mut want = zeros::<u8>(w, h);
    let mut scratch = vec![0; mvision_core::filter::separable_scratch_len(w, 5, 5)];
    mvision_core::filter::box_blur_u8(
        &host.view(),
        &mut want.view_mut(),
        5,
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    {
        let m = ctx.map(&mut dst).unwrap();
        assert_exact(
            m.as_slice(),
            &want.data,
            w,
            "box blur through mapped images",
        );
        assert_eq!(m.view().size(), (w, h));
    } // unmapped by drop
    let again = ctx.map(&mut src).unwrap();
    assert_eq!(
        again.view().row(3),
        host.view().row(3),
        "mapped input survived the kernel"
    );
    if ctx.info().unified_memory {
        // Zero copy: the host sees the buffer's own memory, at the same place every time.
        assert_eq!(again.as_slice().as_ptr(), first_ptr);
    }
    drop(again);
    // Plain images can be mapped too, and downloads of mapped images work as usual.
    assert_eq!(download(ctx, &dst), want.data);
}

#[test]
fn sizes_are_validated_like_the_core_and_nothing_is_written() {
    let ctx = ctx_or_skip!("sizes_are_validated_like_the_core_and_nothing_is_written");
    let sentinel = HostImage::new(8, 6, 8, || 77u8);
    let src = upload(ctx, &HostImage::new(9, 6, 9, || 1u8));
    let mut dst = upload(ctx, &sentinel);
    let mismatch = Err(Error::Invalid(CoreError::SizeMismatch));
    let k3 = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    let b = Border::Replicate;
    assert_eq!(
        ctx.filter2d_u8(&src, &mut dst, &k3, b, Variant::Naive),
        mismatch
    );
    assert_eq!(
        ctx.filter2d_u8(&src, &mut dst, &k3, b, Variant::default()),
        mismatch
    );
    let sep = SepKernelQ::new(&[1, 2, 1], &[1, 2, 1], 4).unwrap();
    assert_eq!(ctx.sep_filter_u8(&src, &mut dst, &sep, b), mismatch);
    assert_eq!(ctx.box_blur_u8(&src, &mut dst, 3, b), mismatch);
    assert_eq!(ctx.gaussian_blur_u8(&src, &mut dst, 3, 0.0, b), mismatch);
    assert_eq!(ctx.pyr_down_u8(&src, &mut dst, b), mismatch);
    assert_eq!(ctx.copy(&src, &mut dst), mismatch);
    // Bad kernel sizes are reported before sizes, as the core orders its checks.
    assert_eq!(
        ctx.box_blur_u8(&src, &mut dst, 0, b),
        Err(Error::Invalid(CoreError::ZeroSize))
    );
    assert_eq!(
        ctx.box_blur_u8(&src, &mut dst, 4, b),
        Err(Error::Invalid(CoreError::InvalidKernel))
    );
    assert_eq!(
        ctx.box_blur_f32(
            &ctx.alloc(3, 3).unwrap(),
            &mut ctx.alloc(3, 3).unwrap(),
            17,
            Border::Replicate
        ),
        Err(Error::Invalid(CoreError::InvalidKernel))
    );
    assert_eq!(
        ctx.gaussian_blur_u8(&src, &mut dst, 0, 0.0, b),
        Err(Error::Invalid(CoreError::InvalidArgument))
    );
    let (mut dx, mut dy) = (
        ctx.alloc::<i16>(9, 6).unwrap(),
        ctx.alloc::<i16>(9, 5).unwrap(),
    );
    assert_eq!(ctx.sobel_u8(&src, &mut dx, &mut dy, b), mismatch);
    let mut sum = ctx.alloc::<u32>(10, 7).unwrap();
    let mut bad_sq = ctx.alloc::<u64>(10, 6).unwrap();
    assert_eq!(ctx.integral_u8(&src, &mut sum, Some(&mut bad_sq)), mismatch);
    let mut bad_sum = ctx.alloc::<u32>(9, 6).unwrap();
    assert_eq!(ctx.integral_u8(&src, &mut bad_sum, None), mismatch);
    let f = ctx.alloc::<f32>(4, 4).unwrap();
    let mut g = ctx.alloc::<f32>(4, 5).unwrap();
    let kf = Kernel2dF32::new(1, &[1.0]).unwrap();
    assert_eq!(
        ctx.filter2d_f32(&f, &mut g, &kf, Border::Replicate, Variant::Naive),
        mismatch
    );
    let mut host = vec![0u8; 40];
    let mut wrong = ImageViewMut::packed(&mut host, 8, 5).unwrap();
    assert_eq!(ctx.download(&src, &mut wrong), mismatch);
    assert_eq!(
        ctx.upload(&sentinel.view(), &mut ctx.alloc::<u8>(8, 5).unwrap()),
        mismatch
    );
    // Nothing was enqueued: the destination still holds its sentinel.
    assert_eq!(download(ctx, &dst), sentinel.data);

    assert_eq!(
        ctx.alloc::<u8>(0, 5).err(),
        Some(Error::Invalid(CoreError::ZeroSize))
    );
    assert_eq!(
        ctx.alloc::<u8>(65536, 65536).err(),
        Some(Error::Invalid(CoreError::Overflow)),
        "element counts beyond i32 are refused (kernels index with int)"
    );
}

#[test]
fn integral_refuses_images_whose_sum_could_overflow() {
    let ctx = ctx_or_skip!("integral_refuses_images_whose_sum_could_overflow");
    let (w, h) = (4105, 4104); // 16 846 920 pixels > u32::MAX / 255 = 16 843 009
    let src = ctx.alloc::<u8>(w, h).unwrap();
    let mut sum = ctx.alloc::<u32>(w + 1, h + 1).unwrap();
    assert_eq!(
        ctx.integral_u8(&src, &mut sum, None),
        Err(Error::Invalid(CoreError::Overflow))
    );
}

#[test]
fn images_of_another_context_are_refused() {
    let ctx = ctx_or_skip!("images_of_another_context_are_refused");
    let other = Context::new(ctx.info().index).unwrap();
    let foreign = other.alloc::<u8>(4, 4).unwrap();
    let mut mine = ctx.alloc::<u8>(4, 4).unwrap();
    assert_eq!(
        ctx.copy(&foreign, &mut mine),
        Err(Error::Invalid(CoreError::InvalidArgument))
    );
    assert_eq!(
        ctx.box_blur_u8(&foreign, &mut mine, 3, Border::Replicate),
        Err(Error::Invalid(CoreError::InvalidArgument))
    );
}

#[test]
fn tiles_beyond_the_device_limits_fail_clearly() {
    let ctx = ctx_or_skip!("tiles_beyond_the_device_limits_fail_clearly");
    let src = ctx.alloc::<u8>(16, 16).unwrap();
    let mut dst = ctx.alloc::<u8>(16, 16).unwrap();
    let k = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    let b = Border::Reflect101;
    assert_eq!(
        ctx.filter2d_u8(&src, &mut dst, &k, b, Variant::Tiled { w: 0, h: 4 }),
        Err(Error::Invalid(CoreError::ZeroSize))
    );
    let max = ctx.info().max_work_group_size;
    let err = ctx
        .filter2d_u8(&src, &mut dst, &k, b, Variant::Tiled { w: max, h: 2 })
        .unwrap_err();
    match &err {
        Error::Device { call, code } => {
            assert_eq!(*code, CL_INVALID_WORK_GROUP_SIZE);
            assert!(call.contains("tile"), "{call}");
        }
        other => panic!("expected a work-group error, got {other:?}"),
    }
    assert!(
        err.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"),
        "{err}"
    );
}

#[test]
fn compiler_errors_carry_the_build_log() {
    let ctx = ctx_or_skip!("compiler_errors_carry_the_build_log");
    let broken = "__kernel void broken(__global int* p) { p[0] = mv_no_such_symbol; }";
    match ctx.build_custom(broken) {
        Err(Error::KernelBuild { kernel, log }) => {
            assert_eq!(kernel, "custom");
            assert!(
                log.contains("mv_no_such_symbol"),
                "log lacks the culprit:\n{log}"
            );
        }
        other => panic!("expected KernelBuild, got {other:?}"),
    }
    ctx.build_custom("__kernel void fine(__global int* p) { p[0] = 1; }")
        .unwrap();
}
