//! One test body per operation, run on every backend present, each compared with the
//! `mvision-core` CPU reference: integer outputs exactly, `f32` within 1e-5 relative (plus 1e-4
//! absolute for values near zero, where cancellation makes relative error meaningless).
//!
//! The CPU backend always runs. OpenCL must be present when the `CI` environment variable is set
//! (CI installs PoCL); elsewhere a missing backend is skipped with a message. CUDA runs where a
//! device exists (the lent GPU machine).

use mvision_core::filter::{self as f, Kernel2dF32, Kernel2dQ, SepKernelQ};
use mvision_core::{integral, pyramid, resize, Border, ImageView, ImageViewMut};
use mvision_runtime::{ops, Backend, BackendSet, Context, Image, Variant};
use std::sync::OnceLock;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn u8s(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.next() % 20001) as f32 / 100.0 - 100.0)
            .collect()
    }
}

const SIZES: &[(usize, usize)] = &[(1, 1), (3, 2), (17, 9), (97, 61), (640, 480)];
const VARIANTS: &[Variant] = &[
    Variant::Naive,
    Variant::Tiled { w: 16, h: 16 },
    Variant::Tiled { w: 8, h: 4 },
    Variant::Tiled { w: 32, h: 8 },
];

fn borders_u8() -> [Border<u8>; 3] {
    [Border::Replicate, Border::Reflect101, Border::Constant(77)]
}
fn borders_f32() -> [Border<f32>; 3] {
    [
        Border::Replicate,
        Border::Reflect101,
        Border::Constant(-3.5),
    ]
}

/// The contexts to test: one per backend present, created once per test binary.
fn contexts() -> &'static [(Backend, Context)] {
    static CTX: OnceLock<Vec<(Backend, Context)>> = OnceLock::new();
    CTX.get_or_init(|| {
        let in_ci = std::env::var_os("CI").is_some();
        let mut v = Vec::new();
        for b in Backend::ALL {
            match Context::new(BackendSet::CPU.with(b)) {
                Ok(c) => {
                    eprintln!(
                        "backends: testing {} on {}",
                        b.name(),
                        c.device_name(b).unwrap()
                    );
                    v.push((b, c));
                }
                Err(e) if b == Backend::OpenCl && in_ci => {
                    panic!("CI requires an OpenCL device (PoCL): {e}")
                }
                Err(e) => eprintln!("backends: SKIPPING {} ({e})", b.name()),
            }
        }
        v
    })
}

/// Runs `op` on every backend with `src` uploaded and returns each backend's output.
fn on_every_backend<T: mvision_core::Pixel, U: mvision_core::Pixel>(
    src: &ImageView<'_, T>,
    out_size: (usize, usize),
    op: impl Fn(&Image<T>, &mut Image<U>) -> mvision_runtime::Result<()>,
) -> Vec<(Backend, Vec<U>)> {
    contexts()
        .iter()
        .map(|(b, ctx)| {
            let a = Image::from_view(ctx, *b, src).unwrap();
            let mut o = Image::new(ctx, *b, out_size.0, out_size.1).unwrap();
            op(&a, &mut o).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            let mut host = vec![U::default(); out_size.0 * out_size.1];
            o.download(&mut ImageViewMut::packed(&mut host, out_size.0, out_size.1).unwrap())
                .unwrap();
            (*b, host)
        })
        .collect()
}

fn assert_exact<T: PartialEq + std::fmt::Debug>(got: &[(Backend, Vec<T>)], want: &[T], ctx: &str) {
    for (b, g) in got {
        if let Some(i) = g.iter().zip(want).position(|(a, b)| a != b) {
            panic!(
                "{} {ctx}: pixel {i} is {:?}, reference {:?}",
                b.name(),
                g[i],
                want[i]
            );
        }
    }
}

fn assert_close(got: &[(Backend, Vec<f32>)], want: &[f32], ctx: &str) {
    for (b, g) in got {
        for (i, (&a, &w)) in g.iter().zip(want).enumerate() {
            let tol = 1e-5 * w.abs() + 1e-4;
            assert!(
                (a - w).abs() <= tol,
                "{} {ctx}: pixel {i} is {a}, reference {w}",
                b.name()
            );
        }
    }
}

fn u8_kernel(rng: &mut Rng, k: usize) -> Kernel2dQ {
    let c: Vec<i32> = (0..k * k).map(|_| (rng.next() % 61) as i32 - 20).collect();
    Kernel2dQ::new(k, &c, 8).unwrap()
}

#[test]
fn filter2d_matches_reference_on_every_backend() {
    let mut rng = Rng(1);
    for &(w, h) in SIZES {
        let src = rng.u8s(w * h);
        let srcf = rng.f32s(w * h);
        let sv = ImageView::packed(&src, w, h).unwrap();
        let sfv = ImageView::packed(&srcf, w, h).unwrap();
        for k in [1, 3, 7, 15] {
            let kq = u8_kernel(&mut rng, k);
            let kf = Kernel2dF32::new(
                k,
                &rng.f32s(k * k)
                    .iter()
                    .map(|v| v / 100.0)
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            for (bu, bf) in borders_u8().into_iter().zip(borders_f32()) {
                let mut want = vec![0u8; w * h];
                f::filter2d_u8(
                    &sv,
                    &mut ImageViewMut::packed(&mut want, w, h).unwrap(),
                    &kq,
                    bu,
                    &mut vec![0; f::filter2d_scratch_len(w, k)],
                )
                .unwrap();
                let mut wantf = vec![0f32; w * h];
                f::filter2d_f32(
                    &sfv,
                    &mut ImageViewMut::packed(&mut wantf, w, h).unwrap(),
                    &kf,
                    bf,
                    &mut vec![0.0; f::filter2d_scratch_len(w, k)],
                )
                .unwrap();
                for &v in VARIANTS {
                    let ctx = format!("filter2d {w}x{h} k{k} {bu:?} {v:?}");
                    assert_exact(
                        &on_every_backend(&sv, (w, h), |a, o| ops::filter2d_u8(a, o, &kq, bu, v)),
                        &want,
                        &ctx,
                    );
                    assert_close(
                        &on_every_backend(&sfv, (w, h), |a, o| ops::filter2d_f32(a, o, &kf, bf, v)),
                        &wantf,
                        &ctx,
                    );
                }
            }
        }
    }
}

#[test]
fn separable_blurs_match_reference_on_every_backend() {
    let mut rng = Rng(2);
    for &(w, h) in SIZES {
        let src = rng.u8s(w * h);
        let srcf = rng.f32s(w * h);
        let sv = ImageView::packed(&src, w, h).unwrap();
        let sfv = ImageView::packed(&srcf, w, h).unwrap();
        for (bu, bf) in borders_u8().into_iter().zip(borders_f32()) {
            for (k, sigma) in [(3, 0.0), (0, 2.0), (15, 0.0)] {
                let ctx = format!("gaussian {w}x{h} k{k} s{sigma} {bu:?}");
                let mut want = vec![0u8; w * h];
                f::gaussian_blur_u8(
                    &sv,
                    &mut ImageViewMut::packed(&mut want, w, h).unwrap(),
                    k,
                    sigma,
                    bu,
                    &mut vec![0; f::separable_scratch_len(w, 15, 15)],
                )
                .unwrap();
                assert_exact(
                    &on_every_backend(&sv, (w, h), |a, o| {
                        ops::gaussian_blur_u8(a, o, k, sigma, bu)
                    }),
                    &want,
                    &ctx,
                );
                let mut wantf = vec![0f32; w * h];
                f::gaussian_blur_f32(
                    &sfv,
                    &mut ImageViewMut::packed(&mut wantf, w, h).unwrap(),
                    k,
                    sigma,
                    bf,
                    &mut vec![0.0; f::separable_scratch_len(w, 15, 15)],
                )
                .unwrap();
                assert_close(
                    &on_every_backend(&sfv, (w, h), |a, o| {
                        ops::gaussian_blur_f32(a, o, k, sigma, bf)
                    }),
                    &wantf,
                    &ctx,
                );
            }
            for k in [1, 5, 15] {
                let ctx = format!("box {w}x{h} k{k} {bu:?}");
                let mut want = vec![0u8; w * h];
                f::box_blur_u8(
                    &sv,
                    &mut ImageViewMut::packed(&mut want, w, h).unwrap(),
                    k,
                    bu,
                    &mut vec![0; f::separable_scratch_len(w, k, k)],
                )
                .unwrap();
                assert_exact(
                    &on_every_backend(&sv, (w, h), |a, o| ops::box_blur_u8(a, o, k, bu)),
                    &want,
                    &ctx,
                );
                let mut wantf = vec![0f32; w * h];
                f::box_blur_f32(
                    &sfv,
                    &mut ImageViewMut::packed(&mut wantf, w, h).unwrap(),
                    k,
                    bf,
                    &mut vec![0.0; f::separable_scratch_len(w, k, k)],
                )
                .unwrap();
                assert_close(
                    &on_every_backend(&sfv, (w, h), |a, o| ops::box_blur_f32(a, o, k, bf)),
                    &wantf,
                    &ctx,
                );
            }
            // Asymmetric lengths and negative taps.
            let kq = SepKernelQ::new(&[1, -2, 5, -2, 1], &[-1, 3, -1], 2).unwrap();
            let mut want = vec![0u8; w * h];
            f::sep_filter_u8(
                &sv,
                &mut ImageViewMut::packed(&mut want, w, h).unwrap(),
                &kq,
                bu,
                &mut vec![0; f::separable_scratch_len(w, 5, 3)],
            )
            .unwrap();
            assert_exact(
                &on_every_backend(&sv, (w, h), |a, o| ops::sep_filter_u8(a, o, &kq, bu)),
                &want,
                &format!("sep {w}x{h} {bu:?}"),
            );
        }
    }
}

#[test]
fn sobel_matches_reference_on_every_backend() {
    let mut rng = Rng(3);
    for &(w, h) in SIZES {
        let src = rng.u8s(w * h);
        let sv = ImageView::packed(&src, w, h).unwrap();
        for bu in borders_u8() {
            let (mut wx, mut wy) = (vec![0i16; w * h], vec![0i16; w * h]);
            f::sobel_u8(
                &sv,
                &mut ImageViewMut::packed(&mut wx, w, h).unwrap(),
                &mut ImageViewMut::packed(&mut wy, w, h).unwrap(),
                bu,
                &mut vec![0; f::separable_scratch_len(w, 3, 3)],
            )
            .unwrap();
            for (b, ctx) in contexts() {
                let a = Image::from_view(ctx, *b, &sv).unwrap();
                let (mut gx, mut gy) = (
                    Image::new(ctx, *b, w, h).unwrap(),
                    Image::new(ctx, *b, w, h).unwrap(),
                );
                ops::sobel_u8(&a, &mut gx, &mut gy, bu).unwrap();
                let (mut hx, mut hy) = (vec![0i16; w * h], vec![0i16; w * h]);
                gx.download(&mut ImageViewMut::packed(&mut hx, w, h).unwrap())
                    .unwrap();
                gy.download(&mut ImageViewMut::packed(&mut hy, w, h).unwrap())
                    .unwrap();
                assert_eq!(hx, wx, "{} sobel dx {w}x{h} {bu:?}", b.name());
                assert_eq!(hy, wy, "{} sobel dy {w}x{h} {bu:?}", b.name());
            }
        }
    }
}

#[test]
fn integral_matches_reference_on_every_backend() {
    let mut rng = Rng(4);
    for &(w, h) in SIZES.iter().chain(&[(1920, 1080)]) {
        let src = rng.u8s(w * h);
        let sv = ImageView::packed(&src, w, h).unwrap();
        let (tw, th) = integral::integral_size(w, h);
        let (mut ws, mut wq) = (vec![0u32; tw * th], vec![0u64; tw * th]);
        integral::integral_u8(
            &sv,
            &mut ImageViewMut::packed(&mut ws, tw, th).unwrap(),
            Some(&mut ImageViewMut::packed(&mut wq, tw, th).unwrap()),
        )
        .unwrap();
        for (b, ctx) in contexts() {
            let a = Image::from_view(ctx, *b, &sv).unwrap();
            let (mut s, mut q) = (
                Image::new(ctx, *b, tw, th).unwrap(),
                Image::new(ctx, *b, tw, th).unwrap(),
            );
            ops::integral_u8(&a, &mut s, Some(&mut q)).unwrap();
            let (mut hs, mut hq) = (vec![0u32; tw * th], vec![0u64; tw * th]);
            s.download(&mut ImageViewMut::packed(&mut hs, tw, th).unwrap())
                .unwrap();
            q.download(&mut ImageViewMut::packed(&mut hq, tw, th).unwrap())
                .unwrap();
            assert!(hs == ws, "{} integral {w}x{h}", b.name());
            assert!(hq == wq, "{} squared integral {w}x{h}", b.name());
            // Without the squared table.
            let mut s2 = Image::new(ctx, *b, tw, th).unwrap();
            ops::integral_u8(&a, &mut s2, None).unwrap();
            s2.download(&mut ImageViewMut::packed(&mut hs, tw, th).unwrap())
                .unwrap();
            assert!(hs == ws, "{} integral (no sq) {w}x{h}", b.name());
        }
    }
}

#[test]
fn pyramid_and_resize_match_reference_on_every_backend() {
    let mut rng = Rng(5);
    for &(w, h) in SIZES {
        let src = rng.u8s(w * h);
        let srcf = rng.f32s(w * h);
        let sv = ImageView::packed(&src, w, h).unwrap();
        let sfv = ImageView::packed(&srcf, w, h).unwrap();
        let (pw, ph) = pyramid::pyr_down_size(w, h);
        for (bu, bf) in borders_u8().into_iter().zip(borders_f32()) {
            let mut want = vec![0u8; pw * ph];
            pyramid::pyr_down_u8(
                &sv,
                &mut ImageViewMut::packed(&mut want, pw, ph).unwrap(),
                bu,
                &mut vec![0; pyramid::pyr_down_scratch_len(w)],
            )
            .unwrap();
            assert_exact(
                &on_every_backend(&sv, (pw, ph), |a, o| ops::pyr_down_u8(a, o, bu)),
                &want,
                &format!("pyr {w}x{h} {bu:?}"),
            );
            let mut wantf = vec![0f32; pw * ph];
            pyramid::pyr_down_f32(
                &sfv,
                &mut ImageViewMut::packed(&mut wantf, pw, ph).unwrap(),
                bf,
                &mut vec![0.0; pyramid::pyr_down_scratch_len(w)],
            )
            .unwrap();
            assert_close(
                &on_every_backend(&sfv, (pw, ph), |a, o| ops::pyr_down_f32(a, o, bf)),
                &wantf,
                &format!("pyr f32 {w}x{h}"),
            );
        }
        for (dw, dh) in [
            (1, 1),
            (w * 2 + 1, h + 3),
            ((w / 3).max(1), (h / 2).max(1)),
            (w, h),
        ] {
            let mut want = vec![0u8; dw * dh];
            resize::resize_bilinear_u8(
                &sv,
                &mut ImageViewMut::packed(&mut want, dw, dh).unwrap(),
                &mut vec![0; resize::resize_scratch_len(dw)],
            )
            .unwrap();
            assert_exact(
                &on_every_backend(&sv, (dw, dh), ops::resize_bilinear_u8),
                &want,
                &format!("resize {w}x{h}->{dw}x{dh}"),
            );
            let mut wantf = vec![0f32; dw * dh];
            resize::resize_bilinear_f32(
                &sfv,
                &mut ImageViewMut::packed(&mut wantf, dw, dh).unwrap(),
                &mut vec![0; resize::resize_scratch_len(dw)],
            )
            .unwrap();
            assert_close(
                &on_every_backend(&sfv, (dw, dh), ops::resize_bilinear_f32),
                &wantf,
                &format!("resize f32 {w}x{h}->{dw}x{dh}"),
            );
        }
    }
}

#[test]
fn mixing_backends_in_one_call_is_rejected() {
    let ctxs = contexts();
    let Some((b, ctx)) = ctxs.iter().find(|(b, _)| *b != Backend::Cpu) else {
        eprintln!("backends: no GPU backend present; mismatch test needs two backends");
        return;
    };
    let cpu = &ctxs[0].1;
    let a = Image::<u8>::new(cpu, Backend::Cpu, 8, 8).unwrap();
    let mut o = Image::<u8>::new(ctx, *b, 8, 8).unwrap();
    let e = ops::box_blur_u8(&a, &mut o, 3, Border::Replicate).unwrap_err();
    assert_eq!(e.kind(), mvision_runtime::ErrorKind::BackendMismatch);
}
