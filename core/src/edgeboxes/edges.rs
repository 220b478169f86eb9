//! The edge map EdgeBoxes groups: 3 × 3 Sobel gradients, thinned to one-pixel ridges by
//! non-maximum suppression across the edge, magnitudes normalised to `[0, 1]`.
//!
//! This stands in for the structured-forest edge detector of the reference (see the module docs
//! of [`super`]). The window is blurred ([`EDGE_BLUR_KSIZE`]), then per pixel `p` with Sobel
//! derivatives `(gx, gy)` ([`crate::filter::sobel_u8`], replicated border) and
//! `g = √(gx² + gy²)`:
//! * **Suppression**: the gradient direction is quantised to 0°, 45°, 90° or 135° (the tangent
//!   of 22.5° approximated by 2/5, in integers); `p` survives when `g(p) > g(p − d)` and
//!   `g(p) ≥ g(p + d)` for its neighbours `p ± d` along that direction, so a plateau two pixels
//!   wide (a step edge) keeps exactly one pixel. The outermost ring of the window is never an
//!   edge (the reference excludes it from grouping too).
//! * **Normalisation**: survivors are divided by `max(largest surviving g, `[`EDGE_NORM_FLOOR`]`)`
//!   so the strongest ridge of a contrasted window is 1 and a low-contrast window stays weak.
//! * **Orientation**: of the gradient (the edge normal) folded into `[0, π)`, computed only
//!   where the normalised magnitude exceeds `edge_min_mag` (the pixels grouping reads); 0
//!   elsewhere.

use crate::border::Border;
use crate::error::Result;
use crate::filter::{gaussian_blur_u8, sobel_u8};
use crate::image::{ImageView, ImageViewMut};

/// Smallest normaliser of the Sobel magnitude, in Sobel units (`4·` grey levels per pixel): a
/// 64-grey-level step. Below it, magnitudes are not stretched to 1, so sensor noise on a flat
/// window does not become a full-strength edge.
pub const EDGE_NORM_FLOOR: f32 = 256.0;

/// Side of the Gaussian pre-blur, in pixels: OpenCV's fixed 7-tap kernel per axis (σ ≈ 1.4 px).
/// It takes pixel noise and fine texture out of the gradients, standing in for the texture
/// suppression the structured forest learned; it also keeps the number of edge groups, and so
/// the cost of scoring, down (5 taps made a 4-px checkerboard object 3× slower to search).
pub const EDGE_BLUR_KSIZE: usize = 7;

/// Storage of the edge map, carved from the object's arena.
pub(crate) struct EdgeStore<'a> {
    pub blurred: &'a mut [u8],
    pub dx: &'a mut [i16],
    pub dy: &'a mut [i16],
    pub scratch: &'a mut [i32],
    /// Normalised ridge magnitude, `w·h`, row-major with stride `w`.
    pub mag: &'a mut [f32],
    /// Gradient orientation in `[0, π)` where `mag > edge_min_mag`, else 0.
    pub ori: &'a mut [f32],
}

/// Computes the edge map of `window` into `st` (sized for it by the caller).
pub(crate) fn compute(
    window: &ImageView<'_, u8>,
    st: &mut EdgeStore<'_>,
    edge_min_mag: f32,
) -> Result<()> {
    let (w, h) = window.size();
    let n = w * h;
    {
        let mut bv = ImageViewMut::packed(&mut st.blurred[..n], w, h)?;
        gaussian_blur_u8(
            window,
            &mut bv,
            EDGE_BLUR_KSIZE,
            0.0,
            Border::Replicate,
            st.scratch,
        )?;
        let blurred = ImageView::packed(&st.blurred[..n], w, h)?;
        let mut dxv = ImageViewMut::packed(&mut st.dx[..n], w, h)?;
        let mut dyv = ImageViewMut::packed(&mut st.dy[..n], w, h)?;
        sobel_u8(&blurred, &mut dxv, &mut dyv, Border::Replicate, st.scratch)?;
    }
    let (dx, dy) = (&st.dx[..n], &st.dy[..n]);
    let mag = &mut st.mag[..n];
    let ori = &mut st.ori[..n];
    // Squared magnitudes (integers below 2²⁴, exact in f32) go to `ori` for the suppression
    // pass, which writes only `mag`; `ori` gets the orientations afterwards.
    for ((o, &a), &b) in ori.iter_mut().zip(dx).zip(dy) {
        let (a, b) = (a as i32, b as i32);
        *o = (a * a + b * b) as f32;
    }
    mag.fill(0.0);
    let mut max_g2 = 0.0f32;
    for y in 1..h.saturating_sub(1) {
        let up = &ori[(y - 1) * w..y * w];
        let cur = &ori[y * w..(y + 1) * w];
        let dn = &ori[(y + 1) * w..(y + 2) * w];
        let (dxr, dyr) = (&dx[y * w..(y + 1) * w], &dy[y * w..(y + 1) * w]);
        let out = &mut mag[y * w..(y + 1) * w];
        for x in 1..w - 1 {
            let m = cur[x];
            if m == 0.0 {
                continue;
            }
            let (gx, gy) = (dxr[x] as i32, dyr[x] as i32);
            let (ax, ay) = (gx.abs(), gy.abs());
            // The two neighbours along the quantised gradient direction.
            let (before, after) = if 5 * ay <= 2 * ax {
                (cur[x - 1], cur[x + 1])
            } else if 5 * ax <= 2 * ay {
                (up[x], dn[x])
            } else if (gx > 0) == (gy > 0) {
                (up[x - 1], dn[x + 1])
            } else {
                (up[x + 1], dn[x - 1])
            };
            if m > before && m >= after {
                out[x] = m;
                if m > max_g2 {
                    max_g2 = m;
                }
            }
        }
    }
    ori.fill(0.0);
    let max_g = libm::sqrtf(max_g2);
    if max_g == 0.0 {
        return Ok(());
    }
    let scale = 1.0 / max_g.max(EDGE_NORM_FLOOR);
    for (i, (m, o)) in mag.iter_mut().zip(ori.iter_mut()).enumerate() {
        if *m == 0.0 {
            continue;
        }
        *m = libm::sqrtf(*m) * scale;
        if *m > edge_min_mag {
            let mut a = libm::atan2f(dy[i] as f32, dx[i] as f32);
            if a < 0.0 {
                a += core::f32::consts::PI;
            }
            if a >= core::f32::consts::PI {
                a = 0.0;
            }
            *o = a;
        }
    }
    Ok(())
}
