//! EdgeBoxes: edge map, proposals on generated scenes, constraints, NMS, determinism, errors,
//! and no allocation. Scenes are generated here with the core's SplitMix64; expected boxes are
//! the generated objects, never outputs of the code under test.

use mvision_core::arena::Arena;
use mvision_core::edgeboxes::{workspace_len, BoxConstraints, EdgeBoxParams, EdgeBoxes, Proposal};
use mvision_core::rng::SplitMix64;
use mvision_core::{Error, ImageView, Rect};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

/// How an object is painted.
#[derive(Clone, Copy)]
enum Fill {
    /// One grey level.
    Flat(u8),
    /// 4 × 4 checkerboard of two grey levels.
    Checker(u8, u8),
}

/// A `w × h` scene: background `bg ± noise/2` (uniform, per pixel), then the objects.
fn scene(w: usize, h: usize, bg: u8, noise: u8, objects: &[(Rect, Fill)], seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64(seed);
    let mut img: Vec<u8> = (0..w * h)
        .map(|_| {
            let n = if noise == 0 {
                0
            } else {
                (rng.next_u64() % (noise as u64 + 1)) as i32 - (noise / 2) as i32
            };
            (bg as i32 + n).clamp(0, 255) as u8
        })
        .collect();
    for &(r, fill) in objects {
        for y in r.y..r.y + r.height {
            for x in r.x..r.x + r.width {
                let v = match fill {
                    Fill::Flat(v) => v,
                    Fill::Checker(a, b) => {
                        if ((x - r.x) / 4 + (y - r.y) / 4) % 2 == 0 {
                            a
                        } else {
                            b
                        }
                    }
                };
                img[y as usize * w + x as usize] = v;
            }
        }
    }
    img
}

fn params(max_window_px: u32) -> EdgeBoxParams {
    EdgeBoxParams {
        max_window_px,
        ..EdgeBoxParams::DEFAULT
    }
}

/// Runs one `propose` on `img` with a fresh object; returns the proposals.
fn propose(
    p: &EdgeBoxParams,
    img: &[u8],
    w: usize,
    h: usize,
    cons: &BoxConstraints,
) -> Vec<Proposal> {
    let mut ws = vec![0u8; workspace_len(p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, p).unwrap();
    let view = ImageView::packed(img, w, h).unwrap();
    let mut out = vec![Proposal::default(); p.max_boxes as usize];
    let n = eb.propose(&view, cons, &mut out).unwrap();
    out.truncate(n);
    out
}

/// Best IoU with `target` among the first `k` proposals, and its rank.
fn best_in_top(props: &[Proposal], target: Rect, k: usize) -> (f32, usize) {
    let mut best = (0.0f32, usize::MAX);
    for (i, p) in props.iter().take(k).enumerate() {
        let iou = p.bbox.iou(&target);
        if iou > best.0 {
            best = (iou, i);
        }
    }
    best
}

#[test]
fn step_edge_is_a_thin_ridge_with_the_gradient_orientation() {
    let (w, h) = (40usize, 30usize);
    let p = params(64);
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    // Vertical step (dark left of column 20), then horizontal step (dark above row 12).
    for vertical in [true, false] {
        let img: Vec<u8> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let bright = if vertical { x >= 20 } else { y >= 12 };
                if bright {
                    200
                } else {
                    40
                }
            })
            .collect();
        let view = ImageView::packed(&img, w, h).unwrap();
        let (mag, ori) = eb.edge_map(&view).unwrap();
        let expected = if vertical {
            0.0
        } else {
            core::f32::consts::FRAC_PI_2
        };
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let (m, o) = (mag.row(y)[x], ori.row(y)[x]);
                let on_edge = if vertical {
                    x == 19 || x == 20
                } else {
                    y == 11 || y == 12
                };
                if !on_edge {
                    assert_eq!(m, 0.0, "off-edge pixel ({x},{y}) has magnitude {m}");
                }
                if m > 0.0 {
                    assert!((o - expected).abs() < 1e-4, "orientation {o} at ({x},{y})");
                }
            }
        }
        // Exactly one of the two columns (rows) carries the ridge, at full strength.
        for k in 1..(if vertical { h } else { w }) - 1 {
            let (a, b) = if vertical {
                (mag.row(k)[19], mag.row(k)[20])
            } else {
                (mag.row(11)[k], mag.row(12)[k])
            };
            assert!(
                (a == 0.0) != (b == 0.0),
                "ridge not one pixel thin at {k}: {a} {b}"
            );
            assert_eq!(a.max(b), 1.0);
        }
    }
}

#[test]
fn flat_image_has_no_edges_and_no_proposals() {
    let (w, h) = (80usize, 60usize);
    let img = vec![128u8; w * h];
    let p = params(96);
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    let view = ImageView::packed(&img, w, h).unwrap();
    let (mag, _) = eb.edge_map(&view).unwrap();
    assert!((0..h).all(|y| mag.row(y).iter().all(|&m| m == 0.0)));
    let mut out = [Proposal::default(); 16];
    let cons = BoxConstraints::from_target(40.0, 30.0).unwrap();
    assert_eq!(eb.propose(&view, &cons, &mut out).unwrap(), 0);
}

/// (background noise, object fill, top-k, IoU threshold)
const SINGLE_CASES: [(u8, Fill, usize, f32); 4] = [
    (0, Fill::Flat(200), 1, 0.7),
    (30, Fill::Flat(200), 3, 0.7),
    (0, Fill::Checker(170, 230), 3, 0.7),
    (30, Fill::Checker(170, 230), 5, 0.7),
];

#[test]
fn single_object_is_among_the_best_proposals() {
    let (w, h) = (100usize, 100usize);
    // A KCFDP-like window: 1.4× the target, target near the centre.
    let target = Rect::new(22, 26, 58, 46);
    let cons = BoxConstraints::from_target(target.width as f32, target.height as f32).unwrap();
    let p = params(128);
    for (case, &(noise, fill, k, thr)) in SINGLE_CASES.iter().enumerate() {
        let img = scene(w, h, 70, noise, &[(target, fill)], 7 + case as u64);
        let props = propose(&p, &img, w, h, &cons);
        let (iou, rank) = best_in_top(&props, target, k);
        println!(
            "case {case}: {} proposals, best IoU in top {k}: {iou:.3} at rank {rank} ({:?})",
            props.len(),
            props.first()
        );
        assert!(iou > thr, "case {case}: best IoU {iou} in top {k}");
    }
}

#[test]
fn several_objects_are_each_found() {
    let (w, h) = (200usize, 160usize);
    let objs = [
        (Rect::new(15, 20, 50, 40), Fill::Flat(210)),
        (Rect::new(110, 15, 40, 60), Fill::Checker(160, 230)),
        (Rect::new(60, 95, 70, 45), Fill::Flat(20)),
    ];
    let img = scene(w, h, 100, 20, &objs, 99);
    let cons = BoxConstraints {
        min_area: 600.0,
        max_aspect_ratio: 3.0,
        min_box_side_px: 8.0,
    };
    let props = propose(&params(200), &img, w, h, &cons);
    for (i, &(r, _)) in objs.iter().enumerate() {
        let (iou, rank) = best_in_top(&props, r, 30);
        println!("object {i}: best IoU in top 30: {iou:.3} at rank {rank}");

        assert!(iou > 0.7, "object {i}: best IoU {iou}");
    }
}

#[test]
fn background_suppression_lowers_a_border_touching_object() {
    let (w, h) = (100usize, 100usize);
    // Touches the left border; a second, interior object for comparison.
    let border_obj = Rect::new(0, 30, 40, 40);
    let inner_obj = Rect::new(55, 25, 35, 45);
    let img = scene(
        w,
        h,
        60,
        0,
        &[(border_obj, Fill::Flat(200)), (inner_obj, Fill::Flat(200))],
        3,
    );
    let cons = BoxConstraints {
        min_area: 500.0,
        max_aspect_ratio: 3.0,
        min_box_side_px: 8.0,
    };
    let score_of = |props: &[Proposal], r: Rect| {
        props
            .iter()
            .filter(|p| p.bbox.iou(&r) > 0.7)
            .map(|p| p.score)
            .fold(0.0f32, f32::max)
    };
    let on = propose(&params(128), &img, w, h, &cons);
    let off = propose(
        &EdgeBoxParams {
            background_suppression: false,
            ..params(128)
        },
        &img,
        w,
        h,
        &cons,
    );
    let (b_on, b_off) = (score_of(&on, border_obj), score_of(&off, border_obj));
    let (i_on, i_off) = (score_of(&on, inner_obj), score_of(&off, inner_obj));
    println!("border object: {b_on} (on) vs {b_off} (off); inner: {i_on} vs {i_off}");
    assert!(b_off > 0.0 && b_on < b_off, "{b_on} !< {b_off}");
    // The border object loses relative to the interior one.
    assert!(b_on / i_on < b_off / i_off);
    // Windows of at most 64 px a side are left alone.
    let (ws, hs) = (64usize, 64usize);
    let small = scene(
        ws,
        hs,
        60,
        0,
        &[(Rect::new(0, 20, 30, 25), Fill::Flat(200))],
        3,
    );
    let a = propose(&params(64), &small, ws, hs, &cons);
    let b = propose(
        &EdgeBoxParams {
            background_suppression: false,
            ..params(64)
        },
        &small,
        ws,
        hs,
        &cons,
    );
    assert_eq!(a, b);
}

fn textured_scene() -> (Vec<u8>, usize, usize) {
    let (w, h) = (120usize, 110usize);
    let objs = [
        (Rect::new(30, 25, 50, 60), Fill::Checker(150, 220)),
        (Rect::new(5, 70, 30, 30), Fill::Flat(20)),
    ];
    (scene(w, h, 90, 40, &objs, 5), w, h)
}

#[test]
fn constraints_nms_order_and_count_hold() {
    let (img, w, h) = textured_scene();
    let cons = BoxConstraints::from_target(50.0, 30.0).unwrap();
    for (beta, max_boxes) in [(0.75f32, 1000u32), (0.5, 1000), (0.9, 7)] {
        let p = EdgeBoxParams {
            beta,
            max_boxes,
            ..params(128)
        };
        let props = propose(&p, &img, w, h, &cons);
        assert!(!props.is_empty());
        assert!(props.len() <= max_boxes as usize);
        for (i, a) in props.iter().enumerate() {
            let (bw, bh) = (a.bbox.width as f32, a.bbox.height as f32);
            assert!(a.bbox.is_inside(w, h), "{:?}", a.bbox);
            assert!(bw * bh >= cons.min_area);
            assert!(bw.max(bh) / bw.min(bh) <= cons.max_aspect_ratio);
            assert!(bw.min(bh) >= cons.min_box_side_px);
            assert!(a.score > 0.0 && a.score >= p.min_score);
            if i > 0 {
                assert!(props[i - 1].score >= a.score, "not sorted at {i}");
            }
            for b in &props[..i] {
                assert!(a.bbox.iou(&b.bbox) <= beta, "{:?} {:?}", a.bbox, b.bbox);
            }
        }
        println!("beta {beta}, max {max_boxes}: {} proposals", props.len());
    }
    // A short output buffer bounds the count too.
    let p = params(128);
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    let view = ImageView::packed(&img, w, h).unwrap();
    let mut out = [Proposal::default(); 3];
    assert_eq!(eb.propose(&view, &cons, &mut out).unwrap(), 3);
    let all = propose(&p, &img, w, h, &cons);
    assert_eq!(&out[..], &all[..3]);
}

#[test]
fn results_are_bit_identical_across_runs_and_objects() {
    let (img, w, h) = textured_scene();
    let cons = BoxConstraints::from_target(50.0, 60.0).unwrap();
    let p = params(128);
    let a = propose(&p, &img, w, h, &cons);
    // The same object, reused after another window, gives the same answer.
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    let mut out = vec![Proposal::default(); 1000];
    let other = scene(90, 70, 10, 50, &[], 1);
    eb.propose(&ImageView::packed(&other, 90, 70).unwrap(), &cons, &mut out)
        .unwrap();
    let n = eb
        .propose(&ImageView::packed(&img, w, h).unwrap(), &cons, &mut out)
        .unwrap();
    assert_eq!(n, a.len());
    for (x, y) in a.iter().zip(&out[..n]) {
        assert_eq!(x.bbox, y.bbox);
        assert_eq!(x.score.to_bits(), y.score.to_bits());
    }
    // A strided sub-view of a larger frame gives the same answer as the packed window.
    let (fw, fh) = (w + 17, h + 9);
    let mut frame = vec![0u8; fw * fh];
    for y in 0..h {
        frame[(y + 4) * fw + 11..(y + 4) * fw + 11 + w].copy_from_slice(&img[y * w..(y + 1) * w]);
    }
    let sub = ImageView::packed(&frame, fw, fh)
        .unwrap()
        .sub_view(Rect::new(11, 4, w as i32, h as i32))
        .unwrap();
    let n = eb.propose(&sub, &cons, &mut out).unwrap();
    assert_eq!(&out[..n], &a[..]);
}

#[test]
fn errors_are_reported_and_leave_the_output_alone() {
    let p = params(64);
    let cons = BoxConstraints::from_target(20.0, 20.0).unwrap();
    // Bad parameters.
    for bad in [
        EdgeBoxParams { alpha: 1.0, ..p },
        EdgeBoxParams {
            alpha: f32::NAN,
            ..p
        },
        EdgeBoxParams { beta: 0.0, ..p },
        EdgeBoxParams { eta: 1.5, ..p },
        EdgeBoxParams {
            min_score: -1.0,
            ..p
        },
        EdgeBoxParams { max_boxes: 0, ..p },
        EdgeBoxParams {
            edge_min_mag: 1.0,
            ..p
        },
        EdgeBoxParams {
            edge_merge_thr: 0.0,
            ..p
        },
        EdgeBoxParams {
            gamma: f32::INFINITY,
            ..p
        },
        EdgeBoxParams { kappa: 5.0, ..p },
        EdgeBoxParams {
            max_window_px: 2,
            ..p
        },
        EdgeBoxParams {
            max_window_px: 5000,
            ..p
        },
    ] {
        assert_eq!(bad.validate(), Err(Error::InvalidArgument));
        assert_eq!(workspace_len(&bad), Err(Error::InvalidArgument));
        let mut ws = vec![0u8; 1 << 16];
        let mut arena = Arena::new(&mut ws);
        assert_eq!(
            EdgeBoxes::new(&mut arena, &bad).err(),
            Some(Error::InvalidArgument)
        );
    }
    // Bad constraints.
    assert_eq!(
        BoxConstraints::from_target(0.0, 10.0),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        BoxConstraints::from_target(10.0, f32::NAN),
        Err(Error::InvalidArgument)
    );
    // Arena one byte short, starting where the alignment slack is all used.
    let need = workspace_len(&p).unwrap();
    let mut ws = vec![0u8; need + 32];
    let start = (17 - ws.as_ptr() as usize % 16) % 16;
    let mut arena = Arena::new(&mut ws[start..start + need - 1]);
    assert_eq!(
        EdgeBoxes::new(&mut arena, &p).err(),
        Some(Error::BufferTooSmall)
    );
    let mut arena = Arena::new(&mut ws[start..start + need]);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    // Window larger than max_window_px.
    let big = vec![0u8; 65 * 40];
    let view = ImageView::packed(&big, 65, 40).unwrap();
    let sentinel = Proposal {
        bbox: Rect::new(1, 2, 3, 4),
        score: 9.0,
    };
    let mut out = [sentinel; 4];
    assert_eq!(eb.propose(&view, &cons, &mut out), Err(Error::SizeMismatch));
    assert!(eb.edge_map(&view).is_err());
    let bad_cons = BoxConstraints {
        max_aspect_ratio: 0.5,
        ..cons
    };
    let ok = scene(
        64,
        64,
        50,
        10,
        &[(Rect::new(10, 10, 30, 30), Fill::Flat(200))],
        2,
    );
    let view = ImageView::packed(&ok, 64, 64).unwrap();
    assert_eq!(
        eb.propose(&view, &bad_cons, &mut out),
        Err(Error::InvalidArgument)
    );
    assert!(out.iter().all(|&o| o == sentinel));
    // Zero size cannot be expressed as a view; tiny windows and empty outputs give nothing.
    assert_eq!(
        ImageView::<u8>::packed(&[], 0, 5).err(),
        Some(Error::ZeroSize)
    );
    let tiny = [7u8, 200, 7, 200];
    let view = ImageView::packed(&tiny, 2, 2).unwrap();
    assert_eq!(eb.propose(&view, &cons, &mut out).unwrap(), 0);
    let view = ImageView::packed(&ok, 64, 64).unwrap();
    assert_eq!(eb.propose(&view, &cons, &mut []).unwrap(), 0);
    assert!(eb.propose(&view, &cons, &mut out).unwrap() > 0);
}

#[test]
fn max_refined_bounds_the_refinement_and_keeps_the_object() {
    let (w, h) = (100usize, 100usize);
    let target = Rect::new(22, 26, 58, 46);
    let img = scene(w, h, 70, 30, &[(target, Fill::Checker(170, 230))], 10);
    let cons = BoxConstraints::from_target(58.0, 46.0).unwrap();
    let all = propose(&params(128), &img, w, h, &cons);
    // More than there are candidates: the same as refining all.
    let many = propose(
        &EdgeBoxParams {
            max_refined: 100_000,
            ..params(128)
        },
        &img,
        w,
        h,
        &cons,
    );
    assert_eq!(all, many);
    let few = propose(
        &EdgeBoxParams {
            max_refined: 30,
            ..params(128)
        },
        &img,
        w,
        h,
        &cons,
    );
    assert_ne!(all, few);
    let (iou, rank) = best_in_top(&few, target, 5);
    println!("max_refined 30: best IoU in top 5 {iou:.3} at rank {rank}");
    assert!(iou > 0.7);
}

#[test]
fn random_windows_never_panic_and_keep_the_invariants() {
    let p = EdgeBoxParams {
        max_boxes: 50,
        ..params(72)
    };
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    let mut rng = SplitMix64(2024);
    let mut out = vec![Proposal::default(); 64];
    for round in 0..200 {
        let w = 1 + (rng.next_u64() % 72) as usize;
        let h = 1 + (rng.next_u64() % 72) as usize;
        let kind = rng.next_u64() % 3;
        let img: Vec<u8> = (0..w * h)
            .map(|i| match kind {
                0 => rng.next_u64() as u8,
                1 => ((i % w) * 255 / w) as u8 ^ ((i / w) as u8 & 0x10),
                _ => {
                    if (i % w) * 3 > w && (i / w) * 2 > h {
                        220
                    } else {
                        30
                    }
                }
            })
            .collect();
        let cons = BoxConstraints {
            min_area: (rng.next_u64() % 600) as f32,
            max_aspect_ratio: 1.0 + (rng.next_u64() % 40) as f32 * 0.1,
            min_box_side_px: 1.0 + (rng.next_u64() % 8) as f32,
        };
        let view = ImageView::packed(&img, w, h).unwrap();
        let n = eb.propose(&view, &cons, &mut out).unwrap();
        assert!(n <= 50, "round {round}");
        for (i, a) in out[..n].iter().enumerate() {
            let (bw, bh) = (a.bbox.width as f32, a.bbox.height as f32);
            assert!(a.bbox.is_inside(w, h), "round {round}: {:?}", a.bbox);
            assert!(bw * bh >= cons.min_area && bw.min(bh) >= cons.min_box_side_px);
            assert!(bw.max(bh) <= cons.max_aspect_ratio * bw.min(bh));
            assert!(a.score.is_finite() && a.score > 0.0);
            for b in &out[..i] {
                assert!(b.score >= a.score && a.bbox.iou(&b.bbox) <= p.beta);
            }
        }
    }
}

#[test]
fn propose_does_not_allocate() {
    let (img, w, h) = textured_scene();
    let p = params(128);
    let cons = BoxConstraints::from_target(50.0, 60.0).unwrap();
    let mut ws = vec![0u8; workspace_len(&p).unwrap()];
    let mut out = vec![Proposal::default(); 1000];
    let big = vec![0u8; 130 * 10];
    let before = counting_alloc::heap_calls();
    let mut arena = Arena::new(&mut ws);
    let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
    let view = ImageView::packed(&img, w, h).unwrap();
    let n = eb.propose(&view, &cons, &mut out).unwrap();
    let _ = eb.edge_map(&view).unwrap();
    let big_view = ImageView::packed(&big, 130, 10).unwrap();
    let e = eb.propose(&big_view, &cons, &mut out);
    let calls = counting_alloc::heap_calls() - before;
    assert!(n > 0);
    assert_eq!(e, Err(Error::SizeMismatch));
    assert_eq!(calls, 0, "propose allocated");
}

/// Timing of one `propose` (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
fn timing() {
    for (case, &(side, fill, noise)) in [
        (100usize, Fill::Flat(200), 30u8),
        (100, Fill::Checker(150, 220), 30),
        (200, Fill::Flat(200), 30),
        (200, Fill::Checker(150, 220), 30),
    ]
    .iter()
    .enumerate()
    {
        if let Ok(only) = std::env::var("EB_TIMING_CASE") {
            if only != case.to_string() {
                continue;
            }
        }
        let t = side as i32 * 5 / 7; // the target; the window is 1.4× it
        let o = (side as i32 - t) / 2;
        let target = Rect::new(o, o + 3, t, t - 6);
        let img = scene(side, side, 90, noise, &[(target, fill)], 11);
        for max_refined in [0u32, 100, 30] {
            let p = EdgeBoxParams {
                max_refined,
                ..params(side as u32)
            };
            let cons = BoxConstraints::from_target(t as f32, (t - 6) as f32).unwrap();
            let mut ws = vec![0u8; workspace_len(&p).unwrap()];
            let mut arena = Arena::new(&mut ws);
            let mut eb = EdgeBoxes::new(&mut arena, &p).unwrap();
            let view = ImageView::packed(&img, side, side).unwrap();
            let mut out = vec![Proposal::default(); 1000];
            let mut n = eb.propose(&view, &cons, &mut out).unwrap();
            // The fastest of several batches: the machine is shared.
            let mut best_us = f64::INFINITY;
            for _ in 0..7 {
                let reps = 20;
                let t0 = std::time::Instant::now();
                for _ in 0..reps {
                    n = eb
                        .propose(std::hint::black_box(&view), &cons, &mut out)
                        .unwrap();
                }
                best_us = best_us.min(t0.elapsed().as_secs_f64() * 1e6 / reps as f64);
            }
            let kind = match fill {
                Fill::Flat(_) => "flat",
                Fill::Checker(..) => "checker",
            };
            let (iou, rank) = best_in_top(&out[..n], target, 5);
            println!(
                "{side}×{side} {kind} object, max_refined {max_refined}: {best_us:.1} µs per \
                 propose, {n} proposals, best IoU in top 5 {iou:.3} (rank {rank}), \
                 workspace {} KiB",
                workspace_len(&p).unwrap() / 1024
            );
        }
    }
}
