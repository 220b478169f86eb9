//! Direct convolution for first layers: a few input channels (an RGB image), stride 2, no
//! padding, output channels in multiples of 16 (SqueezeNet 1.1's 3 → 64 3×3 stride-2 layer).
//! With `K = c_in·kh·kw` as small as 27, the blocked method's register tile (6 pixels × 64
//! channels) has few taps to amortise its 8 × 16 transposes into the NCHW planes over (it ran
//! this layer at about 150 GFLOP/s), and a GEMM is short. Here a register holds 16 output
//! pixels of one channel instead: a tile of 3 such vectors × 8 channels (24 accumulators)
//! takes, per tap, 3 input vectors (even columns gathered from two loads by one two-source
//! permute) and 8 broadcast weights, and is stored straight into the channel planes, with the
//! bias and a ReLU / ReLU6 / Clip clamp applied in registers. The rest of a row runs in single vectors,
//! the last shifted left to end at the row's end (its first lanes recompute, identically,
//! outputs already stored), so that every store is a full vector.
//!
//! x86-64 with AVX-512 (x86-64-v4 active) only; elsewhere the convolution methods of
//! [`conv`](super::conv) run these layers.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;

/// Output channels computed together (one accumulator each).
const CHANNELS: usize = 16;
/// Output pixels of a row per vector.
const PIXELS: usize = 16;
/// Most input channels this path takes: the first layers it is for read 1–4 channels.
pub(crate) const MAX_C_IN: usize = 4;
/// Most taps per output channel (`c_in·kh·kw`, 4 channels of 7 × 7): a block's weights are
/// re-laid out tap-major on the stack (12.25 KiB), so that each tap's weights are one pointer
/// plus constants.
const MAX_K: usize = 196;

/// Whether this module computes `s`: one group of at most [`MAX_C_IN`] input channels and
/// [`MAX_K`] taps, output channels a multiple of 16, stride 2 both ways, no dilation, no
/// padding, output rows of at least 16 pixels.
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.groups == 1
        && s.c_in <= MAX_C_IN
        && d.k <= MAX_K
        && s.c_out.is_multiple_of(CHANNELS)
        && s.stride_h == 2
        && s.stride_w == 2
        && s.dilation_h == 1
        && s.dilation_w == 1
        && s.pad_top + s.pad_left + s.pad_bottom + s.pad_right == 0
        && d.out_w >= PIXELS
}

direct_avx512_entry!();

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims, CHANNELS, MAX_K, PIXELS};

    /// Vectors of output pixels per register tile.
    const TILE_P: usize = 3;
    /// Channels per register tile (of the 16 whose weights are re-laid out together).
    /// Measured on SqueezeNet's first layer (AMD Zen 5, `nn_bench`, shared machine; the
    /// blocked method 0.28–0.30 ms in the same runs), vectors × channels: 1 × 16 0.42–0.53 ms,
    /// 2 × 8 0.35–0.52, 4 × 4 0.33–0.35, 6 × 4 0.28–0.30, 3 × 8 0.23–0.26: the fewer broadcast
    /// weights per multiply-add the better, while the single vectors of a row's rest (one
    /// broadcast per multiply-add) stay few.
    const TILE_C: usize = 8;

    /// [`super::conv`] on AVX-512.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn conv(
        s: &Conv2dShape,
        d: &ConvDims,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let (oh, ow, k) = (d.out_h, d.out_w, d.k);
        let (plane, ohw) = (s.h * s.w, oh * ow);
        // Checked once: every tile below reads and writes inside these bounds (the last tap
        // of a row's last vector reads input column 2·(ow − 1) + kw − 1 < w, see `tile`).
        assert!(
            ow >= PIXELS
                && 2 * (ow - 1) + s.kw <= s.w
                && 2 * (oh - 1) + s.kh <= s.h
                && k == s.c_in * s.kh * s.kw
                && k <= MAX_K
                && s.c_out.is_multiple_of(CHANNELS)
                && x.len() >= s.n * s.c_in * plane
                && w.len() >= s.c_out * k
                && y.len() >= s.n * s.c_out * ohw
                && bias.is_none_or(|b| b.len() >= s.c_out)
        );
        let g = Geo {
            c_in: s.c_in,
            kh: s.kh,
            kw: s.kw,
            w: s.w,
            plane,
            ow,
            ohw,
            oh,
        };
        for b in 0..s.n {
            let xb = &x[b * s.c_in * plane..][..s.c_in * plane];
            let yb = &mut y[b * s.c_out * ohw..][..s.c_out * ohw];
            for c0 in (0..s.c_out).step_by(CHANNELS) {
                let mut bv = [0.0f32; CHANNELS];
                if let Some(bias) = bias {
                    bv.copy_from_slice(&bias[c0..c0 + CHANNELS]);
                }
                // Tap-major: the block's 16 weights of tap `t` at `16·t`.
                let mut wt = [0.0f32; CHANNELS * MAX_K];
                for (c, row) in w[c0 * k..][..CHANNELS * k].chunks_exact(k).enumerate() {
                    for (t, &v) in row.iter().enumerate() {
                        wt[t * CHANNELS + c] = v;
                    }
                }
                let wc = &wt[..CHANNELS * k];
                let yc = &mut yb[c0 * ohw..][..CHANNELS * ohw];
                for oy in 0..oh {
                    for c in (0..CHANNELS).step_by(TILE_C) {
                        let mut ox = 0;
                        // Tiles ending before the row's last output may read one column past
                        // their last tap (an unmasked second load); the last one may not.
                        // SAFETY (the three calls): AVX-512 is enabled here; `ox + 16·P ≤ ow`
                        // (`< ow` but for the last), `oy < oh`, `c + 8 ≤ 16` and the bounds
                        // asserted above keep the tiles inside `xb`, `wc` and `yc`.
                        while ox + TILE_P * PIXELS < ow {
                            let (w, b) = (wc, &bv);
                            unsafe { tile::<TILE_P, false>(&g, xb, w, b, c, clamp, oy, ox, yc) };
                            ox += TILE_P * PIXELS;
                        }
                        while ox + PIXELS < ow {
                            unsafe { tile::<1, false>(&g, xb, wc, &bv, c, clamp, oy, ox, yc) };
                            ox += PIXELS;
                        }
                        let at = ow - PIXELS;
                        unsafe { tile::<1, true>(&g, xb, wc, &bv, c, clamp, oy, at, yc) };
                    }
                }
            }
        }
    }

    /// The geometry a tile needs.
    struct Geo {
        c_in: usize,
        kh: usize,
        kw: usize,
        /// Input row and plane length.
        w: usize,
        plane: usize,
        ow: usize,
        ohw: usize,
        oh: usize,
    }

    /// `16·P` output pixels `(oy, ox..ox + 16·P)` of channels `c0 .. c0 + TILE_C` of the block
    /// (weights `wc`, `K × 16`; bias `bv`), clamped, stored into the channels' planes of `yc`.
    ///
    /// `LAST`: the row's last tile, whose second load of each tap masks off the column past
    /// its last tap (the others read it: it lies inside the row, under the next tile).
    ///
    /// # Safety
    /// AVX-512 F and FMA; `ox + 16·P ≤ ow` (`< ow` unless `LAST`), `oy < oh`,
    /// `c0 + TILE_C ≤ 16`, and the bounds asserted by `conv`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const P: usize, const LAST: bool>(
        g: &Geo,
        xb: &[f32],
        wc: &[f32],
        bv: &[f32; CHANNELS],
        c0: usize,
        clamp: Clamp,
        oy: usize,
        ox: usize,
        yc: &mut [f32],
    ) {
        // Even lanes of (lo, hi): input columns 2·ox + kx + 2j, j = 0..16.
        let even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        let mut acc: [[__m512; P]; TILE_C] =
            core::array::from_fn(|c| [_mm512_set1_ps(bv[c0 + c]); P]);
        let (xp, wp) = (xb.as_ptr(), wc.as_ptr().add(c0));
        let mut tap = 0;
        for ic in 0..g.c_in {
            for ky in 0..g.kh {
                let row = xp.add(ic * g.plane + (2 * oy + ky) * g.w + 2 * ox);
                for kx in 0..g.kw {
                    // Columns 2·ox + kx + 32p .. + 31 of vector p. The last tap of pixel
                    // ox + 16·P − 1 is column 2·(ox + 16·P − 1) + kx ≤ 2·(ow − 1) + kw − 1,
                    // inside the row; one column more is read unless `LAST`, where
                    // ox + 16·P ≤ ow − 1 keeps it inside too.
                    let xv: [__m512; P] = core::array::from_fn(|p| {
                        let at = row.add(kx + 2 * PIXELS * p);
                        let lo = _mm512_loadu_ps(at);
                        let hi = if LAST {
                            _mm512_maskz_loadu_ps(0x7fff, at.add(16))
                        } else {
                            _mm512_loadu_ps(at.add(16))
                        };
                        _mm512_permutex2var_ps(lo, even, hi)
                    });
                    let wt = wp.add(tap * CHANNELS);
                    for (c, a) in acc.iter_mut().enumerate() {
                        let wv = _mm512_set1_ps(*wt.add(c));
                        for (ap, &xp) in a.iter_mut().zip(&xv) {
                            *ap = _mm512_fmadd_ps(xp, wv, *ap);
                        }
                    }
                    tap += 1;
                }
            }
        }
        let (lo, hi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
        let yp = yc.as_mut_ptr().add((c0 * g.oh + oy) * g.ow + ox);
        for (c, a) in acc.iter().enumerate() {
            for (p, &ap) in a.iter().enumerate() {
                // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand),
                // and keep −0.0 against a bound of 0.0, as `depthwise::clip`.
                let v = _mm512_min_ps(hi, _mm512_max_ps(lo, ap));
                _mm512_storeu_ps(yp.add(c * g.ohw + p * PIXELS), v);
            }
        }
    }
}
