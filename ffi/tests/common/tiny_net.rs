//! The tiny network of the `mv_net` tests (`net.rs`) and of the committed C test model: built
//! with the core's graph builders, its fixed inputs, and the core's own outputs for them.

use mvision_core::nn::activation::Activation;
use mvision_core::nn::conv::Conv2dShape;
use mvision_core::nn::elementwise::Broadcast;
use mvision_core::nn::graph::{Graph, Node, TensorDesc, WeightRange};
use mvision_core::nn::model::{encode, encoded_len};
use mvision_core::nn::plan::{forward, make_plan, plan_len, PlanSlot};
use mvision_core::nn::pool::Pool2dShape;
use mvision_core::rng::SplitMix64;

/// image (1×2×6×6) → conv 3×3 pad 1 → 3 channels, + bias input (per channel) → ReLU →
/// max-pool 2 → "pooled" (1×3×3×3) → flatten → fully connected 27 → 4 → softmax → "probs".
pub struct Tiny {
    tensors: Vec<TensorDesc>,
    nodes: Vec<Node>,
    weights: Vec<f32>,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

/// Names of the graph inputs.
pub const INPUT_NAMES: [&str; 2] = ["image", "bias"];
/// Names of the graph outputs.
pub const OUTPUT_NAMES: [&str; 2] = ["probs", "pooled"];

impl Tiny {
    pub fn new() -> Self {
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

    pub fn graph(&self) -> Graph<'_> {
        Graph {
            tensors: &self.tensors,
            nodes: &self.nodes,
            weights: &self.weights,
            inputs: &self.inputs,
            outputs: &self.outputs,
        }
    }

    pub fn encode_with(&self, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
        let g = self.graph();
        let mut file = vec![0u8; encoded_len(&g, inputs, outputs).unwrap()];
        encode(&g, inputs, outputs, &mut file).unwrap();
        file
    }

    pub fn file(&self) -> Vec<u8> {
        self.encode_with(&INPUT_NAMES, &OUTPUT_NAMES)
    }
}

/// The fixed inputs of the C tests (the same formulas are in `cmake/examples/test_net.c`).
pub fn fixed_inputs() -> (Vec<f32>, Vec<f32>) {
    let image = (0..72u32)
        .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
        .collect();
    let bias = (0..3).map(|c| 0.25 * c as f32 - 0.25).collect();
    (image, bias)
}

/// The core's own outputs for `inputs` under `budget`: the reference of every comparison.
pub fn core_forward(t: &Tiny, budget: usize, inputs: &[&[f32]]) -> Vec<Vec<f32>> {
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
