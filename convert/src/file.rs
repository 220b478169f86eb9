//! [`ModelFile`]: a `.mvnn` file's bytes held in a 16-byte aligned buffer, as
//! [`Model::parse`] needs them (4-byte alignment at least; 16 lets the weights be read with
//! vector loads). On Linux the buffer's whole 2 MiB pages are asked to be transparent huge
//! pages before the bytes are copied in: a fully connected layer streams its weights once per
//! run, and with 4 KiB pages AlexNet's first one (151 MB) read them 4–15 % slower
//! (BENCHMARKS.md, branch `nn-alex`).

use std::path::Path;

use mvision_core::nn::model::Model;

use crate::ConvertError;

/// An owned copy of a model file in 16-byte aligned memory.
#[derive(Clone, Debug, Default)]
pub struct ModelFile {
    words: Vec<u128>,
    len: usize,
}

impl ModelFile {
    /// Copies `bytes` (a whole model file) into an aligned buffer.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut words = vec![0u128; bytes.len().div_ceil(16)];
        advise_huge_pages(&mut words);
        bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self {
            words,
            len: bytes.len(),
        }
    }

    /// Reads the file at `path`.
    ///
    /// # Errors
    /// [`ConvertError::Io`] if it cannot be read.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, ConvertError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| ConvertError::Io(format!("cannot read {}: {e}", path.display())))?;
        Ok(Self::from_bytes(&bytes))
    }

    /// The file's bytes (16-byte aligned).
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u128, u8>(&self.words)[..self.len]
    }

    /// The model, viewed in place and fully validated ([`Model::parse`]).
    ///
    /// # Errors
    /// Those of [`Model::parse`] (a truncated or corrupt file, another format version…).
    pub fn model(&self) -> Result<Model<'_>, mvision_core::Error> {
        Model::parse(self.bytes())
    }
}

/// Bytes of a transparent huge page on x86-64 and AArch64 Linux.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The whole [`HUGE_PAGE_BYTES`]-aligned pages inside the `len` bytes at address `addr`, as
/// `(first address, bytes)`; `None` when there is no whole one.
pub fn huge_page_span(addr: usize, len: usize) -> Option<(usize, usize)> {
    let start = addr.checked_next_multiple_of(HUGE_PAGE_BYTES)?;
    let end = addr.checked_add(len)? / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    (end > start).then(|| (start, end - start))
}

/// Asks Linux to back the whole huge pages of `buf` ([`huge_page_span`]) with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)`, which the kernel's `madvise` and `always` THP modes honour)
/// before `buf` is first written. A hint: contents never change, and a refusal is ignored.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages(buf: &mut [u128]) {
    if let Some((start, len)) = huge_page_span(buf.as_ptr() as usize, size_of_val(buf)) {
        // SAFETY: `start .. start + len` lies inside `buf`, which this function borrows
        // mutably; MADV_HUGEPAGE changes how its pages are backed, never their contents.
        unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
}

/// Not Linux: nothing to ask.
#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buf: &mut [u128]) {}
