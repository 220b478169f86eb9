//! The blocked convolution at every instruction-set level this CPU has: the portable tile
//! (run here by capping the level), the AVX2 and the AVX-512 one agree with a double-precision
//! reference within `f32` rounding on shapes with partial channel blocks, partial register
//! tiles, strides (a strided 1 × 1 layer too), dilation, padding and groups; and the selector
//! keeps to the other methods below x86-64-v3.
//!
//! One `#[test]` in its own binary: the level cap is process-wide.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/conv_reference.rs"]
mod conv_reference;

use common::Rng;

use conv_reference::{assert_within, reference};
use mvision_core::cpu::{self, Level};
use mvision_core::nn::conv::{choose_method, conv2d, workspace_len, Conv2dShape, ConvMethod};

#[test]
fn blocked_at_every_level() {
    let mut shapes = vec![];
    let mut a = Conv2dShape::new(1, 3, 37, 41, 70, 11, 11);
    (a.stride_h, a.stride_w) = (4, 4);
    shapes.push(a);
    let mut b = Conv2dShape::new(2, 6, 13, 9, 34, 5, 3);
    (b.pad_top, b.pad_left, b.pad_bottom, b.pad_right) = (2, 1, 0, 2);
    (b.dilation_h, b.groups) = (2, 2);
    shapes.push(b);
    shapes.push(Conv2dShape::new(1, 5, 8, 20, 16, 3, 3));
    // A strided 1 × 1 layer (its pixels gathered into one row of tiles), two groups.
    let mut c = Conv2dShape::new(2, 12, 15, 13, 70, 1, 1);
    (c.stride_h, c.stride_w, c.groups) = (2, 3, 2);
    shapes.push(c);
    let mut rng = Rng::new(0x5eed);
    let mut rnd = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32_in(-1.0, 1.0)).collect() };
    for s in &shapes {
        let d = s.dims().unwrap();
        let (x, w, bias) = (rnd(d.input_len), rnd(d.weight_len), rnd(s.c_out));
        let (want, mag) = reference(s, &x, &w, Some(&bias));
        let eps = f32::EPSILON as f64 * (d.k as f64 + 2.0);
        for level in Level::ALL.into_iter().filter(|&l| l <= cpu::detected()) {
            cpu::set_cap(level);
            let mut ws = vec![f32::NAN; workspace_len(ConvMethod::Blocked, s).unwrap()];
            let mut out = vec![f32::NAN; d.output_len];
            conv2d(
                ConvMethod::Blocked,
                s,
                &x,
                &w,
                Some(&bias),
                &mut out,
                &mut ws,
            )
            .unwrap();
            assert_within(&out, &want, &mag, eps, &format!("{level:?} {s:?}"));
            let chosen = choose_method(s, usize::MAX).unwrap();
            if level < Level::X86V3 {
                assert_ne!(chosen, ConvMethod::Blocked, "{level:?} {s:?}");
            }
        }
        cpu::set_cap(Level::X86V4);
    }
}
