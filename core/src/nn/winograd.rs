//! Winograd's minimal filtering for 3×3, stride-1, undilated convolutions, F(2×2, 3×3) as in
//! Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016): every 2×2 block of
//! outputs ("tile") is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`, with `d` the 4×4 input patch under the tile
//! and `g` the 3×3 kernel, i.e. 16 multiplications per channel pair instead of 36. Summed over
//! input channels, the element-wise products become 16 independent matrix products, one per
//! transform element `ξ`: `M[ξ] = V[ξ] · U[ξ]` with `V[ξ]` the transformed input
//! (`tiles × c_in/g`) and `U[ξ]` the transformed weights (`c_in/g × c_out/g`), where the tiles
//! of every image of the batch sit side by side in one dimension, so that each product is as
//! large as the layer allows. They go through [`sgemm`] (hence through the `gemm` crate on
//! builds with that feature).
//!
//! [`conv`] transforms the weights on every call (they are borrowed from the model file, so
//! there is no place to cache them); [`prepare_weights`] transforms them once into a caller
//! buffer of [`prepared_len`] (16/9 of the weights) that [`conv_prepared`] then reads, which
//! skips a quarter of the work on 13×13 maps. Groups are computed one after the other, reusing
//! the workspace.
//! Partial tiles at the bottom and right edge read zeros past the padded input and drop the
//! outputs past `out_h`/`out_w`.
//!
//! Where the CPU runs AVX-512, groups of 16 to 31 input channels (up to 64 on rows of at least
//! 14 tiles) and a multiple of 8 output channels (at most one block of `U`, [`oc_block`]) take
//! another order instead (`fused`): strip by strip of up to 32 tiles along a row of tiles,
//! transforms and products in the L1 cache, with a small workspace; [`conv`] and
//! [`conv_prepared`] both do, so they still give the same bits.
//!
//! Rounding: the transforms add and subtract up to 9 values (the `½` of `G` is exact), so the
//! result can differ from direct summation by a few more ulps than the other methods, relative
//! to the magnitudes of the transformed operands rather than of the products `x·w`; the tests
//! state the bound.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::depthwise::NO_CLAMP;
use super::gemm::{gemm_pack_len, sgemm, Order, Transpose};
use super::tensor::checked_product;
use crate::error::{Error, Result};

/// Transform elements per tile (4 × 4).
const XI: usize = 16;

/// Most tiles per GEMM. The `gemm` crate (0.19, single thread) re-packs the weight operand of
/// every product whose tile count exceeds 8 × its 6-column register tile, i.e. 48: a copy of
/// all the (transformed) weights on every call, 26 % of a profile of AlexNet's 384 → 256 layer
/// (49 tiles). Products of at most 48 tiles stream the weights as stored.
const TILE_CHUNK: usize = 48;

/// Most chunks [`tile_chunks`] splits the tiles into: past `4 · 48` tiles the crate's packing
/// is amortised, and more, smaller products cost more than it (measured: on seed 004's
/// single-channel 514² map, 66 049 tiles in chunks of 48 took 2.2× as long).
const MAX_TILE_CHUNKS: usize = 4;

/// `(first tile, tiles)` of about equal chunks of at most [`TILE_CHUNK`] tiles covering `t`,
/// or one chunk of all when that would take more than [`MAX_TILE_CHUNKS`].
fn tile_chunks(t: usize) -> impl Iterator<Item = (usize, usize)> {
    let chunks = match t.div_ceil(TILE_CHUNK) {
        n if n > MAX_TILE_CHUNKS => 1,
        n => n.max(1),
    };
    let (base, extra) = (t / chunks, t % chunks);
    (0..chunks).scan(0, move |t0, i| {
        let tn = base + usize::from(i < extra);
        let at = *t0;
        *t0 += tn;
        Some((at, tn))
    })
}

/// Whether Winograd F(2×2, 3×3) applies: a 3×3 kernel, stride 1 and dilation 1 both ways.
pub(crate) const fn applies(s: &Conv2dShape) -> bool {
    let dense = s.stride_h == 1 && s.stride_w == 1 && s.dilation_h == 1 && s.dilation_w == 1;
    s.kh == 3 && s.kw == 3 && dense
}

/// Tiles of the whole batch: `n · ⌈out_h/2⌉ · ⌈out_w/2⌉`.
fn tiles(s: &Conv2dShape, d: &ConvDims) -> Result<usize> {
    checked_product(&[s.n, d.out_h.div_ceil(2), d.out_w.div_ceil(2)])
}

/// Distance between the 16 planes of a transformed matrix of `len` elements: `len` rounded up
/// to an odd number of 64-byte lines. The transforms write (or read) one element to each plane
/// per step; with planes a power of two of bytes apart (`c = oc = 256` makes them 256 KiB) the
/// 16 streams would fall into the same cache sets and evict each other (the weight transform's
/// share of the time fell when this and the operand layout of `conv` changed together; their
/// separate effects were not measured).
fn plane_stride(len: usize) -> Result<usize> {
    let lines = len.div_ceil(16) | 1;
    lines.checked_mul(16).ok_or(Error::Overflow)
}

/// Output channels whose weights are transformed and multiplied at a time, so that `U` holds
/// `16 × c × OC_BLOCK` values instead of 16/9 of the group's weights (6 MiB on AlexNet's
/// 384 → 256 layer, 1.5 MiB with blocks). Meant to keep the block in cache for the GEMMs, it
/// measured neither faster nor slower (best of 4 runs within ±3 % on the nine FastPoorNet and
/// AlexNet 3×3 layers); it stays for the smaller workspace. Layers with few input channels take
/// larger blocks ([`oc_block`]).
const OC_BLOCK: usize = 64;

/// Most values of a block of `U` that [`oc_block`] widens blocks to (1 MiB).
const U_BLOCK_VALUES: usize = 1 << 18;

/// Output channels per block for `c` input and `oc` output channels per group: all of them,
/// or the most multiples of [`OC_BLOCK`] that keep `U` (`16 × c × block`) within
/// [`U_BLOCK_VALUES`], at least one. Each block is 16 products per chunk of tiles; on
/// SqueezeNet's layers of 32 to 64 input channels blocks of 128 and then of all channels took
/// fewer calls and less time than blocks of 64, in the network (ms, min over 4 rounds in
/// several sets; 64 / 128 / all): 48×13²→192 0.133–0.142 / 0.132–0.135 / 0.123–0.124,
/// 32×27²→128 0.218–0.255 / 0.208–0.251 (128 is all), 64×13²→256 0.218–0.230 / 0.208–0.218 /
/// 0.211–0.212. Blocks of 80 (multiples of 16) on AlexNet's 192 → 384 layer, a ragged edge for
/// the GEMM's 64-row tile, took 1.14 ms against 1.08 with blocks of 64.
fn oc_block(c: usize, oc: usize) -> usize {
    let fit = U_BLOCK_VALUES / (XI * c.max(1)) / OC_BLOCK * OC_BLOCK;
    oc.min(fit.max(OC_BLOCK))
}

/// Plane strides of `U` (`c × oc_block(c, oc)`), `V` (`T × c`) and `M` (`T × oc`), per
/// group.
struct Planes {
    u: usize,
    v: usize,
    m: usize,
}

impl Planes {
    fn new(c: usize, oc: usize, t: usize) -> Result<Self> {
        Ok(Self {
            u: plane_stride(checked_product(&[oc_block(c, oc), c])?)?,
            v: plane_stride(checked_product(&[c, t])?)?,
            m: plane_stride(checked_product(&[t, oc])?)?,
        })
    }
}

/// Working memory in `f32` elements: 16 planes each of `U` (`oc·c`), `V` (`c·T`) and `M`
/// (`T·oc`), each plane rounded up by [`plane_stride`], and the packing of one `T × oc × c`
/// product, with `c`, `oc` per group and `T` the batch's tiles; where the strips of `fused`
/// run, the planes of `U` and their `fused::workspace_len` instead.
pub(crate) fn workspace_len(s: &Conv2dShape, d: &ConvDims) -> Result<usize> {
    if !applies(s) {
        return Err(Error::InvalidArgument);
    }
    let (c, oc, t) = (s.c_in / s.groups, s.c_out / s.groups, tiles(s, d)?);
    let p = Planes::new(c, oc, t)?;
    if fused_runs(s, d) {
        return checked_product(&[XI, p.u])?
            .checked_add(fused_len(c))
            .ok_or(Error::Overflow);
    }
    let planes = [p.u, p.v, p.m]
        .into_iter()
        .try_fold(0usize, |a, b| a.checked_add(b))
        .ok_or(Error::Overflow)?;
    checked_product(&[XI, planes])?
        .checked_add(gemm_pack_len(t, oc_block(c, oc), c))
        .ok_or(Error::Overflow)
}

/// Elements of the pre-transformed weights of `s` ([`prepare_weights`]): per group, 16 planes
/// of `c × oc` (`U[ξ][i][o]`, row-major, no padding between planes), i.e. `16·c_in/g·c_out`.
pub(crate) fn prepared_len(s: &Conv2dShape) -> Result<usize> {
    if !applies(s) {
        return Err(Error::InvalidArgument);
    }
    checked_product(&[XI, s.c_in / s.groups, s.c_out])
}

/// Working memory of [`conv_prepared`] in `f32` elements: [`workspace_len`] without the weight
/// planes, with the packing of one whole `T × oc × c` product (no output-channel blocks).
pub(crate) fn prepared_workspace_len(s: &Conv2dShape, d: &ConvDims) -> Result<usize> {
    if !applies(s) {
        return Err(Error::InvalidArgument);
    }
    let (c, oc, t) = (s.c_in / s.groups, s.c_out / s.groups, tiles(s, d)?);
    if fused_runs(s, d) {
        return Ok(fused_len(c));
    }
    let p = Planes::new(c, oc, t)?;
    checked_product(&[XI, p.v.checked_add(p.m).ok_or(Error::Overflow)?])?
        .checked_add(gemm_pack_len(t, oc, c))
        .ok_or(Error::Overflow)
}

/// Transforms every kernel of `weights` (validated against `s`) into `out` ([`prepared_len`]
/// elements) in the layout [`conv_prepared`] reads.
pub(crate) fn prepare_weights(s: &Conv2dShape, weights: &[f32], out: &mut [f32]) {
    let (c, oc) = (s.c_in / s.groups, s.c_out / s.groups);
    for g in 0..s.groups {
        let wg = &weights[g * oc * c * 9..][..oc * c * 9];
        transform_weights(
            wg,
            c,
            oc,
            c * oc,
            &mut out[g * XI * c * oc..][..XI * c * oc],
        );
    }
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

/// `Aᵀ m A` of [`LANES`] tiles at once (`m[ξ][l]`): the 2×2 outputs, row-major, per lane.
#[inline(always)]
fn output_transform_lanes(m: &[[f32; LANES]; XI]) -> [[f32; LANES]; 4] {
    type L = [f32; LANES];
    let sum3 = |a: &L, b: &L, c: &L| -> L { core::array::from_fn(|l| a[l] + b[l] + c[l]) };
    let diff3 = |a: &L, b: &L, c: &L| -> L { core::array::from_fn(|l| a[l] - b[l] - c[l]) };
    // s = Aᵀ m (2 × 4), then s A (2 × 2).
    // Written out rather than by `array::from_fn(|j| ..)`: in some builds LLVM left that
    // closure out of line (called without the caller's AVX-512), 10 % of a Winograd layer.
    let s0: [L; 4] = [
        sum3(&m[0], &m[4], &m[8]),
        sum3(&m[1], &m[5], &m[9]),
        sum3(&m[2], &m[6], &m[10]),
        sum3(&m[3], &m[7], &m[11]),
    ];
    let s1: [L; 4] = [
        diff3(&m[4], &m[8], &m[12]),
        diff3(&m[5], &m[9], &m[13]),
        diff3(&m[6], &m[10], &m[14]),
        diff3(&m[7], &m[11], &m[15]),
    ];
    [
        sum3(&s0[0], &s0[1], &s0[2]),
        diff3(&s0[1], &s0[2], &s0[3]),
        sum3(&s1[0], &s1[1], &s1[2]),
        diff3(&s1[1], &s1[2], &s1[3]),
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
    let p = Planes::new(c, oc, t)?;
    let (u, rest) = ws.split_at_mut(XI * p.u);
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fused_runs(s, d) {
        // The strips of `conv_prepared`, on weights transformed here: the same bits.
        for g in 0..s.groups {
            transform_weights(&weights[g * oc * c * 9..][..oc * c * 9], c, oc, p.u, u);
            // SAFETY: x86-64-v4 is active (`fused_runs`), so this CPU and OS support AVX-512
            // F/BW/DQ/VL, AVX2 and FMA (`cpu::detect`).
            #[allow(unsafe_code)]
            unsafe {
                fused::conv(s, d, g, input, u, p.u, bias, NO_CLAMP, output, rest)
            };
        }
        return Ok(());
    }
    let (v, rest) = rest.split_at_mut(XI * p.v);
    let (m, pack) = rest.split_at_mut(XI * p.m);
    for g in 0..s.groups {
        let wg = &weights[g * oc * c * 9..][..oc * c * 9];
        transform_input(s, d, g, input, c, p.v, v);
        // M[ξ] (T × oc) = V[ξ] (T × c) · U[ξ] (c × oc), all three row-major: to the gemm crate
        // (column-major) that is a product with the output channels contiguous, which its
        // 16-lane kernels fill on every layer with a multiple of 16 channels (the tiles, 49 on
        // a 13×13 map, would leave a ragged edge), and with both operands already in the
        // layout it streams from, so that it packs neither (measured: packing the transposed
        // operands was 15 % of a profile of im2col and Winograd on AlexNet 384→256).
        let block = oc_block(c, oc);
        for o0 in (0..oc).step_by(block) {
            let ob = block.min(oc - o0);
            transform_weights(&wg[o0 * c * 9..][..ob * c * 9], c, ob, p.u, u);
            plane_products(&p, t, c, oc, v, u, p.u, o0, ob, m, pack)?;
        }
        transform_output(s, d, g, bias, m, oc, p.m, output);
    }
    Ok(())
}

/// The products of one group for output channels `o0 .. o0 + ob`: for every transform element
/// ξ, `M[ξ]` (T × oc, those columns) = `V[ξ]` (T × c) · `U[ξ]` (c × ob, plane ξ of `u` at
/// `ξ·u_stride`), in chunks of tiles ([`tile_chunks`]).
#[allow(clippy::too_many_arguments)]
fn plane_products(
    p: &Planes,
    t: usize,
    c: usize,
    oc: usize,
    v: &[f32],
    u: &[f32],
    u_stride: usize,
    o0: usize,
    ob: usize,
    m: &mut [f32],
    pack: &mut [f32],
) -> Result<()> {
    let (rm, no) = (Order::RowMajor, Transpose::No);
    for xi in 0..XI {
        let b = &u[xi * u_stride..][..c * ob];
        for (t0, tn) in tile_chunks(t) {
            let a = &v[xi * p.v + t0 * c..][..tn * c];
            let mx = &mut m[xi * p.m + t0 * oc + o0..][..(tn - 1) * oc + ob];
            sgemm(rm, no, no, tn, ob, c, 1.0, a, c, b, ob, 0.0, mx, oc, pack)?;
        }
    }
    Ok(())
}

/// `fused::workspace_len` (0 where there is no such path).
fn fused_len(c: usize) -> usize {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        fused::workspace_len(c)
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        let _ = c;
        0
    }
}

/// Whether [`conv`] and [`conv_prepared`] run `s` (output `d`) through the strips of
/// `fused` (x86-64-v4 active, `fused::applies`), both alike: `conv` transforms all output
/// channels of a group at once for them, so only where that is its block ([`oc_block`]).
pub(crate) fn fused_runs(s: &Conv2dShape, d: &ConvDims) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let (c, oc) = (s.c_in / s.groups.max(1), s.c_out / s.groups.max(1));
        super::blocked::fast()
            && fused::applies(c, oc, d.out_w.div_ceil(2))
            && oc_block(c, oc) == oc
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        let _ = (s, d);
        false
    }
}

/// [`conv`] with weights already transformed by [`prepare_weights`] (`prepared`,
/// [`prepared_len`] elements) and `ws` of [`prepared_workspace_len`]: one `T × oc × c` product
/// per transform element, straight from the prepared planes; or, where [`fused_runs`], strip
/// by strip (`fused`), which also clamps the outputs to `clamp`. Returns whether it clamped
/// (else the caller applies the activation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_prepared(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    ws: &mut [f32],
) -> Result<bool> {
    let (c, oc, t) = (s.c_in / s.groups, s.c_out / s.groups, tiles(s, d)?);
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let _ = clamp; // Only the strips clamp.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fused_runs(s, d) {
        for g in 0..s.groups {
            let ug = &prepared[g * XI * c * oc..][..XI * c * oc];
            // SAFETY: x86-64-v4 is active (`fused_runs`), so this CPU and OS support AVX-512
            // F/BW/DQ/VL, AVX2 and FMA (`cpu::detect`).
            #[allow(unsafe_code)]
            unsafe {
                fused::conv(s, d, g, input, ug, c * oc, bias, clamp, output, ws)
            };
        }
        return Ok(true);
    }
    let p = Planes::new(c, oc, t)?;
    let (v, rest) = ws.split_at_mut(XI * p.v);
    let (m, pack) = rest.split_at_mut(XI * p.m);
    for g in 0..s.groups {
        let ug = &prepared[g * XI * c * oc..][..XI * c * oc];
        transform_input(s, d, g, input, c, p.v, v);
        // The operand layout of `conv`, without its output-channel blocks.
        plane_products(&p, t, c, oc, v, ug, c * oc, 0, oc, m, pack)?;
        transform_output(s, d, g, bias, m, oc, p.m, output);
    }
    Ok(false)
}

/// Output channels whose kernels [`transform_weights`] transforms together, one per lane.
const LANES: usize = 16;

/// `U[ξ][i][o] = (G g_{o,i} Gᵀ)[ξ]` for the kernels `g_{o,i}` (`w[(o·c + i)·9..]`) of one
/// group, planes `stride` apart. [`LANES`] output channels at a time, input channels inside:
/// the reads are 16 sequential streams, each step writes one 64-byte line per plane, and the
/// arithmetic runs across the lanes (vectorised). Kernel by kernel, with 256 strided read
/// streams (or writes spread over 16·c lines), the transform took longer than the GEMMs.
/// Where the CPU runs AVX-512, whole groups of 16 output channels load their kernels one per
/// vector and transpose them into taps (`avx512::transform_weights`); the same arithmetic, so
/// the same bits.
fn transform_weights(w: &[f32], c: usize, oc: usize, stride: usize, u: &mut [f32]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() {
        // SAFETY: x86-64-v4 is active, so this CPU and OS support AVX-512 F/BW/DQ/VL, AVX2 and
        // FMA (`cpu::detect`).
        #[allow(unsafe_code)]
        let done = unsafe { avx512::transform_weights(w, c, oc, stride, u) };
        transform_weights_from(w, c, oc, stride, u, done);
        return;
    }
    transform_weights_from(w, c, oc, stride, u, 0);
}

crate::cpu::multiversion! {
    /// [`transform_weights`] for output channels `first..oc` (`first` a multiple of [`LANES`]).
    fn transform_weights_from(
        w: &[f32],
        c: usize,
        oc: usize,
        stride: usize,
        u: &mut [f32],
        first: usize,
    ) => transform_weights_body
}

#[inline(always)]
fn transform_weights_body(
    w: &[f32],
    c: usize,
    oc: usize,
    stride: usize,
    u: &mut [f32],
    first: usize,
) {
    for o0 in (first..oc).step_by(LANES) {
        let lanes = LANES.min(oc - o0);
        for i in 0..c {
            let g: [[f32; LANES]; 9] = if lanes == LANES {
                // Whole kernels as fixed-size arrays, then transposed in registers: element by
                // element through the stack, the gather stalled on store forwarding and took
                // most of the transform's time.
                let k: [&[f32; 9]; LANES] = core::array::from_fn(|l| {
                    let at = ((o0 + l) * c + i) * 9;
                    w[at..at + 9].try_into().unwrap_or(&[0.0; 9])
                });
                core::array::from_fn(|j| core::array::from_fn(|l| k[l][j]))
            } else {
                let mut g = [[0.0f32; LANES]; 9];
                for l in 0..lanes {
                    let k = &w[((o0 + l) * c + i) * 9..][..9];
                    for (gk, &v) in g.iter_mut().zip(k) {
                        gk[l] = v;
                    }
                }
                g
            };
            let t = weight_transform_lanes(&g);
            for (xi, vals) in t.iter().enumerate() {
                let dst = &mut u[xi * stride + i * oc + o0..];
                if lanes == LANES {
                    // A fixed-length copy: with a variable length it is a `memmove` call.
                    dst[..LANES].copy_from_slice(vals);
                } else {
                    dst[..lanes].copy_from_slice(&vals[..lanes]);
                }
            }
        }
    }
}

/// `G g Gᵀ` of [`LANES`] 3×3 kernels at once (`g[k][l]`: element `k`, row-major, of kernel
/// `l`; `ξ = 4·row + column`); every operation is element-wise over the lanes.
#[inline(always)]
fn weight_transform_lanes(g: &[[f32; LANES]; 9]) -> [[f32; LANES]; XI] {
    type L = [f32; LANES];
    // (a + b + c)/2 and (a − b + c)/2, lane by lane.
    let plus = |a: &L, b: &L, c: &L| -> L { core::array::from_fn(|l| 0.5 * (a[l] + b[l] + c[l])) };
    let minus = |a: &L, b: &L, c: &L| -> L { core::array::from_fn(|l| 0.5 * (a[l] - b[l] + c[l])) };
    // t = G g (4 × 3), row by row.
    let mut t = [[[0.0f32; LANES]; 3]; 4];
    for j in 0..3 {
        let (a, b, c) = (&g[j], &g[3 + j], &g[6 + j]);
        t[0][j] = *a;
        t[1][j] = plus(a, b, c);
        t[2][j] = minus(a, b, c);
        t[3][j] = *c;
    }
    // u = t Gᵀ (4 × 4).
    let mut u = [[0.0f32; LANES]; XI];
    for (i, [a, b, c]) in t.iter().enumerate() {
        u[4 * i] = *a;
        u[4 * i + 1] = plus(a, b, c);
        u[4 * i + 2] = minus(a, b, c);
        u[4 * i + 3] = *c;
    }
    u
}

/// The 4×4 patch of channel plane `xc` (`h × w`) at rows `iy0..iy0 + 4`, columns
/// `ix0..ix0 + 4` (negative or past the edge: zeros).
#[inline(always)]
fn patch(xc: &[f32], h: usize, w: usize, iy0: isize, ix0: isize) -> [[f32; 4]; 4] {
    let mut dp = [[0.0f32; 4]; 4];
    if iy0 >= 0 && iy0 + 4 <= h as isize && ix0 >= 0 && ix0 + 4 <= w as isize {
        let (iy0, ix0) = (iy0 as usize, ix0 as usize);
        for (r, row) in dp.iter_mut().enumerate() {
            row.copy_from_slice(&xc[(iy0 + r) * w + ix0..][..4]);
        }
        return dp;
    }
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
    dp
}

/// `V[ξ][t][i] = (Bᵀ d B)[ξ]` for tile `t` (of image `b` at `(b·th + ty)·tw + tx`) and input
/// channel `i` of group `g`, planes `stride` apart, zeros outside the input. Channels innermost,
/// so that each tile writes 16 sequential streams. Where the CPU runs AVX-512, 16 channels at a
/// time gather each patch element from their 16 planes (`avx512::transform_input`); the same
/// arithmetic, so the same bits.
fn transform_input(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    x: &[f32],
    c: usize,
    stride: usize,
    v: &mut [f32],
) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() && avx512::planes_fit(s.h * s.w) {
        // SAFETY: x86-64-v4 is active, so this CPU and OS support AVX-512 F/BW/DQ/VL, AVX2 and
        // FMA (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx512::transform_input(s, d, g, x, c, stride, v)
        };
        return;
    }
    transform_input_portable(s, d, g, x, c, stride, v);
}

crate::cpu::multiversion! {
    /// [`transform_input`] channel by channel.
    fn transform_input_portable(
        s: &Conv2dShape,
        d: &ConvDims,
        g: usize,
        x: &[f32],
        c: usize,
        stride: usize,
        v: &mut [f32],
    ) => transform_input_body
}

#[inline(always)]
fn transform_input_body(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    x: &[f32],
    c: usize,
    stride: usize,
    v: &mut [f32],
) {
    let (h, w) = (s.h, s.w);
    let (th, tw) = (d.out_h.div_ceil(2), d.out_w.div_ceil(2));
    for b in 0..s.n {
        let xb = &x[(b * s.c_in + g * c) * h * w..][..c * h * w];
        for ty in 0..th {
            // Patch rows iy0..iy0 + 4 of the unpadded input (negative above it).
            let iy0 = (2 * ty) as isize - s.pad_top as isize;
            for tx in 0..tw {
                let ix0 = (2 * tx) as isize - s.pad_left as isize;
                let at = ((b * th + ty) * tw + tx) * c;
                for (i, xc) in xb.chunks_exact(h * w).enumerate() {
                    let vals = input_transform(&patch(xc, h, w, iy0, ix0));
                    for (xi, &val) in vals.iter().enumerate() {
                        v[xi * stride + at + i] = val;
                    }
                }
            }
        }
    }
}

/// `y = Aᵀ M A + bias` for every output channel of group `g` (`M[ξ][t][o]`, planes `stride`
/// apart), dropping a partial tile's outputs past the edge. [`LANES`] output channels at a
/// time: each plane's values for them are contiguous, and the arithmetic runs across lanes.
/// Where the CPU runs AVX-512, each output of a tile goes to its 16 channel planes in one
/// scatter (`avx512::transform_output`); the same arithmetic, so the same bits.
#[allow(clippy::too_many_arguments)]
fn transform_output(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    bias: Option<&[f32]>,
    m: &[f32],
    oc: usize,
    stride: usize,
    y: &mut [f32],
) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() && avx512::scatters_fit(d) {
        // SAFETY: x86-64-v4 is active, so this CPU and OS support AVX-512 F/BW/DQ/VL, AVX2 and
        // FMA (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx512::transform_output(s, d, g, bias, m, oc, stride, y)
        };
        return;
    }
    transform_output_portable(s, d, g, bias, m, oc, stride, y);
}

crate::cpu::multiversion! {
    /// [`transform_output`] in portable lanes (staged through the stack).
    #[allow(clippy::too_many_arguments)]
    fn transform_output_portable(
        s: &Conv2dShape,
        d: &ConvDims,
        g: usize,
        bias: Option<&[f32]>,
        m: &[f32],
        oc: usize,
        stride: usize,
        y: &mut [f32],
    ) => transform_output_body
}

/// Tiles whose outputs [`transform_output`] stages before writing them out.
const STAGE_TILES: usize = 8;

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn transform_output_body(
    s: &Conv2dShape,
    d: &ConvDims,
    g: usize,
    bias: Option<&[f32]>,
    m: &[f32],
    oc: usize,
    stride: usize,
    y: &mut [f32],
) {
    let (oh, ow) = (d.out_h, d.out_w);
    let (th, tw) = (oh.div_ceil(2), ow.div_ceil(2));
    const W: usize = 2 * STAGE_TILES;
    for b in 0..s.n {
        let yb = &mut y[(b * s.c_out + g * oc) * oh * ow..][..oc * oh * ow];
        for ty in 0..th {
            let (oy, rows) = (2 * ty, 2.min(oh - 2 * ty));
            for o0 in (0..oc).step_by(LANES) {
                let lanes = LANES.min(oc - o0);
                let bv: [f32; LANES] = core::array::from_fn(|l| match bias {
                    Some(bs) if l < lanes => bs[g * oc + o0 + l],
                    _ => 0.0,
                });
                for tx0 in (0..tw).step_by(STAGE_TILES) {
                    let n = STAGE_TILES.min(tw - tx0);
                    // stage[l][r][j]: channel o0 + l, output row oy + r, column 2·tx0 + j. Each
                    // channel's rows are then written as contiguous runs, instead of 2 values
                    // at a time into 16 planes (perf: 35 % of FastPoorNet's 64 → 192 layer,
                    // mostly spills and scalar stores).
                    let mut stage = [[[0.0f32; W]; 2]; LANES];
                    for i in 0..n {
                        let at = ((b * th + ty) * tw + tx0 + i) * oc + o0;
                        let mut mt = [[0.0f32; LANES]; XI];
                        for (xi, val) in mt.iter_mut().enumerate() {
                            let src = &m[xi * stride + at..];
                            if lanes == LANES {
                                val.copy_from_slice(&src[..LANES]);
                            } else {
                                val[..lanes].copy_from_slice(&src[..lanes]);
                            }
                        }
                        let out = output_transform_lanes(&mt);
                        for (l, st) in stage.iter_mut().enumerate() {
                            st[0][2 * i] = out[0][l] + bv[l];
                            st[0][2 * i + 1] = out[1][l] + bv[l];
                            st[1][2 * i] = out[2][l] + bv[l];
                            st[1][2 * i + 1] = out[3][l] + bv[l];
                        }
                    }
                    let cols = (2 * n).min(ow - 2 * tx0);
                    let planes = yb[o0 * oh * ow..].chunks_exact_mut(oh * ow);
                    for (yc, st) in planes.take(lanes).zip(&stage) {
                        for (r, sr) in st.iter().enumerate().take(rows) {
                            let dst = &mut yc[(oy + r) * ow + 2 * tx0..];
                            if cols == W {
                                // A fixed-length copy: with a variable length it is a call.
                                dst[..W].copy_from_slice(sr);
                            } else {
                                dst[..cols].copy_from_slice(&sr[..cols]);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod fused;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::depthwise::{clip, NO_CLAMP};

    /// The strips' clamp equals the activation pass after the unclamped convolution, bit for
    /// bit (ReLU and ReLU6 on a layer with outputs on both sides of the bounds; NaN-free).
    #[test]
    fn clamped_strips_equal_the_activation_pass() {
        let mut s = Conv2dShape::new(1, 16, 11, 37, 16, 3, 3);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        let d = s.dims().unwrap();
        let mut seed = 0x9e37_79b9u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) * 8.0 - 4.0
        };
        let x: Vec<f32> = (0..d.input_len).map(|_| next()).collect();
        let w: Vec<f32> = (0..d.weight_len).map(|_| next()).collect();
        let bias: Vec<f32> = (0..s.c_out).map(|_| next()).collect();
        let mut u = vec![0.0; prepared_len(&s).unwrap()];
        prepare_weights(&s, &w, &mut u);
        let mut ws = vec![0.0; prepared_workspace_len(&s, &d).unwrap()];
        let mut plain = vec![0.0; d.output_len];
        let run = |clamp, out: &mut [f32], ws: &mut [f32]| {
            conv_prepared(&s, &d, &x, &u, Some(&bias), clamp, out, ws).unwrap()
        };
        let clamped_plain = run(NO_CLAMP, &mut plain, &mut ws);
        assert_eq!(clamped_plain, fused_runs(&s, &d));
        for clamp in [(0.0, f32::INFINITY), (0.0, 6.0)] {
            let mut out = vec![0.0; d.output_len];
            if run(clamp, &mut out, &mut ws) {
                assert!(out.contains(&0.0) && out.iter().any(|&v| v > 0.0));
                for (j, (&a, &p)) in out.iter().zip(&plain).enumerate() {
                    assert_eq!(a.to_bits(), clip(p, clamp).to_bits(), "{clamp:?}: out[{j}]");
                }
            } else {
                assert_eq!(out, plain);
            }
        }
    }
}
