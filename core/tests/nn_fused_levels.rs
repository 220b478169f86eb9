//! The convolution paths that fuse the bias and a ReLU / ReLU6 / Clip activation, at every
//! instruction-set level this CPU has (the portable loops, run here by capping the level, and
//! the AVX-512 ones):
//!
//! * the direct method's depthwise 3×3 path (16 outputs per vector, masked border lanes and
//!   tails, stride 2 de-interleaved), on maps from 1×1 to wider than two vectors, strides 1–3,
//!   every padding up to 2, batch 1–2, stride-2 planes split into phase images (outputs up
//!   to 16 × 16, asymmetric bottom / right padding), "same" stride-1 planes as flat runs
//!   (rows of 16 to 500 pixels with whole loads in the inner rows, narrower ones from a mask
//!   table), and layers of 16·k channels 16 planes at a time in a pixel-major ring (stride 2
//!   on rows of 1 to 64 pixels, stride 1 on rows of 10 to 32, paddings 0–2; at x86-64-v3 8
//!   planes at a time, stride 2);
//! * im2col on pointwise (1×1) kernels (a β = 0 GEMM, then bias and clamp in one pass), with
//!   groups, batch > 1, and maps of 1 to 67 pixels per channel (partial vectors);
//! * im2col's phase-image path at stride 1 on x86-64-v3 (one zero-padded copy per channel,
//!   tiles of 6 channels × 2 vectors of 8 grid positions, output lanes packed by a permute),
//!   on 3×3, 5×5, 7×7, 1×3, 3×1 and 2×2 kernels, with groups, batch 2 and maps of 1×1 up;
//! * the direct method's path for first layers (1–4 input channels, 16·k output channels,
//!   stride 2 to 4, any padding narrower than the kernel; input rows split into zero-padded
//!   phase rows, 16 output pixels per vector, tiles of 3 vectors, a last vector shifted to end
//!   at the row's end), on rows of exactly 16 outputs up to 112, kernels 2×2 to 11×11,
//!   symmetric and asymmetric padding, and near misses that take the plain direct loops
//!   (15-pixel rows, 24 output channels, 5 channels, stride 1 or 5, unequal strides, padding as
//!   wide as the kernel, too many weights);
//! * the blocked method (16-channel weight blocks, tiles of up to 6 pixels × 4 blocks, stored
//!   through an in-register transpose, bias and clamp applied before the store), with
//!   partial blocks and tiles, strides, dilation, padding, groups and batch 2;
//! * the direct method's path for pointwise kernels on small maps (up to 4 vectors of 16
//!   pixels × 6–16 output channels per tile, masked last vector or 1–3 trailing pixels as dot
//!   products, shifted last channel tile), on maps of 1 to 256 pixels, 1 to 1030 input
//!   channels, groups and batch 2, larger maps with few weights, and near misses;
//!
//! all agree with a double-precision reference within `f32` rounding (the depthwise path at
//! x86-64-v3, 8 outputs per AVX2 vector, gives the baseline's bits; the first-layer path gives
//! the same bits at x86-64-v3 and x86-64-v4), and fusing the
//! activation gives the same bits as the convolution followed by `apply_activation`, whose
//! ReLU / ReLU6 / Clip pass (AVX-512 too) keeps NaN and −0.0 at every level.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/conv_reference.rs"]
mod conv_reference;

use common::Rng;

use conv_reference::reference;
use mvision_core::cpu::{self, Level};
use mvision_core::nn::activation::{apply_activation, conv2d_fused, Activation};
use mvision_core::nn::conv::{conv2d, workspace_len, Conv2dShape, ConvMethod};
use mvision_core::nn::tensor::Shape4;

/// Every width from 1 to 40 once (1–3 narrower than the kernel, 16–18 and 32–34 around the
/// vector width at stride 1, 33–35 at stride 2), then random geometry, then named shapes.
fn shapes() -> Vec<Conv2dShape> {
    let mut rng = Rng::new(0xd3);
    let mut below = |n: usize| rng.below(n);
    let mut out = vec![];
    for i in 0..160 {
        let c = 1 + below(3);
        let w = if i < 40 { i + 1 } else { 1 + below(70) };
        let mut s = Conv2dShape::new(1 + below(2), c, 1 + below(9), w, c, 3, 3);
        s.groups = c;
        s.stride_h = 1 + below(3);
        s.stride_w = [1, 1, 2, 2, 3][below(5)];
        s.pad_top = below(3);
        s.pad_bottom = below(3);
        s.pad_left = below(3);
        s.pad_right = below(3);
        if s.dims().is_ok() {
            out.push(s);
        }
    }
    // MobileNetV2's geometry: 3×3, padding 1, stride 1 and 2, even and odd maps. ("Same"
    // planes of at most 1024 pixels run as one flat run of vectors at x86-64-v4: 1×1 to 32 × 32,
    // and 33 × 31 just above.)
    for (h, w, st) in [
        (112, 112, 1),
        (112, 112, 2),
        (14, 14, 1),
        (7, 7, 1),
        (15, 13, 2),
        (28, 28, 1),
        (1, 1, 1),
        (1, 40, 1),
        (16, 1, 1),
        (5, 3, 1),
        (2, 9, 1),
        (32, 32, 1),
        (33, 31, 1),
        (14, 14, 2),
        (28, 28, 2),
        (7, 7, 2),
        (1, 1, 2),
        (2, 3, 2),
        (31, 32, 2),
        (32, 33, 2),
        // Rows of at least 16 pixels at stride 1 (a flat run, whole loads in the inner rows):
        // exactly 16, 17 and 47 wide, MobileNetV2's 56², no inner row (2 × 100), one inner row
        // (3 × 500), and 1 × 16.
        (56, 56, 1),
        (5, 16, 1),
        (9, 17, 1),
        (40, 47, 1),
        (2, 100, 1),
        (3, 500, 1),
        (1, 16, 1),
    ] {
        let mut s = Conv2dShape::new(1, 2, h, w, 2, 3, 3);
        (s.groups, s.stride_h, s.stride_w) = (2, st, st);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        out.push(s);
    }
    // Stride 2 with padding 1 at the top and left and 0–2 at the bottom and right: planes of at
    // most 16 × 16 outputs split into phase images first at x86-64-v4 (33 columns do not).
    for (h, w, bottom, right) in [(7, 7, 0, 0), (14, 14, 0, 2), (9, 12, 2, 0), (15, 15, 0, 1)] {
        let mut s = Conv2dShape::new(2, 3, h, w, 3, 3, 3);
        (s.groups, s.stride_h, s.stride_w) = (3, 2, 2);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, bottom, right);
        out.push(s);
    }
    // Stride 2 with 16·k channels and input rows of at most 64 pixels: 16 planes at a time,
    // transposed into a pixel-major ring at x86-64-v4 (MobileNetV2's 56², 28² and 14² with
    // fewer channels, 7², odd and tiny maps, rows of 64 and of 1, every padding up to 2 on
    // each side, batch 2); rows of 65 pixels and 24 channels take the other kernels.
    for (n, c, h, w, pads) in [
        (1, 16, 56, 56, (1, 1, 1, 1)),
        (1, 32, 28, 28, (1, 1, 1, 1)),
        (1, 48, 14, 14, (1, 1, 1, 1)),
        (2, 16, 7, 7, (1, 1, 1, 1)),
        (1, 16, 15, 13, (1, 1, 1, 1)),
        (1, 16, 9, 64, (1, 1, 1, 1)),
        (1, 16, 5, 1, (1, 2, 0, 2)),
        (2, 32, 8, 9, (0, 2, 1, 0)),
        (1, 16, 17, 33, (2, 2, 2, 2)),
        (1, 16, 6, 65, (1, 1, 1, 1)),
        (1, 24, 14, 14, (1, 1, 1, 1)),
    ] {
        let mut s = Conv2dShape::new(n, c, h, w, c, 3, 3);
        (s.groups, s.stride_h, s.stride_w) = (c, 2, 2);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = pads;
        out.push(s);
    }
    // Stride 1 with 16·k channels and rows of 10 to 32 pixels take the same path (14², 28²,
    // 10² batch 2, uneven paddings); rows of 9 and 33 pixels do not.
    for (n, c, h, w, pads) in [
        (1, 16, 14, 14, (1, 1, 1, 1)),
        (1, 32, 28, 28, (1, 1, 1, 1)),
        (2, 16, 10, 10, (1, 1, 1, 1)),
        (1, 16, 3, 32, (0, 2, 2, 0)),
        (1, 16, 17, 12, (2, 1, 0, 2)),
        (1, 16, 9, 9, (1, 1, 1, 1)),
        (1, 16, 4, 33, (1, 1, 1, 1)),
    ] {
        let mut s = Conv2dShape::new(n, c, h, w, c, 3, 3);
        (s.groups, s.stride_h, s.stride_w) = (c, 1, 1);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = pads;
        out.push(s);
    }
    out
}

/// One convolution with its inputs and the f64 reference (`want`, and `mag`, the magnitude of
/// each output's terms) that a fused path is checked against.
struct Case<'a> {
    s: &'a Conv2dShape,
    x: &'a [f32],
    w: &'a [f32],
    bias: Option<&'a [f32]>,
    want: &'a [f64],
    mag: &'a [f64],
    eps: f64,
}

impl Case<'_> {
    /// At `level`: `method` fused with `act` is within `eps · mag` of the reference clamped to
    /// the activation's range, and equals the convolution followed by `apply_activation` bit
    /// for bit (`ws`: the method's workspace). Leaves the level cap at `level`.
    fn check(&self, level: Level, method: ConvMethod, act: Activation, ws: &mut [f32]) {
        let (s, x, w, bias) = (self.s, self.x, self.w, self.bias);
        let d = s.dims().unwrap();
        let (lo, hi) = clamp_of(act);
        cpu::set_cap(level);
        let mut fused = vec![f32::NAN; d.output_len];
        conv2d_fused(method, s, x, w, bias, act, None, &mut fused, ws).unwrap();
        for (j, (&got, (&r, &m))) in fused.iter().zip(self.want.iter().zip(self.mag)).enumerate() {
            let r = r.clamp(lo, hi);
            assert!(
                (got as f64 - r).abs() <= self.eps * m + f64::MIN_POSITIVE,
                "{level:?} {act:?} {s:?}: out[{j}] = {got}, want {r}"
            );
        }
        let out_shape = Shape4 {
            n: s.n,
            c: s.c_out,
            h: d.out_h,
            w: d.out_w,
        };
        let mut split = vec![f32::NAN; d.output_len];
        conv2d(method, s, x, w, bias, &mut split, ws).unwrap();
        apply_activation(act, &out_shape, &mut split, None).unwrap();
        let same = fused
            .iter()
            .zip(&split)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{level:?} {act:?} {s:?}: fused and split differ");
    }
}

fn clamp_of(act: Activation) -> (f64, f64) {
    match act {
        Activation::Relu => (0.0, f64::INFINITY),
        Activation::Relu6 => (0.0, 6.0),
        Activation::Clip { min, max } => (min as f64, max as f64),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

#[test]
fn fused_paths_at_every_level() {
    let mut rng = Rng::new(0x5eed);
    let mut rnd = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32_in(-4.0, 4.0)).collect() };
    let acts = [
        Activation::None,
        Activation::Relu,
        Activation::Relu6,
        Activation::Clip {
            min: -0.5,
            max: 1.5,
        },
    ];
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|&l| l <= cpu::detected())
        .collect();
    let mut checked = 0usize;
    for (i, s) in shapes().iter().enumerate() {
        let d = s.dims().unwrap();
        let (x, w, bias) = (rnd(d.input_len), rnd(d.weight_len), rnd(s.c_out));
        let bias = (i % 3 != 0).then_some(bias.as_slice());
        let (want, mag) = reference(s, &x, &w, bias);
        let eps = f32::EPSILON as f64 * 11.0;
        let act = acts[i % acts.len()];
        let case = Case {
            s,
            x: &x,
            w: &w,
            bias,
            want: &want,
            mag: &mag,
            eps,
        };
        for &level in &levels {
            case.check(level, ConvMethod::Direct, act, &mut []);
            checked += 1;
        }
        cpu::set_cap(Level::X86V4);
    }
    assert!(checked >= 160, "only {checked} shape × level runs");
    depthwise_v3_equals_baseline(&levels);
    nan_and_negative_zero_survive_the_fused_clamp();
    activation_clamps_at_every_level();
    let pointwise = pointwise_shapes();
    method_at_every_level(ConvMethod::Im2col, &pointwise, &levels, 0x9e37, 24);
    method_at_every_level(
        ConvMethod::Direct,
        &first_layer_shapes(),
        &levels,
        0xf125,
        96,
    );
    method_at_every_level(
        ConvMethod::Direct,
        &small_pointwise_shapes(),
        &levels,
        0x51a1,
        52,
    );
    method_at_every_level(
        ConvMethod::Im2col,
        &strided_pointwise_shapes(),
        &levels,
        0x5b1d,
        60,
    );
    method_at_every_level(ConvMethod::Blocked, &blocked_shapes(), &levels, 0xb10c, 24);
    method_at_every_level(ConvMethod::Im2col, &stride2_shapes(), &levels, 0x5712, 60);
    method_at_every_level(ConvMethod::Im2col, &stride1_shapes(), &levels, 0x5711, 40);
    stride2_equals_blocked();
    first_layers_v3_equal_v4();
    blocked_v3_equals_v4();
}

/// The depthwise path's AVX2 interior (x86-64-v3, 8 outputs per vector at strides 1 and 2)
/// gives the portable loops' bits: the same multiplies and adds in the same order. On every
/// shape of [`shapes`], with each activation, where the CPU has x86-64-v3.
fn depthwise_v3_equals_baseline(levels: &[Level]) {
    if !levels.contains(&Level::X86V3) {
        eprintln!("SKIPPED depthwise_v3_equals_baseline: this CPU has no x86-64-v3");
        return;
    }
    let mut rng = Rng::new(0xd3d3);
    let mut compared = 0usize;
    for (i, s) in shapes().iter().enumerate() {
        let d = s.dims().unwrap();
        let x: Vec<f32> = (0..d.input_len).map(|_| rng.f32_in(-4.0, 4.0)).collect();
        let w: Vec<f32> = (0..d.weight_len).map(|_| rng.f32_in(-4.0, 4.0)).collect();
        let b: Vec<f32> = (0..s.c_out).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let act = [Activation::None, Activation::Relu, Activation::Relu6][i % 3];
        let run = |level: Level| {
            cpu::set_cap(level);
            let mut out = vec![f32::NAN; d.output_len];
            conv2d_fused(
                ConvMethod::Direct,
                s,
                &x,
                &w,
                Some(&b),
                act,
                None,
                &mut out,
                &mut [],
            )
            .unwrap();
            out
        };
        let (base, v3) = (run(Level::Baseline), run(Level::X86V3));
        let same = base
            .iter()
            .zip(&v3)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{s:?} {act:?}: x86-64-v3 differs from the baseline");
        compared += 1;
    }
    cpu::set_cap(Level::X86V4);
    assert!(compared >= 160, "only {compared} shapes");
}

/// Stride-2 shapes of im2col's phase-image path (x86-64-v4): ResNet-18's 3×3 padding-1
/// geometry on 28², 14² and 7² outputs (grids of 14 × 15 and 7 × 8 positions, 8 × 3 and 6 × 4
/// tiles, partial channel tiles of 1–7), odd maps, batch 2, asymmetric padding (top rows and
/// left columns wholly padding), 2×2, 5×5, 7×7, 1×3 and 3×1 kernels, groups, a grid whose
/// last vector holds no output (3 × 11 positions), a 2 × 2 output; and 1×1 kernels (ResNet-18's
/// shortcuts, odd maps, a 1 × 1 output), which take the subsampled pointwise kernel (16 or more
/// output channels) or the GEMM.
fn stride2_shapes() -> Vec<Conv2dShape> {
    let mut v = vec![];
    for (n, c_in, h, w, c_out, k, pad, groups) in [
        (1, 16, 14, 14, 26, (3, 3), [1; 4], 1),
        (1, 8, 28, 28, 20, (3, 3), [1; 4], 1),
        (1, 5, 56, 56, 9, (3, 3), [1; 4], 1),
        (1, 16, 14, 14, 20, (1, 1), [0; 4], 1),
        (1, 6, 56, 56, 11, (1, 1), [0; 4], 1),
        (1, 6, 15, 13, 17, (1, 1), [0; 4], 1),
        (1, 6, 30, 27, 17, (1, 1), [0; 4], 1),
        (2, 3, 13, 11, 10, (3, 3), [1; 4], 1),
        (1, 4, 12, 17, 16, (3, 3), [0, 1, 2, 2], 1),
        (1, 3, 20, 23, 12, (5, 5), [2; 4], 1),
        (1, 4, 10, 10, 8, (2, 2), [0; 4], 1),
        (1, 8, 30, 30, 16, (7, 7), [3; 4], 1),
        (1, 8, 12, 12, 12, (3, 3), [1; 4], 2),
        (1, 4, 11, 18, 10, (1, 3), [0, 1, 0, 1], 1),
        (1, 4, 11, 18, 10, (3, 1), [2, 0, 1, 0], 1),
        (1, 4, 6, 20, 16, (3, 3), [1; 4], 1),
        (1, 4, 3, 3, 16, (3, 3), [1; 4], 1),
        (1, 4, 1, 2, 6, (1, 1), [0; 4], 1),
    ] {
        let mut s = Conv2dShape::new(n, c_in, h, w, c_out, k.0, k.1);
        (s.stride_h, s.stride_w) = (2, 2);
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = pad;
        s.groups = groups;
        v.push(s);
    }
    v
}

/// Stride-1 shapes of im2col's phase-image path at x86-64-v3 (AVX2: one zero-padded copy per
/// channel; at most 98 304 weights): SqueezeNet's 3×3 padding-1 expand geometry, 5×5 and 7×7 kernels, 1×3, 3×1 and 2×2
/// ones, asymmetric padding, no padding, groups, batch 2, maps of 1×1 to 30 × 30 (grids of one
/// partial vector up to many, output lanes across row ends), channel counts around the tile's 6.
fn stride1_shapes() -> Vec<Conv2dShape> {
    let mut v = vec![];
    for (n, c_in, h, w, c_out, k, pad, groups) in [
        (1, 16, 9, 13, 64, (3, 3), [1; 4], 1),
        (1, 8, 13, 13, 13, (3, 3), [1; 4], 1),
        (2, 3, 7, 11, 7, (3, 3), [1; 4], 1),
        (1, 4, 12, 17, 6, (3, 3), [0, 1, 2, 2], 1),
        (1, 3, 20, 23, 12, (5, 5), [2; 4], 1),
        (1, 5, 30, 30, 5, (7, 7), [3; 4], 1),
        (1, 8, 12, 12, 12, (3, 3), [1; 4], 2),
        (1, 4, 11, 18, 10, (1, 3), [0, 1, 0, 1], 1),
        (1, 4, 11, 18, 10, (3, 1), [2, 0, 1, 0], 1),
        (1, 4, 10, 10, 8, (2, 2), [0; 4], 1),
        (1, 4, 6, 20, 11, (3, 3), [0; 4], 1),
        (1, 4, 1, 1, 16, (3, 3), [1; 4], 1),
        (1, 2, 3, 3, 1, (3, 3), [0; 4], 1),
    ] {
        let mut s = Conv2dShape::new(n, c_in, h, w, c_out, k.0, k.1);
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = pad;
        s.groups = groups;
        v.push(s);
    }
    v
}

/// Where the CPU has x86-64-v4: the direct method on [`first_layer_shapes`] gives the same
/// bits at x86-64-v3 (AVX2, 8 lanes) as at x86-64-v4 (AVX-512, 16 lanes), with each fused
/// activation: both first-layer kernels add the same products in the same order.
fn first_layers_v3_equal_v4() {
    v3_equals_v4(
        "first_layers_v3_equal_v4",
        ConvMethod::Direct,
        &first_layer_shapes(),
        0x3434,
        1,
    );
}

/// The blocked method's AVX2 tile (sums kept in a band buffer between chunks of taps) adds
/// the same fused multiply-adds in the same order as its AVX-512 tile: the same bits, on every
/// shape of [`blocked_shapes`] (bands of 64 pixels and chunks of 64 taps split, odd blocks,
/// partial blocks, groups, dilation, batch 2) with each activation. Skipped without AVX-512.
fn blocked_v3_equals_v4() {
    v3_equals_v4(
        "blocked_v3_equals_v4",
        ConvMethod::Blocked,
        &blocked_shapes(),
        0xb1b2,
        0,
    );
}

/// `method` gives the same bits at x86-64-v3 as at x86-64-v4 on `shapes` (random data from
/// `seed`, a bias on the shapes whose index has parity `bias_parity`, the activations in
/// turn); skipped, saying so as `name`, where the CPU lacks x86-64-v4.
fn v3_equals_v4(
    name: &str,
    method: ConvMethod,
    shapes: &[Conv2dShape],
    seed: u64,
    bias_parity: usize,
) {
    if cpu::detected() < Level::X86V4 {
        eprintln!("{name}: skipped, this CPU lacks x86-64-v4");
        return;
    }
    let mut rng = Rng::new(seed);
    let mut rnd = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32_in(-2.0, 2.0)).collect() };
    let acts = [Activation::None, Activation::Relu, Activation::Relu6];
    for (i, s) in shapes.iter().enumerate() {
        let d = s.dims().unwrap();
        let (x, w, bias) = (rnd(d.input_len), rnd(d.weight_len), rnd(s.c_out));
        let bias = (i % 2 == bias_parity).then_some(bias.as_slice());
        let act = acts[i % acts.len()];
        let run = |level| {
            cpu::set_cap(level);
            let mut ws = vec![f32::NAN; workspace_len(method, s).unwrap()];
            let mut y = vec![f32::NAN; d.output_len];
            conv2d_fused(method, s, &x, &w, bias, act, None, &mut y, &mut ws).unwrap();
            y
        };
        let (a, b) = (run(Level::X86V3), run(Level::X86V4));
        for (j, (p, q)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                p.to_bits(),
                q.to_bits(),
                "{name} {s:?} {act:?}: out[{j}] {p} != {q}"
            );
        }
    }
    cpu::set_cap(Level::X86V4);
}

/// At x86-64-v4, im2col's stride-2 phase-image path adds the same products in the same order
/// with the same fused multiply-adds as the blocked method: the same bits, with each fused
/// activation (all shapes of [`stride2_shapes`] but the 1×1 ones).
fn stride2_equals_blocked() {
    if cpu::detected() < Level::X86V4 {
        eprintln!("stride2_equals_blocked: skipped, this CPU lacks x86-64-v4");
        return;
    }
    cpu::set_cap(Level::X86V4);
    let mut rng = Rng::new(0x5713);
    let mut rnd = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32_in(-2.0, 2.0)).collect() };
    let acts = [Activation::None, Activation::Relu, Activation::Relu6];
    let mut compared = 0;
    for (i, s) in stride2_shapes().iter().enumerate() {
        let d = s.dims().unwrap();
        if s.kh * s.kw == 1 {
            continue; // The GEMM's order.
        }
        compared += 1;
        let (x, w, bias) = (rnd(d.input_len), rnd(d.weight_len), rnd(s.c_out));
        let bias = (i % 2 == 1).then_some(bias.as_slice());
        let act = acts[i % acts.len()];
        let run = |method| {
            let mut ws = vec![f32::NAN; workspace_len(method, s).unwrap()];
            let mut y = vec![f32::NAN; d.output_len];
            conv2d_fused(method, s, &x, &w, bias, act, None, &mut y, &mut ws).unwrap();
            y
        };
        let (a, b) = (run(ConvMethod::Im2col), run(ConvMethod::Blocked));
        for (j, (p, q)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                p.to_bits(),
                q.to_bits(),
                "{s:?} {act:?}: out[{j}] {p} != {q}"
            );
        }
    }
    assert!(compared >= 13, "only {compared} shapes compared");
}

/// Shapes of the blocked method (its clamp is applied to the accumulators before the store):
/// SqueezeNet's 3×3 padding-1 expand geometry on a small map (rows of 13: tiles of 5 + 4 + 4,
/// the plane's last tile stored through the scalar path), partial channel blocks (34, 70),
/// 1–4 blocks per tile, strides, dilation, asymmetric padding and groups, batch 2.
fn blocked_shapes() -> Vec<Conv2dShape> {
    let mut v = vec![];
    for (n, c_in, h, w, c_out, kh, kw, st, pad, groups) in [
        (1, 16, 9, 13, 64, 3, 3, 1, [1; 4], 1),
        (1, 3, 37, 41, 70, 11, 11, 4, [0; 4], 1),
        (2, 6, 13, 9, 34, 5, 3, 1, [2, 1, 0, 2], 2),
        (1, 5, 8, 20, 16, 3, 3, 1, [0; 4], 1),
        (1, 8, 11, 17, 48, 3, 3, 2, [1; 4], 1),
        (1, 4, 6, 7, 20, 2, 2, 1, [0, 1, 1, 0], 1),
        (1, 37, 12, 11, 40, 3, 3, 1, [1; 4], 1),
        (1, 24, 10, 10, 20, 1, 1, 2, [0; 4], 1),
        (1, 40, 7, 7, 48, 1, 1, 1, [0; 4], 1),
    ] {
        let mut s = Conv2dShape::new(n, c_in, h, w, c_out, kh, kw);
        (s.stride_h, s.stride_w) = (st, st);
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = pad;
        s.groups = groups;
        v.push(s);
    }
    v[2].dilation_h = 2;
    v
}

/// Pointwise shapes of the direct method's path (at least 16 output channels per group, at
/// most 256 pixels or 8192 weights): maps of 1, 15, 16, 17, 18, 32, 49, 51, 196 and 256 pixels (one
/// vector masked or full, tiles of 1 to 4 vectors, 13 vectors as 4 + 3 + 3 + 3, 1–3 trailing
/// pixels as dot products, over 1 to 1030 input channels — 1030 too many for their stack copy,
/// so a masked vector), output channels 16, 17, 25, 40 and 160 (channel tiles shifted back to
/// end at the last channel), groups and batch 2; larger maps with few weights (272 and 630
/// pixels: 5 and 10 tiles); the last two take the plain direct loops (272 pixels with 9000
/// weights, 15 channels).
/// 1×1 shapes from `(n, c_in, h, w, c_out, groups)`.
fn pointwise(list: &[(usize, usize, usize, usize, usize, usize)]) -> Vec<Conv2dShape> {
    list.iter()
        .map(|&(n, c_in, h, w, c_out, groups)| {
            let mut s = Conv2dShape::new(n, c_in, h, w, c_out, 1, 1);
            s.groups = groups;
            s
        })
        .collect()
}

fn small_pointwise_shapes() -> Vec<Conv2dShape> {
    pointwise(&[
        (1, 8, 1, 1, 16, 1),
        (1, 3, 3, 5, 17, 1),
        (2, 5, 4, 4, 40, 1),
        (1, 1, 1, 17, 16, 1),
        (1, 12, 4, 8, 24, 1),
        (1, 100, 7, 7, 160, 1),
        (1, 20, 1, 18, 16, 1),
        (2, 33, 3, 17, 25, 1),
        (1, 1030, 7, 7, 16, 1),
        (1, 38, 14, 14, 64, 2),
        (2, 7, 16, 16, 33, 1),
        (1, 4, 17, 16, 16, 1),
        (1, 24, 9, 70, 40, 1),
        (1, 100, 17, 16, 90, 1),
        (1, 6, 7, 7, 15, 1),
    ])
}

/// First layers with few input channels: unpadded stride 2 with output rows of 16 (one vector),
/// 19, 28, 32, 50 (a 3-vector tile and the shifted last one) and 112 (two tiles and a last
/// vector) pixels, 2×2 to 7×7 and 3×5 kernels, batch 2; padded ones (ResNet-18's 7×7 stride 2
/// padding 3, MobileNetV2's 3×3 padding 1, asymmetric padding, top rows and left columns wholly
/// in the padding of some taps, rows ending inside and past the right padding), strides 3 and 4
/// (AlexNet's 11×11 stride 4 with 1 channel, so that its weights fit), 4 channels, rows of 48
/// (tiles only) and 64 outputs, batch 2, 4 channels of 7×7 stride 4 whose split rows fit the
/// ring for groups of 2 output rows (60 outputs a row) and only for single rows (76), output
/// heights that leave a last group of 1 or 2 rows; the last ones take the plain loops (a 15-pixel row, 24
/// output channels, 5 channels, stride 1, unequal strides, padding as wide as the kernel, 80
/// channels of 7×7×3 weights: more than the stack copy holds).
fn first_layer_shapes() -> Vec<Conv2dShape> {
    let mut v = vec![];
    for (n, c_in, h, w, c_out, k, st, pad) in [
        (1, 1, 33, 33, 16, (3, 3), 2, [0; 4]),
        (1, 3, 35, 40, 16, (3, 3), 2, [0; 4]),
        (2, 3, 9, 101, 32, (3, 3), 2, [0; 4]),
        (1, 3, 20, 225, 48, (3, 3), 2, [0; 4]),
        (1, 4, 23, 70, 16, (7, 7), 2, [0; 4]),
        (1, 2, 9, 40, 16, (2, 2), 2, [0; 4]),
        (1, 3, 21, 60, 16, (3, 5), 2, [0; 4]),
        (1, 3, 19, 224, 64, (7, 7), 2, [3; 4]),
        (2, 3, 12, 64, 32, (3, 3), 2, [1; 4]),
        (1, 3, 14, 37, 16, (3, 3), 2, [1, 0, 2, 1]),
        (1, 2, 10, 33, 16, (5, 4), 2, [4, 3, 0, 2]),
        (1, 1, 27, 227, 16, (11, 11), 4, [2; 4]),
        (1, 3, 15, 70, 32, (5, 5), 3, [2, 1, 1, 2]),
        (2, 4, 11, 96, 16, (3, 3), 2, [1, 0, 0, 1]),
        (1, 3, 9, 127, 16, (4, 4), 2, [1; 4]),
        (1, 3, 11, 200, 16, (6, 6), 4, [0, 5, 5, 0]),
        (1, 4, 15, 243, 16, (7, 7), 4, [0; 4]),
        (1, 4, 15, 307, 16, (7, 7), 4, [0; 4]),
        (1, 3, 31, 31, 16, (3, 3), 2, [0; 4]),
        (1, 3, 17, 40, 24, (3, 3), 2, [0; 4]),
        (1, 5, 9, 40, 16, (3, 3), 2, [1; 4]),
        (1, 3, 9, 40, 16, (3, 3), 1, [1; 4]),
        (1, 3, 9, 40, 16, (3, 3), 5, [0; 4]),
        (1, 3, 9, 40, 16, (3, 3), 2, [3, 0, 0, 0]),
        (1, 3, 9, 60, 80, (7, 7), 2, [3; 4]),
    ] {
        let mut s = Conv2dShape::new(n, c_in, h, w, c_out, k.0, k.1);
        (s.stride_h, s.stride_w) = (st, st);
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = pad;
        v.push(s);
    }
    let mut uneven = Conv2dShape::new(1, 3, 9, 70, 16, 3, 3);
    (uneven.stride_h, uneven.stride_w) = (1, 2);
    v.push(uneven);
    v
}

/// Strided 1 × 1 shapes (ResNet's shortcuts), which im2col runs on AVX-512 as a subsampled
/// copy of the input times the small-map pointwise kernel: stride 2 on output rows of 1, 7,
/// 15, 16, 17, 28 and 33 pixels (input rows of exactly `2·ow − 1` and of `2·ow`, so that the
/// last subsampled column is the row's last element), strides 3 × 2, 2 × 3, 4 × 4 and 2 × 1,
/// groups, batch 2, a map of 400 pixels with few weights, and near misses that take the
/// lowered GEMM (15 output channels; 400 pixels with 9000 weights; padding).
fn strided_pointwise_shapes() -> Vec<Conv2dShape> {
    let mut v = vec![];
    for (n, c_in, h, w, c_out, stride, groups, pad) in [
        (1, 8, 1, 1, 16, (2, 2), 1, 0),
        (1, 12, 13, 13, 24, (2, 2), 1, 0),
        (1, 9, 14, 14, 16, (2, 2), 1, 0),
        (2, 6, 5, 29, 20, (2, 2), 1, 0),
        (1, 5, 7, 32, 33, (2, 2), 1, 0),
        (1, 4, 3, 33, 16, (2, 2), 1, 0),
        (1, 16, 56, 56, 32, (2, 2), 1, 0),
        (1, 10, 9, 65, 17, (2, 2), 1, 0),
        (2, 8, 15, 11, 34, (3, 2), 2, 0),
        (1, 8, 15, 11, 16, (2, 3), 1, 0),
        (1, 3, 17, 17, 16, (4, 4), 1, 0),
        (1, 8, 9, 20, 16, (2, 1), 1, 0),
        (1, 20, 40, 40, 16, (2, 2), 1, 0),
        (1, 6, 9, 9, 15, (2, 2), 1, 0),
        (1, 90, 40, 40, 100, (2, 2), 1, 0),
        (1, 8, 9, 9, 16, (2, 2), 1, 1),
    ] {
        let mut s = Conv2dShape::new(n, c_in, h, w, c_out, 1, 1);
        (s.stride_h, s.stride_w) = stride;
        s.groups = groups;
        [s.pad_top, s.pad_left, s.pad_bottom, s.pad_right] = [pad; 4];
        v.push(s);
    }
    v
}

/// Pointwise shapes: channels, groups, batch and maps of 1 to 67 pixels.
fn pointwise_shapes() -> Vec<Conv2dShape> {
    pointwise(&[
        (1, 1, 1, 1, 1, 1),
        (1, 16, 7, 7, 24, 1),
        (2, 6, 3, 5, 9, 3),
        (1, 24, 8, 8, 144, 1),
        (3, 5, 1, 67, 2, 1),
        (1, 32, 13, 13, 16, 2),
    ])
}

/// `method` with each fused activation on `shapes` at every level: against the reference and,
/// bit for bit, against the convolution followed by `apply_activation`; at least `min` runs.
fn method_at_every_level(
    method: ConvMethod,
    shapes: &[Conv2dShape],
    levels: &[Level],
    seed: u64,
    min: usize,
) {
    let mut rng = Rng::new(seed);
    let mut rnd = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32_in(-2.0, 2.0)).collect() };
    let acts = [
        Activation::Relu6,
        Activation::None,
        Activation::Relu,
        Activation::Clip {
            min: -1.0,
            max: 0.25,
        },
    ];
    let mut checked = 0;
    for (i, s) in shapes.iter().enumerate() {
        let d = s.dims().unwrap();
        let (x, w, bias) = (rnd(d.input_len), rnd(d.weight_len), rnd(s.c_out));
        let bias = (i % 2 == 0).then_some(bias.as_slice());
        let (want, mag) = reference(s, &x, &w, bias);
        let eps = f32::EPSILON as f64 * (d.k as f64 + 3.0);
        let case = Case {
            s,
            x: &x,
            w: &w,
            bias,
            want: &want,
            mag: &mag,
            eps,
        };
        let mut ws = vec![f32::NAN; workspace_len(method, s).unwrap()];
        for act in acts {
            for &level in levels {
                case.check(level, method, act, &mut ws);
                checked += 1;
            }
            cpu::set_cap(Level::X86V4);
        }
    }
    assert!(checked >= min, "only {checked} {method:?} runs");
}

/// `apply_activation`'s clamps (one AVX-512 pass at x86-64-v4) keep NaN and −0.0 and clamp
/// infinities, on tensors of 1 to 40 values (partial vectors), at every level.
fn activation_clamps_at_every_level() {
    let values = [
        f32::NAN,
        -0.0,
        0.0,
        -1.5,
        0.25,
        7.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let acts = [
        (Activation::Relu, 0.0, f32::INFINITY),
        (Activation::Relu6, 0.0, 6.0),
        (
            Activation::Clip {
                min: -1.0,
                max: 0.5,
            },
            -1.0,
            0.5,
        ),
    ];
    for level in Level::ALL.into_iter().filter(|&l| l <= cpu::detected()) {
        cpu::set_cap(level);
        for len in 1..=40 {
            let x: Vec<f32> = (0..len).map(|i| values[i % values.len()]).collect();
            for (act, lo, hi) in acts {
                let mut y = x.clone();
                y.push(123.0);
                let shape = Shape4 {
                    n: 1,
                    c: 1,
                    h: 1,
                    w: len,
                };
                apply_activation(act, &shape, &mut y, None).unwrap();
                for (i, (&got, &v)) in y.iter().zip(&x).enumerate() {
                    let want = if v < lo {
                        lo
                    } else if v > hi {
                        hi
                    } else {
                        v
                    };
                    assert!(
                        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                        "{level:?} {act:?} len {len}: y[{i}] = {got}, want {want}"
                    );
                }
                assert_eq!(y[len], 123.0, "{level:?} {act:?}: past the tensor");
            }
        }
    }
    cpu::set_cap(Level::X86V4);
}

fn nan_and_negative_zero_survive_the_fused_clamp() {
    // ReLU keeps NaN and −0.0 like `apply_activation` (x < 0 → 0, else x): on an input of −0.0
    // every sum is −0.0, and a NaN input reaches the outputs whose window holds it, at every
    // level (the direct method's depthwise path, then the blocked method).
    let mut s = Conv2dShape::new(1, 1, 5, 20, 1, 3, 3);
    (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
    let d = s.dims().unwrap();
    let mut x = vec![-0.0f32; d.input_len];
    x[2 * 20 + 10] = f32::NAN;
    let w = [1.0f32; 9];
    for level in Level::ALL.into_iter().filter(|&l| l <= cpu::detected()) {
        cpu::set_cap(level);
        let mut y = vec![1.0f32; d.output_len];
        conv2d_fused(
            ConvMethod::Direct,
            &s,
            &x,
            &w,
            Some(&[-0.0]),
            Activation::Relu,
            None,
            &mut y,
            &mut [],
        )
        .unwrap();
        for oy in 0..5 {
            for ox in 0..20 {
                let v = y[oy * 20 + ox];
                if oy.abs_diff(2) <= 1 && ox.abs_diff(10) <= 1 {
                    assert!(v.is_nan(), "{level:?} ({oy}, {ox}) = {v}");
                } else {
                    assert_eq!(v.to_bits(), (-0.0f32).to_bits(), "{level:?} ({oy}, {ox})");
                }
            }
        }
        // The blocked method clamps in its store the same way (unpadded: the padding's +0.0
        // would turn −0.0 sums into +0.0), in all 16 channels of the block.
        let s = Conv2dShape::new(1, 1, 7, 22, 16, 3, 3);
        let d = s.dims().unwrap();
        let mut x = vec![-0.0f32; d.input_len];
        x[3 * 22 + 11] = f32::NAN;
        let mut y = vec![1.0f32; d.output_len];
        let mut ws = vec![0.0f32; workspace_len(ConvMethod::Blocked, &s).unwrap()];
        let (w, bias) = ([1.0f32; 16 * 9], [-0.0f32; 16]);
        let relu = Activation::Relu;
        conv2d_fused(
            ConvMethod::Blocked,
            &s,
            &x,
            &w,
            Some(&bias),
            relu,
            None,
            &mut y,
            &mut ws,
        )
        .unwrap();
        for (i, &v) in y.iter().enumerate() {
            let (oy, ox) = (i % 100 / 20, i % 20);
            if oy.abs_diff(2) <= 1 && ox.abs_diff(10) <= 1 {
                assert!(v.is_nan(), "{level:?} blocked {i} = {v}");
            } else {
                assert_eq!(v.to_bits(), (-0.0f32).to_bits(), "{level:?} blocked {i}");
            }
        }
        cpu::set_cap(Level::X86V4);
    }
}
