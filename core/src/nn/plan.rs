//! Planning and running a [`Graph`]: every intermediate tensor gets an offset in one
//! caller-provided `f32` arena, chosen by liveness so that tensors whose lifetimes do not overlap
//! share memory (MXNet's "co-share" idea, seed 000), and element-wise operators write into an
//! input that dies at them ("in-place"); then [`forward`] runs the nodes in order without
//! allocating.
//!
//! # Planning ([`make_plan`])
//! 1. Liveness: each tensor's last use is the index of the last node reading it; graph outputs
//!    live to the end (they are copied out after the last node).
//! 2. The nodes are walked in order. A Flatten or Reshape output is an alias of its input (no
//!    data moves). An Activation, Softmax, BatchNorm or Add / Sub / Mul output (the latter when
//!    the first operand already has the output's shape) takes its first input's memory when that
//!    memory (with all its aliases) is last used by this node and is not a graph input.
//!    Otherwise the output gets a new block: among the gaps between the blocks still live at
//!    this node, the smallest that fits (best fit; ties: lowest offset), else the space just above
//!    the highest live block. A block is live from the node writing it to the last use of its
//!    tensor and of every alias of it.
//!
//!    Concatenations are written in place where each input is one contiguous run of the
//!    output (every dimension before the axis is 1: channels at batch 1, as in SqueezeNet's
//!    fire modules): an input written by an earlier node (not a Flatten, Reshape or Concat),
//!    appearing once in the concatenation and in no earlier one, and not a graph input, is a
//!    *slice* of the concatenation's block at its run's offset. The block is placed (best fit)
//!    when the first such input's node runs and lives until the last use of the concatenation
//!    or of any of its slices; the Concat node then copies only its other inputs. Nothing moves
//!    in the other cases (batch > 1 along channels, inner axes), where it copies as before.
//! 3. Each convolution's method is [`choose_method`] under the caller's workspace budget.
//! 4. With [`make_plan_prepared`], Winograd and blocked convolutions, in node order, get their
//!    weights pre-transformed ([`winograd_weights_len`]: 16/9 of the layer's weights;
//!    [`blocked_weights_len`]: the layer's weights, re-laid out) in a caller buffer of
//!    [`Plan::prepared_len`] while they fit the caller's budget for it; [`prepare_weights`]
//!    fills it once, and [`forward_prepared`] reads it instead of transforming those weights on
//!    every call (a quarter to a third of the Winograd layers' time measured on AlexNet's and
//!    FastPoorNet's 3×3 layers). Results are the same bit for bit.
//!
//! [`Plan::arena_len`] is the highest block end (elements of `f32`); [`Plan::scratch_len`] the
//! largest convolution workspace or fully connected / MatMul packing buffer (elements of `f32`), shared by
//! all nodes since they run one at a time. Planning costs `O(N·T²)` for `N` nodes and `T`
//! tensors (no sorting storage: gaps are found by scanning the live blocks).
//!
//! Graph inputs are read from the caller's slices (never written), so an operator on a graph
//! input is never in place. Results are bit-identical to running the layer functions one after
//! the other into separate buffers: the planner changes where tensors live, not what is
//! computed (an in-place Add computes `a + b` into `a`'s memory, the same `f32` sums).

use super::activation::{apply_activation, as_clamp, conv2d_fused};
use super::batchnorm::batch_norm;
use super::conv::{
    blocked_prepare_weights, blocked_weights_len, blocked_workspace_len, choose_method,
    choose_method_for, conv2d_blocked_prepared_clamped, conv2d_winograd_prepared_clamped,
    winograd_prepare_weights, winograd_prepared_workspace_len, winograd_weights_len, workspace_len,
    Conv2dShape, ConvMethod,
};
use super::dense::{fully_connected, fully_connected_pack_len};
use super::depthwise::NO_CLAMP;
use super::elementwise::{binary, binary_broadcast, binary_in_place, binary_in_place_broadcast};
use super::graph::{Graph, Op};
use super::layout::{concat, pad2d};
use super::matmul::{matmul, matmul_pack_len};
use super::model::HUGE_PAGE_BYTES;
use super::pool::{avg_pool2d, global_avg_pool, max_pool2d_from};
use super::reduce::{reduce_mean, softmax};
use super::tensor::Shape4;
use crate::error::{Error, Result};

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Not a graph input and written by no node.
    Unused,
    /// The caller's graph input number `k`.
    Input(usize),
    /// The same memory as tensor `id` (Flatten, Reshape, in-place operators).
    Alias(u32),
    /// Tensor `id`'s memory from element `off` on: a part of a concatenation, written there by
    /// its own node so that the Concat node copies nothing.
    Slice(u32, usize),
    /// A block of the arena from this element offset.
    Arena(usize),
}

/// The plan's record of one tensor (caller storage for [`make_plan`], one per tensor of the
/// graph: [`plan_len`]). Its contents are private; start from [`PlanSlot::EMPTY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanSlot {
    place: Place,
    /// Index of the last node reading this tensor (`nodes.len()` for graph outputs).
    last: usize,
    /// For a block's root tensor: the last node using the block through any alias.
    end: usize,
    /// For a block's root tensor: its length in elements.
    len: usize,
    /// For a convolution's output tensor: the method chosen.
    method: ConvMethod,
    /// For a Winograd or blocked convolution's output tensor: the offset of its
    /// pre-transformed weights in the prepared buffer ([`NOT_PREPARED`] if none).
    prepared: usize,
}

/// [`PlanSlot::prepared`] of a tensor whose convolution reads its weights as stored.
const NOT_PREPARED: usize = usize::MAX;

impl PlanSlot {
    /// An unplanned slot.
    pub const EMPTY: Self = Self {
        place: Place::Unused,
        last: 0,
        end: 0,
        len: 0,
        method: ConvMethod::Direct,
        prepared: NOT_PREPARED,
    };
}

impl Default for PlanSlot {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// Number of [`PlanSlot`]s that [`make_plan`] needs for `graph`: one per tensor.
pub const fn plan_len(graph: &Graph<'_>) -> usize {
    graph.tensors.len()
}

/// A memory plan for one graph (see the module docs), borrowing the caller's slots.
#[derive(Clone, Copy, Debug)]
pub struct Plan<'p> {
    slots: &'p [PlanSlot],
    arena_len: usize,
    scratch_len: usize,
    prepared_len: usize,
}

impl Plan<'_> {
    /// Length of the activation arena [`forward`] needs, in `f32` elements.
    pub const fn arena_len(&self) -> usize {
        self.arena_len
    }

    /// Length of the activation arena in bytes (`4·`[`Plan::arena_len`]).
    pub const fn arena_bytes(&self) -> usize {
        self.arena_len * core::mem::size_of::<f32>()
    }

    /// Length of the scratch buffer [`forward`] needs, in `f32` elements: the largest
    /// convolution workspace ([`workspace_len`]) or fully connected / MatMul packing buffer
    /// ([`fully_connected_pack_len`]) of the graph.
    pub const fn scratch_len(&self) -> usize {
        self.scratch_len
    }

    /// Length of the pre-transformed weights buffer of [`prepare_weights`] and
    /// [`forward_prepared`], in `f32` elements (0 unless planned by [`make_plan_prepared`]
    /// with room for at least one layer). Each layer's part starts at a multiple of 16
    /// elements, so in a buffer from a cache line every layer's weights start on one (and on a
    /// page, in a page-aligned buffer ([`page_aligned`]), where the layers before it fill whole
    /// pages).
    pub const fn prepared_len(&self) -> usize {
        self.prepared_len
    }

    /// Whether the convolution writing tensor `output` reads pre-transformed weights.
    pub fn is_prepared(&self, output: u32) -> bool {
        self.slots
            .get(output as usize)
            .is_some_and(|s| s.prepared != NOT_PREPARED)
    }

    /// The convolution method chosen for the node writing tensor `output`, `None` if `output`
    /// is not a tensor of the plan.
    pub fn method(&self, output: u32) -> Option<ConvMethod> {
        self.slots.get(output as usize).map(|s| s.method)
    }

    /// The arena offset (`f32` elements) of tensor `id`'s memory, `None` for a graph input (or
    /// an alias of one), an unused tensor or an id outside the plan.
    pub fn offset(&self, id: u32) -> Option<usize> {
        match root(self.slots, id).ok()?.1 {
            Place::Arena(o) => Some(o),
            _ => None,
        }
    }
}

/// Length of the pre-transformed weights of a convolution by `method`, `None` for a method
/// that reads its weights as stored.
fn prepared_weights_len(method: ConvMethod, shape: &Conv2dShape) -> Result<Option<usize>> {
    Ok(match method {
        ConvMethod::Winograd => Some(winograd_weights_len(shape)?),
        ConvMethod::Blocked => Some(blocked_weights_len(shape)?),
        _ => None,
    })
}

/// The root tensor of `id`'s alias and slice chain (the tensor owning the block) and where
/// `id`'s own memory is: the root's place, its arena offset moved by the slices' offsets.
fn root(slots: &[PlanSlot], mut id: u32) -> Result<(u32, Place)> {
    let mut off = 0usize;
    for _ in 0..=slots.len() {
        match slots.get(id as usize).ok_or(Error::InvalidArgument)?.place {
            Place::Alias(p) => id = p,
            Place::Slice(p, o) => {
                id = p;
                off = off.checked_add(o).ok_or(Error::Overflow)?;
            }
            Place::Arena(a) => {
                return Ok((id, Place::Arena(a.checked_add(off).ok_or(Error::Overflow)?)));
            }
            // A slice is only made of a concatenation that is not a graph input.
            place if off == 0 => return Ok((id, place)),
            _ => return Err(Error::InvalidArgument),
        }
    }
    Err(Error::InvalidArgument)
}

/// Whether a concatenation of NCHW `shape` along `axis` lays each input out as one contiguous
/// run of the output (every dimension before `axis` is 1: for channels, batch 1), so that
/// its inputs can be written in place ([`Place::Slice`]).
fn contiguous_concat(shape: &Shape4, axis: usize) -> bool {
    [shape.n, shape.c, shape.h, shape.w]
        .get(..axis)
        .is_some_and(|d| d.iter().all(|&x| x == 1))
}

/// Marks the inputs of contiguous concatenations that their own nodes can write straight into
/// the concatenation's memory (module docs, step 2), and makes each such concatenation's block
/// live as long as any of those parts is read.
fn plan_concat_slices(graph: &Graph<'_>, slots: &mut [PlanSlot]) -> Result<()> {
    let nodes = graph.nodes;
    for (ci, node) in nodes.iter().enumerate() {
        let Op::Concat(axis) = graph.decode(node)? else {
            continue;
        };
        let c = node.output;
        if !contiguous_concat(&graph.shape(c)?, axis) || slots[c as usize].place != Place::Unused {
            continue;
        }
        let parts = &node.inputs[..node.input_count as usize];
        let mut off = 0usize;
        for (k, &t) in parts.iter().enumerate() {
            let once = !parts[..k].contains(&t) && !parts[k + 1..].contains(&t);
            // Written by an earlier node that computes into its output (not a Flatten or
            // Reshape, whose output is its input's memory, nor a concatenation), and not yet a
            // part of another concatenation nor a graph input.
            let mut writer = false;
            for n in &nodes[..ci] {
                if n.output == t {
                    let op = graph.decode(n)?;
                    writer = !op.alias() && !matches!(op, Op::Concat(_));
                }
            }
            if once && writer && slots[t as usize].place == Place::Unused {
                slots[t as usize].place = Place::Slice(c, off);
                let e = slots[t as usize].end;
                let ce = &mut slots[c as usize].end;
                *ce = (*ce).max(e);
            }
            off = off
                .checked_add(graph.shape(t)?.elements()?)
                .ok_or(Error::Overflow)?;
        }
    }
    Ok(())
}

/// Validates `graph` and plans it into `slots` (at least [`plan_len`] of them), choosing each
/// convolution's method with [`choose_method`] under `workspace_budget_bytes` (bytes of `f32`
/// scratch a convolution may use; 0 forces the direct method). Allocates nothing.
///
/// # Errors
/// Those of [`Graph::validate`]; [`Error::BufferTooSmall`] if `slots` is shorter than
/// [`plan_len`]; [`Error::Overflow`] if the arena or scratch length overflows.
pub fn make_plan<'p>(
    graph: &Graph<'_>,
    workspace_budget_bytes: usize,
    slots: &'p mut [PlanSlot],
) -> Result<Plan<'p>> {
    make_plan_prepared(graph, workspace_budget_bytes, 0, slots)
}

/// [`make_plan`], and the Winograd and blocked convolutions (in node order) whose
/// pre-transformed weights still fit `prepared_budget_bytes` read them from a buffer of
/// [`Plan::prepared_len`] that [`prepare_weights`] fills (module docs, step 4); their scratch
/// is then [`winograd_prepared_workspace_len`] or [`blocked_workspace_len`]. A budget of 0
/// gives [`make_plan`]'s plan.
///
/// # Errors
/// As [`make_plan`].
pub fn make_plan_prepared<'p>(
    graph: &Graph<'_>,
    workspace_budget_bytes: usize,
    prepared_budget_bytes: usize,
    slots: &'p mut [PlanSlot],
) -> Result<Plan<'p>> {
    graph.validate()?;
    let slots = slots
        .get_mut(..plan_len(graph))
        .ok_or(Error::BufferTooSmall)?;
    slots.fill(PlanSlot::EMPTY);
    let nodes = graph.nodes;
    for (k, &t) in graph.inputs.iter().enumerate() {
        slots[t as usize].place = Place::Input(k);
    }
    for (i, node) in nodes.iter().enumerate() {
        for &t in &node.inputs[..node.input_count as usize] {
            slots[t as usize].last = i;
        }
        slots[node.output as usize].last = i; // at least its own node
    }
    for &t in graph.outputs {
        slots[t as usize].last = nodes.len();
    }
    for s in slots.iter_mut() {
        s.end = s.last;
    }
    plan_concat_slices(graph, slots)?;
    let (mut arena_len, mut scratch_len, mut prepared_len) = (0usize, 0usize, 0usize);
    for (i, node) in nodes.iter().enumerate() {
        let op = graph.decode(node)?;
        let out = node.output;
        let out_last = slots[out as usize].last;
        match op {
            Op::Conv { shape, .. } => {
                // The method for prepared weights, if they fit the budget; else as stored.
                let room = prepared_budget_bytes / 4;
                let mut m = choose_method_for(&shape, workspace_budget_bytes, true)?;
                let mut wl = prepared_weights_len(m, &shape)?.unwrap_or(usize::MAX);
                if wl > room.saturating_sub(prepared_len) {
                    m = choose_method(&shape, workspace_budget_bytes)?;
                    wl = prepared_weights_len(m, &shape)?.unwrap_or(usize::MAX);
                }
                slots[out as usize].method = m;
                // Each layer's weights from a multiple of 16 elements (a cache line when the
                // buffer starts on one).
                let wl16 = wl.checked_next_multiple_of(16).unwrap_or(usize::MAX);
                if wl16 <= room.saturating_sub(prepared_len) {
                    slots[out as usize].prepared = prepared_len;
                    prepared_len += wl16;
                    let ws = match m {
                        ConvMethod::Winograd => winograd_prepared_workspace_len(&shape)?,
                        _ => blocked_workspace_len(&shape)?,
                    };
                    scratch_len = scratch_len.max(ws);
                } else {
                    scratch_len = scratch_len.max(workspace_len(m, &shape)?);
                }
            }
            Op::FullyConnected {
                batch,
                in_features,
                out_features,
                ..
            } => {
                let p = fully_connected_pack_len(batch, in_features, out_features);
                scratch_len = scratch_len.max(p);
            }
            Op::MatMul(shape) => scratch_len = scratch_len.max(matmul_pack_len(&shape)),
            _ => {}
        }
        if let Place::Slice(c, _) = slots[out as usize].place {
            // A part of a concatenation: its block is placed by its first part's node.
            if slots[c as usize].place == Place::Unused {
                let len = graph.shape(c)?.elements()?;
                let at = best_fit(slots, i, len)?;
                slots[c as usize].place = Place::Arena(at);
                slots[c as usize].len = len;
                arena_len = arena_len.max(at.checked_add(len).ok_or(Error::Overflow)?);
            }
            continue;
        }
        if matches!(op, Op::Concat(_)) && slots[out as usize].place != Place::Unused {
            continue; // placed with its first part
        }
        if op.alias() {
            let (r, _) = root(slots, node.inputs[0])?;
            slots[out as usize].place = Place::Alias(node.inputs[0]);
            let e = &mut slots[r as usize].end;
            *e = (*e).max(out_last);
            continue;
        }
        if op.in_place() {
            let (r, place) = root(slots, node.inputs[0])?;
            let other = if node.input_count > 1 {
                Some(root(slots, node.inputs[1])?.0)
            } else {
                None
            };
            if matches!(place, Place::Arena(_)) && slots[r as usize].end == i && other != Some(r) {
                slots[out as usize].place = Place::Alias(node.inputs[0]);
                slots[r as usize].end = out_last;
                continue;
            }
        }
        let len = graph.shape(out)?.elements()?;
        let at = best_fit(slots, i, len)?;
        slots[out as usize].place = Place::Arena(at);
        slots[out as usize].len = len;
        arena_len = arena_len.max(at.checked_add(len).ok_or(Error::Overflow)?);
    }
    Ok(Plan {
        slots,
        arena_len,
        scratch_len,
        prepared_len,
    })
}

/// Best-fit offset for a new block of `len` elements at node `i` (module docs): candidates are
/// 0 and the end of every block live at `i`; a candidate is valid if it overlaps no live block;
/// the valid candidate with the smallest gap above it wins (ties: lowest offset), a gap without
/// a live block above it counting as infinite.
fn best_fit(slots: &[PlanSlot], i: usize, len: usize) -> Result<usize> {
    let live = || {
        slots.iter().filter_map(move |s| match s.place {
            Place::Arena(o) if s.end >= i => Some((o, o + s.len)),
            _ => None,
        })
    };
    let mut best: Option<(usize, usize)> = None; // (gap, offset)
    for c in core::iter::once(0).chain(live().map(|(_, e)| e)) {
        let c_end = c.checked_add(len).ok_or(Error::Overflow)?;
        if live().any(|(s, e)| c < e && s < c_end) {
            continue;
        }
        let gap = live()
            .filter(|&(s, _)| s >= c)
            .map(|(s, _)| s - c)
            .min()
            .unwrap_or(usize::MAX);
        if best.is_none_or(|(g, o)| (gap, c) < (g, o)) {
            best = Some((gap, c));
        }
    }
    // Some candidate is always valid: the highest live block end (or 0 when none is live).
    best.map(|(_, o)| o).ok_or(Error::Overflow)
}

/// The slice of tensor `t` (`len` elements) for reading while an arena block is being written:
/// `left` is the arena before that block, `right` the arena from element `right_at` on. A
/// tensor overlapping the block (only possible with a plan of another graph) is an error.
fn read<'x>(
    slots: &[PlanSlot],
    t: u32,
    len: usize,
    inputs: &[&'x [f32]],
    left: &'x [f32],
    right: &'x [f32],
    right_at: usize,
) -> Result<&'x [f32]> {
    let r = match root(slots, t)?.1 {
        Place::Input(k) => inputs.get(k).and_then(|x| x.get(..len)),
        Place::Arena(s) => {
            let e = s.checked_add(len).ok_or(Error::Overflow)?;
            if e <= left.len() {
                left.get(s..e)
            } else if s >= right_at {
                right.get(s - right_at..e - right_at)
            } else {
                None
            }
        }
        _ => None,
    };
    r.ok_or(Error::InvalidArgument)
}

/// `f32` elements to allocate beyond [`Plan::arena_len`] (or [`Plan::scratch_len`]) so that
/// [`cache_aligned`] finds that many elements from a 64-byte boundary in any `f32` buffer
/// ([`page_align_slack`] for [`page_aligned`]).
pub const CACHE_ALIGN_SLACK: usize = 15;

/// The `len` elements of `buf` from its first element on a 64-byte (cache line) boundary, or
/// `None` if `buf` ends before them (a buffer of `len + `[`CACHE_ALIGN_SLACK`] elements always
/// holds them). [`forward`] accepts an arena and scratch at any alignment, but the arena
/// offsets are multiples of 16 elements in the networks measured, so an aligned arena makes
/// the layers' 16-lane vector stores whole cache lines: MobileNetV2's 1×1 layers ran 4–5 %
/// faster and its depthwise layers 6 % faster than with the arena 16 bytes past a line, as a
/// heap `Vec` had it. [`page_aligned`] goes further, to a page boundary.
pub fn cache_aligned(buf: &mut [f32], len: usize) -> Option<&mut [f32]> {
    let at = buf.as_ptr().align_offset(64);
    buf.get_mut(at..at.checked_add(len)?)
}

/// `f32` elements of a huge page ([`HUGE_PAGE_BYTES`]).
const HUGE_PAGE_FLOATS: usize = HUGE_PAGE_BYTES / 4;

/// Bytes of a base page, the boundary [`page_aligned`] starts buffers smaller than a huge page
/// on.
pub const PAGE_BYTES: usize = 4096;

/// `f32` elements of a base page ([`PAGE_BYTES`]).
const PAGE_FLOATS: usize = PAGE_BYTES / 4;

/// `f32` elements to allocate beyond a buffer of `len` elements (arena, scratch or
/// pre-transformed weights) so that [`page_aligned`] finds them: a huge page's worth when
/// `len` fills at least one, else a base page's worth (less one element).
pub const fn page_align_slack(len: usize) -> usize {
    if len >= HUGE_PAGE_FLOATS {
        HUGE_PAGE_FLOATS
    } else {
        PAGE_FLOATS - 1
    }
}

/// Where [`page_aligned`] starts, in elements, in an `f32` buffer at `addr` of `total`: the
/// first huge-page boundary if `len` fills a huge page and fits after it, else the first
/// base-page boundary if `len` fits after it, else the first cache line.
fn page_offset(addr: usize, total: usize, len: usize) -> usize {
    let gap = |to: usize| {
        addr.checked_next_multiple_of(to)
            .map_or(0, |a| (a - addr) / 4)
    };
    let fits = |at: usize| total.checked_sub(at).is_some_and(|room| room >= len);
    let huge = gap(HUGE_PAGE_BYTES);
    if len >= HUGE_PAGE_FLOATS && fits(huge) {
        return huge;
    }
    let page = gap(PAGE_BYTES);
    if fits(page) {
        page
    } else {
        gap(64)
    }
}

/// The `len` elements of `buf` from a page boundary: the first huge-page ([`HUGE_PAGE_BYTES`])
/// boundary when `len` fills at least one huge page, else the first [`PAGE_BYTES`] boundary,
/// given room for them there (a buffer of `len + `[`page_align_slack`]`(len)` elements always
/// has it); else from the first cache line ([`cache_aligned`]), or `None` if `buf` ends before
/// them. The same buffer always gives the same elements. This is where `mv_net` and the CLI
/// keep a network's arena, scratch and pre-transformed weights. Measured on a Zen 5 virtual
/// machine: with its prepared weights 64 bytes past a page (a cache-aligned heap buffer),
/// ResNet-18's first Winograd layer took 1.24–1.52 ms; 0 or 2048 bytes past one, 0.72–0.82
/// (128 bytes: 0.95–1.11), and the network 11.5–12.4 ms against 13.0–13.5.
pub fn page_aligned(buf: &mut [f32], len: usize) -> Option<&mut [f32]> {
    let at = page_offset(buf.as_ptr() as usize, buf.len(), len);
    buf.get_mut(at..at.checked_add(len)?)
}

/// [`page_aligned`] for reading (the pre-transformed weights at each [`forward_prepared`]).
pub fn page_aligned_ref(buf: &[f32], len: usize) -> Option<&[f32]> {
    let at = page_offset(buf.as_ptr() as usize, buf.len(), len);
    buf.get(at..at.checked_add(len)?)
}

/// Runs `graph` planned by `plan` ([`make_plan`] on the same graph): reads the graph inputs from
/// `inputs` (one slice per [`Graph::inputs`] entry, at least its tensor's elements, packed
/// NCHW), keeps every intermediate tensor in `arena` (at least [`Plan::arena_len`] elements),
/// uses `scratch` (at least [`Plan::scratch_len`] elements) as working memory, and copies each
/// graph output into `outputs` (one slice per [`Graph::outputs`] entry, at least its tensor's
/// elements; elements past it are untouched). Any batch size the tensors declare. Allocates
/// nothing (except inside the optional `gemm` crate). Contents of `arena` and `scratch` are
/// meaningless before and after.
///
/// # Errors
/// [`Error::InvalidArgument`] if `inputs` or `outputs` has the wrong count or `plan` does not
/// belong to `graph`; [`Error::BufferTooSmall`] if a buffer is too short. These are checked
/// before anything is written. On a graph that [`Graph::validate`] accepts, with a plan made
/// from it, nothing else fails.
pub fn forward(
    graph: &Graph<'_>,
    plan: &Plan<'_>,
    inputs: &[&[f32]],
    outputs: &mut [&mut [f32]],
    arena: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    forward_prepared(graph, plan, &[], inputs, outputs, arena, scratch)
}

/// Fills `prepared` ([`Plan::prepared_len`] elements) with the pre-transformed weights of the
/// plan's prepared convolutions, read from `graph` (once, before [`forward_prepared`]). Any
/// alignment works; from a page boundary ([`page_aligned`]) the layers run faster.
///
/// # Errors
/// [`Error::InvalidArgument`] if `plan` does not belong to `graph`; [`Error::BufferTooSmall`]
/// if `prepared` is too short (checked before anything is written).
pub fn prepare_weights(graph: &Graph<'_>, plan: &Plan<'_>, prepared: &mut [f32]) -> Result<()> {
    if plan.slots.len() != graph.tensors.len() {
        return Err(Error::InvalidArgument);
    }
    if prepared.len() < plan.prepared_len {
        return Err(Error::BufferTooSmall);
    }
    for node in graph.nodes {
        let at = plan.slots[node.output as usize].prepared;
        if at == NOT_PREPARED {
            continue;
        }
        let Op::Conv { shape, weights, .. } = graph.decode(node)? else {
            return Err(Error::InvalidArgument);
        };
        let method = plan.slots[node.output as usize].method;
        let len = prepared_weights_len(method, &shape)?.ok_or(Error::InvalidArgument)?;
        let dst = prepared
            .get_mut(at..at + len)
            .ok_or(Error::InvalidArgument)?;
        match method {
            ConvMethod::Winograd => winograd_prepare_weights(&shape, weights, dst)?,
            _ => blocked_prepare_weights(&shape, weights, dst)?,
        }
    }
    Ok(())
}

/// [`forward`] for a plan of [`make_plan_prepared`]: `prepared` holds [`Plan::prepared_len`]
/// elements filled by [`prepare_weights`] for this graph and plan (an empty slice when that
/// length is 0). Same results as [`forward`], bit for bit.
///
/// # Errors
/// As [`forward`]; [`Error::BufferTooSmall`] also if `prepared` is too short.
pub fn forward_prepared(
    graph: &Graph<'_>,
    plan: &Plan<'_>,
    prepared: &[f32],
    inputs: &[&[f32]],
    outputs: &mut [&mut [f32]],
    arena: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    forward_observed(
        graph,
        plan,
        prepared,
        inputs,
        outputs,
        arena,
        scratch,
        |_| {},
    )
}

/// [`forward_prepared`] that calls `on_node(i)` just before node `i` of `graph.nodes` runs (also
/// for Flatten and Reshape, which run nothing) and `on_node(graph.nodes.len())` after the last
/// node, before the outputs are copied out: a caller that reads a clock in `on_node` gets each
/// node's time as the difference of consecutive calls (`mvision bench net --layers`). The
/// callback is a generic parameter, so [`forward`] and [`forward_prepared`], which pass a closure
/// that does nothing, compile to the same code as without it. `on_node` is not called when the
/// arguments are rejected.
///
/// # Errors
/// As [`forward_prepared`].
#[allow(clippy::too_many_arguments)]
pub fn forward_observed(
    graph: &Graph<'_>,
    plan: &Plan<'_>,
    prepared: &[f32],
    inputs: &[&[f32]],
    outputs: &mut [&mut [f32]],
    arena: &mut [f32],
    scratch: &mut [f32],
    mut on_node: impl FnMut(usize),
) -> Result<()> {
    let slots = plan.slots;
    if prepared.len() < plan.prepared_len {
        return Err(Error::BufferTooSmall);
    }
    if slots.len() != graph.tensors.len()
        || inputs.len() != graph.inputs.len()
        || outputs.len() != graph.outputs.len()
    {
        return Err(Error::InvalidArgument);
    }
    for (x, &t) in inputs.iter().zip(graph.inputs) {
        if x.len() < graph.shape(t)?.elements()? {
            return Err(Error::BufferTooSmall);
        }
    }
    for (y, &t) in outputs.iter().zip(graph.outputs) {
        if y.len() < graph.shape(t)?.elements()? {
            return Err(Error::BufferTooSmall);
        }
    }
    if arena.len() < plan.arena_len || scratch.len() < plan.scratch_len {
        return Err(Error::BufferTooSmall);
    }
    let arena = &mut arena[..plan.arena_len];
    let scratch = &mut scratch[..plan.scratch_len];
    for (i, node) in graph.nodes.iter().enumerate() {
        on_node(i);
        let op = graph.decode(node)?;
        if op.alias() {
            continue;
        }
        let len = |t: u32| -> Result<usize> { graph.shape(t)?.elements() };
        let Place::Arena(at) = root(slots, node.output)?.1 else {
            return Err(Error::InvalidArgument);
        };
        let y_len = len(node.output)?;
        let end = at.checked_add(y_len).ok_or(Error::Overflow)?;
        if end > arena.len() {
            return Err(Error::InvalidArgument);
        }
        let (left, rest) = arena.split_at_mut(at);
        let (y, right) = rest.split_at_mut(y_len);
        let (left, right): (&[f32], &[f32]) = (left, right);
        let x0 = node.inputs[0];
        // Whether a tensor's memory starts where the output's does (in place; a part of a
        // concatenation already in it).
        let at_out = |t: u32, off: usize| -> Result<bool> {
            Ok(root(slots, t)?.1 == Place::Arena(at.checked_add(off).ok_or(Error::Overflow)?))
        };
        let in_place = at_out(x0, 0)?;
        let rd = |t: u32| read(slots, t, len(t)?, inputs, left, right, end);
        // The first input, or (in place) a copy already in `y`.
        let x = |y: &mut [f32]| -> Result<()> {
            if !in_place {
                y.copy_from_slice(rd(x0)?);
            }
            Ok(())
        };
        match op {
            Op::Conv {
                shape,
                weights,
                bias,
                act,
                slopes,
            } => {
                let slot = &slots[node.output as usize];
                if slot.prepared == NOT_PREPARED {
                    let m = slot.method;
                    conv2d_fused(m, &shape, rd(x0)?, weights, bias, act, slopes, y, scratch)?;
                } else {
                    let len = prepared_weights_len(slot.method, &shape)?;
                    let u = prepared
                        .get(slot.prepared..)
                        .and_then(|p| p.get(..len?))
                        .ok_or(Error::InvalidArgument)?;
                    // The blocked method clamps (ReLU, ReLU6, Clip) before its stores, as
                    // in `conv2d_fused`, and so does Winograd where it runs in strips; other
                    // Winograd layers and the other activations take a pass.
                    let clamp = as_clamp(act);
                    let c = clamp.unwrap_or(NO_CLAMP);
                    let clamped = if slot.method == ConvMethod::Winograd {
                        conv2d_winograd_prepared_clamped(&shape, rd(x0)?, u, bias, c, y, scratch)?
                    } else {
                        conv2d_blocked_prepared_clamped(&shape, rd(x0)?, u, bias, c, y, scratch)?;
                        true
                    };
                    if clamp.is_none() || !clamped {
                        apply_activation(act, &graph.shape(node.output)?, y, slopes)?;
                    }
                }
            }
            Op::MaxPool(s) => {
                // An input that the convolution just before wrote is likely out of the
                // caches by now (`pool_channels::prefers`).
                let after_conv = match i.checked_sub(1).map(|p| &graph.nodes[p]) {
                    Some(p) if p.output == x0 => matches!(graph.decode(p)?, Op::Conv { .. }),
                    _ => false,
                };
                max_pool2d_from(&s, rd(x0)?, y, !after_conv)?
            }
            Op::AvgPool(s) => avg_pool2d(&s, rd(x0)?, y)?,
            Op::GlobalAvgPool(s) => global_avg_pool(&s, rd(x0)?, y)?,
            Op::FullyConnected {
                batch,
                in_features,
                out_features,
                weights,
                bias,
            } => fully_connected(
                batch,
                in_features,
                out_features,
                rd(x0)?,
                weights,
                bias,
                y,
                scratch,
            )?,
            Op::Activation { shape, act, slopes } => {
                x(y)?;
                apply_activation(act, &shape, y, slopes)?;
            }
            Op::Softmax(s, axis) => {
                x(y)?;
                softmax(&s, axis, y)?;
            }
            Op::ReduceMean(s, axes) => reduce_mean(&s, axes, rd(x0)?, y)?,
            Op::Binary(bop, s, bc) => {
                let b = rd(node.inputs[1])?;
                if in_place {
                    binary_in_place(bop, &s, y, b, bc)?;
                } else {
                    binary(bop, &s, rd(x0)?, b, bc, y)?;
                }
            }
            Op::BinaryBroadcast(bop, sa, sb, so) => {
                let b = rd(node.inputs[1])?;
                if in_place {
                    // `a` has the output's shape: each element reads only its own position.
                    binary_in_place_broadcast(bop, &so, y, &sb, b)?;
                } else {
                    binary_broadcast(bop, &sa, rd(x0)?, &sb, b, y)?;
                }
            }
            Op::MatMul(shape) => matmul(&shape, rd(x0)?, rd(node.inputs[1])?, y, scratch)?,
            Op::Constant(w) => y.copy_from_slice(w),
            Op::Concat(axis) if contiguous_concat(&graph.shape(node.output)?, axis) => {
                // Each input is one run of the output: copy the parts not written in place.
                let mut off = 0usize;
                for &t in &node.inputs[..node.input_count as usize] {
                    let n = len(t)?;
                    let end = off.checked_add(n).ok_or(Error::Overflow)?;
                    let part = y.get_mut(off..end).ok_or(Error::InvalidArgument)?;
                    if !at_out(t, off)? {
                        part.copy_from_slice(rd(t)?);
                    }
                    off = end;
                }
            }
            Op::Concat(axis) => {
                let count = node.input_count as usize;
                let first: (Shape4, &[f32]) = (graph.shape(x0)?, rd(x0)?);
                let mut parts = [first; 4];
                for (p, &t) in parts.iter_mut().zip(&node.inputs[..count]) {
                    *p = (graph.shape(t)?, rd(t)?);
                }
                concat(&parts[..count], axis, y)?;
            }
            Op::Pad(s, pads, mode) => pad2d(&s, &pads, mode, rd(x0)?, y)?,
            Op::BatchNorm(s, bn) => {
                x(y)?;
                batch_norm(&s, &bn, y)?;
            }
            Op::Flatten | Op::Reshape => {}
        }
    }
    on_node(graph.nodes.len());
    let arena: &[f32] = arena;
    for (y, &t) in outputs.iter_mut().zip(graph.outputs) {
        let n = graph.shape(t)?.elements()?;
        let src = read(slots, t, n, inputs, arena, &[], usize::MAX)?;
        y[..n].copy_from_slice(src);
    }
    Ok(())
}

/// Bytes of activation arena `graph` needs under `workspace_budget_bytes` ([`Plan::arena_bytes`]),
/// planned into `slots`: what a caller allocates (or reserves in RAM) for the model.
///
/// # Errors
/// Those of [`make_plan`].
pub fn arena_len(
    graph: &Graph<'_>,
    workspace_budget_bytes: usize,
    slots: &mut [PlanSlot],
) -> Result<usize> {
    Ok(make_plan(graph, workspace_budget_bytes, slots)?.arena_bytes())
}
