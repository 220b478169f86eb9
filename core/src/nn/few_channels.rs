//! Direct convolution for first layers: a few input channels (an RGB image), stride 2 to 4,
//! any zero padding, output channels in multiples of 16 (SqueezeNet 1.1's 3 → 64 3×3 stride-2
//! layer, ResNet-18's 3 → 64 7×7 stride-2 one with padding 3, MobileNetV2's 3 → 32 3×3
//! stride-2 one with padding 1). With `K = c_in·kh·kw` as small as 27, the blocked method's
//! register tile (6 pixels × 64 channels) has few taps to amortise its 8 × 16 transposes into
//! the NCHW planes over, and with 112-pixel output rows its outputs (3 MiB for ResNet-18) leave
//! the L2 in partial lines. Here a register holds 16 output pixels of one channel instead: a
//! tile of 3 such vectors × 8 channels (24 accumulators) takes, per tap, 3 input vectors and 8
//! broadcast weights, and is stored straight into the channel planes (whole vectors), with the
//! bias and a ReLU / ReLU6 / Clip clamp applied in registers. The tiles run along the vectors of
//! up to 3 output rows as one sequence (a tile may end one row and start the next), so that a
//! row of 7 vectors (112 pixels) leaves no single-vector rest; each row's last vector is shifted
//! left to end at the row's end (its first lanes recompute, identically, outputs already
//! stored), and a group's last 1 or 2 vectors run as a smaller tile.
//!
//! The input rows a tile reads are first copied, zero-padded and split into `stride` phase rows
//! (phase `f` holds padded columns `f, f + s, f + 2s, …`), into a ring of `kh + s·(R − 1)` rows
//! per input channel on the stack (`R` output rows a group): each input row is split once (and
//! kept while the next output rows need it), and every tap of 16 output pixels is then one
//! unaligned load, with no border case and no de-interleave in the tile loop. The rows the next
//! group splits are prefetched while this group's tiles run.
//!
//! With AVX-512 (x86-64-v4 active) a register holds 16 output pixels and a tile is 3 vectors ×
//! 8 channels; with AVX2 and FMA only (x86-64-v3), 8 pixels and 3 vectors × 4 channels (12 of
//! the 16 registers), the split rows de-interleaved with shuffles at stride 2 and element by
//! element at strides 3 and 4. Both compute each output as the bias plus the taps' products in
//! the same order (fused multiply-adds), so they give the same bits. Elsewhere the convolution
//! methods of [`conv`](super::conv) run these layers.

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;

/// Output channels computed together (one accumulator each).
const CHANNELS: usize = 16;
/// Output pixels of a row per vector.
const PIXELS: usize = 16;
/// Most input channels this path takes: the first layers it is for read 1–4 channels.
pub(crate) const MAX_C_IN: usize = 4;
/// Most taps per output channel (`c_in·kh·kw`, 4 channels of 7 × 7).
const MAX_K: usize = 196;
/// Most weights (`c_out·K`): they are re-laid out tap-major per block of 16 channels on the
/// stack (40 KiB), so that each tap's weights are one pointer plus constants. ResNet-18's first
/// layer has 9 408.
const MAX_WEIGHTS: usize = 10240;
/// Most kernel rows and columns (row offsets and column offsets live in stack arrays).
const MAX_KSIDE: usize = 16;
/// Most values in the ring of split input rows (`c_in·(kh + s·(R − 1))·s·L` for groups of `R`
/// output rows, `L` the phase-row length, see [`ring_row_len`]): 48 KiB on the stack. A layer
/// applies where one row's ring fits (ResNet-18's first layer needs 5 376); the driver takes
/// groups of 3 or 2 rows where theirs fits (ResNet-18's: 8 448 for 3).
const MAX_RING: usize = 12288;
/// Most output rows whose tiles run as one sequence (`x86`'s `drive`).
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code)
)]
const MAX_GROUP: usize = 3;

/// Length of one phase row of the ring: the highest element read is `ow − 1 + (kw − 1)/s`
/// (output pixel `ow − 1`, tap `kw − 1`), rounded up to whole vectors (the rows are split 16
/// values at a time).
const fn ring_row_len(ow: usize, kw: usize, s: usize) -> usize {
    (ow + (kw - 1) / s).div_ceil(PIXELS) * PIXELS
}

/// Whether this module computes `s`: one group of at most [`MAX_C_IN`] input channels and
/// [`MAX_K`] taps (at most [`MAX_WEIGHTS`] weights, kernel sides up to 16), output channels a
/// multiple of 16, the same stride of 2 to 4 both ways, no dilation, padding smaller than the
/// kernel, output rows of at least 16 pixels, and a ring of split rows within [`MAX_RING`].
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    s.groups == 1
        && s.c_in <= MAX_C_IN
        && d.k <= MAX_K
        && s.c_out.saturating_mul(d.k) <= MAX_WEIGHTS
        && s.kh <= MAX_KSIDE
        && s.kw <= MAX_KSIDE
        && s.c_out.is_multiple_of(CHANNELS)
        && (2..=4).contains(&s.stride_w)
        && s.stride_h == s.stride_w
        && s.dilation_h == 1
        && s.dilation_w == 1
        && s.pad_top.max(s.pad_bottom) < s.kh
        && s.pad_left.max(s.pad_right) < s.kw
        && d.out_w >= PIXELS
        && s.c_in * s.kh * s.stride_w * ring_row_len(d.out_w, s.kw, s.stride_w) <= MAX_RING
}

/// Whether [`conv`] runs `s` on this CPU: [`applies`], and x86-64-v3 (AVX2, FMA) or
/// x86-64-v4 (AVX-512) active.
pub(crate) fn fast(s: &Conv2dShape, d: &ConvDims) -> bool {
    applies(s, d) && crate::cpu::active() >= crate::cpu::Level::X86V3
}

/// Convolves `input` with `weights` into `output`, adding `bias` and clamping to `clamp`, and
/// returns `true`, where [`fast`]; returns `false` and writes nothing otherwise. The caller has
/// checked every length.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if fast(s, d) {
        #[allow(unsafe_code)]
        if super::blocked::fast() {
            // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL, AVX2 and FMA supported,
            // `cpu::detect`).
            unsafe { x86::conv_avx512(s, d, input, weights, bias, clamp, output) };
        } else {
            // SAFETY: x86-64-v3 is active (AVX2 and FMA supported, `cpu::detect`).
            unsafe { x86::conv_avx2(s, d, input, weights, bias, clamp, output) };
        }
        return true;
    }
    let _ = (s, d, input, weights, bias, clamp, output);
    false
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod x86 {
    use super::{
        ring_row_len, Clamp, Conv2dShape, ConvDims, CHANNELS, MAX_C_IN, MAX_GROUP, MAX_K,
        MAX_KSIDE, MAX_RING, MAX_WEIGHTS, PIXELS,
    };

    /// Most split rows an output row reads (`c_in·kh`).
    const MAX_ROWS: usize = MAX_C_IN * MAX_KSIDE;
    /// Most ring slots (`c_in·(kh + s·(R − 1))`, stride at most 4).
    const MAX_SLOTS: usize = MAX_C_IN * (MAX_KSIDE + 4 * (MAX_GROUP - 1));

    /// The ring offsets of the split rows each output row of a group reads: for row `r` of the
    /// group, input channel `ic` and kernel row `ky`, `[r][ic·kh + ky]`.
    type Rows = [[usize; MAX_ROWS]; MAX_GROUP];

    /// Where the output vectors of a group of rows start: `(row in the group, column)`, row by
    /// row, each row's vectors left to right and its last one ending at the row's end (its
    /// first lanes recompute, identically, outputs already stored). Tiles take consecutive
    /// entries, so a tile may span two rows.
    #[inline(always)]
    fn vector_at(ow: usize, lanes: usize, i: usize) -> (usize, usize) {
        let n = ow.div_ceil(lanes);
        let (r, v) = (i / n, i % n);
        (r, (v * lanes).min(ow - lanes))
    }

    /// The geometry a tile needs.
    struct Geo {
        c_in: usize,
        kh: usize,
        kw: usize,
        ow: usize,
        ohw: usize,
        /// Ring offset of each kernel column within a split row.
        koff: [usize; MAX_KSIDE],
    }

    /// Asks for `row`'s cache lines in the L1 (a hint: no effect on results).
    #[inline(always)]
    fn prefetch_row(row: &[f32]) {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::{_mm_prefetch, _MM_HINT_T0};
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for i in (0..row.len()).step_by(16) {
            // SAFETY: a prefetch of an address inside `row`; SSE is part of x86-64.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(row.as_ptr().add(i).cast()) };
        }
    }

    /// What an instruction set gives the shared driver [`drive`].
    trait Isa {
        /// Length of one phase row of the ring ([`ring_row_len`]).
        fn len(&self) -> usize;

        /// Copies padded row `pr` of one input channel's `plane` (row `pr − pad_top`, zero
        /// where it or a column lies in the padding) into `dst` as `s` phase rows of
        /// [`Isa::len`] values: phase `f`, element `j` is padded column `s·j + f` (input
        /// column `s·j + f − pad_left`).
        ///
        /// # Safety
        /// The instruction set is enabled in the caller.
        unsafe fn split_row(&self, s: &Conv2dShape, plane: &[f32], pr: usize, dst: &mut [f32]);

        /// Output pixels per vector.
        const LANES: usize;
        /// Channels per register tile (of the 16 whose weights are re-laid out together).
        const TILE_C: usize;

        /// `P` vectors of [`Isa::LANES`] output pixels, vector `p` at
        /// `(oy + v[p].0, v[p].1 .. + LANES)`, of channels `c0 .. c0 + TILE_C` of one block
        /// (weights `wc`, `K × 16` tap-major; bias `bv`), clamped, stored into the channels'
        /// planes of `yc`; for row `oy + r` the input row of channel `ic`, kernel row `ky` is
        /// the split row at `ring[rows[r][ic·kh + ky]..]`.
        ///
        /// # Safety
        /// The instruction set is enabled in the caller; each `v[p].1 + LANES ≤ ow`,
        /// `oy + v[p].0 < oh`, `c0 + TILE_C ≤ 16`, `rows[v[p].0]` ring offsets of whole split
        /// rows, and the bounds asserted by [`drive`].
        #[allow(clippy::too_many_arguments)]
        unsafe fn tile<const P: usize>(
            &self,
            g: &Geo,
            ring: &[f32],
            rows: &Rows,
            wc: &[f32],
            bv: &[f32; CHANNELS],
            c0: usize,
            clamp: Clamp,
            oy: usize,
            v: [(usize, usize); P],
            yc: &mut [f32],
        );
    }

    /// Output rows `oy .. oy + nr` of the 16 channels of one block (weights `wc`, `K × 16`
    /// tap-major; bias `bv`), clamped, stored into the channels' planes of `yc`: tiles of 3
    /// vectors × [`Isa::TILE_C`] channels along the group's sequence of output vectors
    /// ([`vector_at`]), then one of 2 or 1 for the rest.
    ///
    /// # Safety
    /// The instruction set `I` implements is enabled in the caller; `1 ≤ nr ≤ MAX_GROUP`,
    /// `oy + nr ≤ oh`, `rows[..nr]` ring offsets of whole split rows, and the bounds asserted
    /// by [`drive`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block_rows<I: Isa>(
        isa: &I,
        g: &Geo,
        ring: &[f32],
        rows: &Rows,
        nr: usize,
        wc: &[f32],
        bv: &[f32; CHANNELS],
        clamp: Clamp,
        oy: usize,
        yc: &mut [f32],
    ) {
        let n = nr * g.ow.div_ceil(I::LANES);
        let at = |i: usize| vector_at(g.ow, I::LANES, i);
        for c in (0..CHANNELS).step_by(I::TILE_C) {
            let mut i = 0;
            // SAFETY (the calls): the caller's contract; every vector lies in row
            // `oy + r < oy + nr` at `0 ≤ ox ≤ ow − LANES`, and `c + TILE_C ≤ 16`.
            while i + 3 <= n {
                let v = core::array::from_fn(|p| at(i + p));
                unsafe { isa.tile::<3>(g, ring, rows, wc, bv, c, clamp, oy, v, yc) };
                i += 3;
            }
            match n - i {
                2 => {
                    let v = [at(i), at(i + 1)];
                    unsafe { isa.tile::<2>(g, ring, rows, wc, bv, c, clamp, oy, v, yc) };
                }
                1 => unsafe { isa.tile::<1>(g, ring, rows, wc, bv, c, clamp, oy, [at(i)], yc) },
                _ => {}
            }
        }
    }

    /// [`super::conv`] on AVX-512.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn conv_avx512(
        s: &Conv2dShape,
        d: &ConvDims,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let len = ring_row_len(d.out_w, s.kw, s.stride_w);
        // SAFETY: AVX-512 is enabled here.
        unsafe {
            drive(
                &avx512::Kernel::new(s.stride_w, len),
                s,
                d,
                x,
                w,
                bias,
                clamp,
                y,
            )
        }
    }

    /// [`super::conv`] on AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn conv_avx2(
        s: &Conv2dShape,
        d: &ConvDims,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let len = ring_row_len(d.out_w, s.kw, s.stride_w);
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { drive(&avx2::Kernel { len }, s, d, x, w, bias, clamp, y) }
    }

    /// [`super::conv`] with the row splits and tiles of `isa`.
    ///
    /// # Safety
    /// The instruction set `I` implements is enabled in the caller (`#[inline(always)]`: this
    /// is compiled into each entry point, with its target features).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn drive<I: Isa>(
        isa: &I,
        s: &Conv2dShape,
        d: &ConvDims,
        x: &[f32],
        w: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        y: &mut [f32],
    ) {
        let (oh, ow, k, st) = (d.out_h, d.out_w, d.k, s.stride_w);
        let (plane, ohw) = (s.h * s.w, oh * ow);
        let len = isa.len();
        // Output rows per group: the most (up to MAX_GROUP) whose split rows fit the ring
        // together, so that the tiles run on through a row's end into the next row.
        let slots = |r: usize| s.kh + st * (r - 1);
        let group = (1..=MAX_GROUP)
            .rev()
            .find(|&r| s.c_in * slots(r) * st * len <= MAX_RING)
            .unwrap_or(1);
        let nslots = slots(group);
        let ring_len = s.c_in * nslots * st * len;
        // Checked once: every tile below reads inside the ring (phase-row element
        // `ox + kx/s + i ≤ ow − 1 + (kw − 1)/s < len`) and the weights, and writes inside `y`.
        assert!(
            ow >= PIXELS
                && len == ring_row_len(ow, s.kw, st)
                && k == s.c_in * s.kh * s.kw
                && k <= MAX_K
                && s.c_out * k <= MAX_WEIGHTS
                && s.c_in <= MAX_C_IN
                && s.kh <= MAX_KSIDE
                && s.kw <= MAX_KSIDE
                && st <= 4
                && ring_len <= MAX_RING
                && s.c_out.is_multiple_of(CHANNELS)
                && x.len() >= s.n * s.c_in * plane
                && w.len() >= s.c_out * k
                && y.len() >= s.n * s.c_out * ohw
                && bias.is_none_or(|b| b.len() >= s.c_out)
        );
        // Ring offset of tap column `kx` within a split row: phase `kx mod s`, element `kx / s`.
        let mut koff = [0usize; MAX_KSIDE];
        for (kx, o) in koff.iter_mut().enumerate().take(s.kw) {
            *o = (kx % st) * len + kx / st;
        }
        let g = Geo {
            c_in: s.c_in,
            kh: s.kh,
            kw: s.kw,
            ow,
            ohw,
            koff,
        };
        // Every block's weights tap-major: block `c0/16`, tap `t` at `c0·k + 16·t`.
        let mut wt = [0.0f32; MAX_WEIGHTS];
        for (c, row) in w[..s.c_out * k].chunks_exact(k).enumerate() {
            let blk = &mut wt[(c - c % CHANNELS) * k..][..CHANNELS * k];
            for (t, &v) in row.iter().enumerate() {
                blk[t * CHANNELS + c % CHANNELS] = v;
            }
        }
        let mut ring = [0.0f32; MAX_RING];
        for b in 0..s.n {
            let xb = &x[b * s.c_in * plane..][..s.c_in * plane];
            let yb = &mut y[b * s.c_out * ohw..][..s.c_out * ohw];
            // Padded row held by each ring slot (none yet).
            let mut held = [usize::MAX; MAX_SLOTS];
            for oy in (0..oh).step_by(group) {
                let nr = group.min(oh - oy);
                // The padded rows oy·s .. (oy + nr − 1)·s + kh, each in slot `row mod nslots`
                // of every channel (the rows replaced are those earlier groups read and this
                // one does not): each input row is split once, for all blocks of channels.
                let mut rows: Rows = [[0; MAX_ROWS]; MAX_GROUP];
                for (r, rr) in rows.iter_mut().enumerate().take(nr) {
                    for ky in 0..s.kh {
                        let pr = (oy + r) * st + ky;
                        let slot = pr % nslots;
                        for ic in 0..s.c_in {
                            let at = (ic * nslots + slot) * st * len;
                            if held[ic * nslots + slot] != pr {
                                let src = &xb[ic * plane..][..plane];
                                // SAFETY: the caller enables `I`'s instruction set.
                                unsafe { isa.split_row(s, src, pr, &mut ring[at..at + st * len]) };
                                held[ic * nslots + slot] = pr;
                            }
                            rr[ic * s.kh + ky] = at;
                        }
                    }
                }
                // The input rows the next group splits first, towards the L1 while this
                // group's tiles run: the split would otherwise wait on each row's lines.
                let next = (oy + nr) * st + s.kh - st;
                for pr in next..next + st * group {
                    let iy = pr.wrapping_sub(s.pad_top);
                    if iy < s.h {
                        for ic in 0..s.c_in {
                            prefetch_row(&xb[ic * plane + iy * s.w..][..s.w]);
                        }
                    }
                }
                let ring = &ring[..ring_len];
                for c0 in (0..s.c_out).step_by(CHANNELS) {
                    let mut bv = [0.0f32; CHANNELS];
                    if let Some(bias) = bias {
                        bv.copy_from_slice(&bias[c0..c0 + CHANNELS]);
                    }
                    let wc = &wt[c0 * k..][..CHANNELS * k];
                    let yc = &mut yb[c0 * ohw..][..CHANNELS * ohw];
                    // SAFETY: the caller enables `I`'s instruction set; `1 ≤ nr ≤ MAX_GROUP`,
                    // `oy + nr ≤ oh`, `rows[..nr]` holds ring offsets of whole split rows, and
                    // the bounds asserted above keep the tiles inside `ring`, `wc` and `yc`.
                    unsafe { block_rows(isa, &g, ring, &rows, nr, wc, &bv, clamp, oy, yc) };
                }
            }
        }
    }

    /// The AVX-512 kernels: 16 pixels per vector.
    mod avx512 {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;

        use super::{Clamp, Conv2dShape, Geo, Isa, Rows, CHANNELS, PIXELS};

        /// Channels per register tile (of the 16 whose weights are re-laid out together).
        /// Measured on SqueezeNet's first layer (AMD Zen 5, `nn_bench`, shared machine; the
        /// blocked method 0.28–0.30 ms in the same runs), vectors × channels: 1 × 16 0.42–0.53
        /// ms, 2 × 8 0.35–0.52, 4 × 4 0.33–0.35, 6 × 4 0.28–0.30, 3 × 8 0.23–0.26: the fewer
        /// broadcast weights per multiply-add the better, while the single vectors of a row's
        /// rest (one broadcast per multiply-add) stay few.
        const TILE_C: usize = 8;

        /// The AVX-512 row split and tiles.
        pub(super) struct Kernel {
            /// The permutes of [`split_row`].
            split: Split,
        }

        impl Kernel {
            /// For stride `st` and phase rows of `len` values.
            ///
            /// # Safety
            /// AVX-512 F is enabled in the caller.
            #[inline(always)]
            pub(super) unsafe fn new(st: usize, len: usize) -> Self {
                Kernel {
                    split: Split::new(st, len),
                }
            }
        }

        impl Isa for Kernel {
            #[inline(always)]
            fn len(&self) -> usize {
                self.split.len
            }

            #[inline(always)]
            unsafe fn split_row(&self, s: &Conv2dShape, plane: &[f32], pr: usize, dst: &mut [f32]) {
                split_row(s, &self.split, plane, pr, dst);
            }

            const LANES: usize = PIXELS;
            const TILE_C: usize = TILE_C;

            #[inline(always)]
            unsafe fn tile<const P: usize>(
                &self,
                g: &Geo,
                ring: &[f32],
                rows: &Rows,
                wc: &[f32],
                bv: &[f32; CHANNELS],
                c0: usize,
                clamp: Clamp,
                oy: usize,
                v: [(usize, usize); P],
                yc: &mut [f32],
            ) {
                // SAFETY: the trait method's contract.
                unsafe { tile::<P>(g, ring, rows, wc, bv, c0, clamp, oy, v, yc) }
            }
        }

        /// Copies padded row `pr` of one input channel's `plane` (row `pr − pad_top`, zero where it
        /// or a column lies in the padding) into `dst` as `s` phase rows of `len` values (a multiple
        /// of 16): phase `f`, element `j` is padded column `s·j + f` (input column
        /// `s·j + f − pad_left`). 16 elements of every phase at a time: `s` masked loads of the
        /// input columns they cover, then per phase one or two two-source permutes.
        #[inline(always)]
        fn split_row(s: &Conv2dShape, sp: &Split, plane: &[f32], pr: usize, dst: &mut [f32]) {
            let (st, len) = (s.stride_w, sp.len);
            let iy = pr.wrapping_sub(s.pad_top);
            if iy >= s.h {
                dst.fill(0.0);
                return;
            }
            let row = &plane[iy * s.w..][..s.w];
            assert!(dst.len() >= st * len && len.is_multiple_of(PIXELS));
            let (rp, dp) = (row.as_ptr(), dst.as_mut_ptr());
            // Whole loads from `first` (the first 16-element step whose columns all lie at or
            // right of column 0) while the step's last column, c0 + 16·s − 1, is inside the row.
            let first = s.pad_left.div_ceil(st).next_multiple_of(PIXELS);
            for j0 in (0..len).step_by(PIXELS) {
                // Input columns c0 .. c0 + 16·s (c0 may be negative: the left padding).
                let c0 = (st * j0) as isize - s.pad_left as isize;
                let whole = j0 >= first && c0 + (PIXELS * st) as isize <= s.w as isize;
                // SAFETY: each load reads only the lanes of columns inside `0..w` of `row` (whole
                // loads only where all 16·s columns are; elsewhere the masked-off lanes are not
                // accessed), and each store writes elements `f·len + j0 .. + 16 ≤ s·len` of `dst`
                // (`len` a multiple of 16, checked above); AVX-512 F is enabled by the caller.
                unsafe {
                    let v: [__m512; 4] = core::array::from_fn(|i| {
                        if i >= st {
                            return _mm512_setzero_ps();
                        }
                        let at = c0 + (PIXELS * i) as isize;
                        if whole {
                            _mm512_loadu_ps(rp.offset(at))
                        } else {
                            let m = lanes(-at, s.w as isize - at);
                            _mm512_maskz_loadu_ps(m, rp.wrapping_offset(at))
                        }
                    });
                    for f in 0..st {
                        let lo = _mm512_permutex2var_ps(v[0], sp.idx[f], v[1]);
                        let ph = if st > 2 {
                            let hi = _mm512_permutex2var_ps(v[2], sp.idx[f], v[3]);
                            _mm512_mask_blend_ps(sp.high[f], lo, hi)
                        } else {
                            lo
                        };
                        _mm512_storeu_ps(dp.add(f * len + j0), ph);
                    }
                }
            }
        }

        /// Lanes `lo..hi` of a vector set (clamped to `0..16`).
        #[inline(always)]
        fn lanes(lo: isize, hi: isize) -> __mmask16 {
            let (lo, hi) = (lo.clamp(0, 16), hi.clamp(0, 16));
            if hi <= lo {
                return 0;
            }
            (((1u32 << hi) - 1) & !((1u32 << lo) - 1)) as __mmask16
        }

        /// The permutes that split 16 elements of every phase out of `s` vectors of columns.
        struct Split {
            /// Phase-row length (a multiple of 16).
            len: usize,
            /// Per phase `f`: lane `j` selects column `s·j + f` mod 32 of two source vectors.
            idx: [__m512i; 4],
            /// Per phase: the lanes whose column is 32 or more (from the second pair).
            high: [__mmask16; 4],
        }

        impl Split {
            #[inline(always)]
            fn new(st: usize, len: usize) -> Self {
                let idx = core::array::from_fn(|f| {
                    let i: [i32; 16] = core::array::from_fn(|j| ((st * j + f) % 32) as i32);
                    // SAFETY: a 64-byte unaligned load of a 16-element `i32` array.
                    unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
                });
                let high = core::array::from_fn(|f| {
                    (0..16).fold(0u16, |m, j| m | (u16::from(st * j + f >= 32) << j))
                });
                Split { len, idx, high }
            }
        }

        /// `P` vectors of 16 output pixels, vector `p` at `(oy + v[p].0, v[p].1 .. + 16)`, of
        /// channels `c0 .. c0 + TILE_C` of the block (weights `wc`, `K × 16`; bias `bv`),
        /// clamped, stored into the channels' planes of `yc`; for row `oy + r` the input row of
        /// channel `ic`, kernel row `ky` is the split row at `ring[rows[r][ic·kh + ky]..]`.
        ///
        /// # Safety
        /// AVX-512 F and FMA; each `v[p].1 + 16 ≤ ow`, `oy + v[p].0 < oh`, `c0 + TILE_C ≤ 16`,
        /// `rows[v[p].0]` ring offsets of whole split rows, and the bounds asserted by `drive`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn tile<const P: usize>(
            g: &Geo,
            ring: &[f32],
            rows: &Rows,
            wc: &[f32],
            bv: &[f32; CHANNELS],
            c0: usize,
            clamp: Clamp,
            oy: usize,
            v: [(usize, usize); P],
            yc: &mut [f32],
        ) {
            let mut acc: [[__m512; P]; TILE_C] =
                core::array::from_fn(|c| [_mm512_set1_ps(bv[c0 + c]); P]);
            let wp = wc.as_ptr().add(c0);
            let rp = ring.as_ptr();
            let mut tap = 0;
            // `j` indexes the split rows of each vector's own output row.
            #[allow(clippy::needless_range_loop)]
            for j in 0..g.c_in * g.kh {
                let row: [*const f32; P] =
                    core::array::from_fn(|p| rp.add(rows[v[p].0][j] + v[p].1));
                for &ko in g.koff.iter().take(g.kw) {
                    // Elements ox + kx/s .. + 15 of the tap's phase row: inside it, as
                    // ox + 16 ≤ ow and the row holds ow + (kw − 1)/s values.
                    let xv: [__m512; P] = core::array::from_fn(|p| _mm512_loadu_ps(row[p].add(ko)));
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
            let (lo, hi) = (_mm512_set1_ps(clamp.0), _mm512_set1_ps(clamp.1));
            let yp = yc.as_mut_ptr().add(c0 * g.ohw);
            for (c, a) in acc.iter().enumerate() {
                for (&ap, &(r, ox)) in a.iter().zip(&v) {
                    // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand),
                    // and keep −0.0 against a bound of 0.0, as `depthwise::clip`.
                    let o = _mm512_min_ps(hi, _mm512_max_ps(lo, ap));
                    _mm512_storeu_ps(yp.add(c * g.ohw + (oy + r) * g.ow + ox), o);
                }
            }
        }
    }

    /// The AVX2 kernels: 8 pixels per vector.
    mod avx2 {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;

        use super::{Clamp, Conv2dShape, Geo, Isa, Rows, CHANNELS};
        use crate::nn::depthwise::avx2::deinterleave;

        /// Output pixels per vector.
        const LANES: usize = 8;
        /// Channels per register tile: 3 × 4 accumulators, 3 input vectors and a broadcast
        /// weight take the 16 registers.
        const TILE_C: usize = 4;

        /// The AVX2 row split and tiles.
        pub(super) struct Kernel {
            /// Length of one phase row (a multiple of 16).
            pub(super) len: usize,
        }

        impl Isa for Kernel {
            #[inline(always)]
            fn len(&self) -> usize {
                self.len
            }

            /// 8 elements of every phase at a time: at stride 2, where all 16 input columns
            /// they cover lie inside the row, two loads and per phase a shuffle and a lane
            /// permute; elsewhere element by element.
            #[inline(always)]
            unsafe fn split_row(&self, s: &Conv2dShape, plane: &[f32], pr: usize, dst: &mut [f32]) {
                let (st, len) = (s.stride_w, self.len);
                let iy = pr.wrapping_sub(s.pad_top);
                if iy >= s.h {
                    dst.fill(0.0);
                    return;
                }
                let row = &plane[iy * s.w..][..s.w];
                let dst = &mut dst[..st * len];
                assert!(len.is_multiple_of(LANES));
                let w = s.w as isize;
                for j0 in (0..len).step_by(LANES) {
                    // Input columns c0 .. c0 + 8·s (c0 may be negative: the left padding).
                    let c0 = (st * j0) as isize - s.pad_left as isize;
                    if st == 2 && c0 >= 0 && c0 + 2 * LANES as isize <= w {
                        let (c0, dp) = (c0 as usize, dst.as_mut_ptr());
                        // SAFETY: columns c0 .. c0 + 16 lie inside `row` (checked), the
                        // stores write elements j0 .. j0 + 8 and len + j0 .. + 8 of `dst`
                        // (`len` a multiple of 8, `dst` of 2·len); AVX2 is enabled in the
                        // caller.
                        unsafe {
                            let a = _mm256_loadu_ps(row.as_ptr().add(c0));
                            let b = _mm256_loadu_ps(row.as_ptr().add(c0 + LANES));
                            let (even, odd) = deinterleave(a, b);
                            _mm256_storeu_ps(dp.add(j0), even);
                            _mm256_storeu_ps(dp.add(len + j0), odd);
                        }
                        continue;
                    }
                    for f in 0..st {
                        for (i, v) in dst[f * len + j0..][..LANES].iter_mut().enumerate() {
                            let c = c0 + (st * i + f) as isize;
                            *v = if (0..w).contains(&c) {
                                row[c as usize]
                            } else {
                                0.0
                            };
                        }
                    }
                }
            }

            const LANES: usize = LANES;
            const TILE_C: usize = TILE_C;

            #[inline(always)]
            unsafe fn tile<const P: usize>(
                &self,
                g: &Geo,
                ring: &[f32],
                rows: &Rows,
                wc: &[f32],
                bv: &[f32; CHANNELS],
                c0: usize,
                clamp: Clamp,
                oy: usize,
                v: [(usize, usize); P],
                yc: &mut [f32],
            ) {
                // SAFETY: the trait method's contract.
                unsafe { tile::<P>(g, ring, rows, wc, bv, c0, clamp, oy, v, yc) }
            }
        }

        /// `P` vectors of 8 output pixels, vector `p` at `(oy + v[p].0, v[p].1 .. + 8)`, of
        /// channels `c0 .. c0 + TILE_C` of the block (weights `wc`, `K × 16`; bias `bv`),
        /// clamped, stored into the channels' planes of `yc`: the AVX-512 tile's arithmetic,
        /// 8 lanes wide.
        ///
        /// # Safety
        /// AVX2 and FMA; each `v[p].1 + 8 ≤ ow`, `oy + v[p].0 < oh`, `c0 + TILE_C ≤ 16`,
        /// `rows[v[p].0]` ring offsets of whole split rows, and the bounds asserted by `drive`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn tile<const P: usize>(
            g: &Geo,
            ring: &[f32],
            rows: &Rows,
            wc: &[f32],
            bv: &[f32; CHANNELS],
            c0: usize,
            clamp: Clamp,
            oy: usize,
            v: [(usize, usize); P],
            yc: &mut [f32],
        ) {
            // SAFETY: the function's contract.
            unsafe {
                let mut acc: [[__m256; P]; TILE_C] =
                    core::array::from_fn(|c| [_mm256_set1_ps(bv[c0 + c]); P]);
                let wp = wc.as_ptr().add(c0);
                let rp = ring.as_ptr();
                let mut tap = 0;
                // `j` indexes the split rows of each vector's own output row.
                #[allow(clippy::needless_range_loop)]
                for j in 0..g.c_in * g.kh {
                    let row: [*const f32; P] =
                        core::array::from_fn(|p| rp.add(rows[v[p].0][j] + v[p].1));
                    for &ko in g.koff.iter().take(g.kw) {
                        // Elements ox + kx/s .. + 7 of the tap's phase row: inside it, as
                        // ox + 8 ≤ ow and the row holds ow + (kw − 1)/s values.
                        let xv: [__m256; P] =
                            core::array::from_fn(|p| _mm256_loadu_ps(row[p].add(ko)));
                        let wt = wp.add(tap * CHANNELS);
                        for (c, a) in acc.iter_mut().enumerate() {
                            let wv = _mm256_broadcast_ss(&*wt.add(c));
                            for (ap, &xp) in a.iter_mut().zip(&xv) {
                                *ap = _mm256_fmadd_ps(xp, wv, *ap);
                            }
                        }
                        tap += 1;
                    }
                }
                let (lo, hi) = (_mm256_set1_ps(clamp.0), _mm256_set1_ps(clamp.1));
                let yp = yc.as_mut_ptr().add(c0 * g.ohw);
                for (c, a) in acc.iter().enumerate() {
                    for (&ap, &(r, ox)) in a.iter().zip(&v) {
                        // max(lo, x) and min(hi, x) return `x` when it is NaN (the second
                        // operand), and keep −0.0 against a bound of 0.0, as the AVX-512 tile.
                        let o = _mm256_min_ps(hi, _mm256_max_ps(lo, ap));
                        _mm256_storeu_ps(yp.add(c * g.ohw + (oy + r) * g.ow + ox), o);
                    }
                }
            }
        }
    }
}
