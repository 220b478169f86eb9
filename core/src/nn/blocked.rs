//! Direct convolution on output channels blocked by [`BLOCK`] (ONNX Runtime's MLAS "NCHWc"
//! convolution, for an NCHW input and output): the weights are re-laid out so that the
//! [`BLOCK`] output channels of one block sit side by side for each `(ic, ky, kx)` tap, and a
//! register tile of up to [`PIXELS`] output pixels × [`TILE_BLOCKS`] blocks accumulates
//! `broadcast(x) · w_block` over every tap, then stores into the NCHW output planes (with
//! AVX-512 through a stage that sends 16 pixels of each channel at a time).
//! No lowered matrix, no GEMM packing: the working memory is the re-laid-out weights (none when
//! prepared once) and, with padding, a zero-padded copy of one image's group of input channels,
//! so that every tap of every tile is inside the buffer (no edge cases in the hot loop).
//!
//! On x86-64 with AVX-512 the tile is explicit `__m512` fused multiply-adds (24 accumulators,
//! 4 weight vectors, 6 broadcasts per tap); with AVX2 and FMA (x86-64-v3) 12 `__m256`
//! accumulators (2 blocks × 3 pixels, 3 broadcasts per tap) whose sums wait in a stack buffer
//! between chunks of taps, in the same order, so the same bits as AVX-512; elsewhere the same
//! loops are portable Rust on fixed-size arrays (vectorised by LLVM, separate multiply and
//! add). Either way a ReLU / ReLU6 / Clip clamp is applied to the sums before they are stored
//! (the same `min(hi, max(lo, x))` as the separate activation pass, so the same bits).

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::{clip, Clamp};

/// Output channels per block: one AVX-512 vector of `f32`.
pub(crate) const BLOCK: usize = 16;
/// Blocks of output channels in the widest register tile.
const TILE_BLOCKS: usize = 4;
/// Output pixels (along a row) in the widest register tile.
const PIXELS: usize = 6;

/// Whether this CPU runs the explicit AVX-512 tile (x86-64-v4 active); several other modules
/// also take this as "AVX-512 kernels run".
pub(crate) fn fast() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        crate::cpu::active() == crate::cpu::Level::X86V4
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Whether this CPU runs an explicit SIMD tile (AVX-512 or AVX2 with FMA: x86-64-v3 or v4
/// active). The portable tile's accumulators (384 `f32`) do not fit 128-bit registers, so
/// elsewhere [`choose_method`](super::conv::choose_method) keeps to the other methods.
pub(crate) fn tiled() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        crate::cpu::active() >= crate::cpu::Level::X86V3
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Whether the input needs a zero-padded copy (any padding).
pub(crate) const fn padded(s: &Conv2dShape) -> bool {
    s.pad_top + s.pad_left + s.pad_bottom + s.pad_right > 0
}

/// Output-channel blocks per group.
const fn blocks(s: &Conv2dShape) -> usize {
    (s.c_out / s.groups).div_ceil(BLOCK)
}

/// Elements of the blocked weights: `groups · ⌈(c_out/groups)/16⌉ · 16 · K` (not checked for
/// overflow: the caller multiplies the same factors with checks first).
pub(crate) fn weights_len(s: &Conv2dShape, d: &ConvDims) -> [usize; 4] {
    [s.groups, blocks(s), BLOCK, d.k]
}

/// Factors of the padded input copy's length: `c_in/groups · Hp · Wp` (empty without
/// padding).
pub(crate) fn padded_len(s: &Conv2dShape, d: &ConvDims) -> [usize; 3] {
    if padded(s) {
        [
            s.c_in / s.groups,
            d.padded_h,
            s.w + s.pad_left + s.pad_right,
        ]
    } else {
        [0, 0, 0]
    }
}

/// Re-lays out `w` (`c_out × c_in/g × kh × kw`) into `out`: per group, per register tile of
/// `tb ≤ 4` blocks (from block `b0`, at `b0·16·K`), `[tap][tb][16]`, so that a tile reads
/// one sequential stream; channels past `c_out/g` in a group's last block are zero.
pub(crate) fn prepare_weights(s: &Conv2dShape, d: &ConvDims, w: &[f32], out: &mut [f32]) {
    let (k, ocg, nb) = (d.k, s.c_out / s.groups, blocks(s));
    for g in 0..s.groups {
        let wg = &mut out[g * nb * BLOCK * k..][..nb * BLOCK * k];
        let mut b0 = 0;
        while b0 < nb {
            let tb = TILE_BLOCKS.min(nb - b0);
            let dst = &mut wg[b0 * BLOCK * k..][..tb * BLOCK * k];
            prepare_pass(&w[g * ocg * k..][..ocg * k], ocg, k, b0, tb, dst);
            b0 += tb;
        }
    }
}

/// Elements of the weights of one pass of register tiles (at most [`TILE_BLOCKS`] blocks of
/// one group), which the blocked method re-lays out pass by pass when its weights are not
/// prepared: `min(⌈(c_out/groups)/16⌉, 4)·16·K`.
pub(crate) fn pass_len(s: &Conv2dShape, d: &ConvDims) -> [usize; 3] {
    [blocks(s).min(TILE_BLOCKS), BLOCK, d.k]
}

/// [`prepare_weights`] for the `tb` blocks from block `b0` of one group's weights `wg`
/// (`ocg × k`): into `dst` (`tb·16·k`), `[tap][tb][16]`, channels past `ocg` zero.
fn prepare_pass(wg: &[f32], ocg: usize, k: usize, b0: usize, tb: usize, dst: &mut [f32]) {
    let rows = (ocg - b0 * BLOCK).min(tb * BLOCK);
    let src = &wg[b0 * BLOCK * k..][..rows * k];
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fast() {
        // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL, AVX2 and FMA supported,
        // `cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx512::prepare_pass(src, k, tb, dst)
        };
        return;
    }
    prepare_pass_portable(src, k, tb, dst);
}

/// [`prepare_pass`] on any CPU: the rows of `src` (`k` taps each, at most `16·tb`) into `dst`
/// (`[tap][tb][16]`, the lanes of missing rows zero).
fn prepare_pass_portable(src: &[f32], k: usize, tb: usize, dst: &mut [f32]) {
    let rows = src.len() / k;
    if rows < tb * BLOCK {
        dst.fill(0.0);
    }
    // 16 taps × 16 channels at a time through a local square: the reads are 16-value runs of
    // 16 rows, the writes 16-value runs (tap by tap over all rows, with 64 read streams and a
    // bounds check per value, this took an eighth of a 5×5 layer's time). One block of 16
    // rows at a time, each along all its taps, prefetched ahead (`prefetch_ahead`).
    for r0 in (0..rows).step_by(BLOCK) {
        let n = BLOCK.min(rows - r0);
        let block = &src[r0 * k..][..n * k];
        let i = r0 / BLOCK;
        for t0 in (0..k).step_by(BLOCK) {
            let taps = BLOCK.min(k - t0);
            prefetch_ahead(block, k, t0, tb, i, dst);
            let mut sq = [[0.0f32; BLOCK]; BLOCK];
            for (row, v) in sq.iter_mut().zip(block.chunks(k)) {
                row[..taps].copy_from_slice(&v[t0..t0 + taps]);
            }
            for tt in 0..taps {
                let o = &mut dst[((t0 + tt) * tb + i) * BLOCK..][..n];
                for (l, o) in o.iter_mut().enumerate() {
                    *o = sq[l][tt];
                }
            }
        }
    }
}

/// Squares of taps ahead of the weight re-layout's reads that it prefetches into L1
/// ([`prefetch_ahead`]).
const NEAR_SQUARES: usize = 4;
/// Squares of taps ahead of the weight re-layout's reads that it prefetches into L2.
const FAR_SQUARES: usize = 16;

/// The prefetches of [`prepare_pass`]'s square of taps `t0 ..` of block `i` (`block`: its
/// rows, `k` taps each; `dst` `[tap][tb][16]`): each row's taps [`NEAR_SQUARES`] squares ahead
/// into L1 and [`FAR_SQUARES`] ahead into L2, the block's destination 2 squares ahead. In a
/// network the weights come from memory, their rows `k` values apart (9 KiB for ResNet-18's
/// 256 → 512 3 × 3 / 2 layer: streams on few L1 sets), and the working memory is cold; the
/// hardware prefetchers did not follow. Walking the taps of one block of 16 rows at a time
/// (not of all 64 rows of a pass) with these prefetches took that layer's re-layout (its time
/// less the prepared layer's) from about 1.1 to 0.27 ms (BENCHMARKS.md, twenty-fourth
/// session).
#[inline(always)]
fn prefetch_ahead(block: &[f32], k: usize, t0: usize, tb: usize, i: usize, dst: &[f32]) {
    let next = dst
        .as_ptr()
        .wrapping_add(((t0 + 2 * BLOCK) * tb + i) * BLOCK);
    for tt in 0..BLOCK {
        prefetch::<false>(next.wrapping_add(tt * tb * BLOCK));
    }
    for r in 0..block.len() / k {
        let row = block.as_ptr().wrapping_add(r * k + t0);
        prefetch::<false>(row.wrapping_add(NEAR_SQUARES * BLOCK));
        prefetch::<true>(row.wrapping_add(FAR_SQUARES * BLOCK));
    }
}

/// Asks for the cache line holding `p` in the L1 cache, or with `L2` in the L2 cache: a hint
/// (no effect on results; any address, a prefetch never faults), on x86-64 only.
#[inline(always)]
fn prefetch<const L2: bool>(p: *const f32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and never faults; SSE is part of x86-64.
    #[allow(unsafe_code)]
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        if L2 {
            _mm_prefetch::<_MM_HINT_T1>(p.cast())
        } else {
            _mm_prefetch::<_MM_HINT_T0>(p.cast())
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Geometry of the tile loops for one image and group, input in padded coordinates.
#[derive(Clone, Copy)]
struct Geo {
    cg: usize,
    kh: usize,
    kw: usize,
    /// Input row length and plane length (padded when the input was copied).
    row: usize,
    plane: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    oh: usize,
    ow: usize,
    /// Taps per output channel, `cg·kh·kw`.
    k: usize,
    /// Output channels of the group.
    ocg: usize,
    /// Applied to every output before it is stored.
    clamp: Clamp,
    /// Whether the AVX-512 tiles run along the whole output plane as one row (a tile's pixels
    /// may span output rows, each with its own input offset): strided 1 × 1 layers on narrow
    /// maps ([`flat`]), whose rows would otherwise leave tiles of 4 pixels or fewer. (Read by
    /// the x86 tiles only.)
    #[cfg_attr(
        not(any(target_arch = "x86", target_arch = "x86_64")),
        allow(dead_code)
    )]
    flat: bool,
}

/// Widest output row on which strided 1 × 1 layers tile the whole plane ([`Geo::flat`]):
/// ResNet-18's 256 → 512 shortcut (7-pixel rows, tiles of 4 and 3) ran 1.12× faster so, its
/// 14- and 28-pixel ones (tiles of 4–6) 0.92× and 0.88× (BENCHMARKS.md, seventeenth session).
const FLAT_MAX_OUT_W: usize = 8;

/// Whether [`Geo::flat`] holds for this shape: a 1 × 1 kernel with a stride above 1 and no
/// padding (ResNet's shortcut layers), where each tap reads one pixel per output, on output
/// rows of at most [`FLAT_MAX_OUT_W`] pixels. (The selector now sends such layers to im2col's
/// subsampled pointwise path where it applies; this serves the others and explicit calls.)
const fn flat(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.kh == 1
        && s.kw == 1
        && !padded(s)
        && (s.stride_h > 1 || s.stride_w > 1)
        && d.out_w <= FLAT_MAX_OUT_W
}

/// The weights a blocked convolution reads.
pub(crate) enum Weights<'a> {
    /// Re-laid out once for every pass ([`prepare_weights`]).
    Prepared(&'a [f32]),
    /// As stored (`c_out × c_in/g × kh × kw`), re-laid out pass by pass into `buf` (at least
    /// [`pass_len`] elements) just before the pass reads them: in a network the whole
    /// re-laid-out copy (1.2 MB for AlexNet's 64 → 192 5 × 5 layer) went to working memory
    /// that the layers before had left cold and came back from L3, where one pass's stays in
    /// the L2 cache (BENCHMARKS.md, twenty-third session).
    Stored { w: &'a [f32], buf: &'a mut [f32] },
}

/// Convolves every image and group of `input` with blocked weights `weights` into `output`
/// (adding `bias`, then clamping to `clamp`), using `pad` (at least [`padded_len`] elements)
/// for the padded input copy. The caller has checked every length.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    mut weights: Weights<'_>,
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    pad: &mut [f32],
) {
    let (cg, ocg, nb) = (s.c_in / s.groups, s.c_out / s.groups, blocks(s));
    let (in_g, ohw) = (cg * s.h * s.w, d.out_h * d.out_w);
    let (wp, hp) = (s.w + s.pad_left + s.pad_right, d.padded_h);
    let copy = padded(s);
    let geo = Geo {
        cg,
        kh: s.kh,
        kw: s.kw,
        row: if copy { wp } else { s.w },
        plane: if copy { hp * wp } else { s.h * s.w },
        sh: s.stride_h,
        sw: s.stride_w,
        dh: s.dilation_h,
        dw: s.dilation_w,
        oh: d.out_h,
        ow: d.out_w,
        k: d.k,
        ocg,
        clamp,
        flat: flat(s, d),
    };
    for b in 0..s.n {
        for g in 0..s.groups {
            let x = &input[(b * s.groups + g) * in_g..][..in_g];
            let x: &[f32] = if copy {
                let xp = &mut pad[..cg * hp * wp];
                pad_input(s, x, xp);
                xp
            } else {
                x
            };
            let w = match &mut weights {
                Weights::Prepared(wb) => {
                    Weights::Prepared(&wb[g * nb * BLOCK * d.k..][..nb * BLOCK * d.k])
                }
                Weights::Stored { w, buf } => Weights::Stored {
                    w: &w[g * ocg * d.k..][..ocg * d.k],
                    buf,
                },
            };
            let y = &mut output[(b * s.groups + g) * ocg * ohw..][..ocg * ohw];
            let bias = bias.map(|v| &v[g * ocg..][..ocg]);
            group(&geo, x, w, bias, y);
        }
    }
}

/// Copies one group's `cg × h × w` input into the middle of a zeroed `cg × Hp × Wp` buffer.
fn pad_input(s: &Conv2dShape, x: &[f32], xp: &mut [f32]) {
    let wp = s.w + s.pad_left + s.pad_right;
    let hp = s.h + s.pad_top + s.pad_bottom;
    for (src, dst) in x.chunks_exact(s.h * s.w).zip(xp.chunks_exact_mut(hp * wp)) {
        dst[..s.pad_top * wp].fill(0.0);
        dst[(s.pad_top + s.h) * wp..].fill(0.0);
        for (r, row) in src.chunks_exact(s.w).enumerate() {
            let out = &mut dst[(s.pad_top + r) * wp..][..wp];
            out[..s.pad_left].fill(0.0);
            out[s.pad_left..s.pad_left + s.w].copy_from_slice(row);
            out[s.pad_left + s.w..].fill(0.0);
        }
    }
}

/// One image and group (`w`: the group's weights): tiles of [`TILE_BLOCKS`] blocks ×
/// [`PIXELS`] pixels, narrower at the ends.
fn group(g: &Geo, x: &[f32], mut w: Weights<'_>, bias: Option<&[f32]>, y: &mut [f32]) {
    let nb = g.ocg.div_ceil(BLOCK);
    let mut b0 = 0;
    while b0 < nb {
        let tb = TILE_BLOCKS.min(nb - b0);
        let mut bv = [[0.0f32; BLOCK]; TILE_BLOCKS];
        if let Some(bias) = bias {
            for (i, v) in bv.iter_mut().enumerate().take(tb) {
                let c0 = (b0 + i) * BLOCK;
                let lanes = BLOCK.min(g.ocg.saturating_sub(c0));
                v[..lanes].copy_from_slice(&bias[c0..c0 + lanes]);
            }
        }
        let len = tb * BLOCK * g.k;
        let wt: &[f32] = match &mut w {
            Weights::Prepared(wb) => &wb[b0 * BLOCK * g.k..][..len],
            Weights::Stored { w, buf } => {
                prepare_pass(w, g.ocg, g.k, b0, tb, &mut buf[..len]);
                &buf[..len]
            }
        };
        rows(g, x, wt, &bv, b0 * BLOCK, tb, y);
        b0 += tb;
    }
}

/// Every output pixel for blocks `c0 / 16 .. + tb` (weights `wt`, bias vectors `bv`).
fn rows(
    g: &Geo,
    x: &[f32],
    wt: &[f32],
    bv: &[[f32; BLOCK]; TILE_BLOCKS],
    c0: usize,
    tb: usize,
    y: &mut [f32],
) {
    let t = Tile {
        g,
        x,
        w: wt,
        bias: bv,
        c0,
    };
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fast() {
        // SAFETY: the active level's features (AVX-512 F/BW/DQ/VL, AVX2, FMA) are supported
        // by this CPU and OS (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx512::rows(&t, tb, y)
        };
        return;
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if crate::cpu::active() == crate::cpu::Level::X86V3 {
        // SAFETY: AVX2 and FMA are supported by this CPU and OS (`cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx2::rows(&t, tb, y)
        };
        return;
    }
    rows_portable(&t, tb, y);
}

/// What a tile reads: geometry, the group's (padded) input, the tile's weight blocks and bias
/// vectors, and the first output channel of its first block.
struct Tile<'a> {
    g: &'a Geo,
    x: &'a [f32],
    w: &'a [f32],
    bias: &'a [[f32; BLOCK]; TILE_BLOCKS],
    c0: usize,
}

impl Tile<'_> {
    /// Input offset of the window of output pixel `q` (row-major over the output plane; the
    /// tile's `P` pixels lie in one row, `stride_w` apart in the input), after checking (once
    /// per tile, cheap against its `K` taps) that the tile reads inside `x` and `w` and writes
    /// inside `y` (`y_len` elements) over `NB` blocks.
    #[inline(always)]
    fn base<const NB: usize, const P: usize>(&self, q: usize, y_len: usize) -> usize {
        let g = self.g;
        let (oy, ox) = (q / g.ow, q % g.ow);
        let base = oy * g.sh * g.row + ox * g.sw;
        let last_tap = (g.cg - 1) * g.plane + (g.kh - 1) * g.dh * g.row + (g.kw - 1) * g.dw;
        // Offsets grow with the pixel, so the last pixel's last tap is the highest read.
        assert!(
            ox + P <= g.ow
                && oy < g.oh
                && base + (P - 1) * g.sw + last_tap < self.x.len()
                && self.blocks_fit::<NB>(y_len)
        );
        base
    }

    /// Whether the `NB` weight blocks of `16·K` values lie inside `w` and the blocks' output
    /// planes (channels up to the group's) inside `y` (`y_len` elements).
    #[inline(always)]
    fn blocks_fit<const NB: usize>(&self, y_len: usize) -> bool {
        let g = self.g;
        let c_end = (self.c0 + NB * BLOCK).min(g.ocg);
        NB * BLOCK * g.k <= self.w.len() && c_end * g.oh * g.ow <= y_len
    }
}

impl Tile<'_> {
    /// [`Tile::base`] for a tile of `P` consecutive output pixels from `q` in row-major order,
    /// which may span output rows ([`Geo::flat`]; the kernel is 1 × 1): the input offset of
    /// each pixel relative to the first's, and the first's, after the same checks.
    #[inline(always)]
    #[cfg_attr(
        not(any(target_arch = "x86", target_arch = "x86_64")),
        allow(dead_code)
    )]
    fn flat_offsets<const NB: usize, const P: usize>(
        &self,
        q: usize,
        y_len: usize,
    ) -> (usize, [usize; P]) {
        let g = self.g;
        let at = |q: usize| (q / g.ow) * g.sh * g.row + (q % g.ow) * g.sw;
        let base = at(q);
        let off: [usize; P] = core::array::from_fn(|p| at(q + p) - base);
        // Offsets grow with the pixel, so the last pixel's last channel is the highest read.
        assert!(
            g.kh == 1
                && g.kw == 1
                && q + P <= g.oh * g.ow
                && base + off[P - 1] + (g.cg - 1) * g.plane < self.x.len()
                && self.blocks_fit::<NB>(y_len)
        );
        (base, off)
    }
}

/// The fewest tiles of at most [`PIXELS`] pixels along each output row, as even as possible
/// (13 = 5 + 4 + 4, not 6 + 6 + 1: a one-pixel tile has 4 accumulators, too few to hide the
/// multiply-add latency): calls `f(p, q)` for each, `q` its first pixel (row-major). Tiles
/// spanning rows would leave no narrow tiles, but with a different input offset for each
/// pixel LLVM hoists the broadcasts and spills accumulators (the AVX-512 tile takes them only
/// for strided 1 × 1 kernels on narrow maps, [`Geo::flat`], called with the whole plane as
/// one row).
#[inline(always)]
fn pixel_tiles(oh: usize, ow: usize, mut f: impl FnMut(usize, usize)) {
    let tiles = ow.div_ceil(PIXELS);
    for oy in 0..oh {
        let mut ox = 0;
        for i in 0..tiles {
            let p = (ow - ox).div_ceil(tiles - i);
            f(p, oy * ow + ox);
            ox += p;
        }
    }
}

crate::cpu::multiversion! {
    fn rows_portable(t: &Tile<'_>, tb: usize, y: &mut [f32]) => rows_portable_body
}

#[inline(always)]
fn rows_portable_body(t: &Tile<'_>, tb: usize, y: &mut [f32]) {
    pixel_tiles(t.g.oh, t.g.ow, |p, q| {
        if p == PIXELS {
            match tb {
                1 => tile_portable::<1, PIXELS>(t, q, y),
                2 => tile_portable::<2, PIXELS>(t, q, y),
                3 => tile_portable::<3, PIXELS>(t, q, y),
                _ => tile_portable::<4, PIXELS>(t, q, y),
            }
            return;
        }
        // The last few pixels one by one (fewer copies of the tile to compile).
        for q in q..q + p {
            match tb {
                1 => tile_portable::<1, 1>(t, q, y),
                2 => tile_portable::<2, 1>(t, q, y),
                3 => tile_portable::<3, 1>(t, q, y),
                _ => tile_portable::<4, 1>(t, q, y),
            }
        }
    });
}

/// One tile of `NB` blocks × `P` pixels from output pixel `q`, taps in `(ic, ky, kx)` order.
#[inline(always)]
fn tile_portable<const NB: usize, const P: usize>(t: &Tile<'_>, q: usize, y: &mut [f32]) {
    let g = t.g;
    let base = t.base::<NB, P>(q, y.len());
    let mut acc = [[[0.0f32; BLOCK]; NB]; P];
    for a in acc.iter_mut() {
        for (b, v) in a.iter_mut().enumerate() {
            *v = t.bias[b];
        }
    }
    let mut tap = 0;
    for ic in 0..g.cg {
        for ky in 0..g.kh {
            let xr = ic * g.plane + ky * g.dh * g.row;
            for kx in 0..g.kw {
                let xk = xr + kx * g.dw;
                let wv: [[f32; BLOCK]; NB] = core::array::from_fn(|b| {
                    let s = &t.w[(tap * NB + b) * BLOCK..][..BLOCK];
                    core::array::from_fn(|l| s[l])
                });
                tap += 1;
                for (p, a) in acc.iter_mut().enumerate() {
                    let xv = t.x[base + xk + p * g.sw];
                    for (ab, wb) in a.iter_mut().zip(&wv) {
                        for (o, &wl) in ab.iter_mut().zip(wb) {
                            *o += xv * wl;
                        }
                    }
                }
            }
        }
    }
    store(g, t.c0, q, &acc, y);
}

/// Writes a tile's accumulators (`acc[p][b][l]`: pixel `q + p`, channel `c0 + 16·b + l`),
/// clamped, into the NCHW planes of `y`, skipping channels past the group's.
#[inline(always)]
fn store<const NB: usize, const P: usize>(
    g: &Geo,
    c0: usize,
    q: usize,
    acc: &[[[f32; BLOCK]; NB]; P],
    y: &mut [f32],
) {
    let ohw = g.oh * g.ow;
    #[allow(clippy::needless_range_loop)] // `b` indexes the middle dimension
    for b in 0..NB {
        let cb = c0 + b * BLOCK;
        let lanes = BLOCK.min(g.ocg.saturating_sub(cb));
        for l in 0..lanes {
            let out = &mut y[(cb + l) * ohw + q..][..P];
            for (p, o) in out.iter_mut().enumerate() {
                *o = clip(acc[p][b][l], g.clamp);
            }
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{pixel_tiles, Tile, BLOCK, TILE_BLOCKS};

    /// Pixels a [`Stage`] holds: 16 to leave, plus up to a tile's waiting for the next 16.
    const STAGE: usize = 32;

    /// Taps per output channel from which each send first prefetches the lines that the send
    /// [`SEND_AHEAD`] sends later writes: in a network the output planes are cold, and 16–64
    /// planes written side by side are more streams than the hardware prefetchers follow, so
    /// the stores would wait on their lines. Below this the tiles are too short to pay for
    /// the prefetches (ResNet-18's 1 × 1 / 2 shortcut, `K` = 64, ran 3 % slower with them).
    const PREFETCH_MIN_K: usize = 256;
    /// How many sends (of 16 pixels) ahead the prefetches reach.
    const SEND_AHEAD: usize = 4;

    /// Consecutive tiles' outputs (clamped sums), pixel-major, waiting to leave for the NCHW
    /// planes 16 pixels at a time: one 16 × 16 transpose per block and one whole 64-byte
    /// store per channel, rather than an 8 × 16 transpose and sixteen 32-byte stores per block
    /// for every tile of 5 or 6 pixels (the stores into 16–64 planes had cost 7–13 % of
    /// SqueezeNet's 16 → 64 3 × 3 layer and ResNet-18's 1 × 1 / 2 ones, BENCHMARKS.md).
    struct Stage {
        /// `v[(head + i) % STAGE][b]`: pixel `q0 + i`, channels `c0 + 16·b ..` of the tiles'
        /// blocks (a ring: nothing moves when 16 pixels leave).
        v: [[__m512; TILE_BLOCKS]; STAGE],
        /// Where pixel `q0` sits in `v`.
        head: usize,
        /// The output pixel (row-major in the plane) of the first held.
        q0: usize,
        /// Pixels held.
        n: usize,
    }

    /// [`super::rows_portable`] with `__m512` fused multiply-adds.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn rows(t: &Tile<'_>, tb: usize, y: &mut [f32]) {
        let g = t.g;
        let ohw = g.oh * g.ow;
        // Every store below lands inside `y`: channel `c0 + 16·tb` at the most (clamped to the
        // group's), pixels below `ohw`.
        assert!((t.c0 + tb * BLOCK).min(g.ocg) * ohw <= y.len() && tb <= TILE_BLOCKS);
        let mut st = Stage {
            v: [[_mm512_setzero_ps(); TILE_BLOCKS]; STAGE],
            head: 0,
            q0: 0,
            n: 0,
        };
        if g.flat {
            pixel_tiles(1, ohw, |p, q| dispatch::<true>(t, tb, p, q, &mut st, y));
        } else {
            pixel_tiles(g.oh, g.ow, |p, q| {
                dispatch::<false>(t, tb, p, q, &mut st, y)
            });
        }
        // SAFETY: as for the flushes of full chunks (`leave`); AVX-512 F is enabled here.
        unsafe { leave(t, tb, &mut st, y) };
    }

    /// The tile of `tb` blocks × `p` pixels from `q`; `F`: [`super::Geo::flat`].
    #[inline(always)]
    fn dispatch<const F: bool>(
        t: &Tile<'_>,
        tb: usize,
        p: usize,
        q: usize,
        st: &mut Stage,
        y: &mut [f32],
    ) {
        match (tb, p) {
            (1, 6) => tile::<1, 6, F>(t, q, st, y),
            (2, 6) => tile::<2, 6, F>(t, q, st, y),
            (3, 6) => tile::<3, 6, F>(t, q, st, y),
            (4, 6) => tile::<4, 6, F>(t, q, st, y),
            (1, 5) => tile::<1, 5, F>(t, q, st, y),
            (2, 5) => tile::<2, 5, F>(t, q, st, y),
            (3, 5) => tile::<3, 5, F>(t, q, st, y),
            (4, 5) => tile::<4, 5, F>(t, q, st, y),
            (1, 4) => tile::<1, 4, F>(t, q, st, y),
            (2, 4) => tile::<2, 4, F>(t, q, st, y),
            (3, 4) => tile::<3, 4, F>(t, q, st, y),
            (4, 4) => tile::<4, 4, F>(t, q, st, y),
            (1, 3) => tile::<1, 3, F>(t, q, st, y),
            (2, 3) => tile::<2, 3, F>(t, q, st, y),
            (3, 3) => tile::<3, 3, F>(t, q, st, y),
            (4, 3) => tile::<4, 3, F>(t, q, st, y),
            (1, 2) => tile::<1, 2, F>(t, q, st, y),
            (2, 2) => tile::<2, 2, F>(t, q, st, y),
            (3, 2) => tile::<3, 2, F>(t, q, st, y),
            (4, 2) => tile::<4, 2, F>(t, q, st, y),
            (1, _) => tile::<1, 1, F>(t, q, st, y),
            (2, _) => tile::<2, 1, F>(t, q, st, y),
            (3, _) => tile::<3, 1, F>(t, q, st, y),
            _ => tile::<4, 1, F>(t, q, st, y),
        }
    }

    #[inline(always)]
    fn tile<const NB: usize, const P: usize, const F: bool>(
        t: &Tile<'_>,
        q: usize,
        st: &mut Stage,
        y: &mut [f32],
    ) {
        let g = t.g;
        let (base, off) = if F {
            t.flat_offsets::<NB, P>(q, y.len())
        } else {
            (t.base::<NB, P>(q, y.len()), [0; P])
        };
        // The tiles come in pixel order, each after the last.
        assert!(q == st.q0 + st.n && st.n + P <= STAGE);
        // SAFETY: `base` (or `flat_offsets`) checked that the last tap of the last pixel, the
        // highest offset read from `x` (offsets below grow with `ic`, `ky`, `kx` and `p`), lies
        // inside `x`,
        // and that the `NB` weight blocks of `16·K` values lie inside `w`; AVX-512F and FMA
        // are enabled by the caller's `target_feature`.
        unsafe {
            let (xs, ws) = (t.x.as_ptr().add(base), t.w.as_ptr());
            let bias: [__m512; NB] = core::array::from_fn(|b| _mm512_loadu_ps(t.bias[b].as_ptr()));
            let mut acc = [bias; P];
            let mut wp = ws;
            for ic in 0..g.cg {
                for ky in 0..g.kh {
                    let xr = xs.add(ic * g.plane + ky * g.dh * g.row);
                    for kx in 0..g.kw {
                        let xk = xr.add(kx * g.dw);
                        let wv: [__m512; NB] =
                            core::array::from_fn(|b| _mm512_loadu_ps(wp.add(b * BLOCK)));
                        wp = wp.add(NB * BLOCK);
                        for (p, a) in acc.iter_mut().enumerate() {
                            let xv = _mm512_set1_ps(*xk.add(if F { off[p] } else { p * g.sw }));
                            for (ab, &wb) in a.iter_mut().zip(&wv) {
                                *ab = _mm512_fmadd_ps(xv, wb, *ab);
                            }
                        }
                    }
                }
            }
            // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand), and
            // keep −0.0 against a bound of 0.0: `clip`, as the separate activation pass.
            let (lo, hi) = (_mm512_set1_ps(g.clamp.0), _mm512_set1_ps(g.clamp.1));
            // Constant indices only into `acc` (the tap loop is too long to unroll): a
            // variable index would keep the accumulators in memory through it.
            for (p, a) in acc.iter().enumerate() {
                for (b, &ab) in a.iter().enumerate() {
                    st.v[(st.head + st.n + p) % STAGE][b] =
                        _mm512_min_ps(hi, _mm512_max_ps(lo, ab));
                }
            }
            st.n += P;
            if st.n >= 16 {
                full(t, NB, st, y);
            }
        }
    }

    /// [`super::prepare_pass`] by 16 × 16 transpositions: the rows of `src` (`k` taps each, at
    /// most `16·tb`) into `dst` (`[tap][tb][16]`), per square of 16 taps × 16 rows 16 masked
    /// row loads (missing rows zero), one transposition and one 64-byte store per tap (the
    /// lanes of missing rows written as the zeros they must hold).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn prepare_pass(src: &[f32], k: usize, tb: usize, dst: &mut [f32]) {
        let rows = src.len() / k;
        // Every load below reads inside `src` (row < rows, taps t0 .. t0 + taps ≤ k), every
        // store inside `dst` (tap < k, block i < tb).
        assert!(rows <= tb * BLOCK && tb <= TILE_BLOCKS && dst.len() >= k * tb * BLOCK);
        for i in 0..tb {
            let r0 = i * BLOCK;
            let block = &src[(r0 * k).min(src.len())..][..rows.saturating_sub(r0).min(BLOCK) * k];
            for t0 in (0..k).step_by(BLOCK) {
                let taps = BLOCK.min(k - t0);
                let m = ((1u32 << taps) - 1) as __mmask16;
                super::prefetch_ahead(block, k, t0, tb, i, dst);
                let mut r = [_mm512_setzero_ps(); 16];
                for (l, v) in r.iter_mut().enumerate().take(rows.saturating_sub(r0)) {
                    // SAFETY: row r0 + l < rows, and the unmasked lanes' taps lie inside the
                    // row (asserted above); AVX-512 F is enabled here.
                    *v = unsafe { _mm512_maskz_loadu_ps(m, src.as_ptr().add((r0 + l) * k + t0)) };
                }
                // SAFETY: AVX-512 F is enabled here.
                let cols = unsafe { transpose16(&r) };
                for (tt, c) in cols.iter().enumerate().take(taps) {
                    // SAFETY: ((t0 + tt)·tb + i + 1)·16 ≤ k·tb·16 ≤ dst.len() (asserted).
                    unsafe {
                        _mm512_storeu_ps(dst.as_mut_ptr().add(((t0 + tt) * tb + i) * BLOCK), *c)
                    };
                }
            }
        }
    }

    /// Sends the stage's first 16 pixels of `nb` blocks to their planes and moves the ring on.
    ///
    /// # Safety
    /// AVX-512 F; `st.n ≥ 16`; the stage's channels inside `y` (`rows` asserts it).
    #[inline(always)]
    unsafe fn full(t: &Tile<'_>, nb: usize, st: &mut Stage, y: &mut [f32]) {
        assert!(st.n >= 16);
        let g = t.g;
        let (ohw, ahead) = (g.oh * g.ow, st.q0 + 16 * SEND_AHEAD);
        if g.k >= PREFETCH_MIN_K && ahead < ohw {
            for b in 0..nb {
                let cb = t.c0 + b * BLOCK;
                for l in 0..BLOCK.min(g.ocg - cb) {
                    // A prefetch reads nothing and never faults; the address lies inside the
                    // channel's plane.
                    _mm_prefetch::<_MM_HINT_T0>(
                        y.as_ptr().wrapping_add((cb + l) * ohw + ahead).cast(),
                    );
                }
            }
        }
        send(t, nb, st, 16, y);
        st.head = (st.head + 16) % STAGE;
        st.q0 += 16;
        st.n -= 16;
    }

    /// Sends the stage's last pixels (fewer than 16) of `tb` blocks to their planes.
    ///
    /// # Safety
    /// AVX-512 F; the stage's channels inside `y` (`rows` asserts it).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    unsafe fn leave(t: &Tile<'_>, tb: usize, st: &mut Stage, y: &mut [f32]) {
        if st.n > 0 {
            send(t, tb, st, st.n, y);
            st.n = 0;
        }
    }

    /// Writes the stage's first `n ≤ 16` pixels of `nb` blocks into their channel planes: one
    /// 16 × 16 transpose per block, then per channel one 64-byte store (16 pixels) or a copy of
    /// `n`.
    ///
    /// # Safety
    /// AVX-512 F; `n ≤ st.n`; the stage's channels inside `y`.
    #[inline(always)]
    unsafe fn send(t: &Tile<'_>, nb: usize, st: &Stage, n: usize, y: &mut [f32]) {
        let g = t.g;
        let ohw = g.oh * g.ow;
        assert!(n <= 16 && n <= st.n && st.q0 + n <= ohw);
        for b in 0..nb {
            let cb = t.c0 + b * BLOCK;
            let lanes = BLOCK.min(g.ocg - cb);
            let mut rows = [_mm512_setzero_ps(); 16];
            for (i, r) in rows.iter_mut().enumerate().take(n) {
                *r = st.v[(st.head + i) % STAGE][b];
            }
            let cols = transpose16(&rows);
            for (l, c) in cols.iter().enumerate().take(lanes) {
                let at = (cb + l) * ohw + st.q0;
                if n == 16 {
                    _mm512_storeu_ps(y.as_mut_ptr().add(at), *c);
                } else {
                    let mut v = [0.0f32; 16];
                    _mm512_storeu_ps(v.as_mut_ptr(), *c);
                    y[at..][..n].copy_from_slice(&v[..n]);
                }
            }
        }
    }

    /// The 16 × 16 transpose of `r` (`r[i]` lane `j` → result `[j]` lane `i`): within 128-bit
    /// lanes by unpacks and shuffles, then across them by two rounds of 128-bit shuffles.
    /// (Plain loops: closures, as in `array::from_fn`, would not inherit the caller's target
    /// features, and their intrinsics would stay calls.)
    #[inline(always)]
    unsafe fn transpose16(r: &[__m512; 16]) -> [__m512; 16] {
        let mut t = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        // u[4i + j], 128-bit lane k: column 4k + j of rows 4i .. 4i + 3.
        let mut u = [_mm512_setzero_ps(); 16];
        for i in 0..4 {
            u[4 * i] = _mm512_shuffle_ps::<0x44>(t[4 * i], t[4 * i + 2]);
            u[4 * i + 1] = _mm512_shuffle_ps::<0xEE>(t[4 * i], t[4 * i + 2]);
            u[4 * i + 2] = _mm512_shuffle_ps::<0x44>(t[4 * i + 1], t[4 * i + 3]);
            u[4 * i + 3] = _mm512_shuffle_ps::<0xEE>(t[4 * i + 1], t[4 * i + 3]);
        }
        let mut out = [_mm512_setzero_ps(); 16];
        for j in 0..4 {
            let x0 = _mm512_shuffle_f32x4::<0x44>(u[j], u[4 + j]);
            let x1 = _mm512_shuffle_f32x4::<0xEE>(u[j], u[4 + j]);
            let x2 = _mm512_shuffle_f32x4::<0x44>(u[8 + j], u[12 + j]);
            let x3 = _mm512_shuffle_f32x4::<0xEE>(u[8 + j], u[12 + j]);
            out[j] = _mm512_shuffle_f32x4::<0x88>(x0, x2);
            out[4 + j] = _mm512_shuffle_f32x4::<0xDD>(x0, x2);
            out[8 + j] = _mm512_shuffle_f32x4::<0x88>(x1, x3);
            out[12 + j] = _mm512_shuffle_f32x4::<0xDD>(x1, x3);
        }
        out
    }
}

/// The AVX2 tile (x86-64-v3 without AVX-512). Its 16 registers hold 12 accumulators of 8
/// channels (2 blocks × 3 pixels), 3 broadcasts and one weight vector; a tile of 6 pixels × 1
/// block, 6 broadcasts per 12 multiply-adds, ran at half the speed on Zen 3, where each
/// broadcast from memory seems to cost about two multiply-adds. A tile that few pixels wide
/// cannot keep its sums over every tap of a deep layer while the weights stream from L2 or L3
/// (ResNet-18's 512-channel 3 × 3 layers have 9.4 MB of them), so the sums of a band of up to
/// `BAND` output pixels × 64 channels wait in a 16 KiB stack buffer, and the taps are walked in
/// chunks of at most `CHUNK` whose weights (16 KiB) stay in L1 for every tile of the band
/// (MLAS's NCHWc loop order): each chunk reloads a tile's sums, adds its taps in `(ic, ky, kx)`
/// order and stores them back. The sums start at the bias and take the AVX-512 tile's fused
/// multiply-adds in its order, so the two give the same bits.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{clip, Tile, BLOCK, TILE_BLOCKS};
    use crate::nn::depthwise_channels::avx2::transpose8;

    /// Output pixels whose sums the band buffer holds.
    const BAND: usize = 64;
    /// Channels per band-buffer row: the widest weight tile's.
    const ROW: usize = TILE_BLOCKS * BLOCK;
    /// Taps per chunk (a run of `(ic, ky, kx)` taps in order): 64 taps of 64 channels are
    /// 16 KiB of weights.
    const CHUNK: usize = 64;

    /// [`super::rows_portable`] with `__m256` fused multiply-adds over bands and chunks.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn rows(t: &Tile<'_>, tb: usize, y: &mut [f32]) {
        let g = t.g;
        let ohw = g.oh * g.ow;
        let taps = g.kh * g.kw;
        let mut band = [0.0f32; BAND * ROW];
        // Input offsets of the band's pixels' windows and of the chunk's taps.
        let mut px = [0usize; BAND];
        let mut tap = [0usize; CHUNK];
        let mut q0 = 0;
        while q0 < ohw {
            let n = BAND.min(ohw - q0);
            // Offsets by counting rows and columns rather than dividing (here and for the taps).
            let (mut oy, mut ox) = (q0 / g.ow, q0 % g.ow);
            for o in px.iter_mut().take(n) {
                *o = oy * g.sh * g.row + ox * g.sw;
                ox += 1;
                if ox == g.ow {
                    (oy, ox) = (oy + 1, 0);
                }
            }
            // Chunks as even as possible (72 taps as 36 + 36, not 64 + 8: each chunk reloads
            // and stores every tile's sums).
            let chunk = g.k.div_ceil(g.k.div_ceil(CHUNK));
            let mut t0 = 0;
            while t0 < g.k {
                let nt = chunk.min(g.k - t0);
                let (ic, r) = (t0 / taps, t0 % taps);
                let (mut ic, mut ky, mut kx) = (ic, r / g.kw, r % g.kw);
                for o in tap.iter_mut().take(nt) {
                    *o = ic * g.plane + ky * g.dh * g.row + kx * g.dw;
                    kx += 1;
                    if kx == g.kw {
                        (ky, kx) = (ky + 1, 0);
                        if ky == g.kh {
                            (ic, ky) = (ic + 1, 0);
                        }
                    }
                }
                // The next chunk's weights (the first's after the last, for the next band)
                // are prefetched into L1 a few lines before each tile: in a network they come
                // from DRAM or L3, and a chunk's tiles take long enough to hide that.
                let next = (t0 + nt) % g.k;
                let lines = chunk.min(g.k - next) * tb;
                let tiles = tb / 2 * n.div_ceil(3) + tb % 2 * n.div_ceil(6);
                let per = lines.div_ceil(tiles);
                let mut line = 0;
                let wnext = t.w.as_ptr().wrapping_add(next * tb * BLOCK);
                // All `tb` blocks of the chunk while its weights are in L1: pairs of blocks
                // (4 vectors × 3 pixels), then an odd last block (2 vectors × 6 pixels).
                let mut s = 0;
                while s < tb {
                    let c = Chunk {
                        tb,
                        s,
                        t0,
                        taps: &tap[..nt],
                        px: &px[..n],
                    };
                    let pair = tb - s >= 2;
                    let mut i = 0;
                    while i < n {
                        for _ in 0..per.min(lines - line) {
                            // A prefetch reads nothing and never faults; the line lies inside
                            // `w` (the next chunk's `lines` lines of `tb` blocks).
                            _mm_prefetch::<_MM_HINT_T0>(
                                wnext.wrapping_add(line * BLOCK).cast::<i8>(),
                            );
                            line += 1;
                        }
                        i += match (pair, n - i) {
                            (true, 3..) => tile::<2, 3>(t, &c, i, &mut band),
                            (true, 2) => tile::<2, 2>(t, &c, i, &mut band),
                            (true, _) => tile::<2, 1>(t, &c, i, &mut band),
                            (_, 6..) => tile::<1, 6>(t, &c, i, &mut band),
                            (_, 5) => tile::<1, 5>(t, &c, i, &mut band),
                            (_, 4) => tile::<1, 4>(t, &c, i, &mut band),
                            (_, 3) => tile::<1, 3>(t, &c, i, &mut band),
                            (_, 2) => tile::<1, 2>(t, &c, i, &mut band),
                            _ => tile::<1, 1>(t, &c, i, &mut band),
                        };
                    }
                    s += if pair { 2 } else { 1 };
                }
                t0 += nt;
            }
            write_band(t, tb, q0, n, &band, y);
            q0 += n;
        }
    }

    /// Which sums a tile adds to: blocks `s .. s + NB` of the `tb` in the weights' layout,
    /// taps `t0 ..` at input offsets `taps`, band pixels at input offsets `px`.
    struct Chunk<'a> {
        tb: usize,
        s: usize,
        t0: usize,
        taps: &'a [usize],
        px: &'a [usize],
    }

    /// Adds chunk `c`'s taps into the sums of band pixels `i .. i + P` (row-major over the
    /// output plane, possibly across rows) for `NB` blocks; returns `P`.
    #[inline(always)]
    fn tile<const NB: usize, const P: usize>(
        t: &Tile<'_>,
        c: &Chunk<'_>,
        i: usize,
        band: &mut [f32; BAND * ROW],
    ) -> usize {
        let off: [usize; P] = core::array::from_fn(|p| c.px[i + p]);
        let wstep = c.tb * BLOCK;
        let w0 = c.t0 * wstep + c.s * BLOCK;
        let nt = c.taps.len();
        // Input offsets grow with the pixel (a row's last window ends before the next row's
        // first one starts) and with the tap, so the last pixel's last tap is the highest
        // read.
        assert!(
            nt > 0
                && off[P - 1] + c.taps[nt - 1] < t.x.len()
                && (c.t0 + nt - 1) * wstep + (c.s + NB) * BLOCK <= t.w.len()
                && (i + P) * ROW <= band.len()
                && c.s + NB <= c.tb
        );
        // SAFETY: the checks above bound every read of `x`, of `w` (the last tap's `NB`
        // blocks) and every access to `band`; AVX2 and FMA are enabled by the caller's
        // `target_feature`.
        unsafe {
            let bp = band.as_mut_ptr().add(i * ROW + c.s * BLOCK);
            let mut acc: [[__m256; 4]; P] = [[_mm256_setzero_ps(); 4]; P];
            for (p, a) in acc.iter_mut().enumerate() {
                for (v, av) in a.iter_mut().enumerate().take(2 * NB) {
                    *av = if c.t0 == 0 {
                        _mm256_loadu_ps(t.bias[c.s + v / 2].as_ptr().add(v % 2 * 8))
                    } else {
                        _mm256_loadu_ps(bp.add(p * ROW + v * 8))
                    };
                }
            }
            let xp: [*const f32; P] = core::array::from_fn(|p| t.x.as_ptr().add(off[p]));
            let mut wp = t.w.as_ptr().add(w0);
            for &o in c.taps {
                // The broadcasts first, then one weight vector at a time: 12 accumulators,
                // `P` broadcasts and one weight fit 16 registers (all weights first spilled
                // accumulators).
                let xv: [__m256; P] = core::array::from_fn(|p| _mm256_broadcast_ss(&*xp[p].add(o)));
                for v in 0..2 * NB {
                    let wv = _mm256_loadu_ps(wp.add(v * 8));
                    for (a, &xv) in acc.iter_mut().zip(&xv) {
                        a[v] = _mm256_fmadd_ps(xv, wv, a[v]);
                    }
                }
                wp = wp.add(wstep);
            }
            for (p, a) in acc.iter().enumerate() {
                for (v, &av) in a.iter().enumerate().take(2 * NB) {
                    _mm256_storeu_ps(bp.add(p * ROW + v * 8), av);
                }
            }
        }
        P
    }

    /// Writes the band's sums (`n` pixels from `q0`, the `tb` blocks), clamped, into
    /// the NCHW planes of `y`: 8 × 8 transpositions where 8 pixels and 8 channels are whole,
    /// value by value elsewhere; channels past the group's are skipped.
    #[target_feature(enable = "avx2,fma")]
    fn write_band(
        t: &Tile<'_>,
        tb: usize,
        q0: usize,
        n: usize,
        band: &[f32; BAND * ROW],
        y: &mut [f32],
    ) {
        let g = t.g;
        let ohw = g.oh * g.ow;
        let (lo, hi) = (_mm256_set1_ps(g.clamp.0), _mm256_set1_ps(g.clamp.1));
        for v in 0..2 * tb {
            let cv = t.c0 + v * 8;
            let lanes = 8.min(g.ocg.saturating_sub(cv));
            if lanes == 0 {
                break;
            }
            let mut i = 0;
            if lanes == 8 {
                assert!((cv + 8) * ohw <= y.len() && q0 + n <= ohw && n <= BAND);
                while i + 8 <= n {
                    // SAFETY: rows `i .. i + 8` of the band lie inside it (`n ≤ BAND`), and
                    // pixels `q0 + i .. + 8` of the 8 channels' planes inside `y` (checked);
                    // AVX2 is enabled by the caller.
                    unsafe {
                        let r: [__m256; 8] = core::array::from_fn(|j| {
                            _mm256_loadu_ps(band.as_ptr().add((i + j) * ROW + v * 8))
                        });
                        for (j, z) in transpose8(r).into_iter().enumerate() {
                            // max(lo, x), min(hi, x) return `x` for NaN and keep −0.0: `clip`.
                            let z = _mm256_min_ps(hi, _mm256_max_ps(lo, z));
                            _mm256_storeu_ps(y.as_mut_ptr().add((cv + j) * ohw + q0 + i), z);
                        }
                    }
                    i += 8;
                }
            }
            for l in 0..lanes {
                let out = &mut y[(cv + l) * ohw + q0..][..n];
                for (k, o) in out.iter_mut().enumerate().skip(i) {
                    *o = clip(band[k * ROW + v * 8 + l], g.clamp);
                }
            }
        }
    }
}

#[cfg(all(test, any(target_arch = "x86", target_arch = "x86_64")))]
mod tests {
    use std::vec;

    /// The AVX-512 re-layout writes every element of the pass as the portable one does: ragged
    /// tap counts (a masked last square) and row counts (missing rows' lanes zero).
    #[test]
    #[allow(unsafe_code)]
    fn avx512_pass_relayout_matches_the_portable_one() {
        if !super::fast() {
            std::println!(
                "avx512_pass_relayout_matches_the_portable_one: skipped, x86-64-v4 not active"
            );
            return;
        }
        for k in [1, 9, 15, 16, 17, 27, 147, 363] {
            for rows in [1usize, 2, 15, 16, 17, 31, 33, 48, 63, 64] {
                let tb = rows.div_ceil(super::BLOCK);
                let src: std::vec::Vec<f32> = (0..rows * k).map(|i| i as f32 + 0.5).collect();
                let mut want = vec![f32::NAN; k * tb * super::BLOCK];
                let mut got = vec![f32::NAN; k * tb * super::BLOCK + 1];
                super::prepare_pass_portable(&src, k, tb, &mut want);
                // SAFETY: x86-64-v4 is active (checked above).
                unsafe { super::avx512::prepare_pass(&src, k, tb, &mut got[..want.len()]) };
                assert!(
                    got[want.len()].is_nan(),
                    "k {k}, rows {rows}: wrote past the pass"
                );
                for (i, (a, b)) in want.iter().zip(&got).enumerate() {
                    assert_eq!(a.to_bits(), b.to_bits(), "k {k}, rows {rows}, element {i}");
                }
            }
        }
    }
}
