//! The `.mvnn` model file (`nn::model`): encode → parse round trips (same graph, same forward
//! results, names), alignment, and that every damaged file is rejected with an error and never
//! a panic: each truncation, each single-bit flip (the CRC covers the header too), a wrong
//! magic or version, sections moved out of order, and a file whose checksum is right but whose
//! graph is inconsistent. Parsing and running allocate nothing.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use common::Rng;
use mvision_core::nn::activation::Activation;
use mvision_core::nn::conv::Conv2dShape;
use mvision_core::nn::graph::{Graph, Node, TensorDesc, WeightRange};
use mvision_core::nn::model::{encode, encoded_len, Header, Model, ALIGN, HEADER_LEN, VERSION};
use mvision_core::nn::plan::{forward, make_plan, plan_len, PlanSlot};
use mvision_core::nn::pool::Pool2dShape;
use mvision_core::Error;

/// conv 3×3 (PReLU) → max-pool 2 → flatten → fully connected → softmax, batch 2.
struct Net {
    tensors: Vec<TensorDesc>,
    nodes: Vec<Node>,
    weights: Vec<f32>,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

impl Net {
    fn new(rng: &mut Rng) -> Self {
        let (n, c, h, w, k) = (2, 3, 8, 8, 4);
        let mut weights = Vec::new();
        let mut take = |len: usize, lo: f32, hi: f32| {
            let r = WeightRange::new(weights.len() as u32, len as u32);
            weights.extend((0..len).map(|_| rng.f32_in(lo, hi)));
            r
        };
        let mut conv = Conv2dShape::new(n, c, h, w, k, 3, 3);
        conv.pad_top = 1;
        conv.pad_left = 1;
        conv.pad_bottom = 1;
        conv.pad_right = 1;
        let cw = take(k * c * 9, -0.5, 0.5);
        let cb = take(k, -0.1, 0.1);
        let slopes = take(k, 0.0, 0.3);
        let pool = Pool2dShape::new(n, k, h, w, 2, 2);
        let fw = take(10 * k * 16, -0.3, 0.3);
        let fb = take(10, -0.1, 0.1);
        let t = |n: usize, c: usize, h: usize, w: usize| {
            TensorDesc::new(n as u32, c as u32, h as u32, w as u32)
        };
        let tensors = vec![
            t(n, c, h, w),
            t(n, k, h, w),
            t(n, k, 4, 4),
            t(n, k * 16, 1, 1),
            t(n, 10, 1, 1),
            t(n, 10, 1, 1),
        ];
        let nodes = vec![
            Node::conv(0, 1, &conv, cw, cb, Activation::PRelu, slopes),
            Node::pool(1, 2, &pool, true),
            Node::flatten(2, 3, 1),
            Node::fully_connected(3, 4, fw, fb),
            Node::softmax(4, 5, 1),
        ];
        Self {
            tensors,
            nodes,
            weights,
            inputs: vec![0],
            outputs: vec![5, 2],
        }
    }

    fn graph(&self) -> Graph<'_> {
        Graph {
            tensors: &self.tensors,
            nodes: &self.nodes,
            weights: &self.weights,
            inputs: &self.inputs,
            outputs: &self.outputs,
        }
    }
}

const IN: [&str; 1] = ["image"];
const OUT: [&str; 2] = ["prob", "pooled·features"];

/// A 16-byte aligned copy of `bytes` (and its owner).
fn aligned(bytes: &[u8], shift: usize) -> (Vec<u128>, usize, usize) {
    let mut buf = vec![0u128; (bytes.len() + shift).div_ceil(16) + 1];
    let b: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
    b[shift..shift + bytes.len()].copy_from_slice(bytes);
    (buf, shift, bytes.len())
}

fn file(net: &Net) -> Vec<u8> {
    let g = net.graph();
    let len = encoded_len(&g, &IN, &OUT).unwrap();
    let mut out = vec![0xAAu8; len + 7];
    assert_eq!(encode(&g, &IN, &OUT, &mut out).unwrap(), len);
    assert!(
        out[len..].iter().all(|&b| b == 0xAA),
        "bytes past the file untouched"
    );
    out.truncate(len);
    out
}

fn parse(bytes: &[u8]) -> Result<(), Error> {
    let (buf, at, len) = aligned(bytes, 0);
    let b: &[u8] = bytemuck::cast_slice(&buf);
    Model::parse(&b[at..at + len]).map(|_| ())
}

/// Runs `g` on `x`; returns its two outputs.
fn run(g: &Graph<'_>, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut slots = vec![PlanSlot::EMPTY; plan_len(g)];
    let plan = make_plan(g, 1 << 20, &mut slots).unwrap();
    let mut arena = vec![0.0; plan.arena_len()];
    let mut scratch = vec![0.0; plan.scratch_len()];
    let (mut y0, mut y1) = (vec![0.0; 20], vec![0.0; 2 * 4 * 16]);
    forward(
        g,
        &plan,
        &[x],
        &mut [&mut y0, &mut y1],
        &mut arena,
        &mut scratch,
    )
    .unwrap();
    (y0, y1)
}

#[test]
fn round_trip_keeps_graph_names_and_results() {
    let mut rng = Rng::new(7);
    let net = Net::new(&mut rng);
    let bytes = file(&net);
    assert_eq!(&bytes[..4], b"MVNN");
    let (buf, at, len) = aligned(&bytes, 0);
    let b: &[u8] = bytemuck::cast_slice(&buf);
    let model = Model::parse(&b[at..at + len]).unwrap();
    let g = model.graph();
    assert_eq!(g.tensors, &net.tensors[..]);
    assert_eq!(g.nodes, &net.nodes[..]);
    assert_eq!(g.inputs, &net.inputs[..]);
    assert_eq!(g.outputs, &net.outputs[..]);
    assert_eq!(
        g.weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
        net.weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
    );
    // Zero-copy: the weights are the file's bytes.
    let wp = g.weights.as_ptr() as usize;
    assert!(wp >= b.as_ptr() as usize + at && wp < b.as_ptr() as usize + at + len);
    assert_eq!(
        wp % ALIGN,
        0,
        "weights are 16-byte aligned in an aligned file"
    );
    assert_eq!(model.input_name(0), Some("image"));
    assert_eq!(model.input_name(1), None);
    assert_eq!(model.output_name(0), Some("prob"));
    assert_eq!(model.output_name(1), Some("pooled·features"));
    assert_eq!(model.output_name(2), None);

    let x: Vec<f32> = (0..2 * 3 * 64).map(|_| rng.f32_in(-1.0, 1.0)).collect();
    let before = counting_alloc::heap_calls();
    let parsed = Model::parse(&b[at..at + len]).unwrap();
    let after = counting_alloc::heap_calls();
    assert_eq!(before, after, "parse allocates nothing");
    let (a0, a1) = run(parsed.graph(), &x);
    let (e0, e1) = run(&net.graph(), &x);
    assert_eq!(a0, e0);
    assert_eq!(a1, e1);
    // Trailing bytes (a flash partition's padding) are ignored.
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0xFF; 13]);
    parse(&padded).unwrap();
}

#[test]
fn encode_checks_names_graph_and_buffer() {
    let mut rng = Rng::new(8);
    let net = Net::new(&mut rng);
    let g = net.graph();
    let len = encoded_len(&g, &IN, &OUT).unwrap();
    assert_eq!(encoded_len(&g, &[], &OUT), Err(Error::InvalidArgument));
    assert_eq!(encoded_len(&g, &IN, &OUT[..1]), Err(Error::InvalidArgument));
    let mut out = vec![0x55u8; len - 1];
    assert_eq!(encode(&g, &IN, &OUT, &mut out), Err(Error::BufferTooSmall));
    assert!(out.iter().all(|&b| b == 0x55), "nothing written on error");
    let mut bad = Net::new(&mut rng);
    bad.nodes[3].output = 9;
    let mut out = vec![0u8; len];
    assert_eq!(
        encode(&bad.graph(), &IN, &OUT, &mut out),
        Err(Error::OutOfBounds)
    );
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = file(&Net::new(&mut Rng::new(9)));
    for cut in 0..bytes.len() {
        assert_eq!(
            parse(&bytes[..cut]),
            Err(Error::Malformed),
            "truncated to {cut} bytes"
        );
    }
}

#[test]
fn every_bit_flip_is_an_error() {
    let bytes = file(&Net::new(&mut Rng::new(10)));
    let mut copy = bytes.clone();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            copy[i] ^= 1 << bit;
            let r = parse(&copy);
            assert!(r.is_err(), "flip of bit {bit} of byte {i} was accepted");
            copy[i] ^= 1 << bit;
        }
    }
    parse(&copy).unwrap();
}

/// Rewrites the header of `bytes` with `edit` and fixes the checksum.
fn with_header(bytes: &[u8], edit: impl FnOnce(&mut Header)) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut h: Header = bytemuck::pod_read_unaligned(&out[..HEADER_LEN]);
    edit(&mut h);
    h.checksum = 0;
    out[..HEADER_LEN].copy_from_slice(bytemuck::bytes_of(&h));
    let crc = crc32(&out[..h.file_len.min(out.len() as u32) as usize]);
    out[16..20].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Bitwise CRC-32 (independent of the library's table).
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn structural_damage_with_a_valid_checksum_is_rejected() {
    let bytes = file(&Net::new(&mut Rng::new(11)));
    // Our fixed-up checksum is the library's: an untouched header still parses.
    parse(&with_header(&bytes, |_| {})).unwrap();
    let cases: Vec<(&str, Vec<u8>, Error)> = vec![
        (
            "magic",
            with_header(&bytes, |h| h.magic ^= 1),
            Error::Malformed,
        ),
        (
            "version",
            with_header(&bytes, |h| h.version = VERSION + 1),
            Error::UnsupportedVersion,
        ),
        (
            "flags",
            with_header(&bytes, |h| h.flags = 1),
            Error::Malformed,
        ),
        (
            "header_len",
            with_header(&bytes, |h| h.header_len = 96),
            Error::Malformed,
        ),
        (
            "file_len past end",
            with_header(&bytes, |h| h.file_len += 16),
            Error::Malformed,
        ),
        (
            "unaligned section",
            with_header(&bytes, |h| h.nodes.offset += 4),
            Error::Malformed,
        ),
        (
            "sections out of order",
            with_header(&bytes, |h| h.inputs.offset = h.tensors.offset),
            Error::Malformed,
        ),
        (
            "section past the end",
            with_header(&bytes, |h| h.weights.count += 1),
            Error::Malformed,
        ),
        (
            "huge count",
            with_header(&bytes, |h| h.nodes.count = u32::MAX),
            Error::Malformed,
        ),
        (
            "name count",
            with_header(&bytes, |h| h.name_ranges.count -= 1),
            Error::Malformed,
        ),
        (
            "fewer weights than the nodes use",
            with_header(&bytes, |h| h.weights.count -= 1),
            Error::OutOfBounds,
        ),
        (
            "a graph output dropped leaves a name",
            with_header(&bytes, |h| h.outputs.count -= 1),
            Error::Malformed,
        ),
    ];
    for (what, file, want) in cases {
        assert_eq!(parse(&file), Err(want), "{what}");
    }
    // A name that is not UTF-8.
    let h: Header = bytemuck::pod_read_unaligned(&bytes[..HEADER_LEN]);
    let mut bad = bytes.clone();
    bad[h.name_text.offset as usize] = 0xFF;
    assert_eq!(parse(&with_header(&bad, |_| {})), Err(Error::Malformed));
    // A node whose output shape is wrong: well-formed file, inconsistent graph.
    let mut bad = bytes.clone();
    let at = h.tensors.offset as usize + 16 * 4 + 4; // tensor 4's channel count
    bad[at] = 11;
    assert_eq!(parse(&with_header(&bad, |_| {})), Err(Error::SizeMismatch));
}

#[test]
fn misaligned_bytes_are_rejected() {
    let bytes = file(&Net::new(&mut Rng::new(12)));
    for shift in 1..4 {
        let (buf, at, len) = aligned(&bytes, shift);
        let b: &[u8] = bytemuck::cast_slice(&buf);
        assert_eq!(
            Model::parse(&b[at..at + len]).map(|_| ()),
            Err(Error::Misaligned)
        );
    }
    // 4-byte alignment is enough.
    let (buf, at, len) = aligned(&bytes, 4);
    let b: &[u8] = bytemuck::cast_slice(&buf);
    Model::parse(&b[at..at + len]).unwrap();
}

#[test]
fn random_garbage_never_panics() {
    let mut rng = Rng::new(13);
    let bytes = file(&Net::new(&mut rng));
    for round in 0..300 {
        let mut f = bytes.clone();
        let flips = 1 + round % 7;
        for _ in 0..flips {
            let i = (rng.next_u64() % f.len() as u64) as usize;
            f[i] = rng.next_u64() as u8;
        }
        // Fix the checksum half of the time, so the structural checks are reached.
        let f = if round % 2 == 0 {
            with_header(&f, |_| {})
        } else {
            f
        };
        let _ = parse(&f);
    }
}
