//! The fully connected layer of one feature vector (`batch = 1`): `y = W·x + b`, a
//! matrix-vector product whose cost is reading `W` once from memory (AlexNet's first layer:
//! 9216 → 4096, 151 MB of weights). A GEMM's packing of `W` into slivers reads and writes it
//! once more, and the `gemm` crate's batch-1 path reached 22 GB/s on the Zen 5 of BENCHMARKS.md
//! against about 39 GB/s for a plain streaming read; streaming four aligned weight rows at once
//! against `x`, which stays in L1, reaches about 36 GB/s in the network.
//!
//! Each output is `Σᵢ W[o][i]·x[i]` in [`LANES`] partial sums (element `i` goes to sum
//! `i mod LANES`, in order of `i`; a product then a sum, not fused), the partial sums added
//! pairwise (sum `j` plus sum `j + LANES/2`, halving until one is left), then plus the bias.
//! Below x86-64-v4 portable Rust computes this (compiled per level, `cpu::multiversion`); at
//! x86-64-v4 an AVX-512 kernel does the same operations in the same order, so every level
//! gives the same bits.

/// Partial sums per output: element `i` of a row is added to sum `i mod LANES`.
const LANES: usize = 32;

/// `y[o] = Σᵢ w[o·k + i]·x[i] + bias[o]` for `o < y.len()` (no bias: 0), in the order of the
/// module docs, at every level. The caller has checked that `x` holds `k` values, `w`
/// `y.len()·k` and `bias` `y.len()`, and that `k > 0`.
pub(crate) fn gemv(k: usize, x: &[f32], w: &[f32], bias: Option<&[f32]>, y: &mut [f32]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if super::blocked::fast() {
        // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL, AVX2 and FMA supported,
        // `cpu::detect`).
        #[allow(unsafe_code)]
        unsafe {
            avx512::gemv(k, x, w, bias, y)
        };
        return;
    }
    gemv_portable(k, x, w, bias, y);
}

crate::cpu::multiversion! {
    /// [`gemv`] in portable Rust, compiled for the active level.
    fn gemv_portable(k: usize, x: &[f32], w: &[f32], bias: Option<&[f32]>, y: &mut [f32])
        => gemv_body
}

#[inline(always)]
fn gemv_body(k: usize, x: &[f32], w: &[f32], bias: Option<&[f32]>, y: &mut [f32]) {
    let x = &x[..k];
    for (o, (yo, row)) in y.iter_mut().zip(w.chunks_exact(k)).enumerate() {
        *yo = dot(x, row) + bias.map_or(0.0, |b| b[o]);
    }
}

/// The dot product of `row` with `x` (as long as `x`), in the order of the module docs.
#[inline(always)]
fn dot(x: &[f32], row: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (xs, xt) = x.as_chunks::<LANES>();
    let (ws, wt) = row[..x.len()].as_chunks::<LANES>();
    for (xc, wc) in xs.iter().zip(ws) {
        for l in 0..LANES {
            acc[l] += wc[l] * xc[l];
        }
    }
    for (l, (&wv, &xv)) in wt.iter().zip(xt).enumerate() {
        acc[l] += wv * xv;
    }
    reduce(acc)
}

/// The partial sums added pairwise: `s[j] + s[j + h]` for `h = LANES/2, LANES/4, … 1`.
#[inline(always)]
fn reduce(mut s: [f32; LANES]) -> f32 {
    let mut h = LANES / 2;
    while h > 0 {
        for j in 0..h {
            s[j] += s[j + h];
        }
        h /= 2;
    }
    s[0]
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx512 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    /// Weight rows streamed at once where every row starts at the same offset from a 64-byte
    /// line (`k` a multiple of 16).
    const ROWS: usize = 4;

    /// [`super::gemv`] on AVX-512: the 32 partial sums of a row are two vectors. Weights are
    /// loaded from 64-byte aligned addresses (unaligned loads, each touching two cache lines,
    /// took AlexNet's first layer from 4.2–4.5 to 4.6–5.3 ms): a row whose first `h`
    /// elements (0–15) precede its first aligned address keeps its sums rotated by `h` (lane `j`
    /// of the pair of vectors holds sum `(h + j) mod 32`; the head's products enter lanes
    /// `32 − h …`), so every sum sees the same additions in the same order as in the portable
    /// code. The rotation needs no undoing: the pairwise reduction adds sums whose numbers
    /// differ by 16, then 8, 4, 2, 1 (mod 32, 16, …), which a rotation keeps paired, and
    /// `a + b` and `b + a` are the same bits (NaN payloads aside).
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    pub(super) fn gemv(k: usize, x: &[f32], w: &[f32], bias: Option<&[f32]>, y: &mut [f32]) {
        let n = y.len();
        // Checked once: every row below reads inside `w`, `x` and `bias`.
        assert!(k > 0 && x.len() >= k && w.len() >= n * k && bias.is_none_or(|b| b.len() >= n));
        let mut o = 0;
        if k.is_multiple_of(16) {
            while o + ROWS <= n {
                let sums = rows::<ROWS>(k, x, w, o);
                for (r, s) in sums.into_iter().enumerate() {
                    y[o + r] = s + bias.map_or(0.0, |b| b[o + r]);
                }
                o += ROWS;
            }
        }
        while o < n {
            let [s] = rows::<1>(k, x, w, o);
            y[o] = s + bias.map_or(0.0, |b| b[o]);
            o += 1;
        }
    }

    /// The dot products of rows `o .. o + R` of `w` with `x`; the rows start at the same
    /// offset from a 64-byte line (`R = 1`, or `k` a multiple of 16).
    #[inline]
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    fn rows<const R: usize>(k: usize, x: &[f32], w: &[f32], o: usize) -> [f32; R] {
        let row = |r: usize| w[(o + r) * k..][..k].as_ptr();
        let ptrs: [*const f32; R] = core::array::from_fn(row);
        // Elements before the first 64-byte aligned one (0–15; at most `k`).
        let h = ((64 - ptrs[0] as usize % 64) % 64 / 4).min(k);
        let body = (k - h) / 32 * 32;
        let rest = k - h - body;
        let xp = x.as_ptr();
        let zero = _mm512_setzero_ps();
        // SAFETY (every load below): element `i < k` of a row is at `ptrs[r] + i`, inside `w`
        // (checked by `gemv`), and `x` holds `k` elements; masked loads touch only the lanes
        // whose mask bit is set, each an element `< k`.
        let mut acc = [[zero; 2]; R];
        if h > 0 {
            // Head element `i < h` goes to rotated lane `32 − h + i`: lanes `16 − h + i` of
            // the second vector, which `expandloadu` fills with consecutive elements.
            let m: __mmask16 = (((1u32 << h) - 1) << (16 - h)) as __mmask16;
            let xh = unsafe { _mm512_maskz_expandloadu_ps(m, xp) };
            for (a, &p) in acc.iter_mut().zip(&ptrs) {
                let wh = unsafe { _mm512_maskz_expandloadu_ps(m, p) };
                a[1] = _mm512_mask_add_ps(zero, m, zero, _mm512_mul_ps(wh, xh));
            }
        }
        let mut i = h;
        while i < h + body {
            let x0 = unsafe { _mm512_loadu_ps(xp.add(i)) };
            let x1 = unsafe { _mm512_loadu_ps(xp.add(i + 16)) };
            for (a, &p) in acc.iter_mut().zip(&ptrs) {
                let q = unsafe { p.add(i) };
                let w0 = unsafe { _mm512_load_ps(q) };
                let w1 = unsafe { _mm512_load_ps(q.add(16)) };
                a[0] = _mm512_add_ps(a[0], _mm512_mul_ps(w0, x0));
                a[1] = _mm512_add_ps(a[1], _mm512_mul_ps(w1, x1));
            }
            i += 32;
        }
        if rest > 0 {
            // Tail element `i + j` goes to rotated lane `j`; the other lanes are unchanged.
            let m0: __mmask16 = ((1u32 << rest.min(16)) - 1) as __mmask16;
            let m1: __mmask16 = ((1u32 << rest.saturating_sub(16)) - 1) as __mmask16;
            let x0 = unsafe { _mm512_maskz_loadu_ps(m0, xp.add(i)) };
            let x1 = unsafe { _mm512_maskz_loadu_ps(m1, xp.add(i + 16)) };
            for (a, &p) in acc.iter_mut().zip(&ptrs) {
                let w0 = unsafe { _mm512_maskz_loadu_ps(m0, p.add(i)) };
                let w1 = unsafe { _mm512_maskz_loadu_ps(m1, p.add(i + 16)) };
                a[0] = _mm512_mask_add_ps(a[0], m0, a[0], _mm512_mul_ps(w0, x0));
                a[1] = _mm512_mask_add_ps(a[1], m1, a[1], _mm512_mul_ps(w1, x1));
            }
        }
        let mut out = [0.0; R];
        for (s, [a0, a1]) in out.iter_mut().zip(acc) {
            *s = reduce(_mm512_add_ps(a0, a1));
        }
        out
    }

    /// Sums `0..16` of [`super::reduce`] after its first step: `s[j] + s[j + 8]`, `+ 4`, `+ 2`,
    /// `+ 1`.
    #[inline]
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
    fn reduce(v: __m512) -> f32 {
        let v8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps::<1>(v));
        let v4 = _mm_add_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps::<1>(v8));
        let v2 = _mm_add_ps(v4, _mm_movehl_ps(v4, v4));
        let v1 = _mm_add_ss(v2, _mm_shuffle_ps::<1>(v2, v2));
        _mm_cvtss_f32(v1)
    }
}
