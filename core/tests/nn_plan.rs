//! Network plans (`nn::graph`, `nn::plan`): small networks built here, run through one arena by
//! `forward`, against a layer-by-layer evaluation that calls the layer functions into a separate
//! `Vec` per tensor. The plan only moves where tensors live, so the comparison is bit-exact (the
//! reference uses the convolution method the plan chose). Also: arena sizes (below the sum of
//! the activations; an exact hand-computed value for a chain), every validation error, 500
//! random corruptions of a valid graph (never a panic; a graph that validates also runs), and
//! no heap use in `make_plan` and `forward`.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

use common::Rng;
use mvision_core::nn::activation::{apply_activation, conv2d_fused, Activation};
use mvision_core::nn::batchnorm::{batch_norm, BatchNormParams};
use mvision_core::nn::conv::{Conv2dShape, ConvMethod};
use mvision_core::nn::dense::{fully_connected, fully_connected_pack_len};
use mvision_core::nn::elementwise::{add, binary, binary_broadcast, BinaryOp, Broadcast};
use mvision_core::nn::graph::{self, op, Graph, Node, TensorDesc, WeightRange};
use mvision_core::nn::layout::{concat, pad2d, PadMode, Pads};
use mvision_core::nn::matmul::{matmul, matmul_pack_len, MatMulShape};
use mvision_core::nn::plan::{
    arena_len, cache_aligned, forward, forward_prepared, make_plan, make_plan_prepared,
    page_align_slack, page_aligned, page_aligned_ref, plan_len, prepare_weights, PlanSlot,
    CACHE_ALIGN_SLACK, PAGE_BYTES,
};
use mvision_core::nn::pool::{avg_pool2d, global_avg_pool, max_pool2d, Pool2dShape};
use mvision_core::nn::reduce::{reduce_mean, softmax};
use mvision_core::nn::tensor::Shape4;
use mvision_core::Error;

/// A graph under construction, owning its arrays.
#[derive(Clone, Default)]
struct Net {
    tensors: Vec<TensorDesc>,
    nodes: Vec<Node>,
    weights: Vec<f32>,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

const NONE: WeightRange = WeightRange::new(0, 0);

impl Net {
    fn graph(&self) -> Graph<'_> {
        Graph {
            tensors: &self.tensors,
            nodes: &self.nodes,
            weights: &self.weights,
            inputs: &self.inputs,
            outputs: &self.outputs,
        }
    }

    fn t(&mut self, n: usize, c: usize, h: usize, w: usize) -> u32 {
        self.tensors
            .push(TensorDesc::new(n as u32, c as u32, h as u32, w as u32));
        self.tensors.len() as u32 - 1
    }

    fn input(&mut self, n: usize, c: usize, h: usize, w: usize) -> u32 {
        let t = self.t(n, c, h, w);
        self.inputs.push(t);
        t
    }

    fn shape(&self, t: u32) -> Shape4 {
        self.tensors[t as usize].shape().unwrap()
    }

    fn w(&mut self, rng: &mut Rng, len: usize, lo: f32, hi: f32) -> WeightRange {
        let r = WeightRange::new(self.weights.len() as u32, len as u32);
        self.weights.extend((0..len).map(|_| rng.f32_in(lo, hi)));
        r
    }

    /// A convolution `k × k`, stride 1, padding `pad`, with bias, into a new tensor.
    fn conv(
        &mut self,
        rng: &mut Rng,
        x: u32,
        c_out: usize,
        k: usize,
        pad: usize,
        act: Activation,
    ) -> u32 {
        let s = self.shape(x);
        let mut c = Conv2dShape::new(s.n, s.c, s.h, s.w, c_out, k, k);
        c.pad_top = pad;
        c.pad_left = pad;
        c.pad_bottom = pad;
        c.pad_right = pad;
        let d = c.dims().unwrap();
        let y = self.t(s.n, c_out, d.out_h, d.out_w);
        let w = self.w(rng, d.weight_len, -0.5, 0.5);
        let b = self.w(rng, c_out, -0.1, 0.1);
        let sl = if act == Activation::PRelu {
            self.w(rng, c_out, 0.0, 0.3)
        } else {
            NONE
        };
        self.nodes.push(Node::conv(x, y, &c, w, b, act, sl));
        y
    }

    fn unary(&mut self, x: u32, y_shape: Shape4, make: impl FnOnce(u32, u32) -> Node) -> u32 {
        let s = y_shape;
        let y = self.t(s.n, s.c, s.h, s.w);
        self.nodes.push(make(x, y));
        y
    }

    fn act(&mut self, x: u32, act: Activation) -> u32 {
        let s = self.shape(x);
        self.unary(x, s, |x, y| Node::activation(x, y, act, NONE))
    }

    fn max_pool(&mut self, x: u32, k: usize) -> u32 {
        let s = self.shape(x);
        let p = Pool2dShape::new(s.n, s.c, s.h, s.w, k, k);
        let d = p.dims().unwrap();
        let ys = Shape4::new(s.n, s.c, d.out_h, d.out_w).unwrap();
        self.unary(x, ys, |x, y| Node::pool(x, y, &p, true))
    }

    /// A 3 × 3 stride-2 max pooling in ceil mode (SqueezeNet's).
    fn max_pool3s2(&mut self, x: u32) -> u32 {
        let s = self.shape(x);
        let mut p = Pool2dShape::new(s.n, s.c, s.h, s.w, 3, 3);
        (p.stride_h, p.stride_w, p.ceil_mode) = (2, 2, true);
        let d = p.dims().unwrap();
        let ys = Shape4::new(s.n, s.c, d.out_h, d.out_w).unwrap();
        self.unary(x, ys, |x, y| Node::pool(x, y, &p, true))
    }

    fn gap(&mut self, x: u32) -> u32 {
        let s = self.shape(x);
        self.unary(
            x,
            Shape4::new(s.n, s.c, 1, 1).unwrap(),
            Node::global_avg_pool,
        )
    }

    fn flatten(&mut self, x: u32) -> u32 {
        let s = self.shape(x);
        self.unary(
            x,
            Shape4::new(s.n, s.c * s.h * s.w, 1, 1).unwrap(),
            |x, y| Node::flatten(x, y, 1),
        )
    }

    fn fc(&mut self, rng: &mut Rng, x: u32, out: usize) -> u32 {
        let s = self.shape(x);
        let w = self.w(rng, out * s.c * s.h * s.w, -0.3, 0.3);
        let b = self.w(rng, out, -0.1, 0.1);
        self.unary(x, Shape4::new(s.n, out, 1, 1).unwrap(), |x, y| {
            Node::fully_connected(x, y, w, b)
        })
    }

    fn softmax(&mut self, x: u32) -> u32 {
        let s = self.shape(x);
        self.unary(x, s, |x, y| Node::softmax(x, y, 1))
    }
}

fn random(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.f32_in(-2.0, 2.0)).collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

fn w_of(net: &Net, r: WeightRange) -> Option<&[f32]> {
    (r.len > 0).then(|| &net.weights[r.offset as usize..][..r.len as usize])
}

fn act_of(p: &[u32; 16]) -> Activation {
    match p[graph::P_ACT] {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::Relu6,
        3 => Activation::Clip {
            min: f(p[graph::P_ACT_A]),
            max: f(p[graph::P_ACT_B]),
        },
        4 => Activation::LeakyRelu {
            alpha: f(p[graph::P_ACT_A]),
        },
        5 => Activation::PRelu,
        _ => Activation::Sigmoid,
    }
}

/// Layer-by-layer evaluation: one `Vec` per tensor, the layer functions called directly.
/// `methods[i]` is the convolution method of node `i`.
fn reference(net: &Net, inputs: &[Vec<f32>], methods: &[ConvMethod]) -> Vec<Vec<f32>> {
    let mut t: Vec<Vec<f32>> = net
        .tensors
        .iter()
        .map(|d| vec![f32::NAN; d.shape().unwrap().elements().unwrap()])
        .collect();
    for (k, &i) in net.inputs.iter().enumerate() {
        t[i as usize] = inputs[k].clone();
    }
    for (i, node) in net.nodes.iter().enumerate() {
        let x = t[node.inputs[0] as usize].clone();
        let xs = net.shape(node.inputs[0]);
        let ys = net.shape(node.output);
        let p = &node.params;
        let u = |k: usize| p[k] as usize;
        let mut y = vec![0.0f32; ys.elements().unwrap()];
        match node.op {
            op::CONV => {
                let c = Conv2dShape {
                    n: xs.n,
                    c_in: xs.c,
                    h: xs.h,
                    w: xs.w,
                    c_out: ys.c,
                    kh: u(0),
                    kw: u(1),
                    stride_h: u(2),
                    stride_w: u(3),
                    pad_top: u(4),
                    pad_left: u(5),
                    pad_bottom: u(6),
                    pad_right: u(7),
                    dilation_h: u(8),
                    dilation_w: u(9),
                    groups: u(10),
                };
                let mut ws = vec![0.0f32; 1 << 20];
                conv2d_fused(
                    methods[i],
                    &c,
                    &x,
                    w_of(net, node.weights[0]).unwrap(),
                    w_of(net, node.weights[1]),
                    act_of(p),
                    w_of(net, node.weights[2]),
                    &mut y,
                    &mut ws,
                )
                .unwrap();
            }
            op::MAX_POOL | op::AVG_POOL => {
                let mut s = Pool2dShape::new(xs.n, xs.c, xs.h, xs.w, u(0), u(1));
                s.stride_h = u(2);
                s.stride_w = u(3);
                s.pad_top = u(4);
                s.pad_left = u(5);
                s.pad_bottom = u(6);
                s.pad_right = u(7);
                s.ceil_mode = p[8] == 1;
                s.count_include_pad = p[9] == 1;
                if node.op == op::MAX_POOL {
                    max_pool2d(&s, &x, &mut y).unwrap();
                } else {
                    avg_pool2d(&s, &x, &mut y).unwrap();
                }
            }
            op::GLOBAL_AVG_POOL => global_avg_pool(&xs, &x, &mut y).unwrap(),
            op::FULLY_CONNECTED => {
                let (fin, fout) = (xs.c * xs.h * xs.w, ys.c * ys.h * ys.w);
                let mut pack = vec![0.0f32; fully_connected_pack_len(xs.n, fin, fout)];
                fully_connected(
                    xs.n,
                    fin,
                    fout,
                    &x,
                    w_of(net, node.weights[0]).unwrap(),
                    w_of(net, node.weights[1]),
                    &mut y,
                    &mut pack,
                )
                .unwrap();
            }
            op::ACTIVATION => {
                y.copy_from_slice(&x);
                apply_activation(act_of(p), &xs, &mut y, w_of(net, node.weights[2])).unwrap();
            }
            op::SOFTMAX => {
                y.copy_from_slice(&x);
                softmax(&xs, u(0), &mut y).unwrap();
            }
            op::REDUCE_MEAN => {
                let axes = [0, 1, 2, 3].map(|k| p[0] & (1 << k) != 0);
                reduce_mean(&xs, axes, &x, &mut y).unwrap();
            }
            op::ADD if u(0) < 3 => {
                let bc = [Broadcast::Same, Broadcast::PerChannel, Broadcast::Scalar][u(0)];
                add(&xs, &x, &t[node.inputs[1] as usize], bc, &mut y).unwrap();
            }
            op::CONCAT => {
                let parts: Vec<(Shape4, &[f32])> = node.inputs[..node.input_count as usize]
                    .iter()
                    .map(|&k| (net.shape(k), t[k as usize].as_slice()))
                    .collect();
                concat(&parts, u(0), &mut y).unwrap();
            }
            op::ADD | op::SUB | op::MUL => {
                let bop = match node.op {
                    op::ADD => BinaryOp::Add,
                    op::SUB => BinaryOp::Sub,
                    _ => BinaryOp::Mul,
                };
                let b = &t[node.inputs[1] as usize];
                if u(0) == 3 {
                    binary_broadcast(bop, &xs, &x, &net.shape(node.inputs[1]), b, &mut y).unwrap();
                } else {
                    let bc = [Broadcast::Same, Broadcast::PerChannel, Broadcast::Scalar][u(0)];
                    binary(bop, &xs, &x, b, bc, &mut y).unwrap();
                }
            }
            op::MATMUL => {
                // Ranks 4 here, A's and B's batch dimensions are N and C.
                let bs = net.shape(node.inputs[1]);
                let shape = MatMulShape {
                    a_batch: [xs.n, xs.c],
                    b_batch: [bs.n, bs.c],
                    m: xs.h,
                    k: xs.w,
                    n: bs.w,
                };
                let mut pack = vec![0.0f32; matmul_pack_len(&shape)];
                matmul(&shape, &x, &t[node.inputs[1] as usize], &mut y, &mut pack).unwrap();
            }
            op::FLATTEN | op::RESHAPE => y.copy_from_slice(&x),
            op::CONSTANT => y.copy_from_slice(w_of(net, node.weights[0]).unwrap()),
            op::PAD => {
                let pads = Pads {
                    top: u(4),
                    left: u(5),
                    bottom: u(6),
                    right: u(7),
                };
                let mode = [PadMode::Constant(f(p[8])), PadMode::Edge, PadMode::Reflect][u(0)];
                pad2d(&xs, &pads, mode, &x, &mut y).unwrap();
            }
            op::BATCH_NORM => {
                let g = |k: usize| w_of(net, node.weights[k]).unwrap();
                let bn = BatchNormParams {
                    gamma: g(0),
                    beta: g(1),
                    mean: g(2),
                    var: g(3),
                    eps: f(p[0]),
                };
                y.copy_from_slice(&x);
                batch_norm(&xs, &bn, &mut y).unwrap();
            }
            other => panic!("op {other}"),
        }
        t[node.output as usize] = y;
    }
    t
}

/// Plans `net` under `budget` bytes, runs it on random inputs and checks every output against
/// [`reference`] bit for bit. Returns `(arena_len, sum of the node outputs' elements)`.
fn check(net: &Net, budget: usize, seed: u64) -> (usize, usize) {
    check_prepared(net, budget, 0, seed)
}

/// [`check`] with a plan of `make_plan_prepared` (`prepared_budget` bytes of pre-transformed
/// Winograd weights), run by `forward_prepared` after `prepare_weights`.
fn check_prepared(net: &Net, budget: usize, prepared_budget: usize, seed: u64) -> (usize, usize) {
    let g = net.graph();
    g.validate().unwrap();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan_prepared(&g, budget, prepared_budget, &mut slots).unwrap();
    assert!(plan.prepared_len() * 4 <= prepared_budget);
    let mut prepared = vec![f32::NAN; plan.prepared_len()];
    prepare_weights(&g, &plan, &mut prepared).unwrap();
    let mut rng = Rng::new(seed);
    let inputs: Vec<Vec<f32>> = net
        .inputs
        .iter()
        .map(|&t| random(&mut rng, net.shape(t).elements().unwrap()))
        .collect();
    let methods: Vec<ConvMethod> = net
        .nodes
        .iter()
        .map(|n| plan.method(n.output).unwrap())
        .collect();
    let want = reference(net, &inputs, &methods);
    let mut arena = vec![f32::NAN; plan.arena_len()];
    let mut scratch = vec![f32::NAN; plan.scratch_len()];
    let mut outs: Vec<Vec<f32>> = net
        .outputs
        .iter()
        .map(|&t| vec![f32::NAN; net.shape(t).elements().unwrap() + 2])
        .collect();
    let ins: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
    {
        let mut out_refs: Vec<&mut [f32]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
        if plan.prepared_len() > 0 {
            let short = &prepared[..plan.prepared_len() - 1];
            let (a, s) = (&mut arena, &mut scratch);
            assert_eq!(
                forward_prepared(&g, &plan, short, &ins, &mut out_refs, a, s),
                Err(Error::BufferTooSmall)
            );
            assert_eq!(
                forward(&g, &plan, &ins, &mut out_refs, a, s),
                Err(Error::BufferTooSmall)
            );
        }
        let (a, s) = (&mut arena, &mut scratch);
        forward_prepared(&g, &plan, &prepared, &ins, &mut out_refs, a, s).unwrap();
    }
    for (k, &t) in net.outputs.iter().enumerate() {
        let n = want[t as usize].len();
        assert_eq!(bits(&outs[k][..n]), bits(&want[t as usize]), "output {k}");
        assert!(
            outs[k][n..].iter().all(|v| v.is_nan()),
            "wrote past output {k}"
        );
        assert!(want[t as usize].iter().all(|v| v.is_finite()));
    }
    let sum = net
        .nodes
        .iter()
        .map(|n| net.shape(n.output).elements().unwrap())
        .sum();
    (plan.arena_len(), sum)
}

/// conv → relu → maxpool → conv → relu → gap → flatten → fc → softmax (relus standalone).
fn chain(batch: usize, seed: u64) -> Net {
    let mut rng = Rng::new(seed);
    let mut net = Net::default();
    let x = net.input(batch, 3, 12, 11);
    let a = net.conv(&mut rng, x, 8, 3, 1, Activation::None);
    let a = net.act(a, Activation::Relu);
    let a = net.max_pool(a, 2);
    let a = net.conv(&mut rng, a, 16, 3, 1, Activation::None);
    let a = net.act(a, Activation::Relu);
    let a = net.gap(a);
    let a = net.flatten(a);
    let a = net.fc(&mut rng, a, 5);
    let a = net.softmax(a);
    net.outputs.push(a);
    net
}

#[test]
fn chain_matches_layers_batch_1_and_3() {
    for batch in [1, 3] {
        for budget in [0, 1 << 20] {
            let net = chain(batch, 7);
            let (arena, sum) = check(&net, budget, 11 + batch as u64);
            // The relus run in place, the flatten is an alias, and the first convolution's
            // block is reused once the pool has read it: well below the sum.
            assert!(arena * 2 < sum, "arena {arena} vs sum {sum}");
            // The method follows the budget: direct at 0, a GEMM method (with scratch) for the
            // 8 → 16 channel convolution when workspace is allowed.
            let g = net.graph();
            let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
            let plan = make_plan(&g, budget, &mut slots).unwrap();
            let second_conv = plan.method(net.nodes[3].output).unwrap();
            assert_eq!(second_conv == ConvMethod::Direct, budget == 0);
            // A batch of 3 packs for the fully connected layer's GEMM (a batch of 1 needs no
            // pack: a matrix-vector product).
            if batch > 1 {
                assert!(plan.scratch_len() > 0, "the fully connected layer packs");
            }
            println!("chain batch {batch} budget {budget}: arena {arena} f32, naive sum {sum}");
        }
    }
}

/// Two inputs: `x` reshaped, MatMul with batch broadcasting (rank 4), a numpy-broadcast Sub
/// and Mul (the Mul in place), a reshape of the result as the output; plus a rank-2 MatMul.
#[test]
fn matmul_reshape_and_broadcast_ops() {
    let mut net = Net::default();
    let x = net.input(2, 3, 4, 5); // 120 elements
    let bm = net.input(1, 3, 5, 6); // B, batch broadcast over N
    let a = net.unary(x, Shape4::new(2, 3, 4, 5).unwrap(), |x, y| {
        Node::reshape(x, y)
    });
    let r = net.t(6, 20, 1, 1);
    net.nodes.push(Node::reshape(x, r));
    let mm = net.t(2, 3, 4, 6);
    net.nodes.push(Node::matmul(a, bm, mm, 4, 4));
    let row = net.input(1, 1, 1, 6);
    let d = net.t(2, 3, 4, 6);
    net.nodes
        .push(Node::binary_broadcast(BinaryOp::Sub, mm, row, d));
    let col = net.input(2, 1, 4, 1);
    let e = net.t(2, 3, 4, 6);
    net.nodes
        .push(Node::binary_broadcast(BinaryOp::Mul, d, col, e));
    // A smaller first operand: the output is larger than it, never in place.
    let f = net.t(2, 3, 4, 6);
    net.nodes
        .push(Node::binary_broadcast(BinaryOp::Sub, col, e, f));
    let g2 = net.t(2, 3, 4, 6);
    net.nodes
        .push(Node::binary(BinaryOp::Mul, f, f, g2, Broadcast::Same));
    // A constant operand (a weight range as a tensor).
    let cw = net.w(&mut Rng::new(3), 6, -1.0, 1.0);
    let k = net.t(1, 1, 1, 6);
    net.nodes.push(Node::constant(k, cw));
    let g3 = net.t(2, 3, 4, 6);
    net.nodes
        .push(Node::binary_broadcast(BinaryOp::Add, g2, k, g3));
    let out = net.t(144, 1, 1, 1);
    net.nodes.push(Node::reshape(g3, out));
    // Rank 2: (6 × 20)·(20 × 1) via the reshaped input; B as rank 2 is (20, 1, 1, 1).
    let w = net.input(20, 1, 1, 1);
    let v = net.t(6, 1, 1, 1);
    net.nodes.push(Node::matmul(r, w, v, 2, 2));
    net.outputs.extend([out, v]);
    // The reference handles MatMul at rank 4 only: check the rank-2 product separately.
    let g = net.graph();
    g.validate().unwrap();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, 0, &mut slots).unwrap();
    assert_eq!(plan.offset(a), None, "reshape of a graph input aliases it");
    assert_eq!(plan.offset(e), plan.offset(d), "Mul runs in place");
    assert_ne!(plan.offset(f), plan.offset(e));
    let mut rng = Rng::new(5);
    let xv = random(&mut rng, 120);
    let wv = random(&mut rng, 20);
    let ins: Vec<Vec<f32>> = vec![
        xv.clone(),
        random(&mut rng, 90),
        random(&mut rng, 6),
        random(&mut rng, 8),
        wv.clone(),
    ];
    let mut o1 = vec![0.0; 144];
    let mut o2 = vec![0.0; 6];
    let mut arena = vec![f32::NAN; plan.arena_len()];
    let mut scratch = vec![f32::NAN; plan.scratch_len()];
    let refs: Vec<&[f32]> = ins.iter().map(|v| v.as_slice()).collect();
    let mut outs: [&mut [f32]; 2] = [&mut o1, &mut o2];
    let before = counting_alloc::heap_calls();
    forward(&g, &plan, &refs, &mut outs, &mut arena, &mut scratch).unwrap();
    if !cfg!(feature = "gemm-crate") {
        // The MatMuls' GEMM is the portable one: no heap (the gemm crate packs on its own).
        assert_eq!(counting_alloc::heap_calls(), before, "forward allocated");
    }
    for r in 0..6 {
        let want: f64 = (0..20).map(|k| xv[r * 20 + k] as f64 * wv[k] as f64).sum();
        assert!((o2[r] as f64 - want).abs() < 1e-4, "row {r}");
    }
    // Everything else bit for bit against the layer functions, with the rank-2 MatMul dropped.
    let mut net4 = net.clone();
    net4.nodes.pop();
    net4.inputs.pop();
    net4.outputs.pop();
    check(&net4, 0, 9);
}

/// in (1×1×8×8) → conv1×1 (2 ch, 128) → maxpool 2 (32) → conv1×1 (32) → gap (2): the first
/// conv output takes [0, 128); the pool output [128, 160) (the conv output is still read); the
/// second conv output reuses [0, 32) (conv output dead, best fit below the pool output); the gap
/// output goes to [32, 34) (pool output dead; [0, 32) live). Arena: 160 of the naive 194.
#[test]
fn hand_computed_chain_arena() {
    let mut rng = Rng::new(3);
    let mut net = Net::default();
    let x = net.input(1, 1, 8, 8);
    let a = net.conv(&mut rng, x, 2, 1, 0, Activation::Relu);
    let a = net.max_pool(a, 2);
    let a = net.conv(&mut rng, a, 2, 1, 0, Activation::Sigmoid);
    let a = net.gap(a);
    net.outputs.push(a);
    let (arena, sum) = check(&net, 0, 1);
    assert_eq!((arena, sum), (160, 194));
    let g = net.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, 0, &mut slots).unwrap();
    assert_eq!(plan.arena_bytes(), 640);
    let mut again = vec![PlanSlot::EMPTY; plan_len(&g)];
    assert_eq!(arena_len(&g, 0, &mut again), Ok(160 * 4), "bytes");
    let offs: Vec<_> = (1..5).map(|t| plan.offset(t)).collect();
    assert_eq!(offs, [Some(0), Some(128), Some(0), Some(32)]);
    assert_eq!(
        plan.offset(0),
        None,
        "graph input lives in the caller's slice"
    );
}

/// conv → relu (t1), conv (t2), add(t2, t1) in place into t2, relu in place, two batches.
#[test]
fn residual_block() {
    for batch in [1, 3] {
        let mut rng = Rng::new(5);
        let mut net = Net::default();
        let x = net.input(batch, 4, 9, 7);
        let t1 = net.conv(&mut rng, x, 6, 3, 1, Activation::Relu);
        let t2 = net.conv(&mut rng, t1, 6, 3, 1, Activation::PRelu);
        let s = net.shape(t2);
        let t3 = net.unary(t2, s, |a, y| Node::add(a, t1, y, Broadcast::Same));
        let t4 = net.act(t3, Activation::Relu6);
        net.outputs.push(t4);
        let g = net.graph();
        let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
        let plan = make_plan(&g, 1 << 20, &mut slots).unwrap();
        assert_eq!(plan.offset(t3), plan.offset(t2), "add in place");
        assert_eq!(plan.offset(t4), plan.offset(t2), "relu in place");
        let (arena, sum) = check(&net, 1 << 20, 2);
        assert_eq!(arena, 2 * s.elements().unwrap());
        println!("residual batch {batch}: arena {arena} f32, naive sum {sum}");
    }
}

/// Two 64-channel 3×3 convolutions (Winograd: 120 output pixels, at least
/// `WINOGRAD_MIN_OUT_PIXELS` on every level) with PReLU and ReLU: with room for both layers'
/// pre-transformed weights, for the first only, and for none, the same bits as the layers.
#[test]
fn winograd_prepared_weights() {
    for batch in [1, 2] {
        let mut rng = Rng::new(13);
        let mut net = Net::default();
        let x = net.input(batch, 64, 10, 12);
        let t1 = net.conv(&mut rng, x, 64, 3, 1, Activation::PRelu);
        let t2 = net.conv(&mut rng, t1, 64, 3, 1, Activation::Relu);
        net.outputs.push(t2);
        let g = net.graph();
        let layer = 16 * 64 * 64;
        for (prepared_budget, layers) in [(0, 0), (4 * layer, 1), (8 * layer, 2), (usize::MAX, 2)] {
            let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
            let plan = make_plan_prepared(&g, 16 << 20, prepared_budget, &mut slots).unwrap();
            assert_eq!(plan.method(t1), Some(ConvMethod::Winograd));
            assert_eq!(plan.prepared_len(), layers * layer);
            assert_eq!(plan.is_prepared(t1), layers >= 1);
            assert_eq!(plan.is_prepared(t2), layers >= 2);
            let mut short = vec![0.0; plan.prepared_len().saturating_sub(1)];
            if layers > 0 {
                assert_eq!(
                    prepare_weights(&g, &plan, &mut short),
                    Err(Error::BufferTooSmall)
                );
            }
            check_prepared(&net, 16 << 20, prepared_budget, 3 + batch as u64);
        }
    }
}

/// A 1×1 convolution on a 7 × 7 map (40 → 48 channels, ReLU6): with AVX2 (x86-64-v3 active)
/// blocked where its weights are prepared (one band of the AVX2 tile's sums), im2col where they
/// are not; the same bits as the layer either way. Without AVX2, never blocked.
#[test]
fn small_pointwise_blocked_where_prepared() {
    use mvision_core::cpu::{active, Level};
    let mut rng = Rng::new(23);
    let mut net = Net::default();
    let x = net.input(1, 40, 7, 7);
    let t = net.conv(&mut rng, x, 48, 1, 0, Activation::Relu6);
    net.outputs.push(t);
    let g = net.graph();
    for prepared_budget in [0, 1 << 20] {
        let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
        let plan = make_plan_prepared(&g, 16 << 20, prepared_budget, &mut slots).unwrap();
        let method = plan.method(t).unwrap();
        if active() == Level::X86V3 && prepared_budget > 0 {
            assert_eq!(method, ConvMethod::Blocked);
            assert!(plan.is_prepared(t));
        } else if active() < Level::X86V3 || prepared_budget == 0 {
            assert_ne!(method, ConvMethod::Blocked);
        }
        check_prepared(&net, 16 << 20, prepared_budget, 29);
    }
}

/// Two 5×5 convolutions with 40 output channels (blocked where the CPU runs its AVX-512 or AVX2
/// tile and the weights are prepared, with a partial 16-channel block) and PReLU / ReLU: with
/// room for both layers' re-laid-out weights, for the first only, and for none, the same bits
/// as the layers.
#[test]
fn blocked_prepared_weights() {
    let tiled = mvision_core::cpu::active() >= mvision_core::cpu::Level::X86V3;
    for batch in [1, 2] {
        let mut rng = Rng::new(17);
        let mut net = Net::default();
        let x = net.input(batch, 5, 9, 8);
        let t1 = net.conv(&mut rng, x, 40, 5, 2, Activation::PRelu);
        let t2 = net.conv(&mut rng, t1, 40, 5, 2, Activation::Relu);
        net.outputs.push(t2);
        let g = net.graph();
        // 48 channels (3 blocks) × taps.
        let (l1, l2) = (48 * 5 * 25, 48 * 40 * 25);
        for (prepared_budget, layers) in [(0, 0), (4 * l1, 1), (4 * (l1 + l2), 2)] {
            let layers = if tiled { layers } else { 0 };
            let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
            let plan = make_plan_prepared(&g, 16 << 20, prepared_budget, &mut slots).unwrap();
            // Blocked where its weights are prepared; on these 9 × 8 maps (below
            // BLOCKED_MIN_OUT_PIXELS) im2col where they are not.
            let want = |prepared| {
                if tiled && prepared {
                    ConvMethod::Blocked
                } else {
                    ConvMethod::Im2col
                }
            };
            assert_eq!(plan.method(t1), Some(want(layers >= 1)));
            assert_eq!(plan.method(t2), Some(want(layers >= 2)));
            let len = [0, l1, l1 + l2][layers];
            assert_eq!(plan.prepared_len(), len);
            assert_eq!(plan.is_prepared(t1), layers >= 1);
            assert_eq!(plan.is_prepared(t2), layers >= 2);
            if layers > 0 {
                let mut short = vec![0.0; len - 1];
                assert_eq!(
                    prepare_weights(&g, &plan, &mut short),
                    Err(Error::BufferTooSmall)
                );
            }
            check_prepared(&net, 16 << 20, prepared_budget, 5 + batch as u64);
        }
    }
}

/// Two branches joined by Concat, then BatchNorm; plus a per-channel and a scalar Add.
#[test]
fn branches_concat() {
    for batch in [1, 3] {
        let mut rng = Rng::new(9);
        let mut net = Net::default();
        let x = net.input(batch, 3, 10, 10);
        let a = net.conv(&mut rng, x, 4, 3, 1, Activation::LeakyRelu { alpha: 0.1 });
        let b = net.conv(
            &mut rng,
            x,
            5,
            1,
            0,
            Activation::Clip {
                min: -1.0,
                max: 1.0,
            },
        );
        let s = net.shape(a);
        // Three inputs (one twice): 4 + 5 + 4 channels.
        let c = net.t(s.n, 13, s.h, s.w);
        net.nodes.push(Node::concat(&[a, b, a], c, 1));
        let ranges = [
            net.w(&mut rng, 13, 0.5, 1.5),
            net.w(&mut rng, 13, -0.5, 0.5),
            net.w(&mut rng, 13, -0.5, 0.5),
            net.w(&mut rng, 13, 0.1, 2.0),
        ];
        let s = net.shape(c);
        let d = net.unary(c, s, |x, y| Node::batch_norm(x, y, ranges, 1e-5));
        let pc = net.input(1, 13, 1, 1);
        let e = net.unary(d, s, |x, y| Node::add(x, pc, y, Broadcast::PerChannel));
        let sc = net.input(1, 1, 1, 1);
        let e2 = net.unary(e, s, |x, y| Node::add(x, sc, y, Broadcast::Scalar));
        net.outputs.push(e2);
        net.outputs.push(b);
        let (arena, sum) = check(&net, 1 << 20, 4);
        assert!(arena < sum);
        println!("concat batch {batch}: arena {arena} f32, naive sum {sum}");
    }
}

/// A plan of `net` (workspace budget 1 MiB) and its tensors' arena offsets.
fn offsets(net: &Net) -> Vec<Option<usize>> {
    let g = net.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, 1 << 20, &mut slots).unwrap();
    (0..net.tensors.len() as u32)
        .map(|t| plan.offset(t))
        .collect()
}

/// SqueezeNet's fire module: squeeze 1×1 → expand 1×1 and expand 3×3 → concat → conv. At batch
/// 1 the expand layers write into the concatenation (no copy): arena = squeeze + concat, where
/// copies need a block per expand output too; at batch 2 (channel runs not contiguous) the
/// concatenation copies. The same bits as the layers either way.
#[test]
fn fire_module_concat_in_place() {
    for batch in [1, 2] {
        let mut rng = Rng::new(21);
        let mut net = Net::default();
        let x = net.input(batch, 8, 9, 9);
        let sq = net.conv(&mut rng, x, 4, 1, 0, Activation::Relu);
        let e1 = net.conv(&mut rng, sq, 6, 1, 0, Activation::Relu);
        let e3 = net.conv(&mut rng, sq, 5, 3, 1, Activation::Relu);
        let c = net.t(batch, 11, 9, 9);
        net.nodes.push(Node::concat(&[e1, e3], c, 1));
        let y = net.conv(&mut rng, c, 3, 3, 1, Activation::None);
        net.outputs.push(y);
        let (arena, sum) = check(&net, 1 << 20, 7);
        let off = offsets(&net);
        let plane = 81 * batch;
        if batch == 1 {
            assert_eq!(off[e1 as usize], off[c as usize], "expand 1x1 in place");
            assert_eq!(off[e3 as usize], off[c as usize].map(|o| o + 6 * plane));
            assert_eq!(arena, (4 + 11) * plane, "squeeze + concat");
        } else {
            assert_ne!(off[e1 as usize], off[c as usize]);
            // sq + e1 + e3 live together, then the concatenation above them.
            assert_eq!(arena, (4 + 6 + 5 + 11) * plane);
        }
        println!("fire batch {batch}: arena {arena} f32, naive sum {sum}");
    }
}

/// Which inputs of a concatenation are written in place and which are copied, each case
/// against the layers bit for bit:
/// * `c1 = [a, r, b]`: `a` a conv output read again after `c1` (by `d`) and a graph output;
///   `r = relu(a)` a slice written from another slice of the same block (the relu copies
///   first: not in place); `b` a conv reading the slice `a`;
/// * `c2 = [c1, x, d]`: a concatenation and a graph input are copied, `d` written in place;
/// * `c3 = [e, e]`: an input twice is copied;
/// * `c4 = [f, g]` along H at N = C = 1 (contiguous runs): in place;
/// * `c5 = [h, fl]` along W: not contiguous, copied; `c6 = [fl, k]`: the Flatten output
///   `fl` is copied, the FC output `k` written in place;
/// * a Flatten of a slice, and a ReLU in place into a slice once its block is otherwise dead.
#[test]
fn concat_slices_and_copies() {
    let mut rng = Rng::new(31);
    let mut net = Net::default();
    let x = net.input(1, 3, 6, 6);
    let a = net.conv(&mut rng, x, 4, 3, 1, Activation::None);
    let r = net.act(a, Activation::Relu);
    let b = net.conv(&mut rng, a, 2, 1, 0, Activation::Sigmoid);
    let c1 = net.t(1, 10, 6, 6);
    net.nodes.push(Node::concat(&[a, r, b], c1, 1));
    let d = net.conv(&mut rng, a, 2, 1, 0, Activation::None);
    let c2 = net.t(1, 15, 6, 6);
    net.nodes.push(Node::concat(&[c1, x, d], c2, 1));
    let e = net.conv(&mut rng, c2, 3, 1, 0, Activation::None);
    let c3 = net.t(1, 6, 6, 6);
    net.nodes.push(Node::concat(&[e, e], c3, 1));
    let f = net.conv(&mut rng, c3, 1, 3, 1, Activation::None);
    let g = net.conv(&mut rng, c3, 1, 1, 0, Activation::Relu);
    let c4 = net.t(1, 1, 12, 6);
    net.nodes.push(Node::concat(&[f, g], c4, 2));
    let h = net.conv(&mut rng, c4, 2, 1, 0, Activation::None);
    let hs = net.shape(h);
    let fl = net.unary(h, Shape4::new(1, 2, hs.h, hs.w).unwrap(), |x, y| {
        Node::reshape(x, y)
    });
    let c5 = net.t(1, 2, 12, 12);
    net.nodes.push(Node::concat(&[h, fl], c5, 3));
    let fl2 = net.flatten(c4);
    let k = net.fc(&mut rng, fl2, 5);
    let c6 = net.t(1, 72 + 5, 1, 1);
    net.nodes.push(Node::concat(&[fl2, k], c6, 1));
    // A Flatten of a slice (an alias keeps the slice's offset), and a ReLU of a slice as the
    // last use of its concatenation's block: in place, into the slice.
    let gf = net.flatten(g);
    let p = net.conv(&mut rng, x, 2, 1, 0, Activation::None);
    let q = net.conv(&mut rng, x, 3, 1, 0, Activation::None);
    let c7 = net.t(1, 5, 6, 6);
    net.nodes.push(Node::concat(&[p, q], c7, 1));
    let m = net.conv(&mut rng, c7, 1, 1, 0, Activation::None);
    let qr = net.act(q, Activation::Relu);
    net.outputs.extend([c2, a, c5, c6, gf, m, qr]);
    check(&net, 1 << 20, 8);
    let off = offsets(&net);
    let at = |t: u32| off[t as usize];
    let plane = 36;
    let within = |t: u32, c: u32, o: usize| at(t) == at(c).map(|b| b + o);
    assert!(within(a, c1, 0) && within(r, c1, 4 * plane) && within(b, c1, 8 * plane));
    assert!(within(d, c2, 13 * plane), "d in place");
    assert!(!within(c1, c2, 0), "a concatenation is copied");
    assert!(
        !within(e, c3, 0) && !within(e, c3, 3 * plane),
        "e twice: copied"
    );
    assert!(
        within(f, c4, 0) && within(g, c4, plane),
        "H runs at N = C = 1"
    );
    assert!(!within(h, c5, 0), "W runs are not contiguous");
    assert!(
        !within(fl2, c6, 0) && within(k, c6, 72),
        "Flatten copied, FC in place"
    );
    assert_eq!(at(gf), at(g), "a Flatten of a slice");
    assert!(
        within(q, c7, 2 * plane) && at(qr) == at(q),
        "ReLU in place into a slice"
    );
}

/// 3 × 3 / 2 max pooling of 16 channels or more where the plan tells the pool its input was
/// just written by a convolution (planes over 16²: the row kernel at x86-64-v4), by a
/// Concat, or is a graph input (the 16-channel kernel): the same bits as the layer alone.
#[test]
fn max_pools_after_conv_concat_and_input() {
    for batch in [1, 2] {
        let mut rng = Rng::new(11);
        let mut net = Net::default();
        let x = net.input(batch, 3, 21, 20);
        let a = net.conv(&mut rng, x, 16, 3, 1, Activation::Relu);
        let b = net.conv(&mut rng, x, 8, 1, 0, Activation::None);
        let pa = net.max_pool3s2(a);
        let s = net.shape(a);
        let c = net.t(s.n, 24, s.h, s.w);
        net.nodes.push(Node::concat(&[a, b], c, 1));
        let pc = net.max_pool3s2(c);
        let z = net.input(batch, 17, 13, 13);
        let pz = net.max_pool3s2(z);
        net.outputs.extend([pa, pc, pz]);
        check(&net, 1 << 20, 5);
    }
}

/// Pad (reflect, then constant) then conv, average pooling, reduce-mean; and Flatten then FC
/// straight from a graph input (the flatten aliases the caller's slice).
#[test]
fn pad_then_conv_and_flatten_then_fc() {
    for batch in [1, 3] {
        let mut rng = Rng::new(13);
        let mut net = Net::default();
        let x = net.input(batch, 2, 7, 6);
        let pads = Pads {
            top: 1,
            left: 2,
            bottom: 2,
            right: 1,
        };
        let s = net.shape(x);
        let ps = Shape4::new(s.n, s.c, 10, 9).unwrap();
        let p = net.unary(x, ps, |x, y| Node::pad(x, y, &pads, PadMode::Reflect));
        let p2s = Shape4::new(s.n, s.c, 13, 12).unwrap();
        let p2 = net.unary(p, p2s, |x, y| {
            Node::pad(x, y, &pads, PadMode::Constant(0.5))
        });
        let c = net.conv(&mut rng, p2, 3, 3, 0, Activation::None);
        let cs = net.shape(c);
        let mut pool = Pool2dShape::new(cs.n, cs.c, cs.h, cs.w, 3, 3);
        pool.stride_h = 2;
        pool.stride_w = 2;
        pool.pad_top = 1;
        pool.ceil_mode = true;
        pool.count_include_pad = true;
        let d = pool.dims().unwrap();
        let ap = net.unary(
            c,
            Shape4::new(cs.n, cs.c, d.out_h, d.out_w).unwrap(),
            |x, y| Node::pool(x, y, &pool, false),
        );
        let aps = net.shape(ap);
        let rm = net.unary(ap, Shape4::new(aps.n, 1, 1, aps.w).unwrap(), |x, y| {
            Node::reduce_mean(x, y, [false, true, true, false])
        });
        let fl = net.flatten(x);
        let fc = net.fc(&mut rng, fl, 4);
        net.outputs.extend([rm, fc, fl]);
        let (arena, sum) = check(&net, 1 << 20, 6);
        assert!(arena < sum);
        println!("pad/flatten batch {batch}: arena {arena} f32, naive sum {sum}");
    }
}

/// Element-wise operators that must not run in place: on a graph input (read-only caller
/// memory), `t + t` (both operands one block), and an input that is read again later.
#[test]
fn element_wise_out_of_place() {
    let mut net = Net::default();
    let x = net.input(2, 3, 5, 4);
    let s = net.shape(x);
    let a = net.act(x, Activation::Sigmoid); // graph input: new block
    let b = net.unary(x, s, |x, y| Node::add(x, x, y, Broadcast::Same)); // graph input
    let c = net.unary(a, s, |a, y| Node::add(a, a, y, Broadcast::Same)); // a + a
    let d = net.act(b, Activation::Relu); // b read again below: not in place
    let e = net.unary(b, s, |b, y| Node::add(b, d, y, Broadcast::Same)); // b dies: in place
    let f = net.unary(e, s, |e, y| Node::add(e, c, y, Broadcast::Same));
    net.outputs.push(f);
    let g = net.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, 0, &mut slots).unwrap();
    let off = |t| plan.offset(t).unwrap();
    assert_ne!(off(c), off(a));
    assert_ne!(off(d), off(b));
    assert_eq!(off(e), off(b));
    assert_eq!(off(f), off(b));
    let (arena, sum) = check(&net, 0, 8);
    let l = s.elements().unwrap();
    // a, b, c live together at node 2; a dies there, so d reuses a's block: three blocks.
    assert_eq!((arena, sum), (3 * l, 6 * l));
}

fn valid() -> Net {
    chain(2, 21)
}

fn err(net: &Net) -> Error {
    let g = net.graph();
    let e = g.validate().unwrap_err();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    assert_eq!(make_plan(&g, 0, &mut slots).unwrap_err(), e);
    e
}

#[test]
fn validation_errors() {
    let base = valid();
    let mutate = |f: &dyn Fn(&mut Net)| {
        let mut n = base.clone();
        f(&mut n);
        err(&n)
    };
    let nt = base.tensors.len() as u32;
    assert_eq!(mutate(&|n| n.nodes[2].inputs[0] = nt), Error::OutOfBounds);
    // Reshape to another element count; MatMul ranks and shapes; broadcast mismatch.
    assert_eq!(
        mutate(&|n| {
            let x = n.nodes[0].output;
            let y = n.t(1, 1, 1, 1);
            n.nodes.push(Node::reshape(x, y));
        }),
        Error::SizeMismatch
    );
    let mm = |ra: u32, rb: u32, a: [usize; 4], b: [usize; 4], y: [usize; 4]| {
        let mut n = base.clone();
        let ta = n.input(a[0], a[1], a[2], a[3]);
        let tb = n.input(b[0], b[1], b[2], b[3]);
        let ty = n.t(y[0], y[1], y[2], y[3]);
        n.nodes.push(Node::matmul(ta, tb, ty, ra, rb));
        n.graph().validate()
    };
    assert_eq!(
        mutate(&|n| {
            let y = n.t(1, 2, 1, 1);
            n.nodes.push(Node::constant(y, WeightRange::new(0, 3)));
        }),
        Error::SizeMismatch,
        "a constant needs exactly its element count"
    );
    assert_eq!(mm(2, 3, [4, 5, 1, 1], [2, 5, 6, 1], [2, 4, 6, 1]), Ok(()));
    assert_eq!(mm(3, 2, [2, 4, 5, 1], [5, 6, 1, 1], [2, 4, 6, 1]), Ok(()));
    assert_eq!(mm(4, 3, [3, 2, 4, 5], [2, 5, 6, 1], [3, 2, 4, 6]), Ok(()));
    assert_eq!(mm(4, 4, [3, 1, 4, 5], [1, 2, 5, 6], [3, 2, 4, 6]), Ok(()));
    assert_eq!(
        mm(5, 2, [4, 5, 1, 1], [5, 6, 1, 1], [4, 6, 1, 1]),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        mm(1, 2, [4, 5, 1, 1], [5, 6, 1, 1], [4, 6, 1, 1]),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        mm(2, 2, [4, 5, 1, 1], [4, 6, 1, 1], [4, 6, 1, 1]),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        mm(2, 2, [4, 5, 2, 1], [5, 6, 1, 1], [4, 6, 1, 1]),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        mm(2, 2, [4, 5, 1, 1], [5, 6, 1, 1], [4, 6, 2, 1]),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        mm(3, 3, [2, 4, 5, 1], [3, 5, 6, 1], [3, 4, 6, 1]),
        Err(Error::SizeMismatch)
    );
    assert_eq!(
        mutate(&|n| {
            let x = n.nodes[0].output;
            let s = n.shape(x);
            let b = n.input(1, s.c + 1, 1, 1);
            let y = n.t(s.n, s.c, s.h, s.w);
            n.nodes.push(Node::binary_broadcast(BinaryOp::Mul, x, b, y));
        }),
        Error::SizeMismatch
    );
    assert_eq!(mutate(&|n| n.nodes[2].output = 99), Error::OutOfBounds);
    assert_eq!(mutate(&|n| n.outputs[0] = nt + 5), Error::OutOfBounds);
    assert_eq!(mutate(&|n| n.inputs[0] = nt), Error::OutOfBounds);
    // Out of order: node 1 swapped with node 2 reads a tensor written later.
    assert_eq!(mutate(&|n| n.nodes.swap(1, 2)), Error::NotInitialized);
    // A cycle: a node reading its own output, or a later node's.
    assert_eq!(
        mutate(&|n| n.nodes[1].inputs[0] = n.nodes[1].output),
        Error::NotInitialized
    );
    assert_eq!(
        mutate(&|n| n.nodes[1].inputs[0] = n.nodes[4].output),
        Error::SizeMismatch,
        "the shape check comes first for a mismatching later tensor"
    );
    assert_eq!(
        mutate(&|n| {
            // Node 1 reading a tensor of the right shape that nobody writes.
            let s = n.tensors[n.nodes[1].inputs[0] as usize];
            n.tensors.push(s);
            n.nodes[1].inputs[0] = n.tensors.len() as u32 - 1;
        }),
        Error::NotInitialized
    );
    assert_eq!(
        mutate(&|n| n.outputs[0] = {
            let s = n.tensors[0];
            n.tensors.push(s);
            n.tensors.len() as u32 - 1
        }),
        Error::NotInitialized
    );
    // Shapes.
    assert_eq!(mutate(&|n| n.tensors[1].c += 1), Error::SizeMismatch);
    assert_eq!(mutate(&|n| n.tensors[3].h -= 1), Error::SizeMismatch);
    assert_eq!(mutate(&|n| n.tensors[0].w = 0), Error::ZeroSize);
    assert_eq!(
        mutate(&|n| n.tensors[2] = TensorDesc::new(u32::MAX, u32::MAX, u32::MAX, u32::MAX)),
        Error::Overflow
    );
    // Weights.
    assert_eq!(
        mutate(&|n| n.nodes[0].weights[0].offset = n.weights.len() as u32),
        Error::OutOfBounds
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].weights[1].offset = u32::MAX),
        Error::OutOfBounds
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].weights[0].len -= 1),
        Error::SizeMismatch
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].weights[1].len += 1),
        Error::SizeMismatch
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].weights[0].len = 0),
        Error::SizeMismatch
    );
    // Op arguments.
    assert_eq!(mutate(&|n| n.nodes[3].op = 0), Error::InvalidArgument);
    assert_eq!(mutate(&|n| n.nodes[3].op = 14), Error::InvalidArgument);
    assert_eq!(
        mutate(&|n| n.nodes[3].input_count = 0),
        Error::InvalidArgument
    );
    assert_eq!(
        mutate(&|n| n.nodes[3].input_count = 2),
        Error::InvalidArgument
    );
    assert_eq!(
        mutate(&|n| {
            let s = n.tensors[n.nodes[1].output as usize];
            let y = n.tensors.len() as u32;
            n.tensors.push(TensorDesc::new(s.n, 5 * s.c, s.h, s.w));
            let t = n.nodes[1].output;
            n.nodes.push(Node::concat(&[t; 5], y, 1));
        }),
        Error::InvalidArgument,
        "five concat inputs"
    );
    assert_eq!(
        mutate(&|n| n.nodes[1].params[graph::P_ACT] = 7),
        Error::InvalidArgument
    );
    assert_eq!(
        mutate(&|n| {
            n.nodes[1].params[graph::P_ACT] = 3;
            n.nodes[1].params[graph::P_ACT_A] = 2.0f32.to_bits();
        }),
        Error::InvalidArgument,
        "Clip with min > max"
    );
    assert_eq!(
        mutate(&|n| n.nodes[1].params[graph::P_ACT] = 5),
        Error::InvalidArgument
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].params[graph::P_GROUPS] = 2),
        Error::InvalidArgument
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].params[graph::P_STRIDE_H] = 0),
        Error::ZeroSize
    );
    assert_eq!(
        mutate(&|n| n.nodes[0].params[graph::P_KH] = 40),
        Error::SizeMismatch
    );
    assert_eq!(
        mutate(&|n| n.nodes[2].params[graph::P_DILATION_H] = 2),
        Error::InvalidArgument
    );
    let last = base.nodes.len() - 1;
    assert_eq!(
        mutate(&|n| n.nodes[last].params[0] = 4),
        Error::InvalidArgument
    );
    // Graph structure.
    assert_eq!(
        mutate(&|n| n.nodes[1].output = n.nodes[0].output),
        Error::InvalidArgument
    );
    // A graph input that a node also writes.
    assert_eq!(
        mutate(&|n| n.inputs.push(n.nodes[0].output)),
        Error::InvalidArgument
    );
    assert_eq!(mutate(&|n| n.inputs.push(0)), Error::InvalidArgument);
    assert_eq!(mutate(&|n| n.nodes.clear()), Error::InvalidArgument);
    assert_eq!(mutate(&|n| n.outputs.clear()), Error::InvalidArgument);

    // Caller buffers of make_plan and forward.
    let g = base.graph();
    let mut few = vec![PlanSlot::EMPTY; plan_len(&g) - 1];
    assert_eq!(
        make_plan(&g, 0, &mut few).unwrap_err(),
        Error::BufferTooSmall
    );
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let plan = make_plan(&g, 1 << 20, &mut slots).unwrap();
    let x = vec![0.5f32; base.shape(0).elements().unwrap()];
    let mut y = [0.0f32; 10];
    let mut arena = vec![0.0f32; plan.arena_len()];
    let mut scratch = vec![0.0f32; plan.scratch_len()];
    let mut run = |x: &[&[f32]], arena_len: usize, scratch_len: usize, y_len: usize| {
        let mut outs: Vec<&mut [f32]> = vec![&mut y[..y_len]];
        forward(
            &g,
            &plan,
            x,
            &mut outs,
            &mut arena[..arena_len],
            &mut scratch[..scratch_len],
        )
    };
    let (al, sl) = (plan.arena_len(), plan.scratch_len());
    assert_eq!(run(&[&x], al, sl, 10), Ok(()));
    assert_eq!(run(&[&x], al - 1, sl, 10), Err(Error::BufferTooSmall));
    assert_eq!(run(&[&x], al, sl - 1, 10), Err(Error::BufferTooSmall));
    assert_eq!(run(&[&x], al, sl, 9), Err(Error::BufferTooSmall));
    assert_eq!(run(&[&x[1..]], al, sl, 10), Err(Error::BufferTooSmall));
    assert_eq!(run(&[], al, sl, 10), Err(Error::InvalidArgument));
    assert_eq!(run(&[&x, &x], al, sl, 10), Err(Error::InvalidArgument));
    // A plan of another graph.
    let other = chain(1, 21);
    let og = other.graph();
    let mut oslots = vec![PlanSlot::EMPTY; plan_len(&og) + 3];
    let oplan = make_plan(&og, 0, &mut oslots).unwrap();
    let mut outs: Vec<&mut [f32]> = vec![&mut y[..10]];
    let mut big = vec![0.0f32; 1 << 16];
    let mut big_s = vec![0.0f32; 1 << 16];
    let r = forward(&g, &oplan, &[&x], &mut outs, &mut big, &mut big_s);
    assert!(r.is_ok() || r == Err(Error::InvalidArgument), "{r:?}");
}

/// 500 random corruptions of one field of a valid graph (node words, tensor dimensions, input
/// and output ids): validation answers Ok or Err without panicking, and a graph that validates
/// plans and runs.
#[test]
fn fuzz_corruptions() {
    let base = valid();
    let mut rng = Rng::new(77);
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..500 {
        let mut n = base.clone();
        let v = match rng.below(5) {
            0 => 0,
            1 => 1 + rng.below(3) as u32,
            2 => rng.below(40) as u32,
            3 => u32::MAX - rng.below(2) as u32,
            _ => rng.next_u64() as u32,
        };
        match rng.below(4) {
            0 | 1 => {
                let k = rng.below(n.nodes.len());
                let words: &mut [u32] =
                    bytemuck::cast_slice_mut(std::slice::from_mut(&mut n.nodes[k]));
                let i = rng.below(words.len());
                words[i] = v;
            }
            2 => {
                let k = rng.below(n.tensors.len());
                let words: &mut [u32] =
                    bytemuck::cast_slice_mut(std::slice::from_mut(&mut n.tensors[k]));
                words[rng.below(4)] = v;
            }
            _ => {
                if rng.chance(1, 2) {
                    n.inputs[0] = v;
                } else {
                    n.outputs[0] = v;
                }
            }
        }
        let g = n.graph();
        let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
        match make_plan(&g, 1 << 16, &mut slots) {
            Err(e) => {
                assert_eq!(g.validate(), Err(e));
                bad += 1;
            }
            Ok(plan) => {
                ok += 1;
                if plan.arena_len() > 1 << 24 {
                    continue;
                }
                let ins: Vec<Vec<f32>> = n
                    .inputs
                    .iter()
                    .map(|&t| vec![0.25; n.shape(t).elements().unwrap()])
                    .collect();
                let ins: Vec<&[f32]> = ins.iter().map(|v| v.as_slice()).collect();
                let mut outs: Vec<Vec<f32>> = n
                    .outputs
                    .iter()
                    .map(|&t| vec![0.0; n.shape(t).elements().unwrap()])
                    .collect();
                let mut outs: Vec<&mut [f32]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
                let mut arena = vec![0.0f32; plan.arena_len()];
                let mut scratch = vec![0.0f32; plan.scratch_len()];
                forward(&g, &plan, &ins, &mut outs, &mut arena, &mut scratch).unwrap();
            }
        }
    }
    println!("fuzz: {ok} valid, {bad} rejected");
    assert!(bad > 250 && ok > 20, "{ok} ok, {bad} rejected");
}

/// `make_plan` and `forward` allocate nothing (direct convolutions: budget 0; the fully
/// connected layer's GEMM only without the `gemm` crate, which allocates its own packing).
#[test]
fn no_heap_use() {
    let net = if cfg!(feature = "gemm-crate") {
        let mut rng = Rng::new(1);
        let mut net = Net::default();
        let x = net.input(2, 3, 8, 8);
        let a = net.conv(&mut rng, x, 2, 3, 1, Activation::Relu);
        let a = net.max_pool(a, 2);
        let a = net.gap(a);
        net.outputs.push(a);
        net
    } else {
        chain(2, 3)
    };
    let g = net.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(&g)];
    let x = vec![0.5f32; net.shape(0).elements().unwrap()];
    let mut y = vec![0.0f32; 64];
    let mut arena = vec![0.0f32; 1 << 16];
    let mut scratch = vec![0.0f32; 1 << 16];
    let mut outs: Vec<&mut [f32]> = vec![&mut y];
    let before = counting_alloc::heap_calls();
    let plan = make_plan(&g, 0, &mut slots).unwrap();
    forward(&g, &plan, &[&x], &mut outs, &mut arena, &mut scratch).unwrap();
    assert_eq!(
        counting_alloc::heap_calls(),
        before,
        "make_plan or forward allocated"
    );
}

/// `cache_aligned` returns `len` elements from the first 64-byte boundary of a buffer at any
/// of the 16 `f32` positions in a cache line, which `len + CACHE_ALIGN_SLACK` elements always
/// hold, and `None` when the buffer ends one element short of them.
#[test]
fn cache_aligned_starts_on_a_line() {
    let mut buf = vec![0.0f32; 64 + 100 + CACHE_ALIGN_SLACK];
    for start in 0..16 {
        for len in [0, 1, 16, 100] {
            let b = &mut buf[start..][..len + CACHE_ALIGN_SLACK];
            let base = b.as_ptr() as usize;
            let s = cache_aligned(b, len).expect("len + CACHE_ALIGN_SLACK suffices");
            let at = s.as_ptr() as usize;
            assert_eq!((at % 64, s.len()), (0, len), "start {start}, len {len}");
            assert!(at >= base && at - base < 64, "start {start}, len {len}");
            let skip = (at - base) / 4;
            let short = &mut buf[start..][..skip + len];
            assert_eq!(cache_aligned(short, len).map(|s| s.len()), Some(len));
            if len > 0 {
                let short = &mut buf[start..][..skip + len - 1];
                assert!(
                    cache_aligned(short, len).is_none(),
                    "start {start}, len {len}"
                );
            }
        }
    }
}

/// `page_aligned` over a buffer of `len + page_align_slack(len)` elements: from the first
/// 2 MiB boundary when `len` fills a huge page (wherever the buffer starts), else from the first
/// 4 KiB one; the same elements on every call; a buffer too short for that start falls back to
/// the next smaller boundary (huge page, page, cache line), and `None` only when even the cache
/// line's start leaves too little room.
#[test]
fn page_aligned_starts_on_a_page() {
    const HUGE: usize = 2 << 20;
    let floats = HUGE / 4;
    let mut buf = vec![0.0f32; 4 * floats + 64];
    for start in [0, 1, 7, 16, 1000, floats / 2, floats - 3] {
        for len in [0, 1, 100, 5000, floats - 1, floats, floats + 5, 2 * floats] {
            let total = len + page_align_slack(len);
            let b = &mut buf[start..][..total];
            let base = b.as_ptr() as usize;
            let at = page_aligned(b, len).expect("the slack suffices").as_ptr() as usize;
            let want = if len >= floats { HUGE } else { PAGE_BYTES };
            assert_eq!(at % want, 0, "start {start}, len {len}");
            assert!(at >= base && at - base < want, "start {start}, len {len}");
            let again = page_aligned_ref(&buf[start..][..total], len).unwrap();
            assert_eq!((again.as_ptr() as usize, again.len()), (at, len));
            // One element short of that start: the next smaller boundary before it.
            if at - base >= 64 {
                let short = &mut buf[start..][..(at - base) / 4 + len - 1];
                let s = page_aligned(short, len).expect("room from a smaller boundary");
                let (got, next) = (
                    s.as_ptr() as usize,
                    if want == HUGE { PAGE_BYTES } else { 64 },
                );
                assert!(got < at && got % 64 == 0, "start {start}, len {len}");
                assert!(
                    got % next == 0 || got - base < next,
                    "start {start}, len {len}"
                );
            }
        }
    }
    // One element more than fits after the first cache line (at most 15 elements in).
    let b = &mut buf[..40];
    let line = b.as_ptr().align_offset(64);
    assert!(page_aligned(b, 40 - line + 1).is_none());
}
