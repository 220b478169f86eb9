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
use mvision_core::nn::conv::{conv2d, workspace_len, Conv2dShape, ConvMethod};
use mvision_core::nn::pool::{avg_pool2d, global_avg_pool, max_pool2d, Pool2dShape};
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
}
