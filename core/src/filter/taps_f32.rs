//! The `f32` engines' inner loop, compiled for every [`crate::cpu`] level: one output row as
//! `out[x] = Σ_i c_i · taps_i[x]`, where each tap is a source row already shifted to its
//! offset.
//!
//! The sums of a block of [`BLOCK`] pixels stay in registers across all taps, instead of a pass
//! over an accumulator row in memory per tap (two loads and a store per pixel and tap). Each
//! pixel still starts from `0.0` and adds its products in tap order with separate multiplies and
//! adds (Rust never fuses them), so the result is bit-identical to the tap-by-tap loop at every
//! level; only the vector width and the memory traffic change.

/// Output pixels whose sums one block keeps in registers (8 SSE2, 4 AVX2, 2 AVX-512 vectors).
const BLOCK: usize = 32;

crate::cpu::multiversion! {
    /// `out[x] = (((0 + c_0·taps_0[x]) + c_1·taps_1[x]) + …)` for `x < out.len()`; every tap
    /// slice must hold at least `out.len()` elements and `coeffs` one coefficient per tap.
    pub(crate) fn taps_row_f32(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) => taps_row_body
}

#[inline(always)]
fn taps_row_body(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) {
    assert!(taps.len() == coeffs.len());
    // The tap counts of the common kernels (3, 5, 7 separable; 3×3, 5×5, 7×7 dense) get a
    // loop unrolled at compile time.
    match taps.len() {
        3 => fixed::<3>(taps, coeffs, out),
        5 => fixed::<5>(taps, coeffs, out),
        7 => fixed::<7>(taps, coeffs, out),
        9 => fixed::<9>(taps, coeffs, out),
        25 => fixed::<25>(taps, coeffs, out),
        49 => fixed::<49>(taps, coeffs, out),
        _ => rows(taps, coeffs, out),
    }
}

#[inline(always)]
fn fixed<const K: usize>(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) {
    let taps: &[&[f32]; K] = taps.try_into().unwrap();
    let coeffs: &[f32; K] = coeffs.try_into().unwrap();
    rows(taps, coeffs, out);
}

#[inline(always)]
fn rows(taps: &[&[f32]], coeffs: &[f32], out: &mut [f32]) {
    let w = out.len();
    let mut cut: [&[f32]; super::MAX_KERNEL_SIZE * super::MAX_KERNEL_SIZE] =
        [&[]; super::MAX_KERNEL_SIZE * super::MAX_KERNEL_SIZE];
    // Every tap exactly `w` long, so that one bound check covers all of a block's loads.
    for (c, t) in cut.iter_mut().zip(taps) {
        *c = &t[..w];
    }
    let taps = &cut[..taps.len()];
    if w < BLOCK {
        for (x, o) in out.iter_mut().enumerate() {
            let mut s = 0.0f32;
            for (t, &c) in taps.iter().zip(coeffs) {
                s += c * t[x];
            }
            *o = s;
        }
        return;
    }
    let mut x = 0;
    while x < w {
        // The last block overlaps the one before; it recomputes the same values.
        let xs = x.min(w - BLOCK);
        let mut a = [0.0f32; BLOCK];
        for (t, &c) in taps.iter().zip(coeffs) {
            let p: &[f32; BLOCK] = t[xs..xs + BLOCK].try_into().unwrap();
            for (a, &p) in a.iter_mut().zip(p) {
                *a += c * p;
            }
        }
        out[xs..xs + BLOCK].copy_from_slice(&a);
        x += BLOCK;
    }
}
