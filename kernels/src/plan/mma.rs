//! The matrix-unit filter (`mv_filter2d_u8_mma`, `kernels/common/filter.h`): dense `u8` filters
//! of 3, 5 or 7 taps a side (and square separable ones, as the dense filter of their outer
//! product) from warp-wide 16 × 8 × 16 integer matrix products, with the coefficients split
//! into byte planes.

use super::{Arg, Img, Launch, Planner, Table};
use crate::{
    names, KernelSet, Tile, MMA_COLS, MMA_MAX_K, MMA_PLANES, MMA_ROW_WORDS, MMA_SLOTS, MMA_THREADS,
};

/// Bytes of one kernel row of one plane.
const ROW_BYTES: usize = 4 * MMA_ROW_WORDS;

/// Where coefficient 0 of a kernel row of radius `r` sits in its bytes: lane `(g, t)` reads
/// the 4 bytes from `4t − g + 8` on, and its B fragment needs tap `4t + i − g − 4 + r` at byte
/// `i`.
const fn first_tap(r: usize) -> usize {
    12 - r
}

/// The coefficients of a `k × k` fixed-point kernel as the matrix-unit filter takes them: each
/// kernel row of each byte plane as [`MMA_ROW_WORDS`] words, coefficient `kx` at byte
/// `kx + 12 − k/2` and zeros around it (the band every lane reads its fragment from).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaTaps {
    /// The byte rows, plane by plane (most significant first), kernel row by kernel row.
    pub table: Table,
    /// Byte planes: 1 for coefficients in −128 … 127, 2 within 16 bits, 3 within 24.
    pub planes: usize,
}

impl MmaTaps {
    /// The byte rows of `coeffs` (`k × k`, row-major) for a filter that adds `round` (its
    /// rounding term: `2^(shift−1)`, or half a box's area) before it finishes each output.
    ///
    /// Errors: `None` when the kernel cannot run there exactly: `k` is not 3, 5 or 7, a
    /// coefficient needs more than [`MMA_PLANES`] bytes, or a partial sum of the planes could
    /// leave an `int` (`255 · (Σ|c| + 256^(planes − 1) · k²) + round` beyond `i32::MAX`).
    pub fn new(coeffs: &[i64], k: usize, round: i64) -> Option<Self> {
        if !(k == 3 || k == 5 || k == MMA_MAX_K) || coeffs.len() != k * k {
            return None;
        }
        // The most significant plane is a signed byte: c >> 8 (planes − 1) in −128 … 127.
        let widest = coeffs.iter().map(|&c| if c < 0 { !c } else { c }).max()?;
        let planes = (1..=MMA_PLANES).find(|&p| widest < 1i64 << (8 * p - 1))?;
        let gain: i64 = coeffs.iter().map(|c| c.abs()).sum();
        let worst = 255 * (gain + (1i64 << (8 * (planes - 1))) * (k * k) as i64) + round;
        if worst > i64::from(i32::MAX) {
            return None;
        }
        let first = first_tap(k / 2);
        let mut bytes = vec![0u8; planes * k * ROW_BYTES];
        for p in 0..planes {
            let down = 8 * (planes - 1 - p);
            for ky in 0..k {
                for kx in 0..k {
                    let c = coeffs[ky * k + kx] >> down;
                    // The top plane keeps the sign (its byte is read as signed), the others are
                    // the unsigned bytes below it.
                    bytes[(p * k + ky) * ROW_BYTES + first + kx] = (c & 255) as u8;
                }
            }
        }
        Some(Self {
            table: Table {
                bytes,
                slots: MMA_SLOTS,
            },
            planes,
        })
    }
}

impl Planner {
    /// The launch of `mv_filter2d_u8_mma` over `src` into `dst` (checked by the caller) with
    /// `taps` of a `k × k` kernel; `finish` 0 rounds `shift` bits off, 1 divides by `area` (a
    /// box).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mma<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        taps: MmaTaps,
        k: usize,
        shift: u32,
        box_area: Option<i32>,
        border: [Arg<B>; 2],
        tile: Tile,
    ) -> Launch<B> {
        let (w, h) = src.size();
        let mut args = Vec::with_capacity(15);
        args.extend(src.data());
        args.extend(dst.data());
        args.extend(src.dims());
        args.push(Arg::Table(taps.table));
        args.push(Arg::I32(k as i32));
        args.push(Arg::I32(taps.planes as i32));
        args.push(Arg::I32(shift as i32));
        args.push(Arg::I32(i32::from(box_area.is_some())));
        args.push(Arg::I32(box_area.unwrap_or(1)));
        args.extend(border);
        let groups = [w.div_ceil(MMA_COLS), h.div_ceil(16 * k)];
        Launch::new(
            KernelSet::Filter,
            tile,
            names::FILTER2D_U8_MMA,
            args,
            [groups[0] * MMA_THREADS, groups[1]],
            [MMA_THREADS, 1],
        )
    }
}
