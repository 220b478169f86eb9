//! Winograd F(2×2, 3×3) at every instruction-set level this CPU has: the weight transform
//! (AVX-512 gathers of 16 output channels' taps at x86-64-v4, the portable lanes elsewhere and
//! for a last partial group of channels) gives exactly `G g Gᵀ` as written below, on layers with
//! 1 to 70 input channels, 1 to 70 output channels per group (whole and partial groups of 16)
//! and groups; and the convolution (at x86-64-v4 its input transform gathering 16 input
//! channels' patch elements, partial channel groups masked, padding of 0–2 on each side, and
//! its output transform scattering to 16 channel planes per vector, partial tiles included)
//! agrees with a double-precision reference, gives the same bits at every level, and its
//! prepared variant the same bits as it, wherever the GEMMs run the same micro-kernel
//! (`gemm::kernel_at`: AVX-512, AVX2 + FMA or portable). With the `gemm-crate` feature the GEMMs
//! of the CPU's own level go to the `gemm` crate (it cannot be capped), a path of its own.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/conv_reference.rs"]
mod conv_reference;

use common::Rng;

use conv_reference::{assert_within, reference, winograd_eps};
use mvision_core::cpu::{self, Level};
use mvision_core::nn::conv::{
    choose_method, conv2d, conv2d_winograd_prepared, winograd_prepare_weights,
    winograd_prepared_workspace_len, winograd_weights_len, workspace_len, Conv2dShape, ConvMethod,
};
use mvision_core::nn::gemm::{kernel_at, Kernel};

/// `G g Gᵀ` of one 3×3 kernel (row-major), `ξ = 4·row + column`, in `f32` with the module's
/// operations in its order: rows `a`, `½((a + b) + c)`, `½((a − b) + c)`, `c` of `G g`, then
/// the same on its columns.
fn transformed(g: &[f32]) -> [f32; 16] {
    let plus = |a: f32, b: f32, c: f32| 0.5 * (a + b + c);
    let minus = |a: f32, b: f32, c: f32| 0.5 * (a - b + c);
    let mut t = [[0.0f32; 3]; 4];
    for j in 0..3 {
        let (a, b, c) = (g[j], g[3 + j], g[6 + j]);
        t[0][j] = a;
        t[1][j] = plus(a, b, c);
        t[2][j] = minus(a, b, c);
        t[3][j] = c;
    }
    let mut u = [0.0f32; 16];
    for (i, &[a, b, c]) in t.iter().enumerate() {
        u[4 * i..4 * i + 4].copy_from_slice(&[a, plus(a, b, c), minus(a, b, c), c]);
    }
    u
}

#[test]
fn winograd_at_every_level() {
    // (n, c_in, h, w, c_out, groups): partial lane groups (17, 40, 70 channels), exactly one
    // and several whole groups (16, 64), fewer than 16 (1, 5), groups, SqueezeNet's
    // 64 × 13² → 256 layer, and enough input channels (300) for blocks of 64 output channels
    // and a last block of 16.
    let cases = [
        (1, 1, 5, 4, 16, 1),
        (1, 3, 6, 7, 17, 1),
        (2, 5, 9, 5, 40, 1),
        (1, 70, 4, 6, 70, 1),
        (1, 8, 7, 7, 5, 1),
        (1, 6, 5, 8, 64, 2),
        (1, 64, 13, 13, 256, 1),
        (1, 300, 4, 5, 80, 1),
    ];
    let mut rng = Rng::new(0x3a11);
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l <= cpu::detected())
        .collect();
    for (i, &(n, c, h, w, oc, groups)) in cases.iter().enumerate() {
        let mut s = Conv2dShape::new(n, c, h, w, oc, 3, 3);
        s.groups = groups;
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = [(1, 1, 1, 1), (0, 2, 1, 0)][i % 2];
        let d = s.dims().unwrap();
        let x: Vec<f32> = (0..d.input_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let wts: Vec<f32> = (0..d.weight_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let bias: Vec<f32> = (0..oc).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let (cg, ocg) = (c / groups, oc / groups);
        let mut want_u = vec![0.0f32; winograd_weights_len(&s).unwrap()];
        for o in 0..oc {
            let (g, og) = (o / ocg, o % ocg);
            for ic in 0..cg {
                let u = transformed(&wts[(o * cg + ic) * 9..][..9]);
                for (xi, &v) in u.iter().enumerate() {
                    want_u[((g * 16 + xi) * cg + ic) * ocg + og] = v;
                }
            }
        }
        let (want, mag) = reference(&s, &x, &wts, Some(&bias));
        // The exact transform is checked above; the outputs within Winograd's bound.
        let eps = winograd_eps(d.k);
        // The first output of each GEMM path: the gemm crate, or the core's own kernel.
        let mut first: Vec<(Option<Kernel>, Vec<f32>)> = Vec::new();
        for &level in &levels {
            cpu::set_cap(level);
            let mut u = vec![f32::NAN; want_u.len()];
            winograd_prepare_weights(&s, &wts, &mut u).unwrap();
            for (j, (&got, &w)) in u.iter().zip(&want_u).enumerate() {
                assert_eq!(got.to_bits(), w.to_bits(), "{level:?} {s:?}: U[{j}]");
            }
            let mut ws = vec![f32::NAN; workspace_len(ConvMethod::Winograd, &s).unwrap()];
            let mut out = vec![f32::NAN; d.output_len];
            conv2d(
                ConvMethod::Winograd,
                &s,
                &x,
                &wts,
                Some(&bias),
                &mut out,
                &mut ws,
            )
            .unwrap();
            assert_within(&out, &want, &mag, eps, &format!("{level:?} {s:?}"));
            // The transforms' arithmetic is the same at every level (the AVX-512 weight gather
            // and output scatter included), and so are the GEMMs of one path.
            let by_crate = cfg!(feature = "gemm-crate") && level >= cpu::detected();
            let path = (!by_crate).then(|| kernel_at(level));
            if !first.iter().any(|(p, _)| *p == path) {
                first.push((path, out.clone()));
            }
            let (_, first) = first.iter().find(|(p, _)| *p == path).unwrap();
            for (j, (&a, &b)) in out.iter().zip(first.iter()).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{level:?} {s:?}: out[{j}] vs the first level on the same GEMM path"
                );
            }
            let mut ws = vec![f32::NAN; winograd_prepared_workspace_len(&s).unwrap()];
            let mut prepared_out = vec![f32::NAN; d.output_len];
            conv2d_winograd_prepared(&s, &x, &u, Some(&bias), &mut prepared_out, &mut ws).unwrap();
            // The prepared path's GEMMs are whole products where `conv`'s are split by output
            // channel blocks of 64: the same sums only up to 64 channels per group.
            if ocg <= 64 {
                for (j, (&a, &b)) in out.iter().zip(&prepared_out).enumerate() {
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "{level:?} {s:?}: prepared out[{j}]"
                    );
                }
            }
        }
        cpu::set_cap(Level::X86V4);
    }
    // The selector takes Winograd from 32 channels per group where AVX-512 runs its transforms,
    // from 64 elsewhere (SqueezeNet's 27² and 13² expand layers); its 16-channel one only where
    // AVX-512 runs it in strips of tiles (`nn_winograd_strips`).
    let padded = |c, hw, oc| {
        let mut s = Conv2dShape::new(1, c, hw, hw, oc, 3, 3);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        s
    };
    for &level in &levels {
        cpu::set_cap(level);
        for (s, from) in [
            (padded(32, 27, 128), 32),
            (padded(48, 13, 192), 48),
            (padded(64, 13, 256), 64),
            (padded(16, 55, 64), 16),
        ] {
            let chosen = choose_method(&s, usize::MAX).unwrap();
            let min = if level == Level::X86V4 { 16 } else { 64 };
            assert_eq!(
                chosen == ConvMethod::Winograd,
                from >= min,
                "{level:?} {s:?}: {chosen:?}"
            );
        }
    }
    cpu::set_cap(Level::X86V4);
}
