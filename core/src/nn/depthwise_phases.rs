//! Depthwise 3×3 stride-2 convolution of small planes (MobileNetV2's 28² → 14² and
//! 14² → 7²), padding 1 at the top and left, on AVX-512. The row kernel of `depthwise` spends
//! three masked loads and three permutes per input row on every output row, and a 7-output row
//! fills 7 of 16 lanes. Here each plane is first split into its four phase images (even / odd
//! rows × even / odd columns, each `out_h × out_w`, row-major with the output's width): output
//! `(oy, ox)` then reads every tap at a constant offset from its own index in one of them
//! (tap `(ky, kx)` reads phase `(ky ≠ 1, kx ≠ 1)` at `(oy − [ky = 0], ox − [kx = 0])`), so the
//! output plane is one flat run of 16-pixel vectors as in `depthwise`'s flat stride-1 path, each
//! tap a load masked to the lanes whose input pixel exists (masks computed once per layer).
//! The split of plane `i + 1` is written before plane `i` is read, into the other of two stack
//! buffers, so that the loads do not wait on the stores just made. The taps are summed as in
//! the row kernel (one accumulator per kernel row, the first holding the bias), so the results
//! are the same bits.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;

/// Most output pixels per plane (a 16 × 16 output, 4 KiB per split plane).
const MAX_OUT: usize = 256;
/// Widest output row (one vector) and input row (two vectors).
const MAX_OUT_W: usize = 16;

/// Whether this module computes `s` (a depthwise 3×3 layer): stride 2 both ways, no dilation,
/// padding 1 at the top and left (any at the bottom and right), input rows of at most 32
/// pixels, output planes of at most 256 pixels and rows of at most 16.
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.stride_h == 2
        && s.stride_w == 2
        && s.dilation_h == 1
        && s.dilation_w == 1
        && s.pad_top == 1
        && s.pad_left == 1
        && s.w <= 2 * MAX_OUT_W
        && d.out_w <= MAX_OUT_W
        && d.out_h * d.out_w <= MAX_OUT
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::super::depthwise::avx512::{flat_masks, flat_plane};
    use super::{Clamp, Conv2dShape, ConvDims, MAX_OUT};

    /// Vectors of a split plane's output run.
    const CHUNKS: usize = MAX_OUT / 16;

    /// `super::depthwise::conv` for the layers of [`super::applies`], all planes of `input`
    /// (`n × c × h × w`) into `output` (`n × c × out_h × out_w`).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(crate) fn conv(
        s: &Conv2dShape,
        d: &ConvDims,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        let (h, w, oh, ow) = (s.h, s.w, d.out_h, d.out_w);
        let (hw, ohw) = (h * w, oh * ow);
        let planes = s.n * s.c_out;
        // What the loads and stores below rest on, checked once per call.
        assert!(
            super::applies(s, d)
                && super::super::depthwise::buffers_fit(s, input, hw, output, ohw, weights, bias)
        );
        let mut masks = [[0 as __mmask16; 9]; CHUNKS];
        let masks = flat_masks(&mut masks, ohw, ow, 2, h, w);
        // Tap t reads phase[t] (2·py + px) at offset[t] from the output's index.
        let phase: [usize; 9] =
            core::array::from_fn(|t| 2 * usize::from(t / 3 != 1) + usize::from(t % 3 != 1));
        let offset: [isize; 9] = core::array::from_fn(|t| {
            -(ow as isize) * isize::from(t / 3 == 0) - isize::from(t % 3 == 0)
        });
        // Two split planes (4 phases of MAX_OUT each), alternating.
        let mut split = [[[0.0f32; MAX_OUT]; 4]; 2];
        if planes == 0 {
            return;
        }
        split_plane(&input[..hw], w, h, oh, ow, &mut split[0]);
        for i in 0..planes {
            if i + 1 < planes {
                let x = &input[(i + 1) * hw..][..hw];
                split_plane(x, w, h, oh, ow, &mut split[(i + 1) % 2]);
            }
            let ph = &split[i % 2];
            let c = i % s.c_out;
            let src = core::array::from_fn(|t| ph[phase[t]].as_ptr().wrapping_offset(offset[t]));
            let b = bias.map_or(0.0, |b| b[c]);
            let y = &mut output[i * ohw..][..ohw];
            // SAFETY: a lane's mask bit is set only if its input pixel exists, and then
            // p + offset lies in 0..ohw of its phase (row oy − 1 ≥ 0 when ky = 0, column
            // ox − 1 ≥ 0 when kx = 0).
            unsafe { flat_plane(&src, masks, &weights[c * 9..][..9], b, clamp, y) };
        }
    }

    /// Splits plane `x` (`h × w`) into `ph[2·py + px][r·ow + c] = x[2r + py][2c + px]` for the
    /// rows `r < oh` and columns `c < ow` that exist in `x`.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    fn split_plane(
        x: &[f32],
        w: usize,
        h: usize,
        oh: usize,
        ow: usize,
        ph: &mut [[f32; MAX_OUT]; 4],
    ) {
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        let lanes = super::super::depthwise::avx512::lanes;
        // Columns read of a row (at most 2·ow ≤ 32), and the even / odd ones kept (≤ ow).
        let cols = w.min(2 * ow);
        let (ld0, ld1) = (lanes(0, cols as isize), lanes(-16, cols as isize - 16));
        let n_even = cols.div_ceil(2).min(ow) as isize;
        let n_odd = (cols / 2).min(ow) as isize;
        let (st_even, st_odd) = (lanes(0, n_even), lanes(0, n_odd));
        for iy in 0..h.min(2 * oh) {
            let (r, py) = (iy / 2, iy % 2);
            let row = &x[iy * w..][..w];
            // SAFETY: the masks select columns below `cols ≤ w` of the row, and lanes below
            // `ow` of row `r < oh` of the phases (`oh·ow ≤ MAX_OUT`).
            unsafe {
                let a = _mm512_maskz_loadu_ps(ld0, row.as_ptr());
                let b = _mm512_maskz_loadu_ps(ld1, row.as_ptr().wrapping_add(16));
                let e = _mm512_permutex2var_ps(a, even, b);
                let o = _mm512_permutex2var_ps(a, odd, b);
                _mm512_mask_storeu_ps(ph[2 * py].as_mut_ptr().add(r * ow), st_even, e);
                _mm512_mask_storeu_ps(ph[2 * py + 1].as_mut_ptr().add(r * ow), st_odd, o);
            }
        }
    }
}
