//! The handle-in-workspace scheme shared by the trackers' C handles (`mv_tld`, `mv_kcf`).
//!
//! A tracker's workspace holds everything, its handle included: the handle is written at the
//! first byte of the workspace aligned for it and the core tracker's arena follows it, so
//! [`total_bytes`] (handle + alignment slack + arena) works at any workspace alignment. In
//! [`create_in`] the workspace is the caller's and nothing is allocated; [`create`] makes the
//! same layout in one heap block, which the handle records ([`Block`]) so that [`destroy`]
//! knows whether to free it.

use crate::status::mv_status::{self, *};
use std::ffi::c_void;
use std::mem::{align_of, size_of, ManuallyDrop};
use std::ptr::NonNull;

/// The heap block [`create`] made (pointer and capacity), which holds the handle; `None` for a
/// handle in caller memory ([`create_in`]).
pub(crate) type Block = Option<(NonNull<u8>, usize)>;

/// A handle that lives in its workspace and knows which block, if any, to free.
pub(crate) trait Placed {
    /// The block [`destroy`] gives back after dropping the handle.
    fn block(&self) -> Block;
}

/// Workspace bytes for a handle `H` and a core arena of `core` bytes, alignment slack included.
pub(crate) fn total_bytes<H>(core: usize) -> Result<usize, mv_status> {
    core.checked_add(size_of::<H>() + align_of::<H>() - 1)
        .ok_or(MV_STATUS_OVERFLOW)
}

/// Builds a handle at the first aligned byte of `ws` with a zeroed `core`-byte arena after it.
///
/// # Safety
/// `ws` writable for `total_bytes::<H>(core)` bytes, not otherwise accessed while the handle
/// lives.
unsafe fn place<H>(
    ws: *mut u8,
    core: usize,
    block: Block,
    build: impl FnOnce(&'static mut [u8], Block) -> Result<H, mv_status>,
) -> Result<*mut H, mv_status> {
    let offset = (ws as usize).wrapping_neg() & (align_of::<H>() - 1);
    // SAFETY: offset + size_of::<H>() + core ≤ total_bytes::<H>(core), which the caller lends
    // for the handle's whole life. The arena bytes are zeroed before a slice is made over them
    // (the caller's memory may be uninitialised). `'static` is the caller's promise: the
    // workspace outlives the handle, which `destroy` ends.
    unsafe {
        let handle = ws.add(offset).cast::<H>();
        let arena = ws.add(offset + size_of::<H>());
        arena.write_bytes(0, core);
        let arena: &'static mut [u8] = std::slice::from_raw_parts_mut(arena, core);
        handle.write(build(arena, block)?);
        Ok(handle)
    }
}

/// A handle in the caller's `size` bytes at `workspace` (non-NULL, checked by the caller), for
/// a core arena of `core` bytes.
///
/// Errors: `MV_STATUS_BUFFER_TOO_SMALL` if `size` is below [`total_bytes`];
/// `MV_STATUS_OVERFLOW` for a range past the address space; those of `build`.
///
/// # Safety
/// `workspace` writable for `size` bytes and not used by anything else until [`destroy`].
pub(crate) unsafe fn create_in<H>(
    workspace: *mut c_void,
    size: usize,
    core: usize,
    build: impl FnOnce(&'static mut [u8], Block) -> Result<H, mv_status>,
) -> Result<*mut H, mv_status> {
    if size < total_bytes::<H>(core)? {
        return Err(MV_STATUS_BUFFER_TOO_SMALL);
    }
    if (workspace as usize).checked_add(size).is_none() {
        return Err(MV_STATUS_OVERFLOW);
    }
    // SAFETY: workspace is writable for size ≥ total bytes (the caller's contract).
    unsafe { place(workspace.cast(), core, None, build) }
}

/// A handle in one heap block of [`total_bytes`], which [`destroy`] frees.
///
/// Errors: `MV_STATUS_OUT_OF_MEMORY` if the allocation fails; those of `build` (the block is
/// freed then).
pub(crate) fn create<H>(
    core: usize,
    build: impl FnOnce(&'static mut [u8], Block) -> Result<H, mv_status>,
) -> Result<*mut H, mv_status> {
    let total = total_bytes::<H>(core)?;
    let mut block = Vec::<u8>::new();
    block
        .try_reserve_exact(total)
        .map_err(|_| MV_STATUS_OUT_OF_MEMORY)?;
    let mut block = ManuallyDrop::new(block);
    let (ptr, cap) = (block.as_mut_ptr(), block.capacity());
    let owned = NonNull::new(ptr).map(|p| (p, cap));
    // SAFETY: the block's spare capacity is writable for cap ≥ total bytes and is used by
    // nothing else; destroy gives it back.
    let placed = unsafe { place(ptr, core, owned, build) };
    if placed.is_err() {
        // SAFETY: reclaims the block made above, which nothing refers to.
        unsafe { ManuallyDrop::drop(&mut block) };
    }
    placed
}

/// Drops the handle in place, then frees its heap block if [`create`] made one. NULL does
/// nothing.
///
/// # Safety
/// `handle` NULL or made by [`create_in`] or [`create`] and not yet destroyed.
pub(crate) unsafe fn destroy<H: Placed>(handle: *mut H) {
    if handle.is_null() {
        return;
    }
    // SAFETY: the caller guarantees a live handle made by place(); it is dropped in place
    // first, then the block that holds it (create) is given back.
    unsafe {
        let block = (*handle).block();
        std::ptr::drop_in_place(handle);
        if let Some((ptr, cap)) = block {
            drop(Vec::from_raw_parts(ptr.as_ptr(), 0, cap));
        }
    }
}
