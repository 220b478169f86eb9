//! The AArch64 NEON row kernels: the dense filter with `smlal` on de-interleaved pair rows. The
//! separable and box paths stay portable here (NEON multiplies `i32` lanes natively, and LLVM
//! vectorises those loops well), so their entry points are stubs.

use core::arch::aarch64::*;

use super::{Splat, LANES, MAX_PAIRS};

/// Never called: [`super::SepQ16::new`] returns `None` on this target.
pub(super) fn sep_horizontal<const N: bool>(_: &[i32], _: &[super::Splat], _: &mut [i32]) {
    unreachable!("no separable SIMD path on this target")
}

/// Never called: [`super::SepQ16::new`] returns `None` on this target.
pub(super) fn sep_vertical<const N: bool>(
    _: &[&[i32]],
    _: &[[super::Splat; 2]],
    _: super::VerticalOut,
) {
    unreachable!("no separable SIMD path on this target")
}

/// No box SIMD here: the portable loops do the whole row.
pub(super) fn box_update(_: &mut [u16], _: &[u8], _: &[u8]) -> usize {
    0
}

/// Never called: [`super::box_row`] returns `false` on this target.
pub(super) fn box_row<const K: usize>(_: &[u16], _: u16, _: u32, _: &mut [u8]) {
    unreachable!("no box SIMD path on this target")
}

/// Left to the portable loop, which LLVM vectorises well for NEON.
#[inline(always)]
pub(super) fn pair_row_u8(_: &[u8], _: &mut [i32]) -> usize {
    0
}

/// As the x86 version: exact `i32` sums of pixel × coefficient, rounded, saturated, stored.
/// Each `starts` slice must hold at least `out.len() ≥ 8` elements.
#[inline(always)]
pub(super) fn dense_row(starts: &[&[i32]], packed: &[Splat], shift: u32, out: &mut [u8]) {
    let w = out.len();
    assert!(w >= LANES && starts.iter().all(|s| s.len() >= w));
    let mut ptrs = [core::ptr::null::<i32>(); MAX_PAIRS];
    for (p, s) in ptrs.iter_mut().zip(starts) {
        *p = s.as_ptr();
    }
    let ptrs = &ptrs[..starts.len()];
    // SAFETY: checked above: the loads read 8 elements (16 `i16`) of a `starts` slice at
    // `xs ≤ w − 8`, the stores write 8 bytes of `out` there.
    unsafe {
        let half = vdupq_n_s32(((1i64 << shift) >> 1) as i32);
        let right = vdupq_n_s32(-(shift as i32));
        let mut x = 0;
        while x < w {
            let xs = x.min(w - LANES);
            let mut lo = vdupq_n_s32(0);
            let mut hi = vdupq_n_s32(0);
            for (&a, c) in ptrs.iter().zip(packed) {
                let (c0, c1) = (c.0[0] as i16, (c.0[0] >> 16) as i16);
                // De-interleaves 8 pair elements: .0 = pixels x.., .1 = pixels x+1..
                let v = vld2q_s16(a.add(xs).cast());
                lo = vmlal_n_s16(lo, vget_low_s16(v.0), c0);
                hi = vmlal_high_n_s16(hi, v.0, c0);
                lo = vmlal_n_s16(lo, vget_low_s16(v.1), c1);
                hi = vmlal_high_n_s16(hi, v.1, c1);
            }
            lo = vshlq_s32(vaddq_s32(lo, half), right);
            hi = vshlq_s32(vaddq_s32(hi, half), right);
            let words = vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi));
            vst1_u8(out.as_mut_ptr().add(xs), vqmovun_s16(words));
            x += LANES;
        }
    }
}
