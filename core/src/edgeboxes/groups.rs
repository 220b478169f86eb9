//! Edge groups and their affinities (Zitnick & Dollár §3.1, the reference's `clusterEdges`),
//! plus the seed's background suppression.
//!
//! * **Grouping**: pixels with magnitude `> edge_min_mag` (outside the window's outer ring) are
//!   visited row-major; each unassigned one starts a group that grows greedily: of all
//!   unassigned 8-neighbours of the pixels taken so far, the one whose orientation differs
//!   least from the orientation of the pixel that found it is taken next (first found wins a
//!   tie), until the sum of those differences (in units of π, each folded into `[0, ½]`)
//!   reaches `edge_merge_thr` (0.5 = π/2) or no neighbour is left.
//! * **Clean-up**: groups whose summed magnitude is `≤ cluster_min_mag` are dissolved; their
//!   pixels (and any left unassigned) join the 8-neighbouring group of most similar
//!   orientation, in row-major passes until a pass assigns nothing (at most `max(w, h)` passes).
//! * **Group statistics**: summed magnitude `m`, magnitude-weighted mean position, mean
//!   orientation `½·atan2(Σ m sin 2θ, Σ m cos 2θ)`, and a representative pixel (the last one in
//!   row-major order) that places the group in the box integral image.
//! * **Affinity** of two groups with a pixel of one within 2 px (5 × 5) of a pixel of the other
//!   (the first pixel at least 2 px inside the window, as in the reference):
//!   `a = |cos(θi − θij)·cos(θj − θij)|^γ` with `θij` the normal of the line joining the means
//!   (the orientations are edge normals). Pairs with `a <` [`MIN_PATH_WEIGHT`] are not stored:
//!   no path can use them.
//! * **Background suppression** (seed 003, only for windows larger than
//!   [`BACKGROUND_MIN_SIDE_PX`] on both sides): groups with a pixel within
//!   [`BORDER_BAND_PX`] of the window edge get path affinity 1; every other group the largest
//!   product of affinities along a path from one of them (μ = ¼ of it, so border groups lose a
//!   quarter); each group's magnitude becomes `m·(1 − μ)` before boxes are scored.
//!
//! **Capacity** (all sized from `max_window_px = N`): at most [`group_capacity`]`(N) − 1`
//! groups; once reached, further unassigned pixels start no group and may only join existing
//! groups in the clean-up. A growing group's candidate list holds [`frontier_capacity`]`(N)`
//! pixels; a neighbour found while it is full is not considered. At most
//! [`pair_capacity`]`(N)` affinity pairs are kept, in order of discovery (group by group). Path
//! searches stop after [`RELAX_STEPS_PER_GROUP`] steps per group. All limits are deterministic.

use core::f32::consts::PI;

/// Windows larger than this on both sides get background suppression, in pixels.
pub const BACKGROUND_MIN_SIDE_PX: usize = 64;
/// Groups with a pixel this close to the window edge (in pixels, counted from the outermost
/// row/column as 0) are "connected to the border" for background suppression.
pub const BORDER_BAND_PX: usize = 2;
/// Path weights below this are not followed (the reference's short cut).
pub const MIN_PATH_WEIGHT: f32 = 0.05;
/// Bound on the steps of one path search, per group in the window (never reached in our
/// tests; it only bounds the time of pathological graphs).
pub const RELAX_STEPS_PER_GROUP: usize = 16;

/// Group slots for windows up to `n` pixels a side (slot 0 is unused): `n²/4 + 16`.
pub const fn group_capacity(n: usize) -> usize {
    n * n / 4 + 16
}

/// Candidate slots of one growing group: `8·n`.
pub const fn frontier_capacity(n: usize) -> usize {
    8 * n
}

/// Affinity pairs kept: `6·`[`group_capacity`]`(n)`.
pub const fn pair_capacity(n: usize) -> usize {
    6 * group_capacity(n)
}

/// Group storage, carved from the object's arena.
pub(crate) struct GroupStore<'a> {
    /// Per pixel: −1 not an edge, 0 unassigned, `k > 0` group `k`.
    pub seg: &'a mut [i32],
    /// Per pixel scratch: walk stamps, then the pixel lists of the groups.
    pub pix: &'a mut [u32],
    /// Per pixel scratch: unassigned pixels of the clean-up.
    pub todo: &'a mut [u32],
    pub frontier_px: &'a mut [u32],
    pub frontier_v: &'a mut [f32],
    /// Per group (index 0 unused).
    pub mag: &'a mut [f32],
    pub mx: &'a mut [f32],
    pub my: &'a mut [f32],
    pub mo: &'a mut [f32],
    pub sc: &'a mut [f32],
    pub ss: &'a mut [f32],
    pub rc: &'a mut [i32],
    pub rr: &'a mut [i32],
    pub map: &'a mut [u32],
    pub start: &'a mut [u32],
    pub aff_start: &'a mut [u32],
    pub aff_idx: &'a mut [u32],
    pub aff_w: &'a mut [f32],
    pub pair_a: &'a mut [u32],
    pub pair_b: &'a mut [u32],
    pub pair_w: &'a mut [f32],
    /// Path search scratch, shared with box scoring.
    pub done: &'a mut [u32],
    pub smap: &'a mut [u32],
    pub sids: &'a mut [u32],
    pub swts: &'a mut [f32],
    /// Groups in use, including the unused slot 0.
    pub count: usize,
}

/// Orientation difference in units of π, folded into `[0, ½]`.
#[inline]
fn odiff(a: f32, b: f32) -> f32 {
    let v = libm::fabsf(a - b) / PI;
    if v > 0.5 {
        1.0 - v
    } else {
        v
    }
}

/// Tuning of the grouping, from [`super::EdgeBoxParams`].
pub(crate) struct GroupParams {
    pub edge_min_mag: f32,
    pub edge_merge_thr: f32,
    pub cluster_min_mag: f32,
    pub gamma: f32,
    pub background_suppression: bool,
}

impl GroupStore<'_> {
    /// Groups the edge map `mag`/`ori` (`w × h`, packed) and computes affinities.
    /// `dx`, `dy` are the Sobel derivatives behind `ori` (for the doubled-angle means).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        &mut self,
        mag: &[f32],
        ori: &[f32],
        dx: &[i16],
        dy: &[i16],
        w: usize,
        h: usize,
        p: &GroupParams,
    ) {
        self.assign_pixels(mag, ori, w, h, p);
        self.clean_up(mag, ori, w, h, p.cluster_min_mag);
        self.compact(mag, dx, dy, w, h);
        self.affinities(w, h, p.gamma);
        if p.background_suppression && w > BACKGROUND_MIN_SIDE_PX && h > BACKGROUND_MIN_SIDE_PX {
            self.suppress_background(w, h);
        }
    }

    fn assign_pixels(&mut self, mag: &[f32], ori: &[f32], w: usize, h: usize, p: &GroupParams) {
        let n = w * h;
        let seg = &mut self.seg[..n];
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let inner = x > 0 && y > 0 && x + 1 < w && y + 1 < h;
                seg[i] = if inner && mag[i] > p.edge_min_mag {
                    0
                } else {
                    -1
                };
            }
        }
        let stamp = &mut self.pix[..n];
        stamp.fill(0);
        let cap = self.mag.len();
        let fcap = self.frontier_px.len();
        let mut count = 1usize;
        'scan: for y in 1..h.saturating_sub(1) {
            for x in 1..w - 1 {
                let start = y * w + x;
                if seg[start] != 0 {
                    continue;
                }
                if count >= cap {
                    break 'scan;
                }
                let id = count as u32;
                let mut sumv = 0.0f32;
                let mut cur = start;
                let mut nf = 0usize;
                while sumv < p.edge_merge_thr {
                    seg[cur] = id as i32;
                    let o0 = ori[cur];
                    for dyo in [-(w as isize), 0, w as isize] {
                        for dxo in [-1isize, 0, 1] {
                            let q = (cur as isize + dyo + dxo) as usize;
                            if seg[q] != 0 || stamp[q] == id || nf == fcap {
                                continue;
                            }
                            stamp[q] = id;
                            self.frontier_px[nf] = q as u32;
                            self.frontier_v[nf] = odiff(ori[q], o0);
                            nf += 1;
                        }
                    }
                    let mut best = usize::MAX;
                    let mut minv = f32::INFINITY;
                    for (k, &v) in self.frontier_v[..nf].iter().enumerate() {
                        if v < minv {
                            minv = v;
                            best = k;
                        }
                    }
                    if best == usize::MAX {
                        break;
                    }
                    sumv += minv;
                    self.frontier_v[best] = f32::INFINITY;
                    cur = self.frontier_px[best] as usize;
                }
                count += 1;
            }
        }
        self.count = count;
    }

    fn clean_up(&mut self, mag: &[f32], ori: &[f32], w: usize, h: usize, min_mag: f32) {
        let n = w * h;
        let seg = &mut self.seg[..n];
        let gm = &mut self.mag[..self.count];
        gm.fill(0.0);
        for (&s, &m) in seg.iter().zip(mag) {
            if s > 0 {
                gm[s as usize] += m;
            }
        }
        let mut nt = 0usize;
        for (i, s) in seg.iter_mut().enumerate() {
            if *s > 0 && gm[*s as usize] <= min_mag {
                *s = 0;
            }
            if *s == 0 {
                self.todo[nt] = i as u32;
                nt += 1;
            }
        }
        let mut passes = 0;
        while nt > 0 && passes < w.max(h) {
            passes += 1;
            let mut kept = 0usize;
            for k in 0..nt {
                let i = self.todo[k] as usize;
                let o0 = ori[i];
                let mut minv = f32::INFINITY;
                let mut j = 0i32;
                for dyo in [-(w as isize), 0, w as isize] {
                    for dxo in [-1isize, 0, 1] {
                        let q = (i as isize + dyo + dxo) as usize;
                        let s = seg[q];
                        if s <= 0 {
                            continue;
                        }
                        let v = odiff(ori[q], o0);
                        if v < minv {
                            minv = v;
                            j = s;
                        }
                    }
                }
                if j > 0 {
                    seg[i] = j;
                } else {
                    self.todo[kept] = i as u32;
                    kept += 1;
                }
            }
            if kept == nt {
                break;
            }
            nt = kept;
        }
    }

    /// Renumbers the groups with positive magnitude `1..`, computes their statistics.
    fn compact(&mut self, mag: &[f32], dx: &[i16], dy: &[i16], w: usize, h: usize) {
        let n = w * h;
        let seg = &mut self.seg[..n];
        let count = self.count;
        let gm = &mut self.mag[..count];
        gm.fill(0.0);
        for (&s, &m) in seg.iter().zip(mag) {
            if s > 0 {
                gm[s as usize] += m;
            }
        }
        let mut next = 1u32;
        for (k, m) in self.map[..count].iter_mut().enumerate() {
            if k > 0 && gm[k] > 0.0 {
                *m = next;
                next += 1;
            } else {
                *m = 0;
            }
        }
        let count = next as usize;
        self.count = count;
        for a in [
            &mut self.mag[..count],
            &mut self.mx[..count],
            &mut self.my[..count],
            &mut self.sc[..count],
            &mut self.ss[..count],
        ] {
            a.fill(0.0);
        }
        for (i, s) in seg.iter_mut().enumerate() {
            if *s <= 0 {
                continue;
            }
            let j = self.map[*s as usize] as usize;
            *s = if j == 0 { -1 } else { j as i32 };
            if j == 0 {
                continue;
            }
            let m = mag[i];
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            // cos 2θ and sin 2θ of θ = atan2(gy, gx), without trigonometry.
            let (gx, gy) = (dx[i] as f32, dy[i] as f32);
            let g2 = gx * gx + gy * gy;
            self.mag[j] += m;
            self.sc[j] += m * ((gx * gx - gy * gy) / g2);
            self.ss[j] += m * ((2.0 * gx * gy) / g2);
            self.mx[j] += m * x;
            self.my[j] += m * y;
            self.rc[j] = (i % w) as i32;
            self.rr[j] = (i / w) as i32;
        }
        for j in 1..count {
            let m = self.mag[j];
            self.mx[j] /= m;
            self.my[j] /= m;
            self.mo[j] = libm::atan2f(self.ss[j] / m, self.sc[j] / m) / 2.0;
        }
    }

    fn affinities(&mut self, w: usize, h: usize, gamma: f32) {
        let n = w * h;
        let count = self.count;
        let seg = &self.seg[..n];
        // Pixel lists of the groups (counting sort, row-major inside each group).
        let start = &mut self.start[..count + 1];
        start.fill(0);
        for &s in seg {
            if s > 0 {
                start[s as usize + 1] += 1;
            }
        }
        for j in 1..=count {
            start[j] += start[j - 1];
        }
        let fill = &mut self.done[..count];
        fill.copy_from_slice(&start[..count]);
        for (i, &s) in seg.iter().enumerate() {
            if s > 0 {
                let f = &mut fill[s as usize];
                self.pix[*f as usize] = i as u32;
                *f += 1;
            }
        }
        // Pairs (s0 < s1) within the 5 × 5 neighbourhood of a pixel of s0, deduplicated by
        // stamping s1 with s0.
        const RAD: usize = 2;
        let seen = &mut self.map[..count];
        seen.fill(0);
        let pcap = self.pair_a.len();
        let mut np = 0usize;
        for s0 in 1..count {
            for k in start[s0]..start[s0 + 1] {
                let i = self.pix[k as usize] as usize;
                let (x, y) = (i % w, i / w);
                if x < RAD || y < RAD || x + RAD >= w || y + RAD >= h {
                    continue;
                }
                for yy in y - RAD..=y + RAD {
                    for xx in x - RAD..=x + RAD {
                        let s1 = seg[yy * w + xx];
                        if s1 <= s0 as i32 || seen[s1 as usize] == s0 as u32 || np == pcap {
                            continue;
                        }
                        let s1 = s1 as usize;
                        seen[s1] = s0 as u32;
                        let o = libm::atan2f(self.my[s0] - self.my[s1], self.mx[s0] - self.mx[s1])
                            + PI / 2.0;
                        let a =
                            libm::fabsf(libm::cosf(self.mo[s0] - o) * libm::cosf(self.mo[s1] - o));
                        let a = if gamma == 2.0 {
                            a * a
                        } else if gamma == 1.0 {
                            a
                        } else {
                            libm::powf(a, gamma)
                        };
                        if a < MIN_PATH_WEIGHT {
                            // No path can use it (path weights start at 1 and only shrink).
                            continue;
                        }
                        self.pair_a[np] = s0 as u32;
                        self.pair_b[np] = s1 as u32;
                        self.pair_w[np] = a;
                        np += 1;
                    }
                }
            }
        }
        // Symmetric adjacency lists (CSR), in pair order.
        let st = &mut self.aff_start[..count + 1];
        st.fill(0);
        for k in 0..np {
            st[self.pair_a[k] as usize + 1] += 1;
            st[self.pair_b[k] as usize + 1] += 1;
        }
        for j in 1..=count {
            st[j] += st[j - 1];
        }
        let fill = &mut self.done[..count];
        fill.copy_from_slice(&st[..count]);
        for k in 0..np {
            let (a, b, wgt) = (
                self.pair_a[k] as usize,
                self.pair_b[k] as usize,
                self.pair_w[k],
            );
            self.aff_idx[fill[a] as usize] = b as u32;
            self.aff_w[fill[a] as usize] = wgt;
            fill[a] += 1;
            self.aff_idx[fill[b] as usize] = a as u32;
            self.aff_w[fill[b] as usize] = wgt;
            fill[b] += 1;
        }
        self.done[..count].fill(0);
    }

    fn suppress_background(&mut self, w: usize, h: usize) {
        let count = self.count;
        let seg = &self.seg[..w * h];
        let b = BORDER_BAND_PX;
        let mut n = 0usize;
        let stamp = 1u32;
        for (i, &s) in seg.iter().enumerate() {
            if s <= 0 {
                continue;
            }
            let (x, y) = (i % w, i / w);
            let near = x <= b || y <= b || x + b + 1 >= w || y + b + 1 >= h;
            let s = s as usize;
            if near && self.done[s] != stamp {
                self.done[s] = stamp;
                self.sids[n] = s as u32;
                self.swts[n] = 1.0;
                self.smap[s] = n as u32;
                n += 1;
            }
        }
        let (n, _, _) = self.propagate(n, stamp, None, |_| false);
        for k in 0..n {
            let j = self.sids[k] as usize;
            self.mag[j] *= 1.0 - 0.25 * self.swts[k];
        }
        self.done[..count].fill(0);
    }

    /// Largest path products from the `n` seeded groups (`sids`/`swts`/`smap`, stamped `stamp`
    /// in `done`) over the affinity graph, never along a path whose product falls below
    /// [`MIN_PATH_WEIGHT`], reaching only groups whose representative pixel lies in `bx`
    /// (`None`: anywhere). Returns the number of groups reached, the reference's relaxation:
    /// the list is walked in order and restarts from any group whose weight improves.
    ///
    /// With a box, it also returns `Σ w_j·m_j` over the reached groups inside the box, summed as
    /// weights are found and raised (so it only grows), and stops early, returning `true`, once
    /// `stop(sum)` holds. Searches stop after [`RELAX_STEPS_PER_GROUP`] steps per group.
    pub(crate) fn propagate(
        &mut self,
        mut n: usize,
        stamp: u32,
        bx: Option<(i32, i32, i32, i32)>,
        stop: impl Fn(f32) -> bool,
    ) -> (usize, f32, bool) {
        let inside = |g: &Self, q: usize| {
            bx.is_none_or(|(c0, r0, c1, r1)| {
                g.rc[q] >= c0 && g.rc[q] <= c1 && g.rr[q] >= r0 && g.rr[q] <= r1
            })
        };
        let mut sub = 0.0f32;
        if bx.is_some() {
            for k in 0..n {
                let q = self.sids[k] as usize;
                if inside(self, q) {
                    sub += self.mag[q];
                }
            }
            if stop(sub) {
                return (n, sub, true);
            }
        }
        let limit = RELAX_STEPS_PER_GROUP * (self.count + 1);
        let mut steps = 0usize;
        let mut i = 0usize;
        while i < n && steps < limit {
            steps += 1;
            let wi = self.swts[i];
            let j = self.sids[i] as usize;
            let mut next = i + 1;
            let mut grew = false;
            for k in self.aff_start[j] as usize..self.aff_start[j + 1] as usize {
                let q = self.aff_idx[k] as usize;
                let wq = wi * self.aff_w[k];
                if wq < MIN_PATH_WEIGHT {
                    continue;
                }
                if self.done[q] == stamp {
                    let m = self.smap[q] as usize;
                    if wq > self.swts[m] {
                        if bx.is_some() && inside(self, q) {
                            sub += (wq - self.swts[m]) * self.mag[q];
                            grew = true;
                        }
                        self.swts[m] = wq;
                        next = next.min(m);
                    }
                } else if inside(self, q) {
                    self.sids[n] = q as u32;
                    self.swts[n] = wq;
                    self.done[q] = stamp;
                    self.smap[q] = n as u32;
                    n += 1;
                    if bx.is_some() {
                        sub += wq * self.mag[q];
                        grew = true;
                    }
                }
            }
            if grew && stop(sub) {
                return (n, sub, true);
            }
            i = next;
        }
        (n, sub, false)
    }
}
