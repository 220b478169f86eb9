//! Targets without a SIMD path (e.g. Cortex-M): every entry point reports "not done", and the
//! parent module's constructors return `None`, so callers keep the portable loops.

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

/// No SIMD here: the portable loop does the whole row.
pub(super) fn pair_row_u8(_: &[u8], _: &mut [i32]) -> usize {
    0
}

/// Never called: [`super::DenseQ16::new`] returns `None` on targets without a SIMD path.
pub(super) fn dense_row(_: &[&[i32]], _: &[super::Splat], _: u32, _: &mut [u8]) {
    unreachable!("no SIMD path on this target")
}
