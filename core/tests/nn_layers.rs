//! Layer operators of `nn` (activations, fused conv, pooling, fully connected, softmax,
//! reduce-mean, add, concat, flatten, pad, batch norm) against plain `f64` references written from
//! the ONNX definitions, on random shapes (batch ≥ 2, odd sizes, 1 × 1); hand-checked ONNX cases
//! (ceil mode and its last-window rule); every error, with outputs untouched; and no heap use.
//!
//! Tolerances: sums of `K` products or terms within `(K + 2)·ε` (ε = 2⁻²³) of `Σ|terms|`;
//! element-wise functions through `expf` within a few ε relative.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use common::Rng;
use mvision_core::nn::activation::{apply_activation, conv2d_fused, sigmoid, Activation};
use mvision_core::nn::batchnorm::{batch_norm, fold_batch_norm, BatchNormParams};
use mvision_core::nn::conv::{conv2d, workspace_len, Conv2dShape, ConvMethod};
use mvision_core::nn::dense::{fully_connected, fully_connected_pack_len};
use mvision_core::nn::elementwise::{
    add, add_in_place, binary, binary_broadcast, binary_in_place, binary_in_place_broadcast,
    broadcast_shape, BinaryOp, Broadcast,
};
use mvision_core::nn::layout::{
    concat, concat_shape, flatten_shape, pad2d, pad_shape, PadMode, Pads,
};
use mvision_core::nn::matmul::{matmul, matmul_pack_len, MatMulShape};
use mvision_core::nn::pool::{avg_pool2d, global_avg_pool, max_pool2d, Pool2dShape};
use mvision_core::nn::reduce::{reduce_mean, reduce_shape, softmax};
use mvision_core::nn::tensor::Shape4;
use mvision_core::Error;

const EPS: f64 = f32::EPSILON as f64;

fn random(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.f32_in(-4.0, 4.0)).collect()
}

fn random_shape(rng: &mut Rng) -> Shape4 {
    Shape4::new(
        2 + rng.below(2),
        1 + rng.below(5),
        1 + rng.below(9),
        1 + rng.below(9),
    )
    .unwrap()
}

/// NaN-filled buffer of `len` elements plus a NaN tail of 3 that must stay untouched.
fn nan_buf(len: usize) -> Vec<f32> {
    vec![f32::NAN; len + 3]
}

fn assert_tail_nan(buf: &[f32], len: usize, what: &str) {
    assert!(
        buf[len..].iter().all(|v| v.is_nan()),
        "{what} wrote past its output"
    );
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn close(got: f32, want: f64, tol: f64, what: &str) {
    assert!(
        (got as f64 - want).abs() <= tol + f64::MIN_POSITIVE,
        "{what}: got {got}, want {want} (tol {tol})"
    );
}

// ---------------------------------------------------------------------------------------------
// Activations
// ---------------------------------------------------------------------------------------------

fn act_ref(act: Activation, x: f64, slope: f64) -> f64 {
    match act {
        Activation::None => x,
        Activation::Relu => x.max(0.0),
        Activation::Relu6 => x.clamp(0.0, 6.0),
        Activation::Clip { min, max } => x.clamp(min as f64, max as f64),
        Activation::LeakyRelu { alpha } => {
            if x >= 0.0 {
                x
            } else {
                alpha as f64 * x
            }
        }
        Activation::PRelu => {
            if x >= 0.0 {
                x
            } else {
                slope * x
            }
        }
        Activation::Sigmoid => 1.0 / (1.0 + (-x).exp()),
    }
}

const ACTS: [Activation; 8] = [
    Activation::None,
    Activation::Relu,
    Activation::Relu6,
    Activation::Clip {
        min: -1.5,
        max: 2.25,
    },
    Activation::LeakyRelu { alpha: 0.1 },
    Activation::PRelu,
    Activation::Sigmoid,
    Activation::Clip { min: 1.0, max: 1.0 },
];

#[test]
fn activations_match_the_reference() {
    let mut rng = Rng::new(0x6c61_7965_7273_0001);
    for round in 0..40 {
        let s = random_shape(&mut rng);
        let len = s.elements().unwrap();
        let mut x = random(&mut rng, len);
        x[0] = 7.5; // above ReLU6's cap
        let slopes = random(&mut rng, s.c);
        let scalar = [0.25f32];
        let slopes: &[f32] = if round % 4 == 0 { &scalar } else { &slopes };
        for act in ACTS {
            let mut y = x.clone();
            y.extend([f32::NAN; 3]);
            apply_activation(act, &s, &mut y, Some(slopes)).unwrap();
            for (i, (&got, &xv)) in y.iter().zip(&x).enumerate() {
                let c = (i / s.plane_len()) % s.c;
                let slope = if slopes.len() == 1 {
                    slopes[0]
                } else {
                    slopes[c]
                };
                let want = act_ref(act, xv as f64, slope as f64);
                let tol = match act {
                    Activation::Sigmoid => 4.0 * EPS * want.abs(),
                    Activation::LeakyRelu { .. } | Activation::PRelu => 0.5 * EPS * want.abs(),
                    _ => 0.0,
                };
                close(got, want, tol, &format!("{act:?} at {i}"));
            }
            assert_tail_nan(&y, len, "apply_activation");
        }
    }
}

#[test]
fn sigmoid_extremes_and_nan() {
    assert_eq!(sigmoid(0.0), 0.5);
    assert_eq!(sigmoid(-200.0), 0.0);
    assert_eq!(sigmoid(200.0), 1.0);
    assert_eq!(sigmoid(f32::INFINITY), 1.0);
    assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
    assert!(sigmoid(f32::NAN).is_nan());
    let s = Shape4::new(1, 1, 1, 3).unwrap();
    let mut v = [f32::NAN, -1.0, 9.0];
    apply_activation(Activation::Relu6, &s, &mut v, None).unwrap();
    assert!(v[0].is_nan(), "NaN must stay NaN");
    assert_eq!(&v[1..], &[0.0, 6.0]);
}

#[test]
fn activation_errors_leave_data_untouched() {
    let s = Shape4::new(2, 3, 2, 2).unwrap();
    let orig: Vec<f32> = (0..24).map(|i| i as f32 - 12.0).collect();
    let cases: [(Activation, Option<&[f32]>, usize, Error); 6] = [
        (Activation::PRelu, None, 24, Error::InvalidArgument),
        (
            Activation::PRelu,
            Some(&[1.0, 2.0]),
            24,
            Error::BufferTooSmall,
        ),
        (
            Activation::Clip { min: 2.0, max: 1.0 },
            None,
            24,
            Error::InvalidArgument,
        ),
        (
            Activation::Clip {
                min: f32::NAN,
                max: 1.0,
            },
            None,
            24,
            Error::InvalidArgument,
        ),
        (
            Activation::LeakyRelu { alpha: f32::NAN },
            None,
            24,
            Error::InvalidArgument,
        ),
        (Activation::Relu, None, 23, Error::BufferTooSmall),
    ];
    for (act, slopes, len, err) in cases {
        let mut v = orig[..len].to_vec();
        assert_eq!(
            apply_activation(act, &s, &mut v, slopes),
            Err(err),
            "{act:?}"
        );
        assert_eq!(bits(&v), bits(&orig[..len]), "{act:?} wrote on error");
    }
    let zero = Shape4 {
        n: 0,
        c: 1,
        h: 1,
        w: 1,
    };
    assert_eq!(
        apply_activation(Activation::Relu, &zero, &mut [], None),
        Err(Error::ZeroSize)
    );
}

#[test]
fn fused_conv_equals_conv_then_activation() {
    let mut rng = Rng::new(0x6c61_7965_7273_0002);
    for round in 0..24 {
        let mut s = Conv2dShape::new(
            2,
            1 + rng.below(4),
            1 + rng.below(9),
            1 + rng.below(9),
            1 + rng.below(6),
            1 + rng.below(3),
            1 + rng.below(3),
        );
        s.pad_top = rng.below(2);
        s.pad_right = rng.below(2);
        s.stride_w = 1 + rng.below(2);
        let Ok(d) = s.dims() else { continue };
        let x = random(&mut rng, d.input_len);
        let w = random(&mut rng, d.weight_len);
        let b = random(&mut rng, s.c_out);
        let slopes = random(&mut rng, s.c_out);
        let method = [ConvMethod::Direct, ConvMethod::Im2col][round % 2];
        let mut ws = vec![0.0; workspace_len(method, &s).unwrap()];
        let os = Shape4::new(s.n, s.c_out, d.out_h, d.out_w).unwrap();
        for act in ACTS {
            let mut fused = nan_buf(d.output_len);
            conv2d_fused(
                method,
                &s,
                &x,
                &w,
                Some(&b),
                act,
                Some(&slopes),
                &mut fused,
                &mut ws,
            )
            .unwrap();
            let mut two = nan_buf(d.output_len);
            conv2d(method, &s, &x, &w, Some(&b), &mut two, &mut ws).unwrap();
            apply_activation(act, &os, &mut two, Some(&slopes)).unwrap();
            assert_eq!(bits(&fused), bits(&two), "{act:?} {s:?}");
        }
    }
    // Errors are found before the convolution writes.
    let s = Conv2dShape::new(1, 1, 3, 3, 2, 1, 1);
    let mut out = nan_buf(18);
    let r = conv2d_fused(
        ConvMethod::Direct,
        &s,
        &[1.0; 9],
        &[1.0; 2],
        None,
        Activation::PRelu,
        None,
        &mut out,
        &mut [],
    );
    assert_eq!(r, Err(Error::InvalidArgument));
    assert!(out.iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------------------------------------
// Pooling
// ---------------------------------------------------------------------------------------------

/// Output count along one axis, from the ONNX wording: floor mode counts the windows that fit in
/// the padded input; ceil mode counts one more partial window as long as it starts inside the
/// input or the leading padding.
fn ref_out(size: usize, pa: usize, pb: usize, k: usize, s: usize, ceil: bool) -> usize {
    let padded = size + pa + pb;
    (0..)
        .take_while(|&o| {
            let start = o * s;
            start + k <= padded || (ceil && start + k < padded + s && start < size + pa)
        })
        .count()
}

/// `(max, avg)` references in `f64` and the `Σ|x|/count` scale of each average.
fn pool_ref(p: &Pool2dShape, x: &[f32]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let oh = ref_out(p.h, p.pad_top, p.pad_bottom, p.kh, p.stride_h, p.ceil_mode);
    let ow = ref_out(p.w, p.pad_left, p.pad_right, p.kw, p.stride_w, p.ceil_mode);
    let (mut mx, mut avg, mut scale) = (vec![], vec![], vec![]);
    let (ph, pw) = (
        p.h + p.pad_top + p.pad_bottom,
        p.w + p.pad_left + p.pad_right,
    );
    for plane in 0..p.n * p.c {
        for oy in 0..oh {
            for ox in 0..ow {
                let (mut m, mut sum, mut abs, mut inside, mut padded) =
                    (f64::NEG_INFINITY, 0.0, 0.0, 0usize, 0usize);
                for py in oy * p.stride_h..oy * p.stride_h + p.kh {
                    for px in ox * p.stride_w..ox * p.stride_w + p.kw {
                        if py >= ph || px >= pw {
                            continue; // ceil-mode overhang past the end padding
                        }
                        padded += 1;
                        let (iy, ix) =
                            (py as i64 - p.pad_top as i64, px as i64 - p.pad_left as i64);
                        if iy < 0 || ix < 0 || iy >= p.h as i64 || ix >= p.w as i64 {
                            continue;
                        }
                        let v = x[(plane * p.h + iy as usize) * p.w + ix as usize] as f64;
                        m = m.max(v);
                        sum += v;
                        abs += v.abs();
                        inside += 1;
                    }
                }
                assert!(inside > 0, "reference: a window holds no input");
                let count = if p.count_include_pad { padded } else { inside };
                mx.push(m);
                avg.push(sum / count as f64);
                scale.push(abs / count as f64);
            }
        }
    }
    (mx, avg, scale)
}

#[test]
fn pooling_matches_the_reference_on_random_shapes() {
    let mut rng = Rng::new(0x6c61_7965_7273_0003);
    let mut ceil_cut = 0;
    let mut tested = 0;
    while tested < 150 {
        let mut p = Pool2dShape::new(
            2 + rng.below(2),
            1 + rng.below(3),
            1 + rng.below(11),
            1 + rng.below(11),
            1 + rng.below(4),
            1 + rng.below(4),
        );
        p.stride_h = 1 + rng.below(3);
        p.stride_w = 1 + rng.below(3);
        p.pad_top = rng.below(p.kh);
        p.pad_bottom = rng.below(p.kh);
        p.pad_left = rng.below(p.kw);
        p.pad_right = rng.below(p.kw);
        p.ceil_mode = rng.chance(1, 2);
        p.count_include_pad = rng.chance(1, 2);
        let Ok(d) = p.dims() else {
            assert!(p.h + p.pad_top + p.pad_bottom < p.kh || p.w + p.pad_left + p.pad_right < p.kw);
            continue;
        };
        tested += 1;
        let oh = ref_out(p.h, p.pad_top, p.pad_bottom, p.kh, p.stride_h, p.ceil_mode);
        let ow = ref_out(p.w, p.pad_left, p.pad_right, p.kw, p.stride_w, p.ceil_mode);
        assert_eq!((d.out_h, d.out_w), (oh, ow), "{p:?}");
        // Count the cases where the last-window rule removed an output.
        let naive = |size: usize, pa: usize, pb: usize, k: usize, s: usize| {
            (size + pa + pb - k).div_ceil(s) + 1
        };
        if p.ceil_mode
            && (naive(p.h, p.pad_top, p.pad_bottom, p.kh, p.stride_h) != oh
                || naive(p.w, p.pad_left, p.pad_right, p.kw, p.stride_w) != ow)
        {
            ceil_cut += 1;
        }
        let x = random(&mut rng, d.input_len);
        let (mx, avg, scale) = pool_ref(&p, &x);
        let mut out = nan_buf(d.output_len);
        max_pool2d(&p, &x, &mut out).unwrap();
        for (i, (&got, &want)) in out.iter().zip(&mx).enumerate() {
            assert_eq!(got as f64, want, "max {p:?} at {i}");
        }
        assert_tail_nan(&out, d.output_len, "max_pool2d");
        let mut out = nan_buf(d.output_len);
        avg_pool2d(&p, &x, &mut out).unwrap();
        let tol = (p.kh * p.kw + 2) as f64 * EPS;
        for (i, (&got, (&want, &sc))) in out.iter().zip(avg.iter().zip(&scale)).enumerate() {
            close(got, want, tol * sc, &format!("avg {p:?} at {i}"));
        }
        assert_tail_nan(&out, d.output_len, "avg_pool2d");
    }
    assert!(
        ceil_cut >= 3,
        "only {ceil_cut} cases exercised the last-window rule"
    );
}

#[test]
fn pooling_onnx_cases() {
    // ONNX backend test maxpool_2d_ceil: 4 × 4 input 1..16, kernel 3, stride 2, ceil mode.
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let mut p = Pool2dShape::new(1, 1, 4, 4, 3, 3);
    p.stride_h = 2;
    p.stride_w = 2;
    p.ceil_mode = true;
    let mut out = [0.0; 4];
    max_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [11.0, 12.0, 15.0, 16.0]);
    // Average of the same windows: the ceil-mode windows hold 9, 6, 6 and 4 elements.
    avg_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [6.0, 7.5, 12.0, 13.5]);
    p.ceil_mode = false;
    assert_eq!(p.dims().unwrap().out_h, 1);

    // The last-window rule: 5 wide, kernel 2, stride 2, padding 1 both sides. ⌈5/2⌉ + 1 = 4
    // windows, but the 4th would start at padded column 6 = in + pad_left: dropped (3 remain).
    let mut p = Pool2dShape::new(1, 1, 1, 5, 1, 2);
    p.pad_left = 1;
    p.pad_right = 1;
    p.ceil_mode = true;
    assert_eq!(p.dims().unwrap().out_w, 3);
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    let mut out = [0.0; 3];
    max_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [1.0, 3.0, 5.0]);
    avg_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [1.0, 2.5, 4.5]);
    p.count_include_pad = true;
    avg_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [0.5, 2.5, 4.5]);
    // The first window is half padding: 1 / 2 (padding counted) vs 1 / 1 (not).
    // Without padding the same 5 columns give ⌈3/2⌉ + 1 = 3 windows, the last one partial.
    let p = Pool2dShape {
        pad_left: 0,
        pad_right: 0,
        count_include_pad: false,
        ..p
    };
    assert_eq!(p.dims().unwrap().out_w, 3);
    max_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [2.0, 4.0, 5.0]);
    avg_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out, [1.5, 3.5, 5.0]);
}

#[test]
fn max_pooling_skips_nan_unless_the_window_holds_nothing_else() {
    // 1 × 8 input, kernel 2, stride 2: windows (NaN, 3), (NaN, NaN), (−∞, NaN), (−∞, −∞).
    let p = {
        let mut p = Pool2dShape::new(1, 1, 1, 8, 1, 2);
        p.stride_w = 2;
        p
    };
    let ninf = f32::NEG_INFINITY;
    let x = [
        f32::NAN,
        3.0,
        f32::NAN,
        f32::NAN,
        ninf,
        f32::NAN,
        ninf,
        ninf,
    ];
    let mut out = [0.0; 4];
    max_pool2d(&p, &x, &mut out).unwrap();
    assert_eq!(out[0], 3.0);
    assert!(out[1].is_nan());
    assert_eq!(out[2], ninf);
    assert_eq!(out[3], ninf);
    // Two rows: a NaN-only window row does not hide the other row's values.
    let mut q = Pool2dShape::new(1, 1, 2, 2, 2, 2);
    q.stride_h = 2;
    q.stride_w = 2;
    let mut one = [0.0];
    max_pool2d(&q, &[f32::NAN, f32::NAN, -7.0, f32::NAN], &mut one).unwrap();
    assert_eq!(one, [-7.0]);
    // Windows wider than the row buffer (512 columns) and wide rows split into column groups
    // give the plain maximum.
    for (w, k, stride) in [(600, 600, 1), (1500, 3, 2), (1100, 530, 7)] {
        let mut p = Pool2dShape::new(1, 1, 2, w, 2, k);
        p.stride_w = stride;
        let d = p.dims().unwrap();
        let x: Vec<f32> = (0..2 * w).map(|i| ((i * 7919) % 1013) as f32).collect();
        let mut out = vec![0.0; d.output_len];
        max_pool2d(&p, &x, &mut out).unwrap();
        for (ox, &o) in out.iter().enumerate() {
            let want = (0..2)
                .flat_map(|r| x[r * w + ox * stride..r * w + ox * stride + k].iter())
                .fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            assert_eq!(o, want, "w {w} k {k} stride {stride} output {ox}");
        }
    }
}

#[test]
fn global_average_pooling() {
    let mut rng = Rng::new(0x6c61_7965_7273_0004);
    for _ in 0..30 {
        let s = random_shape(&mut rng);
        let x = random(&mut rng, s.elements().unwrap());
        let planes = s.n * s.c;
        let mut out = nan_buf(planes);
        global_avg_pool(&s, &x, &mut out).unwrap();
        for (i, (&got, p)) in out.iter().zip(x.chunks(s.plane_len())).enumerate() {
            let want: f64 = p.iter().map(|&v| v as f64).sum::<f64>() / p.len() as f64;
            let sc: f64 = p.iter().map(|&v| (v as f64).abs()).sum::<f64>() / p.len() as f64;
            close(
                got,
                want,
                (p.len() + 2) as f64 * EPS * sc,
                &format!("gap {i}"),
            );
        }
        assert_tail_nan(&out, planes, "global_avg_pool");
    }
    // Planes of fewer than, exactly and more than 16 values, most not multiples of 16 (the
    // 16 partial sums and the in-order rest).
    for (h, w) in [(3, 5), (4, 4), (1, 17), (7, 7), (13, 13), (1, 1000)] {
        let s = Shape4::new(2, 3, h, w).unwrap();
        let x = random(&mut rng, s.elements().unwrap());
        let mut out = nan_buf(6);
        global_avg_pool(&s, &x, &mut out).unwrap();
        for (i, (&got, p)) in out.iter().zip(x.chunks(h * w)).enumerate() {
            let want: f64 = p.iter().map(|&v| v as f64).sum::<f64>() / p.len() as f64;
            let sc: f64 = p.iter().map(|&v| (v as f64).abs()).sum::<f64>() / p.len() as f64;
            close(
                got,
                want,
                (p.len() + 2) as f64 * EPS * sc,
                &format!("gap {h}x{w} {i}"),
            );
        }
        assert_tail_nan(&out, 6, "global_avg_pool");
    }
    // 1 × 1 planes are copied.
    let s = Shape4::new(2, 3, 1, 1).unwrap();
    let x = [1.0, -2.0, 3.0, 4.5, 5.0, -6.0];
    let mut out = [0.0; 6];
    global_avg_pool(&s, &x, &mut out).unwrap();
    assert_eq!(out, x);
}

#[test]
fn pooling_errors_leave_output_untouched() {
    let p = Pool2dShape::new(2, 2, 4, 4, 2, 2);
    let x = vec![1.0; 64];
    let mut out = nan_buf(16);
    let bad = |f: fn(&mut Pool2dShape)| {
        let mut q = p;
        f(&mut q);
        q
    };
    let cases = [
        (bad(|q| q.kh = 0), 64, Error::ZeroSize),
        (bad(|q| q.stride_w = 0), 64, Error::ZeroSize),
        (bad(|q| q.pad_left = 2), 64, Error::InvalidArgument),
        (bad(|q| q.pad_bottom = 2), 64, Error::InvalidArgument),
        (bad(|q| q.kw = 5), 64, Error::SizeMismatch),
        (bad(|q| q.n = usize::MAX / 2), 64, Error::Overflow),
        (p, 63, Error::BufferTooSmall),
        // Windows (and padding) so large that the padded area overflows, with a 1 × 1 output.
        (
            bad(|q| {
                (q.kh, q.kw) = (1 << 40, 1 << 40);
                (q.pad_top, q.pad_left) = ((1 << 40) - 1, (1 << 40) - 1);
                (q.stride_h, q.stride_w) = (1 << 41, 1 << 41);
            }),
            64,
            Error::Overflow,
        ),
    ];
    for (q, in_len, err) in cases {
        assert_eq!(max_pool2d(&q, &x[..in_len], &mut out), Err(err), "{q:?}");
        assert_eq!(avg_pool2d(&q, &x[..in_len], &mut out), Err(err), "{q:?}");
        assert!(out.iter().all(|v| v.is_nan()), "{q:?} wrote on error");
    }
    assert_eq!(
        max_pool2d(&p, &x, &mut out[..15]),
        Err(Error::BufferTooSmall)
    );
    let s = Shape4::new(2, 2, 4, 4).unwrap();
    assert_eq!(
        global_avg_pool(&s, &x, &mut out[..3]),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        global_avg_pool(&s, &x[..63], &mut out),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------------------------------------
// Fully connected
// ---------------------------------------------------------------------------------------------

#[test]
fn fully_connected_matches_the_reference() {
    let mut rng = Rng::new(0x6c61_7965_7273_0005);
    for round in 0..40 {
        let (batch, fin, fout) = (2 + rng.below(3), 1 + rng.below(70), 1 + rng.below(20));
        let x = random(&mut rng, batch * fin);
        let w = random(&mut rng, fout * fin);
        let b = random(&mut rng, fout);
        let bias = (round % 2 == 0).then_some(&b[..]);
        let mut pack = vec![f32::NAN; fully_connected_pack_len(batch, fin, fout)];
        let mut out = nan_buf(batch * fout);
        fully_connected(batch, fin, fout, &x, &w, bias, &mut out, &mut pack).unwrap();
        for r in 0..batch {
            for o in 0..fout {
                let mut want = bias.map_or(0.0, |b| b[o] as f64);
                let mut mag = want.abs();
                for i in 0..fin {
                    let p = x[r * fin + i] as f64 * w[o * fin + i] as f64;
                    want += p;
                    mag += p.abs();
                }
                let tol = (fin + 2) as f64 * EPS * mag;
                close(
                    out[r * fout + o],
                    want,
                    tol,
                    &format!("fc {batch}x{fin}->{fout}"),
                );
            }
        }
        assert_tail_nan(&out, batch * fout, "fully_connected");
    }
}

#[test]
fn fully_connected_errors_leave_output_untouched() {
    let (x, w, b) = ([1.0f32; 6], [1.0f32; 12], [1.0f32; 4]);
    let mut pack = vec![0.0; fully_connected_pack_len(2, 3, 4)];
    let mut out = nan_buf(8);
    let mut run = |batch, fin, fout, x: &[f32], w: &[f32], b: &[f32], out: &mut [f32]| {
        fully_connected(batch, fin, fout, x, w, Some(b), out, &mut pack)
    };
    assert_eq!(run(0, 3, 4, &x, &w, &b, &mut out), Err(Error::ZeroSize));
    assert_eq!(
        run(2, 3, 4, &x[..5], &w, &b, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(2, 3, 4, &x, &w[..11], &b, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(2, 3, 4, &x, &w, &b[..3], &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(2, 3, 4, &x, &w, &b, &mut out[..7]),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(usize::MAX, 3, 4, &x, &w, &b, &mut out),
        Err(Error::Overflow)
    );
    assert!(out.iter().all(|v| v.is_nan()));
    let mut short = vec![0.0; fully_connected_pack_len(2, 3, 4) - 1];
    let r = fully_connected(2, 3, 4, &x, &w, None, &mut out, &mut short);
    assert_eq!(r, Err(Error::BufferTooSmall));
    assert!(out.iter().all(|v| v.is_nan()));
    run(2, 3, 4, &x, &w, &b, &mut out).unwrap();
    assert_eq!(&out[..8], &[4.0; 8]);
}

// ---------------------------------------------------------------------------------------------
// Softmax and reduce-mean
// ---------------------------------------------------------------------------------------------

fn dims4(s: &Shape4) -> [usize; 4] {
    [s.n, s.c, s.h, s.w]
}

/// Linear index of `[n, c, y, x]`.
fn at(s: &Shape4, i: [usize; 4]) -> usize {
    s.index(i[0], i[1], i[2], i[3])
}

/// Every index of `s`, in memory order.
fn indices(s: &Shape4) -> Vec<[usize; 4]> {
    let mut v = vec![];
    for n in 0..s.n {
        for c in 0..s.c {
            for y in 0..s.h {
                for x in 0..s.w {
                    v.push([n, c, y, x]);
                }
            }
        }
    }
    v
}

#[test]
fn softmax_matches_the_reference_and_sums_to_one() {
    let mut rng = Rng::new(0x6c61_7965_7273_0006);
    for _ in 0..40 {
        let s = random_shape(&mut rng);
        let len = s.elements().unwrap();
        // Multiples of 2⁻¹⁰ in [-8, 8): adding 64 is exact, so the shifted softmax must give the
        // same bits (x − max is the same exact difference).
        let x: Vec<f32> = (0..len)
            .map(|_| rng.range(-8192, 8191) as f32 / 1024.0)
            .collect();
        for axis in 0..4 {
            let mut y = x.clone();
            y.extend([f32::NAN; 3]);
            softmax(&s, axis, &mut y).unwrap();
            assert_tail_nan(&y, len, "softmax");
            let n_axis = dims4(&s)[axis];
            for idx in indices(&s) {
                let mut line = vec![];
                for k in 0..n_axis {
                    let mut j = idx;
                    j[axis] = k;
                    line.push(at(&s, j));
                }
                if idx[axis] != 0 {
                    continue; // one check per line
                }
                let max = line.iter().map(|&j| x[j] as f64).fold(f64::MIN, f64::max);
                let denom: f64 = line.iter().map(|&j| (x[j] as f64 - max).exp()).sum();
                let mut total = 0.0;
                for &j in &line {
                    let want = (x[j] as f64 - max).exp() / denom;
                    close(y[j], want, (n_axis + 4) as f64 * EPS * want, "softmax");
                    total += y[j] as f64;
                }
                assert!(
                    (total - 1.0).abs() <= (n_axis + 2) as f64 * EPS,
                    "sum {total}"
                );
            }
            let mut shifted: Vec<f32> = x.iter().map(|v| v + 64.0).collect();
            softmax(&s, axis, &mut shifted).unwrap();
            assert_eq!(bits(&shifted), bits(&y[..len]), "shift changed softmax");
        }
    }
    // Huge logits do not overflow; a 1-long axis gives 1.
    let s = Shape4::new(1, 3, 1, 1).unwrap();
    let mut v = [1000.0f32, 1000.0, -1000.0];
    softmax(&s, 1, &mut v).unwrap();
    assert_eq!(v, [0.5, 0.5, 0.0]);
    let mut v = [f32::MAX, -3.0, 7.0];
    softmax(&s, 3, &mut v).unwrap();
    assert_eq!(v, [1.0; 3]);
}

#[test]
fn reduce_mean_matches_the_reference() {
    let mut rng = Rng::new(0x6c61_7965_7273_0007);
    for _ in 0..30 {
        let s = random_shape(&mut rng);
        let x = random(&mut rng, s.elements().unwrap());
        for mask in 0..16u32 {
            let axes = [mask & 8 != 0, mask & 4 != 0, mask & 2 != 0, mask & 1 != 0];
            let os = reduce_shape(&s, axes);
            let ol = os.elements().unwrap();
            let mut want = vec![0.0f64; ol];
            let mut mag = vec![0.0f64; ol];
            let mut count = vec![0usize; ol];
            for idx in indices(&s) {
                let mut o = idx;
                for (k, &r) in axes.iter().enumerate() {
                    if r {
                        o[k] = 0;
                    }
                }
                let v = x[at(&s, idx)] as f64;
                want[at(&os, o)] += v;
                mag[at(&os, o)] += v.abs();
                count[at(&os, o)] += 1;
            }
            let mut out = nan_buf(ol);
            reduce_mean(&s, axes, &x, &mut out).unwrap();
            for i in 0..ol {
                let n = count[i] as f64;
                let tol = (n + 2.0) * EPS * mag[i] / n;
                close(
                    out[i],
                    want[i] / n,
                    tol,
                    &format!("reduce_mean {axes:?} {s:?}"),
                );
            }
            assert_tail_nan(&out, ol, "reduce_mean");
        }
    }
}

#[test]
fn softmax_and_reduce_errors() {
    let s = Shape4::new(2, 3, 2, 2).unwrap();
    let mut v = nan_buf(24);
    assert_eq!(softmax(&s, 4, &mut v), Err(Error::InvalidArgument));
    assert_eq!(softmax(&s, 1, &mut v[..23]), Err(Error::BufferTooSmall));
    let x = vec![1.0f32; 24];
    let hw = [false, false, true, true];
    assert_eq!(reduce_shape(&s, hw), Shape4::new(2, 3, 1, 1).unwrap());
    assert_eq!(
        reduce_mean(&s, hw, &x[..23], &mut v),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        reduce_mean(&s, hw, &x, &mut v[..5]),
        Err(Error::BufferTooSmall)
    );
    let zero = Shape4 {
        n: 2,
        c: 0,
        h: 1,
        w: 1,
    };
    assert_eq!(reduce_mean(&zero, hw, &x, &mut v), Err(Error::ZeroSize));
    assert_eq!(softmax(&zero, 1, &mut v), Err(Error::ZeroSize));
    assert!(v.iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------------------------------------
// Add, concat, flatten, pad
// ---------------------------------------------------------------------------------------------

#[test]
fn add_with_broadcasting() {
    let mut rng = Rng::new(0x6c61_7965_7273_0008);
    for _ in 0..30 {
        let s = random_shape(&mut rng);
        let len = s.elements().unwrap();
        let a = random(&mut rng, len);
        for bc in [Broadcast::Same, Broadcast::PerChannel, Broadcast::Scalar] {
            let b = random(&mut rng, len);
            let mut out = nan_buf(len);
            add(&s, &a, &b, bc, &mut out).unwrap();
            let mut inplace = a.clone();
            add_in_place(&s, &mut inplace, &b, bc).unwrap();
            for idx in indices(&s) {
                let i = at(&s, idx);
                let bv = match bc {
                    Broadcast::Same => b[i],
                    Broadcast::PerChannel => b[idx[1]],
                    Broadcast::Scalar => b[0],
                };
                let want = (a[i] as f64 + bv as f64) as f32; // one rounding
                assert_eq!(out[i].to_bits(), want.to_bits(), "{bc:?} at {idx:?}");
                assert_eq!(inplace[i].to_bits(), want.to_bits(), "in place {bc:?}");
            }
            assert_tail_nan(&out, len, "add");
        }
    }
    let s = Shape4::new(2, 3, 2, 2).unwrap();
    let (a, b) = (vec![1.0f32; 24], vec![1.0f32; 24]);
    let mut out = nan_buf(24);
    assert_eq!(
        add(&s, &a, &b[..23], Broadcast::Same, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        add(&s, &a, &b[..2], Broadcast::PerChannel, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        add(&s, &a, &[], Broadcast::Scalar, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        add(&s, &a[..23], &b, Broadcast::Same, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        add(&s, &a, &b, Broadcast::Same, &mut out[..23]),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()));
    let mut a2 = a.clone();
    assert_eq!(
        add_in_place(&s, &mut a2, &b[..2], Broadcast::PerChannel),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(a2, a);
}

fn apply64(op: BinaryOp, a: f32, b: f32) -> f32 {
    let (a, b) = (a as f64, b as f64);
    (match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
    }) as f32 // one rounding
}

#[test]
fn sub_and_mul_fast_paths() {
    let mut rng = Rng::new(0x6c61_7965_7273_0018);
    for _ in 0..10 {
        let s = random_shape(&mut rng);
        let len = s.elements().unwrap();
        let a = random(&mut rng, len);
        for op in [BinaryOp::Sub, BinaryOp::Mul] {
            for bc in [Broadcast::Same, Broadcast::PerChannel, Broadcast::Scalar] {
                let b = random(&mut rng, len);
                let mut out = nan_buf(len);
                binary(op, &s, &a, &b, bc, &mut out).unwrap();
                let mut inplace = a.clone();
                binary_in_place(op, &s, &mut inplace, &b, bc).unwrap();
                for idx in indices(&s) {
                    let i = at(&s, idx);
                    let bv = match bc {
                        Broadcast::Same => b[i],
                        Broadcast::PerChannel => b[idx[1]],
                        Broadcast::Scalar => b[0],
                    };
                    let want = apply64(op, a[i], bv);
                    assert_eq!(out[i].to_bits(), want.to_bits(), "{op:?} {bc:?} at {idx:?}");
                    assert_eq!(inplace[i].to_bits(), want.to_bits(), "in place {op:?}");
                }
                assert_tail_nan(&out, len, "binary");
            }
        }
    }
}

#[test]
fn numpy_broadcasting_of_both_operands() {
    let mut rng = Rng::new(0x6c61_7965_7273_0019);
    for _ in 0..60 {
        let o = [
            1 + rng.below(3),
            1 + rng.below(4),
            1 + rng.below(5),
            1 + rng.below(6),
        ];
        let sub = |rng: &mut Rng| {
            let d: Vec<usize> = o
                .iter()
                .map(|&v| if rng.chance(1, 2) { v } else { 1 })
                .collect();
            Shape4::new(d[0], d[1], d[2], d[3]).unwrap()
        };
        let (sa, sb) = (sub(&mut rng), sub(&mut rng));
        let so = broadcast_shape(&sa, &sb).unwrap();
        let (a, b) = (
            random(&mut rng, sa.elements().unwrap()),
            random(&mut rng, sb.elements().unwrap()),
        );
        let len = so.elements().unwrap();
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul] {
            let mut out = nan_buf(len);
            binary_broadcast(op, &sa, &a, &sb, &b, &mut out).unwrap();
            let pick = |s: &Shape4, i: [usize; 4]| {
                let d = [s.n, s.c, s.h, s.w];
                let j: Vec<usize> = (0..4).map(|k| if d[k] == 1 { 0 } else { i[k] }).collect();
                s.index(j[0], j[1], j[2], j[3])
            };
            for idx in indices(&so) {
                let want = apply64(op, a[pick(&sa, idx)], b[pick(&sb, idx)]);
                assert_eq!(
                    out[at(&so, idx)].to_bits(),
                    want.to_bits(),
                    "{op:?} {sa:?} {sb:?}"
                );
            }
            assert_tail_nan(&out, len, "binary_broadcast");
            if sa == so {
                let mut inplace = a.clone();
                binary_in_place_broadcast(op, &so, &mut inplace, &sb, &b).unwrap();
                assert_eq!(bits(&inplace), bits(&out[..len]), "in place {op:?}");
            }
        }
    }
    let s = |n, c, h, w| Shape4::new(n, c, h, w).unwrap();
    assert_eq!(
        broadcast_shape(&s(1, 3, 2, 2), &s(1, 2, 2, 2)),
        Err(Error::SizeMismatch)
    );
    let mut out = nan_buf(12);
    assert_eq!(
        binary_broadcast(
            BinaryOp::Add,
            &s(1, 3, 2, 2),
            &[0.0; 11],
            &s(1, 1, 1, 2),
            &[0.0; 2],
            &mut out
        ),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        binary_broadcast(
            BinaryOp::Add,
            &s(1, 3, 2, 2),
            &[0.0; 12],
            &s(1, 1, 1, 2),
            &[0.0; 2],
            &mut out[..11]
        ),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()));
    let mut a = vec![1.0f32; 2];
    assert_eq!(
        binary_in_place_broadcast(
            BinaryOp::Mul,
            &s(1, 1, 1, 2),
            &mut a,
            &s(1, 3, 1, 2),
            &[0.0; 6]
        ),
        Err(Error::SizeMismatch),
        "in place needs the first operand to have the output's shape"
    );
    assert_eq!(a, [1.0, 1.0]);
}

#[test]
fn matmul_with_batch_broadcasting() {
    let mut rng = Rng::new(0x6c61_7965_7273_0020);
    for t in 0..40 {
        let ob = [1 + rng.below(3), 1 + rng.below(3)];
        let bd = |rng: &mut Rng| [0, 1].map(|i| if rng.chance(1, 2) { ob[i] } else { 1 });
        let shape = MatMulShape {
            a_batch: bd(&mut rng),
            b_batch: bd(&mut rng),
            m: 1 + rng.below(9),
            k: if t == 0 { 1 } else { 1 + rng.below(40) },
            n: 1 + rng.below(11),
        };
        let d = shape.dims().unwrap();
        let (m, k, n) = (shape.m, shape.k, shape.n);
        let a = random(&mut rng, d.a_len);
        let b = random(&mut rng, d.b_len);
        let mut out = nan_buf(d.out_len);
        let mut pack = vec![f32::NAN; matmul_pack_len(&shape)];
        matmul(&shape, &a, &b, &mut out, &mut pack).unwrap();
        let pick = |dims: [usize; 2], i0: usize, i1: usize| {
            let j0 = if dims[0] == 1 { 0 } else { i0 };
            let j1 = if dims[1] == 1 { 0 } else { i1 };
            j0 * dims[1] + j1
        };
        for i0 in 0..d.out_batch[0] {
            for i1 in 0..d.out_batch[1] {
                let (pa, pb) = (pick(shape.a_batch, i0, i1), pick(shape.b_batch, i0, i1));
                let po = i0 * d.out_batch[1] + i1;
                for r in 0..m {
                    for c in 0..n {
                        let (mut sum, mut abs) = (0.0f64, 0.0f64);
                        for j in 0..k {
                            let p =
                                a[pa * m * k + r * k + j] as f64 * b[pb * k * n + j * n + c] as f64;
                            sum += p;
                            abs += p.abs();
                        }
                        let got = out[po * m * n + r * n + c] as f64;
                        let tol = (k as f64 + 2.0) * EPS * abs + 1e-30;
                        assert!(
                            (got - sum).abs() <= tol,
                            "{shape:?} [{i0},{i1},{r},{c}]: {got} vs {sum}"
                        );
                    }
                }
            }
        }
        assert_tail_nan(&out, d.out_len, "matmul");
    }
    let bad = MatMulShape {
        a_batch: [2, 1],
        b_batch: [3, 1],
        m: 2,
        k: 2,
        n: 2,
    };
    assert_eq!(bad.dims(), Err(Error::SizeMismatch));
    let zero = MatMulShape {
        a_batch: [1, 1],
        b_batch: [1, 1],
        m: 2,
        k: 0,
        n: 2,
    };
    assert_eq!(zero.dims(), Err(Error::ZeroSize));
    let s = MatMulShape {
        a_batch: [1, 2],
        b_batch: [1, 1],
        m: 2,
        k: 3,
        n: 2,
    };
    let mut pack = vec![0.0; matmul_pack_len(&s)];
    let mut out = nan_buf(8);
    assert_eq!(
        matmul(&s, &[0.0; 11], &[0.0; 6], &mut out, &mut pack),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        matmul(&s, &[0.0; 12], &[0.0; 5], &mut out, &mut pack),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        matmul(&s, &[0.0; 12], &[0.0; 6], &mut out[..7], &mut pack),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        matmul(&s, &[0.0; 12], &[0.0; 6], &mut out, &mut []),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()));
}

#[test]
fn concat_of_three_tensors_on_every_axis() {
    let mut rng = Rng::new(0x6c61_7965_7273_0009);
    for _ in 0..20 {
        let base = random_shape(&mut rng);
        for axis in 0..4 {
            let shapes: Vec<Shape4> = (0..3)
                .map(|_| {
                    let mut d = dims4(&base);
                    d[axis] = 1 + rng.below(4);
                    Shape4::new(d[0], d[1], d[2], d[3]).unwrap()
                })
                .collect();
            let data: Vec<Vec<f32>> = shapes
                .iter()
                .map(|s| random(&mut rng, s.elements().unwrap()))
                .collect();
            let os = concat_shape(&shapes, axis).unwrap();
            let ol = os.elements().unwrap();
            let inputs: Vec<(Shape4, &[f32])> = shapes
                .iter()
                .zip(&data)
                .map(|(&s, d)| (s, &d[..]))
                .collect();
            let mut out = nan_buf(ol);
            concat(&inputs, axis, &mut out).unwrap();
            assert_tail_nan(&out, ol, "concat");
            let mut offset = 0;
            for (s, d) in shapes.iter().zip(&data) {
                for idx in indices(s) {
                    let mut o = idx;
                    o[axis] += offset;
                    assert_eq!(
                        out[at(&os, o)].to_bits(),
                        d[at(s, idx)].to_bits(),
                        "axis {axis}"
                    );
                }
                offset += dims4(s)[axis];
            }
        }
    }
    let a = Shape4::new(2, 3, 4, 5).unwrap();
    let b = Shape4::new(2, 2, 4, 6).unwrap();
    assert_eq!(concat_shape(&[a, b], 1), Err(Error::SizeMismatch));
    assert_eq!(concat_shape(&[a, a], 4), Err(Error::InvalidArgument));
    assert_eq!(concat_shape(&[], 1), Err(Error::InvalidArgument));
    let x = vec![0.0f32; 120];
    let mut out = nan_buf(240);
    assert_eq!(
        concat(&[(a, &x), (b, &x)], 1, &mut out),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        concat(&[(a, &x), (a, &x[..119])], 1, &mut out),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        concat(&[(a, &x), (a, &x)], 1, &mut out[..239]),
        Err(Error::BufferTooSmall)
    );
    assert!(out.iter().all(|v| v.is_nan()));
}

#[test]
fn flatten_is_a_shape_function() {
    let s = Shape4::new(2, 3, 4, 5).unwrap();
    let want = [(1, 120), (2, 60), (6, 20), (24, 5), (120, 1)];
    for (axis, &w) in want.iter().enumerate() {
        assert_eq!(flatten_shape(&s, axis), Ok(w));
    }
    assert_eq!(flatten_shape(&s, 5), Err(Error::InvalidArgument));
    let zero = Shape4 {
        n: 0,
        c: 3,
        h: 4,
        w: 5,
    };
    assert_eq!(flatten_shape(&zero, 1), Err(Error::ZeroSize));
}

/// Index into `0..size` for padded coordinate `i − before` by the ONNX (numpy) rules, written by
/// repeated reflection for `reflect`.
fn pad_source(i: i64, size: i64, mode: PadMode) -> Option<usize> {
    if (0..size).contains(&i) {
        return Some(i as usize);
    }
    match mode {
        PadMode::Constant(_) => None,
        PadMode::Edge => Some(i.clamp(0, size - 1) as usize),
        PadMode::Reflect => {
            let mut j = i;
            while !(0..size).contains(&j) {
                j = if j < 0 { -j } else { 2 * (size - 1) - j };
            }
            Some(j as usize)
        }
    }
}

#[test]
fn pad_matches_the_reference() {
    let mut rng = Rng::new(0x6c61_7965_7273_000a);
    for _ in 0..40 {
        let s = random_shape(&mut rng);
        let x = random(&mut rng, s.elements().unwrap());
        for mode in [PadMode::Constant(-0.5), PadMode::Edge, PadMode::Reflect] {
            let lim = |size: usize| if mode == PadMode::Reflect { size } else { 4 };
            let pads = Pads {
                top: rng.below(lim(s.h)),
                left: rng.below(lim(s.w)),
                bottom: rng.below(lim(s.h)),
                right: rng.below(lim(s.w)),
            };
            let os = pad_shape(&s, &pads).unwrap();
            let ol = os.elements().unwrap();
            let mut out = nan_buf(ol);
            pad2d(&s, &pads, mode, &x, &mut out).unwrap();
            assert_tail_nan(&out, ol, "pad2d");
            for o in indices(&os) {
                let iy = pad_source(o[2] as i64 - pads.top as i64, s.h as i64, mode);
                let ix = pad_source(o[3] as i64 - pads.left as i64, s.w as i64, mode);
                let want = match (iy, ix) {
                    (Some(y), Some(xx)) => x[s.index(o[0], o[1], y, xx)],
                    _ => -0.5,
                };
                assert_eq!(
                    out[at(&os, o)].to_bits(),
                    want.to_bits(),
                    "{mode:?} {pads:?}"
                );
            }
        }
    }
    // ONNX Pad examples along one row: [1, 2, 3] padded by 2 on both sides.
    let s = Shape4::new(1, 1, 1, 3).unwrap();
    let pads = Pads {
        left: 2,
        right: 2,
        ..Pads::default()
    };
    let mut out = [0.0f32; 7];
    pad2d(&s, &pads, PadMode::Reflect, &[1.0, 2.0, 3.0], &mut out).unwrap();
    assert_eq!(out, [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]);
    pad2d(&s, &pads, PadMode::Edge, &[1.0, 2.0, 3.0], &mut out).unwrap();
    assert_eq!(out, [1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0]);
    pad2d(
        &s,
        &pads,
        PadMode::Constant(9.0),
        &[1.0, 2.0, 3.0],
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [9.0, 9.0, 1.0, 2.0, 3.0, 9.0, 9.0]);
    // Errors: reflect padding as large as the input, short buffers, overflow.
    let pads3 = Pads {
        left: 3,
        ..Pads::default()
    };
    let mut out = nan_buf(6);
    let x = [1.0f32, 2.0, 3.0];
    assert_eq!(
        pad2d(&s, &pads3, PadMode::Reflect, &x, &mut out),
        Err(Error::InvalidArgument)
    );
    let tall = Pads {
        top: 1,
        ..Pads::default()
    };
    assert_eq!(
        pad2d(&s, &tall, PadMode::Reflect, &x, &mut out),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        pad2d(&s, &pads3, PadMode::Edge, &x, &mut out[..5]),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        pad2d(&s, &pads3, PadMode::Edge, &x[..2], &mut out),
        Err(Error::BufferTooSmall)
    );
    let huge = Pads {
        right: usize::MAX,
        ..Pads::default()
    };
    assert_eq!(
        pad2d(&s, &huge, PadMode::Edge, &x, &mut out),
        Err(Error::Overflow)
    );
    assert!(out.iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------------------------------------
// Batch normalisation
// ---------------------------------------------------------------------------------------------

struct Bn {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    mean: Vec<f32>,
    var: Vec<f32>,
}

impl Bn {
    fn random(rng: &mut Rng, c: usize) -> Self {
        Self {
            gamma: (0..c).map(|_| rng.f32_in(0.2, 2.0)).collect(),
            beta: random(rng, c),
            mean: random(rng, c),
            var: (0..c).map(|_| rng.f32_in(0.05, 3.0)).collect(),
        }
    }

    fn params(&self) -> BatchNormParams<'_> {
        BatchNormParams {
            gamma: &self.gamma,
            beta: &self.beta,
            mean: &self.mean,
            var: &self.var,
            eps: 1e-5,
        }
    }

    fn reference(&self, c: usize, x: f64) -> f64 {
        let s = self.gamma[c] as f64 / (self.var[c] as f64 + 1e-5f32 as f64).sqrt();
        s * (x - self.mean[c] as f64) + self.beta[c] as f64
    }
}

#[test]
fn batch_norm_matches_the_reference() {
    let mut rng = Rng::new(0x6c61_7965_7273_000b);
    for _ in 0..30 {
        let s = random_shape(&mut rng);
        let len = s.elements().unwrap();
        let bn = Bn::random(&mut rng, s.c);
        let x = random(&mut rng, len);
        let mut y = x.clone();
        y.extend([f32::NAN; 3]);
        batch_norm(&s, &bn.params(), &mut y).unwrap();
        assert_tail_nan(&y, len, "batch_norm");
        for idx in indices(&s) {
            let i = at(&s, idx);
            let c = idx[1];
            let want = bn.reference(c, x[i] as f64);
            let sc = bn.gamma[c] as f64 / (bn.var[c] as f64).sqrt();
            let mag = sc * (x[i].abs() + bn.mean[c].abs()) as f64 + bn.beta[c].abs() as f64;
            close(y[i], want, 8.0 * EPS * mag, "batch_norm");
        }
    }
}

/// `Σ |x·w|` per output of a dense (one group, no dilation) convolution, in `f64`.
fn conv_abs(s: &Conv2dShape, x: &[f32], w: &[f32]) -> Vec<f64> {
    let d = s.dims().unwrap();
    let mut out = vec![0.0; d.output_len];
    for b in 0..s.n {
        for oc in 0..s.c_out {
            for oy in 0..d.out_h {
                for ox in 0..d.out_w {
                    let mut acc = 0.0;
                    for ic in 0..s.c_in {
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let iy = (oy * s.stride_h + ky) as i64 - s.pad_top as i64;
                                let ix = (ox * s.stride_w + kx) as i64 - s.pad_left as i64;
                                if iy < 0 || ix < 0 || iy >= s.h as i64 || ix >= s.w as i64 {
                                    continue;
                                }
                                let xv = x
                                    [((b * s.c_in + ic) * s.h + iy as usize) * s.w + ix as usize]
                                    as f64;
                                let wv = w[((oc * s.c_in + ic) * s.kh + ky) * s.kw + kx] as f64;
                                acc += (xv * wv).abs();
                            }
                        }
                    }
                    out[((b * s.c_out + oc) * d.out_h + oy) * d.out_w + ox] = acc;
                }
            }
        }
    }
    out
}

/// Folding into the convolution gives conv → batch norm within 1e-5 relative to each output's
/// scale.
#[test]
fn folded_batch_norm_equals_conv_then_batch_norm() {
    let mut rng = Rng::new(0x6c61_7965_7273_000c);
    for round in 0..30 {
        let mut s = Conv2dShape::new(
            2 + rng.below(2),
            1 + rng.below(4),
            1 + rng.below(9),
            1 + rng.below(9),
            1 + rng.below(6),
            1 + rng.below(3),
            1 + rng.below(3),
        );
        s.pad_top = rng.below(2);
        s.pad_left = rng.below(2);
        let Ok(d) = s.dims() else { continue };
        let x = random(&mut rng, d.input_len);
        let w = random(&mut rng, d.weight_len);
        let b = random(&mut rng, s.c_out);
        let has_bias = round % 2 == 0;
        let bn = Bn::random(&mut rng, s.c_out);
        let os = Shape4::new(s.n, s.c_out, d.out_h, d.out_w).unwrap();
        let mut ws = vec![0.0; workspace_len(ConvMethod::Im2col, &s).unwrap()];
        // Conv, then batch norm.
        let mut two = vec![0.0; d.output_len];
        let conv_bias = has_bias.then_some(&b[..]);
        conv2d(ConvMethod::Im2col, &s, &x, &w, conv_bias, &mut two, &mut ws).unwrap();
        batch_norm(&os, &bn.params(), &mut two).unwrap();
        // Folded weights and bias, one conv.
        let (mut wf, mut bf) = (
            w.clone(),
            if has_bias {
                b.clone()
            } else {
                vec![f32::NAN; s.c_out]
            },
        );
        fold_batch_norm(&s, &mut wf, &mut bf, has_bias, &bn.params()).unwrap();
        let mut one = vec![0.0; d.output_len];
        conv2d(
            ConvMethod::Im2col,
            &s,
            &x,
            &wf,
            Some(&bf),
            &mut one,
            &mut ws,
        )
        .unwrap();
        // Relative to each output's scale |s|·(Σ|x·w| + |b| + |μ|) + |β| (what both orders
        // round), not to the output, which may cancel to near 0.
        let abs = conv_abs(&s, &x, &w);
        for idx in indices(&os) {
            let i = at(&os, idx);
            let c = idx[1];
            let sc = (bn.gamma[c] as f64 / (bn.var[c] as f64 + 1e-5).sqrt()).abs();
            let b0 = if has_bias { b[c].abs() as f64 } else { 0.0 };
            let mag = sc * (abs[i] + b0 + bn.mean[c].abs() as f64) + bn.beta[c].abs() as f64;
            let diff = (one[i] as f64 - two[i] as f64).abs();
            assert!(
                diff <= 1e-5 * mag,
                "{s:?} at {idx:?}: folded {} vs {} (scale {mag})",
                one[i],
                two[i]
            );
        }
    }
}

#[test]
fn batch_norm_errors_leave_data_untouched() {
    let s = Shape4::new(2, 3, 2, 2).unwrap();
    let p = |var: &'static [f32], eps: f32| BatchNormParams {
        gamma: &[1.0; 3],
        beta: &[0.0; 3],
        mean: &[0.0; 3],
        var,
        eps,
    };
    let cases = [
        (p(&[1.0, -2.0, 1.0], 1e-5), Error::InvalidArgument),
        (p(&[1.0, f32::NAN, 1.0], 1e-5), Error::InvalidArgument),
        (p(&[1.0, 0.0, 1.0], 0.0), Error::InvalidArgument),
        (p(&[1.0; 3], -1e-5), Error::InvalidArgument),
        (p(&[1.0; 3], f32::INFINITY), Error::InvalidArgument),
        (p(&[1.0; 2], 1e-5), Error::BufferTooSmall),
    ];
    let orig: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let conv = Conv2dShape::new(1, 2, 3, 3, 3, 1, 1);
    for (bn, err) in cases {
        let mut v = orig.clone();
        assert_eq!(batch_norm(&s, &bn, &mut v), Err(err));
        assert_eq!(v, orig);
        let (mut w, mut b) = (vec![1.0f32; 6], vec![2.0f32; 3]);
        assert_eq!(fold_batch_norm(&conv, &mut w, &mut b, true, &bn), Err(err));
        assert_eq!((w, b), (vec![1.0; 6], vec![2.0; 3]));
    }
    let bn = p(&[1.0; 3], 1e-5);
    let mut v = orig.clone();
    assert_eq!(
        batch_norm(&s, &bn, &mut v[..23]),
        Err(Error::BufferTooSmall)
    );
    let (mut w, mut b) = (vec![1.0f32; 6], vec![2.0f32; 3]);
    assert_eq!(
        fold_batch_norm(&conv, &mut w[..5], &mut b, true, &bn),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        fold_batch_norm(&conv, &mut w, &mut b[..2], true, &bn),
        Err(Error::BufferTooSmall)
    );
    assert_eq!((w, b), (vec![1.0; 6], vec![2.0; 3]));
}

// ---------------------------------------------------------------------------------------------
// No heap use
// ---------------------------------------------------------------------------------------------

/// Every operator allocates nothing (conv through the direct method, whose path never reaches
/// the optional `gemm` crate).
#[test]
fn no_heap_use() {
    let s = Shape4::new(2, 3, 9, 7).unwrap();
    let len = s.elements().unwrap();
    let x = vec![0.5f32; len];
    let mut y = vec![0.0f32; len];
    let slopes = [0.1f32, 0.2, 0.3];
    let mut p = Pool2dShape::new(2, 3, 9, 7, 3, 3);
    p.ceil_mode = true;
    p.pad_top = 1;
    let c = Conv2dShape::new(2, 3, 9, 7, 3, 3, 3);
    let w = vec![0.25f32; 81];
    let before = counting_alloc::heap_calls();
    for act in ACTS {
        apply_activation(act, &s, &mut y, Some(&slopes)).unwrap();
        conv2d_fused(
            ConvMethod::Direct,
            &c,
            &x,
            &w,
            Some(&slopes),
            act,
            Some(&slopes),
            &mut y,
            &mut [],
        )
        .unwrap();
    }
    max_pool2d(&p, &x, &mut y).unwrap();
    avg_pool2d(&p, &x, &mut y).unwrap();
    global_avg_pool(&s, &x, &mut y).unwrap();
    let _ = max_pool2d(&p, &x[..1], &mut y);
    assert_eq!(counting_alloc::heap_calls(), before, "a layer allocated");
    let (batch, fin, fout) = (2, 3 * 9 * 7, 10);
    let mut pack = vec![0.0f32; fully_connected_pack_len(batch, fin, fout)];
    let wfc = vec![0.01f32; fin * fout];
    let bn = Bn::random(&mut Rng::new(1), 3);
    let mut wc = w.clone();
    let mut bc = vec![0.0f32; 3];
    let mut big = vec![0.0f32; 4 * len];
    let before_rest = counting_alloc::heap_calls();
    if !cfg!(feature = "gemm-crate") {
        // (The gemm crate allocates its own packing memory.)
        let short_bias: &[f32] = &[];
        let r = fully_connected(
            batch,
            fin,
            fout,
            &x,
            &wfc,
            Some(short_bias),
            &mut y,
            &mut pack,
        );
        assert_eq!(r, Err(Error::BufferTooSmall));
        fully_connected(batch, fin, fout, &x, &wfc, None, &mut y, &mut pack).unwrap();
    }
    // A batch of 1 (the matrix-vector product, no pack) never allocates, with the gemm crate
    // or without, at every output count the AVX-512 kernel splits differently (4-row groups,
    // single rows).
    for fout in [1, 4, 7] {
        fully_connected(1, fin, fout, &x, &wfc, None, &mut y, &mut []).unwrap();
    }
    for axis in 0..4 {
        softmax(&s, axis, &mut y).unwrap();
    }
    reduce_mean(&s, [false, false, true, true], &x, &mut y).unwrap();
    reduce_mean(&s, [false, true, false, false], &x, &mut y).unwrap();
    add(&s, &x, &x, Broadcast::Same, &mut y).unwrap();
    add(&s, &x, &slopes, Broadcast::PerChannel, &mut y).unwrap();
    add_in_place(&s, &mut y, &slopes, Broadcast::Scalar).unwrap();
    concat(&[(s, &x), (s, &x), (s, &x)], 1, &mut big).unwrap();
    flatten_shape(&s, 1).unwrap();
    let pads = Pads {
        top: 1,
        left: 2,
        bottom: 2,
        right: 1,
    };
    for mode in [PadMode::Constant(0.0), PadMode::Edge, PadMode::Reflect] {
        pad2d(&s, &pads, mode, &x, &mut big).unwrap();
    }
    batch_norm(&s, &bn.params(), &mut y).unwrap();
    fold_batch_norm(&c, &mut wc, &mut bc, false, &bn.params()).unwrap();
    assert_eq!(
        counting_alloc::heap_calls(),
        before_rest,
        "a layer allocated"
    );
}
