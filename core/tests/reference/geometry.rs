use super::*;

/// The pixels of a small rectangle, by enumeration.
fn pixels(r: &Rect) -> Vec<(i64, i64)> {
    let mut v = Vec::new();
    for y in 0..r.height.max(0) as i64 {
        for x in 0..r.width.max(0) as i64 {
            v.push((r.x as i64 + x, r.y as i64 + y));
        }
    }
    v
}

/// The rectangle covering exactly `set` (which must be a filled rectangle), or `None`.
fn bounding(set: &[(i64, i64)]) -> Option<Rect> {
    if set.is_empty() {
        return None;
    }
    let x0 = set.iter().map(|p| p.0).min().unwrap();
    let x1 = set.iter().map(|p| p.0).max().unwrap() + 1;
    let y0 = set.iter().map(|p| p.1).min().unwrap();
    let y1 = set.iter().map(|p| p.1).max().unwrap() + 1;
    assert_eq!(
        ((x1 - x0) * (y1 - y0)) as usize,
        set.len(),
        "not a rectangle"
    );
    Some(Rect::new(
        x0 as i32,
        y0 as i32,
        (x1 - x0) as i32,
        (y1 - y0) as i32,
    ))
}

fn random_small_rect(rng: &mut Rng) -> Rect {
    Rect::new(
        rng.range(-8, 8) as i32,
        rng.range(-8, 8) as i32,
        rng.range(-3, 9) as i32,
        rng.range(-3, 9) as i32,
    )
}

#[test]
fn rect_operations_match_pixel_enumeration() {
    let mut rng = Rng::new(1);
    for _ in 0..3000 {
        let (a, b) = (random_small_rect(&mut rng), random_small_rect(&mut rng));
        let (pa, pb) = (pixels(&a), pixels(&b));
        let both: Vec<_> = pa.iter().copied().filter(|p| pb.contains(p)).collect();
        let union = pa.len() + pb.len() - both.len();
        let ctx = format!("{a:?} {b:?}");

        assert_eq!(a.is_empty(), pa.is_empty(), "{ctx}");
        assert_eq!(a.area(), pa.len() as i64, "{ctx}");
        assert_eq!(a.intersection(&b), bounding(&both), "{ctx}");
        let iou = if union == 0 {
            0.0
        } else {
            both.len() as f64 / union as f64
        };
        assert!((a.iou(&b) as f64 - iou).abs() <= 1e-6, "{ctx}");
        assert_eq!(a.iou(&b), b.iou(&a), "{ctx}");
        let inside = !pb.is_empty() && pb.iter().all(|p| pa.contains(p));
        assert_eq!(a.contains_rect(&b), inside, "{ctx}");
        for _ in 0..4 {
            let (px, py) = (rng.range(-10, 12), rng.range(-10, 12));
            assert_eq!(
                a.contains_point(px as i32, py as i32),
                pa.contains(&(px, py)),
                "{ctx} ({px}, {py})"
            );
        }

        let (fw, fh) = (rng.below(9), rng.below(9));
        let in_frame: Vec<_> = pa
            .iter()
            .copied()
            .filter(|&(x, y)| x >= 0 && y >= 0 && x < fw as i64 && y < fh as i64)
            .collect();
        assert_eq!(
            a.clamp_to(fw, fh),
            bounding(&in_frame),
            "{ctx} frame {fw}x{fh}"
        );
        assert_eq!(
            a.is_inside(fw, fh),
            !pa.is_empty() && in_frame.len() == pa.len(),
            "{ctx} frame {fw}x{fh}"
        );
    }
}

#[test]
fn rect_extreme_values_do_not_overflow() {
    let (min, max) = (i32::MIN, i32::MAX);
    let far = Rect::new(max, max, max, max);
    assert_eq!(far.right(), 2 * max as i64);
    assert_eq!(far.bottom(), 2 * max as i64);
    assert_eq!(far.area(), max as i64 * max as i64);
    assert!(far.contains_point(max, max));
    assert!(!far.contains_point(max - 1, max));
    assert_eq!(far.intersection(&far), Some(far));
    assert_eq!(far.iou(&far), 1.0);

    // x + width overflows i32: the rectangle still extends past i32::MAX.
    let a = Rect::new(max - 5, 0, 100, 1);
    let b = Rect::new(0, 0, max, 1);
    assert_eq!(a.intersection(&b), Some(Rect::new(max - 5, 0, 5, 1)));
    assert!((a.iou(&b) as f64 - 5.0 / (max as f64 + 95.0)).abs() < 1e-9);
    assert!(!b.contains_rect(&a));
    assert!(a.contains_rect(&Rect::new(max, 0, 95, 1)));
    assert!(!a.contains_rect(&Rect::new(max, 0, 96, 1)));
    assert!(!a.contains_point(min, 0));

    // The most negative corner: covers [i32::MIN, −1).
    let neg = Rect::new(min, min, max, max);
    assert_eq!(neg.right(), -1);
    assert_eq!(neg.intersection(&Rect::new(-1, -1, 10, 10)), None);
    assert_eq!(
        neg.intersection(&Rect::new(-5, -5, 10, 10)),
        Some(Rect::new(-5, -5, 4, 4))
    );
    assert_eq!(neg.clamp_to(usize::MAX, usize::MAX), None);
    assert!(!neg.is_inside(usize::MAX, usize::MAX));
    assert_eq!(neg.iou(&far), 0.0);
    // The two largest rectangles that can be written: union ≈ 2⁶³, no overflow.
    let whole = Rect::new(0, 0, max, max);
    assert_eq!(whole.iou(&whole), 1.0);
    assert_eq!(whole.iou(&neg), 0.0);

    // Empty rectangles with extreme fields.
    let e = Rect::new(0, 0, min, max);
    assert!(e.is_empty());
    assert_eq!(e.area(), 0);
    assert_eq!(e.intersection(&whole), None);
    assert_eq!(e.iou(&e), 0.0);
    assert!(!whole.contains_rect(&e));
    assert!(!e.contains_point(0, 0));

    // Clamping to frames larger than i32::MAX: the rectangle is entirely inside.
    assert!(a.is_inside(usize::MAX, 1));
    assert_eq!(a.clamp_to(usize::MAX, 1), Some(a));
    assert_eq!(far.clamp_to(usize::MAX, usize::MAX), Some(far));
    assert_eq!(
        far.clamp_to(max as usize + 3, usize::MAX),
        Some(Rect::new(max, max, 3, max))
    );
    assert_eq!(
        a.clamp_to(max as usize, 1),
        Some(Rect::new(max - 5, 0, 5, 1))
    );
    assert_eq!(a.clamp_to(0, 1), None);
    assert!(!a.is_inside(max as usize, 1));
    assert!(Rect::new(0, 0, 1, 1).is_inside(usize::MAX, usize::MAX));

    assert_eq!(far.center(), (max as f32 * 1.5, max as f32 * 1.5));
    assert_eq!(Rect::new(min, 0, 1, 2).center(), (min as f32, 1.0));
}

#[test]
fn rectf_iou_matches_f64_reference() {
    let mut rng = Rng::new(2);
    for _ in 0..3000 {
        let r = |rng: &mut Rng| {
            RectF::new(
                rng.f32_in(-50.0, 50.0),
                rng.f32_in(-50.0, 50.0),
                rng.f32_in(-5.0, 60.0),
                rng.f32_in(-5.0, 60.0),
            )
        };
        let (a, b) = (r(&mut rng), r(&mut rng));
        let f = |v: f32| v as f64;
        let ow = (f(a.x + a.width).min(f(b.x + b.width)) - f(a.x).max(f(b.x))).max(0.0);
        let oh = (f(a.y + a.height).min(f(b.y + b.height)) - f(a.y).max(f(b.y))).max(0.0);
        let area = |r: &RectF| {
            if r.width > 0.0 && r.height > 0.0 {
                f(r.width) * f(r.height)
            } else {
                0.0
            }
        };
        let inter = if area(&a) > 0.0 && area(&b) > 0.0 {
            ow * oh
        } else {
            0.0
        };
        let union = area(&a) + area(&b) - inter;
        let want = if union > 0.0 { inter / union } else { 0.0 };
        let got = a.iou(&b) as f64;
        assert!(
            (got - want).abs() <= 1e-5,
            "{a:?} {b:?}: got {got}, want {want}"
        );
        assert_eq!(a.is_empty(), area(&a) == 0.0, "{a:?}");
    }
}

#[test]
fn rectf_nan_and_infinite_fields() {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let ok = RectF::new(0.0, 0.0, 100.0, 10.0);
    let cases = [
        RectF::new(nan, 0.0, 10.0, 10.0),
        RectF::new(0.0, nan, 10.0, 10.0),
        RectF::new(0.0, 0.0, nan, 10.0),
        RectF::new(0.0, 0.0, 10.0, nan),
        RectF::new(nan, nan, nan, nan),
        RectF::new(-inf, 0.0, inf, 10.0),
        RectF::new(inf, 0.0, 10.0, 10.0),
        RectF::new(0.0, 0.0, inf, inf),
    ];
    for r in cases {
        for (p, q) in [(r, ok), (ok, r), (r, r)] {
            let iou = p.iou(&q);
            assert!((0.0..=1.0).contains(&iou), "{p:?} iou {q:?} = {iou}");
        }
    }
    // Rectangles with a NaN field cover no well-defined area: IoU 0, no intersection.
    for r in &cases[..5] {
        assert_eq!(r.iou(&ok), 0.0, "{r:?}");
        assert_eq!(ok.iou(r), 0.0, "{r:?}");
        assert_eq!(r.intersection(&ok), None, "{r:?}");
        assert_eq!(r.clamp_to(100.0, 100.0), None, "{r:?}");
    }
    assert!(RectF::new(0.0, 0.0, nan, 1.0).is_empty());
    assert_eq!(RectF::new(0.0, 0.0, nan, 1.0).area(), 0.0);
    assert_eq!(
        ok.clamp_to(50.0, 5.0),
        Some(RectF::new(0.0, 0.0, 50.0, 5.0))
    );
    assert_eq!(ok.clamp_to(nan, 5.0), None);
    assert_eq!(ok.iou(&ok), 1.0);
}

#[test]
fn rectf_round_halves_up_saturates_and_zeroes_nan() {
    let nan = f32::NAN;
    let r = |x, y, w, h| RectF::new(x, y, w, h).round();
    assert_eq!(r(0.5, 1.5, 2.0, 2.0), Rect::new(1, 2, 2, 2));
    // Halves go up on both sides of 0, so a unit box keeps its size wherever it stands.
    assert_eq!(r(-0.5, -1.5, 1.0, 1.0), Rect::new(0, -1, 1, 1));
    assert_eq!(r(10.5, 20.5, 1.0, 1.0), Rect::new(11, 21, 1, 1));
    // 0.49999997 + 0.5 rounds to 1.0 in f32; the f64 computation keeps it below the half.
    assert_eq!(r(0.499_999_97, 0.0, 1.0, 1.0), Rect::new(0, 0, 1, 1));
    assert_eq!(r(0.4, 0.6, 0.2, 0.3), Rect::new(0, 1, 1, 0));
    assert_eq!(r(2.49, -2.5, 0.0, 5.0), Rect::new(2, -2, 0, 5));
    assert_eq!(r(nan, 3.0, 5.0, 5.0), Rect::new(0, 3, 0, 5));
    assert_eq!(r(1.0, 1.0, nan, nan), Rect::new(1, 1, -1, -1));
    assert_eq!(
        r(1e20, -1e20, 1.0, 1.0),
        Rect::new(i32::MAX, i32::MIN, 0, 0)
    );
    assert_eq!(
        r(-1e20, 0.0, 2e20, 1.0),
        Rect::new(i32::MIN, 0, i32::MAX, 1)
    );
    assert_eq!(
        r(f32::NEG_INFINITY, 0.0, f32::INFINITY, 1.0),
        Rect::new(i32::MIN, 0, i32::MAX, 1) // NaN right edge → 0, width saturates
    );
    assert_eq!(
        Rect::new(3, -4, 5, 6).to_f32(),
        RectF::new(3.0, -4.0, 5.0, 6.0)
    );
    assert_eq!(
        RectF::from(Rect::new(3, -4, 5, 6)).round(),
        Rect::new(3, -4, 5, 6)
    );
    assert_eq!(RectF::new(1.0, 2.0, 4.0, 6.0).center(), (3.0, 5.0));
}
