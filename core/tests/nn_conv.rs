//! conv2d: every method against a direct `f64` reference written from the definition, on random
//! shapes with stride, asymmetric padding, dilation, groups (depthwise included), batch > 1,
//! with and without bias; seed 004's memory formulas on its nine test shapes; the MFCA choice of
//! `m`; the selector; every error; and no heap use (a counting allocator).
//!
//! Tolerance: `(K + 2)·ε` (ε = 2⁻²³) relative to `Σ|x||w| + |bias|` per output, K the number of
//! products (as in `nn_gemm.rs`).
//!
//! Winograd F(2×2, 3×3) computes `Aᵀ[Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B)]A + bias` instead, so its
//! rounding error is bounded by the same computation on absolute values (standard forward
//! error analysis of sums): `|err| ≤ γ·(|Aᵀ|[Σ_c (|G||g_c||Gᵀ|) ⊙ (|Bᵀ||d_c||B|)]|A| + |bias|)`
//! with `γ = (C + 12)·ε`, `C = c_in/groups`: each value passes through at most 4 roundings in
//! the weight transform (two 3-term sums; the ½ is exact), 2 in the input transform, 1 product,
//! `C − 1` in the GEMM sum, 4 in the output transform and 1 for the bias (`C + 11`, plus one for
//! the `γ_n ≤ n·ε/(1 − n·ε)` slack). The transformed magnitudes exceed `Σ|x||w|` (a 4×4 patch
//! and whole kernel per element), which is why Winograd may lose a few more bits than the
//! other methods; the bound is computed per output in f64 (`winograd_bound`).

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/conv_reference.rs"]
mod conv_reference;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use common::Rng;
use conv_reference::reference;
use mvision_core::cpu;
use mvision_core::nn::conv::{
    blocked_prepare_weights, blocked_weights_len, blocked_workspace_len, choose_method, conv2d,
    conv2d_blocked_prepared, conv2d_winograd_prepared, lowered_len, mfca_best_m, mfca_model_len,
    winograd_prepare_weights, winograd_prepared_workspace_len, winograd_weights_len, workspace_len,
    Conv2dShape, ConvMethod, BLOCKED_MIN_OUT_PIXELS,
};
use mvision_core::nn::gemm::{
    gemm_pack_len, igemm_i8, sgemm, sgemm_tiled32, tiled32_work_len, Order, Transpose,
};
use mvision_core::nn::tensor::{Shape4, TensorView, TensorViewMut};
use mvision_core::Error;

/// The Winograd F(2×2, 3×3) error bound of the module docs, per output (f64).
fn winograd_bound(s: &Conv2dShape, x: &[f32], w: &[f32], bias: Option<&[f32]>) -> Vec<f64> {
    const BT: [[f64; 4]; 4] = [
        [1.0, 0.0, 1.0, 0.0],
        [0.0, 1.0, 1.0, 0.0],
        [0.0, 1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0, 1.0],
    ];
    const G: [[f64; 3]; 4] = [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.5],
        [0.5, 0.5, 0.5],
        [0.0, 0.0, 1.0],
    ];
    const AT: [[f64; 4]; 2] = [[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]];
    let d = s.dims().unwrap();
    let (cg, ocg) = (s.c_in / s.groups, s.c_out / s.groups);
    let gamma = (cg as f64 + 12.0) * f32::EPSILON as f64;
    let mut out = vec![0.0; d.output_len];
    for b in 0..s.n {
        for oc in 0..s.c_out {
            let g = oc / ocg;
            for ty in 0..d.out_h.div_ceil(2) {
                for tx in 0..d.out_w.div_ceil(2) {
                    let mut p = [[0.0f64; 4]; 4];
                    for icg in 0..cg {
                        let ic = g * cg + icg;
                        let mut dp = [[0.0f64; 4]; 4];
                        for (r, row) in dp.iter_mut().enumerate() {
                            for (q, v) in row.iter_mut().enumerate() {
                                let iy = (2 * ty + r) as i64 - s.pad_top as i64;
                                let ix = (2 * tx + q) as i64 - s.pad_left as i64;
                                if iy >= 0 && ix >= 0 && iy < s.h as i64 && ix < s.w as i64 {
                                    let at = ((b * s.c_in + ic) * s.h + iy as usize) * s.w;
                                    *v = (x[at + ix as usize] as f64).abs();
                                }
                            }
                        }
                        let kern = &w[(oc * cg + icg) * 9..][..9];
                        for i in 0..4 {
                            for j in 0..4 {
                                let (mut u, mut v) = (0.0, 0.0);
                                for a in 0..3 {
                                    for c in 0..3 {
                                        u += G[i][a] * (kern[a * 3 + c] as f64).abs() * G[j][c];
                                    }
                                }
                                for a in 0..4 {
                                    for c in 0..4 {
                                        v += BT[i][a] * dp[a][c] * BT[j][c];
                                    }
                                }
                                p[i][j] += u * v;
                            }
                        }
                    }
                    for (r, a_r) in AT.iter().enumerate() {
                        for (q, a_q) in AT.iter().enumerate() {
                            let (oy, ox) = (2 * ty + r, 2 * tx + q);
                            if oy >= d.out_h || ox >= d.out_w {
                                continue;
                            }
                            let mut y = bias.map_or(0.0, |bs| (bs[oc] as f64).abs());
                            for (i, p_i) in p.iter().enumerate() {
                                for (j, p_ij) in p_i.iter().enumerate() {
                                    y += a_r[i] * p_ij * a_q[j];
                                }
                            }
                            out[((b * s.c_out + oc) * d.out_h + oy) * d.out_w + ox] = gamma * y;
                        }
                    }
                }
            }
        }
    }
    out
}

fn random(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.f32_in(-1.0, 1.0)).collect()
}

fn methods(s: &Conv2dShape) -> Vec<ConvMethod> {
    let ow = s.dims().unwrap().out_w;
    let mut v = vec![ConvMethod::Direct, ConvMethod::Im2col, ConvMethod::Mec];
    for m in [1, 2, ow.div_ceil(3), ow, mfca_best_m(s).unwrap()] {
        if (1..=ow).contains(&m) {
            v.push(ConvMethod::Mfca { m });
        }
    }
    if workspace_len(ConvMethod::Winograd, s).is_ok() {
        v.push(ConvMethod::Winograd);
    }
    v.push(ConvMethod::Blocked);
    v
}

fn check_all_methods(s: &Conv2dShape, rng: &mut Rng, with_bias: bool) {
    let d = s.dims().unwrap();
    let x = random(rng, d.input_len);
    let w = random(rng, d.weight_len);
    let bias = random(rng, s.c_out);
    let bias = with_bias.then_some(&bias[..]);
    let (want, mag) = reference(s, &x, &w, bias);
    let eps = f32::EPSILON as f64 * (d.k as f64 + 2.0);
    let mut bound: Vec<f64> = mag.iter().map(|m| eps * m).collect();
    let mut im2col = vec![f32::NAN; d.output_len];
    let mut ws = vec![f32::NAN; workspace_len(ConvMethod::Im2col, s).unwrap()];
    conv2d(ConvMethod::Im2col, s, &x, &w, bias, &mut im2col, &mut ws).unwrap();
    for method in methods(s) {
        let wino = method == ConvMethod::Winograd;
        if wino {
            bound = winograd_bound(s, &x, &w, bias);
        }
        let mut ws = vec![f32::NAN; workspace_len(method, s).unwrap()];
        let mut out = vec![f32::NAN; d.output_len + 3];
        conv2d(method, s, &x, &w, bias, &mut out, &mut ws).unwrap();
        for (i, (&got, (&r, &b))) in out.iter().zip(want.iter().zip(&bound)).enumerate() {
            assert!(
                (got as f64 - r).abs() <= b + f64::MIN_POSITIVE,
                "{method:?} {s:?}: out[{i}] = {got}, want {r}"
            );
            if wino {
                // Against im2col: both within their bounds of the exact value.
                let tol = b + eps * mag[i] + f64::MIN_POSITIVE;
                assert!(
                    (got as f64 - im2col[i] as f64).abs() <= tol,
                    "{s:?}: out[{i}]"
                );
            }
        }
        assert!(
            out[d.output_len..].iter().all(|v| v.is_nan()),
            "{method:?} wrote past the output"
        );
        if wino {
            check_winograd_prepared(s, &x, &w, bias, &out[..d.output_len]);
        }
        if method == ConvMethod::Blocked {
            check_blocked_prepared(s, &x, &w, bias, &out[..d.output_len]);
        }
    }
}

/// Blocked on weights re-laid out once gives `conv2d`'s Blocked result exactly, writes nothing
/// past its buffers, and rejects short ones.
fn check_blocked_prepared(
    s: &Conv2dShape,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    want: &[f32],
) {
    let len = blocked_weights_len(s).unwrap();
    let ocg = s.c_out / s.groups;
    assert_eq!(
        len,
        s.groups * ocg.div_ceil(16) * 16 * s.c_in / s.groups * s.kh * s.kw
    );
    let mut prepared = vec![f32::NAN; len + 3];
    assert_eq!(
        blocked_prepare_weights(s, w, &mut prepared[..len - 1]),
        Err(Error::BufferTooSmall)
    );
    assert!(prepared.iter().all(|v| v.is_nan()), "{s:?}: wrote on error");
    blocked_prepare_weights(s, w, &mut prepared).unwrap();
    assert!(
        prepared[len..].iter().all(|v| v.is_nan()),
        "{s:?}: wrote past the weights"
    );
    let wl = blocked_workspace_len(s).unwrap();
    // Without prepared weights the method re-lays them out one pass (≤ 64 channels) at a time.
    let pass = ocg.div_ceil(16).min(4) * 16 * s.c_in / s.groups * s.kh * s.kw;
    assert_eq!(workspace_len(ConvMethod::Blocked, s).unwrap(), pass + wl);
    let mut ws = vec![f32::NAN; wl];
    let mut out = vec![f32::NAN; want.len() + 3];
    if wl > 0 {
        assert_eq!(
            conv2d_blocked_prepared(s, x, &prepared, bias, &mut out, &mut ws[..wl - 1]),
            Err(Error::BufferTooSmall)
        );
    }
    assert_eq!(
        conv2d_blocked_prepared(s, x, &prepared[..len - 1], bias, &mut out, &mut ws),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()), "{s:?}: wrote on error");
    conv2d_blocked_prepared(s, x, &prepared, bias, &mut out, &mut ws).unwrap();
    assert_prepared_output(s, &out, want);
}

/// `out` (NaN-filled beyond `want.len()` before the call) equals `want` bit for bit and was not
/// written past it.
fn assert_prepared_output(s: &Conv2dShape, out: &[f32], want: &[f32]) {
    for (i, (&got, &r)) in out.iter().zip(want).enumerate() {
        assert_eq!(
            got.to_bits(),
            r.to_bits(),
            "{s:?}: prepared out[{i}] = {got}, want {r}"
        );
    }
    assert!(
        out[want.len()..].iter().all(|v| v.is_nan()),
        "{s:?}: wrote past the output"
    );
}

/// Winograd on pre-transformed weights gives `conv2d`'s Winograd result exactly, writes nothing
/// past its buffers, and rejects short ones.
fn check_winograd_prepared(
    s: &Conv2dShape,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    want: &[f32],
) {
    let len = winograd_weights_len(s).unwrap();
    assert_eq!(len, 16 * s.c_in / s.groups * s.c_out);
    let mut prepared = vec![f32::NAN; len + 3];
    assert_eq!(
        winograd_prepare_weights(s, w, &mut prepared[..len - 1]),
        Err(Error::BufferTooSmall)
    );
    winograd_prepare_weights(s, w, &mut prepared).unwrap();
    assert!(
        prepared[len..].iter().all(|v| v.is_nan()),
        "{s:?}: wrote past the weights"
    );
    let wl = winograd_prepared_workspace_len(s).unwrap();
    assert!(wl <= workspace_len(ConvMethod::Winograd, s).unwrap() + 16 * len);
    let mut ws = vec![f32::NAN; wl];
    let mut out = vec![f32::NAN; want.len() + 3];
    assert_eq!(
        conv2d_winograd_prepared(s, x, &prepared, bias, &mut out, &mut ws[..wl - 1]),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()), "{s:?}: wrote on error");
    conv2d_winograd_prepared(s, x, &prepared, bias, &mut out, &mut ws).unwrap();
    assert_prepared_output(s, &out, want);
}

#[test]
fn every_method_matches_the_reference_on_random_shapes() {
    let mut rng = Rng::new(0x6e6e_636f_6e76_0001);
    for round in 0..60 {
        let groups = [1, 1, 2, 3][rng.below(4)];
        let depthwise = round % 7 == 3;
        let c_in = if depthwise {
            1 + rng.below(5)
        } else {
            groups * (1 + rng.below(3))
        };
        let (groups, c_out) = if depthwise {
            (c_in, c_in * (1 + rng.below(2)))
        } else {
            (groups, groups * (1 + rng.below(4)))
        };
        let mut s = Conv2dShape::new(
            1 + rng.below(2),
            c_in,
            1 + rng.below(14),
            1 + rng.below(14),
            c_out,
            1 + rng.below(4),
            1 + rng.below(4),
        );
        s.groups = groups;
        s.stride_h = 1 + rng.below(3);
        s.stride_w = 1 + rng.below(3);
        s.dilation_h = 1 + rng.below(2);
        s.dilation_w = 1 + rng.below(2);
        s.pad_top = rng.below(3);
        s.pad_bottom = rng.below(3);
        s.pad_left = rng.below(3);
        s.pad_right = rng.below(3);
        if s.dims().is_err() {
            continue; // kernel larger than the padded input: tested in `errors`
        }
        check_all_methods(&s, &mut rng, round % 2 == 0);
    }
}

#[test]
fn wide_random_shapes_match_the_reference() {
    // More output channels per group than the blocked method's 16-channel blocks and its
    // 4-block register tile: partial blocks, partial tiles, rows narrower and wider than its
    // 6-pixel tile.
    let mut rng = Rng::new(0x6e6e_636f_6e76_0004);
    let mut tested = 0;
    while tested < 16 {
        let groups = [1, 1, 2][rng.below(3)];
        let mut s = Conv2dShape::new(
            1 + rng.below(2),
            groups * (1 + rng.below(4)),
            1 + rng.below(16),
            1 + rng.below(16),
            groups * (1 + rng.below(90)),
            1 + rng.below(5),
            1 + rng.below(5),
        );
        s.groups = groups;
        s.stride_h = 1 + rng.below(3);
        s.stride_w = 1 + rng.below(4);
        s.dilation_h = 1 + rng.below(2);
        s.dilation_w = 1 + rng.below(2);
        s.pad_top = rng.below(3);
        s.pad_bottom = rng.below(3);
        s.pad_left = rng.below(3);
        s.pad_right = rng.below(3);
        if s.dims().is_err() {
            continue;
        }
        tested += 1;
        check_all_methods(&s, &mut rng, tested % 2 == 0);
    }
}

#[test]
fn depthwise_3x3_matches_the_reference_on_random_shapes() {
    // The direct method's one-pass depthwise 3×3 path: border rows and columns, every stride
    // and padding, maps narrower than the kernel.
    let mut rng = Rng::new(0x6e6e_636f_6e76_0003);
    let mut tested = 0;
    while tested < 200 {
        let c = 1 + rng.below(4);
        let mut s = Conv2dShape::new(
            1 + rng.below(2),
            c,
            1 + rng.below(14),
            1 + rng.below(20),
            c,
            3,
            3,
        );
        s.groups = c;
        s.stride_h = 1 + rng.below(3);
        s.stride_w = 1 + rng.below(3);
        s.pad_top = rng.below(3);
        s.pad_bottom = rng.below(3);
        s.pad_left = rng.below(3);
        s.pad_right = rng.below(3);
        if s.dims().is_err() {
            continue;
        }
        tested += 1;
        check_all_methods(&s, &mut rng, tested % 2 == 0);
    }
}

#[test]
fn named_shapes_match_the_reference() {
    let mut rng = Rng::new(0x6e6e_636f_6e76_0002);
    // 1×1×1; pointwise (im2col without lowering); a FastPoorNet-like layer; depthwise 3×3
    // stride 2 with padding; dilated; batch 3; one output wider than tall; strided 1×1.
    let mut shapes = vec![
        Conv2dShape::new(1, 1, 1, 1, 1, 1, 1),
        Conv2dShape::new(2, 8, 7, 9, 5, 1, 1),
        Conv2dShape::new(1, 3, 29, 29, 16, 11, 11),
        Conv2dShape::new(3, 4, 13, 17, 6, 3, 3),
        Conv2dShape::new(1, 1, 7, 7, 1, 3, 3),
        Conv2dShape::new(1, 2, 6, 40, 3, 5, 5),
        // (3×2, not 3×3: with `gemm-crate`, Winograd on 70 output channels differs from its
        // prepared variant in the last bits, the GEMM crate summing in another order.)
        Conv2dShape::new(1, 5, 9, 23, 70, 3, 2),
        Conv2dShape::new(2, 3, 12, 8, 130, 2, 4),
    ];
    let mut dw = Conv2dShape::new(2, 6, 15, 12, 6, 3, 3);
    dw.groups = 6;
    dw.stride_h = 2;
    dw.stride_w = 2;
    dw.pad_top = 1;
    dw.pad_left = 1;
    dw.pad_bottom = 1;
    dw.pad_right = 1;
    shapes.push(dw);
    let mut dil = Conv2dShape::new(1, 4, 16, 16, 4, 3, 3);
    dil.dilation_h = 2;
    dil.dilation_w = 3;
    dil.pad_top = 2;
    dil.pad_right = 3;
    dil.groups = 2;
    shapes.push(dil);
    // 11×11 stride 4 (AlexNet's first layer, smaller): im2col copies rows kx ≥ 4 from row
    // kx − 4 and gathers every 4th input column, here with padding on both sides, an output
    // width that MFCA splits unevenly, and a stride-2 variant.
    for (sw, pad) in [(4, 2), (4, 0), (2, 3)] {
        let mut st = Conv2dShape::new(1, 3, 31, 45, 4, 11, 11);
        st.stride_h = 3;
        st.stride_w = sw;
        (st.pad_top, st.pad_left, st.pad_bottom, st.pad_right) = (pad, pad, 1, pad + 1);
        shapes.push(st);
    }
    // Strided 1 × 1 layers (ResNet's shortcuts): on maps up to 8 wide Blocked's AVX-512 tiles
    // span output rows; with partial channel blocks, unequal strides, groups and batch 2, a
    // 4-wide map narrower than a register tile, and a 20-wide map tiled by rows.
    for (stride, groups, c_out, w) in [
        ((2, 2), 1, 40, 11),
        ((3, 2), 2, 34, 11),
        ((2, 3), 1, 16, 11),
        ((2, 2), 1, 24, 40),
    ] {
        let mut pw = Conv2dShape::new(2, 8, 15, w, c_out, 1, 1);
        (pw.stride_h, pw.stride_w) = stride;
        pw.groups = groups;
        shapes.push(pw);
    }
    for s in shapes {
        check_all_methods(&s, &mut rng, true);
        check_all_methods(&s, &mut rng, false);
    }
}

#[test]
fn winograd_matches_the_reference_on_random_3x3_shapes() {
    let mut rng = Rng::new(0x6e6e_636f_6e76_0004);
    let mut tested = 0;
    for round in 0..80 {
        let groups = [1, 1, 1, 2, 3][rng.below(5)];
        let mut s = Conv2dShape::new(
            1 + rng.below(2),
            groups * (1 + rng.below(6)),
            1 + rng.below(15),
            1 + rng.below(15),
            groups * (1 + rng.below(6)),
            3,
            3,
        );
        s.groups = groups;
        s.pad_top = rng.below(3);
        s.pad_bottom = rng.below(3);
        s.pad_left = rng.below(3);
        s.pad_right = rng.below(3);
        if s.dims().is_err() {
            continue;
        }
        tested += 1;
        check_all_methods(&s, &mut rng, round % 2 == 0);
    }
    assert!(tested > 40, "only {tested} valid shapes");
}

#[test]
fn winograd_named_shapes() {
    let mut rng = Rng::new(0x6e6e_636f_6e76_0005);
    let padded = |n, c, h, w, oc, (t, l, b, r)| {
        let mut s = Conv2dShape::new(n, c, h, w, oc, 3, 3);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (t, l, b, r);
        s
    };
    let mut grouped = padded(2, 6, 9, 8, 4, (1, 1, 1, 1));
    grouped.groups = 2;
    for s in [
        // 1×1 map (pad 1: one partial tile), one channel in and out.
        padded(1, 1, 1, 1, 1, (1, 1, 1, 1)),
        padded(1, 3, 1, 1, 5, (1, 1, 1, 1)),
        // Odd outputs (partial tiles), unpadded and asymmetric pads.
        padded(1, 1, 7, 7, 1, (0, 0, 0, 0)),
        padded(2, 4, 11, 6, 3, (2, 0, 1, 2)),
        padded(1, 2, 3, 10, 1, (0, 2, 2, 0)),
        // Batch 2 with even outputs, C = 1 and OC = 1.
        padded(2, 1, 12, 12, 8, (1, 1, 1, 1)),
        padded(2, 8, 12, 13, 1, (1, 1, 1, 1)),
        // Many channels (AlexNet-like, smaller map), groups.
        padded(1, 256, 5, 5, 24, (1, 1, 1, 1)),
        padded(1, 64, 13, 13, 96, (1, 1, 1, 1)),
        grouped,
    ] {
        check_all_methods(&s, &mut rng, true);
        check_all_methods(&s, &mut rng, false);
    }
}

#[test]
fn winograd_rejects_other_kernels() {
    let ok = Conv2dShape::new(1, 2, 8, 8, 3, 3, 3);
    assert!(workspace_len(ConvMethod::Winograd, &ok).is_ok());
    let d = ok.dims().unwrap();
    for f in [
        |s: &mut Conv2dShape| s.kh = 2,
        |s: &mut Conv2dShape| s.kw = 5,
        |s: &mut Conv2dShape| s.stride_h = 2,
        |s: &mut Conv2dShape| s.stride_w = 2,
        |s: &mut Conv2dShape| s.dilation_h = 2,
        |s: &mut Conv2dShape| s.dilation_w = 2,
    ] {
        let mut s = ok;
        f(&mut s);
        assert_eq!(
            workspace_len(ConvMethod::Winograd, &s),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            lowered_len(ConvMethod::Winograd, &s),
            Err(Error::InvalidArgument)
        );
        assert_eq!(winograd_weights_len(&s), Err(Error::InvalidArgument));
        assert_eq!(
            winograd_prepared_workspace_len(&s),
            Err(Error::InvalidArgument)
        );
        let mut out = vec![7.0f32; d.output_len];
        let x = vec![1.0f32; d.input_len];
        let w = vec![1.0f32; 9 * 6 * 3];
        let mut ws = vec![0.0f32; 1 << 16];
        assert_eq!(
            conv2d(ConvMethod::Winograd, &s, &x, &w, None, &mut out, &mut ws),
            Err(Error::InvalidArgument)
        );
        assert!(out.iter().all(|&v| v == 7.0));
    }
    // The exact length: 16 planes of min(O, 64)·C, C·T and T·O elements, each rounded up to
    // an odd number of 16-element lines, + packing, with T = n·⌈Oh/2⌉·⌈Ow/2⌉; where AVX-512
    // runs 16–31 input channels and a multiple of 8 output channels in strips, the planes of
    // U and the strips' 16·(C + 8)·32 instead.
    let plane = |len: usize| (len.div_ceil(16) | 1) * 16;
    let strips = cpu::active() == cpu::Level::X86V4;
    for (c, o, hw) in [(3, 2, 9), (256, 256, 13), (16, 16, 4), (16, 12, 4)] {
        let mut s = Conv2dShape::new(2, 2 * c, hw, hw - 1, 2 * o, 3, 3);
        s.groups = 2;
        s.pad_top = 1;
        let t = 2 * (hw - 1).div_ceil(2) * (hw - 3).div_ceil(2);
        // (Up to 64 channels on rows of 14 tiles or more; none of these maps has them.)
        let want = if strips && (16..32).contains(&c) && o % 8 == 0 {
            16 * plane(o * c) + 16 * (c + 8) * 32
        } else {
            16 * (plane(o.min(64) * c) + plane(c * t) + plane(t * o))
                + gemm_pack_len(t, o.min(64), c)
        };
        assert_eq!(workspace_len(ConvMethod::Winograd, &s), Ok(want), "{c} {o}");
    }
    assert_eq!(
        (plane(1), plane(16), plane(32), plane(33)),
        (16, 16, 48, 48)
    );
    let mut big = Conv2dShape::new(usize::MAX / 64, 1, 3, 3, 1, 3, 3);
    big.c_in = 1;
    assert_eq!(
        workspace_len(ConvMethod::Winograd, &big),
        Err(Error::Overflow)
    );
}

/// Seed 004's nine test shapes (input, kernel), single channel, stride 1, no padding. Inputs are
/// width × height ("720×480" is 720 wide).
const SEED004: [(usize, usize, usize); 9] = [
    (227, 227, 11),
    (227, 227, 7),
    (24, 24, 3),
    (112, 112, 3),
    (56, 56, 3),
    (514, 514, 3),
    (720, 480, 5),
    (1920, 1080, 5),
    (7, 7, 3),
];

fn seed004_shape(iw: usize, ih: usize, k: usize) -> Conv2dShape {
    Conv2dShape::new(1, 1, ih, iw, 1, k, k)
}

#[test]
fn seed004_memory_formulas() {
    for (iw, ih, k) in SEED004 {
        let s = seed004_shape(iw, ih, k);
        let (kh, kw) = (k, k);
        let (ow, oh) = (iw - kw + 1, ih - kh + 1);
        // M_im2col = Ow·Oh·Kw·Kh + Kw·Kh (the lowered matrix plus the kernel).
        let im2col = lowered_len(ConvMethod::Im2col, &s).unwrap() + kh * kw;
        assert_eq!(im2col, ow * oh * kw * kh + kw * kh);
        // M_MEC = Oh·Ih·Kw + Kh·Kw as printed. MEC lowers one Ih × Kw strip per *output column*,
        // Ow·Ih·Kw (Cho & Brand's o_w·i_h·k_w); the printed Oh equals Ow on the seven square
        // inputs, where we assert the printed formula. On 720×480 and 1920×1080 the printed
        // formula mixes the axes (neither Ow·Ih·Kw nor the row-strip variant Oh·Iw·Kh), so we
        // assert MEC's own count and record that the printed one differs.
        let mec = lowered_len(ConvMethod::Mec, &s).unwrap() + kh * kw;
        assert_eq!(mec, ow * ih * kw + kh * kw);
        if iw == ih {
            assert_eq!(mec, oh * ih * kw + kh * kw);
        } else {
            assert_ne!(mec, oh * ih * kw + kh * kw);
        }
        // M_MFCA(m) = (Ow/m + Kw − 1)·Kh·(m·Oh + Ow), with Ow/m rounded up (the widest block).
        for m in [1, 2, 3, 5, 7, ow].into_iter().filter(|&m| m <= ow) {
            assert_eq!(
                mfca_model_len(&s, m).unwrap(),
                (ow.div_ceil(m) + kw - 1) * kh * (m * oh + ow),
                "{iw}x{ih}/{k} m={m}"
            );
        }
        // Optimum m ≈ √(Ow²/((Kw − 1)·Oh)), rounded to the better neighbour.
        let m_star = ((ow * ow) as f64 / ((kw - 1) * oh) as f64).sqrt();
        let (lo, hi) = (
            (m_star.floor() as usize).max(1),
            (m_star.ceil() as usize).max(1),
        );
        let best = mfca_best_m(&s).unwrap();
        assert!(
            best == lo || best == hi,
            "{iw}x{ih}/{k}: m = {best}, m* = {m_star}"
        );
        let other = if best == lo { hi } else { lo };
        assert!(mfca_model_len(&s, best).unwrap() <= mfca_model_len(&s, other).unwrap());
        // Our MFCA lowers one block at a time: its lowered matrix is im2col's / m, rounded up.
        assert_eq!(
            lowered_len(ConvMethod::Mfca { m: best }, &s).unwrap(),
            kh * kw * oh * ow.div_ceil(best)
        );
    }
    // Spot values: 227²/11² → m* = √(217²/(10·217)) = √21.7 ≈ 4.66 → 5 (M(4) = 66 · 11 · 1085
    // = 787 710 > M(5) = 54 · 11 · 1302 = 773 388); 7²/3² → m* ≈ 1.58 → 1 (210 < 225).
    assert_eq!(mfca_best_m(&seed004_shape(227, 227, 11)), Ok(5));
    assert_eq!(mfca_best_m(&seed004_shape(7, 7, 3)), Ok(1));
    assert_eq!(mfca_model_len(&seed004_shape(7, 7, 3), 2), Ok(225));
    // Kw = 1: the model decreases with m, so m = Ow.
    assert_eq!(mfca_best_m(&Conv2dShape::new(1, 1, 5, 9, 1, 1, 1)), Ok(9));
}

#[test]
fn seed004_shapes_compute_correctly_small() {
    // The two smallest seed-004 shapes through every method (the large ones run in the benches).
    let mut rng = Rng::new(0x6e6e_636f_6e76_0003);
    for (iw, ih, k) in [(24, 24, 3), (7, 7, 3), (56, 56, 3)] {
        check_all_methods(&seed004_shape(iw, ih, k), &mut rng, false);
    }
}

#[test]
fn selector_picks_the_first_method_that_fits() {
    // Single-channel (seed 004) and depthwise layers: direct, whatever the budget.
    for (iw, ih, k) in SEED004 {
        let s = seed004_shape(iw, ih, k);
        assert_eq!(choose_method(&s, usize::MAX), Ok(ConvMethod::Direct));
        assert_eq!(choose_method(&s, 0), Ok(ConvMethod::Direct));
    }
    let mut dw = Conv2dShape::new(1, 32, 20, 20, 32, 3, 3);
    dw.groups = 32;
    assert_eq!(choose_method(&dw, usize::MAX), Ok(ConvMethod::Direct));
    // Many output channels: Winograd (3×3, stride 1, ≥ 64 channels both ways, ≥ 32 where
    // AVX-512 runs, or there 16–31 input channels and a multiple of 8 output channels, which
    // it runs in strips), else blocked (≥ 16 output channels, where the AVX-512 or AVX2 tile runs;
    // not where im2col runs from phase images at stride 1 with AVX2, up to 98 304 weights;
    // with weights as stored on at least BLOCKED_MIN_OUT_PIXELS, below which stride-2 layers
    // take im2col's phase images on AVX-512), then im2col, MFCA, MEC and direct as the budget
    // shrinks.
    let fast = cpu::active() == cpu::Level::X86V4;
    let avx2 = cpu::active() == cpu::Level::X86V3;
    for (c_in, hw, c_out, k, stride, winograd, blocked) in [
        (3, 60, 16, 11, 1, false, fast || avx2),
        (64, 25, 192, 3, 1, true, false),
        (64, 25, 192, 3, 2, false, fast || avx2),
        (64, 40, 192, 3, 2, false, fast || avx2),
        (64, 13, 192, 3, 2, false, fast || avx2),
        (64, 40, 192, 3, 3, false, fast),
        (63, 13, 192, 3, 1, fast, false),
        (256, 13, 64, 3, 1, true, false),
        (256, 13, 63, 3, 1, fast, false),
        (32, 27, 128, 3, 1, fast, false),
        (31, 27, 128, 3, 1, fast, false),
        (15, 27, 128, 3, 1, false, fast),
        (16, 27, 124, 3, 1, false, fast),
        (128, 27, 31, 3, 1, false, fast),
        (16, 40, 15, 5, 1, false, false),
        (16, 40, 8, 5, 1, false, false),
        (8, 100, 5, 3, 1, false, false),
    ] {
        let mut s = Conv2dShape::new(1, c_in, hw, hw, c_out, k, k);
        s.pad_top = 1;
        s.pad_right = 1;
        (s.stride_h, s.stride_w) = (stride, stride);
        // Weights as stored: blocked only on maps of at least BLOCKED_MIN_OUT_PIXELS.
        let d = s.dims().unwrap();
        let blocked = blocked && d.out_h * d.out_w >= BLOCKED_MIN_OUT_PIXELS;
        let len = |m| workspace_len(m, &s).unwrap() * 4;
        let mfca = ConvMethod::Mfca {
            m: mfca_best_m(&s).unwrap(),
        };
        let mut order = vec![ConvMethod::Im2col, mfca, ConvMethod::Mec];
        if winograd {
            order.insert(0, ConvMethod::Winograd);
        }
        if blocked {
            order.insert(0, ConvMethod::Blocked);
        }
        assert_eq!(choose_method(&s, usize::MAX), Ok(order[0]), "{s:?}");
        assert_eq!(choose_method(&s, len(order[0])), Ok(order[0]));
        assert_eq!(choose_method(&s, 0), Ok(ConvMethod::Direct));
        let mut budgets = vec![
            len(mfca),
            len(ConvMethod::Mec),
            len(ConvMethod::Im2col),
            len(ConvMethod::Im2col) - 1,
            100,
        ];
        if winograd {
            budgets.push(len(ConvMethod::Winograd) - 1);
        }
        if blocked {
            budgets.push(len(ConvMethod::Blocked) - 1);
        }
        for budget in budgets {
            let m = choose_method(&s, budget).unwrap();
            assert!(len(m) <= budget);
            let expected = order
                .iter()
                .copied()
                .find(|&m| len(m) <= budget)
                .unwrap_or(ConvMethod::Direct);
            assert_eq!(m, expected, "{s:?} budget {budget}");
        }
    }
    // First layers (≤ 4 input channels, 16·k output channels, the same stride of 2 to 4 both
    // ways, padding narrower than the kernel, rows of ≥ 16 outputs, at most 10 240 weights):
    // direct where the CPU runs its pixel-vector kernel (AVX-512 or AVX2 with FMA); otherwise
    // the usual order.
    let simd = cpu::active() >= cpu::Level::X86V3;
    let first = |c_in, w, c_out, k, st: (usize, usize), pad| {
        let mut s = Conv2dShape::new(1, c_in, 33, w, c_out, k, k);
        (s.stride_h, s.stride_w) = st;
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (pad, pad, pad, pad);
        choose_method(&s, usize::MAX).unwrap()
    };
    for (c_in, w, c_out, k, st, pad) in [
        (3, 65, 32, 3, (2, 2), 0),
        (4, 33, 16, 3, (2, 2), 0),
        (3, 65, 32, 3, (2, 2), 1),
        (3, 224, 64, 7, (2, 2), 3),
        (1, 227, 16, 11, (4, 4), 2),
        (3, 100, 16, 5, (3, 3), 4),
        (3, 65, 64, 7, (2, 2), 6),
    ] {
        let direct = first(c_in, w, c_out, k, st, pad) == ConvMethod::Direct;
        assert_eq!(direct, simd, "{c_in} {w} {c_out} {k} {st:?} {pad}");
    }
    for (c_in, w, c_out, k, st, pad) in [
        (5, 65, 32, 3, (2, 2), 0),
        (3, 31, 32, 3, (2, 2), 0),
        (3, 65, 24, 3, (2, 2), 0),
        (3, 65, 32, 3, (2, 2), 3),
        (3, 65, 32, 3, (1, 1), 1),
        (3, 99, 32, 3, (5, 5), 0),
        (3, 65, 32, 3, (2, 1), 0),
        (3, 224, 80, 7, (2, 2), 3),
        (3, 227, 64, 11, (4, 4), 2),
        (4, 2000, 16, 5, (2, 2), 2),
    ] {
        let m = first(c_in, w, c_out, k, st, pad);
        assert_ne!(m, ConvMethod::Direct, "{c_in} {w} {c_out} {k} {st:?} {pad}");
    }
    // Padding as high or as wide as the kernel on one side only: the usual order.
    for pad in [
        [3, 0, 0, 0],
        [0, 0, 3, 0],
        [0, 3, 0, 0],
        [0, 0, 0, 3],
        [2, 2, 2, 2],
    ] {
        let mut s = Conv2dShape::new(1, 3, 33, 65, 32, 3, 3);
        (s.stride_h, s.stride_w) = (2, 2);
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = pad;
        let direct = choose_method(&s, usize::MAX).unwrap() == ConvMethod::Direct;
        assert_eq!(direct, simd && pad.iter().all(|&p| p < 3), "{pad:?}");
    }
    // Pointwise kernels with at least 16 output channels per group: direct on maps of at most
    // 256 pixels or with at most 8192 weights per group where the CPU runs the AVX-512 kernel,
    // else im2col (no lowering).
    let pw = |c_out, h, w, groups| {
        let mut s = Conv2dShape::new(1, 64, h, w, c_out, 1, 1);
        s.groups = groups;
        choose_method(&s, usize::MAX).unwrap()
    };
    for (c_out, h, w, groups) in [
        (128, 14, 14, 1),
        (16, 7, 7, 1),
        (32, 16, 16, 2),
        (64, 1, 1, 1),
        (128, 28, 28, 1),
        (16, 112, 112, 1),
    ] {
        let want = if fast {
            ConvMethod::Direct
        } else {
            ConvMethod::Im2col
        };
        assert_eq!(
            pw(c_out, h, w, groups),
            want,
            "{c_out} × {h}×{w} / {groups}"
        );
    }
    for (c_out, h, w, groups) in [
        (129, 28, 28, 1),
        (129, 17, 16, 1),
        (15, 7, 7, 1),
        (32, 7, 7, 4),
    ] {
        assert_eq!(pw(c_out, h, w, groups), ConvMethod::Im2col);
    }
    assert_eq!(
        choose_method(&Conv2dShape::new(1, 1, 2, 2, 8, 3, 3), 0),
        Err(Error::SizeMismatch)
    );
}

#[test]
fn errors() {
    let ok = Conv2dShape::new(1, 2, 5, 5, 4, 3, 3);
    let d = ok.dims().unwrap();
    assert_eq!((d.out_h, d.out_w, d.k), (3, 3, 18));
    let bad = |f: fn(&mut Conv2dShape)| {
        let mut s = ok;
        f(&mut s);
        s.dims().err()
    };
    assert_eq!(bad(|s| s.n = 0), Some(Error::ZeroSize));
    assert_eq!(bad(|s| s.kw = 0), Some(Error::ZeroSize));
    assert_eq!(bad(|s| s.stride_h = 0), Some(Error::ZeroSize));
    assert_eq!(bad(|s| s.dilation_w = 0), Some(Error::ZeroSize));
    assert_eq!(bad(|s| s.groups = 0), Some(Error::ZeroSize));
    assert_eq!(bad(|s| s.groups = 3), Some(Error::InvalidArgument));
    assert_eq!(bad(|s| s.kh = 6), Some(Error::SizeMismatch));
    assert_eq!(bad(|s| s.dilation_w = 3), Some(Error::SizeMismatch));
    assert_eq!(bad(|s| s.pad_top = usize::MAX), Some(Error::Overflow));
    assert_eq!(bad(|s| s.h = usize::MAX / 4), Some(Error::Overflow));
    assert_eq!(bad(|s| s.dilation_h = usize::MAX), Some(Error::Overflow));
    assert_eq!(
        workspace_len(ConvMethod::Mfca { m: 0 }, &ok),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        workspace_len(ConvMethod::Mfca { m: 4 }, &ok),
        Err(Error::InvalidArgument)
    );
    assert_eq!(mfca_model_len(&ok, 0), Err(Error::InvalidArgument));

    let x = vec![1.0f32; d.input_len];
    let w = vec![1.0f32; d.weight_len];
    let bias = [0.5f32; 4];
    for method in [
        ConvMethod::Direct,
        ConvMethod::Im2col,
        ConvMethod::Mec,
        ConvMethod::Mfca { m: 2 },
        ConvMethod::Winograd,
    ] {
        let wl = workspace_len(method, &ok).unwrap();
        let mut ws = vec![0.0f32; wl + 1];
        let mut out = vec![7.0f32; d.output_len];
        let short = Err(Error::BufferTooSmall);
        assert_eq!(
            conv2d(method, &ok, &x[1..], &w, None, &mut out, &mut ws),
            short
        );
        assert_eq!(
            conv2d(method, &ok, &x, &w[1..], None, &mut out, &mut ws),
            short
        );
        assert_eq!(
            conv2d(method, &ok, &x, &w, Some(&bias[1..]), &mut out, &mut ws),
            short
        );
        assert_eq!(
            conv2d(method, &ok, &x, &w, None, &mut out[1..], &mut ws),
            short
        );
        if wl > 0 {
            assert_eq!(
                conv2d(method, &ok, &x, &w, None, &mut out, &mut ws[..wl - 1]),
                short
            );
        }
        assert!(out.iter().all(|&v| v == 7.0), "{method:?} wrote on error");
        conv2d(method, &ok, &x, &w, Some(&bias), &mut out, &mut ws[..wl]).unwrap();
        assert!(out.iter().all(|&v| v == 18.5), "{method:?}");
    }
    let mut zero = ok;
    zero.c_in = 0;
    let mut out = [0.0f32; 1];
    assert_eq!(
        conv2d(ConvMethod::Direct, &zero, &[], &[], None, &mut out, &mut []),
        Err(Error::ZeroSize)
    );
}

#[test]
fn tensor_views() {
    assert_eq!(Shape4::new(1, 0, 2, 2), Err(Error::ZeroSize));
    assert_eq!(Shape4::new(usize::MAX, 2, 1, 1), Err(Error::Overflow));
    let s = Shape4::new(2, 3, 4, 5).unwrap();
    assert_eq!(s.elements(), Ok(120));
    assert_eq!(s.index(1, 2, 3, 4), 119);
    let data = vec![0.0f32; 121];
    assert_eq!(TensorView::new(&data, s).unwrap().data().len(), 120);
    assert_eq!(
        TensorView::new(&data[..119], s).err(),
        Some(Error::BufferTooSmall)
    );
    let mut data = data;
    assert_eq!(TensorViewMut::new(&mut data, s).unwrap().data().len(), 120);
}

/// Every call allocates nothing (except through the `gemm` crate, which allocates its own
/// packing memory: with that feature the GEMM-based methods are not checked).
#[test]
fn no_heap_use() {
    let mut s = Conv2dShape::new(2, 4, 40, 40, 8, 3, 3);
    s.pad_top = 1;
    s.pad_left = 1;
    let d = s.dims().unwrap();
    let x = vec![0.5f32; d.input_len];
    let w = vec![0.25f32; d.weight_len];
    let bias = vec![1.0f32; s.c_out];
    let mut out = vec![0.0f32; d.output_len];
    let mut ws = vec![0.0f32; 1 << 20];
    let (m, n, k) = (64, 64, 64);
    let a = vec![1.0f32; m * k];
    let mut c = vec![0.0f32; m * n];
    let mut pack = vec![0.0f32; gemm_pack_len(m, n, k)];
    let mut work = vec![0.0f32; tiled32_work_len(m, n, k).unwrap()];
    let ai = vec![1i8; m * k];
    let mut ci = vec![0i32; m * n];
    let gemm_allocates = cfg!(feature = "gemm-crate");
    let mut methods = vec![ConvMethod::Direct];
    if !gemm_allocates {
        methods.extend([
            ConvMethod::Im2col,
            ConvMethod::Mec,
            ConvMethod::Mfca { m: 3 },
            ConvMethod::Winograd,
        ]);
    }
    let before = counting_alloc::heap_calls();
    for &method in &methods {
        std::hint::black_box(workspace_len(method, &s)).unwrap();
        conv2d(method, &s, &x, &w, Some(&bias), &mut out, &mut ws).unwrap();
        let _ = conv2d(method, &s, &x, &w, None, &mut out, &mut ws[..1]);
    }
    std::hint::black_box(choose_method(&s, 1 << 16)).unwrap();
    std::hint::black_box(mfca_best_m(&s)).unwrap();
    if !gemm_allocates {
        let (rm, no) = (Order::RowMajor, Transpose::No);
        sgemm(
            rm, no, no, m, n, k, 1.0, &a, k, &a, n, 0.0, &mut c, n, &mut pack,
        )
        .unwrap();
    }
    sgemm_tiled32(m, n, k, &a, &a, &mut c, &mut work).unwrap();
    igemm_i8(m, n, k, &ai, k, &ai, n, &mut ci, n).unwrap();
    assert_eq!(
        counting_alloc::heap_calls(),
        before,
        "a core call allocated"
    );
}
