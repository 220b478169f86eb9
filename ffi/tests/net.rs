//! The `mv_net_*` C API: a tiny network built here with the core's graph builders, encoded as a
//! `.mvnn` file, loaded through the C functions (copied and borrowed) and run; results must be
//! bit-identical to the core's own `forward`. Then every error path: NULL pointers, unknown
//! flags, huge sizes, the file truncated at every length, every single-bit flip, garbage bytes,
//! a misaligned borrowed model, wrong counts and lengths, misaligned and overlapping buffers —
//! each with its status and with the outputs untouched. `mv_net_forward` allocates nothing.
//!
//! The same tiny model is committed as `cmake/examples/data/tiny.mvnn`, with its expected
//! outputs for a fixed input in `cmake/examples/data/tiny_expected.h`, for the C tests; both are
//! compared byte for byte here and rewritten with `MVISION_BLESS=1`.

#[path = "../../core/tests/common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use mvision::net::*;
use mvision::status::mv_status::{self, *};
use mvision_core::nn::activation::Activation;
use mvision_core::nn::conv::Conv2dShape;
use mvision_core::nn::elementwise::Broadcast;
use mvision_core::nn::graph::{Graph, Node, TensorDesc, WeightRange};
use mvision_core::nn::model::{encode, encoded_len};
use mvision_core::nn::plan::{forward, make_plan, plan_len, PlanSlot};
use mvision_core::nn::pool::Pool2dShape;
use mvision_core::rng::SplitMix64;
use std::ffi::{c_void, CStr};
use std::path::Path;
use std::ptr::{null, null_mut};

/// image (1×2×6×6) → conv 3×3 pad 1 → 3 channels, + bias input (per channel) → ReLU →
/// max-pool 2 → "pooled" (1×3×3×3) → flatten → fully connected 27 → 4 → softmax → "probs".
struct Tiny {
    tensors: Vec<TensorDesc>,
    nodes: Vec<Node>,
    weights: Vec<f32>,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

const INPUT_NAMES: [&str; 2] = ["image", "bias"];
const OUTPUT_NAMES: [&str; 2] = ["probs", "pooled"];

impl Tiny {
    fn new() -> Self {
        let mut rng = SplitMix64(0x7469_6e79_6e65_7401);
        let mut weights = Vec::new();
        let mut take = |len: usize| {
            let r = WeightRange::new(weights.len() as u32, len as u32);
            // Multiples of 2^-24 in [-0.5, 0.5): exact in f32 and in the C header.
            weights.extend((0..len).map(|_| (rng.next_u64() >> 40) as f32 / 16_777_216.0 - 0.5));
            r
        };
        let mut conv = Conv2dShape::new(1, 2, 6, 6, 3, 3, 3);
        conv.pad_top = 1;
        conv.pad_left = 1;
        conv.pad_bottom = 1;
        conv.pad_right = 1;
        let cw = take(3 * 2 * 9);
        let cb = take(3);
        let fw = take(4 * 27);
        let fb = take(4);
        let pool = Pool2dShape::new(1, 3, 6, 6, 2, 2);
        let none = WeightRange::default();
        let tensors = vec![
            TensorDesc::new(1, 2, 6, 6),  // 0 image
            TensorDesc::new(1, 3, 1, 1),  // 1 bias
            TensorDesc::new(1, 3, 6, 6),  // 2 conv
            TensorDesc::new(1, 3, 6, 6),  // 3 + bias
            TensorDesc::new(1, 3, 6, 6),  // 4 relu
            TensorDesc::new(1, 3, 3, 3),  // 5 pooled
            TensorDesc::new(1, 27, 1, 1), // 6 flat
            TensorDesc::new(1, 4, 1, 1),  // 7 logits
            TensorDesc::new(1, 4, 1, 1),  // 8 probs
        ];
        let nodes = vec![
            Node::conv(0, 2, &conv, cw, cb, Activation::None, none),
            Node::add(2, 1, 3, Broadcast::PerChannel),
            Node::activation(3, 4, Activation::Relu, none),
            Node::pool(4, 5, &pool, true),
            Node::flatten(5, 6, 1),
            Node::fully_connected(6, 7, fw, fb),
            Node::softmax(7, 8, 1),
        ];
        Self {
            tensors,
            nodes,
            weights,
            inputs: vec![0, 1],
            outputs: vec![8, 5],
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

    fn encode_with(&self, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
        let g = self.graph();
        let mut file = vec![0u8; encoded_len(&g, inputs, outputs).unwrap()];
        encode(&g, inputs, outputs, &mut file).unwrap();
        file
    }

    fn file(&self) -> Vec<u8> {
        self.encode_with(&INPUT_NAMES, &OUTPUT_NAMES)
    }
}

/// The fixed inputs of the C tests (the same formulas are in `cmake/examples/test_net.c`).
fn fixed_inputs() -> (Vec<f32>, Vec<f32>) {
    let image = (0..72u32)
        .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
        .collect();
    let bias = (0..3).map(|c| 0.25 * c as f32 - 0.25).collect();
    (image, bias)
}

/// The core's own outputs for `inputs` under `budget`: the reference of every comparison.
fn core_forward(t: &Tiny, budget: usize, inputs: &[&[f32]]) -> Vec<Vec<f32>> {
    let g = t.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, budget, &mut slots).unwrap();
    let mut arena = vec![0.0; plan.arena_len()];
    let mut scratch = vec![0.0; plan.scratch_len()];
    let mut outs = vec![vec![0.0f32; 4], vec![0.0f32; 27]];
    let mut views: Vec<&mut [f32]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
    forward(&g, &plan, inputs, &mut views, &mut arena, &mut scratch).unwrap();
    outs
}

/// Bytes in a 16-byte aligned buffer, starting `shift` bytes in (to test misalignment).
struct Aligned {
    words: Vec<u128>,
    shift: usize,
    len: usize,
}

impl Aligned {
    fn new(bytes: &[u8], shift: usize) -> Self {
        let mut words = vec![0u128; (bytes.len() + shift).div_ceil(16) + 1];
        let raw = words.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer holds at least len + shift bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), raw.add(shift), bytes.len()) };
        Self {
            words,
            shift,
            len: bytes.len(),
        }
    }

    fn ptr(&self) -> *const c_void {
        // SAFETY: within the buffer.
        unsafe { self.words.as_ptr().cast::<u8>().add(self.shift).cast() }
    }
}

const SENTINEL: *mut mv_net = 0x5a5a as *mut mv_net;

/// `mv_net_create` that must fail with `want` and leave `*out` untouched.
fn create_fails(data: *const c_void, size: usize, flags: u32, want: mv_status) {
    let mut out = SENTINEL;
    // SAFETY: data readable for size bytes (or NULL) as each caller arranges.
    let s = unsafe { mv_net_create(data, size, flags, MV_NET_DEFAULT_WORKSPACE_BYTES, &mut out) };
    assert_eq!(s, want, "size {size}, flags {flags}");
    assert_eq!(out, SENTINEL, "out written on error");
}

/// Creates a net from `bytes` (copied), asserting success.
fn create(bytes: &[u8], budget: usize) -> *mut mv_net {
    let mut net = null_mut();
    // SAFETY: bytes readable; net writable.
    let s = unsafe { mv_net_create(bytes.as_ptr().cast(), bytes.len(), 0, budget, &mut net) };
    assert_eq!(s, MV_STATUS_OK);
    assert!(!net.is_null());
    net
}

/// Runs `net` on `inputs` into fresh outputs of the tiny net's sizes.
fn run(net: *mut mv_net, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, mv_status> {
    let mut outs = vec![vec![f32::NAN; 4], vec![f32::NAN; 27]];
    let xp: Vec<*const f32> = inputs.iter().map(|x| x.as_ptr()).collect();
    let xl: Vec<usize> = inputs.iter().map(|x| x.len()).collect();
    let yp: Vec<*mut f32> = outs.iter_mut().map(|y| y.as_mut_ptr()).collect();
    let yl: Vec<usize> = outs.iter().map(|y| y.len()).collect();
    // SAFETY: every pointer covers its length.
    let s = unsafe {
        mv_net_forward(
            net,
            xp.as_ptr(),
            xl.as_ptr(),
            2,
            yp.as_ptr(),
            yl.as_ptr(),
            2,
        )
    };
    if s == MV_STATUS_OK {
        Ok(outs)
    } else {
        Err(s)
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// `expected` as the committed C header of expected outputs.
fn expected_header(image: &[f32], bias: &[f32], outs: &[Vec<f32>]) -> String {
    let mut h = String::from(
        "/* Generated by ffi/tests/net.rs: the tiny model's outputs (float bit patterns) for the\n \
         * fixed inputs of test_net.c. Do not edit: regenerate with\n \
         * MVISION_BLESS=1 cargo test -p mvision-ffi --test net */\n\
         #ifndef MVISION_TINY_EXPECTED_H\n#define MVISION_TINY_EXPECTED_H\n\n#include <stdint.h>\n\n",
    );
    let mut array = |name: &str, v: &[f32]| {
        h.push_str(&format!("static const uint32_t {name}[{}] = {{", v.len()));
        for (i, x) in v.iter().enumerate() {
            if i % 6 == 0 {
                h.push_str("\n   ");
            }
            h.push_str(&format!(" 0x{:08x}u,", x.to_bits()));
        }
        h.push_str("\n};\n\n");
    };
    array("tiny_image_bits", image);
    array("tiny_bias_bits", bias);
    array("tiny_probs_bits", &outs[0]);
    array("tiny_pooled_bits", &outs[1]);
    h.push_str("#endif\n");
    h
}

/// Compares (or with `MVISION_BLESS=1` writes) a committed file.
fn committed(rel: &str, fresh: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    if std::env::var_os("MVISION_BLESS").is_some() {
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    let old = std::fs::read(&path).unwrap_or_default();
    assert!(
        old == fresh,
        "{rel} is stale or missing; regenerate with \
         `MVISION_BLESS=1 cargo test -p mvision-ffi --test net` and commit it"
    );
}

#[test]
fn committed_test_model_and_expected_outputs_are_current() {
    let t = Tiny::new();
    let file = t.file();
    assert!(file.len() < 4096, "the C test model should stay small");
    let (image, bias) = fixed_inputs();
    let outs = core_forward(&t, MV_NET_DEFAULT_WORKSPACE_BYTES, &[&image, &bias]);
    committed("cmake/examples/data/tiny.mvnn", &file);
    committed(
        "cmake/examples/data/tiny_expected.h",
        expected_header(&image, &bias, &outs).as_bytes(),
    );
}

#[test]
fn loads_copied_and_borrowed_and_matches_core_forward_bit_for_bit() {
    let t = Tiny::new();
    let file = t.file();
    let (image, bias) = fixed_inputs();
    for budget in [0, 1 << 10, MV_NET_DEFAULT_WORKSPACE_BYTES] {
        let want = core_forward(&t, budget, &[&image, &bias]);
        // Copied from an odd address (the copy is aligned), and borrowed in place.
        let odd = Aligned::new(&file, 1);
        let mut copied = null_mut();
        // SAFETY: odd covers file.len() bytes.
        let s = unsafe { mv_net_create(odd.ptr(), odd.len, 0, budget, &mut copied) };
        assert_eq!(s, MV_STATUS_OK);
        drop(odd); // the copy must not need the caller's bytes
        let held = Aligned::new(&file, 0);
        let mut borrowed = null_mut();
        // SAFETY: held covers the file and outlives the net.
        let s =
            unsafe { mv_net_create(held.ptr(), held.len, MV_NET_BORROW, budget, &mut borrowed) };
        assert_eq!(s, MV_STATUS_OK);
        for net in [copied, borrowed] {
            for _ in 0..2 {
                let got = run(net, &[&image, &bias]).unwrap();
                assert_eq!(bits(&got[0]), bits(&want[0]), "budget {budget}");
                assert_eq!(bits(&got[1]), bits(&want[1]), "budget {budget}");
            }
            // SAFETY: made above, destroyed once.
            unsafe { mv_net_destroy(net) };
        }
    }
}

#[test]
fn queries_report_the_model() {
    let t = Tiny::new();
    let net = create(&t.file(), MV_NET_DEFAULT_WORKSPACE_BYTES);
    let g = t.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, MV_NET_DEFAULT_WORKSPACE_BYTES, &mut slots).unwrap();
    let (mut a, mut s, mut ni, mut no) = (0usize, 0usize, 0usize, 0usize);
    let mut dims = [0u32; 4];
    // SAFETY: net is live; every out pointer is writable.
    unsafe {
        assert_eq!(mv_net_arena_size(net, &mut a), MV_STATUS_OK);
        assert_eq!(mv_net_scratch_size(net, &mut s), MV_STATUS_OK);
        assert_eq!(mv_net_input_count(net, &mut ni), MV_STATUS_OK);
        assert_eq!(mv_net_output_count(net, &mut no), MV_STATUS_OK);
        assert_eq!(
            (a, s, ni, no),
            (plan.arena_bytes(), plan.scratch_len() * 4, 2, 2)
        );
        assert!(a > 0);
        for (k, want) in [[1, 2, 6, 6], [1, 3, 1, 1]].into_iter().enumerate() {
            assert_eq!(mv_net_input_shape(net, k, dims.as_mut_ptr()), MV_STATUS_OK);
            assert_eq!(dims, want);
            let name = CStr::from_ptr(mv_net_input_name(net, k));
            assert_eq!(name.to_str().unwrap(), INPUT_NAMES[k]);
        }
        for (k, want) in [[1, 4, 1, 1], [1, 3, 3, 3]].into_iter().enumerate() {
            assert_eq!(mv_net_output_shape(net, k, dims.as_mut_ptr()), MV_STATUS_OK);
            assert_eq!(dims, want);
            let name = CStr::from_ptr(mv_net_output_name(net, k));
            assert_eq!(name.to_str().unwrap(), OUTPUT_NAMES[k]);
        }
        // Out of range: a status (shapes, dims untouched) or NULL (names).
        dims = [7; 4];
        assert_eq!(
            mv_net_input_shape(net, 2, dims.as_mut_ptr()),
            MV_STATUS_OUT_OF_BOUNDS
        );
        assert_eq!(
            mv_net_output_shape(net, usize::MAX, dims.as_mut_ptr()),
            MV_STATUS_OUT_OF_BOUNDS
        );
        assert_eq!(dims, [7; 4]);
        assert!(mv_net_input_name(net, 2).is_null());
        assert!(mv_net_output_name(net, 2).is_null());
        assert!(mv_net_input_name(null(), 0).is_null());
        assert!(mv_net_output_name(null(), 0).is_null());
        // NULL pointers.
        assert_eq!(mv_net_arena_size(null(), &mut a), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_arena_size(net, null_mut()), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_scratch_size(null(), &mut s), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_scratch_size(net, null_mut()), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_input_count(null(), &mut ni), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_input_count(net, null_mut()), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_output_count(null(), &mut no), MV_STATUS_NULL_POINTER);
        assert_eq!(mv_net_output_count(net, null_mut()), MV_STATUS_NULL_POINTER);
        assert_eq!(
            mv_net_input_shape(null(), 0, dims.as_mut_ptr()),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            mv_net_input_shape(net, 0, null_mut()),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            mv_net_output_shape(null(), 0, dims.as_mut_ptr()),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            mv_net_output_shape(net, 0, null_mut()),
            MV_STATUS_NULL_POINTER
        );
        mv_net_destroy(net);
        mv_net_destroy(null_mut());
    }
}

#[test]
fn names_with_a_nul_byte_are_cut_there() {
    let t = Tiny::new();
    let file = t.encode_with(&["in\0put", ""], &["probs", "pooled"]);
    let net = create(&file, 0);
    // SAFETY: live net; names are NUL-terminated strings the net owns.
    unsafe {
        assert_eq!(CStr::from_ptr(mv_net_input_name(net, 0)).to_bytes(), b"in");
        assert_eq!(CStr::from_ptr(mv_net_input_name(net, 1)).to_bytes(), b"");
        mv_net_destroy(net);
    }
}

#[test]
fn bad_create_arguments_are_rejected() {
    let file = Tiny::new().file();
    let held = Aligned::new(&file, 0);
    let mut out = SENTINEL;
    // SAFETY: NULL pointers are what is tested; the rest covers its size.
    unsafe {
        assert_eq!(
            mv_net_create(null(), 100, 0, 0, &mut out),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            mv_net_create(held.ptr(), held.len, 0, 0, null_mut()),
            MV_STATUS_NULL_POINTER
        );
    }
    assert_eq!(out, SENTINEL);
    create_fails(held.ptr(), held.len, 2, MV_STATUS_INVALID_ARGUMENT);
    create_fails(
        held.ptr(),
        held.len,
        0x8000_0001,
        MV_STATUS_INVALID_ARGUMENT,
    );
    // Sizes no buffer can have are rejected before any byte is read.
    create_fails(held.ptr(), usize::MAX, 0, MV_STATUS_OVERFLOW);
    create_fails(
        held.ptr(),
        isize::MAX as usize + 1,
        MV_NET_BORROW,
        MV_STATUS_OVERFLOW,
    );
    // A borrowed model must be 4-byte aligned; a copied one need not be.
    for shift in 1..4 {
        let odd = Aligned::new(&file, shift);
        create_fails(odd.ptr(), odd.len, MV_NET_BORROW, MV_STATUS_MISALIGNED);
        let mut net = null_mut();
        // SAFETY: odd covers its bytes.
        let s = unsafe { mv_net_create(odd.ptr(), odd.len, 0, 0, &mut net) };
        assert_eq!(s, MV_STATUS_OK);
        // SAFETY: made above.
        unsafe { mv_net_destroy(net) };
    }
}

#[test]
fn damaged_files_are_errors_never_crashes() {
    let file = Tiny::new().file();
    // Every truncation, copied and borrowed.
    for len in 0..file.len() {
        let held = Aligned::new(&file[..len], 0);
        create_fails(held.ptr(), len, 0, MV_STATUS_MALFORMED);
        create_fails(held.ptr(), len, MV_NET_BORROW, MV_STATUS_MALFORMED);
    }
    // Trailing bytes past the file's own length are ignored.
    let mut padded = file.clone();
    padded.extend_from_slice(&[0xEE; 13]);
    // SAFETY: made and destroyed here.
    unsafe { mv_net_destroy(create(&padded, 0)) };
    // Every single-bit flip: the checksum covers the whole file; a flip in the version field
    // is reported as such (it is checked first, so newer files say what they are).
    for bit in 0..file.len() * 8 {
        let mut bad = file.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let want = if (4..8).contains(&(bit / 8)) {
            MV_STATUS_UNSUPPORTED_VERSION
        } else {
            MV_STATUS_MALFORMED
        };
        create_fails(bad.as_ptr().cast(), bad.len(), 0, want);
    }
    // Garbage of many lengths, and garbage behind a valid magic.
    let mut rng = SplitMix64(7);
    for len in [1, 3, 4, 79, 80, 81, 200, 1000, 5000] {
        let mut junk: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        create_fails(junk.as_ptr().cast(), len, 0, MV_STATUS_MALFORMED);
        if len >= 8 {
            junk[..4].copy_from_slice(b"MVNN");
            junk[4..8].copy_from_slice(&1u32.to_le_bytes());
            create_fails(junk.as_ptr().cast(), len, 0, MV_STATUS_MALFORMED);
        }
    }
}

#[test]
fn bad_forward_arguments_are_rejected_and_outputs_untouched() {
    let t = Tiny::new();
    let net = create(&t.file(), MV_NET_DEFAULT_WORKSPACE_BYTES);
    let (image, bias) = fixed_inputs();
    const POISON: f32 = 12345.0;
    let mut probs = [POISON; 4];
    let mut pooled = [POISON; 27];
    let xs = [image.as_ptr(), bias.as_ptr()];
    let xl = [72usize, 3];
    let yl = [4usize, 27];
    let check = |probs: &[f32], pooled: &[f32]| {
        assert!(
            probs.iter().chain(pooled).all(|&v| v == POISON),
            "outputs written on error"
        );
    };
    // SAFETY: each call's pointers cover what they claim, except what the case tests.
    unsafe {
        let ys = [probs.as_mut_ptr(), pooled.as_mut_ptr()];
        let fwd = |net,
                   xs: *const *const f32,
                   xl: *const usize,
                   xn,
                   ys: *const *mut f32,
                   yl: *const usize,
                   yn| { mv_net_forward(net, xs, xl, xn, ys, yl, yn) };
        let p = (xs.as_ptr(), xl.as_ptr(), ys.as_ptr(), yl.as_ptr());
        assert_eq!(
            fwd(null_mut(), p.0, p.1, 2, p.2, p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            fwd(net, null(), p.1, 2, p.2, p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            fwd(net, p.0, null(), 2, p.2, p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            fwd(net, p.0, p.1, 2, null(), p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        assert_eq!(
            fwd(net, p.0, p.1, 2, p.2, null(), 2),
            MV_STATUS_NULL_POINTER
        );
        for (xn, yn) in [(1, 2), (3, 2), (2, 1), (2, 3), (0, 0), (usize::MAX, 2)] {
            assert_eq!(
                fwd(net, p.0, p.1, xn, p.2, p.3, yn),
                MV_STATUS_INVALID_ARGUMENT
            );
        }
        let null_x = [image.as_ptr(), null()];
        assert_eq!(
            fwd(net, null_x.as_ptr(), p.1, 2, p.2, p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        let null_y = [probs.as_mut_ptr(), null_mut()];
        assert_eq!(
            fwd(net, p.0, p.1, 2, null_y.as_ptr(), p.3, 2),
            MV_STATUS_NULL_POINTER
        );
        for bad in [[71, 3], [73, 3], [72, 0], [72, 4], [0, 0], [usize::MAX, 3]] {
            assert_eq!(
                fwd(net, p.0, bad.as_ptr(), 2, p.2, p.3, 2),
                MV_STATUS_SIZE_MISMATCH
            );
        }
        for bad in [[3, 27], [5, 27], [4, 26], [4, 28], [4, usize::MAX]] {
            assert_eq!(
                fwd(net, p.0, p.1, 2, p.2, bad.as_ptr(), 2),
                MV_STATUS_SIZE_MISMATCH
            );
        }
        check(&probs, &pooled);
        // Misaligned buffers.
        let mut wide = vec![POISON; 40];
        let odd = wide.as_mut_ptr().cast::<u8>().add(1).cast::<f32>();
        let ys_odd = [odd, pooled.as_mut_ptr()];
        assert_eq!(
            fwd(net, p.0, p.1, 2, ys_odd.as_ptr(), p.3, 2),
            MV_STATUS_MISALIGNED
        );
        let xs_odd = [
            image.as_ptr().cast::<u8>().add(2).cast::<f32>(),
            bias.as_ptr(),
        ];
        assert_eq!(
            fwd(net, xs_odd.as_ptr(), p.1, 2, p.2, p.3, 2),
            MV_STATUS_MISALIGNED
        );
        // A buffer that wraps the address space.
        let end = usize::MAX & !3;
        let ys_wrap = [probs.as_mut_ptr(), end as *mut f32];
        assert_eq!(
            fwd(net, p.0, p.1, 2, ys_wrap.as_ptr(), p.3, 2),
            MV_STATUS_OVERFLOW
        );
        // Overlaps: two outputs, an output with an input.
        let ys_same = [wide.as_mut_ptr(), wide.as_mut_ptr().add(3)];
        assert_eq!(
            fwd(net, p.0, p.1, 2, ys_same.as_ptr(), p.3, 2),
            MV_STATUS_OVERLAP
        );
        let mut io = vec![POISON; 80];
        io[..72].copy_from_slice(&image);
        let xs_io = [io.as_ptr(), bias.as_ptr()];
        let ys_io = [io.as_mut_ptr().add(71), pooled.as_mut_ptr()];
        assert_eq!(
            fwd(net, xs_io.as_ptr(), p.1, 2, ys_io.as_ptr(), p.3, 2),
            MV_STATUS_OVERLAP
        );
        assert!(wide.iter().all(|&v| v == POISON));
        assert!(io[72..].iter().all(|&v| v == POISON));
        check(&probs, &pooled);
        // Adjacent (not overlapping) buffers are fine, and inputs may share memory.
        let mut both = [0.0f32; 31];
        let (a, b) = both.split_at_mut(4);
        let ys_adj = [a.as_mut_ptr(), b.as_mut_ptr()];
        let xs_shared = [image.as_ptr(), image.as_ptr()]; // the bias is the image's start
        assert_eq!(
            fwd(net, xs_shared.as_ptr(), p.1, 2, ys_adj.as_ptr(), p.3, 2),
            MV_STATUS_OK
        );
        let want = core_forward(&t, MV_NET_DEFAULT_WORKSPACE_BYTES, &[&image, &image[..3]]);
        assert_eq!(bits(&both[..4]), bits(&want[0]));
        assert_eq!(bits(&both[4..]), bits(&want[1]));
        mv_net_destroy(net);
    }
}

#[test]
fn forward_allocates_nothing() {
    let t = Tiny::new();
    let net = create(&t.file(), MV_NET_DEFAULT_WORKSPACE_BYTES);
    let (image, bias) = fixed_inputs();
    let mut probs = [0.0f32; 4];
    let mut pooled = [0.0f32; 27];
    let xs = [image.as_ptr(), bias.as_ptr()];
    let xl = [72usize, 3];
    let ys = [probs.as_mut_ptr(), pooled.as_mut_ptr()];
    let yl = [4usize, 27];
    let before = counting_alloc::heap_calls();
    for _ in 0..3 {
        // SAFETY: every pointer covers its length.
        let s = unsafe {
            mv_net_forward(
                net,
                xs.as_ptr(),
                xl.as_ptr(),
                2,
                ys.as_ptr(),
                yl.as_ptr(),
                2,
            )
        };
        assert_eq!(s, MV_STATUS_OK);
    }
    assert_eq!(
        counting_alloc::heap_calls(),
        before,
        "mv_net_forward allocated"
    );
    // SAFETY: made above.
    unsafe { mv_net_destroy(net) };
}
