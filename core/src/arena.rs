//! A bump allocator over one caller-provided byte buffer: how stateful objects (the TLD tracker)
//! carve their typed working arrays out of a single workspace without allocating or `unsafe`.
//!
//! Sizing and carving run the same sequence of `take` calls: first on an [`ArenaLen`] to learn
//! the byte count, then on an [`Arena`] over the caller's buffer. Every slice starts on a
//! [`ARENA_ALIGN`]-byte boundary relative to the first aligned byte of the buffer, so a buffer
//! of `ArenaLen::bytes()` bytes always suffices whatever its own alignment.

use crate::error::{Error, Result};
use bytemuck::Pod;

/// Alignment of every slice handed out, in bytes (enough for `f64`/`u64` and 16-byte SIMD).
pub const ARENA_ALIGN: usize = 16;

fn round_up(n: usize) -> Result<usize> {
    n.checked_add(ARENA_ALIGN - 1)
        .map(|v| v & !(ARENA_ALIGN - 1))
        .ok_or(Error::Overflow)
}

/// Counts the bytes a sequence of [`Arena::take`] calls will need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArenaLen {
    bytes: usize,
}

impl ArenaLen {
    /// An empty count.
    pub const fn new() -> Self {
        Self { bytes: 0 }
    }

    /// Adds room for `n` elements of `T`.
    ///
    /// Errors: [`Error::Overflow`] if the total exceeds `usize`.
    pub fn add<T: Pod>(&mut self, n: usize) -> Result<()> {
        let len = n
            .checked_mul(core::mem::size_of::<T>())
            .ok_or(Error::Overflow)?;
        self.bytes = self
            .bytes
            .checked_add(round_up(len)?)
            .ok_or(Error::Overflow)?;
        Ok(())
    }

    /// Bytes a caller buffer must have so that the same takes succeed on any alignment: the
    /// rounded sum plus `ARENA_ALIGN − 1` bytes of alignment slack.
    pub fn bytes(&self) -> usize {
        self.bytes.saturating_add(ARENA_ALIGN - 1)
    }
}

/// Hands out zero-initialised typed slices from a caller's byte buffer, front to back.
#[derive(Debug)]
pub struct Arena<'a> {
    rest: &'a mut [u8],
}

impl<'a> Arena<'a> {
    /// Starts an arena at the first [`ARENA_ALIGN`]-aligned byte of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        let skip = buf.as_ptr().align_offset(ARENA_ALIGN).min(buf.len());
        let (_, rest) = buf.split_at_mut(skip);
        Self { rest }
    }

    /// Bytes still available (before alignment of the next take).
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Takes `n` zeroed elements of `T`.
    ///
    /// Errors: [`Error::BufferTooSmall`] when the buffer is exhausted; [`Error::Overflow`] when
    /// the byte count overflows.
    pub fn take<T: Pod>(&mut self, n: usize) -> Result<&'a mut [T]> {
        let len = n
            .checked_mul(core::mem::size_of::<T>())
            .ok_or(Error::Overflow)?;
        let padded = round_up(len)?;
        if padded > self.rest.len() {
            return Err(Error::BufferTooSmall);
        }
        let rest = core::mem::take(&mut self.rest);
        let (head, tail) = rest.split_at_mut(padded);
        self.rest = tail;
        let bytes = &mut head[..len];
        bytes.fill(0);
        // Every take starts on an ARENA_ALIGN boundary and ARENA_ALIGN ≥ align_of::<T>() for
        // the primitive types used here; a larger alignment is reported, never a panic.
        bytemuck::try_cast_slice_mut(bytes).map_err(|_| Error::InvalidArgument)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_matches_carving_on_any_offset() {
        let mut len = ArenaLen::new();
        len.add::<u8>(3).unwrap();
        len.add::<f32>(5).unwrap();
        len.add::<u64>(1).unwrap();
        len.add::<u16>(0).unwrap();
        let mut backing = [0u8; 256];
        for off in 0..16 {
            let buf = &mut backing[off..off + len.bytes()];
            let mut a = Arena::new(buf);
            let b = a.take::<u8>(3).unwrap();
            b[2] = 7;
            let f = a.take::<f32>(5).unwrap();
            f[4] = 1.5;
            assert_eq!(a.take::<u64>(1).unwrap().len(), 1);
            assert!(a.take::<u16>(0).unwrap().is_empty());
        }
        let mut short = [0u8; 40];
        let mut a = Arena::new(&mut short[..]);
        assert_eq!(a.take::<u64>(8).unwrap_err(), Error::BufferTooSmall);
        assert_eq!(a.take::<u8>(usize::MAX).unwrap_err(), Error::Overflow);
    }
}
