//! Device-to-device copies, the transfers' own checks, and zero-copy mapped images.

use mvision_core::filter::{box_blur_u8, separable_scratch_len};
use mvision_core::{Border, Error as CoreError, ImageViewMut};
use mvision_kernels::testing::{assert_exact, random_u8, HostImage, Rng};

use crate::{ctx_or_skip, download, upload};

#[test]
fn copies_round_trip_and_transfers_check_sizes() {
    let ctx = ctx_or_skip!("copies_round_trip_and_transfers_check_sizes");
    let mut rng = Rng::new(0x7a45);
    for (w, h) in [(1, 1), (2, 3), (97, 61), (640, 480)] {
        let src = random_u8(&mut rng, w, h);
        let d = upload(ctx, &src);
        let mut copy = ctx.alloc::<u8>(w, h).unwrap();
        ctx.copy(&d, &mut copy).unwrap();
        let mut out = HostImage::new(w, h, w + 5, 0xA5u8, || 0xA5);
        ctx.download(&copy, &mut out.view_mut()).unwrap();
        out.assert_gaps_untouched(&format!("copy {w}x{h}"));
        assert_exact(&out.packed(), &src.packed(), w, &format!("copy {w}x{h}"));
    }
    // The driver's own size checks (the runtime checks before it calls them); nothing written.
    let mismatch = Err(mvision_opencl::Error::Invalid(CoreError::SizeMismatch));
    let sentinel = HostImage::new(8, 6, 8, 77u8, || 77);
    let src = upload(ctx, &HostImage::new(9, 6, 9, 0, || 1u8));
    let mut dst = upload(ctx, &sentinel);
    assert_eq!(ctx.copy(&src, &mut dst), mismatch);
    let mut host = vec![0u8; 40];
    assert_eq!(
        ctx.download(&src, &mut ImageViewMut::packed(&mut host, 8, 5).unwrap()),
        mismatch
    );
    assert_eq!(
        ctx.upload(&sentinel.view(), &mut ctx.alloc::<u8>(8, 5).unwrap()),
        mismatch
    );
    assert_eq!(download(ctx, &dst), sentinel.data);
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
    let mut want = HostImage::new(w, h, w, 0u8, || 0);
    let mut scratch = vec![0; separable_scratch_len(w, 5, 5)];
    box_blur_u8(
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
