//! The `.mvnn` model file: a [`Graph`] as one flat, versioned, little-endian byte string that
//! [`Model::parse`] views in place — no copy, no allocation — so a model can be run straight
//! from flash or from a memory-mapped file. [`encode`] writes one into a caller buffer of
//! [`encoded_len`] bytes (the std-side converter, `mvision convert`, produces them from ONNX).
//!
//! # Layout (version 1)
//! All integers are little-endian `u32`, floats IEEE-754 `f32`. The file starts with an
//! 80-byte [`Header`]: magic `"MVNN"`, version, header length, file length, a CRC-32 of the
//! whole file, flags (0), then seven [`Section`]s `(offset, count)` in this order and placed in
//! the file in this order, each at an offset that is a multiple of [`ALIGN`] (16) bytes, with
//! zero bytes between them:
//!
//! | section       | items                                    | item bytes |
//! |---------------|------------------------------------------|------------|
//! | `tensors`     | [`TensorDesc`] (NCHW)                     | 16         |
//! | `nodes`       | [`Node`] (topological order)              | 128        |
//! | `inputs`      | tensor id of each graph input             | 4          |
//! | `outputs`     | tensor id of each graph output            | 4          |
//! | `name_ranges` | [`WeightRange`] `(offset, len)` into `name_text`, one per input then per output | 8 |
//! | `name_text`   | UTF-8 bytes of the names                  | 1          |
//! | `weights`     | `f32` referenced by the nodes' [`WeightRange`]s | 4    |
//!
//! The CRC-32 (IEEE 802.3, as zlib's `crc32`) covers bytes `0..file_len` with the checksum
//! field taken as zero, so any single-bit corruption anywhere is detected. Bytes after
//! `file_len` (padding of a flash partition, say) are ignored.
//!
//! Placed at a 16-byte aligned address, every section is 16-byte aligned (weights can be read
//! with vector loads); [`Model::parse`] itself requires 4-byte alignment.

use super::graph::{Graph, Node, TensorDesc, WeightRange};
use crate::error::{Error, Result};
use bytemuck::{Pod, Zeroable};

/// The first four bytes of every model file, `"MVNN"`, as a little-endian `u32`.
pub const MAGIC: u32 = u32::from_le_bytes(*b"MVNN");
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Alignment of every section's offset, in bytes.
pub const ALIGN: usize = 16;
/// Size of [`Header`] in bytes.
pub const HEADER_LEN: usize = core::mem::size_of::<Header>();

/// Where one section lies: byte `offset` from the start of the file and `count` items.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Section {
    /// Byte offset from the start of the file (a multiple of [`ALIGN`]).
    pub offset: u32,
    /// Number of items (bytes for `name_text`).
    pub count: u32,
}

/// The fixed-size start of a model file (80 bytes, see the module docs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: u32,
    /// [`VERSION`].
    pub version: u32,
    /// [`HEADER_LEN`].
    pub header_len: u32,
    /// Length of the file in bytes.
    pub file_len: u32,
    /// CRC-32 of bytes `0..file_len` with this field read as zero.
    pub checksum: u32,
    /// Reserved, 0.
    pub flags: u32,
    /// [`TensorDesc`] items.
    pub tensors: Section,
    /// [`Node`] items.
    pub nodes: Section,
    /// Graph input tensor ids (`u32`).
    pub inputs: Section,
    /// Graph output tensor ids (`u32`).
    pub outputs: Section,
    /// One `(offset, len)` [`WeightRange`] into `name_text` per graph input, then per output.
    pub name_ranges: Section,
    /// UTF-8 name bytes.
    pub name_text: Section,
    /// `f32` weights.
    pub weights: Section,
}

/// Byte offset of [`Header::checksum`].
const CHECKSUM_AT: usize = 16;

/// CRC-32 lookup table (reflected polynomial `0xEDB88320`).
const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// Continues a CRC-32 (pre/post-inverted state `crc`) over `bytes`.
fn crc_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c = CRC_TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// The file's checksum: CRC-32 of `file` with the checksum field read as zero.
fn file_crc(file: &[u8]) -> u32 {
    let crc = crc_update(0, &file[..CHECKSUM_AT]);
    let crc = crc_update(crc, &[0; 4]);
    crc_update(crc, &file[CHECKSUM_AT + 4..])
}

/// Item sizes of the seven sections, in header order.
const ITEM: [usize; 7] = [
    core::mem::size_of::<TensorDesc>(),
    core::mem::size_of::<Node>(),
    4,
    4,
    core::mem::size_of::<WeightRange>(),
    1,
    4,
];

/// Rounds `x` up to a multiple of [`ALIGN`].
fn align_up(x: usize) -> Result<usize> {
    x.checked_add(ALIGN - 1)
        .map(|v| v & !(ALIGN - 1))
        .ok_or(Error::Overflow)
}

/// Section table and file length of a model with the given item counts.
fn layout(counts: [usize; 7]) -> Result<([Section; 7], usize)> {
    let mut at = HEADER_LEN;
    let mut sections = [Section::default(); 7];
    for ((s, &n), &item) in sections.iter_mut().zip(&counts).zip(&ITEM) {
        at = align_up(at)?;
        let len = n.checked_mul(item).ok_or(Error::Overflow)?;
        *s = Section {
            offset: u32::try_from(at).map_err(|_| Error::Overflow)?,
            count: u32::try_from(n).map_err(|_| Error::Overflow)?,
        };
        at = at.checked_add(len).ok_or(Error::Overflow)?;
    }
    u32::try_from(at).map_err(|_| Error::Overflow)?;
    Ok((sections, at))
}

/// Checks the names and returns the section counts of `graph` with them.
fn counts(graph: &Graph<'_>, input_names: &[&str], output_names: &[&str]) -> Result<[usize; 7]> {
    if input_names.len() != graph.inputs.len() || output_names.len() != graph.outputs.len() {
        return Err(Error::InvalidArgument);
    }
    let mut text = 0usize;
    for n in input_names.iter().chain(output_names) {
        text = text.checked_add(n.len()).ok_or(Error::Overflow)?;
    }
    Ok([
        graph.tensors.len(),
        graph.nodes.len(),
        graph.inputs.len(),
        graph.outputs.len(),
        input_names.len() + output_names.len(),
        text,
        graph.weights.len(),
    ])
}

/// Bytes of the model file [`encode`] writes for `graph` with these input and output names
/// (one per [`Graph::inputs`] / [`Graph::outputs`] entry, any UTF-8, may be empty).
///
/// # Errors
/// [`Error::InvalidArgument`] if a name list's length differs from the graph's inputs or
/// outputs; [`Error::Overflow`] if the file would exceed 4 GiB.
pub fn encoded_len(
    graph: &Graph<'_>,
    input_names: &[&str],
    output_names: &[&str],
) -> Result<usize> {
    Ok(layout(counts(graph, input_names, output_names)?)?.1)
}

/// Writes `graph` with its input and output names as a model file into `out` (at least
/// [`encoded_len`] bytes; bytes past the file are untouched) and returns the file's length.
/// The graph is validated first, so every file written parses.
///
/// # Errors
/// Those of [`Graph::validate`] and [`encoded_len`]; [`Error::BufferTooSmall`] if `out` is
/// too short. Nothing is written on error.
pub fn encode(
    graph: &Graph<'_>,
    input_names: &[&str],
    output_names: &[&str],
    out: &mut [u8],
) -> Result<usize> {
    graph.validate()?;
    let (s, len) = layout(counts(graph, input_names, output_names)?)?;
    let file = out.get_mut(..len).ok_or(Error::BufferTooSmall)?;
    file.fill(0);
    let header = Header {
        magic: MAGIC,
        version: VERSION,
        header_len: HEADER_LEN as u32,
        file_len: len as u32,
        checksum: 0,
        flags: 0,
        tensors: s[0],
        nodes: s[1],
        inputs: s[2],
        outputs: s[3],
        name_ranges: s[4],
        name_text: s[5],
        weights: s[6],
    };
    put_words(
        file,
        0,
        bytemuck::cast_slice(core::slice::from_ref(&header)),
    );
    put_words(file, s[0].offset, bytemuck::cast_slice(graph.tensors));
    put_words(file, s[1].offset, bytemuck::cast_slice(graph.nodes));
    put_words(file, s[2].offset, graph.inputs);
    put_words(file, s[3].offset, graph.outputs);
    let mut text_at = 0u32;
    let names = input_names.iter().chain(output_names);
    for (k, name) in names.enumerate() {
        // Lengths were summed without overflow in `counts`, and the file is < 4 GiB.
        let range = WeightRange::new(text_at, name.len() as u32);
        put_words(
            file,
            s[4].offset + 8 * k as u32,
            bytemuck::cast_slice(&[range]),
        );
        let at = (s[5].offset + text_at) as usize;
        file[at..at + name.len()].copy_from_slice(name.as_bytes());
        text_at += name.len() as u32;
    }
    let at = s[6].offset as usize;
    for (dst, w) in file[at..].chunks_exact_mut(4).zip(graph.weights) {
        dst.copy_from_slice(&w.to_bits().to_le_bytes());
    }
    let crc = file_crc(file);
    file[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&crc.to_le_bytes());
    Ok(len)
}

/// Writes `words` little-endian from byte `at` of `file` (in range by construction).
fn put_words(file: &mut [u8], at: u32, words: &[u32]) {
    let at = at as usize;
    for (dst, w) in file[at..at + 4 * words.len()]
        .chunks_exact_mut(4)
        .zip(words)
    {
        dst.copy_from_slice(&w.to_le_bytes());
    }
}

/// A validated model viewed in place in the bytes of a model file: its [`Graph`] borrows them.
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    graph: Graph<'a>,
    name_ranges: &'a [WeightRange],
    name_text: &'a [u8],
}

/// The items of section `s` of `file`, checked to lie after `*end` (then advanced), aligned
/// and inside the file.
fn section<'a, T: Pod>(
    file: &'a [u8],
    s: Section,
    item: usize,
    end: &mut usize,
) -> Result<&'a [T]> {
    let at = s.offset as usize;
    if !at.is_multiple_of(ALIGN) || at < *end {
        return Err(Error::Malformed);
    }
    let len = (s.count as usize)
        .checked_mul(item)
        .ok_or(Error::Malformed)?;
    let stop = at.checked_add(len).ok_or(Error::Malformed)?;
    let bytes = file.get(at..stop).ok_or(Error::Malformed)?;
    *end = stop;
    bytemuck::try_cast_slice(bytes).map_err(|_| Error::Misaligned)
}

impl<'a> Model<'a> {
    /// Views the model file at the start of `bytes` (4-byte aligned; bytes after its
    /// `file_len` are ignored) without copying, after checking everything: magic, version,
    /// lengths, the CRC-32, that the sections are in order, aligned and inside the file, the
    /// names (UTF-8, one per graph input and output), and the graph itself
    /// ([`Graph::validate`]) — so planning and running it can fail only on buffer sizes.
    /// Costs one pass over the bytes (the checksum) plus the graph check. Allocates nothing.
    ///
    /// # Errors
    /// [`Error::Misaligned`] if `bytes` is not 4-byte aligned; [`Error::UnsupportedVersion`]
    /// for another format version (or on a big-endian target); [`Error::Malformed`] for a
    /// wrong magic, a file shorter than its header says (truncated), a checksum mismatch,
    /// sections out of order, unaligned or outside the file, or bad names; those of
    /// [`Graph::validate`] for a well-formed file whose graph is inconsistent.
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        if !(bytes.as_ptr() as usize).is_multiple_of(4) {
            return Err(Error::Misaligned);
        }
        let head = bytes.get(..HEADER_LEN).ok_or(Error::Malformed)?;
        let header: Header = bytemuck::pod_read_unaligned(head);
        if header.magic != MAGIC {
            return Err(Error::Malformed);
        }
        if header.version != VERSION || cfg!(target_endian = "big") {
            return Err(Error::UnsupportedVersion);
        }
        if header.header_len as usize != HEADER_LEN || header.flags != 0 {
            return Err(Error::Malformed);
        }
        let file = bytes
            .get(..header.file_len as usize)
            .ok_or(Error::Malformed)?;
        if file_crc(file) != header.checksum {
            return Err(Error::Malformed);
        }
        let mut end = HEADER_LEN;
        let tensors = section(file, header.tensors, ITEM[0], &mut end)?;
        let nodes = section(file, header.nodes, ITEM[1], &mut end)?;
        let inputs = section(file, header.inputs, ITEM[2], &mut end)?;
        let outputs = section(file, header.outputs, ITEM[3], &mut end)?;
        let name_ranges: &[WeightRange] = section(file, header.name_ranges, ITEM[4], &mut end)?;
        let name_text: &[u8] = section(file, header.name_text, ITEM[5], &mut end)?;
        let weights = section(file, header.weights, ITEM[6], &mut end)?;
        if name_ranges.len() != inputs.len() + outputs.len() {
            return Err(Error::Malformed);
        }
        for r in name_ranges {
            name(name_text, r)?;
        }
        let graph = Graph {
            tensors,
            nodes,
            weights,
            inputs,
            outputs,
        };
        graph.validate()?;
        Ok(Self {
            graph,
            name_ranges,
            name_text,
        })
    }

    /// The network, borrowing the file's bytes.
    pub const fn graph(&self) -> &Graph<'a> {
        &self.graph
    }

    /// The name of graph input `k` (`None` if there is no input `k`).
    pub fn input_name(&self, k: usize) -> Option<&'a str> {
        (k < self.graph.inputs.len())
            .then(|| self.name(k))
            .flatten()
    }

    /// The name of graph output `k` (`None` if there is no output `k`).
    pub fn output_name(&self, k: usize) -> Option<&'a str> {
        (k < self.graph.outputs.len())
            .then(|| self.name(self.graph.inputs.len() + k))
            .flatten()
    }

    fn name(&self, k: usize) -> Option<&'a str> {
        name(self.name_text, self.name_ranges.get(k)?).ok()
    }
}

/// Name `r` of `text`, checked.
fn name<'a>(text: &'a [u8], r: &WeightRange) -> Result<&'a str> {
    let at = r.offset as usize;
    let bytes = at
        .checked_add(r.len as usize)
        .and_then(|end| text.get(at..end))
        .ok_or(Error::Malformed)?;
    core::str::from_utf8(bytes).map_err(|_| Error::Malformed)
}

/// Bytes of a transparent huge page on x86-64 and AArch64 Linux.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The whole [`HUGE_PAGE_BYTES`]-aligned pages inside the `len` bytes at address `addr`, as
/// `(first address, bytes)`; `None` when there is no whole one (or the range wraps).
pub fn huge_page_span(addr: usize, len: usize) -> Option<(usize, usize)> {
    let start = addr.checked_next_multiple_of(HUGE_PAGE_BYTES)?;
    let end = addr.checked_add(len)? / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    (end > start).then(|| (start, end - start))
}

/// Asks Linux to back the whole huge pages of `buf` ([`huge_page_span`]) with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)`, honoured in the kernel's `madvise` and `always` THP modes),
/// to be called before `buf` is first written: a model copy's fully connected layers stream
/// their weights once per run, and with 4 KiB pages AlexNet's first one (151 MB) read them
/// 4–15 % slower (BENCHMARKS.md, branch `nn-alex`). A hint: the contents never change, a
/// refusal is ignored, and elsewhere than Linux it does nothing.
#[cfg(feature = "std")]
pub fn advise_huge_pages(buf: &mut [u128]) {
    #[cfg(target_os = "linux")]
    if let Some((start, len)) = huge_page_span(buf.as_ptr() as usize, size_of_val(buf)) {
        // SAFETY: `start .. start + len` lies inside `buf`, which is borrowed mutably here;
        // MADV_HUGEPAGE changes how its pages are backed, never their contents.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE)
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_matches_zlib() {
        // zlib.crc32(b"123456789") == 0xCBF43926 (the standard check value).
        assert_eq!(crc_update(0, b"123456789"), 0xCBF4_3926);
        assert_eq!(crc_update(crc_update(0, b"1234"), b"56789"), 0xCBF4_3926);
    }

    #[test]
    fn header_is_80_bytes() {
        assert_eq!(HEADER_LEN, 80);
        assert_eq!(ITEM[1], 128);
    }
}
