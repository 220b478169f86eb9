//! EdgeBoxes object proposals (Zitnick & Dollár, "Edge Boxes: Locating Object Proposals from
//! Edges", ECCV 2014), as KCFDP (seed 003) uses them to adapt a tracker's scale and aspect
//! ratio: boxes are scored by the edge groups they wholly contain, minus the groups that cross
//! their boundary and the edges of their centre.
//!
//! **The edge map is not the paper's.** The reference runs on the output of a Structured Edge
//! forest (Dollár & Zitnick 2013), a trained model that is not available offline and would not
//! fit this no_std core's budget. [`edges`] uses Sobel gradients of a lightly blurred window,
//! thinned by non-maximum suppression, instead: texture yields more (and noisier) edges than
//! the forest's, edges are not learned object boundaries, and scores differ from the
//! reference's. The grouping, affinities, scoring, refinement and NMS follow the reference
//! implementation (`edgeBoxesMex.cpp`); where this code departs from it (the path search stops
//! as soon as a box cannot win, optional [`EdgeBoxParams::max_refined`], bounded storage) the
//! submodule docs say so.
//!
//! Pipeline per [`EdgeBoxes::propose`] call: edge map ([`edges`]) → edge groups, affinities and
//! the seed's background suppression ([`groups`]) → grid search, scoring with the inner-box
//! term, refinement, constraints, NMS ([`boxes`]).
//!
//! Defaults ([`EdgeBoxParams::DEFAULT`]) are seed 003's: step `α = 0.65`, NMS `β = 0.75`,
//! `κ = 1.4` (the paper uses 1.5; the seed's value is kept), `min_score = 5e-4`,
//! `max_boxes = 1000`; the rest are the reference's. Per frame, [`BoxConstraints::from_target`]
//! derives the seed's minimum area (`0.3·w·h`) and maximum aspect ratio
//! (`1.5·max(w/h, h/w)`) from the current target box.
//!
//! All storage comes from one [`Arena`] sized for the largest window
//! ([`EdgeBoxParams::max_window_px`]); the capacities (groups, affinity pairs, candidate boxes)
//! and what happens when they are reached are documented in [`groups`] and [`boxes`]. Every
//! loop runs in one fixed order, so results are bit-identical from run to run.
//!
//! Cost grows with the number of edge groups: a window with fine texture over the object costs
//! several times one with plain surfaces (see the timing test in `core/tests/edgeboxes.rs`);
//! [`EdgeBoxParams::max_refined`] bounds the refinement, the largest share.

pub mod boxes;
pub mod edges;
pub mod groups;

use crate::arena::{Arena, ArenaLen};
use crate::error::{Error, Result};
use crate::filter::separable_scratch_len;
use crate::geometry::Rect;
use crate::image::ImageView;
use boxes::{candidate_capacity, BoxStore, Cand, Search, SearchParams};
use edges::EdgeStore;
use groups::{frontier_capacity, group_capacity, pair_capacity, GroupParams, GroupStore};

/// Largest accepted [`EdgeBoxParams::max_window_px`], in pixels.
pub const MAX_WINDOW_PX: u32 = 1024;
/// Smallest accepted [`EdgeBoxParams::max_window_px`], in pixels.
pub const MIN_WINDOW_PX: u32 = 3;
/// Largest accepted [`EdgeBoxParams::max_boxes`].
pub const MAX_BOXES: u32 = 1 << 16;

/// Parameters of [`EdgeBoxes`]. Defaults: seed 003 where it speaks, else the reference's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeBoxParams {
    /// Step of the sliding-window search: neighbouring windows overlap with IoU `α`; in
    /// `(0, 1)`. Default 0.65.
    pub alpha: f32,
    /// NMS threshold: a proposal overlapping a better one with IoU above `β` is dropped; in
    /// `(0, 1]`. Default 0.75.
    pub beta: f32,
    /// NMS adaptation: `β ← β·η` after each kept box while `β > ½`; in `(0, 1]` (1 = off).
    /// Default 1.
    pub eta: f32,
    /// Boxes scoring below this are dropped; finite, `≥ 0`. Default 5e-4.
    pub min_score: f32,
    /// Most proposals returned, `1..=`[`MAX_BOXES`]; also sizes the candidate storage
    /// ([`boxes::candidate_capacity`]). Default 1000.
    pub max_boxes: u32,
    /// Refine only the best this many grid boxes (ranked by their grid score); 0 refines every
    /// box scoring above 0, as the reference does. Refinement is most of the search's cost on
    /// textured windows. Default 0.
    pub max_refined: u32,
    /// Edge pixels with normalised magnitude `≤` this are not grouped; in `[0, 1)`. Default 0.1.
    pub edge_min_mag: f32,
    /// A group grows until its summed orientation change reaches this, in units of π; finite,
    /// `> 0`. Default 0.5 (π/2).
    pub edge_merge_thr: f32,
    /// Groups whose summed magnitude is `≤` this are dissolved into their neighbours; finite,
    /// `≥ 0`. Default 0.5.
    pub cluster_min_mag: f32,
    /// Exponent `γ` of the affinity; finite, `≥ 0`. Default 2.
    pub gamma: f32,
    /// Exponent `κ` of the box-size normaliser; finite, in `[0, 4]`. Default 1.4 (seed 003;
    /// the paper's is 1.5).
    pub kappa: f32,
    /// Damp edge groups connected to the window border (seed 003; windows larger than 64 px on
    /// both sides only). Default true.
    pub background_suppression: bool,
    /// The largest window side this object handles, in pixels,
    /// [`MIN_WINDOW_PX`]`..=`[`MAX_WINDOW_PX`]; storage is sized for a square of this side.
    /// Default 256.
    pub max_window_px: u32,
}

impl EdgeBoxParams {
    /// Seed 003's settings (and the reference's for the rest), windows up to 256 px.
    pub const DEFAULT: EdgeBoxParams = EdgeBoxParams {
        alpha: 0.65,
        beta: 0.75,
        eta: 1.0,
        min_score: 5e-4,
        max_boxes: 1000,
        max_refined: 0,
        edge_min_mag: 0.1,
        edge_merge_thr: 0.5,
        cluster_min_mag: 0.5,
        gamma: 2.0,
        kappa: 1.4,
        background_suppression: true,
        max_window_px: 256,
    };

    /// Checks the documented ranges.
    ///
    /// Errors: [`Error::InvalidArgument`] if a field is outside its range (NaN included).
    pub fn validate(&self) -> Result<()> {
        let fin_nonneg = |v: f32| v.is_finite() && v >= 0.0;
        let ok = self.alpha > 0.0
            && self.alpha < 1.0
            && self.beta > 0.0
            && self.beta <= 1.0
            && self.eta > 0.0
            && self.eta <= 1.0
            && fin_nonneg(self.min_score)
            && (1..=MAX_BOXES).contains(&self.max_boxes)
            && (0.0..1.0).contains(&self.edge_min_mag)
            && self.edge_merge_thr.is_finite()
            && self.edge_merge_thr > 0.0
            && fin_nonneg(self.cluster_min_mag)
            && fin_nonneg(self.gamma)
            && (0.0..=4.0).contains(&self.kappa)
            && (MIN_WINDOW_PX..=MAX_WINDOW_PX).contains(&self.max_window_px);
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument)
        }
    }
}

impl Default for EdgeBoxParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Per-frame limits on the proposals, derived by the caller from the current target box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxConstraints {
    /// Smallest proposal area, in pixels²; finite, `≥ 0`. Also the smallest box of the search
    /// grid (`√min_area` a side).
    pub min_area: f32,
    /// Largest `max(w/h, h/w)` of a proposal; finite, `≥ 1`. Also bounds the grid's aspect
    /// ratios.
    pub max_aspect_ratio: f32,
    /// Smallest proposal side, in pixels; finite, `≥ 1`.
    pub min_box_side_px: f32,
}

impl BoxConstraints {
    /// Smallest side [`BoxConstraints::from_target`] allows, in pixels.
    pub const DEFAULT_MIN_BOX_SIDE_PX: f32 = 8.0;

    /// Seed 003's limits for a target of `width × height` pixels: area at least
    /// `0.3·width·height`, aspect ratio at most `1.5·max(width/height, height/width)`, sides at
    /// least [`BoxConstraints::DEFAULT_MIN_BOX_SIDE_PX`].
    ///
    /// Errors: [`Error::InvalidArgument`] unless both sides are finite and `> 0`.
    pub fn from_target(width: f32, height: f32) -> Result<Self> {
        if !(width.is_finite() && height.is_finite() && width > 0.0 && height > 0.0) {
            return Err(Error::InvalidArgument);
        }
        let c = Self {
            min_area: 0.3 * width * height,
            max_aspect_ratio: 1.5 * (width / height).max(height / width),
            min_box_side_px: Self::DEFAULT_MIN_BOX_SIDE_PX,
        };
        c.validate()?;
        Ok(c)
    }

    /// Checks the documented ranges.
    ///
    /// Errors: [`Error::InvalidArgument`] if a field is outside its range (NaN included).
    pub fn validate(&self) -> Result<()> {
        let ok = self.min_area.is_finite()
            && self.min_area >= 0.0
            && self.max_aspect_ratio.is_finite()
            && self.max_aspect_ratio >= 1.0
            && self.min_box_side_px.is_finite()
            && self.min_box_side_px >= 1.0;
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument)
        }
    }
}

/// One proposal.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Proposal {
    /// The box in pixels, relative to the window passed to [`EdgeBoxes::propose`] (inside it).
    pub bbox: Rect,
    /// EdgeBoxes score (see [`boxes`]); `> 0`, higher is better, comparable within one window.
    pub score: f32,
}

/// The EdgeBoxes proposal generator, its storage carved from an [`Arena`].
pub struct EdgeBoxes<'a> {
    params: EdgeBoxParams,
    edges: EdgeStore<'a>,
    groups: GroupStore<'a>,
    boxes: BoxStore<'a>,
}

/// The sequence of takes shared by [`EdgeBoxes::declare`] and [`EdgeBoxes::new`].
macro_rules! edgebox_takes {
    ($a:expr, $take:ident, $p:expr) => {{
        let n = $p.max_window_px as usize;
        let px = n * n;
        let g = group_capacity(n);
        let pairs = pair_capacity(n);
        let f = frontier_capacity(n);
        let ii = (n + 1) * (n + 1);
        (
            (
                $a.$take::<u8>(px)?,
                $a.$take::<i16>(px)?,
                $a.$take::<i16>(px)?,
                $a.$take::<i32>(separable_scratch_len(
                    n,
                    edges::EDGE_BLUR_KSIZE,
                    edges::EDGE_BLUR_KSIZE,
                ))?,
                $a.$take::<f32>(px)?,
                $a.$take::<f32>(px)?,
            ),
            (
                $a.$take::<i32>(px)?,
                $a.$take::<u32>(px)?,
                $a.$take::<u32>(px)?,
                $a.$take::<u32>(f)?,
                $a.$take::<f32>(f)?,
            ),
            (
                $a.$take::<f32>(g)?,
                $a.$take::<f32>(g)?,
                $a.$take::<f32>(g)?,
                $a.$take::<f32>(g)?,
                $a.$take::<f32>(g)?,
                $a.$take::<f32>(g)?,
                $a.$take::<i32>(g)?,
                $a.$take::<i32>(g)?,
                $a.$take::<u32>(g)?,
                $a.$take::<u32>(g + 1)?,
                $a.$take::<u32>(g + 1)?,
            ),
            (
                $a.$take::<u32>(2 * pairs)?,
                $a.$take::<f32>(2 * pairs)?,
                $a.$take::<u32>(pairs)?,
                $a.$take::<u32>(pairs)?,
                $a.$take::<f32>(pairs)?,
                $a.$take::<u32>(g)?,
                $a.$take::<u32>(g)?,
                $a.$take::<u32>(g)?,
                $a.$take::<f32>(g)?,
            ),
            (
                $a.$take::<f32>(ii)?,
                $a.$take::<f32>(ii)?,
                $a.$take::<i32>(n * (n + 1))?,
                $a.$take::<u32>(px)?,
                $a.$take::<i32>(n * (n + 1))?,
                $a.$take::<u32>(px)?,
                $a.$take::<f32>(n + 1)?,
                $a.$take::<Cand>(candidate_capacity($p.max_boxes))?,
            ),
        )
    }};
}

impl<'a> EdgeBoxes<'a> {
    /// Adds the storage an [`EdgeBoxes`] with `params` needs to `len`.
    ///
    /// Errors: [`Error::InvalidArgument`] for invalid `params`; [`Error::Overflow`] if the size
    /// overflows.
    pub fn declare(len: &mut ArenaLen, params: &EdgeBoxParams) -> Result<()> {
        params.validate()?;
        let _ = edgebox_takes!(len, add, params);
        Ok(())
    }

    /// Carves the storage from `arena` (the same takes as [`EdgeBoxes::declare`]).
    ///
    /// Errors: as [`EdgeBoxes::declare`]; [`Error::BufferTooSmall`] when the arena runs out.
    pub fn new(arena: &mut Arena<'a>, params: &EdgeBoxParams) -> Result<Self> {
        params.validate()?;
        let (e, g0, g1, g2, b) = edgebox_takes!(arena, take, params);
        for (k, v) in b.6.iter_mut().enumerate() {
            *v = if k == 0 {
                0.0
            } else {
                libm::powf(1.0 / k as f32, params.kappa)
            };
        }
        Ok(Self {
            params: *params,
            edges: EdgeStore {
                blurred: e.0,
                dx: e.1,
                dy: e.2,
                scratch: e.3,
                mag: e.4,
                ori: e.5,
            },
            groups: GroupStore {
                seg: g0.0,
                pix: g0.1,
                todo: g0.2,
                frontier_px: g0.3,
                frontier_v: g0.4,
                mag: g1.0,
                mx: g1.1,
                my: g1.2,
                mo: g1.3,
                sc: g1.4,
                ss: g1.5,
                rc: g1.6,
                rr: g1.7,
                map: g1.8,
                start: g1.9,
                aff_start: g1.10,
                aff_idx: g2.0,
                aff_w: g2.1,
                pair_a: g2.2,
                pair_b: g2.3,
                pair_w: g2.4,
                done: g2.5,
                smap: g2.6,
                sids: g2.7,
                swts: g2.8,
                count: 1,
            },
            boxes: BoxStore {
                seg_ii: b.0,
                mag_ii: b.1,
                h_runs: b.2,
                h_idx: b.3,
                v_runs: b.4,
                v_idx: b.5,
                norm: b.6,
                cands: b.7,
            },
        })
    }

    /// The parameters this object was built with.
    pub fn params(&self) -> &EdgeBoxParams {
        &self.params
    }

    fn check_window(&self, window: &ImageView<'_, u8>) -> Result<()> {
        let n = self.params.max_window_px as usize;
        if window.width() > n || window.height() > n {
            return Err(Error::SizeMismatch);
        }
        Ok(())
    }

    /// Computes the edge map of `window` (see [`edges`]) and returns views of it: normalised
    /// ridge magnitude in `[0, 1]` and gradient orientation in `[0, π)` radians (0 where the
    /// magnitude is `≤ edge_min_mag`), both `window`-sized. [`EdgeBoxes::propose`] runs this
    /// first; it is public for inspection and tests.
    ///
    /// Errors: [`Error::SizeMismatch`] if `window` is wider or taller than
    /// [`EdgeBoxParams::max_window_px`].
    pub fn edge_map(
        &mut self,
        window: &ImageView<'_, u8>,
    ) -> Result<(ImageView<'_, f32>, ImageView<'_, f32>)> {
        self.check_window(window)?;
        edges::compute(window, &mut self.edges, self.params.edge_min_mag)?;
        let (w, h) = window.size();
        Ok((
            ImageView::packed(&self.edges.mag[..w * h], w, h)?,
            ImageView::packed(&self.edges.ori[..w * h], w, h)?,
        ))
    }

    /// Proposals inside `window` (a gray view, at most [`EdgeBoxParams::max_window_px`] a
    /// side), best first, at most `min(out.len(), max_boxes)` of them; returns how many were
    /// written to the front of `out`. Windows narrower or shorter than 3 px have no interior
    /// edges and yield none.
    ///
    /// Errors (nothing is written to `out`): [`Error::SizeMismatch`] if `window` is wider or
    /// taller than [`EdgeBoxParams::max_window_px`] (the storage was sized for that);
    /// [`Error::InvalidArgument`] if `constraints` fail [`BoxConstraints::validate`].
    pub fn propose(
        &mut self,
        window: &ImageView<'_, u8>,
        constraints: &BoxConstraints,
        out: &mut [Proposal],
    ) -> Result<usize> {
        constraints.validate()?;
        self.check_window(window)?;
        let (w, h) = window.size();
        if w < 3 || h < 3 || out.is_empty() {
            return Ok(0);
        }
        let p = self.params;
        edges::compute(window, &mut self.edges, p.edge_min_mag)?;
        let gp = GroupParams {
            edge_min_mag: p.edge_min_mag,
            edge_merge_thr: p.edge_merge_thr,
            cluster_min_mag: p.cluster_min_mag,
            gamma: p.gamma,
            background_suppression: p.background_suppression,
        };
        let n = w * h;
        let e = &self.edges;
        self.groups
            .build(&e.mag[..n], &e.ori[..n], &e.dx[..n], &e.dy[..n], w, h, &gp);
        let mut search = Search::new(
            &mut self.boxes,
            &mut self.groups,
            &self.edges.mag[..w * h],
            w,
            h,
            p.min_score,
        );
        let sp = SearchParams {
            alpha: p.alpha,
            beta: p.beta,
            eta: p.eta,
            max_boxes: p.max_boxes,
            max_refined: p.max_refined,
        };
        let n = search.run(&sp, constraints, out);
        // The path-search stamps must restart from 0 next frame.
        self.groups.done.fill(0);
        Ok(n)
    }
}

/// Bytes of workspace an [`EdgeBoxes`] with `params` needs (pass a buffer of this length to
/// [`Arena::new`], then call [`EdgeBoxes::new`]).
///
/// Errors: as [`EdgeBoxes::declare`].
pub fn workspace_len(params: &EdgeBoxParams) -> Result<usize> {
    let mut len = ArenaLen::new();
    EdgeBoxes::declare(&mut len, params)?;
    Ok(len.bytes())
}
