//! Warped copies of the target for P-N learning (OpenTLD's `PatchGenerator`): a random
//! similarity transform (rotation, scale, shift) of an image region about its centre, plus
//! Gaussian noise, so the fern ensemble learns the target under small changes of appearance.
//!
//! The warp writes the region of the destination that it transforms and nothing else. Pixels
//! are sampled bilinearly from the source (coordinates clamped to the frame), in `f32` in a
//! fixed order, so the result is the same on every platform for the same random draws.

use crate::geometry::Rect;

use crate::rng::{SplitMix64, NOISE_TABLE_LEN};

/// Ranges of the random warp, each drawn uniformly in `[−range, range]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WarpRanges {
    /// Rotation, degrees.
    pub angle_deg: f32,
    /// Relative scale change (0.01 = ±1 %).
    pub scale: f32,
    /// Shift as a fraction of the region's width and height.
    pub shift: f32,
    /// Standard deviation of the additive noise, grey levels.
    pub noise: f32,
}

/// Bilinear sample of a packed `w × h` image at `(x, y)`, coordinates clamped to the image.
#[inline]
fn sample(src: &[u8], w: usize, h: usize, x: f32, y: f32) -> f32 {
    let x = x.clamp(0.0, (w - 1) as f32);
    let y = y.clamp(0.0, (h - 1) as f32);
    let (x0, y0) = (x as usize, y as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    let row0 = &src[y0 * w..];
    let row1 = &src[y1 * w..];
    let top = row0[x0] as f32 + (row0[x1] as f32 - row0[x0] as f32) * fx;
    let bottom = row1[x0] as f32 + (row1[x1] as f32 - row1[x0] as f32) * fx;
    top + (bottom - top) * fy
}

/// Writes into `dst` (packed, `w × h`, same size as `src`) the pixels of `region` (inside the
/// frame) warped by a random similarity transform about the region's centre, plus noise drawn
/// from `noise_table` (standard normal samples, [`NOISE_TABLE_LEN`] entries).
#[allow(clippy::too_many_arguments)] // Disjoint borrows of the tracker's fields.
pub(crate) fn warp_region(
    src: &[u8],
    dst: &mut [u8],
    w: usize,
    h: usize,
    region: Rect,
    ranges: &WarpRanges,
    noise_table: &[f32],
    rng: &mut SplitMix64,
) {
    let angle = rng.signed_unit() * ranges.angle_deg * (core::f32::consts::PI / 180.0);
    let scale = 1.0 + rng.signed_unit() * ranges.scale;
    let tx = rng.signed_unit() * ranges.shift * region.width as f32;
    let ty = rng.signed_unit() * ranges.shift * region.height as f32;
    // Inverse map: src = c + R(−θ)·(d − t)/s for d = dst − c.
    let (sin, cos) = (libm::sinf(angle), libm::cosf(angle));
    let (a, b) = (cos / scale, sin / scale);
    let cx = region.x as f32 + (region.width as f32 - 1.0) * 0.5;
    let cy = region.y as f32 + (region.height as f32 - 1.0) * 0.5;
    for y in region.y as usize..(region.y + region.height) as usize {
        let dy = y as f32 - cy - ty;
        let row = &mut dst[y * w..(y + 1) * w];
        for (x, out) in row
            .iter_mut()
            .enumerate()
            .take((region.x + region.width) as usize)
            .skip(region.x as usize)
        {
            let dx = x as f32 - cx - tx;
            let sx = cx + a * dx + b * dy;
            let sy = cy - b * dx + a * dy;
            let noise = noise_table[(rng.next_u64() >> 52) as usize & (NOISE_TABLE_LEN - 1)];
            let v = sample(src, w, h, sx, sy) + noise * ranges.noise;
            // Round half up and saturate: for `v + ½ ≥ 0`, truncation is `floor`.
            *out = (v + 0.5).clamp(0.0, 255.0) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::fill_noise_table;

    #[test]
    fn identity_warp_copies_the_region_and_nothing_else() {
        let (w, h) = (20, 12);
        let src: [u8; 240] = core::array::from_fn(|i| (i * 7 % 251) as u8);
        let mut dst = [9u8; 240];
        let mut rng = SplitMix64(3);
        let mut table = [0.0f32; NOISE_TABLE_LEN];
        fill_noise_table(&mut rng, &mut table);
        let zero = WarpRanges {
            angle_deg: 0.0,
            scale: 0.0,
            shift: 0.0,
            noise: 0.0,
        };
        let region = Rect::new(3, 2, 10, 7);
        warp_region(&src, &mut dst, w, h, region, &zero, &table, &mut rng);
        for y in 0..h {
            for x in 0..w {
                let inside = region.contains_point(x as i32, y as i32);
                let want = if inside { src[y * w + x] } else { 9 };
                assert_eq!(dst[y * w + x], want, "({x}, {y})");
            }
        }
    }

    #[test]
    fn noise_table_is_standard_normal() {
        let mut table = [0.0f32; NOISE_TABLE_LEN];
        fill_noise_table(&mut SplitMix64(11), &mut table);
        let n = table.len() as f64;
        let mean = table.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = table
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!((var - 1.0).abs() < 0.08, "variance {var}");
    }
}
