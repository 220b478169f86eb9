//! Winograd F(2×2, 3×3) on layers of 16 to 31 input channels per group (up to 64 on rows of at
//! least 14 tiles), which x86-64-v4 runs strip by strip (`winograd::fused`): against a double-precision reference, prepared and
//! per-call weights giving the same bits, on maps whose rows of tiles take one vector of
//! tiles, two, and a strip of 32 and a rest; padding of 0–2; batches and groups; and layers
//! just outside the range (15 or 65 channels, 12 output channels, 48 channels on rows of 13
//! tiles), which keep the plane-wise path.
//! Where x86-64-v4 is active, the prepared workspace shows which path ran.

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

#[test]
fn winograd_strips_match_the_reference_and_the_prepared_path() {
    // (n, c_in, h, w, c_out, groups, pads top/left/bottom/right, whether strips take it).
    let cases = [
        (1, 16, 55, 55, 64, 1, (1, 1, 1, 1), true), // SqueezeNet's expand layer: 28 tiles a row
        (2, 16, 7, 9, 8, 1, (0, 2, 1, 0), true),    // one vector of tiles, batch 2
        (1, 31, 68, 66, 16, 1, (1, 1, 1, 1), true), // 33 tiles a row: a strip of 32 and 1
        (1, 40, 10, 12, 48, 2, (2, 0, 0, 2), true), // groups of 20 → 24
        (1, 17, 5, 4, 8, 1, (2, 2, 2, 2), true),    // more padding than map
        (1, 15, 9, 9, 16, 1, (1, 1, 1, 1), false),  // too few input channels
        (1, 16, 9, 9, 12, 1, (1, 1, 1, 1), false),  // output channels not a multiple of 8
        (1, 64, 56, 56, 64, 1, (1, 1, 1, 1), true), // ResNet-18's 64 → 64: 28 tiles a row
        (1, 48, 26, 27, 16, 1, (1, 1, 1, 1), true), // 14 tiles a row
        (1, 48, 25, 26, 16, 1, (1, 1, 1, 0), false), // 13 tiles a row
        (1, 65, 30, 30, 8, 1, (1, 1, 1, 1), false), // too many input channels
    ];
    let mut rng = Rng::new(0x57e1);
    let v4 = cpu::active() == Level::X86V4;
    for &(n, c, h, w, oc, groups, pads, strips) in &cases {
        let mut s = Conv2dShape::new(n, c, h, w, oc, 3, 3);
        s.groups = groups;
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = pads;
        let d = s.dims().unwrap();
        let x: Vec<f32> = (0..d.input_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let wts: Vec<f32> = (0..d.weight_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let bias: Vec<f32> = (0..oc).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let (want, mag) = reference(&s, &x, &wts, Some(&bias));
        let eps = winograd_eps(d.k);

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
        assert_within(&out, &want, &mag, eps, &format!("{s:?}"));

        let mut u = vec![f32::NAN; winograd_weights_len(&s).unwrap()];
        winograd_prepare_weights(&s, &wts, &mut u).unwrap();
        let ws_len = winograd_prepared_workspace_len(&s).unwrap();
        if v4 {
            // The strips' workspace (V of 32 tiles, M of 8 channels) or the planes'.
            let strip_len = 16 * (c / groups + 8) * 32;
            assert_eq!(ws_len == strip_len, strips, "{s:?}: workspace {ws_len}");
        }
        let mut ws = vec![f32::NAN; ws_len];
        let mut prepared_out = vec![f32::NAN; d.output_len];
        conv2d_winograd_prepared(&s, &x, &u, Some(&bias), &mut prepared_out, &mut ws).unwrap();
        for (j, (&a, &b)) in out.iter().zip(&prepared_out).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "{s:?}: out[{j}] vs prepared");
        }
        // Too short a workspace is an error, not a crash.
        let mut short = vec![0.0f32; ws_len - 1];
        assert!(conv2d_winograd_prepared(&s, &x, &u, None, &mut prepared_out, &mut short).is_err());
    }
}

#[test]
fn few_channel_3x3_layers_choose_winograd_where_strips_run() {
    let s = {
        let mut s = Conv2dShape::new(1, 16, 55, 55, 64, 3, 3);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        s
    };
    let m = choose_method(&s, 64 << 20).unwrap();
    if cpu::active() == Level::X86V4 {
        assert_eq!(m, ConvMethod::Winograd);
    } else {
        assert_ne!(m, ConvMethod::Winograd);
    }
}

#[test]
fn winograd_strips_on_random_shapes() {
    // Maps of 1 to 40 columns and rows (one output row or column of tiles, partial tiles),
    // padding of 0–3 on each side, 16–64 input and 8–40 output channels, batches and groups.
    let mut rng = Rng::new(0x5791);
    for _ in 0..40 {
        let groups = 1 + rng.below(2);
        let (cg, ocg) = (16 + rng.below(49), 8 * (1 + rng.below(5)));
        let (h, w) = (1 + rng.below(40), 1 + rng.below(40));
        let mut s = Conv2dShape::new(1 + rng.below(2), cg * groups, h, w, ocg * groups, 3, 3);
        s.groups = groups;
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) =
            (rng.below(4), rng.below(4), rng.below(4), rng.below(4));
        let Ok(d) = s.dims() else { continue };
        let x: Vec<f32> = (0..d.input_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let wts: Vec<f32> = (0..d.weight_len).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let bias: Vec<f32> = (0..s.c_out).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let (want, mag) = reference(&s, &x, &wts, Some(&bias));
        let eps = winograd_eps(d.k);
        let mut u = vec![f32::NAN; winograd_weights_len(&s).unwrap()];
        winograd_prepare_weights(&s, &wts, &mut u).unwrap();
        let mut ws = vec![f32::NAN; winograd_prepared_workspace_len(&s).unwrap()];
        let mut out = vec![f32::NAN; d.output_len];
        conv2d_winograd_prepared(&s, &x, &u, Some(&bias), &mut out, &mut ws).unwrap();
        assert_within(&out, &want, &mag, eps, &format!("{s:?}"));
    }
}
