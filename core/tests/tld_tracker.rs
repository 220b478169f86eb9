//! The TLD tracker end to end on a generated sequence (a textured object moving and changing
//! scale over a textured background, briefly hidden), plus its contract: errors for bad calls,
//! determinism, a workspace that bounds every grid, and no allocation in `update` — over a
//! 10 000-frame run, so memory provably stays flat.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use common::{value_noise, Rng};
use counting_alloc::heap_calls;
use mvision_core::tld::grid::{grid_len, grid_len_bound};
use mvision_core::tld::{workspace_len, Tld, TldOutput, TldParams};
use mvision_core::{Error, ImageView, Rect, RectF};

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// A generated sequence: frames and the true box (`None` while the object is hidden).
struct Sequence {
    width: usize,
    height: usize,
    frames: Vec<Vec<u8>>,
    truth: Vec<Option<RectF>>,
}

/// `n` frames: the object (40 × 48 px at scale 1, its own texture) follows a smooth loop,
/// scales between 0.8× and 1.25×, and is covered by a flat occluder for frames 60–67.
fn generate(width: usize, height: usize, n: usize) -> Sequence {
    let (ow, oh) = (40.0f32, 48.0f32);
    let mut frames = Vec::with_capacity(n);
    let mut truth = Vec::with_capacity(n);
    let mut rng = Rng::new(7);
    for f in 0..n {
        let t = f as f32 / 40.0;
        let s = 1.0 + 0.22 * (t * 0.7).sin();
        let (w, h) = (ow * s, oh * s);
        let cx = width as f32 * (0.5 + 0.28 * t.cos());
        let cy = height as f32 * (0.5 + 0.22 * (1.3 * t).sin());
        let (x0, y0) = (cx - w / 2.0, cy - h / 2.0);
        let hidden = (60..68).contains(&f);
        let mut img = vec![0u8; width * height];
        for y in 0..height {
            for x in 0..width {
                let (xf, yf) = (x as f32, y as f32);
                let mut v = 0.6 * value_noise(1, xf, yf, 9.0) + 0.4 * value_noise(2, xf, yf, 3.0);
                let (u, w_) = ((xf - x0) / s, (yf - y0) / s);
                if (0.0..ow).contains(&u) && (0.0..oh).contains(&w_) {
                    // Object texture in object coordinates: it scales with the object.
                    let stripes = if ((u / 6.0) as i32 + (w_ / 8.0) as i32) % 2 == 0 {
                        60.0
                    } else {
                        200.0
                    };
                    v = 0.5 * stripes + 0.5 * value_noise(3, u, w_, 4.0);
                }
                if hidden
                    && (cx - 50.0..cx + 50.0).contains(&xf)
                    && (cy - 60.0..cy + 60.0).contains(&yf)
                {
                    v = 128.0;
                }
                let noise = rng.range(-3, 3) as f32;
                img[y * width + x] = (v + noise).clamp(0.0, 255.0) as u8;
            }
        }
        frames.push(img);
        truth.push((!hidden).then(|| RectF::new(x0, y0, w, h)));
    }
    Sequence {
        width,
        height,
        frames,
        truth,
    }
}

fn view(seq: &Sequence, f: usize) -> ImageView<'_, u8> {
    ImageView::packed(&seq.frames[f], seq.width, seq.height).unwrap()
}

fn init_box(seq: &Sequence) -> Rect {
    seq.truth[0].unwrap().round()
}

/// Runs the tracker over the whole sequence; the result of frame 0 is the init box.
fn run(seq: &Sequence, params: &TldParams) -> Vec<TldOutput> {
    let mut ws = vec![0u8; workspace_len(params, seq.width, seq.height).unwrap()];
    let mut tld = Tld::new(params, seq.width, seq.height, &mut ws).unwrap();
    tld.init(&view(seq, 0), init_box(seq)).unwrap();
    (1..seq.frames.len())
        .map(|f| tld.update(&view(seq, f)).unwrap())
        .collect()
}

/// OTB success AUC with the absent-target rule of ../shared/data/README.md.
fn success_auc(results: &[Option<RectF>], truth: &[Option<RectF>]) -> f64 {
    let ious: Vec<f64> = results
        .iter()
        .zip(truth)
        .map(|(r, g)| match (r, g) {
            (None, None) => 1.0,
            (Some(r), Some(g)) => r.iou(g) as f64,
            _ => 0.0,
        })
        .collect();
    (0..=20)
        .map(|i| ious.iter().filter(|&&v| v > i as f64 / 20.0).count() as f64 / ious.len() as f64)
        .sum::<f64>()
        / 21.0
}

#[test]
fn tracks_the_generated_sequence() {
    let seq = generate(240, 180, 140);
    let out = run(&seq, &TldParams::default());
    let mut results = vec![Some(init_box(&seq).to_f32())];
    results.extend(out.iter().map(|o| o.bbox));
    let auc = success_auc(&results, &seq.truth);
    // Measured 0.88 with the default parameters; losing the object at the occlusion for good
    // costs about a third of the frames.
    eprintln!("generated sequence: success AUC {auc:.3}");
    assert!(auc > 0.75, "success AUC {auc:.3}");
    // After the occlusion the detector must have found the object again.
    let after: Vec<_> = (75..seq.frames.len())
        .filter(|&f| matches!((results[f], seq.truth[f]), (Some(r), Some(g)) if r.iou(&g) > 0.5))
        .collect();
    assert!(
        after.len() > 50,
        "re-acquired on {} of 65 frames",
        after.len()
    );
    // While hidden, the tracker should report the target absent on most frames.
    let absent = (60..68).filter(|&f| results[f].is_none()).count();
    assert!(absent >= 4, "absent on {absent} of 8 hidden frames");
}

#[test]
fn same_input_gives_the_same_boxes() {
    let seq = generate(160, 120, 40);
    let a = run(&seq, &TldParams::default());
    let b = run(&seq, &TldParams::default());
    assert_eq!(a, b);
    let other = run(
        &seq,
        &TldParams {
            seed: 99,
            ..TldParams::default()
        },
    );
    // A different seed draws different pixel pairs: the fern detector sees other codes, so
    // the runs differ somewhere (boxes, detections or confidences).
    assert_ne!(a, other);
}

#[test]
fn workspace_bounds_every_grid() {
    let params = TldParams::default();
    let mut rng = Rng::new(3);
    for &(w, h) in &[(64usize, 48usize), (160, 120), (320, 240), (353, 289)] {
        let bound = grid_len_bound(&params.grid, w, h).unwrap();
        let mut largest = 0;
        for _ in 0..300 {
            let bw = rng.range(1, w as i64) as i32;
            let bh = rng.range(1, h as i64) as i32;
            let n = grid_len(&params.grid, w, h, Rect::new(0, 0, bw, bh)).unwrap();
            assert!(
                n <= bound,
                "{w}x{h}: box {bw}x{bh} gives {n} > bound {bound}"
            );
            largest = largest.max(n);
        }
        // The bound is attained by the box whose shorter side is the grid's minimum.
        let side = params.grid.min_window_px as i32;
        let tight = grid_len(&params.grid, w, h, Rect::new(0, 0, side, side)).unwrap_or(0);
        assert!(tight <= bound && largest <= bound);
        assert!(
            bound <= 2 * tight.max(largest).max(1),
            "{w}x{h}: bound {bound} loose"
        );
    }
}

#[test]
fn bad_calls_are_errors() {
    let seq = generate(96, 72, 3);
    let params = TldParams::default();
    let need = workspace_len(&params, 96, 72).unwrap();
    let mut short = vec![0u8; need - 1];
    assert_eq!(
        Tld::new(&params, 96, 72, &mut short).unwrap_err(),
        Error::BufferTooSmall
    );
    assert_eq!(workspace_len(&params, 0, 72).unwrap_err(), Error::ZeroSize);
    let bad = TldParams {
        max_candidates: 0,
        ..params
    };
    assert_eq!(
        workspace_len(&bad, 96, 72).unwrap_err(),
        Error::InvalidArgument
    );
    let bad = TldParams {
        positive_overlap: f32::NAN,
        ..params
    };
    assert_eq!(
        workspace_len(&bad, 96, 72).unwrap_err(),
        Error::InvalidArgument
    );
    let bad = TldParams {
        blur_sigma_px: 5.0,
        ..params
    };
    assert_eq!(
        workspace_len(&bad, 96, 72).unwrap_err(),
        Error::InvalidKernel
    );

    let mut ws = vec![0u8; need];
    let mut tld = Tld::new(&params, 96, 72, &mut ws).unwrap();
    let frame = view(&seq, 0);
    assert_eq!(tld.update(&frame).unwrap_err(), Error::NotInitialized);
    assert_eq!(
        tld.init(&frame, Rect::new(10, 10, 0, 20)).unwrap_err(),
        Error::ZeroSize
    );
    assert_eq!(
        tld.init(&frame, Rect::new(80, 10, 30, 20)).unwrap_err(),
        Error::OutOfBounds
    );
    assert_eq!(
        tld.init(&frame, Rect::new(-1, 10, 30, 20)).unwrap_err(),
        Error::OutOfBounds
    );
    // Too small for any grid window (the minimum is 15 px at scale 1.2^0 … 1.2^10).
    assert_eq!(
        tld.init(&frame, Rect::new(10, 10, 2, 2)).unwrap_err(),
        Error::InvalidArgument
    );
    assert!(!tld.is_initialized());
    let small = vec![0u8; 95 * 72];
    let other = ImageView::packed(&small, 95, 72).unwrap();
    assert_eq!(
        tld.init(&other, init_box(&seq)).unwrap_err(),
        Error::SizeMismatch
    );
    tld.init(&frame, init_box(&seq)).unwrap();
    assert_eq!(tld.update(&other).unwrap_err(), Error::SizeMismatch);
    // A failed update leaves the tracker working.
    let out = tld.update(&view(&seq, 1)).unwrap();
    assert!(out.bbox.is_some());
}

#[test]
fn update_never_allocates_over_ten_thousand_frames() {
    // Small frames keep the run short; the code path is the same at any size.
    let seq = generate(120, 90, 50);
    let params = TldParams::default();
    let mut ws = vec![0u8; workspace_len(&params, 120, 90).unwrap()];
    let views: Vec<_> = (0..seq.frames.len()).map(|f| view(&seq, f)).collect();
    let box0 = init_box(&seq);
    let before = heap_calls();
    let mut tld = Tld::new(&params, 120, 90, &mut ws).unwrap();
    tld.init(&views[0], box0).unwrap();
    let (mut found, mut learned) = (0, 0);
    for f in 0..10_000 {
        // Forwards then backwards through the clip, so the motion stays continuous.
        let period = 2 * (views.len() - 1);
        let k = f % period;
        let i = if k < views.len() { k } else { period - k };
        let out = tld.update(&views[i]).unwrap();
        found += out.bbox.is_some() as u32;
        learned += out.learned as u32;
    }
    assert_eq!(heap_calls() - before, 0, "the tracker allocated");
    // The run did real work: it tracked and learnt, and its stores stayed within bounds.
    assert!(found > 5_000, "found on {found} of 10 000 frames");
    assert!(learned > 100, "learnt on {learned} frames");
    let (p, n) = tld.template_counts();
    assert!(p <= params.nn.max_positive && n <= params.nn.max_negative);
}
