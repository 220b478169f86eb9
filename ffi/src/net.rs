//! `mv_net`: a CNN loaded from a `.mvnn` model file and run on the CPU.
//!
//! Life cycle: `mv_net_create` parses and validates the model (copying its bytes, or with
//! `MV_NET_BORROW` using them in place, e.g. from flash), plans where every activation lives
//! and allocates the activation arena and the scratch buffer once; `mv_net_forward` runs the
//! network as often as needed without allocating; `mv_net_destroy` frees everything.
//!
//! Tensors are packed NCHW `float` arrays; their shapes come from `mv_net_input_shape` /
//! `mv_net_output_shape`, and `mv_net_forward` takes each buffer's element count so that a
//! mismatch is an error rather than an out-of-bounds read or write.
//!
//! Memory: `mv_net_arena_size` + `mv_net_scratch_size` bytes are allocated at create, plus the
//! model's bytes (unless borrowed), a few hundred bytes of bookkeeping per tensor and, with
//! `mv_net_create_prepared`, `mv_net_prepared_size` bytes of pre-transformed Winograd and
//! blocked-convolution weights. The arena, scratch and prepared weights each get up to 4 KiB
//! more, or 2 MiB more when they are 2 MiB or larger (address space: those pages are never
//! touched), so that they start on a page boundary (`page_aligned`).

use crate::panic::{guard, guard_value, non_null};
use crate::status::mv_status::{self, *};
use mvision_core::nn::graph::Graph;
use mvision_core::nn::model::Model;
use mvision_core::nn::plan::{
    forward_prepared, make_plan_prepared, page_align_slack, page_aligned, page_aligned_ref,
    prepare_weights, Plan, PlanSlot,
};
use std::alloc::Layout;
use std::ffi::{c_char, c_void, CString};
use std::ptr::NonNull;

/// `mv_net_create` flag: use the caller's model bytes in place instead of copying them. The
/// bytes must be 4-byte aligned and stay readable and unchanged until `mv_net_destroy`.
pub const MV_NET_BORROW: u32 = 1;

/// The default workspace budget of `mv_net_create`, in bytes: 16 MiB. A convolution may use a
/// lowering method (im2col, MFCA, MEC: faster, see BENCHMARKS.md) only when its working memory
/// fits the budget; otherwise it runs the direct method, which needs none.
pub const MV_NET_DEFAULT_WORKSPACE_BYTES: usize = 16 << 20;

/// Heap memory freed on drop, made by `Box::into_raw`, so that borrows of it (the parsed model,
/// the plan) can live in the same struct: moving the struct does not move the memory.
struct Owned<T>(NonNull<[T]>);

impl<T> Owned<T> {
    /// Moves `v` to the heap, leaking it until drop.
    fn new(v: Vec<T>) -> Self {
        Self(NonNull::from(Box::leak(v.into_boxed_slice())))
    }

    /// The memory, with a lifetime the owner vouches for.
    ///
    /// # Safety
    /// The result must not be used after `self` is dropped, nor alongside a mutable borrow.
    unsafe fn get<'a>(&self) -> &'a [T] {
        // SAFETY: the pointer came from Box::leak and stays valid until drop.
        unsafe { self.0.as_ref() }
    }

    /// # Safety
    /// As [`Owned::get`], and no other borrow may be alive.
    unsafe fn get_mut<'a>(&mut self) -> &'a mut [T] {
        // SAFETY: as get(); exclusive by the caller's promise.
        unsafe { self.0.as_mut() }
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: made by Box::leak in new() and dropped exactly once, here.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// A loaded, planned network. Opaque; create with `mv_net_create`, free with
/// `mv_net_destroy`. Not thread-safe: one `mv_net_forward` at a time per net (different nets
/// may run on different threads; the query functions only read).
pub struct mv_net {
    // The borrows first: fields drop in order, and these borrow the owners below.
    /// The parsed model, borrowing `file` or the caller's bytes.
    model: Model<'static>,
    /// The memory plan, borrowing `slots`.
    plan: Plan<'static>,
    /// Per-call views of the caller's buffers, kept empty between calls (preallocated so that
    /// `mv_net_forward` allocates nothing).
    input_views: Vec<&'static [f32]>,
    output_views: Vec<&'static mut [f32]>,
    /// NUL-terminated names: inputs, then outputs.
    names: Vec<CString>,
    arena: Owned<f32>,
    scratch: Owned<f32>,
    /// Pre-transformed Winograd and blocked weights (`plan.prepared_len()` at `page_aligned`,
    /// filled at create).
    prepared: Owned<f32>,
    /// The plan's storage: held only to be freed after `plan`.
    #[allow(dead_code)]
    slots: Owned<PlanSlot>,
    /// The copy of the model's bytes (16-byte aligned), `None` when borrowed: held only to be
    /// freed after `model`.
    #[allow(dead_code)]
    file: Option<Owned<u128>>,
}

/// `Err(OUT_OF_MEMORY)` instead of an abort when `len` elements cannot be allocated.
fn try_vec<T: Clone>(len: usize, value: T) -> Result<Vec<T>, mv_status> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| MV_STATUS_OUT_OF_MEMORY)?;
    v.resize(len, value);
    Ok(v)
}

/// `len` zeros, or `Err(OUT_OF_MEMORY)`, from `calloc`, which leaves fresh pages untouched.
fn try_zeroed(len: usize) -> Result<Vec<f32>, mv_status> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = Layout::array::<f32>(len).map_err(|_| MV_STATUS_OUT_OF_MEMORY)?;
    // SAFETY: the layout's size is not zero.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f32>();
    if p.is_null() {
        return Err(MV_STATUS_OUT_OF_MEMORY);
    }
    // SAFETY: `p` holds `len` zeroed `f32`s (each a valid 0.0) from the global allocator with
    // the layout a `Vec<f32>` of capacity `len` has.
    Ok(unsafe { Vec::from_raw_parts(p, len, len) })
}

/// `len` zeros for `page_aligned`, with `page_align_slack` more (never touched).
fn page_buffer(len: usize) -> Result<Vec<f32>, mv_status> {
    let total = len
        .checked_add(page_align_slack(len))
        .ok_or(MV_STATUS_OUT_OF_MEMORY)?;
    try_zeroed(total)
}

/// A C string of `name`, cut at its first NUL byte (names in the file may contain one).
fn c_name(name: &str) -> CString {
    let cut = name.split('\0').next().unwrap_or_default();
    CString::new(cut).unwrap_or_default()
}

/// Builds the net over `bytes` (`file`: the owner of a copy, or `None` when borrowed).
///
/// # Safety
/// `bytes` stays valid and unchanged for the net's life (it is `file`'s memory, or the
/// caller's under `MV_NET_BORROW`).
unsafe fn build(
    bytes: &'static [u8],
    file: Option<Owned<u128>>,
    workspace_budget_bytes: usize,
    prepared_budget_bytes: usize,
) -> Result<Box<mv_net>, mv_status> {
    let model = Model::parse(bytes)?;
    let graph = *model.graph();
    let mut slots = Owned::new(try_vec(graph.tensors.len(), PlanSlot::EMPTY)?);
    let budgets = (workspace_budget_bytes, prepared_budget_bytes);
    // SAFETY: `slots` moves into the net with the plan and outlives it (field order).
    let plan = make_plan_prepared(&graph, budgets.0, budgets.1, unsafe { slots.get_mut() })?;
    let arena = Owned::new(page_buffer(plan.arena_len())?);
    let scratch = Owned::new(page_buffer(plan.scratch_len())?);
    let mut prepared = page_buffer(plan.prepared_len())?;
    let len = plan.prepared_len();
    prepare_weights(
        &graph,
        &plan,
        page_aligned(&mut prepared, len).expect("with slack"),
    )?;
    let prepared = Owned::new(prepared);
    let names = (0..graph.inputs.len())
        .map(|k| model.input_name(k))
        .chain((0..graph.outputs.len()).map(|k| model.output_name(k)))
        .map(|n| c_name(n.unwrap_or_default()))
        .collect();
    Ok(Box::new(mv_net {
        model,
        plan,
        input_views: vec![&[]; graph.inputs.len()],
        output_views: (0..graph.outputs.len())
            .map(|_| <&mut [f32]>::default())
            .collect(),
        names,
        arena,
        scratch,
        prepared,
        slots,
        file,
    }))
}

/// Parses the `.mvnn` model of `size` bytes at `data`, plans it and allocates its memory, and
/// writes the new net into `*out`.
///
/// `flags`: 0 copies the bytes into a buffer the net owns (16-byte aligned; the caller may free
/// `data` on return); `MV_NET_BORROW` uses them in place (zero copy, for models in flash or
/// memory-mapped files): `data` must then be 4-byte aligned and stay readable and unchanged
/// until `mv_net_destroy`.
///
/// `workspace_budget_bytes`: the most working memory one convolution may use
/// (`MV_NET_DEFAULT_WORKSPACE_BYTES` is a good default; 0 makes every convolution direct, the
/// slowest and leanest). The scratch buffer is the largest any layer then needs
/// (`mv_net_scratch_size`). Bytes after the model's own length (padding) are ignored.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `data` or `out` is NULL; `MV_STATUS_INVALID_ARGUMENT`
/// for unknown flags; `MV_STATUS_OVERFLOW` if `size` exceeds `PTRDIFF_MAX` or the range
/// wraps the address space; `MV_STATUS_MISALIGNED` if `data` is not 4-byte aligned under
/// `MV_NET_BORROW`; `MV_STATUS_MALFORMED` for bytes that are not a valid model (wrong magic,
/// truncated, checksum mismatch, bad sections or names); `MV_STATUS_UNSUPPORTED_VERSION` for
/// another format version; `MV_STATUS_INVALID_ARGUMENT`, `MV_STATUS_OUT_OF_BOUNDS`,
/// `MV_STATUS_NOT_INITIALIZED`, `MV_STATUS_SIZE_MISMATCH`, `MV_STATUS_ZERO_SIZE` or
/// `MV_STATUS_OVERFLOW` for a well-formed file whose network is inconsistent (the graph
/// checks of the core); `MV_STATUS_OUT_OF_MEMORY` if the copy, arena or scratch cannot be
/// allocated. `*out` is written only on success.
///
/// # Safety
/// `data` NULL or readable for `size` bytes (and, with `MV_NET_BORROW`, unchanged until the
/// net is destroyed); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_create(
    data: *const c_void,
    size: usize,
    flags: u32,
    workspace_budget_bytes: usize,
    out: *mut *mut mv_net,
) -> mv_status {
    // SAFETY: forwarded contracts.
    unsafe { mv_net_create_prepared(data, size, flags, workspace_budget_bytes, 0, out) }
}

/// `mv_net_create`, and the Winograd convolutions (3×3, stride 1) and blocked convolutions
/// (other kernels with at least 16 output channels, on AVX-512 CPUs), in node order, whose
/// pre-transformed weights still fit `prepared_budget_bytes` get them transformed once here,
/// into a buffer the net owns (`mv_net_prepared_size`; each Winograd layer takes 16/9 of its
/// weights' bytes, each blocked layer its weights' bytes), instead of on every
/// `mv_net_forward`: a quarter to a third less time on Winograd layers, up to a seventh on
/// blocked ones (BENCHMARKS.md), the same results bit for bit. 0 gives `mv_net_create`'s net; `SIZE_MAX`
/// prepares every such layer.
///
/// Errors: those of `mv_net_create` (`MV_STATUS_OUT_OF_MEMORY` also for the prepared weights).
///
/// # Safety
/// As `mv_net_create`.
#[no_mangle]
pub unsafe extern "C" fn mv_net_create_prepared(
    data: *const c_void,
    size: usize,
    flags: u32,
    workspace_budget_bytes: usize,
    prepared_budget_bytes: usize,
    out: *mut *mut mv_net,
) -> mv_status {
    let budgets = (workspace_budget_bytes, prepared_budget_bytes);
    guard(|| {
        non_null(data)?;
        non_null(out)?;
        if flags & !MV_NET_BORROW != 0 {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        if size > isize::MAX as usize || (data as usize).checked_add(size).is_none() {
            return Err(MV_STATUS_OVERFLOW);
        }
        let borrow = flags & MV_NET_BORROW != 0;
        if borrow && !(data as usize).is_multiple_of(4) {
            return Err(MV_STATUS_MISALIGNED);
        }
        // SAFETY: data is readable for size ≤ isize::MAX bytes (the caller's contract).
        let given: &[u8] = unsafe { std::slice::from_raw_parts(data.cast(), size) };
        let net = if borrow {
            // SAFETY: under MV_NET_BORROW the caller keeps the bytes alive and unchanged
            // until mv_net_destroy, which drops every borrow of them.
            let bytes: &'static [u8] = unsafe { &*(given as *const [u8]) };
            // SAFETY: as above.
            unsafe { build(bytes, None, budgets.0, budgets.1)? }
        } else {
            let mut copy = try_vec(size.div_ceil(16), 0u128)?;
            // Before the first write: whole 2 MiB pages become huge pages where Linux agrees.
            mvision_core::nn::model::advise_huge_pages(&mut copy);
            bytemuck::cast_slice_mut::<u128, u8>(&mut copy)[..size].copy_from_slice(given);
            let copy = Owned::new(copy);
            // SAFETY: the copy moves into the net and is freed after the borrows (field
            // order); nothing writes it.
            let bytes: &'static [u8] = bytemuck::cast_slice(unsafe { copy.get() });
            // SAFETY: as above.
            unsafe { build(&bytes[..size], Some(copy), budgets.0, budgets.1)? }
        };
        // SAFETY: non-null; the caller guarantees it is writable.
        unsafe { out.write(Box::into_raw(net)) };
        Ok(())
    })
}

/// Frees a net made by `mv_net_create` or `mv_net_create_prepared` (its arena, scratch,
/// prepared weights and model copy). NULL does nothing.
/// A borrowed model's bytes (`MV_NET_BORROW`) may be freed after this call.
///
/// # Safety
/// `net` NULL or made by `mv_net_create` and not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn mv_net_destroy(net: *mut mv_net) {
    guard_value((), || {
        if !net.is_null() {
            // SAFETY: made by Box::into_raw in mv_net_create, destroyed once (the contract).
            drop(unsafe { Box::from_raw(net) });
        }
    })
}

/// The net behind `net`, or `MV_STATUS_NULL_POINTER`.
///
/// # Safety
/// `net` NULL or a live net.
unsafe fn net_ref<'a>(net: *const mv_net) -> Result<&'a mv_net, mv_status> {
    non_null(net)?;
    // SAFETY: non-null and live (the caller's contract).
    Ok(unsafe { &*net })
}

/// Writes `value` to `out` after a null check.
///
/// # Safety
/// `out` NULL or writable.
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), mv_status> {
    non_null(out)?;
    // SAFETY: non-null; writable by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Bytes of the activation arena the net allocated at create (every intermediate tensor, placed
/// by liveness so that tensors not alive at the same time share memory), into `*bytes`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `bytes` is NULL.
///
/// # Safety
/// `net` NULL or a live net; `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_arena_size(net: *const mv_net, bytes: *mut usize) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contracts.
        unsafe { put(bytes, net_ref(net)?.plan.arena_bytes()) }
    })
}

/// Bytes of the scratch buffer the net allocated at create (the largest convolution workspace
/// or fully connected packing buffer under the workspace budget), into `*bytes`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `bytes` is NULL.
///
/// # Safety
/// `net` NULL or a live net; `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_scratch_size(net: *const mv_net, bytes: *mut usize) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contracts.
        let net = unsafe { net_ref(net)? };
        let len = net.plan.scratch_len() * std::mem::size_of::<f32>();
        // SAFETY: forwarded contract.
        unsafe { put(bytes, len) }
    })
}

/// Bytes of pre-transformed Winograd and blocked weights the net allocated at create (0 unless made by
/// `mv_net_create_prepared` with room for at least one layer), into `*bytes`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `bytes` is NULL.
///
/// # Safety
/// `net` NULL or a live net; `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_prepared_size(net: *const mv_net, bytes: *mut usize) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contracts.
        let net = unsafe { net_ref(net)? };
        let len = net.plan.prepared_len() * std::mem::size_of::<f32>();
        // SAFETY: forwarded contract.
        unsafe { put(bytes, len) }
    })
}

/// Number of graph inputs into `*count` (the order of `mv_net_forward`'s `inputs`).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `count` is NULL.
///
/// # Safety
/// `net` NULL or a live net; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_input_count(net: *const mv_net, count: *mut usize) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contracts.
        unsafe { put(count, net_ref(net)?.model.graph().inputs.len()) }
    })
}

/// Number of graph outputs into `*count` (the order of `mv_net_forward`'s `outputs`).
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `count` is NULL.
///
/// # Safety
/// `net` NULL or a live net; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn mv_net_output_count(net: *const mv_net, count: *mut usize) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contracts.
        unsafe { put(count, net_ref(net)?.model.graph().outputs.len()) }
    })
}

/// Shape of tensor `id` as `[n, c, h, w]`.
fn dims_of(net: &mv_net, id: u32) -> [u32; 4] {
    // Validated at create: every graph input and output is a tensor.
    let t = net.model.graph().tensors[id as usize];
    [t.n, t.c, t.h, t.w]
}

/// Element count of tensor `id` (validated at create: it does not overflow).
fn elements_of(net: &mv_net, id: u32) -> usize {
    dims_of(net, id).iter().map(|&d| d as usize).product()
}

/// Writes the shape of tensor `ids(graph)[k]` into `dims[0..4]` (the body of
/// `mv_net_input_shape` / `mv_net_output_shape`).
///
/// # Safety
/// `net` NULL or a live net; `dims` NULL or writable for 4 values.
unsafe fn put_shape(
    net: *const mv_net,
    k: usize,
    dims: *mut u32,
    ids: for<'g> fn(&'g Graph<'g>) -> &'g [u32],
) -> mv_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let net = unsafe { net_ref(net)? };
        non_null(dims)?;
        let &id = ids(net.model.graph())
            .get(k)
            .ok_or(MV_STATUS_OUT_OF_BOUNDS)?;
        // SAFETY: dims is non-null and writable for 4 values (the caller's contract).
        unsafe { put(dims.cast::<[u32; 4]>(), dims_of(net, id)) }
    })
}

/// The shape of input `k` (NCHW: batch, channels, height, width; each ≥ 1) into `dims[0..4]`;
/// its element count, the product, is what `mv_net_forward` expects for that input.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `dims` is NULL; `MV_STATUS_OUT_OF_BOUNDS` if
/// `k` is not below `mv_net_input_count`.
///
/// # Safety
/// `net` NULL or a live net; `dims` NULL or writable for 4 values.
#[no_mangle]
pub unsafe extern "C" fn mv_net_input_shape(
    net: *const mv_net,
    k: usize,
    dims: *mut u32,
) -> mv_status {
    // SAFETY: forwarded contract.
    unsafe { put_shape(net, k, dims, |g| g.inputs) }
}

/// The shape of output `k` into `dims[0..4]`, as `mv_net_input_shape`.
///
/// Errors: `MV_STATUS_NULL_POINTER` if `net` or `dims` is NULL; `MV_STATUS_OUT_OF_BOUNDS` if
/// `k` is not below `mv_net_output_count`.
///
/// # Safety
/// `net` NULL or a live net; `dims` NULL or writable for 4 values.
#[no_mangle]
pub unsafe extern "C" fn mv_net_output_shape(
    net: *const mv_net,
    k: usize,
    dims: *mut u32,
) -> mv_status {
    // SAFETY: forwarded contract.
    unsafe { put_shape(net, k, dims, |g| g.outputs) }
}

/// The name of input (`output = false`) or output `k`, or NULL.
///
/// # Safety
/// `net` NULL or a live net.
unsafe fn name_ptr(net: *const mv_net, k: usize, output: bool) -> *const c_char {
    guard_value(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        let Ok(net) = (unsafe { net_ref(net) }) else {
            return std::ptr::null();
        };
        let g = net.model.graph();
        let slot = if output {
            (k < g.outputs.len()).then(|| g.inputs.len() + k)
        } else {
            (k < g.inputs.len()).then_some(k)
        };
        slot.and_then(|s| net.names.get(s))
            .map_or(std::ptr::null(), |n| n.as_ptr())
    })
}

/// The name of input `k` as stored in the model (UTF-8, NUL-terminated; a name that contains a
/// NUL byte is cut there; may be empty), or NULL if `net` is NULL or `k` is not below
/// `mv_net_input_count`. The string belongs to the net: valid until `mv_net_destroy`, never
/// free it.
///
/// # Safety
/// `net` NULL or a live net.
#[no_mangle]
pub unsafe extern "C" fn mv_net_input_name(net: *const mv_net, k: usize) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { name_ptr(net, k, false) }
}

/// The name of output `k`, as `mv_net_input_name`; NULL if `net` is NULL or `k` is not below
/// `mv_net_output_count`.
///
/// # Safety
/// `net` NULL or a live net.
#[no_mangle]
pub unsafe extern "C" fn mv_net_output_name(net: *const mv_net, k: usize) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { name_ptr(net, k, true) }
}

/// The byte range of a caller buffer of `len` floats at `p`, checked: non-null, 4-byte
/// aligned, not wrapping the address space.
fn range_of(p: *const f32, len: usize) -> Result<(usize, usize), mv_status> {
    non_null(p)?;
    if !(p as usize).is_multiple_of(std::mem::align_of::<f32>()) {
        return Err(MV_STATUS_MISALIGNED);
    }
    let bytes = len.checked_mul(4).ok_or(MV_STATUS_OVERFLOW)?;
    let end = (p as usize).checked_add(bytes).ok_or(MV_STATUS_OVERFLOW)?;
    Ok((p as usize, end))
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Runs the network once: reads `input_count` input tensors (`inputs[k]` points to
/// `input_lens[k]` floats, packed NCHW, in the order and shapes of `mv_net_input_shape`) and
/// writes `output_count` output tensors (`outputs[k]` to `output_lens[k]` floats, shapes of
/// `mv_net_output_shape`). Every length must equal its tensor's element count exactly (the
/// product of its shape). Allocates nothing. Deterministic: the same inputs give bit-identical
/// outputs on every call.
///
/// Errors (all checked before anything is written; on error no output is touched):
/// `MV_STATUS_NULL_POINTER` if `net`, `inputs`, `input_lens`, `outputs`, `output_lens` or any
/// `inputs[k]` / `outputs[k]` is NULL; `MV_STATUS_INVALID_ARGUMENT` if `input_count` or
/// `output_count` differs from the net's; `MV_STATUS_SIZE_MISMATCH` if a length differs from its
/// tensor's element count; `MV_STATUS_MISALIGNED` if a buffer is not aligned for `float`;
/// `MV_STATUS_OVERFLOW` if a buffer wraps the address space; `MV_STATUS_OVERLAP` if an output
/// buffer overlaps another output or any input.
///
/// # Safety
/// `net` NULL or a live net used by no other thread now; `inputs` / `input_lens` NULL or
/// readable for `input_count` entries, `outputs` / `output_lens` likewise for `output_count`;
/// each `inputs[k]` readable and each `outputs[k]` writable for its length in floats.
#[no_mangle]
pub unsafe extern "C" fn mv_net_forward(
    net: *mut mv_net,
    inputs: *const *const f32,
    input_lens: *const usize,
    input_count: usize,
    outputs: *const *mut f32,
    output_lens: *const usize,
    output_count: usize,
) -> mv_status {
    guard(|| {
        non_null(net)?;
        non_null(inputs)?;
        non_null(input_lens)?;
        non_null(outputs)?;
        non_null(output_lens)?;
        // SAFETY: non-null, live and not shared (the caller's contract).
        let net = unsafe { &mut *net };
        let graph = *net.model.graph();
        if input_count != graph.inputs.len() || output_count != graph.outputs.len() {
            return Err(MV_STATUS_INVALID_ARGUMENT);
        }
        // SAFETY: readable for their counts, which equal the net's (checked above).
        let (xs, xl, ys, yl) = unsafe {
            (
                std::slice::from_raw_parts(inputs, input_count),
                std::slice::from_raw_parts(input_lens, input_count),
                std::slice::from_raw_parts(outputs, output_count),
                std::slice::from_raw_parts(output_lens, output_count),
            )
        };
        for &p in xs {
            non_null(p)?;
        }
        for &p in ys {
            non_null(p)?;
        }
        for (&len, &t) in xl
            .iter()
            .zip(graph.inputs)
            .chain(yl.iter().zip(graph.outputs))
        {
            if len != elements_of(net, t) {
                return Err(MV_STATUS_SIZE_MISMATCH);
            }
        }
        for (&p, &len) in xs.iter().zip(xl) {
            range_of(p, len)?;
        }
        for (j, (&p, &len)) in ys.iter().zip(yl).enumerate() {
            let r = range_of(p, len)?;
            let clash = xs.iter().zip(xl).map(|(&q, &l)| range_of(q, l));
            let earlier = ys[..j].iter().zip(yl).map(|(&q, &l)| range_of(q, l));
            for other in clash.chain(earlier) {
                if overlap(r, other?) {
                    return Err(MV_STATUS_OVERLAP);
                }
            }
        }
        for (v, (&p, &len)) in net.input_views.iter_mut().zip(xs.iter().zip(xl)) {
            // SAFETY: readable for len floats, aligned, not written during the call (no output
            // overlaps it); the view is cleared before returning.
            *v = unsafe { std::slice::from_raw_parts(p, len) };
        }
        for (v, (&p, &len)) in net.output_views.iter_mut().zip(ys.iter().zip(yl)) {
            // SAFETY: writable for len floats, aligned, disjoint from every other buffer of the
            // call; the view is cleared before returning.
            *v = unsafe { std::slice::from_raw_parts_mut(p, len) };
        }
        // SAFETY: the arena and scratch are the net's, borrowed only here (one call at a time).
        let (arena, scratch) = unsafe { (net.arena.get_mut(), net.scratch.get_mut()) };
        // From a page boundary (`page_aligned`), as allocated.
        let (arena, scratch) = (
            page_aligned(arena, net.plan.arena_len()).expect("allocated with the slack"),
            page_aligned(scratch, net.plan.scratch_len()).expect("allocated with the slack"),
        );
        // SAFETY: written only at create.
        let prepared = unsafe { net.prepared.get() };
        let prepared = page_aligned_ref(prepared, net.plan.prepared_len()).expect("with slack");
        let result = forward_prepared(
            &graph,
            &net.plan,
            prepared,
            &net.input_views,
            &mut net.output_views,
            arena,
            scratch,
        );
        net.input_views.fill(&[]);
        for v in &mut net.output_views {
            *v = <&mut [f32]>::default();
        }
        result.map_err(mv_status::from)
    })
}
