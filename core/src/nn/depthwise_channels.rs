//! Depthwise 3×3 convolution of small maps at stride 2 (MobileNetV2's 56² → 28², 28² → 14² and
//! 14² → 7²) and stride 1 (14², 28²) on AVX-512 (stride 2 also on AVX2), 16 channels at a time in a pixel-major layout, as ONNX Runtime's MLAS
//! runs them in its NCHWc16 blocks. In NCHW one stride-2 output row of 7–28 pixels fills
//! part of a vector and needs its even and odd input columns de-interleaved (or the plane split
//! into phase images) and its border lanes masked. Here 16 planes are transposed, 16 pixels at
//! a time (a 16 × 16 transposition, 64 in-register shuffles), into a ring of a few pixel-major
//! input rows (one `__m512` per pixel, lane `l` = channel `c0 + l`); every output pixel is then
//! 9 aligned vector loads and multiply-adds with 9 weight vectors (one per tap, 16 channels
//! each), no masks and no de-interleave, and its taps outside the input are simply not
//! summed. The output pixels go to a second ring and are transposed back to the 16 output
//! planes, 16 pixels at a time. Per 16 planes of a 14² → 7² layer that is about 13 + 4
//! transpositions and 49 × 9 multiply-adds: about 70 shuffles and 28 multiply-adds per plane
//! against about 36 masked loads, 28 permutes, 28 stores and 36 multiply-adds of the phase
//! images (`depthwise_phases`).
//!
//! The taps are summed as in the row kernel of `depthwise` (one accumulator per kernel row,
//! the first starting from the bias, the others from −0, a missing tap adding nothing; the
//! rows then added in order, then the clamp), so the results are the same bits. The two rings
//! (32 KiB) are on the stack: no allocation, and the plan's scratch is unchanged. At stride 1
//! the same path (every input pixel feeding one output pixel's worth of multiply-adds, so 8
//! shuffles per 9 multiply-adds) still beat the flat NCHW paths on 14² and 28² planes, not on
//! 7² and 56² ([`STRIDE1_W`]).
//!
//! With AVX2 and FMA only (x86-64-v3), the same ring runs 8 channels at a time (8 × 8
//! transpositions, 24 shuffles), at stride 2 only (at stride 1 it lost to the flat paths, see
//! `depthwise::conv`), and each output is the portable loop's sum instead: from the bias, tap
//! by tap, a multiply and an add (no fused multiply-adds), the missing taps skipped, so its
//! bits are those of the other x86-64-v3 paths and of the baseline. One driver ([`drive`])
//! serves both widths. MobileNetV2's 144 × 56² → 28² and 576 × 14² → 7² layers ran 2.1× and
//! 2.3× faster than the row kernel (AMD Zen 3, `nn_bench`, min of 4 alternating rounds).

use super::conv::{Conv2dShape, ConvDims};
use super::depthwise::Clamp;

/// Pixel vectors in the input ring (16 KiB): rows of at most 64 pixels.
pub(crate) const RING_IN: usize = 256;
/// Pixel vectors in the output ring (16 KiB, a multiple of 16).
pub(crate) const RING_OUT: usize = 256;

/// Input rows that the input ring holds for rows of `w` pixels: the three rows an output row
/// reads, and the rows that the up to 15 pixels transposed past them reach.
pub(crate) const fn ring_rows(w: usize) -> usize {
    3 + 15usize.div_ceil(w)
}

/// Whether input rows of `w` pixels and output rows of `out_w` pixels fit the two rings.
pub(crate) const fn rings_fit(w: usize, out_w: usize) -> bool {
    w >= 1 && ring_rows(w) * w <= RING_IN && out_w + 15 <= RING_OUT
}

/// The output columns `lo..hi` of a 3-wide window at stride `st` with `pad_left` columns of
/// padding whose three taps are all inside rows of `w` pixels (`ow` outputs a row):
/// `st·ox − pad_left ≥ 0` and `st·ox − pad_left + 2 ≤ w − 1`.
pub(crate) fn inner_cols(w: usize, pad_left: usize, st: usize, ow: usize) -> (usize, usize) {
    let lo = pad_left.div_ceil(st).min(ow);
    let hi = if w + pad_left >= 3 {
        ((w + pad_left - 3) / st + 1).clamp(lo, ow)
    } else {
        lo
    };
    (lo, hi)
}

/// Input row widths (pixels, inclusive) that run here at stride 1. Measured in MobileNetV2
/// (`bench net --layers`, the last 3 of 5 alternating rounds against the flat NCHW paths at
/// load 6.2–6.3; the first two were disturbed): 14² and 28² faster (384 × 14², four
/// layers, 0.092–0.093 → 0.083–0.085 ms; 576 × 14², two, 0.067–0.069 → 0.064–0.065; 192 × 28²,
/// two, 0.069–0.070 → 0.065–0.066), 7² and 56² slower (960 × 7², three, 0.056–0.057 →
/// 0.059; 144 × 56² 0.102–0.104 → 0.117–0.147): on 7² half the pixels are border pixels, on
/// 56² the flat path's whole loads win.
const STRIDE1_W: (usize, usize) = (10, 32);

/// Whether this module computes `s` (a depthwise 3×3 layer): stride 2 both ways with input
/// rows short enough for the ring (at most 64 pixels), or stride 1 with rows of
/// [`STRIDE1_W`]; no dilation, a multiple of 16 channels, padding of at most 2 on each side.
pub(crate) fn applies(s: &Conv2dShape, d: &ConvDims) -> bool {
    let rows_ok = match (s.stride_h, s.stride_w) {
        (2, 2) => true,
        (1, 1) => (STRIDE1_W.0..=STRIDE1_W.1).contains(&s.w),
        _ => false,
    };
    rows_ok
        && s.dilation_h == 1
        && s.dilation_w == 1
        && s.c_out.is_multiple_of(16)
        && s.c_out > 0
        && s.pad_top <= 2
        && s.pad_left <= 2
        && s.pad_bottom <= 2
        && s.pad_right <= 2
        && rings_fit(s.w, d.out_w)
}

/// What a vector width gives the shared driver [`drive`]: `L` channels per vector.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
trait Lanes {
    /// One pixel's `L` channels.
    type V: Copy;
    /// Channels per vector.
    const L: usize;

    /// `v` in every lane.
    ///
    /// # Safety
    /// The instruction set is enabled in the caller (so for every method).
    unsafe fn splat(v: f32) -> Self::V;

    /// The first `L` values of `v` (at least `L` long: panics otherwise).
    ///
    /// # Safety
    /// As [`Lanes::splat`].
    unsafe fn load(v: &[f32]) -> Self::V;

    /// Transposes `n ≤ L` pixels of `L` planes (`x`: the first pixel of the first plane,
    /// planes `hw` apart) into ring slots `slot ..` (wrapping at `ring_len`).
    ///
    /// # Safety
    /// Pixels `0..n` of the `L` planes are readable; `slot < ring_len ≤ RING_IN`,
    /// `n ≤ ring_len`.
    unsafe fn transpose_in(
        x: *const f32,
        hw: usize,
        n: usize,
        ring: *mut Self::V,
        slot: usize,
        ring_len: usize,
    );

    /// Transposes the `L` ring vectors `ring[at ..]` back into the channel planes: lane `c`
    /// of pixel `j < n` goes to `y[c·ohw + px + j]`; lanes past `n` are not written.
    ///
    /// # Safety
    /// `at + L ≤ ring.len()`, and the `L` planes of `ohw` elements from `y` are writable at
    /// pixels `px .. px + n`.
    unsafe fn flush(ring: &[Self::V], at: usize, y: *mut f32, ohw: usize, px: usize, n: usize);

    /// Output pixel `ox` of a row whose three input rows are `r` (ring rows of `w` pixel
    /// vectors; `None` outside the image) from the taps that exist, clamped to `lohi`.
    ///
    /// # Safety
    /// Each row of `r` addresses `w` readable pixel vectors.
    #[allow(clippy::too_many_arguments)]
    unsafe fn edge(
        r: &[Option<*const Self::V>; 3],
        k: &[Self::V; 9],
        b: Self::V,
        lohi: (Self::V, Self::V),
        ox: usize,
        pl: isize,
        w: usize,
        st: usize,
    ) -> Self::V;

    /// An output pixel whose nine taps are columns `c .. c + 3` of the ring rows `p`, plus
    /// `b`, clamped to `lohi`.
    ///
    /// # Safety
    /// Columns `c .. c + 3` of the three rows are readable.
    unsafe fn interior(
        p: [*const Self::V; 3],
        c: isize,
        k: &[Self::V; 9],
        b: Self::V,
        lohi: (Self::V, Self::V),
    ) -> Self::V;
}

/// `super::depthwise::conv` for the layers of [`applies`], all planes of `input`
/// (`n × c × h × w`) into `output` (`n × c × out_h × out_w`), `K::L` planes at a time.
///
/// # Safety
/// `K`'s instruction set is enabled in the caller (`#[inline(always)]`: this is compiled into
/// each entry point, with its target features).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
#[inline(always)]
unsafe fn drive<K: Lanes>(
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
        applies(s, d) && super::depthwise::buffers_fit(s, input, hw, output, ohw, weights, bias)
    );
    if hw == 0 || ohw == 0 {
        return;
    }
    let rows = ring_rows(w);
    let ring_len = rows * w;
    // SAFETY (the `K::` calls below): `K`'s instruction set is enabled in the caller.
    let zero = unsafe { K::splat(0.0) };
    let mut ring = [zero; RING_IN];
    let mut out_ring = [zero; RING_OUT];
    let lohi = unsafe { (K::splat(clamp.0), K::splat(clamp.1)) };
    let (pt, pl) = (s.pad_top as isize, s.pad_left as isize);
    // Output columns lo_in..hi_in have all three taps in the row: 2·ox − pl ≥ 0 and
    // 2·ox − pl + 2 ≤ w − 1.
    let st = s.stride_w;
    let (lo_in, hi_in) = inner_cols(w, s.pad_left, st, ow);
    let l = K::L;
    for i0 in (0..planes).step_by(l) {
        let c0 = i0 % s.c_out;
        let x = input[i0 * hw..][..l * hw].as_ptr();
        let y = output[i0 * ohw..][..l * ohw].as_mut_ptr();
        // The taps as vectors, built in plain loops: a closure here would not inherit the
        // entry point's target features, so it was compiled apart, as scalar code called nine
        // times a block (AVX-512: 14² and 7² layers 10-19 % slower).
        let mut k = [zero; 9];
        for (t, kt) in k.iter_mut().enumerate() {
            let mut lane = [0.0f32; 16];
            for (j, v) in lane[..l].iter_mut().enumerate() {
                *v = weights[(c0 + j) * 9 + t];
            }
            *kt = unsafe { K::load(&lane) };
        }
        let b = match bias {
            Some(b) => unsafe { K::load(&b[c0..][..l]) },
            None => zero,
        };
        // Input pixels transposed so far, and where the next one goes in the ring.
        let (mut done_in, mut slot) = (0usize, 0usize);
        // Output pixels computed, and those transposed back to the planes.
        let (mut done_out, mut flushed) = (0usize, 0usize);
        for oy in 0..oh {
            let top = (st * oy) as isize - pt;
            // Transpose until the last input row this output row reads is in the ring.
            let need = (((top + 3).max(0) as usize).min(h) * w).min(hw);
            while done_in < need {
                let n = (hw - done_in).min(l);
                // SAFETY: planes 0..L of the block, pixels done_in .. done_in + n ≤ hw;
                // slot < ring_len ≤ RING_IN.
                unsafe {
                    K::transpose_in(x.add(done_in), hw, n, ring.as_mut_ptr(), slot, ring_len)
                };
                slot += n;
                if slot >= ring_len {
                    slot -= ring_len;
                }
                done_in += n;
            }
            // The ring rows of the three input rows (None outside the image).
            let row = |ky: isize| {
                let iy = top + ky;
                (iy >= 0 && (iy as usize) < h)
                    .then(|| ring.as_ptr().wrapping_add((iy as usize % rows) * w))
            };
            let r = [row(0), row(1), row(2)];
            let dst = out_ring.as_mut_ptr();
            // Output pixel ox of this row from the taps that exist.
            // SAFETY (the `edge` calls): the rows of `r` are ring rows of w pixel vectors.
            let edge = |ox: usize| unsafe { K::edge(&r, &k, b, lohi, ox, pl, w, st) };
            let base = done_out;
            for ox in (0..lo_in).chain(hi_in..ow) {
                // SAFETY: the slot lies in the output ring.
                unsafe { *dst.add((base + ox) % RING_OUT) = edge(ox) };
            }
            if let [Some(p0), Some(p1), Some(p2)] = r {
                for ox in lo_in..hi_in {
                    let c = (st * ox) as isize - pl;
                    // SAFETY: outputs lo_in..hi_in read columns c .. c + 3 within the rows.
                    let v = unsafe { K::interior([p0, p1, p2], c, &k, b, lohi) };
                    // SAFETY: the slot lies in the output ring.
                    unsafe { *dst.add((base + ox) % RING_OUT) = v };
                }
            } else {
                for ox in lo_in..hi_in {
                    // SAFETY: the slot lies in the output ring.
                    unsafe { *dst.add((base + ox) % RING_OUT) = edge(ox) };
                }
            }
            done_out += ow;
            // Transpose back every full L pixels (at the end, the rest).
            while done_out - flushed >= l || (oy + 1 == oh && flushed < done_out) {
                let n = (done_out - flushed).min(l);
                // SAFETY: flushed % RING_OUT + L ≤ RING_OUT (both multiples of L); the
                // L planes of the block hold pixels flushed .. flushed + n ≤ ohw.
                unsafe { K::flush(&out_ring, flushed % RING_OUT, y, ohw, flushed, n) };
                flushed += n;
            }
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::super::depthwise::avx512::lanes;
    use super::{Clamp, Conv2dShape, ConvDims};

    /// Transposes the 16 pixel-major ring vectors `ring[at .. at + 16]` (16 channels each) back
    /// into the channel planes: lane `l` of pixel `j < n` goes to `y[l·ohw + pixel + j]`, lanes
    /// past `n` (at most 16) are not written.
    ///
    /// # Safety
    /// `at + 16 ≤ ring.len()`, and the 16 planes of `ohw` elements from `y` are writable at
    /// pixels `pixel .. pixel + n`.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    pub(crate) unsafe fn flush16(
        ring: &[__m512],
        at: usize,
        y: *mut f32,
        ohw: usize,
        pixel: usize,
        n: usize,
    ) {
        // SAFETY: at + 16 ≤ ring.len() (the caller's contract).
        let v: [__m512; 16] = core::array::from_fn(|j| unsafe { *ring.as_ptr().add(at + j) });
        let v = transpose16(v);
        let m = lanes(0, n as isize);
        for (l, v) in v.iter().enumerate() {
            // SAFETY: plane l < 16, pixels pixel .. pixel + n (the caller's contract).
            unsafe { _mm512_mask_storeu_ps(y.add(l * ohw + pixel), m, *v) };
        }
    }

    /// The 16 × 16 transposition of `r` (lane `i` of vector `j` ← lane `j` of vector `i`),
    /// in four rounds of 16 shuffles: pairs of lanes, pairs of pairs, then 128-bit blocks twice.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    pub(crate) fn transpose16(r: [__m512; 16]) -> [__m512; 16] {
        let pd = _mm512_castps_pd;
        let ps = _mm512_castpd_ps;
        // t[2i], t[2i + 1]: rows 2i, 2i + 1 interleaved (low / high pairs of each block).
        let t: [__m512; 16] = core::array::from_fn(|j| {
            let (a, b) = (r[j & !1], r[j | 1]);
            if j % 2 == 0 {
                _mm512_unpacklo_ps(a, b)
            } else {
                _mm512_unpackhi_ps(a, b)
            }
        });
        // u[4g + j]: rows 4g .. 4g + 4 of columns j, j + 4, j + 8, j + 12 (one per block).
        let u: [__m512; 16] = core::array::from_fn(|j| {
            let g = j / 4;
            let (a, b) = match j % 4 {
                0 | 1 => (t[4 * g], t[4 * g + 2]),
                _ => (t[4 * g + 1], t[4 * g + 3]),
            };
            if j % 2 == 0 {
                ps(_mm512_unpacklo_pd(pd(a), pd(b)))
            } else {
                ps(_mm512_unpackhi_pd(pd(a), pd(b)))
            }
        });
        // v[8h + j] (j < 4): columns j and j + 8 of rows 8h .. 8h + 8; v[8h + 4 + j]: columns
        // j + 4 and j + 12.
        let v: [__m512; 16] = core::array::from_fn(|j| {
            let (h, k) = (j / 8, j % 4);
            let (a, b) = (u[8 * h + k], u[8 * h + 4 + k]);
            if j % 8 < 4 {
                _mm512_shuffle_f32x4::<0x88>(a, b)
            } else {
                _mm512_shuffle_f32x4::<0xdd>(a, b)
            }
        });
        core::array::from_fn(|j| {
            let (a, b) = (v[j % 8], v[8 + j % 8]);
            if j < 8 {
                _mm512_shuffle_f32x4::<0x88>(a, b)
            } else {
                _mm512_shuffle_f32x4::<0xdd>(a, b)
            }
        })
    }

    /// Transposes `n ≤ 16` pixels of 16 planes (`x`: the first pixel of the first plane,
    /// planes `hw` apart) into ring slots `slot ..` (wrapping at `ring_len`).
    ///
    /// # Safety
    /// Pixels `0..n` of the 16 planes are readable; `slot < ring_len ≤ RING_IN`, `n ≤ ring_len`.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    pub(crate) unsafe fn transpose_in(
        x: *const f32,
        hw: usize,
        n: usize,
        ring: *mut __m512,
        slot: usize,
        ring_len: usize,
    ) {
        let m = lanes(0, n as isize);
        let mut p = x;
        // SAFETY: the caller's contract (plane l at x + l·hw, pixels 0..n).
        let r: [__m512; 16] = core::array::from_fn(|_| unsafe {
            let v = if n == 16 {
                _mm512_loadu_ps(p)
            } else {
                _mm512_maskz_loadu_ps(m, p)
            };
            p = p.wrapping_add(hw);
            v
        });
        let r = transpose16(r);
        // SAFETY: the caller's contract. (Constant indices only, so that `r` stays in
        // registers: a slice of it was copied through the stack.)
        unsafe {
            if n == 16 && slot + 16 <= ring_len {
                let dst = ring.add(slot);
                for (j, v) in r.into_iter().enumerate() {
                    *dst.add(j) = v;
                }
            } else {
                let mut at = slot;
                for (j, v) in r.into_iter().enumerate() {
                    if j < n {
                        *ring.add(at) = v;
                        at += 1;
                        if at == ring_len {
                            at = 0;
                        }
                    }
                }
            }
        }
    }

    /// Output pixel `ox` of a row whose three input rows are `r` (ring rows of `w` pixel
    /// vectors; `None` outside the image) from the taps that exist: per kernel row an
    /// accumulator from `b`, −0, −0 (a missing tap adds nothing), the rows added in order,
    /// then clamped to `[lo, hi]`.
    ///
    /// # Safety
    /// Each row of `r` addresses `w` readable pixel vectors.
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn edge(
        r: &[Option<*const __m512>; 3],
        k: &[__m512; 9],
        b: __m512,
        (lo, hi): (__m512, __m512),
        ox: usize,
        pl: isize,
        w: usize,
        st: usize,
    ) -> __m512 {
        let mut acc = [b, _mm512_set1_ps(-0.0), _mm512_set1_ps(-0.0)];
        for (ky, a) in acc.iter_mut().enumerate() {
            let Some(p) = r[ky] else { continue };
            for kx in 0..3 {
                let ix = (st * ox) as isize + kx as isize - pl;
                if ix >= 0 && (ix as usize) < w {
                    // SAFETY: ix < w within the ring row p (the caller's contract).
                    let v = unsafe { *p.add(ix as usize) };
                    *a = _mm512_fmadd_ps(k[ky * 3 + kx], v, *a);
                }
            }
        }
        let v = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]);
        // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand).
        _mm512_min_ps(hi, _mm512_max_ps(lo, v))
    }

    /// The AVX-512 block: 16 channels per vector, fused multiply-adds.
    pub(super) struct Lanes16;

    impl super::Lanes for Lanes16 {
        type V = __m512;
        const L: usize = 16;

        #[inline(always)]
        unsafe fn splat(v: f32) -> __m512 {
            _mm512_set1_ps(v)
        }

        #[inline(always)]
        unsafe fn load(v: &[f32]) -> __m512 {
            assert!(v.len() >= 16);
            // SAFETY: 16 values (checked); AVX-512 F is enabled in the caller.
            unsafe { _mm512_loadu_ps(v.as_ptr()) }
        }

        #[inline(always)]
        unsafe fn transpose_in(
            x: *const f32,
            hw: usize,
            n: usize,
            ring: *mut __m512,
            slot: usize,
            ring_len: usize,
        ) {
            // SAFETY: the trait's contract.
            unsafe { transpose_in(x, hw, n, ring, slot, ring_len) }
        }

        #[inline(always)]
        unsafe fn flush(ring: &[__m512], at: usize, y: *mut f32, ohw: usize, px: usize, n: usize) {
            // SAFETY: the trait's contract.
            unsafe { flush16(ring, at, y, ohw, px, n) }
        }

        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn edge(
            r: &[Option<*const __m512>; 3],
            k: &[__m512; 9],
            b: __m512,
            lohi: (__m512, __m512),
            ox: usize,
            pl: isize,
            w: usize,
            st: usize,
        ) -> __m512 {
            // SAFETY: the trait's contract.
            unsafe { edge(r, k, b, lohi, ox, pl, w, st) }
        }

        /// Three accumulators (one per kernel row: from the bias, −0, −0) of fused
        /// multiply-adds, added in order: the AVX-512 row kernel's arithmetic.
        #[inline(always)]
        unsafe fn interior(
            p: [*const __m512; 3],
            c: isize,
            k: &[__m512; 9],
            b: __m512,
            (lo, hi): (__m512, __m512),
        ) -> __m512 {
            let nz = _mm512_set1_ps(-0.0);
            // SAFETY: columns c .. c + 3 of the three rows (the trait's contract).
            let tap = |q: *const __m512, kx: isize| unsafe { *q.offset(c + kx) };
            let a0 = _mm512_fmadd_ps(k[0], tap(p[0], 0), b);
            let a1 = _mm512_fmadd_ps(k[3], tap(p[1], 0), nz);
            let a2 = _mm512_fmadd_ps(k[6], tap(p[2], 0), nz);
            let a0 = _mm512_fmadd_ps(k[1], tap(p[0], 1), a0);
            let a1 = _mm512_fmadd_ps(k[4], tap(p[1], 1), a1);
            let a2 = _mm512_fmadd_ps(k[7], tap(p[2], 1), a2);
            let a0 = _mm512_fmadd_ps(k[2], tap(p[0], 2), a0);
            let a1 = _mm512_fmadd_ps(k[5], tap(p[1], 2), a1);
            let a2 = _mm512_fmadd_ps(k[8], tap(p[2], 2), a2);
            let v = _mm512_add_ps(_mm512_add_ps(a0, a1), a2);
            _mm512_min_ps(hi, _mm512_max_ps(lo, v))
        }
    }

    /// `super::depthwise::conv` for the layers of [`super::applies`], all planes of `input`
    /// (`n × c × h × w`) into `output` (`n × c × out_h × out_w`), 16 planes at a time.
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
        // SAFETY: AVX-512 F/BW/DQ/VL, AVX2 and FMA are enabled here.
        unsafe { super::drive::<Lanes16>(s, d, input, weights, bias, clamp, output) }
    }
}

/// The AVX2 block (x86-64-v3 active, AVX-512 not): 8 channels per vector, each output the
/// portable loop's multiplies and adds in its order (from the bias, tap by tap, no fused
/// multiply-adds), so the same bits as the other paths at x86-64-v3 and at the baseline.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) mod avx2 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{Clamp, Conv2dShape, ConvDims};
    use crate::nn::depthwise::avx2::below;

    /// The 8 × 8 transposition of `r` (lane `i` of vector `j` ← lane `j` of vector `i`):
    /// pairs of lanes, pairs of pairs, then 128-bit halves.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(crate) fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
        let t: [__m256; 8] = core::array::from_fn(|j| {
            let (a, b) = (r[j & !1], r[j | 1]);
            if j % 2 == 0 {
                _mm256_unpacklo_ps(a, b)
            } else {
                _mm256_unpackhi_ps(a, b)
            }
        });
        // u[4g + j]: rows 4g .. 4g + 4 of columns j and j + 4.
        let u: [__m256; 8] = core::array::from_fn(|j| {
            let g = j / 4;
            let (a, b) = match j % 4 {
                0 | 1 => (t[4 * g], t[4 * g + 2]),
                _ => (t[4 * g + 1], t[4 * g + 3]),
            };
            if j % 2 == 0 {
                _mm256_shuffle_ps::<0x44>(a, b)
            } else {
                _mm256_shuffle_ps::<0xee>(a, b)
            }
        });
        core::array::from_fn(|j| {
            let (a, b) = (u[j % 4], u[4 + j % 4]);
            if j < 4 {
                _mm256_permute2f128_ps::<0x20>(a, b)
            } else {
                _mm256_permute2f128_ps::<0x31>(a, b)
            }
        })
    }

    /// The AVX2 block: 8 channels per vector, the portable arithmetic.
    pub(super) struct Lanes8;

    impl super::Lanes for Lanes8 {
        type V = __m256;
        const L: usize = 8;

        #[inline(always)]
        unsafe fn splat(v: f32) -> __m256 {
            _mm256_set1_ps(v)
        }

        #[inline(always)]
        unsafe fn load(v: &[f32]) -> __m256 {
            assert!(v.len() >= 8);
            // SAFETY: 8 values (checked); AVX is enabled in the caller.
            unsafe { _mm256_loadu_ps(v.as_ptr()) }
        }

        #[inline(always)]
        unsafe fn transpose_in(
            x: *const f32,
            hw: usize,
            n: usize,
            ring: *mut __m256,
            slot: usize,
            ring_len: usize,
        ) {
            // SAFETY: AVX2 is enabled in the caller.
            let m = unsafe { below(n as isize) };
            let mut p = x;
            // SAFETY: the trait's contract (plane l at x + l·hw, pixels 0..n; masked-off
            // lanes are not accessed).
            let r: [__m256; 8] = core::array::from_fn(|_| unsafe {
                let v = if n == 8 {
                    _mm256_loadu_ps(p)
                } else {
                    _mm256_maskload_ps(p, m)
                };
                p = p.wrapping_add(hw);
                v
            });
            // SAFETY: AVX2 is enabled in the caller.
            let r = unsafe { transpose8(r) };
            // SAFETY: the trait's contract. (Constant indices only, so that `r` stays in
            // registers.)
            unsafe {
                if n == 8 && slot + 8 <= ring_len {
                    let dst = ring.add(slot);
                    for (j, v) in r.into_iter().enumerate() {
                        *dst.add(j) = v;
                    }
                } else {
                    let mut at = slot;
                    for (j, v) in r.into_iter().enumerate() {
                        if j < n {
                            *ring.add(at) = v;
                            at += 1;
                            if at == ring_len {
                                at = 0;
                            }
                        }
                    }
                }
            }
        }

        #[inline(always)]
        unsafe fn flush(ring: &[__m256], at: usize, y: *mut f32, ohw: usize, px: usize, n: usize) {
            // SAFETY: at + 8 ≤ ring.len() (the trait's contract).
            let v: [__m256; 8] = core::array::from_fn(|j| unsafe { *ring.as_ptr().add(at + j) });
            // SAFETY: AVX2 is enabled in the caller.
            let v = unsafe { transpose8(v) };
            // SAFETY: AVX2 is enabled in the caller.
            let m = unsafe { below(n as isize) };
            for (l, v) in v.iter().enumerate() {
                // SAFETY: plane l < 8, pixels px .. px + n (the trait's contract; masked-off
                // lanes are not written).
                unsafe {
                    if n == 8 {
                        _mm256_storeu_ps(y.add(l * ohw + px), *v);
                    } else {
                        _mm256_maskstore_ps(y.add(l * ohw + px), m, *v);
                    }
                }
            }
        }

        /// From the bias, each tap that exists multiplied and added in order, then clamped:
        /// the portable edge loop of `depthwise`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn edge(
            r: &[Option<*const __m256>; 3],
            k: &[__m256; 9],
            b: __m256,
            (lo, hi): (__m256, __m256),
            ox: usize,
            pl: isize,
            w: usize,
            st: usize,
        ) -> __m256 {
            let mut acc = b;
            for (ky, row) in r.iter().enumerate() {
                let Some(p) = *row else { continue };
                for kx in 0..3 {
                    let ix = (st * ox) as isize + kx as isize - pl;
                    if ix >= 0 && (ix as usize) < w {
                        // SAFETY: ix < w within the ring row p (the trait's contract).
                        let v = unsafe { *p.add(ix as usize) };
                        acc = _mm256_add_ps(acc, _mm256_mul_ps(k[ky * 3 + kx], v));
                    }
                }
            }
            // max(lo, x) and min(hi, x) return `x` when it is NaN (the second operand), and
            // keep −0.0 against a bound of 0.0: `depthwise::clip`.
            _mm256_min_ps(hi, _mm256_max_ps(lo, acc))
        }

        /// From the bias, the nine taps multiplied and added in order (`taps9`), clamped.
        #[inline(always)]
        unsafe fn interior(
            p: [*const __m256; 3],
            c: isize,
            k: &[__m256; 9],
            b: __m256,
            (lo, hi): (__m256, __m256),
        ) -> __m256 {
            let mut acc = b;
            for (ky, &q) in p.iter().enumerate() {
                for kx in 0..3 {
                    // SAFETY: columns c .. c + 3 of the three rows (the trait's contract).
                    let v = unsafe { *q.offset(c + kx as isize) };
                    acc = _mm256_add_ps(acc, _mm256_mul_ps(k[ky * 3 + kx], v));
                }
            }
            _mm256_min_ps(hi, _mm256_max_ps(lo, acc))
        }
    }

    /// `super::depthwise::conv` for the layers of [`super::applies`], all planes of `input`
    /// (`n × c × h × w`) into `output` (`n × c × out_h × out_w`), 8 planes at a time.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn conv(
        s: &Conv2dShape,
        d: &ConvDims,
        input: &[f32],
        weights: &[f32],
        bias: Option<&[f32]>,
        clamp: Clamp,
        output: &mut [f32],
    ) {
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { super::drive::<Lanes8>(s, d, input, weights, bias, clamp, output) }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::super::conv::Conv2dShape;
    use super::super::depthwise::{self, Clamp, NO_CLAMP};
    use std::vec;
    use std::vec::Vec;

    /// The transposition moves every value to its mirrored place.
    #[test]
    #[allow(unsafe_code)]
    fn transpose16_transposes() {
        if !super::super::blocked::fast() {
            std::println!("transpose16_transposes: skipped, x86-64-v4 not active");
            return;
        }
        let mut m = [[0.0f32; 16]; 16];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (i * 16 + j) as f32;
            }
        }
        // SAFETY: x86-64-v4 is active; each row holds 16 values.
        unsafe {
            let r: [__m512; 16] = core::array::from_fn(|i| _mm512_loadu_ps(m[i].as_ptr()));
            let r = super::avx512::transpose16(r);
            for (j, v) in r.iter().enumerate() {
                let mut got = [0.0f32; 16];
                _mm512_storeu_ps(got.as_mut_ptr(), *v);
                for (i, &g) in got.iter().enumerate() {
                    assert_eq!(g, (i * 16 + j) as f32, "lane {i} of vector {j}");
                }
            }
        }
    }

    /// The 8 × 8 transposition moves every value to its mirrored place.
    #[test]
    #[allow(unsafe_code)]
    fn transpose8_transposes() {
        if crate::cpu::active() < crate::cpu::Level::X86V3 {
            std::println!("transpose8_transposes: skipped, x86-64-v3 not active");
            return;
        }
        // SAFETY: x86-64-v3 is active (AVX2); each row holds 8 values.
        unsafe {
            let r: [__m256; 8] = core::array::from_fn(|i| {
                let row: [f32; 8] = core::array::from_fn(|j| (i * 8 + j) as f32);
                _mm256_loadu_ps(row.as_ptr())
            });
            let r = super::avx2::transpose8(r);
            for (j, v) in r.iter().enumerate() {
                let mut got = [0.0f32; 8];
                _mm256_storeu_ps(got.as_mut_ptr(), *v);
                for (i, &g) in got.iter().enumerate() {
                    assert_eq!(g, (i * 8 + j) as f32, "lane {i} of vector {j}");
                }
            }
        }
    }

    /// Values in [−4, 4) with some exact zeros of both signs, a few per hundred.
    fn values(seed: &mut u64, len: usize) -> Vec<f32> {
        (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (*seed >> 40) as u32;
                match u % 97 {
                    0 => 0.0,
                    1 => -0.0,
                    _ => (u as f32 / (1u32 << 24) as f32) * 8.0 - 4.0,
                }
            })
            .collect()
    }

    /// At x86-64-v4, the channel-block path gives the same bits as the row kernel of
    /// `depthwise` (and, where it applies, the phase images), the same taps in the same
    /// order: on MobileNetV2's three small stride-2 layers (fewer channels), odd and tiny
    /// maps, every padding up to 2 on each side, rows of 64 pixels (the ring's widest),
    /// batch 2, 16 to 48 channels, with and without bias, clamped or not.
    #[test]
    #[allow(unsafe_code)]
    fn same_bits_as_the_row_kernel() {
        if !super::super::blocked::fast() {
            std::println!("same_bits_as_the_row_kernel: skipped, x86-64-v4 not active");
            return;
        }
        let mut seed = 0x5eed_d00d_u64;
        let mut shapes = vec![];
        // (n, c, h, w, pad_top, pad_left, pad_bottom, pad_right)
        for g in [
            (1, 32, 56, 56, 1, 1, 1, 1),
            (1, 16, 28, 28, 1, 1, 1, 1),
            (1, 48, 14, 14, 1, 1, 1, 1),
            (2, 16, 7, 7, 1, 1, 1, 1),
            (1, 16, 15, 13, 1, 1, 1, 1),
            (1, 16, 9, 64, 1, 1, 1, 1),
            (1, 32, 64, 3, 2, 0, 2, 1),
            (1, 16, 1, 1, 1, 1, 1, 1),
            (1, 16, 3, 2, 0, 0, 0, 1),
            (2, 32, 8, 8, 0, 2, 1, 0),
            (1, 16, 17, 33, 2, 2, 2, 2),
            (1, 16, 5, 1, 1, 2, 0, 2),
        ] {
            shapes.push(g);
        }
        // Stride 1 (rows of 10 to 32 pixels): MobileNetV2's 14² and 28², "same" or not.
        let stride1 = [
            (1, 16, 14, 14, 1, 1, 1, 1),
            (1, 32, 28, 28, 1, 1, 1, 1),
            (2, 16, 10, 10, 1, 1, 1, 1),
            (1, 16, 3, 32, 0, 2, 2, 0),
            (1, 16, 17, 12, 2, 1, 0, 2),
        ];
        let all = shapes
            .iter()
            .map(|&g| (g, 2))
            .chain(stride1.iter().map(|&g| (g, 1)));
        let mut checked = 0;
        for (i, ((n, c, h, w, pt, pl, pb, pr), st)) in all.enumerate() {
            let mut s = Conv2dShape::new(n, c, h, w, c, 3, 3);
            (s.groups, s.stride_h, s.stride_w) = (c, st, st);
            (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (pt, pl, pb, pr);
            let d = s.dims().unwrap();
            assert!(super::applies(&s, &d), "{s:?}");
            let x = values(&mut seed, d.input_len);
            let wt = values(&mut seed, d.weight_len);
            let b = values(&mut seed, c);
            let bias = (i % 3 != 2).then_some(b.as_slice());
            let clamp: Clamp = [NO_CLAMP, (0.0, 6.0), (-0.5, 1.5)][i % 3];
            let mut got = vec![f32::NAN; d.output_len];
            let mut want = vec![f32::NAN; d.output_len];
            // SAFETY: x86-64-v4 is active.
            unsafe {
                super::avx512::conv(&s, &d, &x, &wt, bias, clamp, &mut got);
                if st == 1 {
                    depthwise::avx512::conv::<1>(&s, &d, &x, &wt, bias, clamp, &mut want);
                } else {
                    depthwise::avx512::conv::<2>(&s, &d, &x, &wt, bias, clamp, &mut want);
                }
            }
            for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "{s:?}: out[{j}] = {a}, want {b}");
            }
            let mut other = |f: &dyn Fn(&mut [f32]), what: &str| {
                want.fill(f32::NAN);
                f(&mut want);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{s:?}: differs from {what}");
            };
            // SAFETY (the calls below): x86-64-v4 is active.
            if depthwise::avx512::flat_wide_applies(&s) {
                other(
                    &|y| unsafe { depthwise::avx512::conv_flat_wide(&s, &x, &wt, bias, clamp, y) },
                    "the wide flat path",
                );
            }
            if depthwise::flat_applies(&s) {
                other(
                    &|y| unsafe { depthwise::avx512::conv_flat(&s, &x, &wt, bias, clamp, y) },
                    "the flat path",
                );
            }
            if super::super::depthwise_phases::applies(&s, &d) {
                // SAFETY: x86-64-v4 is active.
                unsafe {
                    super::super::depthwise_phases::avx512::conv(
                        &s, &d, &x, &wt, bias, clamp, &mut want,
                    )
                };
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{s:?}: differs from the phase images");
            }
            checked += 1;
        }
        assert_eq!(checked, shapes.len() + stride1.len());
    }
}
