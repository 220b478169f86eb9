//! The integral images at every instruction-set level this CPU has, against a plain reference
//! (one `u64` sum per entry, no vectors): widths 1..70 around the 16-pixel steps, several
//! heights, odd strides with the gaps checked untouched, the constant-255 image (largest
//! sums), rows wider than 2¹⁶ pixels (where a `u32` running sum of squares would overflow),
//! tables large enough for the streamed (non-temporal) path, with and without the squared
//! table, with heights that leave a partial band and strides that start rows at every
//! alignment, and the largest image the `u32` table allows.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

use mvision_core::cpu::{self, Level};
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::integral::{integral_u8, MAX_INTEGRAL_PIXELS};

/// Filler of the table gaps, to see that nothing writes there.
const GAP_SUM: u32 = 0xDEAD_BEEF;
const GAP_SQ: u64 = 0xDEAD_BEEF_F00D_CAFE;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as u8
    }
}

/// A `w × h` image with stride `w + pad`: random, or 255 everywhere.
fn image(rng: &mut Rng, w: usize, h: usize, pad: usize, max: bool) -> (Vec<u8>, usize) {
    let stride = w + pad;
    let px = (0..stride * (h - 1) + w)
        .map(|_| if max { 255 } else { rng.next() })
        .collect();
    (px, stride)
}

/// The reference tables (`u64` entries), packed `(w + 1) × (h + 1)`.
fn reference(src: &[u8], w: usize, h: usize, stride: usize) -> (Vec<u64>, Vec<u64>) {
    let tw = w + 1;
    let mut sum = vec![0u64; tw * (h + 1)];
    let mut sq = vec![0u64; tw * (h + 1)];
    for y in 0..h {
        let (mut s, mut q) = (0u64, 0u64);
        for x in 0..w {
            let p = src[y * stride + x] as u64;
            s += p;
            q += p * p;
            sum[(y + 1) * tw + x + 1] = sum[y * tw + x + 1] + s;
            sq[(y + 1) * tw + x + 1] = sq[y * tw + x + 1] + q;
        }
    }
    (sum, sq)
}

/// Runs `integral_u8` with and without the squared table, tables with stride
/// `w + 1 + table_pad`, and checks every entry against `want` (`None`: the closed form of the
/// constant-255 image) and every gap against its filler.
fn check(
    src: &[u8],
    (w, h, stride): (usize, usize, usize),
    table_pad: usize,
    want: Option<&(Vec<u64>, Vec<u64>)>,
    ctx: &str,
) {
    let (tw, th) = (w + 1, h + 1);
    let ts = tw + table_pad;
    let len = ts * (th - 1) + tw;
    let view = ImageView::new(src, w, h, stride).unwrap();
    let mut sum = vec![GAP_SUM; len];
    let mut sq = vec![GAP_SQ; len];
    let mut only = vec![GAP_SUM; len];
    {
        let mut sv = ImageViewMut::new(&mut sum, tw, th, ts).unwrap();
        let mut qv = ImageViewMut::new(&mut sq, tw, th, ts).unwrap();
        integral_u8(&view, &mut sv, Some(&mut qv)).unwrap();
        let mut ov = ImageViewMut::new(&mut only, tw, th, ts).unwrap();
        integral_u8(&view, &mut ov, None).unwrap();
    }
    assert!(
        sum == only,
        "{ctx}: the sum table depends on the squared one"
    );
    for y in 0..th {
        for x in 0..ts {
            let i = y * ts + x;
            if i >= len {
                break;
            }
            if x >= tw {
                assert_eq!(sum[i], GAP_SUM, "{ctx}: gap ({x}, {y}) of the sum table");
                assert_eq!(sq[i], GAP_SQ, "{ctx}: gap ({x}, {y}) of the squared table");
                continue;
            }
            let (ws, wq) = match want {
                Some((s, q)) => (s[y * tw + x], q[y * tw + x]),
                None => (255 * (x * y) as u64, 255 * 255 * (x * y) as u64),
            };
            assert_eq!(sum[i] as u64, ws, "{ctx}: sum ({x}, {y})");
            assert_eq!(sq[i], wq, "{ctx}: squared sum ({x}, {y})");
        }
    }
}

/// Every case once at the current level.
fn run_all(ctx_level: &str) -> usize {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut cases = 0;
    let mut run = |w: usize, h: usize, pad: usize, table_pad: usize, max: bool| {
        let (src, stride) = image(&mut rng, w, h, pad, max);
        let want = reference(&src, w, h, stride);
        let ctx = format!("{ctx_level} {w}x{h} stride {stride} table pad {table_pad} max {max}");
        check(&src, (w, h, stride), table_pad, Some(&want), &ctx);
        cases += 1;
    };
    for w in 1..=70 {
        for (h, pad, table_pad) in [(1, 0, 0), (3, 1, 3), (6, 5, 1)] {
            run(w, h, pad, table_pad, w % 5 == 0);
        }
    }
    // Wide rows: the running sum of squares passes 2³² within a row.
    run(70_001, 2, 3, 1, true);
    run(70_003, 2, 0, 0, false);
    // Large enough to be streamed (tables over 16 MiB): a partial band at the bottom, odd
    // strides (every row starts at another alignment), narrow and wide rows.
    run(1_451, 1_003, 0, 0, false);
    run(1_400, 1_011, 7, 3, false);
    run(33, 44_001, 1, 2, false);
    run(1_209, 1_001, 2, 0, true);
    // The sum table alone over 16 MiB (streamed without the squared table too).
    run(2_101, 2_003, 5, 1, false);
    cases
}

#[test]
fn every_level_matches_the_reference() {
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l <= cpu::detected())
        .collect();
    for &level in &levels {
        cpu::set_cap(level);
        assert_eq!(cpu::active(), level);
        let cases = run_all(level.name());
        // The largest image the u32 table allows, 255 everywhere: its last sums come within
        // 0.4 % of 2³² (checked against the closed form, no reference tables).
        let (w, h) = (4_112, 4_095);
        assert!((w * h) as u64 <= MAX_INTEGRAL_PIXELS);
        let src = vec![255u8; w * h];
        check(
            &src,
            (w, h, w),
            1,
            None,
            &format!("{} {w}x{h} max", level.name()),
        );
        eprintln!(
            "integral_levels: {} matches the reference on {} cases",
            level.name(),
            cases + 1
        );
    }
    cpu::set_cap(Level::X86V4);
}
