//! The TLD detection cascade's first stages — scanning grid, variance filter, fern ensemble —
//! against plain references written from OpenTLD's definitions: the grid from OpenTLD's
//! `buildGrid` loops (scales in `f64`), the variance from a two-pass `f64` mean/variance and an
//! exact `i128` numerator, fern codes from pixel reads through the test image's own indexing, and
//! the pixel pairs from an independent SplitMix64. A counting allocator checks that none of the
//! calls allocates.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use common::{random_u8, Img, Rng};
use mvision_core::filter::{gaussian_blur_u8, gaussian_kernel_size, separable_scratch_len};
use mvision_core::integral::{integral_size, integral_u8, IntegralImage};
use mvision_core::tld::fern::{
    build_offsets, ensemble_len, fern_codes, fern_scan, fern_scan_scratch_len, offsets_len,
    FernEnsemble, FernParams, FernTables, PixelPair,
};
use mvision_core::tld::grid::{
    build_grid, grid_len, grid_scale_count, Grid, GridParams, GridScale, GridStorage,
};
use mvision_core::tld::variance::{
    passes_variance, variance_filter, VarianceThreshold, DEFAULT_VARIANCE_FACTOR,
};
use mvision_core::{Border, Error, ImageView, ImageViewMut, Rect};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::heap_calls;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// Owned grid storage
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct GridBuf {
    x: Vec<u16>,
    y: Vec<u16>,
    w: Vec<u16>,
    h: Vec<u16>,
    s: Vec<u8>,
    scales: Vec<GridScale>,
}

impl GridBuf {
    fn new(windows: usize, scales: usize) -> Self {
        Self {
            x: vec![0; windows],
            y: vec![0; windows],
            w: vec![0; windows],
            h: vec![0; windows],
            s: vec![0; windows],
            scales: vec![GridScale::default(); scales],
        }
    }

    fn for_grid(p: &GridParams, fw: usize, fh: usize, b: Rect) -> Self {
        Self::new(
            grid_len(p, fw, fh, b).unwrap(),
            grid_scale_count(p, fw, fh, b).unwrap(),
        )
    }

    fn storage(&mut self) -> GridStorage<'_> {
        GridStorage {
            x: &mut self.x,
            y: &mut self.y,
            width: &mut self.w,
            height: &mut self.h,
            scale: &mut self.s,
            scales: &mut self.scales,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Grid reference: OpenTLD's buildGrid
// ---------------------------------------------------------------------------------------------

/// A window `(x, y, w, h, scale index)`.
type Win = (i64, i64, i64, i64, usize);

/// OpenTLD's C++ `buildGrid`, literally: every scale with `min(w, h) ≥ min_win`, `w ≤ W`,
/// `h ≤ H` is listed (even one that holds no window); `for y = 1; y < H − h; y += shift`, inside
/// `for x = 1; x < W − w; x += shift`. Sides `round(side·1.2^k)` in `f64`, halves up.
fn opentld_grid(p: &GridParams, fw: i64, fh: i64, bw: i64, bh: i64) -> (Vec<Win>, Vec<(i64, i64)>) {
    let (mut wins, mut scales) = (Vec::new(), Vec::new());
    let steps = p.scale_steps as i32;
    for k in -steps..=steps {
        // One correctly rounded division of exact integers: ties stay exact ties.
        let ratio = |side: i64| {
            let (num, den) = if k >= 0 {
                (6f64.powi(k), 5f64.powi(k))
            } else {
                (5f64.powi(-k), 6f64.powi(-k))
            };
            ((side as f64 * num) / den + 0.5).floor() as i64
        };
        let (w, h) = (ratio(bw), ratio(bh));
        let min_side = w.min(h);
        if min_side < p.min_window_px as i64 || w > fw || h > fh {
            continue;
        }
        let shift = ((p.shift_percent as f64 / 100.0 * min_side as f64) + 0.5)
            .floor()
            .max(1.0) as i64;
        let sc = scales.len();
        scales.push((w, h));
        let mut y = 1;
        while y < fh - h {
            let mut x = 1;
            while x < fw - w {
                wins.push((x, y, w, h, sc));
                x += shift;
            }
            y += shift;
        }
    }
    (wins, scales)
}

fn grid_windows(g: &Grid<'_>) -> Vec<Win> {
    (0..g.len())
        .map(|i| {
            let r = g.window(i);
            (
                r.x as i64,
                r.y as i64,
                r.width as i64,
                r.height as i64,
                g.scale_index()[i] as usize,
            )
        })
        .collect()
}

/// Builds the grid and checks it against the reference; returns its window count.
fn check_grid(p: &GridParams, fw: usize, fh: usize, b: Rect) -> usize {
    let what = format!("{fw}x{fh} box {}x{} {p:?}", b.width, b.height);
    let (ref_wins, ref_scales) =
        opentld_grid(p, fw as i64, fh as i64, b.width as i64, b.height as i64);
    // OpenTLD lists scales with no window; ours does not. Map the reference's scale indices.
    let used: Vec<usize> = (0..ref_scales.len())
        .filter(|&s| ref_wins.iter().any(|w| w.4 == s))
        .collect();
    let want: Vec<Win> = ref_wins
        .iter()
        .map(|&(x, y, w, h, s)| (x, y, w, h, used.iter().position(|&u| u == s).unwrap()))
        .collect();

    let n = grid_len(p, fw, fh, b).unwrap();
    assert_eq!(n, want.len(), "{what}: count");
    assert_eq!(
        grid_scale_count(p, fw, fh, b).unwrap(),
        used.len(),
        "{what}: scales"
    );
    let mut buf = GridBuf::for_grid(p, fw, fh, b);
    let g = build_grid(p, fw, fh, b, buf.storage()).unwrap();
    assert_eq!(g.len(), n);
    assert_eq!(g.frame_size(), (fw, fh));
    assert_eq!(grid_windows(&g), want, "{what}: windows");
    for (si, sc) in g.scales().iter().enumerate() {
        assert_eq!(
            (sc.width as i64, sc.height as i64),
            ref_scales[used[si]],
            "{what}: scale {si}"
        );
        assert!(!sc.is_empty());
        let first = sc.first as usize;
        assert!(g.scale_index()[first..first + sc.len()]
            .iter()
            .all(|&s| s as usize == si));
        assert!(g.width()[first..first + sc.len()]
            .iter()
            .all(|&w| w == sc.width));
        // `first + row·cols + col` addresses the window at (1 + col·shift, 1 + row·shift).
        let last = first + sc.len() - 1;
        assert_eq!(
            (g.x()[last] as u32, g.y()[last] as u32),
            (
                1 + (sc.cols - 1) * sc.shift_px as u32,
                1 + (sc.rows - 1) * sc.shift_px as u32
            )
        );
    }
    // Every window inside the frame with OpenTLD's one-pixel margin.
    for i in 0..g.len() {
        let r = g.window(i);
        assert!(r.is_inside(fw, fh), "{what}: window {i} {r:?}");
        assert!(r.x >= 1 && r.y >= 1, "{what}: {r:?}");
        assert!(
            r.right() < fw as i64 && r.bottom() < fh as i64, // one pixel of margin
            "{what}: {r:?}"
        );
        assert!(r.width.min(r.height) >= p.min_window_px as i32);
    }
    n
}

#[test]
fn grid_matches_opentld_loops() {
    let d = GridParams::default();
    let cases: &[(usize, usize, i32, i32)] = &[
        (320, 240, 60, 80),
        (640, 480, 120, 160),
        (320, 240, 24, 24),   // at the minimum
        (320, 240, 23, 40),   // just below it: larger scales only
        (320, 240, 25, 100),  // k = −1 gives 21 < 24
        (320, 240, 27, 45),   // 27·5/6 = 22.5: a tie
        (320, 240, 318, 238), // the largest box that fits once
        (320, 240, 319, 239), // the initial scale has no window
        (320, 240, 320, 240), // fills the frame
        (100, 30, 30, 26),    // frame barely higher than the box
        (26, 26, 24, 24),     // exactly one window
        (25, 200, 24, 24),    // no window at all
        (177, 131, 41, 37),
        (1000, 50, 9, 7),
    ];
    for &(fw, fh, bw, bh) in cases {
        check_grid(&d, fw, fh, Rect::new(5, 7, bw, bh));
    }
    let mut rng = Rng::new(0x6_71d);
    for _ in 0..200 {
        let p = GridParams {
            min_window_px: rng.range(1, 40) as u32,
            shift_percent: rng.range(1, 30) as u32,
            scale_steps: rng.range(0, 12) as u32,
        };
        let (fw, fh) = (rng.range(1, 260) as usize, rng.range(1, 200) as usize);
        let b = Rect::new(0, 0, rng.range(1, 300) as i32, rng.range(1, 300) as i32);
        check_grid(&p, fw, fh, b);
    }
}

#[test]
fn grid_sizes_at_320x240_and_640x480() {
    let d = GridParams::default();
    let n320 = check_grid(&d, 320, 240, Rect::new(130, 80, 60, 80));
    let n640 = check_grid(&d, 640, 480, Rect::new(260, 160, 120, 160));
    let s320 = grid_scale_count(&d, 320, 240, Rect::new(0, 0, 60, 80)).unwrap();
    let s640 = grid_scale_count(&d, 640, 480, Rect::new(0, 0, 120, 160)).unwrap();
    eprintln!("TLD grid 320x240, box 60x80: {n320} windows, {s320} scales");
    eprintln!("TLD grid 640x480, box 120x160: {n640} windows, {s640} scales");
    assert_eq!((n320, s320), (GRID_320X240_60X80, 11));
    assert_eq!((n640, s640), (GRID_640X480_120X160, 15));
}

/// Window counts of the default grid, from the reference (`opentld_grid`).
const GRID_320X240_60X80: usize = 33_185;
const GRID_640X480_120X160: usize = 104_324;

#[test]
fn grid_rejects_bad_input_without_writing() {
    let d = GridParams::default();
    let b = Rect::new(0, 0, 40, 40);
    assert_eq!(grid_len(&d, 0, 240, b), Err(Error::ZeroSize));
    assert_eq!(
        grid_len(&d, 320, 240, Rect::new(0, 0, 0, 5)),
        Err(Error::ZeroSize)
    );
    assert_eq!(grid_len(&d, 70_000, 240, b), Err(Error::InvalidArgument));
    for p in [
        GridParams {
            min_window_px: 0,
            ..d
        },
        GridParams {
            shift_percent: 0,
            ..d
        },
        GridParams {
            shift_percent: 101,
            ..d
        },
        GridParams {
            scale_steps: 21,
            ..d
        },
    ] {
        assert_eq!(grid_len(&p, 320, 240, b), Err(Error::InvalidArgument));
    }
    let n = grid_len(&d, 320, 240, b).unwrap();
    let s = grid_scale_count(&d, 320, 240, b).unwrap();
    for (dn, ds) in [(1, 0), (0, 1)] {
        let mut buf = GridBuf::new(n - dn, s - ds);
        buf.x.fill(7);
        let r = build_grid(&d, 320, 240, b, buf.storage()).map(|g| g.len());
        assert_eq!(r, Err(Error::BufferTooSmall));
        assert!(buf.x.iter().all(|&v| v == 7));
    }
    // Larger storage is fine; the view is trimmed.
    let mut buf = GridBuf::new(n + 3, s + 2);
    let g = build_grid(&d, 320, 240, b, buf.storage()).unwrap();
    assert_eq!((g.len(), g.scales().len()), (n, s));
    // No scale fits: an empty grid, not an error.
    let mut buf = GridBuf::new(0, 0);
    assert!(build_grid(&d, 20, 20, b, buf.storage()).unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Variance filter
// ---------------------------------------------------------------------------------------------

struct Tables {
    sum: Vec<u32>,
    sq: Vec<u64>,
    size: (usize, usize),
}

impl Tables {
    fn of(img: &Img<u8>) -> Self {
        let size = integral_size(img.width, img.height);
        let mut t = Self {
            sum: vec![0; size.0 * size.1],
            sq: vec![0; size.0 * size.1],
            size,
        };
        t.fill(img);
        t
    }

    fn fill(&mut self, img: &Img<u8>) {
        let (w, h) = self.size;
        let mut s = ImageViewMut::packed(&mut self.sum, w, h).unwrap();
        let mut q = ImageViewMut::packed(&mut self.sq, w, h).unwrap();
        integral_u8(&img.view(), &mut s, Some(&mut q)).unwrap();
    }

    fn integral(&self) -> IntegralImage<'_> {
        let (w, h) = self.size;
        IntegralImage::new(
            ImageView::packed(&self.sum, w, h).unwrap(),
            Some(ImageView::packed(&self.sq, w, h).unwrap()),
        )
        .unwrap()
    }
}

/// Sum, sum of squares and two-pass `f64` population variance of a window's pixels.
fn window_stats(img: &Img<u8>, r: Rect) -> (i128, i128, f64) {
    let px: Vec<f64> = (r.y..r.y + r.height)
        .flat_map(|y| (r.x..r.x + r.width).map(move |x| (x, y)))
        .map(|(x, y)| img.at(x as usize, y as usize) as f64)
        .collect();
    let n = px.len() as f64;
    let mean = px.iter().sum::<f64>() / n;
    let var = px.iter().map(|p| (p - mean) * (p - mean)).sum::<f64>() / n;
    let s = px.iter().map(|&p| p as i128).sum();
    let q = px.iter().map(|&p| (p * p) as i128).sum();
    (s, q, var)
}

/// An image of flat, noisy and textured patches, so that variances spread over a wide range.
fn patchy_image(rng: &mut Rng, w: usize, h: usize) -> Img<u8> {
    let cell = 4 + rng.below(12);
    let kinds: Vec<(u8, u8)> = (0..64)
        .map(|_| (rng.u8(), rng.pick(&[0u8, 1, 3, 40, 255])))
        .collect();
    Img::from_fn(rng, w, h, |rng, x, y| {
        let (base, amp) = kinds[(x / cell + 7 * (y / cell)) % kinds.len()];
        let noise = if amp == 0 {
            0
        } else {
            rng.range(0, amp as i64)
        };
        (base as i64 + noise).min(255) as u8
    })
}

#[test]
fn variance_filter_matches_two_pass_reference() {
    let mut rng = Rng::new(0x7a2);
    for round in 0..12 {
        let (fw, fh) = (rng.range(30, 90) as usize, rng.range(30, 70) as usize);
        let img = if round % 2 == 0 {
            patchy_image(&mut rng, fw, fh)
        } else {
            random_u8(&mut rng, fw, fh)
        };
        let t = Tables::of(&img);
        let ii = t.integral();
        let p = GridParams {
            min_window_px: 3,
            shift_percent: 20,
            scale_steps: 4,
        };
        let b = Rect::new(0, 0, rng.range(4, 20) as i32, rng.range(4, 20) as i32);
        let mut gb = GridBuf::for_grid(&p, fw, fh, b);
        let g = build_grid(&p, fw, fh, b, gb.storage()).unwrap();
        let stats: Vec<_> = (0..g.len())
            .map(|i| window_stats(&img, g.window(i)))
            .collect();
        let mut out = vec![u32::MAX; g.len()];

        // Thresholds anywhere: decisions agree with the f64 reference away from the threshold.
        for _ in 0..8 {
            let thr = rng.unit() * rng.pick(&[30.0, 500.0, 5000.0]);
            let vt = VarianceThreshold::from_q16((thr * 65536.0) as u64);
            let thr = vt.q16() as f64 / 65536.0;
            let kept = variance_filter(&ii, &g, vt, &mut out).unwrap();
            let mut want = Vec::new();
            for (i, &(_, _, var)) in stats.iter().enumerate() {
                if (var - thr).abs() > 1e-9 * thr.max(1.0) {
                    if var >= thr {
                        want.push(i as u32);
                    }
                } else {
                    // Too close to call in f64: use the exact rule.
                    let (s, q, _) = stats[i];
                    let n = g.window(i).area() as u32;
                    if passes_variance(n, s as u64, q as u64, vt) {
                        want.push(i as u32);
                    }
                }
            }
            assert_eq!(&out[..kept], &want[..], "round {round}, thr {thr}");
        }

        // Exactly at a window's own variance: the integer rule, bit for bit.
        for _ in 0..6 {
            let i = rng.below(g.len());
            let r = g.window(i);
            let own = VarianceThreshold::from_window(&ii, r, 1, 1).unwrap();
            let (s, q, var) = stats[i];
            let n = r.area() as i128;
            let d = n * q - s * s;
            assert_eq!(own.q16() as i128, d * 65536 / (n * n), "floor(var·2¹⁶)");
            assert!((own.q16() as f64 / 65536.0 - var).abs() < 1.0 / 65536.0 + 1e-9);
            for vt in [own, VarianceThreshold::from_q16(own.q16() + 1)] {
                let kept = variance_filter(&ii, &g, vt, &mut out).unwrap();
                let want: Vec<u32> = (0..g.len())
                    .filter(|&j| {
                        let (s, q, _) = stats[j];
                        let n = g.window(j).area() as i128;
                        (n * q - s * s) * 65536 >= vt.q16() as i128 * n * n
                    })
                    .map(|j| j as u32)
                    .collect();
                assert_eq!(&out[..kept], &want[..]);
            }
            // The window itself survives its own variance (≥, rounded down).
            let kept = variance_filter(&ii, &g, own, &mut out).unwrap();
            assert!(out[..kept].contains(&(i as u32)));
        }
    }
}

#[test]
fn variance_threshold_constructors_agree() {
    let mut rng = Rng::new(0x7a3);
    let img = patchy_image(&mut rng, 64, 48);
    let t = Tables::of(&img);
    let ii = t.integral();
    for _ in 0..50 {
        let r = Rect::new(
            rng.range(0, 40) as i32,
            rng.range(0, 30) as i32,
            rng.range(1, 24) as i32,
            rng.range(1, 18) as i32,
        );
        let px: Vec<u8> = (r.y..r.bottom() as i32)
            .flat_map(|y| (r.x..r.right() as i32).map(move |x| (x, y)))
            .map(|(x, y)| img.at(x as usize, y as usize))
            .collect();
        let (num, den) = DEFAULT_VARIANCE_FACTOR;
        let a = VarianceThreshold::from_window(&ii, r, num, den).unwrap();
        let b = VarianceThreshold::from_samples(&px, num, den).unwrap();
        assert_eq!(a, b);
        let (_, _, var) = window_stats(&img, r);
        assert!((a.q16() as f64 / 65536.0 - var / 2.0).abs() < 1.0 / 65536.0 + 1e-9);
    }
    assert_eq!(
        VarianceThreshold::from_samples(&[], 1, 2),
        Err(Error::ZeroSize)
    );
    assert_eq!(
        VarianceThreshold::from_samples(&[1, 2], 1, 0),
        Err(Error::InvalidArgument)
    );
    // A flat patch has variance 0: every window passes.
    assert_eq!(
        VarianceThreshold::from_samples(&[9; 30], 1, 2)
            .unwrap()
            .q16(),
        0
    );
}

#[test]
fn variance_filter_rejects_bad_input() {
    let mut rng = Rng::new(0x7a4);
    let img = random_u8(&mut rng, 60, 50);
    let t = Tables::of(&img);
    let d = GridParams::default();
    let b = Rect::new(0, 0, 30, 30);
    let mut gb = GridBuf::for_grid(&d, 60, 50, b);
    let g = build_grid(&d, 60, 50, b, gb.storage()).unwrap();
    let vt = VarianceThreshold::from_q16(0);
    let mut out = vec![7u32; g.len()];
    assert_eq!(
        variance_filter(&t.integral(), &g, vt, &mut out[..g.len() - 1]),
        Err(Error::BufferTooSmall)
    );
    let no_sq = IntegralImage::new(ImageView::packed(&t.sum, 61, 51).unwrap(), None).unwrap();
    assert_eq!(
        variance_filter(&no_sq, &g, vt, &mut out),
        Err(Error::InvalidArgument)
    );
    let other = Tables::of(&random_u8(&mut rng, 61, 50));
    assert_eq!(
        variance_filter(&other.integral(), &g, vt, &mut out),
        Err(Error::SizeMismatch)
    );
    assert!(out.iter().all(|&v| v == 7));
    assert_eq!(
        variance_filter(&t.integral(), &g, vt, &mut out),
        Ok(g.len())
    );
}

// ---------------------------------------------------------------------------------------------
// Fern ensemble
// ---------------------------------------------------------------------------------------------

/// The pixel pairs from the documented rule, with the tests' own SplitMix64.
fn reference_offsets(p: &FernParams, scales: &[GridScale]) -> Vec<PixelPair> {
    let per = (p.ferns * p.features) as usize;
    let mut rng = Rng::new(p.seed);
    let rel: Vec<[u64; 4]> = (0..per)
        .map(|_| [0; 4].map(|_: u64| rng.next_u64() >> 40))
        .collect();
    let mut out = Vec::new();
    for s in scales {
        let at = |u: u64, side: u16| ((u as f64 / 16_777_216.0) * side as f64).floor() as u16;
        for r in &rel {
            out.push(PixelPair {
                x1: at(r[0], s.width),
                y1: at(r[1], s.height),
                x2: at(r[2], s.width),
                y2: at(r[3], s.height),
            });
        }
    }
    out
}

fn reference_codes(
    p: &FernParams,
    img: &Img<u8>,
    g: &Grid<'_>,
    off: &[PixelPair],
    wins: &[u32],
) -> Vec<u16> {
    let (nf, nb) = (p.ferns as usize, p.features as usize);
    let mut out = Vec::new();
    for &wi in wins {
        let r = g.window(wi as usize);
        let s = g.scale_index()[wi as usize] as usize;
        for f in 0..nf {
            let mut code = 0u16;
            for b in 0..nb {
                let pp = off[s * nf * nb + f * nb + b];
                let a = img.at(r.x as usize + pp.x1 as usize, r.y as usize + pp.y1 as usize);
                let c = img.at(r.x as usize + pp.x2 as usize, r.y as usize + pp.y2 as usize);
                code |= ((a > c) as u16) << (nb - 1 - b);
            }
            out.push(code);
        }
    }
    out
}

#[test]
fn fern_offsets_and_codes_match_reference() {
    let mut rng = Rng::new(0xfe7);
    for round in 0..10 {
        let p = FernParams {
            ferns: rng.range(1, 12) as u32,
            features: rng.range(1, 16) as u32,
            seed: rng.next_u64(),
            ..FernParams::default()
        };
        let (fw, fh) = (rng.range(40, 120) as usize, rng.range(40, 100) as usize);
        let img = random_u8(&mut rng, fw, fh);
        let gp = GridParams {
            min_window_px: rng.range(1, 12) as u32,
            ..GridParams::default()
        };
        let b = Rect::new(0, 0, rng.range(8, 36) as i32, rng.range(8, 36) as i32);
        let mut gb = GridBuf::for_grid(&gp, fw, fh, b);
        let g = build_grid(&gp, fw, fh, b, gb.storage()).unwrap();
        let n_off = offsets_len(&p, g.scales().len()).unwrap();
        assert_eq!(n_off, g.scales().len() * (p.ferns * p.features) as usize);
        let mut off = vec![PixelPair::default(); n_off];
        build_offsets(&p, g.scales(), &mut off).unwrap();
        assert_eq!(off, reference_offsets(&p, g.scales()), "round {round}");

        // Every window, then a random subset in random order.
        let all: Vec<u32> = (0..g.len() as u32).collect();
        let some: Vec<u32> = (0..50).map(|_| rng.below(g.len()) as u32).collect();
        for wins in [&all, &some] {
            let mut codes = vec![0xDEAD; wins.len() * p.ferns as usize + 3];
            fern_codes(&p, &img.view(), &g, &off, wins, &mut codes).unwrap();
            let n = wins.len() * p.ferns as usize;
            assert_eq!(codes[..n], reference_codes(&p, &img, &g, &off, wins)[..]);
            assert!(
                codes[n..].iter().all(|&c| c == 0xDEAD),
                "wrote past the codes"
            );
            assert!(codes[..n].iter().all(|&c| (c as u32) < 1 << p.features));
        }
    }
}

#[test]
fn fern_codes_are_deterministic() {
    let d = FernParams::default();
    let gp = GridParams::default();
    let b = Rect::new(0, 0, 60, 80);
    let mut gb = GridBuf::for_grid(&gp, 320, 240, b);
    let g = build_grid(&gp, 320, 240, b, gb.storage()).unwrap();
    let n_off = offsets_len(&d, g.scales().len()).unwrap();
    let (mut a, mut c) = (
        vec![PixelPair::default(); n_off],
        vec![PixelPair::default(); n_off],
    );
    build_offsets(&d, g.scales(), &mut a).unwrap();
    build_offsets(&d, g.scales(), &mut c).unwrap();
    assert_eq!(a, c);
    let other = FernParams { seed: 1, ..d };
    build_offsets(&other, g.scales(), &mut c).unwrap();
    assert_ne!(a, c);
    // Pinned values: the pairs (hence every code) are the same on every platform and run.
    assert_eq!(reference_offsets(&d, g.scales()), a);
    let pair = |x1, y1, x2, y2| PixelPair { x1, y1, x2, y2 };
    assert_eq!(g.scales()[0].width, 24);
    assert_eq!(a[0], pair(21, 13, 0, 31), "seed 0, first pair at 24x32");
    assert_eq!(
        a[a.len() - 1],
        pair(20, 55, 49, 129),
        "seed 0, last pair at the largest scale"
    );
    let img = random_u8(&mut Rng::new(5), 320, 240);
    let wins: Vec<u32> = (0..g.len() as u32).step_by(97).collect();
    let mut k1 = vec![0u16; wins.len() * 10];
    let mut k2 = vec![1u16; wins.len() * 10];
    fern_codes(&d, &img.view(), &g, &a, &wins, &mut k1).unwrap();
    fern_codes(&d, &img.view(), &g, &a, &wins, &mut k2).unwrap();
    assert_eq!(k1, k2);
}

#[test]
fn fern_codes_reject_bad_input() {
    let d = FernParams::default();
    let gp = GridParams::default();
    let b = Rect::new(0, 0, 30, 30);
    let mut gb = GridBuf::for_grid(&gp, 80, 60, b);
    let g = build_grid(&gp, 80, 60, b, gb.storage()).unwrap();
    let img = random_u8(&mut Rng::new(1), 80, 60);
    let n_off = offsets_len(&d, g.scales().len()).unwrap();
    let mut off = vec![PixelPair::default(); n_off];
    assert_eq!(
        build_offsets(&d, g.scales(), &mut off[..n_off - 1]),
        Err(Error::BufferTooSmall)
    );
    build_offsets(&d, g.scales(), &mut off).unwrap();
    let wins = [0u32, 1];
    let mut codes = vec![7u16; 20];
    let v = img.view();
    assert_eq!(
        fern_codes(&d, &v, &g, &off, &wins, &mut codes[..19]),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        fern_codes(&d, &v, &g, &off[..n_off - 1], &wins, &mut codes),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        fern_codes(&d, &v, &g, &off, &[g.len() as u32], &mut codes),
        Err(Error::OutOfBounds)
    );
    let small = random_u8(&mut Rng::new(2), 79, 60);
    assert_eq!(
        fern_codes(&d, &small.view(), &g, &off, &wins, &mut codes),
        Err(Error::SizeMismatch)
    );
    let mut bad = off.clone();
    bad[5].x2 = g.scales()[0].width;
    assert_eq!(
        fern_codes(&d, &v, &g, &bad, &wins, &mut codes),
        Err(Error::OutOfBounds)
    );
    assert!(codes.iter().all(|&c| c == 7));
    for p in [
        FernParams { ferns: 0, ..d },
        FernParams { features: 17, ..d },
        FernParams {
            positive_threshold: f32::NAN,
            ..d
        },
        FernParams {
            negative_threshold: 1.5,
            ..d
        },
    ] {
        assert_eq!(ensemble_len(&p), Err(Error::InvalidArgument));
        assert_eq!(offsets_len(&p, 3), Err(Error::InvalidArgument));
    }
}

struct FernBuf {
    pos: Vec<u32>,
    neg: Vec<u32>,
    post: Vec<f32>,
}

impl FernBuf {
    fn new(p: &FernParams) -> Self {
        let n = ensemble_len(p).unwrap();
        Self {
            pos: vec![9; n],
            neg: vec![9; n],
            post: vec![9.0; n],
        }
    }

    fn tables(&mut self) -> FernTables<'_> {
        FernTables {
            positive: &mut self.pos,
            negative: &mut self.neg,
            posterior: &mut self.post,
        }
    }
}

#[test]
fn fern_posteriors_follow_counts() {
    let d = FernParams::default();
    assert_eq!(ensemble_len(&d), Ok(10 << 13));
    let mut fb = FernBuf::new(&d);
    let mut e = FernEnsemble::new(&d, fb.tables()).unwrap();
    let code: Vec<u16> = (0..10).map(|f| (f * 811) as u16).collect();
    assert_eq!(e.confidence(&code), Ok(0.0));
    // Untrained: a positive is learnt (0 ≤ 0.5), a negative is not (0 < 0.5).
    assert_eq!(e.train(&code, false), Ok(false));
    assert_eq!(e.train(&code, true), Ok(true));
    assert_eq!(e.confidence(&code), Ok(1.0));
    assert!(e.accepts(1.0) && !e.accepts(0.5));
    // Confident positive: no more positive learning; a negative is learnt (1 ≥ 0.5).
    assert_eq!(e.train(&code, true), Ok(false));
    assert_eq!(e.train(&code, false), Ok(true));
    assert_eq!(e.confidence(&code), Ok(0.5));
    e.update(&code, false).unwrap();
    assert_eq!(e.counts(3, code[3]), Some((1, 2)));
    // The documented order: f32 posteriors summed fern by fern, then divided by 10.
    let third = (1.0f64 / 3.0) as f32;
    let mean_third = (0..10).fold(0.0f32, |acc, _| acc + third) / 10.0;
    assert_eq!(e.confidence(&code), Ok(mean_third));
    let leaves = 1 << 13;
    assert_eq!(
        e.posteriors()[3 * leaves + code[3] as usize],
        (1.0f64 / 3.0) as f32
    );
    assert_eq!(e.posteriors().iter().filter(|&&p| p != 0.0).count(), 10);
    // Batch confidences equal single ones.
    let mut two = code.clone();
    two.extend((0..10).map(|f| f as u16 + 1));
    let mut out = [9.0f32; 3];
    e.confidences(&two, &mut out).unwrap();
    assert_eq!(out, [mean_third, 0.0, 9.0]);
    // Errors change nothing.
    assert_eq!(e.confidence(&code[..9]), Err(Error::SizeMismatch));
    let mut wide = code.clone();
    wide[0] = 1 << 13;
    assert_eq!(e.train(&wide, true), Err(Error::InvalidArgument));
    assert_eq!(
        e.confidences(&two[..15], &mut out),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        e.confidences(&two, &mut out[..1]),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(e.counts(3, code[3]), Some((1, 2)));
    assert_eq!(e.counts(10, 0), None);
    let mut short = FernBuf::new(&d);
    short.post.pop();
    assert!(matches!(
        FernEnsemble::new(&d, short.tables()),
        Err(Error::BufferTooSmall)
    ));
    assert_eq!(short.pos[0], 9, "nothing written on error");
}

/// A 160 × 120 frame: background noise, and at (50, 30) a 48 × 48 object drawn by `object`.
fn scene(rng: &mut Rng, object: &Img<u8>, noise: i64) -> Img<u8> {
    Img::from_fn(rng, 160, 120, |rng, x, y| {
        if (50..98).contains(&x) && (30..78).contains(&y) {
            (object.at(x - 50, y - 30) as i64 + rng.range(-noise, noise)).clamp(0, 255) as u8
        } else {
            rng.u8()
        }
    })
}

fn blurred(img: &Img<u8>) -> Img<u8> {
    let k = gaussian_kernel_size(2.0).unwrap();
    let mut out = Img::from_fn(&mut Rng::new(0), img.width, img.height, |_, _, _| 0u8);
    let mut scratch = vec![0i32; separable_scratch_len(img.width, k, k)];
    gaussian_blur_u8(
        &img.view(),
        &mut out.view_mut(),
        k,
        2.0,
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    out
}

/// A smooth random texture (random blobs), the kind of object TLD tracks.
fn texture(rng: &mut Rng) -> Img<u8> {
    let raw = Img::from_fn(rng, 48, 48, |rng, _, _| rng.u8());
    blurred(&raw)
}

#[test]
fn ferns_separate_trained_patterns() {
    let d = FernParams {
        seed: 42,
        ..FernParams::default()
    };
    let gp = GridParams::default();
    let b = Rect::new(50, 30, 48, 48);
    let mut gb = GridBuf::for_grid(&gp, 160, 120, b);
    let g = build_grid(&gp, 160, 120, b, gb.storage()).unwrap();
    let target = (0..g.len())
        .find(|&i| g.window(i) == Rect::new(51, 31, 48, 48))
        .unwrap() as u32;
    let mut off = vec![PixelPair::default(); offsets_len(&d, g.scales().len()).unwrap()];
    build_offsets(&d, g.scales(), &mut off).unwrap();
    let mut fb = FernBuf::new(&d);
    let mut e = FernEnsemble::new(&d, fb.tables()).unwrap();

    let mut rng = Rng::new(0x5ca1e);
    let object = texture(&mut rng);
    let mut code = vec![0u16; 10];
    let sample = |rng: &mut Rng, positive: bool, code: &mut [u16]| {
        let obj = if positive {
            object.clone()
        } else {
            texture(rng)
        };
        let frame = blurred(&scene(rng, &obj, 6));
        fern_codes(&d, &frame.view(), &g, &off, &[target], code).unwrap();
    };
    for _ in 0..6 {
        for i in 0..40 {
            sample(&mut rng, i % 2 == 0, &mut code);
            e.train(&code, i % 2 == 0).unwrap();
        }
    }
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for i in 0..40 {
        sample(&mut rng, i % 2 == 0, &mut code);
        let c = e.confidence(&code).unwrap();
        if i % 2 == 0 { &mut pos } else { &mut neg }.push(c);
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    eprintln!(
        "fern confidence: positives {:.3}, negatives {:.3}",
        mean(&pos),
        mean(&neg)
    );
    // The bootstrap rule stops learning a positive once it passes 0.5, so positives settle
    // above the threshold rather than near 1.
    let accepted = pos.iter().filter(|&&c| e.accepts(c)).count();
    assert!(accepted >= 18, "positives {pos:?}");
    assert!(neg.iter().all(|&c| !e.accepts(c)), "negatives {neg:?}");
    assert!(mean(&pos) > 0.65 && mean(&neg) < 0.1, "{pos:?} {neg:?}");

    // The early-exit scan agrees with full codes wherever a decision can depend on it.
    let frame = blurred(&scene(&mut rng, &object, 6));
    let all: Vec<u32> = (0..g.len() as u32).collect();
    let mut full = vec![0u16; all.len() * 10];
    fern_codes(&d, &frame.view(), &g, &off, &all, &mut full).unwrap();
    let mut full_conf = vec![0f32; all.len()];
    e.confidences(&full, &mut full_conf).unwrap();
    for floor in [0.0f32, 0.3, 0.5, 0.62] {
        let mut codes = vec![0u16; all.len() * 10];
        let mut conf = vec![0f32; all.len()];
        let mut scratch = vec![0u32; fern_scan_scratch_len(&d)];
        fern_scan(
            &e,
            &frame.view(),
            &g,
            &off,
            &all,
            floor,
            &mut scratch,
            &mut codes,
            &mut conf,
        )
        .unwrap();
        let (mut exact, mut rejected) = (0, 0);
        for i in 0..all.len() {
            if full_conf[i] >= floor {
                assert_eq!(conf[i].to_bits(), full_conf[i].to_bits(), "window {i}");
                assert_eq!(codes[i * 10..i * 10 + 10], full[i * 10..i * 10 + 10]);
                exact += 1;
            } else if conf[i] < floor {
                // Rejected early: an upper bound of the true confidence, below the floor.
                assert!(
                    conf[i] >= full_conf[i],
                    "window {i}: {} < {}",
                    conf[i],
                    full_conf[i]
                );
                rejected += 1;
            } else {
                assert_eq!(conf[i].to_bits(), full_conf[i].to_bits(), "window {i}");
            }
        }
        eprintln!("fern_scan floor {floor}: {exact} exact, {rejected} rejected early");
        assert!(exact > 0);
        if floor >= 0.5 {
            assert!(
                rejected > all.len() / 2,
                "early exit rejected only {rejected}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No allocation
// ---------------------------------------------------------------------------------------------

#[test]
fn cascade_calls_do_not_allocate() {
    let gp = GridParams::default();
    let fp = FernParams::default();
    let (fw, fh, b) = (160, 120, Rect::new(40, 30, 40, 48));
    let img = random_u8(&mut Rng::new(3), fw, fh);
    let mut t = Tables::of(&img);
    let n = grid_len(&gp, fw, fh, b).unwrap();
    let mut gb = GridBuf::for_grid(&gp, fw, fh, b);
    let mut small = GridBuf::new(1, 1);
    let mut survivors = vec![0u32; n];
    let mut off = vec![PixelPair::default(); 64 * 130];
    let mut codes = vec![0u16; n * 10];
    let mut confs = vec![0f32; n];
    let mut fb = FernBuf::new(&fp);
    let px = vec![5u8; 225];

    let before = heap_calls();
    let mut sink = 0usize;
    sink += grid_len(&gp, fw, fh, b).unwrap() + grid_scale_count(&gp, fw, fh, b).unwrap();
    sink += grid_len(&gp, 0, fh, b).is_err() as usize;
    sink += build_grid(&gp, fw, fh, b, small.storage()).is_err() as usize;
    let g = build_grid(&gp, fw, fh, b, gb.storage()).unwrap();
    t.fill(&img);
    let ii = t.integral();
    let vt = VarianceThreshold::from_window(&ii, b, 1, 2).unwrap();
    sink += VarianceThreshold::from_samples(&px, 1, 2).unwrap().q16() as usize;
    let kept = variance_filter(&ii, &g, vt, &mut survivors).unwrap();
    sink += variance_filter(&ii, &g, vt, &mut survivors[..0]).is_err() as usize;
    let n_off = offsets_len(&fp, g.scales().len()).unwrap();
    build_offsets(&fp, g.scales(), &mut off[..n_off]).unwrap();
    fern_codes(&fp, &img.view(), &g, &off, &survivors[..kept], &mut codes).unwrap();
    sink += fern_codes(
        &fp,
        &img.view(),
        &g,
        &off,
        &survivors[..kept],
        &mut codes[..0],
    )
    .is_err() as usize;
    sink += ensemble_len(&fp).unwrap();
    let mut e = FernEnsemble::new(&fp, fb.tables()).unwrap();
    for (i, c) in codes[..kept * 10].chunks_exact(10).enumerate() {
        sink += e.train(c, i % 3 == 0).unwrap() as usize;
        sink += (e.confidence(c).unwrap() > 0.5) as usize;
    }
    e.update(&codes[..10], true).unwrap();
    e.confidences(&codes[..kept * 10], &mut confs).unwrap();
    sink += e.counts(0, 0).map_or(0, |c| c.0 as usize);
    let after = heap_calls();
    assert_eq!(after, before, "the cascade allocated");
    assert!(sink > 0 && kept > 0);
}
