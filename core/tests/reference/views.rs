use super::*;

#[test]
fn required_len_errors_and_values() {
    assert_eq!(required_len(0, 1, 1), Err(Error::ZeroSize));
    assert_eq!(required_len(1, 0, 1), Err(Error::ZeroSize));
    assert_eq!(required_len(0, 0, 0), Err(Error::ZeroSize));
    assert_eq!(required_len(5, 1, 4), Err(Error::StrideTooSmall));
    assert_eq!(required_len(5, 3, 5), Ok(15));
    assert_eq!(required_len(5, 3, 8), Ok(21));
    assert_eq!(required_len(1, 1, usize::MAX), Ok(1));
    assert_eq!(required_len(1, 2, usize::MAX), Err(Error::Overflow));
    assert_eq!(required_len(1, 3, usize::MAX / 2 + 1), Err(Error::Overflow));
    assert_eq!(required_len(2, 2, usize::MAX - 1), Err(Error::Overflow));
    assert_eq!(required_len(1, 2, usize::MAX - 1), Ok(usize::MAX));
    assert_eq!(required_len(usize::MAX, 1, usize::MAX), Ok(usize::MAX));
}

#[test]
fn constructor_errors() {
    let mut buf = [0u8; 32];
    for (w, h, s, len, want) in [
        (0, 3, 8, 32, Error::ZeroSize),
        (5, 0, 8, 32, Error::ZeroSize),
        (5, 3, 4, 32, Error::StrideTooSmall),
        (5, 3, 8, 20, Error::BufferTooSmall),
        (5, 3, 5, 14, Error::BufferTooSmall),
        (1, 1, 1, 0, Error::BufferTooSmall),
        (1, 2, usize::MAX, 32, Error::Overflow),
        (4, 3, usize::MAX / 2 + 1, 32, Error::Overflow),
    ] {
        let ctx = format!("{w}x{h} stride {s} len {len}");
        assert_eq!(
            ImageView::new(&buf[..len], w, h, s).unwrap_err(),
            want,
            "{ctx}"
        );
        assert_eq!(
            ImageViewMut::new(&mut buf[..len], w, h, s).unwrap_err(),
            want,
            "{ctx}"
        );
    }
    assert_eq!(
        ImageView::packed(&buf[..14], 5, 3).unwrap_err(),
        Error::BufferTooSmall
    );
    assert_eq!(
        ImageViewMut::packed(&mut buf[..5], 0, 3).unwrap_err(),
        Error::ZeroSize
    );
    assert_eq!(ImageView::packed(&buf[..15], 5, 3).unwrap().stride(), 5);
    // One row needs no stride: any stride is fine.
    let v = ImageView::new(&buf[..3], 3, 1, usize::MAX).unwrap();
    assert_eq!((v.size(), v.stride()), ((3, 1), usize::MAX));
    // A view covers exactly stride·(h−1)+w elements of a longer buffer.
    let v = ImageView::new(&buf, 5, 3, 8).unwrap();
    assert_eq!(v.as_slice().len(), 21);
    let m = ImageViewMut::new(&mut buf, 5, 3, 8).unwrap();
    assert_eq!(m.as_view().as_slice().len(), 21);
}

#[test]
fn accessors_address_the_right_elements() {
    let mut rng = Rng::new(3);
    for &(w, h) in SIZES {
        let mut img = random_u8(&mut rng, w, h);
        let p = img.plane();
        let v = img.view();
        assert_eq!(
            (v.width(), v.height(), v.size(), v.stride()),
            (w, h, (w, h), img.stride)
        );
        for y in 0..h {
            assert_eq!(v.row(y), &p.px[y * w..(y + 1) * w]);
            for x in 0..w {
                assert_eq!(v.get(x, y), Some(p.at(x, y)));
            }
        }
        assert_eq!(v.get(w, 0), None);
        assert_eq!(v.get(0, h), None);
        assert_eq!(v.get(usize::MAX, usize::MAX), None);

        let before = img.snapshot();
        let mut m = img.view_mut();
        assert_eq!((m.width(), m.height(), m.size()), (w, h, (w, h)));
        assert_eq!(m.get(w - 1, h - 1), Some(p.at(w - 1, h - 1)));
        assert_eq!(m.get(w, h - 1), None);
        assert_eq!(m.row(h - 1), &p.px[(h - 1) * w..]);
        m.row_mut(0)[w - 1] = 17;
        m.fill(201);
        img.assert_gaps_unchanged(&before, "fill");
        img.assert_pixels_eq(&Plane::from_fn(w, h, |_, _| 201), "fill");
    }
}

#[test]
fn sub_views_check_bounds_and_address_the_rectangle() {
    let mut rng = Rng::new(4);
    for &(w, h) in SIZES {
        let mut img = random_u8(&mut rng, w, h);
        let p = img.plane();
        for _ in 0..60 {
            let r = Rect::new(
                rng.range(-2, w as i64 + 1) as i32,
                rng.range(-2, h as i64 + 1) as i32,
                rng.range(-1, w as i64 + 2) as i32,
                rng.range(-1, h as i64 + 2) as i32,
            );
            let (x0, y0) = (r.x as i64, r.y as i64);
            let (x1, y1) = (x0 + r.width as i64, y0 + r.height as i64);
            let want = if r.width <= 0 || r.height <= 0 {
                Err(Error::ZeroSize)
            } else if x0 < 0 || y0 < 0 || x1 > w as i64 || y1 > h as i64 {
                Err(Error::OutOfBounds)
            } else {
                Ok(p.crop(
                    x0 as usize,
                    y0 as usize,
                    r.width as usize,
                    r.height as usize,
                ))
            };
            let ctx = format!("{w}x{h} {r:?}");
            let stride = img.stride;
            let plane_of = |v: &ImageView<'_, u8>| {
                assert_eq!(v.stride(), stride, "{ctx}");
                Plane::from_fn(v.width(), v.height(), |x, y| v.row(y)[x])
            };
            let got = img.view().sub_view(r).map(|v| plane_of(&v));
            assert_eq!(got, want, "sub_view {ctx}");
            // Nested: a sub-view of the whole-image sub-view is the same.
            let whole = Rect::new(0, 0, w as i32, h as i32);
            let got = img
                .view()
                .sub_view(whole)
                .unwrap()
                .sub_view(r)
                .map(|v| plane_of(&v));
            assert_eq!(got, want, "nested sub_view {ctx}");

            let mut copy = img.clone();
            let mut m = copy.view_mut();
            let got = m.sub_view_mut(r).map(|v| plane_of(&v.as_view()));
            assert_eq!(got, want, "sub_view_mut {ctx}");
            let got = m.into_sub_view(r).map(|v| plane_of(&v.as_view()));
            assert_eq!(got, want, "into_sub_view {ctx}");

            // Writing through a sub-view touches the rectangle only.
            if want.is_ok() {
                let before = img.snapshot();
                img.view_mut().into_sub_view(r).unwrap().fill(0xA5);
                for (i, (&v, &b)) in img.buf.iter().zip(&before).enumerate() {
                    let (x, y) = ((i % img.stride) as i64, (i / img.stride) as i64);
                    let inside = x >= x0 && x < x1 && y >= y0 && y < y1;
                    assert_eq!(v as u64, if inside { 0xA5 } else { b }, "{ctx} elem {i}");
                }
                img.buf
                    .iter_mut()
                    .zip(&before)
                    .for_each(|(v, &b)| *v = b as u8);
            }
        }
        let v = img.view();
        let far = Rect::new(i32::MAX, 0, i32::MAX, 1);
        assert_eq!(v.sub_view(far).unwrap_err(), Error::OutOfBounds);
        let neg = Rect::new(i32::MIN, i32::MIN, i32::MAX, i32::MAX);
        assert_eq!(v.sub_view(neg).unwrap_err(), Error::OutOfBounds);
        let last = Rect::new(w as i32 - 1, h as i32 - 1, 1, 1);
        assert_eq!(v.sub_view(last).unwrap().row(0), &[p.at(w - 1, h - 1)]);
    }
}

/// A filter writing through a sub-view of a larger destination writes inside the ROI only,
/// and a filter reading a sub-view sees the ROI as the whole image (borders at its edges).
#[test]
fn filtering_sub_views_stays_inside_the_roi() {
    let mut rng = Rng::new(5);
    for _ in 0..40 {
        let (bw, bh) = (1 + rng.below(40), 1 + rng.below(30));
        let (w, h) = (1 + rng.below(bw), 1 + rng.below(bh));
        let (sx, sy) = (rng.below(bw - w + 1), rng.below(bh - h + 1));
        let (dx, dy) = (rng.below(bw - w + 1), rng.below(bh - h + 1));
        let src_rect = Rect::new(sx as i32, sy as i32, w as i32, h as i32);
        let dst_rect = Rect::new(dx as i32, dy as i32, w as i32, h as i32);
        let borders = borders_u8(&mut rng);
        let border = rng.pick(&borders);
        let k = rng.odd_len();
        let ctx = format!("{bw}x{bh} src {src_rect:?} dst {dst_rect:?} k={k} {border:?}");

        let src = random_u8(&mut rng, bw, bh);
        let roi = src.plane().crop(sx, sy, w, h);
        let coeffs = random_coeffs(&mut rng, k * k, 8, abs_budget(8));
        let kernel = Kernel2dQ::new(k, &coeffs, 8).unwrap();
        let want = common::filter_u8(&roi, k, k, &wide(&coeffs), 8, border);
        let mut scratch = scratch_i32(&mut rng, filter2d_scratch_len(w, k));

        let mut dst = Img::<u8>::garbage(&mut rng, bw, bh);
        let before = dst.snapshot();
        {
            let sv = src.view();
            let sv = sv.sub_view(src_rect).unwrap();
            let mut dv = dst.view_mut();
            let mut roi_dst = dv.sub_view_mut(dst_rect).unwrap();
            filter2d_u8(&sv, &mut roi_dst, &kernel, border, &mut scratch).unwrap();
        }
        for (i, (&v, &b)) in dst.buf.iter().zip(&before).enumerate() {
            let (x, y) = (i % dst.stride, i / dst.stride);
            if x >= dx && x < dx + w && y >= dy && y < dy + h {
                assert_eq!(v, want.at(x - dx, y - dy), "{ctx} at ({x}, {y})");
            } else {
                assert_eq!(v as u64, b, "{ctx}: element {i} outside the ROI written");
            }
        }
    }
}
