//! A fully connected layer of one feature vector (batch 1, the matrix-vector path) at every
//! instruction-set level this CPU has: each output has exactly the bits of its definition
//! (element `i` of the row times the input into partial sum `i mod 32`, in order, products then
//! sums; the 32 sums added pairwise; then the bias), and is within rounding of an `f64` dot
//! product. Weight rows start at every offset from a 64-byte line (the AVX-512 kernel loads
//! them aligned, rotating its sums), rows of 1–300 inputs (multiples of 16 stream several rows
//! at once) and of AlexNet's 9216, 1–41 outputs, inputs with zeros of both signs, no bias and
//! bias; nothing past the outputs is written.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use common::Rng;
use mvision_core::cpu::{self, Level};
use mvision_core::nn::dense::{fully_connected, fully_connected_pack_len};

/// Partial sums of the definition.
const LANES: usize = 32;

/// One output from the definition, in `f32`.
fn reference(x: &[f32], row: &[f32], bias: f32) -> f32 {
    let mut s = [0.0f32; LANES];
    for (i, (&w, &v)) in row.iter().zip(x).enumerate() {
        s[i % LANES] += w * v;
    }
    let mut h = LANES / 2;
    while h > 0 {
        for j in 0..h {
            s[j] += s[j + h];
        }
        h /= 2;
    }
    s[0] + bias
}

fn value(rng: &mut Rng) -> f32 {
    match rng.below(12) {
        0 => 0.0,
        1 => -0.0,
        _ => rng.f32_in(-1.0, 1.0),
    }
}

#[test]
fn fully_connected_batch_1_at_every_level() {
    let mut rng = Rng::new(0x6e6e_6765_6d76_0001);
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l <= cpu::detected())
        .collect();
    let mut offsets_seen = [false; 16];
    for case in 0..400 {
        let k = match case {
            0..4 => 9216,
            _ if case % 3 == 0 => 16 * (1 + rng.below(19)),
            _ => 1 + rng.below(300),
        };
        let n = 1 + rng.below(if k > 1000 { 9 } else { 41 });
        // Where the weights start in their buffer (floats): every offset from a 64-byte line.
        let w_off = case % 16;
        let x_off = rng.below(16);
        // NaN after the last row and after the input: a kernel reading past either gives NaN.
        let mut w_buf = vec![f32::NAN; w_off + n * k + 16];
        let mut x_buf = vec![f32::NAN; x_off + k + 16];
        w_buf[..w_off + n * k]
            .iter_mut()
            .for_each(|v| *v = value(&mut rng));
        x_buf[..x_off + k]
            .iter_mut()
            .for_each(|v| *v = value(&mut rng));
        let (w, x) = (&w_buf[w_off..][..n * k], &x_buf[x_off..][..k]);
        offsets_seen[(w.as_ptr() as usize % 64) / 4] = true;
        let b: Vec<f32> = (0..n).map(|_| value(&mut rng)).collect();
        let bias = (case % 2 == 0).then_some(&b[..]);
        let want: Vec<f32> = (0..n)
            .map(|o| reference(x, &w[o * k..][..k], bias.map_or(0.0, |b| b[o])))
            .collect();
        for (o, &got) in want.iter().enumerate() {
            let mut exact = bias.map_or(0.0, |b| b[o] as f64);
            let mut mag = exact.abs();
            for (&wv, &xv) in w[o * k..][..k].iter().zip(x) {
                exact += wv as f64 * xv as f64;
                mag += (wv as f64 * xv as f64).abs();
            }
            let tol = (k + 2) as f64 * f32::EPSILON as f64 * mag;
            assert!((got as f64 - exact).abs() <= tol, "definition {k}x{n}");
        }
        assert_eq!(fully_connected_pack_len(1, k, n), 0);
        for &level in &levels {
            cpu::set_cap(level);
            let mut out = vec![0.5f32; n + 3];
            fully_connected(1, k, n, x, w, bias, &mut out, &mut []).unwrap();
            for (o, (&got, &want)) in out.iter().zip(&want).enumerate() {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{level:?} k={k} n={n} weights at +{w_off}: out[{o}] = {got}, want {want}"
                );
            }
            assert_eq!(&out[n..], &[0.5; 3], "{level:?} k={k} n={n}: tail");
        }
        cpu::set_cap(Level::X86V4);
    }
    assert!(offsets_seen.iter().all(|&s| s), "{offsets_seen:?}");
}
