//! The `u8` box filter as running sums: additions and subtractions only, whatever the size.
//!
//! Column sums of the padded source (`k` rows, 16-bit: at most `255·15`) move down the image by
//! adding the source row that enters the window and subtracting the one that leaves, read
//! straight from the image (border rows through the border mode). Each output row is then the
//! sum of `k` adjacent column sums (at most `255·15²`, still 16-bit), divided by the area with
//! the rounded-up reciprocal. All sums are exact integers, so the result is that of the
//! convolution with an all-ones kernel.

use super::engine::separable_scratch_len;
use super::simd;
use crate::border::Border;
use crate::error::{Error, Result};
use crate::image::{same_size, ImageView, ImageViewMut};

/// The rounded-up reciprocal `⌈2^32 / area⌉` [`div_round`] multiplies by, for `area > 1`.
pub(crate) fn reciprocal(area: u32) -> u32 {
    debug_assert!(area > 1);
    (1u64 << 32).div_ceil(area as u64) as u32
}

/// `floor((sum + area/2) / area)` for `sum ≤ 255·area`, `1 < area ≤ 225`, by one
/// `u32 × u32 → u64` multiplication with [`reciprocal`]`(area)`; exact over that range (checked
/// exhaustively by a unit test).
#[inline]
pub(crate) fn div_round(sum: u32, area: u32, recip: u32) -> u8 {
    (((sum + area / 2) as u64 * recip as u64) >> 32) as u8
}

/// One padded source row as the column sums see it: an image row, or (outside the image with a
/// constant border) the constant everywhere.
#[derive(Clone, Copy)]
enum Source<'a> {
    Row(&'a [u8]),
    Fill(u8),
}

/// The source column of each border column sum of a padded row (`r` each side, left then
/// right), `None` where a constant border supplies `fill` instead: computed once per image, as
/// `Border::map_index` divides.
struct Edges {
    cols: [Option<usize>; super::MAX_KERNEL_SIZE - 1],
    r: usize,
    fill: u8,
}

impl Edges {
    fn new(border: Border<u8>, w: usize, r: usize) -> Self {
        let mut cols = [None; super::MAX_KERNEL_SIZE - 1];
        for (j, c) in cols.iter_mut().take(2 * r).enumerate() {
            let i = if j < r {
                j as isize - r as isize
            } else {
                (w + j - r) as isize
            };
            *c = border.map_index(i, w);
        }
        let fill = match border {
            Border::Constant(c) => c,
            _ => 0,
        };
        Self { cols, r, fill }
    }

    /// Padded column `col`'s value (`None`: the constant) of source `s`.
    fn value(&self, s: Source<'_>, col: Option<usize>) -> u16 {
        match s {
            Source::Fill(c) => c as u16,
            Source::Row(row) => col.map_or(self.fill, |x| row[x]) as u16,
        }
    }
}

/// `sums[i] += enter(i) − leave(i)` over the padded row (`edges.r` border columns each side).
fn update(sums: &mut [u16], enter: Source<'_>, leave: Source<'_>, edges: &Edges) {
    let r = edges.r;
    let w = sums.len() - 2 * r;
    let inner = &mut sums[r..r + w];
    let done = match (enter, leave) {
        (Source::Row(e), Source::Row(l)) => simd::box_update(inner, e, l),
        _ => 0,
    };
    for (x, s) in inner.iter_mut().enumerate().skip(done) {
        let (e, l) = (edges.value(enter, Some(x)), edges.value(leave, Some(x)));
        *s = s.wrapping_add(e).wrapping_sub(l);
    }
    let outer = (0..r).chain(r + w..sums.len());
    for (i, &col) in outer.zip(&edges.cols[..2 * r]) {
        let (e, l) = (edges.value(enter, col), edges.value(leave, col));
        sums[i] = sums[i].wrapping_add(e).wrapping_sub(l);
    }
}

/// Box blur of a `u8` image: the exact `k × k` window sum divided by `k²`, rounded to nearest
/// with halves up. Scratch and errors as the separable engine with two `k`-tap kernels
/// ([`separable_scratch_len`]`(w, w, k, k)`; this uses far less).
pub(crate) fn box_mean_u8(
    src: &ImageView<'_, u8>,
    dst: &mut ImageViewMut<'_, u8>,
    k: usize,
    border: Border<u8>,
    scratch: &mut [i32],
) -> Result<()> {
    same_size(src.size(), dst.size())?;
    debug_assert!(k % 2 == 1 && k <= super::MAX_KERNEL_SIZE);
    let (w, h) = src.size();
    let need = separable_scratch_len(w, w, k, k).ok_or(Error::Overflow)?;
    if scratch.len() < need {
        return Err(Error::BufferTooSmall);
    }
    let r = k / 2;
    let sums = &mut simd::as_u16(scratch)[..w + k - 1];
    let source = |vy: isize| match border.map_index(vy, h) {
        Some(sy) => Source::Row(src.row(sy)),
        None => Source::Fill(match border {
            Border::Constant(c) => c,
            _ => 0,
        }),
    };
    let area = (k * k) as u32;
    let recip = if area > 1 { reciprocal(area) } else { 0 };
    let edges = Edges::new(border, w, r);
    sums.fill(0);
    for vy in -(r as isize)..=r as isize {
        update(sums, source(vy), Source::Fill(0), &edges);
    }
    for y in 0..h {
        if y > 0 {
            let (enter, leave) = ((y + r) as isize, y as isize - 1 - r as isize);
            update(sums, source(enter), source(leave), &edges);
        }
        let out = dst.row_mut(y);
        if simd::box_row(sums, k, area, recip, out) {
            continue;
        }
        for (x, o) in out.iter_mut().enumerate() {
            let s: u32 = sums[x..x + k].iter().map(|&v| v as u32).sum();
            *o = if area == 1 {
                s as u8
            } else {
                div_round(s, area, recip)
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_division_is_exact_over_the_whole_range() {
        for k in (3..=super::super::MAX_KERNEL_SIZE).step_by(2) {
            let area = (k * k) as u32;
            let recip = reciprocal(area);
            for sum in 0..=255 * area {
                let want = (sum + area / 2) / area;
                assert_eq!(div_round(sum, area, recip) as u32, want, "k={k} sum={sum}");
            }
        }
    }

    /// The SIMD division (16-bit pieces) against the scalar one, for every window sum: column
    /// sums laid out so that each output pixel's window sum is one value of the range.
    #[test]
    fn box_div_table_is_exact() {
        for k in (3..=super::super::MAX_KERNEL_SIZE).step_by(2) {
            let area = (k * k) as u32;
            let (m, sh) = simd::BOX_DIV[k / 2];
            for x in 0..=255 * area + area / 2 {
                assert_eq!((x * m as u32) >> 16 >> sh, x / area, "k={k} x={x}");
            }
        }
    }

    #[test]
    fn simd_division_matches_scalar() {
        for k in (3..=super::super::MAX_KERNEL_SIZE).step_by(2) {
            let area = (k * k) as u32;
            let recip = reciprocal(area);
            // k = 1 windows are not used with area > 1 in the filter, but `box_row` only sums
            // `k` taps: put the whole window sum in the first tap of each window, zeros after.
            let max = 255 * area;
            let mut start = 0u32;
            while start <= max {
                let w = 64usize;
                let mut sums = vec![0u16; w * k + k + 4 * simd::LANES];
                let mut want = vec![0u8; w];
                for x in 0..w {
                    let s = (start + x as u32).min(max);
                    want[x] = div_round(s, area, recip);
                    sums[x * k] = s as u16;
                }
                // Spread: output x reads sums[x*k .. x*k + k]; use a strided copy.
                let mut out = vec![0u8; w];
                // 8 output pixels take the SSE2 kernel, 16 the AVX2 one and 32 the AVX-512 one
                // where the CPU has them.
                for lanes in [simd::LANES, 2 * simd::LANES, 4 * simd::LANES] {
                    for (x, o) in out.iter_mut().enumerate() {
                        let window = &sums[x * k..x * k + k + lanes - 1];
                        let mut one = [0u8; 4 * simd::LANES];
                        let one = &mut one[..lanes];
                        if simd::box_row(window, k, area, recip, one) {
                            *o = one[0];
                        } else {
                            let s = window[..k].iter().map(|&v| v as u32).sum();
                            *o = div_round(s, area, recip);
                        }
                    }
                    assert_eq!(out, want, "k={k} from {start}, {lanes} lanes");
                }
                start += w as u32;
            }
        }
    }
}
