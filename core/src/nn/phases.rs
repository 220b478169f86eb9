//! Convolutions as phase images times the weights in place, for
//! [`ConvMethod::Im2col`](super::conv::ConvMethod::Im2col): stride 2 on AVX-512 (ResNet-18's
//! 3×3 / 2 layers; not 1×1 kernels), stride 1 with few weights on AVX2 (SqueezeNet's 3×3
//! expand layers). With 28², 14² and 7² outputs, im2col lowered 2.25 times the input per
//! layer and the GEMM then packed the whole weight matrix again on every call (4.5 MiB for
//! 256 → 512), and the blocked method re-laid the weights out and copied the padded input
//! before transposing its tiles into the NCHW planes.
//!
//! Here each input channel of a group is first split, once per call, into its (up to) four
//! zero-padded phase images: phase `(py, px)` holds padded rows `py, py + 2, …` and columns
//! `px, px + 2, …`, `ow + (kw − 1)/2` columns per row (at stride 1 one image, the padded
//! input, `ow + kw − 1` columns per row). Output `(oy, ox)`'s tap `(ky, kx)` is then element
//! `(oy + ky/2, ox + kx/2)` of phase `(ky mod 2, kx mod 2)`, so over the grid of `oh` rows of
//! that width (the last `(kw − 1)/2` columns of each row not outputs), 16 consecutive grid
//! positions read 16 consecutive phase elements: one unaligned load per tap.
//! A register tile of 8 output channels × 3 vectors of 16 grid positions (6 × 4 on grids of at
//! most 4 vectors) takes, per tap, 3 input vectors and 8 weights broadcast straight from the
//! `c_out × K` weights (no re-layout), adds from the bias in `(ic, ky, kx)` order with fused
//! multiply-adds (the blocked method's operations and order: the same bits), clamps to the
//! layer's ReLU / ReLU6 / Clip and compresses each vector's output lanes into the channel
//! plane (no transpose). The phase images take at most the im2col workspace ([`applies`]).
//! The AVX2 kernels do the same 8 lanes wide, in tiles of 6 channels × 2 vectors.
//!
//! x86-64 with AVX-512 (x86-64-v4 active) or AVX2 and FMA (x86-64-v3); elsewhere im2col runs
//! these layers.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;
use super::gemm::gemm_pack_len;

/// Grid positions per AVX-512 vector.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code) // Read by the AVX-512 kernels only.
)]
const LANES: usize = 16;
/// Elements after each phase image: the grid's last vector reads up to 15 positions past the
/// grid plus the largest column offset of a tap (`(kw − 1)/2 ≤ 15`), and a split row's last
/// 16-element store writes up to 15 past its row.
const SLACK: usize = 32;
/// Most taps per input channel (`kh·kw`): their phase offsets are a stack table.
const MAX_TAPS: usize = 64;

/// Phase-image geometry of a stride-1 or stride-2 shape.
#[derive(Clone, Copy)]
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code) // Read by the x86 kernels only.
)]
struct Phases {
    /// The stride, 1 or 2 (1: one zero-padded copy of each channel).
    st: usize,
    /// Phases in each direction (`min(st, kh)`, `min(st, kw)`).
    sy: usize,
    sx: usize,
    /// Rows and row length of a phase image (also the grid's row length).
    rows: usize,
    row: usize,
    /// Elements from one phase image to the next (`rows·row + SLACK`).
    stride: usize,
}

impl Phases {
    /// For `s`, of stride 1 or 2 both ways.
    const fn new(s: &Conv2dShape, d: &ConvDims) -> Self {
        let st = s.stride_w;
        let (sy, sx) = (
            if s.kh < st { s.kh } else { st },
            if s.kw < st { s.kw } else { st },
        );
        let (rows, row) = (d.out_h + (s.kh - 1) / st, d.out_w + (s.kw - 1) / st);
        Phases {
            st,
            sy,
            sx,
            rows,
            row,
            stride: rows * row + SLACK,
        }
    }

    /// Elements of one group's phase images, `c_in/groups · sy · sx · stride`.
    fn len(&self, s: &Conv2dShape) -> Option<usize> {
        (s.c_in / s.groups)
            .checked_mul(self.sy * self.sx)?
            .checked_mul(self.stride)
    }
}

/// Whether this module's stride-2 kernels compute `s` (on any CPU; [`fast`] adds the level):
/// stride 2 both ways, a kernel larger than 1×1, no dilation, padding smaller than the kernel,
/// at most [`MAX_TAPS`] taps per channel and kernel rows of at most 31 columns, and one
/// group's phase images within the im2col workspace (`K·out_h·out_w` plus GEMM packing),
/// which [`conv`] uses instead.
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.stride_h == 2 && s.stride_w == 2 && s.kw < 32 && fits(s, d)
}

/// Whether the AVX2 kernels compute `s`: stride 1 both ways, a kernel larger than 1×1 with
/// rows of at most [`MAX_KW_STRIDE1`] columns, no dilation, padding smaller than the kernel, at
/// most [`MAX_TAPS`] taps per channel and [`MAX_WEIGHTS_STRIDE1`] weights per group, the
/// padded copy of one group within the im2col workspace.
pub(crate) fn applies_stride1(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.stride_h == 1
        && s.stride_w == 1
        && s.kw <= MAX_KW_STRIDE1
        && (s.c_out / s.groups).saturating_mul(d.k) <= MAX_WEIGHTS_STRIDE1
        && fits(s, d)
}

/// Most weights per group (`c_out/g · K`) at stride 1 on AVX2: every column of tiles reads a
/// block's weights again, which im2col's GEMM packs once. On SqueezeNet's expand layers
/// (AMD Zen 3, `nn_bench`, min of 4 alternating rounds against im2col) 9 216 weights ran
/// 1.36× faster, 36 864 1.33×, 82 944 1.18×, 147 456 0.98×; ResNet-18's stride-2 layers
/// (73 728 to 1.2 million weights, the AVX2 tile at stride 2) ran at 0.81–0.97×, so AVX2 takes
/// stride 1 only.
const MAX_WEIGHTS_STRIDE1: usize = 96 * 1024;

/// Widest kernel rows at stride 1: the grid's last vector reads up to 7 elements past the
/// grid plus the largest column offset of a tap (`kw − 1`), within [`SLACK`].
const MAX_KW_STRIDE1: usize = 16;

/// The conditions [`applies`] and [`applies_stride1`] share.
fn fits(s: &Conv2dShape, d: &ConvDims) -> bool {
    if !(s.dilation_h == 1
        && s.dilation_w == 1
        && s.pad_top.max(s.pad_bottom) < s.kh
        && s.pad_left.max(s.pad_right) < s.kw
        && s.kh * s.kw <= MAX_TAPS)
    {
        return false;
    }
    let ohw = d.out_h * d.out_w;
    if s.kh * s.kw == 1 {
        // 1×1 (ResNet-18's shortcuts): with 64–256 taps the tile's fixed costs weigh, and
        // the blocked method / the GEMM were as fast or faster (in the network, 64 → 128
        // on 28²: 0.086–0.113 against blocked 0.085–0.093 ms; 256 → 512 on 7²: 0.12–0.15
        // against the GEMM's 0.096–0.103).
        return false;
    }
    let im2col =
        d.k.checked_mul(ohw)
            .and_then(|l| l.checked_add(gemm_pack_len(s.c_out / s.groups, ohw, d.k)));
    matches!((Phases::new(s, d).len(s), im2col), (Some(p), Some(i)) if p <= i)
}

/// Whether [`conv`] runs `s` on this CPU: [`applies`] with x86-64-v4 active (AVX-512), or
/// [`applies_stride1`] with x86-64-v3 active (AVX2 and FMA).
pub(crate) fn fast(s: &Conv2dShape, d: &ConvDims) -> bool {
    use crate::cpu::{active, Level};
    match active() {
        Level::X86V4 => applies(s, d),
        Level::X86V3 => applies_stride1(s, d),
        Level::Baseline => false,
    }
}

/// Convolves every image and group of `input` with `weights` into `output`, adding `bias` and
/// clamping to `clamp`, with the phase images in `workspace`, and returns `true`, where
/// [`fast`]; returns `false` and writes nothing otherwise. The caller has checked every length
/// (the workspace against the im2col workspace, which [`applies`] bounds the phases by).
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    workspace: &mut [f32],
) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fast(s, d) {
        let (cg, ocg) = (s.c_in / s.groups, s.c_out / s.groups);
        let (in_g, out_g, w_g) = (cg * s.h * s.w, ocg * d.out_h * d.out_w, ocg * d.k);
        let ph = Phases::new(s, d);
        let len = ph.len(s).unwrap_or(usize::MAX);
        let ws = &mut workspace[..len];
        for b in 0..s.n {
            for g in 0..s.groups {
                let x = &input[(b * s.groups + g) * in_g..][..in_g];
                let w = &weights[g * w_g..][..w_g];
                let y = &mut output[(b * s.groups + g) * out_g..][..out_g];
                let bias = bias.map(|v| &v[g * ocg..][..ocg]);
                #[allow(unsafe_code)]
                if super::blocked::fast() {
                    // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL, AVX2 and FMA
                    // supported, `cpu::detect`).
                    unsafe {
                        avx512::split(s, &ph, x, ws);
                        avx512::multiply(s, d, &ph, ws, w, bias, clamp, y);
                    }
                } else {
                    // SAFETY: x86-64-v3 is active (AVX2 and FMA supported, `cpu::detect`).
                    unsafe {
                        avx2::split(s, &ph, x, ws);
                        avx2::multiply(s, d, &ph, ws, w, bias, clamp, y);
                    }
                }
            }
        }
        return true;
    }
    let _ = (s, d, input, weights, bias, clamp, output, workspace);
    false
}

/// What every tile reads: the phase images, the group's weights and bias, and where each
/// tap of input channel 0 lies relative to a grid position.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code) // Read by the x86 kernels only.
)]
struct Tile<'a> {
    ph: &'a Phases,
    x: &'a [f32],
    w: &'a [f32],
    bias: Option<&'a [f32]>,
    /// Phase-image offset of tap `ky·kw + kx` (input channel 0).
    off: [usize; MAX_TAPS],
    taps: usize,
    cg: usize,
    k: usize,
    /// Output row length and plane size.
    ow: usize,
    ohw: usize,
    /// Grid positions (`oh` rows of `ph.row`).
    grid: usize,
    clamp: Clamp,
}

#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code) // Called by the x86 kernels only.
)]
impl<'a> Tile<'a> {
    /// One group's tiles: phase images `x`, weights `w` (`ocg × K`, as given), `bias`, an
    /// output of `y_len` elements. Checks once, for vectors of `lanes` grid positions, that
    /// the highest element any tile reads (the last channel's phase images at the largest tap
    /// offset plus the last vector's last lane) lies inside `x`, and that the weights and the
    /// output planes are whole: panics otherwise.
    #[allow(clippy::too_many_arguments)]
    fn new(
        s: &Conv2dShape,
        d: &ConvDims,
        ph: &'a Phases,
        x: &'a [f32],
        w: &'a [f32],
        bias: Option<&'a [f32]>,
        clamp: Clamp,
        y_len: usize,
        lanes: usize,
    ) -> Self {
        let (cg, ocg, st) = (s.c_in / s.groups, s.c_out / s.groups, ph.st);
        let taps = s.kh * s.kw;
        assert!(taps <= MAX_TAPS && d.k == cg * taps);
        let mut off = [0; MAX_TAPS];
        for ky in 0..s.kh {
            for kx in 0..s.kw {
                let image = (ky % st) * ph.sx + kx % st;
                off[ky * s.kw + kx] = image * ph.stride + (ky / st) * ph.row + kx / st;
            }
        }
        let grid = d.out_h * ph.row;
        let ohw = d.out_h * d.out_w;
        let last = (cg - 1) * ph.sy * ph.sx * ph.stride + off[..taps].iter().max().unwrap_or(&0);
        assert!(
            last + grid.div_ceil(lanes) * lanes <= x.len()
                && w.len() >= ocg * d.k
                && y_len >= ocg * ohw
                && bias.is_none_or(|b| b.len() >= ocg)
        );
        Tile {
            ph,
            x,
            w,
            bias,
            off,
            taps,
            cg,
            k: d.k,
            ow: d.out_w,
            ohw,
            grid,
            clamp,
        }
    }

    /// Per grid vector `v0 .. v0 + n` (`n ≤ 4`) of `lanes ≤ 16` positions: its output lanes
    /// (grid columns below `ow`, rows below `oh`) and the plane offset of the first, from its
    /// first position's row and column (one division per vector); no lanes for a vector of
    /// padding columns only. Computed once per column of tiles, not per tile.
    fn output_lanes(&self, v0: usize, n: usize, lanes: usize) -> [(u16, usize); 4] {
        let row = self.ph.row;
        core::array::from_fn(|v| {
            let g0 = (v0 + v) * lanes;
            if v >= n || g0 >= self.grid {
                return (0, 0);
            }
            let (mut r, mut col) = (g0 / row, g0 % row);
            let (mut m, mut first) = (0u16, None);
            for l in 0..lanes.min(self.grid - g0) {
                if col < self.ow {
                    m |= 1 << l;
                    first = first.or(Some(r * self.ow + col));
                }
                col += 1;
                if col == row {
                    (r, col) = (r + 1, 0);
                }
            }
            (m, first.unwrap_or(0))
        })
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims, Phases, Tile, LANES};

    /// Lanes `lo..hi` of a vector set (clamped to `0..16`).
    #[inline(always)]
    fn lanes(lo: isize, hi: isize) -> __mmask16 {
        let (lo, hi) = (lo.clamp(0, 16), hi.clamp(0, 16));
        if hi <= lo {
            return 0;
        }
        (((1u32 << hi) - 1) & !((1u32 << lo) - 1)) as __mmask16
    }

    /// Splits one group's `cg × h × w` input `x` into its phase images in `ws` (at least
    /// `cg·sy·sx·stride` elements): row `i` of phase `(py, px)` is padded row `2i + py`
    /// (input row `2i + py − pad_top`, zeros outside the input), element `j` padded column
    /// `2j + px`. 16 elements of both phases at a time: two masked loads of the 32 input
    /// columns they cover and one two-source permute per phase; rows are written in increasing order, so the up to 15
    /// elements a row's last store writes past its end are overwritten by the next row (or
    /// land in the image's slack).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn split(s: &Conv2dShape, ph: &Phases, x: &[f32], ws: &mut [f32]) {
        let cg = s.c_in / s.groups;
        let (plane, row, rows) = (s.h * s.w, ph.row, ph.rows);
        let span = rows * row;
        assert!(
            x.len() >= cg * plane
                && ws.len() >= cg * ph.sy * ph.sx * ph.stride
                && ph.stride >= span + LANES
        );
        // SAFETY: 64-byte unaligned loads of 16-element `i32` arrays.
        let idx: [__m512i; 2] = core::array::from_fn(|f| {
            let i: [i32; 16] = core::array::from_fn(|j| (2 * j + f) as i32);
            unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
        });
        let wp = ws.as_mut_ptr();
        for ic in 0..cg {
            let xc = &x[ic * plane..][..plane];
            // Rows `i` outer, phases inner: the input rows in order (for the prefetchers).
            for i in 0..rows {
                for py in 0..ph.sy {
                    let iy = (2 * i + py).wrapping_sub(s.pad_top);
                    let at = (ic * ph.sy + py) * ph.sx * ph.stride + i * row;
                    // SAFETY: each store writes elements `at + px·stride + j0 .. + 16` with
                    // `j0 < row`, below the image's `span` elements plus 16 ≤ its slack
                    // (checked above); loads read only lanes of columns inside `0..w` of
                    // input row `iy < h` (the masked-off lanes are not accessed); AVX-512 F
                    // is enabled.
                    unsafe {
                        let dst = wp.add(at);
                        if iy >= s.h {
                            for px in 0..ph.sx {
                                for j0 in (0..row).step_by(LANES) {
                                    let z = _mm512_setzero_ps();
                                    _mm512_storeu_ps(dst.add(px * ph.stride + j0), z);
                                }
                            }
                            continue;
                        }
                        let rp = xc.as_ptr().add(iy * s.w);
                        for j0 in (0..row).step_by(LANES) {
                            // Padded columns 2·j0 .. + 32: input columns c0 .. c0 + 32 (c0
                            // may be negative), both phases from the same two loads.
                            let c0 = (2 * j0) as isize - s.pad_left as isize;
                            let v: [__m512; 2] = core::array::from_fn(|h| {
                                let a = c0 + (LANES * h) as isize;
                                let m = lanes(-a, s.w as isize - a);
                                _mm512_maskz_loadu_ps(m, rp.wrapping_offset(a))
                            });
                            for (px, &ix) in idx.iter().enumerate().take(ph.sx) {
                                let e = _mm512_permutex2var_ps(v[0], ix, v[1]);
                                _mm512_storeu_ps(dst.add(px * ph.stride + j0), e);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Convolves one group's phase images `x` with its weights `w` (`ocg × K`, as given)
    /// into `y` (`ocg` planes), adding `bias` and clamping to `clamp`.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn multiply(
        s: &Conv2dShape,
        d: &ConvDims,
        ph: &Phases,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let t = Tile::new(s, d, ph, x, w, bias, clamp, y.len(), LANES);
        let (ocg, nv) = (s.c_out / s.groups, t.grid.div_ceil(LANES));
        // 6 × 4 where the whole grid is at most 4 vectors (each weight read once), else 8 × 3.
        let (tc, tv) = if nv <= 4 { (6, nv) } else { (8, 3) };
        let mut v0 = 0;
        while v0 < nv {
            let n = tv.min(nv - v0);
            let outs = t.output_lanes(v0, n, LANES);
            let mut c0 = 0;
            while c0 < ocg {
                let nc = tc.min(ocg - c0);
                macro_rules! dispatch {
                    ($($c:literal),*) => {
                        match (nc, n) {
                            $(($c, 1) => tile::<$c, 1>(&t, c0, v0, &outs, y),
                              ($c, 2) => tile::<$c, 2>(&t, c0, v0, &outs, y),
                              ($c, 3) => tile::<$c, 3>(&t, c0, v0, &outs, y),
                              ($c, _) => tile::<$c, 4>(&t, c0, v0, &outs, y),)*
                            _ => unreachable!(),
                        }
                    };
                }
                dispatch!(1, 2, 3, 4, 5, 6, 7, 8);
                c0 += nc;
            }
            v0 += n;
        }
    }

    /// Output channels `c0 .. c0 + C` at grid vectors `v0 .. v0 + V` (all inside: checked by
    /// [`multiply`]; `outs`: their [`super::Tile::output_lanes`]).
    #[inline(always)]
    fn tile<const C: usize, const V: usize>(
        t: &Tile<'_>,
        c0: usize,
        v0: usize,
        outs: &[(u16, usize); 4],
        y: &mut [f32],
    ) {
        let (img, k) = (t.ph.sy * t.ph.sx * t.ph.stride, t.k);
        // SAFETY: `multiply` checked that every load below (phase images up to the last
        // channel's largest tap offset plus `nv·16` elements, weights of channels below
        // `ocg`) lies inside `x` and `w`; the stores are checked in `store`. AVX-512 F and
        // FMA are enabled by the caller's `target_feature`.
        unsafe {
            let xs = t.x.as_ptr().add(v0 * LANES);
            let ws = t.w.as_ptr().add(c0 * k);
            let mut acc: [[__m512; V]; C] = core::array::from_fn(|c| {
                let b = t.bias.map_or(0.0, |b| b[c0 + c]);
                [_mm512_set1_ps(b); V]
            });
            let mut tap = 0;
            for ic in 0..t.cg {
                let xc = xs.add(ic * img);
                for &o in &t.off[..t.taps] {
                    let xp = xc.add(o);
                    let xv: [__m512; V] =
                        core::array::from_fn(|v| _mm512_loadu_ps(xp.add(v * LANES)));
                    for (c, a) in acc.iter_mut().enumerate() {
                        let wv = _mm512_set1_ps(*ws.add(c * k + tap));
                        for (av, &x) in a.iter_mut().zip(&xv) {
                            *av = _mm512_fmadd_ps(x, wv, *av);
                        }
                    }
                    tap += 1;
                }
            }
            // max(lo, x) then min(hi, x): the blocked method's clamp (same bits).
            let (lo, hi) = (_mm512_set1_ps(t.clamp.0), _mm512_set1_ps(t.clamp.1));
            for a in acc.iter_mut() {
                for av in a.iter_mut() {
                    *av = _mm512_min_ps(hi, _mm512_max_ps(lo, *av));
                }
            }
            // A copy by constant indices for the store's loops: a variable index into `acc`
            // would keep the accumulators in memory through the tap loop.
            let out: [[__m512; V]; C] =
                core::array::from_fn(|c| core::array::from_fn(|v| acc[c][v]));
            store(t, c0, outs, &out, y);
        }
    }

    /// Writes the tile's clamped accumulators, each vector's output lanes (`outs`) compressed
    /// into its channel plane: whole 16-lane stores (their extra lanes are overwritten by the
    /// next vector, stored later), masked ones where 16 lanes would pass the plane's end.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline(never)]
    fn store<const C: usize, const V: usize>(
        t: &Tile<'_>,
        c0: usize,
        outs: &[(u16, usize); 4],
        acc: &[[__m512; V]; C],
        y: &mut [f32],
    ) {
        // SAFETY: each store writes `y[(c0 + c)·ohw + o ..]` with `c0 + c < ocg` (`multiply`
        // checked `ocg·ohw ≤ y.len()`): `o + 16 ≤ ohw` for whole stores, `o + count ≤ ohw`
        // lanes for masked ones. AVX-512 F is enabled by the caller.
        unsafe {
            for (v, &(m, o)) in outs.iter().enumerate().take(V) {
                if m == 0 {
                    continue;
                }
                let count = m.count_ones() as usize;
                let whole = o + LANES <= t.ohw;
                for (c, a) in acc.iter().enumerate() {
                    let r = _mm512_maskz_compress_ps(m, a[v]);
                    let dst = y.as_mut_ptr().add((c0 + c) * t.ohw + o);
                    if whole {
                        _mm512_storeu_ps(dst, r);
                    } else {
                        _mm512_mask_storeu_ps(dst, lanes(0, count as isize), r);
                    }
                }
            }
        }
    }
}

/// The AVX2 kernels, stride 1: 8 grid positions per vector, tiles of 6 channels × 2 vectors
/// (12 accumulators, 2 input vectors and a broadcast weight in the 16 registers; 4 × 3 needed
/// all 16, and LLVM spilled an accumulator), the lanes of each vector's outputs packed by a
/// permute from a table of the 256 lane masks, blocks of output channels whose weights stay
/// in the L2 cache.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims, Phases, Tile};
    use crate::nn::depthwise::avx2::below;

    /// Grid positions per vector.
    const LANES: usize = 8;
    /// Channels and vectors per register tile.
    const TILE_C: usize = 6;
    const TILE_V: usize = 2;
    /// Weights per block of output channels (128 KiB).
    const BLOCK_WEIGHTS: usize = 32 * 1024;

    /// For each mask of output lanes, the permute that packs them to the front (in order).
    const PACK: [[i32; 8]; 256] = {
        let mut t = [[0i32; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut l, mut n) = (0i32, 0usize);
            while l < 8 {
                if m & (1 << l) != 0 {
                    t[m][n] = l;
                    n += 1;
                }
                l += 1;
            }
            m += 1;
        }
        t
    };

    /// Copies one group's `cg × h × w` input `x` into its zero-padded images in `ws` (at
    /// least `cg·stride` elements, stride 1): row `i` is padded row `i` (input row
    /// `i − pad_top` between `pad_left` and `pad_right` zeros; zeros outside the input).
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn split(s: &Conv2dShape, ph: &Phases, x: &[f32], ws: &mut [f32]) {
        let cg = s.c_in / s.groups;
        let (plane, row) = (s.h * s.w, ph.row);
        assert!(
            ph.st == 1
                && x.len() >= cg * plane
                && ws.len() >= cg * ph.stride
                && row == s.pad_left + s.w + s.pad_right
        );
        for ic in 0..cg {
            let xc = &x[ic * plane..][..plane];
            for i in 0..ph.rows {
                let dst = &mut ws[ic * ph.stride + i * row..][..row];
                let iy = i.wrapping_sub(s.pad_top);
                if iy >= s.h {
                    dst.fill(0.0);
                    continue;
                }
                let (left, rest) = dst.split_at_mut(s.pad_left);
                let (mid, right) = rest.split_at_mut(s.w);
                left.fill(0.0);
                mid.copy_from_slice(&xc[iy * s.w..][..s.w]);
                right.fill(0.0);
            }
        }
    }

    /// Convolves one group's phase images `x` with its weights `w` (`ocg × K`, as given)
    /// into `y` (`ocg` planes), adding `bias` and clamping to `clamp`.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn multiply(
        s: &Conv2dShape,
        d: &ConvDims,
        ph: &Phases,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let t = Tile::new(s, d, ph, x, w, bias, clamp, y.len(), LANES);
        let (ocg, nv) = (s.c_out / s.groups, t.grid.div_ceil(LANES));
        // Blocks of output channels whose weights stay in the L2 cache while every column of
        // tiles passes over them.
        let block = (BLOCK_WEIGHTS / t.k.max(1)).max(1).next_multiple_of(TILE_C);
        for cb in (0..ocg).step_by(block) {
            let ce = ocg.min(cb + block);
            let mut v0 = 0;
            while v0 < nv {
                let n = TILE_V.min(nv - v0);
                let outs = t.output_lanes(v0, n, LANES);
                let mut c0 = cb;
                while c0 < ce {
                    let nc = TILE_C.min(ce - c0);
                    macro_rules! dispatch {
                        ($($c:literal),*) => {
                            match (nc, n) {
                                $(($c, 1) => tile::<$c, 1>(&t, c0, v0, &outs, y),
                                  ($c, _) => tile::<$c, 2>(&t, c0, v0, &outs, y),)*
                                _ => unreachable!(),
                            }
                        };
                    }
                    dispatch!(1, 2, 3, 4, 5, 6);
                    c0 += nc;
                }
                v0 += n;
            }
        }
    }

    /// Output channels `c0 .. c0 + C` at grid vectors `v0 .. v0 + V` (all inside: checked by
    /// [`Tile::new`]; `outs`: their [`Tile::output_lanes`]): the AVX-512 tile's arithmetic, in
    /// its order, 8 lanes wide.
    #[inline(always)]
    fn tile<const C: usize, const V: usize>(
        t: &Tile<'_>,
        c0: usize,
        v0: usize,
        outs: &[(u16, usize); 4],
        y: &mut [f32],
    ) {
        let (img, k) = (t.ph.sy * t.ph.sx * t.ph.stride, t.k);
        // SAFETY: `Tile::new` checked that every load below (phase images up to the last
        // channel's largest tap offset plus `nv·8` elements, weights of channels below `ocg`)
        // lies inside `x` and `w`; the stores are checked in `store`. AVX2 and FMA are enabled
        // by the caller's `target_feature`.
        unsafe {
            let xs = t.x.as_ptr().add(v0 * LANES);
            let ws = t.w.as_ptr().add(c0 * k);
            let mut acc: [[__m256; V]; C] = core::array::from_fn(|c| {
                let b = t.bias.map_or(0.0, |b| b[c0 + c]);
                [_mm256_set1_ps(b); V]
            });
            let mut tap = 0;
            for ic in 0..t.cg {
                let xc = xs.add(ic * img);
                for &o in &t.off[..t.taps] {
                    let xp = xc.add(o);
                    let xv: [__m256; V] =
                        core::array::from_fn(|v| _mm256_loadu_ps(xp.add(v * LANES)));
                    for (c, a) in acc.iter_mut().enumerate() {
                        let wv = _mm256_broadcast_ss(&*ws.add(c * k + tap));
                        for (av, &x) in a.iter_mut().zip(&xv) {
                            *av = _mm256_fmadd_ps(x, wv, *av);
                        }
                    }
                    tap += 1;
                }
            }
            // max(lo, x) then min(hi, x): the AVX-512 tile's clamp (same bits).
            let (lo, hi) = (_mm256_set1_ps(t.clamp.0), _mm256_set1_ps(t.clamp.1));
            for a in acc.iter_mut() {
                for av in a.iter_mut() {
                    *av = _mm256_min_ps(hi, _mm256_max_ps(lo, *av));
                }
            }
            // A copy by constant indices for the store's loops: a variable index into `acc`
            // would keep the accumulators in memory through the tap loop.
            let out: [[__m256; V]; C] =
                core::array::from_fn(|c| core::array::from_fn(|v| acc[c][v]));
            store(t, c0, outs, &out, y);
        }
    }

    /// Writes the tile's clamped accumulators, each vector's output lanes (`outs`) packed
    /// to the front into its channel plane: whole 8-lane stores (their extra lanes are
    /// overwritten by the next vector, stored later), masked ones where 8 lanes would pass the
    /// plane's end.
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    fn store<const C: usize, const V: usize>(
        t: &Tile<'_>,
        c0: usize,
        outs: &[(u16, usize); 4],
        acc: &[[__m256; V]; C],
        y: &mut [f32],
    ) {
        // SAFETY: each store writes `y[(c0 + c)·ohw + o ..]` with `c0 + c < ocg` (`Tile::new`
        // checked `ocg·ohw ≤ y.len()`): `o + 8 ≤ ohw` for whole stores, `o + count ≤ ohw`
        // lanes for masked ones. The table is read with an in-range index (`m < 256`). AVX2
        // is enabled here.
        unsafe {
            for (v, &(m, o)) in outs.iter().enumerate().take(V) {
                if m == 0 {
                    continue;
                }
                let count = m.count_ones() as usize;
                let whole = o + LANES <= t.ohw;
                let pack = _mm256_loadu_si256(PACK[usize::from(m)].as_ptr().cast());
                let first = below(count as isize);
                for (c, a) in acc.iter().enumerate() {
                    let r = if m == 0xff {
                        a[v]
                    } else {
                        _mm256_permutevar8x32_ps(a[v], pack)
                    };
                    let dst = y.as_mut_ptr().add((c0 + c) * t.ohw + o);
                    if whole {
                        _mm256_storeu_ps(dst, r);
                    } else {
                        _mm256_maskstore_ps(dst, first, r);
                    }
                }
            }
        }
    }
}
