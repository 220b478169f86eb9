//! Moving pixels in and out of every backend, and operations queued without waiting.

use mvision_core::filter::{self as f, gaussian_kernel_q, separable_scratch_len, SepKernelQ};
use mvision_core::Border;
use mvision_kernels::testing::{assert_exact, random_stride, random_u8, HostImage, Rng};
use mvision_runtime::ops;

use crate::{alloc, contexts, download, upload, Sentinel, SIZES};

/// Uploads random `T` images with random strides and garbage in their gaps, and downloads them
/// into views whose gaps hold the sentinel: the pixels come back, no gap is read or written.
fn round_trip<T: Sentinel>(rng: &mut Rng, mut pixel: impl FnMut(&mut Rng) -> T, gap: T) {
    for (w, h) in SIZES {
        let stride = random_stride(rng, w);
        let host = HostImage::new(w, h, stride, gap, || pixel(rng));
        for (b, ctx) in contexts() {
            let img = upload(ctx, *b, &host);
            let what = format!("{} {:?} {w}x{h} stride {stride}", b.name(), T::FORMAT);
            assert_exact(&download(*b, &img), &host.packed(), w, &what);
        }
    }
}

#[test]
fn every_pixel_type_round_trips_through_strided_views() {
    let mut rng = Rng::new(0x7a45);
    round_trip(&mut rng, |r| r.u8(), 0x5A);
    round_trip(&mut rng, |r| r.next_u64() as u16, 0x5A5A);
    round_trip(&mut rng, |r| r.next_u64() as i16, -1);
    round_trip(&mut rng, |r| r.next_u64() as u32, 7);
    round_trip(&mut rng, |r| r.next_u64(), 9);
    round_trip(&mut rng, |r| r.f32_in(-1e6, 1e6), f32::INFINITY);
}

/// A chain of operations queued without waiting: the queue orders them, one download reads the
/// end result.
#[test]
fn queued_operations_run_in_order() {
    let mut rng = Rng::new(7);
    let (w, h) = (97, 61);
    let host = random_u8(&mut rng, w, h);
    let g = gaussian_kernel_q(5, 0.0).unwrap();
    let mut a = HostImage::filled(&mut rng, w, h, 0u8);
    let mut want = HostImage::filled(&mut rng, w, h, 0u8);
    let mut scratch = vec![0; separable_scratch_len(w, 15, 15)];
    f::sep_filter_u8(
        &host.view(),
        &mut a.view_mut(),
        &g,
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    f::box_blur_u8(
        &a.view(),
        &mut want.view_mut(),
        3,
        Border::Replicate,
        &mut scratch,
    )
    .unwrap();
    for (b, ctx) in contexts() {
        let src = upload(ctx, *b, &host);
        let (mut t1, mut t2) = (alloc(ctx, *b, (w, h)), alloc(ctx, *b, (w, h)));
        for _ in 0..5 {
            ops::sep_filter_u8(&src, &mut t1, &g, Border::Reflect101).unwrap();
            ops::box_blur_u8(&t1, &mut t2, 3, Border::Replicate).unwrap();
        }
        let what = format!("{} gaussian then box", b.name());
        assert_exact(&download(*b, &t2), &want.packed(), w, &what);
    }
}

/// More distinct coefficient tables than a driver caches per context (CUDA keeps 64), all
/// queued before any result is read: tables evicted from a cache must stay valid for the
/// kernels queued before the eviction.
#[test]
fn many_distinct_kernels_queued_without_waiting() {
    let mut rng = Rng::new(9);
    let (w, h) = (17, 13);
    let host = random_u8(&mut rng, w, h);
    let kernels: Vec<SepKernelQ> = (0..150)
        .map(|i| {
            let kx: Vec<i32> = (0..rng.odd_len())
                .map(|_| rng.range(-40, 40) as i32)
                .collect();
            let ky: Vec<i32> = (0..rng.odd_len())
                .map(|_| rng.range(-40, 40) as i32)
                .collect();
            SepKernelQ::new(&kx, &ky, (i % 9) as u32).unwrap()
        })
        .collect();
    let wants: Vec<Vec<u8>> = kernels
        .iter()
        .map(|k| {
            let mut want = HostImage::filled(&mut rng, w, h, 0u8);
            let mut scratch = vec![0; separable_scratch_len(w, k.kx().len(), k.ky().len())];
            f::sep_filter_u8(
                &host.view(),
                &mut want.view_mut(),
                k,
                Border::Reflect101,
                &mut scratch,
            )
            .unwrap();
            want.packed()
        })
        .collect();
    for (b, ctx) in contexts() {
        let src = upload(ctx, *b, &host);
        let outs: Vec<_> = kernels
            .iter()
            .map(|k| {
                let mut dst = alloc(ctx, *b, (w, h));
                ops::sep_filter_u8(&src, &mut dst, k, Border::Reflect101).unwrap();
                dst
            })
            .collect();
        for (i, (dst, want)) in outs.iter().zip(&wants).enumerate() {
            let what = format!("{} queued sep filter #{i}", b.name());
            assert_exact(&download(*b, dst), want, w, &what);
        }
    }
}
