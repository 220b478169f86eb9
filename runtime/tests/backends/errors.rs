//! Invalid calls: every backend rejects what the core rejects, with the core's error, and writes
//! nothing; the device limits of the GPU backends.

use mvision_core::filter::{
    self as f, filter2d_scratch_len, separable_scratch_len, Kernel2dF32, Kernel2dQ, SepKernelQ,
};
use mvision_core::integral::integral_u8;
use mvision_core::pyramid::{pyr_down_scratch_len, pyr_down_u8};
use mvision_core::{Border, Error as CoreError, ImageViewMut};
use mvision_kernels::testing::{random_u8, HostImage, Rng};
use mvision_runtime::{ops, Backend, ErrorKind, Image, Result};

use crate::{alloc, contexts, download, gpu_contexts, upload, VARIANTS};

/// `got` failed as the core did (`want`), on `backend`.
#[track_caller]
fn assert_invalid(got: Result<()>, want: std::result::Result<(), CoreError>, what: &str) {
    let want = want.expect_err("the core accepts what was meant to be invalid");
    match got {
        Err(e) => assert_eq!(e.kind(), ErrorKind::Invalid(want), "{what}: {e}"),
        Ok(()) => panic!("{what}: accepted, the core says {want:?}"),
    }
}

#[test]
fn sizes_are_validated_like_the_core_and_nothing_is_written() {
    let mut rng = Rng::new(0x5e27);
    let host = random_u8(&mut rng, 9, 6);
    // What the core says about an 8 × 6 destination for a 9 × 6 source, and about bad kernels.
    let mut wrong = HostImage::filled(&mut rng, 8, 6, 0u8);
    let mut right = HostImage::filled(&mut rng, 9, 6, 0u8);
    let k3 = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    let kf = Kernel2dF32::new(1, &[1.0]).unwrap();
    let sep = SepKernelQ::new(&[1, 2, 1], &[1, 2, 1], 4).unwrap();
    let b = Border::Replicate;
    let mut scratch = vec![0; filter2d_scratch_len(9, 15).max(separable_scratch_len(9, 17, 17))];
    let (src_v, mut wrong_v) = (host.view(), wrong.view_mut());
    let dense = f::filter2d_u8(&src_v, &mut wrong_v, &k3, b, &mut scratch);
    let separable = f::sep_filter_u8(&src_v, &mut wrong_v, &sep, b, &mut scratch);
    let boxed =
        |k, dst: &mut ImageViewMut<'_, u8>, s: &mut [i32]| f::box_blur_u8(&src_v, dst, k, b, s);
    let box3 = boxed(3, &mut wrong_v, &mut scratch);
    let box_cases = [0, 4, 17].map(|k| (k, boxed(k, &mut right.view_mut(), &mut scratch)));
    let gauss = f::gaussian_blur_u8(&src_v, &mut wrong_v, 3, 0.0, b, &mut scratch);
    let gauss00 = f::gaussian_blur_u8(&src_v, &mut right.view_mut(), 0, 0.0, b, &mut scratch);
    let mut pscratch = vec![0; pyr_down_scratch_len(9)];
    let pyr = pyr_down_u8(&src_v, &mut wrong_v, b, &mut pscratch);
    let mut bad_sum = HostImage::filled(&mut rng, 9, 6, 0u32);
    let integral = integral_u8(&src_v, &mut bad_sum.view_mut(), None);

    for (bk, ctx) in contexts() {
        let name = bk.name();
        let src = upload(ctx, *bk, &host);
        let sentinel = HostImage::new(8, 6, 8, 77u8, || 77);
        let mut dst = upload(ctx, *bk, &sentinel);
        for v in VARIANTS {
            let r = ops::filter2d_u8(&src, &mut dst, &k3, b, v);
            assert_invalid(r, dense, &format!("{name} filter2d_u8 {v:?}"));
        }
        let (f1, mut f2) = (
            alloc::<f32>(ctx, *bk, (4, 4)),
            alloc::<f32>(ctx, *bk, (4, 5)),
        );
        let r = ops::filter2d_f32(&f1, &mut f2, &kf, Border::Replicate, VARIANTS[0]);
        assert_invalid(
            r,
            Err(CoreError::SizeMismatch),
            &format!("{name} filter2d_f32"),
        );
        let r = ops::sep_filter_u8(&src, &mut dst, &sep, b);
        assert_invalid(r, separable, &format!("{name} sep_filter_u8"));
        assert_invalid(
            ops::box_blur_u8(&src, &mut dst, 3, b),
            box3,
            &format!("{name} box"),
        );
        // Bad kernel sizes come before sizes, as the core orders its checks.
        for (k, core) in box_cases {
            let r = ops::box_blur_u8(&src, &mut dst, k, b);
            assert_invalid(r, core, &format!("{name} box k{k}"));
        }
        let (f1, mut f2) = (
            alloc::<f32>(ctx, *bk, (3, 3)),
            alloc::<f32>(ctx, *bk, (3, 3)),
        );
        let r = ops::box_blur_f32(&f1, &mut f2, 17, Border::Replicate);
        assert_invalid(
            r,
            Err(CoreError::InvalidKernel),
            &format!("{name} box_f32 k17"),
        );
        let r = ops::gaussian_blur_u8(&src, &mut dst, 3, 0.0, b);
        assert_invalid(r, gauss, &format!("{name} gaussian"));
        let r = ops::gaussian_blur_u8(&src, &mut dst, 0, 0.0, b);
        assert_invalid(r, gauss00, &format!("{name} gaussian k0 s0"));
        assert_invalid(
            ops::pyr_down_u8(&src, &mut dst, b),
            pyr,
            &format!("{name} pyr_down"),
        );
        let (mut dx, mut dy) = (
            alloc::<i16>(ctx, *bk, (9, 6)),
            alloc::<i16>(ctx, *bk, (9, 5)),
        );
        let r = ops::sobel_u8(&src, &mut dx, &mut dy, b);
        assert_invalid(r, Err(CoreError::SizeMismatch), &format!("{name} sobel"));
        let mut sum = alloc::<u32>(ctx, *bk, (10, 7));
        let mut bad_sq = alloc::<u64>(ctx, *bk, (10, 6));
        let r = ops::integral_u8(&src, &mut sum, Some(&mut bad_sq));
        assert_invalid(
            r,
            Err(CoreError::SizeMismatch),
            &format!("{name} integral sq"),
        );
        let mut bad = alloc::<u32>(ctx, *bk, (9, 6));
        let r = ops::integral_u8(&src, &mut bad, None);
        assert_invalid(r, integral, &format!("{name} integral"));
        let mut host_wrong = vec![0u8; 40];
        let r = src.download(&mut ImageViewMut::packed(&mut host_wrong, 8, 5).unwrap());
        assert_invalid(r, Err(CoreError::SizeMismatch), &format!("{name} download"));
        let r = alloc::<u8>(ctx, *bk, (8, 5)).upload(&sentinel.view());
        assert_invalid(r, Err(CoreError::SizeMismatch), &format!("{name} upload"));
        // Nothing was enqueued: the destination still holds its sentinel.
        assert_eq!(
            download(*bk, &dst),
            sentinel.data,
            "{name}: written on error"
        );
    }
}

#[test]
fn integral_refuses_images_whose_sum_could_overflow() {
    let (w, h) = (4105, 4104); // 16 846 920 pixels > u32::MAX / 255 = 16 843 009
    let host = HostImage::new(w, h, w, 0u8, || 0);
    let mut sum = HostImage::new(w + 1, h + 1, w + 1, 0u32, || 0);
    let core = integral_u8(&host.view(), &mut sum.view_mut(), None);
    assert_eq!(core, Err(CoreError::Overflow));
    for (b, ctx) in contexts() {
        let src = alloc::<u8>(ctx, *b, (w, h));
        let mut sum = alloc::<u32>(ctx, *b, (w + 1, h + 1));
        let r = ops::integral_u8(&src, &mut sum, None);
        assert_invalid(r, core, &format!("{} integral of {w}x{h}", b.name()));
    }
}

#[test]
fn tiles_beyond_the_device_limits_are_refused() {
    let k = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    let b = Border::Reflect101;
    for (bk, ctx) in contexts() {
        let src = alloc::<u8>(ctx, *bk, (16, 16));
        let mut dst = alloc::<u8>(ctx, *bk, (16, 16));
        let run = |dst: &mut Image<u8>, w, h| {
            ops::filter2d_u8(&src, dst, &k, b, mvision_runtime::Variant::Tiled { w, h })
        };
        if *bk == Backend::Cpu {
            // The CPU has no work-groups: it ignores the variant.
            run(&mut dst, 0, 4).unwrap();
            continue;
        }
        for (w, h) in [(0, 4), (4, 0)] {
            let e = run(&mut dst, w, h).unwrap_err();
            let what = format!("{} tile {w}x{h}", bk.name());
            assert_eq!(
                e.kind(),
                ErrorKind::Invalid(CoreError::ZeroSize),
                "{what}: {e}"
            );
        }
        // No device has work-groups this long or this large.
        for (w, h) in [(1 << 20, 1), (1, 1 << 20), (usize::MAX / 2, 4)] {
            let e = run(&mut dst, w, h).unwrap_err();
            let what = format!("{} tile {w}x{h}", bk.name());
            assert_eq!(e.kind(), ErrorKind::Device, "{what}: {e}");
            assert!(e.detail().contains("tile"), "{what}: {e}");
        }
    }
}

#[test]
fn device_images_are_limited_to_int_indices() {
    for (b, ctx) in gpu_contexts() {
        // 2³¹ elements: one more than the kernels' `int` indices reach.
        let e = Image::<u8>::new(ctx, *b, 1 << 16, 1 << 15).err().unwrap();
        assert_eq!(
            e.kind(),
            ErrorKind::Invalid(CoreError::Overflow),
            "{}: {e}",
            b.name()
        );
    }
    for (b, ctx) in contexts() {
        let e = Image::<u8>::new(ctx, *b, 0, 5).err().unwrap();
        assert_eq!(
            e.kind(),
            ErrorKind::Invalid(CoreError::ZeroSize),
            "{}: {e}",
            b.name()
        );
    }
}

#[test]
fn mixing_backends_in_one_call_is_rejected() {
    let ctxs = contexts();
    let Some((b, ctx)) = gpu_contexts().next() else {
        eprintln!("backends: no GPU backend present; mismatch test needs two backends");
        return;
    };
    let cpu = &ctxs[0].1;
    let a = Image::<u8>::new(cpu, Backend::Cpu, 8, 8).unwrap();
    let mut o = Image::<u8>::new(ctx, *b, 8, 8).unwrap();
    let e = ops::box_blur_u8(&a, &mut o, 3, Border::Replicate).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackendMismatch);
}
