//! One heap block that a core tracker lives in for the adapter's whole life: the core trackers
//! borrow their workspace (`Tld<'a>`, `Kcf<'a>`…), so an owning adapter is self-referential.
//! The block is held as a raw pointer from `Box::into_raw`, lent to the tracker as
//! `&'static mut [u8]`, and freed after the tracker in `drop`. This module holds the crate's
//! only `unsafe`.
#![allow(unsafe_code)]

use anyhow::{anyhow, Context, Result};

/// A value (a core tracker) and the zeroed heap block it borrows.
///
/// Invariant, kept by this crate (the type is crate-private): the value is only reached through
/// [`OwnedWorkspace::get`] and never moved out or swapped with
/// another instance's value, so it never outlives its block.
pub(crate) struct OwnedWorkspace<T> {
    /// `Some` until `drop`, which drops it before the block.
    value: Option<T>,
    /// From `Box::into_raw`; freed in `drop`.
    block: *mut [u8],
}

impl<T> OwnedWorkspace<T> {
    /// Allocates `len` zeroed bytes (fallibly) and builds the value on them with `make`.
    /// `what` names the tracker and frame size in errors.
    pub(crate) fn new(
        len: usize,
        what: &str,
        make: impl FnOnce(&'static mut [u8]) -> mvision_core::Result<T>,
    ) -> Result<Self> {
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(len)
            .with_context(|| format!("{what}: workspace of {len} bytes"))?;
        bytes.resize(len, 0u8);
        let block = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: `block` comes from `Box::into_raw` and is freed only in `drop` (or below, on
        // failure), after the value borrowing it is gone; nothing else reaches the block.
        let slice: &'static mut [u8] = unsafe { &mut *block };
        match make(slice) {
            Ok(value) => Ok(Self {
                value: Some(value),
                block,
            }),
            Err(e) => {
                // SAFETY: as above; the failed constructor kept no borrow.
                drop(unsafe { Box::from_raw(block) });
                Err(anyhow!("{what}: {e}"))
            }
        }
    }

    /// The value.
    pub(crate) fn get(&mut self) -> &mut T {
        self.value.as_mut().expect("the value exists until drop")
    }
}

impl<T> Drop for OwnedWorkspace<T> {
    fn drop(&mut self) {
        // The value (the borrow of the block) ends here, before the block is freed.
        self.value = None;
        // SAFETY: from `Box::into_raw` in `new`; the only borrow (the value) is gone.
        drop(unsafe { Box::from_raw(self.block) });
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OwnedWorkspace<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}
