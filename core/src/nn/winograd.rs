//! Winograd's minimal filtering for 3×3, stride-1, undilated convolutions, F(2×2, 3×3) as in
//! Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016): every 2×2 block of
//! outputs ("tile") is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`, with `d` the 4×4 input patch under the tile
//! and `g` the 3×3 kernel, i.e. 16 multiplications per channel pair instead of 36. Summed over
//! input channels, the element-wise products become 16 independent matrix products, one per
//! transform element `ξ`: `M[ξ] = U[ξ] · V[ξ]` with `U[ξ]` the transformed weights
//! (`c_out/g × c_in/g`) and `V[ξ]` the transformed input (`c_in/g × tiles`), where the tiles of
//! every image of the batch sit side by side in one `N` dimension, so that each product is as
//! large as the layer allows. They go through [`sgemm`] (hence through the `gemm` crate on
//! builds with that feature).
//!
//! Weights are transformed on every call (they are borrowed from the model file, so there is no
//! place to cache them); groups are computed one after the other, reusing the workspace.
//! Partial tiles at the bottom and right edge read zeros past the padded input and drop the
//! outputs past `out_h`/`out_w`.
//!
//! Rounding: the transforms add and subtract up to 9 values (the `½` of `G` is exact), so the
//! result can differ from direct summation by a few more ulps than the other methods, relative
//! to the magnitudes of the transformed operands rather than of the products `x·w`; the tests
//! state the bound.

use super::conv::{Conv2dShape, ConvDims};
use super::gemm::{gemm_pack_len, sgemm, Order, Transpose};
use super::tensor::checked_product;
use crate::error::{Error, Result};

/// Transform elements per tile (4 × 4).
const XI: usize = 16;

/// Whether Winograd F(2×2, 3×3) applies: a 3×3 kernel, stride 1 and dilation 1 both ways.
pub(crate) const fn applies(s: &Conv2dShape) -> bool {
    let dense = s.stride_h == 1 && s.stride_w == 1 && s.dilation_h == 1 && s.dilation_w == 1;
    s.kh == 3 && s.kw == 3 && dense
}

/// Tiles of the whole batch: `n · ⌈out_h/2⌉ · ⌈out_w/2⌉`.
fn tiles(s: &Conv2dShape, d: &ConvDims) -> Result<usize> {
    checked_product(&[s.n, d.out_h.div_ceil(2), d.out_w.div_ceil(2)])
}

/// Working memory in `f32` elements: `U` (`16·oc·c`), `V` (`16·c·T`), `M` (`16·oc·T`) and the
/// packing of one `oc × T × c` product, with `c`, `oc` per group and `T` the batch's tiles.
pub(crate) fn workspace_len(s: &Conv2dShape, d: &ConvDims) -> Result<usize> {
    if !applies(s) {
        return Err(Error::InvalidArgument);
    }
    let (c, oc, t) = (s.c_in / s.groups, s.c_out / s.groups, tiles(s, d)?);
    let u = checked_product(&[XI, oc, c])?;
    let v = checked_product(&[XI, c, t])?;
    let m = checked_product(&[XI, oc, t])?;
    [v, m, gemm_pack_len(oc, t, c)]
        .into_iter()
        .try_fold(u, |a, b| a.checked_add(b))
        .ok_or(Error::Overflow)
}

/// `Bᵀ d B` of one 4×4 patch (row-major), `ξ = 4·row + column`.
#[inline(always)]
fn input_transform(d: &[[f32; 4]; 4]) -> [f32; XI] {
    let mut r = [[0.0f32; 4]; 4];
    for j in 0..4 {
        r[0][j] = d[0][j] - d[2][j];
        r[1][j] = d[1][j] + d[2][j];
        r[2][j] = d[2][j] - d[1][j];
        r[3][j] = d[1][j] - d[3][j];
    }
    let mut v = [0.0f32; XI];
    for i in 0..4 {
        v[4 * i] = r[i][0] - r[i][2];
        v[4 * i + 1] = r[i][1] + r[i][2];
        v[4 * i + 2] = r[i][2] - r[i][1];
        v[4 * i + 3] = r[i][1] - r[i][3];
    }
    v
}

/// `G g Gᵀ` of one 3×3 kernel (row-major), `ξ = 4·row + column`.
#[inline(always)]
fn weight_transform(g: &[f32]) -> [f32; XI] {
    let mut t = [[0.0f32; 3]; 4];
    for j in 0..3 {
        let (a, b, c) = (g[j], g[3 + j], g[6 + j]);
        t[0][j] = a;
        t[1][j] = 0.5 * (a + b + c);
        t[2][j] = 0.5 * (a - b + c);
        t[3][j] = c;
    }
    let mut u = [0.0f32; XI];
    for i in 0..4 {
        let [a, b, c] = t[i];
        u[4 * i] = a;
        u[4 * i + 1] = 0.5 * (a + b + c);
        u[4 * i + 2] = 0.5 * (a - b + c);
        u[4 * i + 3] = c;
    }
    u
}

/// `Aᵀ m A`: the 2×2 outputs of one tile, row-major.
#[inline(always)]
fn output_transform(m: &[f32; XI]) -> [f32; 4] {
    let mut s = [[0.0f32; 4]; 2];
    for j in 0..4 {
        s[0][j] = m[j] + m[4 + j] + m[8 + j];
        s[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
    }
    [
        s[0][0] + s[0][1] + s[0][2],
        s[0][1] - s[0][2] - s[0][3],
        s[1][0] + s[1][1] + s[1][2],
        s[1][1] - s[1][2] - s[1][3],
    ]
}

/// Convolves the whole batch (`input`, `weights`, `bias`, `output` as in `conv2d`, already
/// validated against `s`, `d` and [`workspace_len`]), overwriting `output`.
pub(crate) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    ws: &mut [f32],
) -> Result<()> {
    let (c, oc, t) = (s.c_in / s.groups, s.c_out / s.groups, tiles(s, d)?);
    let (u, rest) = ws.split_at_mut(XI * oc * c);
    let (v, rest) = rest.split_at_mut(XI * c * t);
    let (m, pack) = rest.split_at_mut(XI * oc * t);
    let (rm, no) = (Order::RowMajor, Transpose::No);
    for g in 0..s.groups {
        transform_weights(&weights[g * oc * c * 9..][..oc * c * 9], oc * c, u);
        transform_input(s, d, g, input, c, t, v);
        for xi in 0..XI {
            let (a, b) = (&u[xi * oc * c..][..oc * c], &v[xi * c * t..][..c * t]);
            let mx = &mut m[xi * oc * t..][..oc * t];
            sgemm(rm, no, no, oc, t, c, 1.0, a, c, b, t, 0.0, mx, t, pack)?;
        }
        transform_output(s, d, g, bias, m, oc, t, output);
    }
    Ok(())
}

/// `U[ξ][p] = (G g_p Gᵀ)[ξ]` for the `pairs = oc·c` kernels of one group (`p = o·c + i`).
fn transform_weights(w: &[f32], pairs: usize, u: &mut [f32]) {
    for (p, g) in w.chunks_exact(9).enumerate() {
        for (xi, &val) in weight_transform(g).iter().enumerate() {
            u[xi * pairs + p] = val;
        }
    }
}

/// `V[ξ][i][t] = (Bᵀ d B)[ξ]` for input channel `i` of group `g` and tile `t` (tiles of image
/// `b` at `(b·th + ty)·tw + tx`), zeros outside the input.
#[allow(clippy::too_many_arguments)]
fn transform_input(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    x: &[f32],
    c: usize,
    t: usize,
    v: &mut [f32],
) {
    let (h, w) = (s.h, s.w);
    let (th, tw) = (d.out_h.div_ceil(2), d.out_w.div_ceil(2));
    let plane = c * t;
    for b in 0..s.n {
        for i in 0..c {
            let xc = &x[((b * s.c_in) + g * c + i) * h * w..][..h * w];
            let row0 = i * t + b * th * tw;
            for ty in 0..th {
                // Patch rows iy0..iy0 + 4 of the unpadded input (negative above it).
                let iy0 = (2 * ty) as isize - s.pad_top as isize;
                let rows_inside = iy0 >= 0 && iy0 + 4 <= h as isize;
                for tx in 0..tw {
                    let ix0 = (2 * tx) as isize - s.pad_left as isize;
                    let mut dp = [[0.0f32; 4]; 4];
                    if rows_inside && ix0 >= 0 && ix0 + 4 <= w as isize {
                        let (iy0, ix0) = (iy0 as usize, ix0 as usize);
                        for (r, row) in dp.iter_mut().enumerate() {
                            row.copy_from_slice(&xc[(iy0 + r) * w + ix0..][..4]);
                        }
                    } else {
                        for (r, row) in dp.iter_mut().enumerate() {
                            let iy = iy0 + r as isize;
                            if iy < 0 || iy >= h as isize {
                                continue;
                            }
                            let src = &xc[iy as usize * w..][..w];
                            for (q, val) in row.iter_mut().enumerate() {
                                let ix = ix0 + q as isize;
                                if ix >= 0 && ix < w as isize {
                                    *val = src[ix as usize];
                                }
                            }
                        }
                    }
                    let col = row0 + ty * tw + tx;
                    for (xi, &val) in input_transform(&dp).iter().enumerate() {
                        v[xi * plane + col] = val;
                    }
                }
            }
        }
    }
}

/// `y = Aᵀ M A + bias` for every output channel of group `g`, dropping a partial tile's outputs
/// past the edge.
#[allow(clippy::too_many_arguments)]
fn transform_output(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    bias: Option<&[f32]>,
    m: &[f32],
    oc: usize,
    t: usize,
    y: &mut [f32],
) {
    let (oh, ow) = (d.out_h, d.out_w);
    let (th, tw) = (oh.div_ceil(2), ow.div_ceil(2));
    let plane = oc * t;
    for b in 0..s.n {
        for o in 0..oc {
            let ch = g * oc + o;
            let bv = bias.map_or(0.0, |bs| bs[ch]);
            let yc = &mut y[(b * s.c_out + ch) * oh * ow..][..oh * ow];
            let col0 = o * t + b * th * tw;
            for ty in 0..th {
                for tx in 0..tw {
                    let col = col0 + ty * tw + tx;
                    let mut mt = [0.0f32; XI];
                    for (xi, val) in mt.iter_mut().enumerate() {
                        *val = m[xi * plane + col];
                    }
                    let out = output_transform(&mt);
                    let (oy, ox) = (2 * ty, 2 * tx);
                    for r in 0..2.min(oh - oy) {
                        let row = &mut yc[(oy + r) * ow + ox..];
                        for q in 0..2.min(ow - ox) {
                            row[q] = out[2 * r + q] + bv;
                        }
                    }
                }
            }
        }
    }
}
