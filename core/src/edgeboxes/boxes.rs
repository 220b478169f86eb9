//! Window search, scoring, refinement and non-maximum suppression (the reference's
//! `scoreAllBoxes`, `scoreBox`, `refineBox`, `boxesNms`).
//!
//! * **Grid**: with `s_step = √(1/α)`, `a_step = (1 + α)/(2α)` and `p = (1 − α)/(1 + α)`, sizes
//!   `sc = min_side·s_step^s` for `s < ⌈ln(max(w, h)/min_side)/ln s_step⌉` where
//!   `min_side = max(√min_area, min_box_side_px)`, aspect factors `ar = a_step^k` for
//!   `|k| ≤ ⌊ln(max_aspect_ratio)/ln(a_step²)⌋` (at most [`MAX_ASPECT_STEPS`]), box
//!   `⌊sc·ar⌋ × ⌊sc/ar⌋`, positions every `max(2, ⌊p·side⌋)` pixels. Loops: size, aspect, left
//!   edge, top edge.
//! * **Score** of a box clamped to the window (inclusive pixel bounds `c0..=c1`, `r0..=r1`):
//!   `h = (Σ_in m_j − Σ_centre E − Σ_in w_j m_j)·(⌊(c1−c0)/2⌋ + ⌊(r1−r0)/2⌋)^−κ`, where `Σ_in`
//!   runs over the groups whose representative pixel is in the box, `Σ_centre E` over the edge
//!   magnitudes of the central box of half the size (the inner-box term), and `w_j` is the
//!   largest product of affinities along a path of in-box groups from a group that crosses the
//!   box boundary (weight 1). The normaliser is the reference's: the paper's
//!   `(2(b_w + b_h))^κ` divided by the constant `4^κ`. A score below `min_score` is 0, and the
//!   path term is skipped when the first two terms already score below it.
//! * **Candidates**: every grid box scoring above 0 enters a bounded min-heap of
//!   [`candidate_capacity`] boxes; when full, a new box replaces the worst if it ranks higher.
//!   Rank: score, then top, left, height, width (smaller first) — a total order, so results
//!   never depend on sort stability.
//! * **Refinement** of the candidates, best first (all of them, as the reference does, or only
//!   the best `max_refined`): steps `⌊p·side⌋`, halved each round while either exceeds 2, try
//!   moving each of the four edges out then in, keep a strictly better score. A move is scored
//!   only as far as needed to know it is not better (the path term only lowers a score, so the
//!   search stops once the running score falls to the one to beat).
//! * **Constraints**: a refined box whose area, aspect ratio or shorter side breaks the frame's
//!   [`super::BoxConstraints`] is dropped.
//! * **NMS**: best first, a box is kept unless its IoU with a kept box exceeds `β` (after each
//!   kept box, `β ← β·η` while `β > ½` and `η < 1`), until `max_boxes` or the output is full.

use super::groups::GroupStore;
use super::{BoxConstraints, Proposal};
use crate::geometry::Rect;
use core::cmp::Ordering;

/// Most aspect-ratio steps on either side of 1 in the grid.
pub const MAX_ASPECT_STEPS: i32 = 16;
/// Most box sizes in the grid.
pub const MAX_SCALES: i32 = 64;

/// Candidate boxes kept before NMS: `4·max_boxes`.
pub const fn candidate_capacity(max_boxes: u32) -> usize {
    4 * max_boxes as usize
}

/// A box in the reference's convention: top-left `(c, r)`, inclusive extent `w`, `h` (the box
/// covers `w + 1` columns), score `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(crate) struct Cand {
    r: i32,
    c: i32,
    h: i32,
    w: i32,
    s: f32,
}

impl Cand {
    fn key(&self) -> (i32, i32, i32, i32) {
        (self.r, self.c, self.h, self.w)
    }
    fn rect(&self) -> Rect {
        Rect::new(self.c, self.r, self.w + 1, self.h + 1)
    }
}

/// Best first: higher score, then smaller key.
fn rank(a: &Cand, b: &Cand) -> Ordering {
    b.s.total_cmp(&a.s).then(a.key().cmp(&b.key()))
}

/// Search settings, from [`super::EdgeBoxParams`].
pub(crate) struct SearchParams {
    pub alpha: f32,
    pub beta: f32,
    pub eta: f32,
    pub max_boxes: u32,
    pub max_refined: u32,
}

/// Box search storage, carved from the object's arena.
pub(crate) struct BoxStore<'a> {
    pub seg_ii: &'a mut [f32],
    pub mag_ii: &'a mut [f32],
    pub h_runs: &'a mut [i32],
    pub h_idx: &'a mut [u32],
    pub v_runs: &'a mut [i32],
    pub v_idx: &'a mut [u32],
    /// `norm[k] = k^−κ` (0 for k = 0).
    pub norm: &'a mut [f32],
    pub cands: &'a mut [Cand],
}

/// One frame's search: the store, the groups and the window size.
pub(crate) struct Search<'s, 'a> {
    pub st: &'s mut BoxStore<'a>,
    pub g: &'s mut GroupStore<'a>,
    pub w: usize,
    pub h: usize,
    pub min_score: f32,
    sid: u32,
}

impl<'s, 'a> Search<'s, 'a> {
    /// Builds the integral images and boundary run indices for a `w × h` window.
    pub(crate) fn new(
        st: &'s mut BoxStore<'a>,
        g: &'s mut GroupStore<'a>,
        mag: &[f32],
        w: usize,
        h: usize,
        min_score: f32,
    ) -> Self {
        let w1 = w + 1;
        let ii_len = w1 * (h + 1);
        let seg_ii = &mut st.seg_ii[..ii_len];
        seg_ii.fill(0.0);
        for j in 1..g.count {
            seg_ii[(g.rr[j] as usize + 1) * w1 + g.rc[j] as usize + 1] = g.mag[j];
        }
        integrate(seg_ii, w, h);
        let mag_ii = &mut st.mag_ii[..ii_len];
        mag_ii.fill(0.0);
        for y in 0..h {
            mag_ii[(y + 1) * w1 + 1..(y + 2) * w1].copy_from_slice(&mag[y * w..(y + 1) * w]);
        }
        integrate(mag_ii, w, h);
        let seg = &g.seg[..w * h];
        let mut k = 0usize;
        for y in 0..h {
            let mut s = 0i32;
            st.h_runs[k] = s;
            k += 1;
            for x in 0..w {
                let s1 = seg[y * w + x];
                if s1 != s {
                    s = s1;
                    st.h_runs[k] = s;
                    k += 1;
                }
                st.h_idx[y * w + x] = (k - 1) as u32;
            }
        }
        let mut k = 0usize;
        for x in 0..w {
            let mut s = 0i32;
            st.v_runs[k] = s;
            k += 1;
            for y in 0..h {
                let s1 = seg[y * w + x];
                if s1 != s {
                    s = s1;
                    st.v_runs[k] = s;
                    k += 1;
                }
                st.v_idx[y * w + x] = (k - 1) as u32;
            }
        }
        Self {
            st,
            g,
            w,
            h,
            min_score,
            sid: 1,
        }
    }

    #[inline]
    fn ii(ii: &[f32], w1: usize, c: i32, r: i32) -> f32 {
        ii[r as usize * w1 + c as usize]
    }

    fn push_group(&mut self, j: i32, n: &mut usize) {
        if j > 0 && self.g.done[j as usize] != self.sid {
            let j = j as usize;
            self.g.sids[*n] = j as u32;
            self.g.swts[*n] = 1.0;
            self.g.done[j] = self.sid;
            self.g.smap[j] = *n as u32;
            *n += 1;
        }
    }

    /// Clamps `b` to the window and scores it (see the module docs). When even the upper
    /// bound (the score without the path term) is `≤ floor`, the score is reported as 0 without
    /// the path search: callers pass the score a box must beat to matter, so skipping it
    /// changes no decision.
    pub(crate) fn score(&mut self, b: &mut Cand, floor: f32) {
        let (w, h) = (self.w as i32, self.h as i32);
        let w1 = self.w + 1;
        let r1 = (b.r + b.h).clamp(0, h - 1);
        let r0 = b.r.clamp(0, r1);
        let c1 = (b.c + b.w).clamp(0, w - 1);
        let c0 = b.c.clamp(0, c1);
        b.r = r0;
        b.c = c0;
        b.h = r1 - r0;
        b.w = c1 - c0;
        let (bh, bw) = (b.h / 2, b.w / 2);
        let si = &*self.st.seg_ii;
        let mut v = Self::ii(si, w1, c0, r0) + Self::ii(si, w1, c1 + 1, r1 + 1)
            - Self::ii(si, w1, c1 + 1, r0)
            - Self::ii(si, w1, c0, r1 + 1);
        let (r0m, c0m) = (r0 + bh / 2, c0 + bw / 2);
        let (r1m, c1m) = (r0m + bh, c0m + bw);
        let mi = &*self.st.mag_ii;
        v -= Self::ii(mi, w1, c0m, r0m) + Self::ii(mi, w1, c1m + 1, r1m + 1)
            - Self::ii(mi, w1, c1m + 1, r0m)
            - Self::ii(mi, w1, c0m, r1m + 1);
        let norm = self.st.norm[(bw + bh) as usize];
        b.s = v * norm;
        // The path term only subtracts: `b.s` is an upper bound of the score.
        if b.s < self.min_score || b.s <= 0.0 || b.s <= floor {
            b.s = 0.0;
            return;
        }
        self.sid += 1;
        let mut n = 0usize;
        for r in [r0, r1] {
            let row = r as usize * self.w;
            let (cs, ce) = (
                self.st.h_idx[row + c0 as usize],
                self.st.h_idx[row + c1 as usize],
            );
            for i in cs..=ce {
                let j = self.st.h_runs[i as usize];
                self.push_group(j, &mut n);
            }
        }
        for c in [c0, c1] {
            let (rs, re) = (
                self.st.v_idx[r0 as usize * self.w + c as usize],
                self.st.v_idx[r1 as usize * self.w + c as usize],
            );
            for i in rs..=re {
                let j = self.st.v_runs[i as usize];
                self.push_group(j, &mut n);
            }
        }
        let min_score = self.min_score;
        let rejected = |sub: f32| {
            let s = (v - sub) * norm;
            s < min_score || s <= 0.0 || s <= floor
        };
        let (_, sub, stopped) = self
            .g
            .propagate(n, self.sid, Some((c0, r0, c1, r1)), rejected);
        b.s = if stopped || rejected(sub) {
            0.0
        } else {
            (v - sub) * norm
        };
    }

    /// Greedy coordinate refinement (see the module docs).
    pub(crate) fn refine(&mut self, b: &mut Cand, ratio: f32) {
        let mut r_step = (b.h as f32 * ratio) as i32;
        let mut c_step = (b.w as f32 * ratio) as i32;
        loop {
            r_step /= 2;
            c_step /= 2;
            if r_step <= 2 && c_step <= 2 {
                break;
            }
            r_step = r_step.max(1);
            c_step = c_step.max(1);
            // Top edge.
            self.try_pair(
                b,
                |x| {
                    x.r -= r_step;
                    x.h += r_step
                },
                |x| {
                    x.r += r_step;
                    x.h -= r_step
                },
            );
            // Bottom edge.
            self.try_pair(b, |x| x.h += r_step, |x| x.h -= r_step);
            // Left edge.
            self.try_pair(
                b,
                |x| {
                    x.c -= c_step;
                    x.w += c_step
                },
                |x| {
                    x.c += c_step;
                    x.w -= c_step
                },
            );
            // Right edge.
            self.try_pair(b, |x| x.w += c_step, |x| x.w -= c_step);
        }
    }

    fn try_pair(&mut self, b: &mut Cand, out: impl Fn(&mut Cand), inn: impl Fn(&mut Cand)) {
        let mut t = *b;
        out(&mut t);
        self.score(&mut t, b.s);
        if t.s <= b.s {
            t = *b;
            inn(&mut t);
            self.score(&mut t, b.s);
        }
        if t.s > b.s {
            *b = t;
        }
    }

    /// Scans the grid, refines, filters by `cons`, keeps the best candidates, and writes the
    /// NMS survivors to `out`. Returns how many were written.
    pub(crate) fn run(
        &mut self,
        p: &SearchParams,
        cons: &BoxConstraints,
        out: &mut [Proposal],
    ) -> usize {
        let (w, h) = (self.w as i32, self.h as i32);
        let min_size = libm::sqrtf(cons.min_area).max(cons.min_box_side_px);
        let sc_step = libm::sqrtf(1.0 / p.alpha);
        let ar_step = (1.0 + p.alpha) / (2.0 * p.alpha);
        let ratio = (1.0 - p.alpha) / (1.0 + p.alpha);
        let ar_rad = ((libm::logf(cons.max_aspect_ratio) / libm::logf(ar_step * ar_step)) as i32)
            .clamp(0, MAX_ASPECT_STEPS);
        let sc_num = libm::ceilf(libm::logf(w.max(h) as f32 / min_size) / libm::logf(sc_step));
        let sc_num = if sc_num.is_finite() {
            (sc_num.max(0.0) as i32).min(MAX_SCALES)
        } else {
            0
        };
        let cap = self.st.cands.len();
        let mut len = 0usize;
        for s in 0..sc_num {
            for a in 0..2 * ar_rad + 1 {
                let ar = libm::powf(ar_step, (a - ar_rad) as f32);
                let sc = min_size * libm::powf(sc_step, s as f32);
                let bh = (sc / ar) as i32;
                let kr = 2.max((bh as f32 * ratio) as i32);
                let bw = (sc * ar) as i32;
                let kc = 2.max((bw as f32 * ratio) as i32);
                let mut c = 0;
                while c < w - bw + kc {
                    let mut r = 0;
                    while r < h - bh + kr {
                        let mut b = Cand {
                            r,
                            c,
                            h: bh,
                            w: bw,
                            s: 0.0,
                        };
                        r += kr;
                        self.score(&mut b, -1.0);
                        if b.s > 0.0 {
                            heap_insert(&mut self.st.cands[..cap], &mut len, b);
                        }
                    }
                    c += kc;
                }
            }
        }
        // Refine the best grid boxes first (all of them when `max_refined` is 0), drop those
        // that break the constraints, and rank again.
        self.st.cands[..len].sort_unstable_by(rank);
        let refine_n = if p.max_refined == 0 {
            len
        } else {
            len.min(p.max_refined as usize)
        };
        let mut kept = 0usize;
        for k in 0..len {
            let mut b = self.st.cands[k];
            if k < refine_n {
                self.refine(&mut b, ratio);
            }
            if fits(&b, cons) {
                self.st.cands[kept] = b;
                kept += 1;
            }
        }
        let cands = &mut self.st.cands[..kept];
        cands.sort_unstable_by(rank);
        nms(cands, p, out)
    }
}

/// In-place summed-area table of the `(w + 1) × (h + 1)` array whose first row and column are 0.
fn integrate(ii: &mut [f32], w: usize, h: usize) {
    let w1 = w + 1;
    for y in 1..=h {
        let mut row = 0.0f32;
        for x in 1..=w {
            row += ii[y * w1 + x];
            ii[y * w1 + x] = ii[(y - 1) * w1 + x] + row;
        }
    }
}

fn fits(b: &Cand, cons: &BoxConstraints) -> bool {
    let (bw, bh) = ((b.w + 1) as f32, (b.h + 1) as f32);
    bw * bh >= cons.min_area
        && bw.max(bh) <= cons.max_aspect_ratio * bw.min(bh)
        && bw.min(bh) >= cons.min_box_side_px
}

/// Min-heap on rank (root = worst) over `heap[..*len]`, capacity `heap.len()`.
fn heap_insert(heap: &mut [Cand], len: &mut usize, b: Cand) {
    let worse = |x: &Cand, y: &Cand| rank(x, y) == Ordering::Greater;
    if *len < heap.len() {
        let mut i = *len;
        heap[i] = b;
        *len += 1;
        while i > 0 {
            let p = (i - 1) / 2;
            if worse(&heap[i], &heap[p]) {
                heap.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
        return;
    }
    if heap.is_empty() || !worse(&heap[0], &b) {
        return;
    }
    heap[0] = b;
    let n = *len;
    let mut i = 0;
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < n && worse(&heap[l], &heap[m]) {
            m = l;
        }
        if r < n && worse(&heap[r], &heap[m]) {
            m = r;
        }
        if m == i {
            break;
        }
        heap.swap(i, m);
        i = m;
    }
}

fn nms(sorted: &[Cand], p: &SearchParams, out: &mut [Proposal]) -> usize {
    let limit = out.len().min(p.max_boxes as usize);
    let mut thr = p.beta;
    let mut m = 0usize;
    for b in sorted {
        if m == limit {
            break;
        }
        let rb = b.rect();
        let ab = rb.area() as f32;
        let keep = out[..m].iter().all(|k| {
            let ak = k.bbox.area() as f32;
            // IoU ≤ min(area)/max(area): skip the exact test when that already passes.
            ab.min(ak) <= thr * ab.max(ak) || rb.iou(&k.bbox) <= thr
        });
        if keep {
            out[m] = Proposal {
                bbox: rb,
                score: b.s,
            };
            m += 1;
            if p.eta < 1.0 && thr > 0.5 {
                thr *= p.eta;
            }
        }
    }
    m
}
