//! Max pooling at every instruction-set level this CPU has: the AVX-512 kernel for windows 3
//! columns wide at horizontal stride 1 or 2 (masked border lanes, partial vectors) and the
//! separable path (every other shape, and every shape below x86-64-v4) give exactly the
//! maximum that a plain loop over each window finds, NaN skipped unless the window holds
//! nothing else, a zero maximum +0, on random shapes with padding, ceil mode, batch > 1, rows
//! of over 1024 outputs, and inputs sprinkled with NaN, −∞ and zeros of both signs.
//!
//! Then the 16-channel path (3 × 3 windows at stride 2, at least 16 planes, rows of up to 64
//! pixels: a ring of pixel-major rows) on shapes around its rule's edges: plane counts of 16,
//! 17, 31, 32 and 16 across a batch of 2 (the planes past the last multiple of 16 take the row
//! kernel), rows of 1 to 66 pixels (65 and 66 do not fit the ring), every padding, ceil mode
//! (windows clipped to two rows or columns), with dense NaN and −∞ so that windows of nothing
//! but NaN, of −∞ and NaN, and of ±0 ties occur, and every output is checked bit for bit.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use common::Rng;
use mvision_core::cpu::{self, Level};
use mvision_core::nn::pool::{max_pool2d, Pool2dShape};

/// The maximum of each window from the definition: padding never wins; NaN is skipped; a window
/// with no value but NaN (or none at all) gives NaN; a zero maximum is +0 (whichever of +0 and
/// −0 the window holds, and in whatever order).
fn reference(p: &Pool2dShape, x: &[f32]) -> Vec<f32> {
    let d = p.dims().unwrap();
    let mut out = vec![];
    for plane in x.chunks_exact(p.h * p.w).take(p.n * p.c) {
        for oy in 0..d.out_h {
            for ox in 0..d.out_w {
                let mut m: Option<f32> = None;
                for ky in 0..p.kh {
                    for kx in 0..p.kw {
                        let iy = (oy * p.stride_h + ky) as isize - p.pad_top as isize;
                        let ix = (ox * p.stride_w + kx) as isize - p.pad_left as isize;
                        if iy < 0 || ix < 0 || iy >= p.h as isize || ix >= p.w as isize {
                            continue;
                        }
                        let v = plane[iy as usize * p.w + ix as usize];
                        if !v.is_nan() && m.is_none_or(|m| v > m) {
                            m = Some(v);
                        }
                    }
                }
                out.push(m.map_or(f32::NAN, |m| if m == 0.0 { 0.0 } else { m }));
            }
        }
    }
    out
}

/// Pools `x` at every level in `levels` and compares every output, bits included (any NaN for
/// a NaN), and that nothing past the output is written.
fn check(p: &Pool2dShape, x: &[f32], levels: &[Level]) -> Vec<f32> {
    let d = p.dims().unwrap();
    let want = reference(p, x);
    for &level in levels {
        cpu::set_cap(level);
        let mut out = vec![0.5f32; d.output_len + 3];
        max_pool2d(p, x, &mut out).unwrap();
        for (i, (&got, &w)) in out.iter().zip(&want).enumerate() {
            assert!(
                got.to_bits() == w.to_bits() || (got.is_nan() && w.is_nan()),
                "{level:?} {p:?}: out[{i}] = {got}, want {w}"
            );
        }
        assert_eq!(&out[d.output_len..], &[0.5; 3], "{level:?} {p:?}: tail");
    }
    cpu::set_cap(Level::X86V4);
    want
}

#[test]
fn max_pool_at_every_level() {
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l <= cpu::detected())
        .collect();
    random_shapes(&levels);
    channel_blocks(&levels);
}

/// Random shapes, mostly 3 columns wide, few planes.
fn random_shapes(levels: &[Level]) {
    let mut rng = Rng::new(0x7007);
    let mut next = move || rng.next_u64() as usize;
    let (mut tested, mut simd_shapes) = (0, 0);
    while tested < 300 {
        let kh = 1 + next() % 3;
        let kw = if next() % 4 == 0 { 1 + next() % 4 } else { 3 };
        let mut p = Pool2dShape {
            n: 1 + next() % 2,
            c: 1 + next() % 3,
            h: 1 + next() % 12,
            w: 1 + next() % 70,
            kh,
            kw,
            stride_h: 1 + next() % 3,
            stride_w: 1 + next() % 2 + usize::from(next() % 8 == 0),
            pad_top: next() % kh,
            pad_left: next() % kw,
            pad_bottom: next() % kh,
            pad_right: next() % kw,
            ceil_mode: next() % 2 == 0,
            count_include_pad: false,
        };
        if tested < 4 {
            // SqueezeNet's first pooling, and its narrowest.
            (p.h, p.w, p.kh, p.kw, p.stride_h, p.stride_w) = (9, 111, 3, 3, 2, 2);
            (p.pad_top, p.pad_left, p.pad_bottom, p.pad_right) = (0, 0, 0, 0);
            if tested % 2 == 1 {
                (p.h, p.w) = (13, 13);
            }
        } else if tested < 6 {
            // Rows of more than 1024 outputs (more 16-output chunks than the kernel keeps
            // masks for), at stride 2 and 1.
            (p.h, p.w, p.kh, p.kw, p.stride_h) = (3, 2101, 2, 3, 1);
            p.stride_w = if tested == 4 { 2 } else { 1 };
        }
        if p.dims().is_err() {
            continue;
        }
        tested += 1;
        simd_shapes += usize::from(p.kw == 3 && p.stride_w <= 2);
        let len = p.n * p.c * p.h * p.w;
        let x: Vec<f32> = (0..len)
            .map(|_| match next() % 16 {
                0 => f32::NAN,
                1 => f32::NEG_INFINITY,
                // Zeros of both signs, so that windows hold ±0 ties in either order.
                2 => -0.0,
                3 => 0.0,
                _ => (next() % 2001) as f32 / 100.0 - 10.0,
            })
            .collect();
        check(&p, &x, levels);
    }
    assert!(
        simd_shapes >= 150,
        "only {simd_shapes} shapes with 3-wide windows"
    );
}

/// 3 × 3 / 2 pools of 16 planes or more (the 16-channel path at x86-64-v4) around the edges of
/// its rule, with inputs dense in NaN and −∞ so that every kind of window occurs.
fn channel_blocks(levels: &[Level]) {
    let mut rng = Rng::new(0x9001);
    let mut next = move || rng.next_u64() as usize;
    // (n, c): 16 planes, one and 15 past a block, two blocks, 16 over a batch of 2, four
    // blocks and 5 past them.
    let planes = [(1, 16), (1, 17), (1, 31), (1, 32), (2, 8), (1, 69)];
    // Row widths: tiny (the ring holds many rows), SqueezeNet's and AlexNet's 13, 27 and 55,
    // the ring's widest (64) and past it (65, 66: the row kernel).
    let widths = [1, 2, 3, 4, 5, 7, 13, 16, 17, 27, 31, 55, 63, 64, 65, 66];
    let (mut nan_windows, mut neg_windows, mut zeros) = (0, 0, 0);
    for (i, &w) in widths.iter().chain(&widths).chain(&widths).enumerate() {
        let (n, c) = planes[(i + next() % 2) % planes.len()];
        let h = if i < widths.len() {
            1 + next() % 9
        } else {
            1 + next() % 30
        };
        let mut p = Pool2dShape::new(n, c, h, w, 3, 3);
        (p.stride_h, p.stride_w) = (2, 2);
        (p.pad_top, p.pad_left, p.pad_bottom, p.pad_right) =
            (next() % 3, next() % 3, next() % 3, next() % 3);
        p.ceil_mode = next() % 2 == 0;
        if p.dims().is_err() {
            // A window larger than the padded input: no pool.
            continue;
        }
        // Per shape, how dense NaN and −∞ are (out of 16): from none to most of the input.
        let (nan, neg) = [(1, 1), (8, 2), (11, 4), (4, 9), (0, 0)][i % 5];
        let len = n * c * h * w;
        let x: Vec<f32> = (0..len)
            .map(|_| {
                let r = next() % 16;
                if r < nan {
                    f32::NAN
                } else if r < nan + neg {
                    f32::NEG_INFINITY
                } else {
                    match next() % 6 {
                        0 => -0.0,
                        1 => 0.0,
                        _ => (next() % 2001) as f32 / 100.0 - 10.0,
                    }
                }
            })
            .collect();
        let want = check(&p, &x, levels);
        nan_windows += want.iter().filter(|v| v.is_nan()).count();
        neg_windows += want.iter().filter(|&&v| v == f32::NEG_INFINITY).count();
        zeros += want.iter().filter(|&&v| v == 0.0).count();
    }
    // The inputs did produce each kind of window.
    assert!(
        nan_windows > 100 && neg_windows > 100 && zeros > 100,
        "{nan_windows} NaN, {neg_windows} −∞, {zeros} zero outputs"
    );
}
