//! TLD's Median-Flow tracker: boxes recovered on synthetic textures moved by known sub-pixel,
//! multi-pixel and pyramid-sized translations and by known scales; failure on unrelated frames;
//! every documented error; bit-identical repeated runs; and no heap use (a counting allocator,
//! as in `no_alloc.rs`).
//!
//! The frames sample one continuous texture (value noise: hashed lattice values, smoothly
//! interpolated, four octaves) through a known transform, so the true box in the next frame is
//! known exactly, independently of the code under test.

use std::hint::black_box;

use mvision_core::arena::{Arena, ArenaLen};
use mvision_core::tld::flow::{flow_workspace_len, FlowOutcome, FlowParams, MedianFlow};
use mvision_core::{Error, ImageView, RectF};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::heap_calls;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

const W: usize = 320;
const H: usize = 240;

/// The box every test tracks: 60 × 80 pixels, well inside a 320 × 240 frame.
const BOX: RectF = RectF::new(120.0, 80.0, 60.0, 80.0);

/// Position tolerance of a recovered box edge or centre, in pixels.
const TOL_PX: f32 = 0.3;

/// Relative tolerance of a recovered scale.
const TOL_SCALE: f32 = 0.01;

// ---------------------------------------------------------------------------------------------
// Synthetic frames
// ---------------------------------------------------------------------------------------------

/// A lattice value in `[−1, 1]` from a hash of the cell and the seed (SplitMix64's finaliser).
fn lattice(ix: i64, iy: i64, seed: u64) -> f64 {
    let mut z = (ix as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((iy as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(seed.wrapping_mul(0x1656_67B1_9E37_79F9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Value noise at a real position: lattice values at spacing `cell` px, interpolated with the
/// C¹ smoothstep `3t² − 2t³`.
fn value_noise(u: f64, v: f64, cell: f64, seed: u64) -> f64 {
    let (gu, gv) = (u / cell, v / cell);
    let (iu, iv) = (gu.floor(), gv.floor());
    let (tu, tv) = (gu - iu, gv - iv);
    let (su, sv) = (tu * tu * (3.0 - 2.0 * tu), tv * tv * (3.0 - 2.0 * tv));
    let (iu, iv) = (iu as i64, iv as i64);
    let a = lattice(iu, iv, seed);
    let b = lattice(iu + 1, iv, seed);
    let c = lattice(iu, iv + 1, seed);
    let d = lattice(iu + 1, iv + 1, seed);
    let top = a + (b - a) * su;
    let bottom = c + (d - c) * su;
    top + (bottom - top) * sv
}

/// The texture at a real position: four octaves (cells of 32, 16, 8 and 5 px), grey levels.
fn texture(u: f64, v: f64, seed: u64) -> f64 {
    let t = value_noise(u, v, 32.0, seed)
        + 0.8 * value_noise(u, v, 16.0, seed ^ 1)
        + 0.6 * value_noise(u, v, 8.0, seed ^ 2)
        + 0.4 * value_noise(u, v, 5.0, seed ^ 3);
    (128.0 + 45.0 * t).round().clamp(0.0, 255.0)
}

/// A `W × H` frame whose pixel `(x, y)` shows the texture at `map(x, y)`.
fn frame(seed: u64, map: impl Fn(f64, f64) -> (f64, f64)) -> Vec<u8> {
    let mut px = Vec::with_capacity(W * H);
    for y in 0..H {
        for x in 0..W {
            let (u, v) = map(x as f64, y as f64);
            px.push(texture(u, v, seed) as u8);
        }
    }
    px
}

/// The texture translated by `(tx, ty)` pixels.
fn shifted(seed: u64, tx: f64, ty: f64) -> Vec<u8> {
    frame(seed, |x, y| (x - tx, y - ty))
}

/// The texture scaled by `s` about `(cx, cy)`.
fn scaled(seed: u64, s: f64, cx: f64, cy: f64) -> Vec<u8> {
    frame(seed, |x, y| (cx + (x - cx) / s, cy + (y - cy) / s))
}

/// Independent white noise.
fn noise(seed: u64) -> Vec<u8> {
    (0..W * H)
        .map(|i| ((lattice(i as i64, 7, seed) + 1.0) * 127.5) as u8)
        .collect()
}

fn view(px: &[u8]) -> ImageView<'_, u8> {
    ImageView::packed(px, W, H).unwrap()
}

/// A zeroed arena buffer of exactly the documented size.
fn workspace(params: &FlowParams) -> Vec<u8> {
    vec![0u8; flow_workspace_len(params, W, H).unwrap()]
}

/// Tracks `BOX` from `a` to `b` with `params`.
fn track_once(params: &FlowParams, a: &[u8], b: &[u8]) -> FlowOutcome {
    let mut buf = workspace(params);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, params, W, H).unwrap();
    mf.set_reference(&view(a)).unwrap();
    mf.track(&view(b), BOX).unwrap()
}

/// Asserts that `got` is `want` within [`TOL_PX`] on every edge and [`TOL_SCALE`] on the size.
fn assert_box(got: &FlowOutcome, want: RectF, what: &str) {
    assert_box_within(got, want, TOL_PX, what)
}

/// Asserts that `got` is `want` within `tol_px` on every edge and [`TOL_SCALE`] on the size.
fn assert_box_within(got: &FlowOutcome, want: RectF, tol_px: f32, what: &str) {
    let b = got
        .bbox
        .unwrap_or_else(|| panic!("{what}: tracking failed: {got:?}"));
    let (gc, wc) = (b.center(), want.center());
    let err = [
        (b.x - want.x).abs(),
        (b.y - want.y).abs(),
        (b.x + b.width - want.x - want.width).abs(),
        (b.y + b.height - want.y - want.height).abs(),
        (gc.0 - wc.0).abs(),
        (gc.1 - wc.1).abs(),
    ];
    let scale_err = [
        (b.width / want.width - 1.0).abs(),
        (b.height / want.height - 1.0).abs(),
    ];
    println!(
        "{what}: got {b:?}, want {want:?}; max edge/centre error {:.4} px, scale error {:.4} %, \
         median FB {:.4} px, {} reliable points",
        err.iter().copied().fold(0.0f32, f32::max),
        100.0 * scale_err.iter().copied().fold(0.0f32, f32::max),
        got.median_fb_px,
        got.reliable_points
    );
    assert!(
        err.iter().all(|&e| e <= tol_px),
        "{what}: box {b:?} vs {want:?}: errors {err:?} px > {tol_px}"
    );
    assert!(
        scale_err.iter().all(|&e| e <= TOL_SCALE),
        "{what}: box {b:?} vs {want:?}: scale errors {scale_err:?} > {TOL_SCALE}"
    );
    assert!(
        got.reliable_points >= 1 && got.median_fb_px.is_finite(),
        "{what}"
    );
}

fn moved(r: RectF, dx: f32, dy: f32) -> RectF {
    RectF::new(r.x + dx, r.y + dy, r.width, r.height)
}

// ---------------------------------------------------------------------------------------------
// Accuracy
// ---------------------------------------------------------------------------------------------

#[test]
fn recovers_translations() {
    let p = FlowParams::default();
    let a = shifted(11, 0.0, 0.0);
    for (tx, ty) in [
        (0.0, 0.0),
        (0.4, -0.25),
        (-1.7, 2.35),
        (7.3, -4.6),
        (-6.2, 7.9),
        (20.0, 0.0),
        (-14.6, 15.2),
    ] {
        let b = shifted(11, tx, ty);
        let got = track_once(&p, &a, &b);
        assert_box(
            &got,
            moved(BOX, tx as f32, ty as f32),
            &format!("shift ({tx}, {ty})"),
        );
    }
}

#[test]
fn large_shift_needs_the_pyramid() {
    let a = shifted(12, 0.0, 0.0);
    let b = shifted(12, 20.0, -12.0);
    let want = moved(BOX, 20.0, -12.0);
    assert_box(
        &track_once(&FlowParams::default(), &a, &b),
        want,
        "5 levels",
    );
    let flat = FlowParams {
        levels: 1,
        ..FlowParams::default()
    };
    let got = track_once(&flat, &a, &b);
    // Without the pyramid the 9 × 9 window cannot see a 23 px motion: either tracking fails or
    // the box lands far from the truth.
    if let Some(bb) = got.bbox {
        let (gc, wc) = (bb.center(), want.center());
        assert!(
            (gc.0 - wc.0).abs() > 2.0 || (gc.1 - wc.1).abs() > 2.0,
            "one level recovered a 23 px motion: {got:?}"
        );
    }
}

/// Edge tolerance under a scale change `s`: [`TOL_PX`] plus half the spread of the true point
/// displacements, `|s − 1|·(max side/2 − 5 px margin)`. Median-Flow moves the box by the median
/// displacement of the kept half of the grid, and under scaling points at different places move
/// differently, so that median is off the centre's motion by up to this much even with perfect
/// point tracks.
fn scale_tol_px(s: f32) -> f32 {
    TOL_PX + (s - 1.0).abs() * (0.5 * BOX.width.max(BOX.height) - 5.0)
}

#[test]
fn recovers_scale() {
    let p = FlowParams::default();
    let (cx, cy) = BOX.center();
    let a = shifted(13, 0.0, 0.0);
    for s in [1.05f32, 0.95, 1.1] {
        let b = scaled(13, s as f64, cx as f64, cy as f64);
        let want = RectF::new(
            cx - 0.5 * BOX.width * s,
            cy - 0.5 * BOX.height * s,
            BOX.width * s,
            BOX.height * s,
        );
        assert_box_within(
            &track_once(&p, &a, &b),
            want,
            scale_tol_px(s),
            &format!("scale {s}"),
        );
    }
}

#[test]
fn recovers_scale_and_translation_together() {
    let (cx, cy) = BOX.center();
    let (s, tx, ty) = (1.04f32, 5.6f32, -3.2f32);
    let a = shifted(14, 0.0, 0.0);
    // Scale about the box centre, then translate.
    let b = frame(14, |x, y| {
        let (x, y) = (x - tx as f64, y - ty as f64);
        (
            cx as f64 + (x - cx as f64) / s as f64,
            cy as f64 + (y - cy as f64) / s as f64,
        )
    });
    let want = RectF::new(
        cx + tx - 0.5 * BOX.width * s,
        cy + ty - 0.5 * BOX.height * s,
        BOX.width * s,
        BOX.height * s,
    );
    assert_box_within(
        &track_once(&FlowParams::default(), &a, &b),
        want,
        scale_tol_px(s),
        "scale + shift",
    );
}

#[test]
fn tracked_frame_becomes_the_reference() {
    let p = FlowParams::default();
    let frames = [
        shifted(15, 0.0, 0.0),
        shifted(15, 3.5, 1.25),
        shifted(15, 9.0, -2.5),
        shifted(15, 4.0, -6.75),
    ];
    let truth = [(0.0, 0.0), (3.5, 1.25), (9.0, -2.5), (4.0, -6.75)];
    let mut buf = workspace(&p);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    mf.set_reference(&view(&frames[0])).unwrap();
    let mut bbox = BOX;
    for k in 1..frames.len() {
        let got = mf.track(&view(&frames[k]), bbox).unwrap();
        let want = moved(BOX, truth[k].0, truth[k].1);
        // Errors may accumulate over three steps: three times the one-step tolerance.
        let b = got.bbox.expect("tracking failed");
        assert!(
            (b.x - want.x).abs() <= 3.0 * TOL_PX && (b.y - want.y).abs() <= 3.0 * TOL_PX,
            "step {k}: {b:?} vs {want:?}"
        );
        bbox = b;
    }
}

#[test]
fn box_at_the_frame_edge_still_tracks() {
    // The grid starts 5 px inside a box that touches the frame corner; LK windows and NCC
    // patches overhang the edges (replicated).
    let a = shifted(16, 0.0, 0.0);
    let b = shifted(16, 2.6, 1.8);
    let r = RectF::new(0.0, 0.0, 50.0, 40.0);
    let p = FlowParams::default();
    let mut buf = workspace(&p);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    mf.set_reference(&view(&a)).unwrap();
    let got = mf.track(&view(&b), r).unwrap();
    assert_box(&got, moved(r, 2.6, 1.8), "corner box");
}

// ---------------------------------------------------------------------------------------------
// Failure
// ---------------------------------------------------------------------------------------------

#[test]
fn unrelated_frames_fail() {
    let p = FlowParams::default();
    for (a, b, what) in [
        (noise(1), noise(2), "white noise"),
        (shifted(21, 0.0, 0.0), shifted(22, 0.0, 0.0), "textures"),
    ] {
        let got = track_once(&p, &a, &b);
        println!("{what}: {got:?}");
        assert!(
            got.bbox.is_none(),
            "{what}: unrelated frames tracked: {got:?}"
        );
    }
}

#[test]
fn flat_frames_fail() {
    let a = vec![100u8; W * H];
    let got = track_once(&FlowParams::default(), &a, &a);
    assert_eq!(got.bbox, None);
    assert_eq!(got.reliable_points, 0);
    assert_eq!(got.median_fb_px, f32::INFINITY);
}

#[test]
fn box_outside_the_frame_fails() {
    let a = shifted(17, 0.0, 0.0);
    let p = FlowParams::default();
    let mut buf = workspace(&p);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    mf.set_reference(&view(&a)).unwrap();
    let got = mf
        .track(&view(&a), RectF::new(400.0, -300.0, 50.0, 50.0))
        .unwrap();
    assert_eq!(got.bbox, None);
    assert_eq!(got.reliable_points, 0);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn params_are_validated() {
    let d = FlowParams::default();
    assert_eq!(d, FlowParams::DEFAULT);
    assert_eq!(
        (
            d.points_per_side,
            d.window_px,
            d.levels,
            d.max_iterations,
            d.ncc_patch_px
        ),
        (10, 9, 5, 20, 10)
    );
    assert_eq!((d.epsilon_px, d.max_median_fb_px), (0.03, 10.0));
    d.validate().unwrap();
    let bad = [
        FlowParams {
            points_per_side: 0,
            ..d
        },
        FlowParams {
            points_per_side: 33,
            ..d
        },
        FlowParams { window_px: 8, ..d },
        FlowParams { window_px: 1, ..d },
        FlowParams { window_px: 33, ..d },
        FlowParams { levels: 0, ..d },
        FlowParams { levels: 9, ..d },
        FlowParams {
            max_iterations: 0,
            ..d
        },
        FlowParams {
            epsilon_px: -0.1,
            ..d
        },
        FlowParams {
            epsilon_px: f32::NAN,
            ..d
        },
        FlowParams {
            epsilon_px: f32::INFINITY,
            ..d
        },
        FlowParams {
            max_median_fb_px: 0.0,
            ..d
        },
        FlowParams {
            max_median_fb_px: f32::NAN,
            ..d
        },
        FlowParams {
            ncc_patch_px: 1,
            ..d
        },
        FlowParams {
            ncc_patch_px: 65,
            ..d
        },
    ];
    for p in bad {
        assert_eq!(p.validate(), Err(Error::InvalidArgument), "{p:?}");
        assert_eq!(
            flow_workspace_len(&p, W, H),
            Err(Error::InvalidArgument),
            "{p:?}"
        );
        let mut buf = vec![0u8; 1 << 20];
        let mut arena = Arena::new(&mut buf);
        assert_eq!(
            MedianFlow::new(&mut arena, &p, W, H).err(),
            Some(Error::InvalidArgument)
        );
    }
    for p in [
        FlowParams {
            points_per_side: 1,
            window_px: 3,
            levels: 1,
            max_iterations: 1,
            epsilon_px: 0.0,
            max_median_fb_px: f32::INFINITY,
            ncc_patch_px: 2,
        },
        FlowParams {
            points_per_side: 32,
            window_px: 31,
            levels: 8,
            max_iterations: 100,
            epsilon_px: 5.0,
            max_median_fb_px: 1e-3,
            ncc_patch_px: 64,
        },
    ] {
        p.validate().unwrap();
    }
    assert_eq!(flow_workspace_len(&d, 0, H), Err(Error::ZeroSize));
    assert_eq!(flow_workspace_len(&d, W, 0), Err(Error::ZeroSize));
    assert_eq!(
        flow_workspace_len(&d, usize::MAX, usize::MAX),
        Err(Error::Overflow)
    );
}

#[test]
fn workspace_len_is_exact_and_checked() {
    let p = FlowParams::default();
    let need = flow_workspace_len(&p, W, H).unwrap();
    let mut len = ArenaLen::new();
    MedianFlow::declare(&mut len, &p, W, H).unwrap();
    assert_eq!(len.bytes(), need);
    let mut buf = vec![0u8; need + 16];
    for off in 0..16 {
        let mut arena = Arena::new(&mut buf[off..off + need]);
        MedianFlow::new(&mut arena, &p, W, H).unwrap();
    }
    // Short by the alignment slack and one byte: whatever the alignment, too small.
    let mut arena = Arena::new(&mut buf[..need - 16]);
    assert_eq!(
        MedianFlow::new(&mut arena, &p, W, H).err(),
        Some(Error::BufferTooSmall)
    );
    let mut empty: [u8; 0] = [];
    let mut arena = Arena::new(&mut empty);
    assert_eq!(
        MedianFlow::new(&mut arena, &p, W, H).err(),
        Some(Error::BufferTooSmall)
    );
}

#[test]
fn bad_calls_are_errors_and_change_nothing() {
    let p = FlowParams::default();
    let a = shifted(18, 0.0, 0.0);
    let b = shifted(18, 3.3, -2.2);
    let small = vec![0u8; (W - 1) * H];
    let small = ImageView::packed(&small, W - 1, H).unwrap();
    let mut buf = workspace(&p);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    assert_eq!(mf.track(&view(&b), BOX).err(), Some(Error::NotInitialized));
    assert_eq!(mf.set_reference(&small).err(), Some(Error::SizeMismatch));
    assert_eq!(mf.track(&view(&b), BOX).err(), Some(Error::NotInitialized));
    mf.set_reference(&view(&a)).unwrap();
    assert_eq!(mf.set_reference(&small).err(), Some(Error::SizeMismatch));
    assert_eq!(mf.track(&small, BOX).err(), Some(Error::SizeMismatch));
    for r in [
        RectF::new(f32::NAN, 80.0, 60.0, 80.0),
        RectF::new(120.0, f32::INFINITY, 60.0, 80.0),
        RectF::new(120.0, 80.0, f32::NAN, 80.0),
        RectF::new(120.0, 80.0, 60.0, f32::INFINITY),
        RectF::new(120.0, 80.0, 0.0, 80.0),
        RectF::new(120.0, 80.0, 60.0, -5.0),
    ] {
        assert_eq!(
            mf.track(&view(&b), r).err(),
            Some(Error::InvalidArgument),
            "{r:?}"
        );
    }
    // None of the failed calls replaced the reference: `a → b` still tracks.
    assert_box(
        &mf.track(&view(&b), BOX).unwrap(),
        moved(BOX, 3.3, -2.2),
        "after errors",
    );
}

#[test]
fn strided_frames_and_small_frames() {
    // A strided view with garbage in the row gaps tracks like the packed frame.
    let p = FlowParams::default();
    let a = shifted(19, 0.0, 0.0);
    let b = shifted(19, -2.75, 4.5);
    let stride = W + 13;
    let mut sb = vec![0xA5u8; stride * H];
    for y in 0..H {
        sb[y * stride..y * stride + W].copy_from_slice(&b[y * W..(y + 1) * W]);
    }
    let mut buf = workspace(&p);
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    mf.set_reference(&view(&a)).unwrap();
    let strided = mf
        .track(&ImageView::new(&sb, W, H, stride).unwrap(), BOX)
        .unwrap();
    assert_eq!(strided, track_once(&p, &a, &b));

    // Frames smaller than the window: one level, no panic, any outcome.
    for (w, h) in [(1, 1), (5, 3), (12, 40), (18, 40)] {
        let px = vec![7u8; w * h];
        let v = ImageView::packed(&px, w, h).unwrap();
        let mut buf = vec![0u8; flow_workspace_len(&p, w, h).unwrap()];
        let mut arena = Arena::new(&mut buf);
        let mut mf = MedianFlow::new(&mut arena, &p, w, h).unwrap();
        assert_eq!(mf.levels_used(), 1 + usize::from((w, h) == (18, 40)));
        mf.set_reference(&v).unwrap();
        let got = mf
            .track(&v, RectF::new(0.0, 0.0, w as f32, h as f32))
            .unwrap();
        assert_eq!(got.bbox, None, "flat {w}×{h}");
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism and allocation
// ---------------------------------------------------------------------------------------------

fn bits(o: &FlowOutcome) -> (Option<[u32; 4]>, u32, u32) {
    (
        o.bbox
            .map(|b| [b.x, b.y, b.width, b.height].map(f32::to_bits)),
        o.median_fb_px.to_bits(),
        o.reliable_points,
    )
}

#[test]
fn repeated_runs_are_bit_identical() {
    let p = FlowParams::default();
    let (cx, cy) = BOX.center();
    let frames = [
        shifted(20, 0.0, 0.0),
        shifted(20, 1.3, 0.7),
        scaled(20, 1.03, cx as f64, cy as f64),
        noise(5),
    ];
    let run = || {
        let mut buf = workspace(&p);
        let mut arena = Arena::new(&mut buf);
        let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
        mf.set_reference(&view(&frames[0])).unwrap();
        frames[1..]
            .iter()
            .map(|f| bits(&mf.track(&view(f), BOX).unwrap()))
            .collect::<Vec<_>>()
    };
    let first = run();
    assert!(first[0].0.is_some());
    assert_eq!(first, run());
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
fn tracking_does_not_allocate() {
    let p = FlowParams::default();
    let a = shifted(23, 0.0, 0.0);
    let b = shifted(23, 6.5, -3.25);
    let c = noise(9);
    let small = vec![0u8; 16];
    let small = ImageView::packed(&small, 4, 4).unwrap();
    let mut buf = workspace(&p);
    let mut outcomes = [FlowOutcome {
        bbox: None,
        median_fb_px: 0.0,
        reliable_points: 0,
    }; 3];
    let (va, vb, vc) = (view(&a), view(&b), view(&c));

    let before = heap_calls();
    let mut arena = Arena::new(&mut buf);
    let mut mf = MedianFlow::new(&mut arena, &p, W, H).unwrap();
    let e1 = mf.track(&va, BOX).err();
    mf.set_reference(&va).unwrap();
    outcomes[0] = mf.track(&vb, BOX).unwrap();
    outcomes[1] = mf.track(&vc, BOX).unwrap();
    outcomes[2] = mf.track(&va, BOX).unwrap();
    let e2 = mf.track(&small, BOX).err();
    let e3 = mf.track(&va, RectF::new(0.0, 0.0, f32::NAN, 1.0)).err();
    let calls = heap_calls() - before;

    black_box(&outcomes);
    assert_eq!(calls, 0, "tracking made {calls} heap calls");
    assert_eq!(
        (e1, e2, e3),
        (
            Some(Error::NotInitialized),
            Some(Error::SizeMismatch),
            Some(Error::InvalidArgument)
        )
    );
    assert!(outcomes[0].bbox.is_some());
}
