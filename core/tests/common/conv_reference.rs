//! The direct `f64` convolution reference of the conv tests (`nn_conv.rs`,
//! `nn_conv_levels.rs`), written from the definition. Each test binary that needs it declares
//! `#[path = "common/conv_reference.rs"] mod conv_reference;`, and uses what it needs of it.
#![allow(dead_code)]

use mvision_core::nn::conv::Conv2dShape;

/// `(Σ x·w + bias, Σ |x·w| + |bias|)` per output, in f64, from the definition.
pub fn reference(
    s: &Conv2dShape,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
) -> (Vec<f64>, Vec<f64>) {
    let d = s.dims().unwrap();
    let (cg, ocg) = (s.c_in / s.groups, s.c_out / s.groups);
    let mut out = vec![0.0; d.output_len];
    let mut mag = vec![0.0; d.output_len];
    for b in 0..s.n {
        for oc in 0..s.c_out {
            let g = oc / ocg;
            for oy in 0..d.out_h {
                for ox in 0..d.out_w {
                    let mut acc = bias.map_or(0.0, |b| b[oc] as f64);
                    let mut m = acc.abs();
                    for icg in 0..cg {
                        let ic = g * cg + icg;
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let iy =
                                    (oy * s.stride_h + ky * s.dilation_h) as i64 - s.pad_top as i64;
                                let ix = (ox * s.stride_w + kx * s.dilation_w) as i64
                                    - s.pad_left as i64;
                                if iy < 0 || ix < 0 || iy >= s.h as i64 || ix >= s.w as i64 {
                                    continue;
                                }
                                let xv = x
                                    [((b * s.c_in + ic) * s.h + iy as usize) * s.w + ix as usize]
                                    as f64;
                                let wv = w[((oc * cg + icg) * s.kh + ky) * s.kw + kx] as f64;
                                acc += xv * wv;
                                m += (xv * wv).abs();
                            }
                        }
                    }
                    let at = ((b * s.c_out + oc) * d.out_h + oy) * d.out_w + ox;
                    out[at] = acc;
                    mag[at] = m;
                }
            }
        }
    }
    (out, mag)
}

/// Asserts that each `got[j]` is within `eps · mag[j]` (plus the least normal `f64`) of
/// `want[j]`, with [`reference`]'s sums and magnitudes; `what` names the case.
pub fn assert_within(got: &[f32], want: &[f64], mag: &[f64], eps: f64, what: &str) {
    for (j, (&g, (&r, &m))) in got.iter().zip(want.iter().zip(mag)).enumerate() {
        assert!(
            (g as f64 - r).abs() <= eps * m + f64::MIN_POSITIVE,
            "{what}: out[{j}] = {g}, want {r}"
        );
    }
}

/// The relative bound of Winograd F(2×2, 3×3) for `k` products per output: its rounding
/// follows the transformed operands (a few times `x·w`), a loose bound.
pub fn winograd_eps(k: usize) -> f64 {
    f32::EPSILON as f64 * 16.0 * (k as f64 + 2.0)
}
