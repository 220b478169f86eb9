//! The core allocates nothing: a counting global allocator wraps `System`; the test allocates
//! every buffer first, then calls every public function of the core (successful and failing
//! calls alike) and checks that this thread made no heap call in between.
//!
//! The counter is per thread (other test threads may allocate freely) and const-initialised
//! without a destructor, so counting never allocates itself.

use std::hint::black_box;

use mvision_core::filter::{
    box_blur_f32, box_blur_u8, filter2d_f32, filter2d_scratch_len, filter2d_u8, gaussian_blur_f32,
    gaussian_blur_u8, gaussian_kernel_f32, gaussian_kernel_q, gaussian_kernel_size,
    gradient_polar_f32, gradient_polar_i16, sep_filter_f32, sep_filter_u8, separable_scratch_len,
    sobel_f32, sobel_u8, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ,
};
use mvision_core::image::required_len;
use mvision_core::integral::{integral_size, integral_u8, IntegralImage};
use mvision_core::pyramid::{pyr_down_f32, pyr_down_scratch_len, pyr_down_size, pyr_down_u8};
use mvision_core::resize::{resize_bilinear_f32, resize_bilinear_u8, resize_scratch_len};
use mvision_core::{Border, Error, ImageView, ImageViewMut, PixelFormat, Rect, RectF};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::heap_calls;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// A `fmt::Write` into a fixed array, to format errors without a `String`.
struct StackText {
    buf: [u8; 128],
    len: usize,
}

impl core::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(core::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[test]
fn the_counter_sees_allocations() {
    let before = heap_calls();
    black_box(Vec::<u8>::with_capacity(black_box(16)));
    assert!(
        heap_calls() >= before + 2,
        "the counting allocator is not in use"
    );
}

#[test]
fn no_public_function_allocates() {
    // ---- Every buffer, up front ------------------------------------------------------------
    let (w, h, s) = (23usize, 17usize, 29usize); // stride > width
    let len = s * (h - 1) + w;
    let src_u8: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
    let src_f32: Vec<f32> = (0..len).map(|i| (i % 97) as f32 * 0.5).collect();
    let mut dst_u8 = vec![0u8; len];
    let mut dst_f32 = vec![0f32; len];
    let mut dx_i16 = vec![0i16; len];
    let mut dy_i16 = vec![0i16; len];
    let mut dx_f32 = vec![0f32; len];
    let mut dy_f32 = vec![0f32; len];
    let mut mag = vec![0f32; len];
    let mut ori = vec![0f32; len];
    let (tw, th) = integral_size(w, h);
    let mut sum = vec![0u32; tw * th];
    let mut sqsum = vec![0u64; tw * th];
    let (pw, ph) = pyr_down_size(w, h);
    let mut pyr_u8 = vec![0u8; pw * ph];
    let mut pyr_f32 = vec![0f32; pw * ph];
    let (rw, rh) = (41usize, 9usize);
    let mut rs_u8 = vec![0u8; rw * rh];
    let mut rs_f32 = vec![0f32; rw * rh];
    let scratch_len = filter2d_scratch_len(w, 15)
        .max(separable_scratch_len(w, 15, 15))
        .max(pyr_down_scratch_len(w))
        .max(resize_scratch_len(rw));
    let mut scratch_i32 = vec![0i32; scratch_len];
    let mut scratch_f32 = vec![0f32; scratch_len];
    let coeffs_q: Vec<i32> = (0..25).map(|i| i - 12).collect();
    let coeffs_f: Vec<f32> = (0..49).map(|i| i as f32 * 0.01).collect();
    let mut text = StackText {
        buf: [0; 128],
        len: 0,
    };
    let replicate = Border::Replicate;

    let before = heap_calls();

    // ---- Views -----------------------------------------------------------------------------
    assert_eq!(required_len(w, h, s), Ok(len));
    assert_eq!(required_len(0, h, s), Err(Error::ZeroSize));
    assert_eq!(required_len(w, 2, usize::MAX), Err(Error::Overflow));
    let src = ImageView::new(&src_u8, w, h, s).unwrap();
    let srcf = ImageView::new(&src_f32, w, h, s).unwrap();
    assert_eq!(
        ImageView::new(&src_u8[..len - 1], w, h, s).unwrap_err(),
        Error::BufferTooSmall
    );
    assert_eq!(
        ImageView::new(&src_u8, w, h, w - 1).unwrap_err(),
        Error::StrideTooSmall
    );
    assert_eq!(
        ImageView::packed(&src_u8, 0, 1).unwrap_err(),
        Error::ZeroSize
    );
    let packed = ImageView::packed(&src_u8[..w * 2], w, 2).unwrap();
    black_box((
        packed.width(),
        packed.height(),
        packed.size(),
        packed.stride(),
    ));
    black_box((src.row(h - 1), src.get(3, 4), src.get(w, 0), src.as_slice()));
    let roi = Rect::new(2, 3, 7, 5);
    let sub = src.sub_view(roi).unwrap();
    black_box(sub.row(4));
    assert_eq!(
        src.sub_view(Rect::new(0, 0, 0, 1)).unwrap_err(),
        Error::ZeroSize
    );
    assert_eq!(
        src.sub_view(Rect::new(20, 0, 9, 1)).unwrap_err(),
        Error::OutOfBounds
    );
    {
        assert_eq!(
            ImageViewMut::new(&mut dst_u8[..3], w, h, s).unwrap_err(),
            Error::BufferTooSmall
        );
        assert_eq!(
            ImageViewMut::packed(&mut dst_u8[..], 0, 1).unwrap_err(),
            Error::ZeroSize
        );
        let mut d = ImageViewMut::new(&mut dst_u8, w, h, s).unwrap();
        black_box((d.width(), d.height(), d.size(), d.stride(), d.get(1, 1)));
        black_box(d.row(2));
        d.row_mut(1)[0] = 9;
        d.fill(7);
        black_box(d.as_view().row(0));
        d.sub_view_mut(roi).unwrap().fill(3);
        assert_eq!(
            d.sub_view_mut(Rect::new(-1, 0, 2, 2)).unwrap_err(),
            Error::OutOfBounds
        );
        let mut inner = d.into_sub_view(roi).unwrap();
        inner.fill(4);
        let mut p = ImageViewMut::packed(&mut dst_f32[..w * 2], w, 2).unwrap();
        p.fill(1.0);
    }

    // ---- Geometry, borders, formats, errors -----------------------------------------------
    let a = Rect::new(i32::MAX - 3, -5, 10, 20);
    black_box((a.right(), a.bottom(), a.is_empty(), a.area(), a.center()));
    black_box((
        a.contains_point(0, 0),
        a.contains_rect(&roi),
        a.is_inside(w, h),
    ));
    black_box((
        a.intersection(&roi),
        a.iou(&roi),
        a.clamp_to(usize::MAX, 7),
        a.to_f32(),
    ));
    let f = RectF::new(0.5, f32::NAN, 3.0, 4.0);
    let g = RectF::from(roi);
    black_box((
        f.is_empty(),
        f.area(),
        f.center(),
        f.intersection(&g),
        f.iou(&g),
    ));
    black_box((g.clamp_to(5.0, 5.0), g.round(), f.round()));
    black_box(Border::<u8>::Reflect101.map_index(-40, 3));
    black_box(Border::<u8>::Replicate.map_index(40, 3));
    black_box(Border::Constant(1u8).map_index(-1, 3));
    black_box((PixelFormat::F32.bytes(), PixelFormat::U64.name()));
    use core::fmt::Write as _;
    write!(text, "{}", Error::InvalidKernel).unwrap();
    assert_eq!(
        &text.buf[..text.len],
        Error::InvalidKernel.message().as_bytes()
    );
    black_box(mvision_core::VERSION);

    // ---- Kernels -----------------------------------------------------------------------------
    let kq = Kernel2dQ::new(5, &coeffs_q, 6).unwrap();
    black_box((kq.size(), kq.shift(), kq.coeffs()));
    let kq2 = Kernel2dQ::from_f32(7, &coeffs_f, 10).unwrap();
    assert_eq!(
        Kernel2dQ::new(4, &coeffs_q[..16], 0).unwrap_err(),
        Error::InvalidKernel
    );
    assert_eq!(
        Kernel2dQ::from_f32(1, &[f32::NAN], 1).unwrap_err(),
        Error::InvalidKernel
    );
    let kf = Kernel2dF32::new(7, &coeffs_f).unwrap();
    black_box((kf.size(), kf.coeffs()));
    assert_eq!(
        Kernel2dF32::new(1, &[f32::INFINITY]).unwrap_err(),
        Error::InvalidKernel
    );
    let sq = SepKernelQ::new(&coeffs_q[..5], &coeffs_q[10..13], 4).unwrap();
    black_box((sq.kx(), sq.ky(), sq.shift()));
    let sq2 = SepKernelQ::from_f32(&coeffs_f[..9], &coeffs_f[..3], 6, 6).unwrap();
    assert_eq!(
        SepKernelQ::from_f32(&coeffs_f[..3], &coeffs_f[..3], 20, 20).unwrap_err(),
        Error::InvalidArgument
    );
    let sf = SepKernelF32::new(&coeffs_f[..11], &coeffs_f[..5]).unwrap();
    black_box((sf.kx(), sf.ky()));
    assert_eq!(gaussian_kernel_size(1.0), Ok(7));
    assert_eq!(gaussian_kernel_size(f32::NAN), Err(Error::InvalidArgument));
    let gq = gaussian_kernel_q(0, 1.5).unwrap();
    let gf = gaussian_kernel_f32(9, 0.0).unwrap();
    assert_eq!(gaussian_kernel_q(4, 1.0).unwrap_err(), Error::InvalidKernel);

    // ---- Filters -----------------------------------------------------------------------------
    {
        let mut d = ImageViewMut::new(&mut dst_u8, w, h, s).unwrap();
        let t = &mut scratch_i32[..];
        filter2d_u8(&src, &mut d, &kq, replicate, t).unwrap();
        filter2d_u8(&src, &mut d, &kq2, Border::Reflect101, t).unwrap();
        assert_eq!(
            filter2d_u8(&src, &mut d, &kq, replicate, &mut t[..3]),
            Err(Error::BufferTooSmall)
        );
        sep_filter_u8(&src, &mut d, &sq, Border::Constant(9), t).unwrap();
        sep_filter_u8(&src, &mut d, &sq2, replicate, t).unwrap();
        sep_filter_u8(&src, &mut d, &gq, replicate, t).unwrap();
        gaussian_blur_u8(&src, &mut d, 0, 2.0, Border::Reflect101, t).unwrap();
        assert_eq!(
            gaussian_blur_u8(&src, &mut d, 6, 2.0, replicate, t),
            Err(Error::InvalidKernel)
        );
        box_blur_u8(&src, &mut d, 15, replicate, t).unwrap();
        assert_eq!(
            box_blur_u8(&src, &mut d, 0, replicate, t),
            Err(Error::ZeroSize)
        );
        let mut small = ImageViewMut::packed(&mut pyr_u8, pw, ph).unwrap();
        assert_eq!(
            filter2d_u8(&src, &mut small, &kq, replicate, t),
            Err(Error::SizeMismatch)
        );
        let mut sub = d.sub_view_mut(roi).unwrap();
        filter2d_u8(&src.sub_view(roi).unwrap(), &mut sub, &kq, replicate, t).unwrap();
    }
    {
        let mut d = ImageViewMut::new(&mut dst_f32, w, h, s).unwrap();
        let t = &mut scratch_f32[..];
        filter2d_f32(&srcf, &mut d, &kf, Border::Constant(0.5), t).unwrap();
        sep_filter_f32(&srcf, &mut d, &sf, Border::Replicate, t).unwrap();
        sep_filter_f32(&srcf, &mut d, &gf, Border::Reflect101, t).unwrap();
        gaussian_blur_f32(&srcf, &mut d, 5, 1.0, Border::Replicate, t).unwrap();
        box_blur_f32(&srcf, &mut d, 3, Border::Reflect101, t).unwrap();
        assert_eq!(
            sep_filter_f32(&srcf, &mut d, &sf, Border::Replicate, &mut t[..1]),
            Err(Error::BufferTooSmall)
        );
    }
    {
        let mut gx = ImageViewMut::new(&mut dx_i16, w, h, s).unwrap();
        let mut gy = ImageViewMut::new(&mut dy_i16, w, h, s).unwrap();
        sobel_u8(&src, &mut gx, &mut gy, replicate, &mut scratch_i32).unwrap();
        let mut m = ImageViewMut::new(&mut mag, w, h, s).unwrap();
        let mut o = ImageViewMut::new(&mut ori, w, h, s).unwrap();
        gradient_polar_i16(&gx.as_view(), &gy.as_view(), &mut m, &mut o).unwrap();
        let mut fx = ImageViewMut::new(&mut dx_f32, w, h, s).unwrap();
        let mut fy = ImageViewMut::new(&mut dy_f32, w, h, s).unwrap();
        sobel_f32(
            &srcf,
            &mut fx,
            &mut fy,
            Border::Constant(1.0),
            &mut scratch_f32,
        )
        .unwrap();
        gradient_polar_f32(&fx.as_view(), &fy.as_view(), &mut m, &mut o).unwrap();
        let mut small = ImageViewMut::packed(&mut pyr_f32, pw, ph).unwrap();
        assert_eq!(
            gradient_polar_f32(&fx.as_view(), &fy.as_view(), &mut small, &mut o),
            Err(Error::SizeMismatch)
        );
    }

    // ---- Integral images -------------------------------------------------------------------
    {
        let mut sv = ImageViewMut::packed(&mut sum, tw, th).unwrap();
        let mut qv = ImageViewMut::packed(&mut sqsum, tw, th).unwrap();
        integral_u8(&src, &mut sv, None).unwrap();
        integral_u8(&src, &mut sv, Some(&mut qv)).unwrap();
        assert_eq!(
            integral_u8(&sub, &mut sv, Some(&mut qv)),
            Err(Error::SizeMismatch)
        );
    }
    let ii = IntegralImage::new(
        ImageView::packed(&sum, tw, th).unwrap(),
        Some(ImageView::packed(&sqsum, tw, th).unwrap()),
    )
    .unwrap();
    black_box((ii.width(), ii.height()));
    black_box(ii.window_sum(roi).unwrap());
    black_box(ii.window_sq_sum(roi).unwrap());
    black_box(ii.window_mean(roi).unwrap());
    black_box(ii.window_variance(roi).unwrap());
    assert_eq!(ii.window_sum(Rect::new(0, 0, 0, 0)), Err(Error::ZeroSize));
    assert_eq!(ii.window_variance(a), Err(Error::OutOfBounds));
    let plain = IntegralImage::new(ImageView::packed(&sum, tw, th).unwrap(), None).unwrap();
    assert_eq!(plain.window_sq_sum(roi), Err(Error::InvalidArgument));

    // ---- Pyramid and resize ----------------------------------------------------------------
    {
        let mut p = ImageViewMut::packed(&mut pyr_u8, pw, ph).unwrap();
        pyr_down_u8(&src, &mut p, Border::Reflect101, &mut scratch_i32).unwrap();
        let mut p = ImageViewMut::packed(&mut pyr_f32, pw, ph).unwrap();
        pyr_down_f32(&srcf, &mut p, Border::Replicate, &mut scratch_f32).unwrap();
        assert_eq!(
            pyr_down_f32(&srcf, &mut p, Border::Replicate, &mut scratch_f32[..2]),
            Err(Error::BufferTooSmall)
        );
        let mut r = ImageViewMut::packed(&mut rs_u8, rw, rh).unwrap();
        resize_bilinear_u8(&src, &mut r, &mut scratch_i32).unwrap();
        assert_eq!(
            resize_bilinear_u8(&src, &mut r, &mut scratch_i32[..1]),
            Err(Error::BufferTooSmall)
        );
        let mut r = ImageViewMut::packed(&mut rs_f32, rw, rh).unwrap();
        resize_bilinear_f32(&srcf, &mut r, &mut scratch_i32).unwrap();
    }

    let after = heap_calls();
    assert_eq!(after, before, "the core made {} heap calls", after - before);
    // The calls above really ran (not optimised away): their outputs changed the buffers.
    assert!(rs_u8.iter().any(|&v| v != 0) && pyr_f32.iter().any(|&v| v != 0.0));
    assert!(sum[tw * th - 1] != 0 && mag.iter().any(|&v| v != 0.0));
}
