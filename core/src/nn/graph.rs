//! The description of a CNN as data: tensors, nodes in topological order and one weight array,
//! laid out so that a flat little-endian file can later be viewed as it without copying (the
//! `.mvnn` format of issue 4): [`TensorDesc`] and [`Node`] are `#[repr(C)]` structs of `u32`
//! fields only ([`bytemuck::Pod`], no padding, no pointers), nodes reference tensors by index
//! and weights by `(offset, len)` [`WeightRange`]s into one `&[f32]`, and floating-point
//! parameters are stored as their IEEE-754 bits.
//!
//! A [`Graph`] is untrusted input: [`Graph::validate`] checks every index, range, shape and
//! operator argument, and the topological order (each node reads only graph inputs and outputs
//! of earlier nodes, so there can be no cycle), after which [`forward`](super::plan::forward)
//! can fail only on the caller's buffer sizes.
//!
//! Each node's parameters live in [`Node::params`]; the `P_*` constants name their slots per
//! operator, and the `Node::*` constructors fill them.

use super::activation::{check_activation, Activation};
use super::batchnorm::BatchNormParams;
use super::conv::Conv2dShape;
use super::elementwise::{broadcast_shape, BinaryOp, Broadcast};
use super::layout::{concat_shape, flatten_shape, pad_shape, PadMode, Pads};
use super::matmul::MatMulShape;
use super::pool::Pool2dShape;
use super::reduce::reduce_shape;
use super::tensor::Shape4;
use crate::error::{Error, Result};
use bytemuck::{Pod, Zeroable};

/// The shape of one tensor of the graph, NCHW, in elements (each dimension ≥ 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct TensorDesc {
    /// Batch size.
    pub n: u32,
    /// Channels.
    pub c: u32,
    /// Height.
    pub h: u32,
    /// Width.
    pub w: u32,
}

impl TensorDesc {
    /// A tensor of `n × c × h × w` elements.
    pub const fn new(n: u32, c: u32, h: u32, w: u32) -> Self {
        Self { n, c, h, w }
    }

    /// The shape as a [`Shape4`], checked.
    ///
    /// # Errors
    /// Those of [`Shape4::new`] (a zero dimension, an element count that overflows).
    pub fn shape(&self) -> Result<Shape4> {
        Shape4::new(
            self.n as usize,
            self.c as usize,
            self.h as usize,
            self.w as usize,
        )
    }
}

/// `len` consecutive `f32` values of [`Graph::weights`] from element `offset`; `len = 0` means
/// "absent" (no bias, no PReLU slopes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct WeightRange {
    /// First element, in `f32` elements from the start of the weights.
    pub offset: u32,
    /// Number of elements.
    pub len: u32,
}

impl WeightRange {
    /// The range `offset .. offset + len`.
    pub const fn new(offset: u32, len: u32) -> Self {
        Self { offset, len }
    }
}

/// Operator codes of [`Node::op`] (stable numbers: they will be stored in files).
pub mod op {
    /// 2-D convolution with bias and fused activation ([`conv2d_fused`](crate::nn::activation::conv2d_fused)).
    pub const CONV: u32 = 1;
    /// Max pooling.
    pub const MAX_POOL: u32 = 2;
    /// Average pooling.
    pub const AVG_POOL: u32 = 3;
    /// Global average pooling (output `n × c × 1 × 1`).
    pub const GLOBAL_AVG_POOL: u32 = 4;
    /// Fully connected layer over the input flattened at axis 1.
    pub const FULLY_CONNECTED: u32 = 5;
    /// Standalone activation.
    pub const ACTIVATION: u32 = 6;
    /// Softmax along one axis.
    pub const SOFTMAX: u32 = 7;
    /// Mean over a set of axes, `keepdims = 1`.
    pub const REDUCE_MEAN: u32 = 8;
    /// Addition of two tensors, the second broadcast.
    pub const ADD: u32 = 9;
    /// Concatenation of 1 to 4 tensors along one axis.
    pub const CONCAT: u32 = 10;
    /// Flatten: a new shape over the same data (no data moves).
    pub const FLATTEN: u32 = 11;
    /// Padding of H and W.
    pub const PAD: u32 = 12;
    /// Standalone batch normalisation.
    pub const BATCH_NORM: u32 = 13;
    /// Matrix product of two tensors (ONNX MatMul, ranks 2..=4 in [`P_AXIS`](super::P_AXIS) and
    /// [`P_RANK_B`](super::P_RANK_B), batch broadcasting).
    pub const MATMUL: u32 = 14;
    /// Reshape: any shape with the same element count over the same data (no data moves).
    pub const RESHAPE: u32 = 15;
    /// Subtraction of two tensors, broadcast as for [`ADD`].
    pub const SUB: u32 = 16;
    /// Multiplication of two tensors, broadcast as for [`ADD`].
    pub const MUL: u32 = 17;
    /// A constant tensor: no inputs, the output is [`W_MAIN`](super::W_MAIN)'s weights (an
    /// operand that an imported model computes at load time, such as a constant addend).
    pub const CONSTANT: u32 = 18;
}

/// Parameter slots of a convolution or pooling node ([`Node::params`]): kernel height and width,
/// strides, paddings (top, left, bottom, right), dilations (convolution) and groups.
pub const P_KH: usize = 0;
/// Kernel width (see [`P_KH`]).
pub const P_KW: usize = 1;
/// Vertical stride.
pub const P_STRIDE_H: usize = 2;
/// Horizontal stride.
pub const P_STRIDE_W: usize = 3;
/// Padding rows above (also for [`op::PAD`]).
pub const P_PAD_TOP: usize = 4;
/// Padding columns left.
pub const P_PAD_LEFT: usize = 5;
/// Padding rows below.
pub const P_PAD_BOTTOM: usize = 6;
/// Padding columns right.
pub const P_PAD_RIGHT: usize = 7;
/// Convolution: vertical dilation. Pooling: ceil mode (0 or 1).
pub const P_DILATION_H: usize = 8;
/// Convolution: horizontal dilation. Average pooling: `count_include_pad` (0 or 1).
pub const P_DILATION_W: usize = 9;
/// Convolution: groups.
pub const P_GROUPS: usize = 10;
/// Axis or mode slot: Softmax / Concat / Flatten axis; Add / Sub / Mul broadcast (0 same, 1 per
/// channel, 2 scalar, 3 numpy: each dimension of each operand equals the output's or is 1);
/// MatMul: rank of A (2..=4); Pad mode (0 constant, 1 edge, 2 reflect); BatchNorm ε (`f32` bits); ReduceMean
/// axes as bits (bit 0 = N … bit 3 = W).
pub const P_AXIS: usize = 0;
/// MatMul: rank of B (2..=4). An operand of rank `r` is stored as its ONNX dimensions followed
/// by `4 − r` ones; the output has rank `max(rank A, rank B)`.
pub const P_RANK_B: usize = 1;
/// Pad: the constant value (`f32` bits).
pub const P_PAD_VALUE: usize = 8;
/// Conv / Activation: activation kind (0 none, 1 Relu, 2 Relu6, 3 Clip, 4 LeakyRelu, 5 PRelu,
/// 6 Sigmoid).
pub const P_ACT: usize = 12;
/// Activation's first parameter (`f32` bits): Clip min, LeakyRelu alpha.
pub const P_ACT_A: usize = 13;
/// Activation's second parameter (`f32` bits): Clip max.
pub const P_ACT_B: usize = 14;

/// Weight slots of [`Node::weights`]: Conv / FullyConnected weights, BatchNorm γ.
pub const W_MAIN: usize = 0;
/// Conv / FullyConnected bias (len 0: none), BatchNorm β.
pub const W_BIAS: usize = 1;
/// PReLU slopes (Conv, Activation: 1 or `c` values), BatchNorm mean.
pub const W_SLOPES: usize = 2;
/// BatchNorm variance.
pub const W_VAR: usize = 3;

/// One operator application: reads `inputs[..input_count]`, writes tensor `output`.
/// 128 bytes, all `u32`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Node {
    /// Operator, one of the [`op`] codes.
    pub op: u32,
    /// Number of inputs used (1, 2 for Add / Sub / Mul / MatMul, 1..=4 for Concat, 0 for
    /// Constant).
    pub input_count: u32,
    /// Input tensor indices into [`Graph::tensors`].
    pub inputs: [u32; 4],
    /// Output tensor index.
    pub output: u32,
    /// Reserved, 0.
    pub reserved: u32,
    /// Operator parameters (slots `P_*`; `f32` values as bits).
    pub params: [u32; 16],
    /// Weight ranges (slots `W_*`).
    pub weights: [WeightRange; 4],
}

/// Encodes an activation into `params` ([`P_ACT`], [`P_ACT_A`], [`P_ACT_B`]).
fn put_act(p: &mut [u32; 16], act: Activation) {
    let (k, a, b) = match act {
        Activation::None => (0, 0.0, 0.0),
        Activation::Relu => (1, 0.0, 0.0),
        Activation::Relu6 => (2, 0.0, 0.0),
        Activation::Clip { min, max } => (3, min, max),
        Activation::LeakyRelu { alpha } => (4, alpha, 0.0),
        Activation::PRelu => (5, 0.0, 0.0),
        Activation::Sigmoid => (6, 0.0, 0.0),
    };
    p[P_ACT] = k;
    p[P_ACT_A] = f32::to_bits(a);
    p[P_ACT_B] = f32::to_bits(b);
}

impl Node {
    fn with(op: u32, inputs: &[u32], output: u32) -> Self {
        let mut n = Self {
            op,
            // More than 4 inputs keep their count, which `Graph::validate` rejects.
            input_count: inputs.len().min(u32::MAX as usize) as u32,
            output,
            ..Self::default()
        };
        for (d, &s) in n.inputs.iter_mut().zip(inputs) {
            *d = s;
        }
        n
    }

    /// A convolution of tensor `input` into `output` with the geometry of `conv` (its `n`,
    /// `c_in`, `h`, `w`, `c_out` are ignored: they come from the tensors), weights, optional bias
    /// (len 0: none), fused `act` and its PReLU slopes (len 0 unless PRelu).
    pub fn conv(
        input: u32,
        output: u32,
        conv: &Conv2dShape,
        weights: WeightRange,
        bias: WeightRange,
        act: Activation,
        slopes: WeightRange,
    ) -> Self {
        let mut n = Self::with(op::CONV, &[input], output);
        let c = conv;
        let vals = [
            c.kh,
            c.kw,
            c.stride_h,
            c.stride_w,
            c.pad_top,
            c.pad_left,
            c.pad_bottom,
            c.pad_right,
            c.dilation_h,
            c.dilation_w,
            c.groups,
        ];
        for (d, v) in n.params.iter_mut().zip(vals) {
            *d = v.min(u32::MAX as usize) as u32;
        }
        put_act(&mut n.params, act);
        n.weights[W_MAIN] = weights;
        n.weights[W_BIAS] = bias;
        n.weights[W_SLOPES] = slopes;
        n
    }

    /// Max (`max = true`) or average pooling with the geometry of `pool` (`n`, `c`, `h`, `w`
    /// ignored).
    pub fn pool(input: u32, output: u32, pool: &Pool2dShape, max: bool) -> Self {
        let code = if max { op::MAX_POOL } else { op::AVG_POOL };
        let mut n = Self::with(code, &[input], output);
        let p = pool;
        let vals = [
            p.kh,
            p.kw,
            p.stride_h,
            p.stride_w,
            p.pad_top,
            p.pad_left,
            p.pad_bottom,
            p.pad_right,
            p.ceil_mode as usize,
            p.count_include_pad as usize,
        ];
        for (d, v) in n.params.iter_mut().zip(vals) {
            *d = v.min(u32::MAX as usize) as u32;
        }
        n
    }

    /// Global average pooling.
    pub fn global_avg_pool(input: u32, output: u32) -> Self {
        Self::with(op::GLOBAL_AVG_POOL, &[input], output)
    }

    /// A fully connected layer (`out_features × in_features` weights, optional bias).
    pub fn fully_connected(
        input: u32,
        output: u32,
        weights: WeightRange,
        bias: WeightRange,
    ) -> Self {
        let mut n = Self::with(op::FULLY_CONNECTED, &[input], output);
        n.weights[W_MAIN] = weights;
        n.weights[W_BIAS] = bias;
        n
    }

    /// A standalone activation (PReLU slopes: len 0 unless PRelu).
    pub fn activation(input: u32, output: u32, act: Activation, slopes: WeightRange) -> Self {
        let mut n = Self::with(op::ACTIVATION, &[input], output);
        put_act(&mut n.params, act);
        n.weights[W_SLOPES] = slopes;
        n
    }

    /// Softmax along `axis` (0..=3).
    pub fn softmax(input: u32, output: u32, axis: u32) -> Self {
        let mut n = Self::with(op::SOFTMAX, &[input], output);
        n.params[P_AXIS] = axis;
        n
    }

    /// Mean over the axes marked in `axes` (`[n, c, h, w]`).
    pub fn reduce_mean(input: u32, output: u32, axes: [bool; 4]) -> Self {
        let mut n = Self::with(op::REDUCE_MEAN, &[input], output);
        n.params[P_AXIS] = axes
            .iter()
            .enumerate()
            .map(|(i, &a)| u32::from(a) << i)
            .sum();
        n
    }

    /// `output = a + b`, `b` broadcast as `bc` says.
    pub fn add(a: u32, b: u32, output: u32, bc: Broadcast) -> Self {
        Self::binary(BinaryOp::Add, a, b, output, bc)
    }

    /// `output = a ∘ b` for `bop`, `b` broadcast as `bc` says (`output` has `a`'s shape).
    pub fn binary(bop: BinaryOp, a: u32, b: u32, output: u32, bc: Broadcast) -> Self {
        let mut n = Self::with(binary_code(bop), &[a, b], output);
        n.params[P_AXIS] = match bc {
            Broadcast::Same => 0,
            Broadcast::PerChannel => 1,
            Broadcast::Scalar => 2,
        };
        n
    }

    /// `output = a ∘ b` for `bop` with numpy broadcasting of both operands (the tensors are
    /// already of rank 4: each dimension equals the output's or is 1).
    pub fn binary_broadcast(bop: BinaryOp, a: u32, b: u32, output: u32) -> Self {
        let mut n = Self::with(binary_code(bop), &[a, b], output);
        n.params[P_AXIS] = 3;
        n
    }

    /// `output = a·b` (ONNX MatMul) with `a` of rank `rank_a` and `b` of rank `rank_b`
    /// (2..=4 each, see [`P_RANK_B`]).
    pub fn matmul(a: u32, b: u32, output: u32, rank_a: u32, rank_b: u32) -> Self {
        let mut n = Self::with(op::MATMUL, &[a, b], output);
        n.params[P_AXIS] = rank_a;
        n.params[P_RANK_B] = rank_b;
        n
    }

    /// A constant tensor `output` holding `values` (exactly its element count).
    pub fn constant(output: u32, values: WeightRange) -> Self {
        let mut n = Self::with(op::CONSTANT, &[], output);
        n.weights[W_MAIN] = values;
        n
    }

    /// A reshape: `output` is `input`'s data under another shape of the same element count.
    pub fn reshape(input: u32, output: u32) -> Self {
        Self::with(op::RESHAPE, &[input], output)
    }

    /// Concatenation of `inputs` along `axis` (1 to 4 inputs; the node keeps the count of a
    /// longer list but only its first 4 ids, and [`Graph::validate`] rejects it).
    pub fn concat(inputs: &[u32], output: u32, axis: u32) -> Self {
        let mut n = Self::with(op::CONCAT, inputs, output);
        n.params[P_AXIS] = axis;
        n
    }

    /// ONNX Flatten at `axis` (0..=4); the output tensor is `rows × cols × 1 × 1`.
    pub fn flatten(input: u32, output: u32, axis: u32) -> Self {
        let mut n = Self::with(op::FLATTEN, &[input], output);
        n.params[P_AXIS] = axis;
        n
    }

    /// Padding of H and W.
    pub fn pad(input: u32, output: u32, pads: &Pads, mode: PadMode) -> Self {
        let mut n = Self::with(op::PAD, &[input], output);
        let vals = [pads.top, pads.left, pads.bottom, pads.right];
        for (d, v) in n.params[P_PAD_TOP..].iter_mut().zip(vals) {
            *d = v.min(u32::MAX as usize) as u32;
        }
        let (m, v) = match mode {
            PadMode::Constant(v) => (0, v),
            PadMode::Edge => (1, 0.0),
            PadMode::Reflect => (2, 0.0),
        };
        n.params[P_AXIS] = m;
        n.params[P_PAD_VALUE] = v.to_bits();
        n
    }

    /// Batch normalisation with per-channel γ, β, mean, variance ranges and `eps`.
    pub fn batch_norm(input: u32, output: u32, ranges: [WeightRange; 4], eps: f32) -> Self {
        let mut n = Self::with(op::BATCH_NORM, &[input], output);
        n.weights = ranges;
        n.params[P_AXIS] = eps.to_bits();
        n
    }
}

const fn binary_code(bop: BinaryOp) -> u32 {
    match bop {
        BinaryOp::Add => op::ADD,
        BinaryOp::Sub => op::SUB,
        BinaryOp::Mul => op::MUL,
    }
}

/// A CNN: tensors, nodes in topological order, weights, and which tensors are the graph's
/// inputs (provided by the caller of `forward`) and outputs (copied out by it).
#[derive(Clone, Copy, Debug)]
pub struct Graph<'a> {
    /// Every tensor's shape; indices are tensor ids.
    pub tensors: &'a [TensorDesc],
    /// The nodes, each reading only graph inputs and outputs of earlier nodes.
    pub nodes: &'a [Node],
    /// All weights, referenced by [`WeightRange`]s.
    pub weights: &'a [f32],
    /// Tensor ids of the graph inputs (distinct, produced by no node).
    pub inputs: &'a [u32],
    /// Tensor ids of the graph outputs (graph inputs or node outputs).
    pub outputs: &'a [u32],
}

/// A decoded, checked node: the typed operator with its shapes and weight slices.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op<'a> {
    Conv {
        shape: Conv2dShape,
        weights: &'a [f32],
        bias: Option<&'a [f32]>,
        act: Activation,
        slopes: Option<&'a [f32]>,
    },
    MaxPool(Pool2dShape),
    AvgPool(Pool2dShape),
    GlobalAvgPool(Shape4),
    FullyConnected {
        batch: usize,
        in_features: usize,
        out_features: usize,
        weights: &'a [f32],
        bias: Option<&'a [f32]>,
    },
    Activation {
        shape: Shape4,
        act: Activation,
        slopes: Option<&'a [f32]>,
    },
    Softmax(Shape4, usize),
    ReduceMean(Shape4, [bool; 4]),
    Binary(BinaryOp, Shape4, Broadcast),
    /// Numpy broadcasting: shapes of `a`, `b`, output.
    BinaryBroadcast(BinaryOp, Shape4, Shape4, Shape4),
    MatMul(MatMulShape),
    Reshape,
    Constant(&'a [f32]),
    Concat(usize),
    Flatten,
    Pad(Shape4, Pads, PadMode),
    BatchNorm(Shape4, BatchNormParams<'a>),
}

impl<'a> Op<'a> {
    /// Whether the output may take the first input's memory (element-wise, same size).
    pub(crate) fn in_place(&self) -> bool {
        match self {
            Op::BinaryBroadcast(_, a, _, y) => a == y,
            _ => matches!(
                self,
                Op::Activation { .. } | Op::Softmax(..) | Op::Binary(..) | Op::BatchNorm(..)
            ),
        }
    }

    /// Whether the output is the input's memory under another shape (no data moves).
    pub(crate) const fn alias(&self) -> bool {
        matches!(self, Op::Flatten | Op::Reshape)
    }
}

fn act_of(p: &[u32; 16]) -> Result<Activation> {
    let (a, b) = (f32::from_bits(p[P_ACT_A]), f32::from_bits(p[P_ACT_B]));
    Ok(match p[P_ACT] {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::Relu6,
        3 => Activation::Clip { min: a, max: b },
        4 => Activation::LeakyRelu { alpha: a },
        5 => Activation::PRelu,
        6 => Activation::Sigmoid,
        _ => return Err(Error::InvalidArgument),
    })
}

fn flag(v: u32) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::InvalidArgument),
    }
}

/// A MatMul operand of rank `rank` (2..=4) stored as `x`: its two batch dimensions (leading 1s
/// for lower ranks), rows and columns.
fn matrices(x: &Shape4, rank: usize) -> Result<([usize; 2], usize, usize)> {
    if !(2..=4).contains(&rank) {
        return Err(Error::InvalidArgument);
    }
    let d = [x.n, x.c, x.h, x.w];
    if d[rank..].iter().any(|&v| v != 1) {
        return Err(Error::SizeMismatch);
    }
    let mut full = [1; 4];
    full[4 - rank..].copy_from_slice(&d[..rank]);
    Ok(([full[0], full[1]], full[2], full[3]))
}

fn same(a: Shape4, b: Shape4) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::SizeMismatch)
    }
}

impl<'a> Graph<'a> {
    /// The checked shape of tensor `id`.
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] if `id` is not a tensor; those of [`TensorDesc::shape`].
    pub fn shape(&self, id: u32) -> Result<Shape4> {
        self.tensors
            .get(id as usize)
            .ok_or(Error::OutOfBounds)?
            .shape()
    }

    /// The weights of `r`, `None` if `r.len == 0`.
    fn range(&self, r: WeightRange) -> Result<Option<&'a [f32]>> {
        if r.len == 0 {
            return Ok(None);
        }
        let start = r.offset as usize;
        let end = start.checked_add(r.len as usize).ok_or(Error::Overflow)?;
        self.weights
            .get(start..end)
            .map(Some)
            .ok_or(Error::OutOfBounds)
    }

    /// The weights of `r`, which must hold exactly `len` values (`len ≥ 1`).
    fn exact(&self, r: WeightRange, len: usize) -> Result<&'a [f32]> {
        match self.range(r)? {
            Some(w) if w.len() == len => Ok(w),
            _ => Err(Error::SizeMismatch),
        }
    }

    /// Optional weights of `r`: absent, or exactly `len` values.
    fn optional(&self, r: WeightRange, len: usize) -> Result<Option<&'a [f32]>> {
        match self.range(r)? {
            None => Ok(None),
            Some(w) if w.len() == len => Ok(Some(w)),
            Some(_) => Err(Error::SizeMismatch),
        }
    }

    /// Decodes and checks node `node` against its tensors' shapes and the weights (not the
    /// order: see [`Graph::validate`]).
    pub(crate) fn decode(&self, node: &Node) -> Result<Op<'a>> {
        let count = node.input_count as usize;
        let (lo, hi) = match node.op {
            op::ADD | op::MATMUL | op::SUB | op::MUL => (2, 2),
            op::CONCAT => (1, 4),
            op::CONSTANT => (0, 0),
            op::CONV..=op::BATCH_NORM | op::RESHAPE => (1, 1),
            _ => return Err(Error::InvalidArgument),
        };
        if count < lo || count > hi {
            return Err(Error::InvalidArgument);
        }
        let y = self.shape(node.output)?;
        let wr = &node.weights;
        if node.op == op::CONSTANT {
            return Ok(Op::Constant(self.exact(wr[W_MAIN], y.elements()?)?));
        }
        let x = self.shape(node.inputs[0])?;
        let p = &node.params;
        let us = |i: usize| p[i] as usize;
        Ok(match node.op {
            op::CONV => {
                let shape = Conv2dShape {
                    n: x.n,
                    c_in: x.c,
                    h: x.h,
                    w: x.w,
                    c_out: y.c,
                    kh: us(P_KH),
                    kw: us(P_KW),
                    stride_h: us(P_STRIDE_H),
                    stride_w: us(P_STRIDE_W),
                    pad_top: us(P_PAD_TOP),
                    pad_left: us(P_PAD_LEFT),
                    pad_bottom: us(P_PAD_BOTTOM),
                    pad_right: us(P_PAD_RIGHT),
                    dilation_h: us(P_DILATION_H),
                    dilation_w: us(P_DILATION_W),
                    groups: us(P_GROUPS),
                };
                let d = shape.dims()?;
                same(y, Shape4::new(x.n, y.c, d.out_h, d.out_w)?)?;
                let act = act_of(p)?;
                let slopes = self.range(wr[W_SLOPES])?;
                if let Some(s) = slopes {
                    if s.len() != 1 && s.len() != y.c {
                        return Err(Error::SizeMismatch);
                    }
                }
                check_activation(act, y.c, slopes)?;
                Op::Conv {
                    shape,
                    weights: self.exact(wr[W_MAIN], d.weight_len)?,
                    bias: self.optional(wr[W_BIAS], y.c)?,
                    act,
                    slopes,
                }
            }
            op::MAX_POOL | op::AVG_POOL => {
                let shape = Pool2dShape {
                    n: x.n,
                    c: x.c,
                    h: x.h,
                    w: x.w,
                    kh: us(P_KH),
                    kw: us(P_KW),
                    stride_h: us(P_STRIDE_H),
                    stride_w: us(P_STRIDE_W),
                    pad_top: us(P_PAD_TOP),
                    pad_left: us(P_PAD_LEFT),
                    pad_bottom: us(P_PAD_BOTTOM),
                    pad_right: us(P_PAD_RIGHT),
                    ceil_mode: flag(p[P_DILATION_H])?,
                    count_include_pad: flag(p[P_DILATION_W])?,
                };
                let d = shape.dims()?;
                same(y, Shape4::new(x.n, x.c, d.out_h, d.out_w)?)?;
                if node.op == op::MAX_POOL {
                    Op::MaxPool(shape)
                } else {
                    Op::AvgPool(shape)
                }
            }
            op::GLOBAL_AVG_POOL => {
                same(y, Shape4::new(x.n, x.c, 1, 1)?)?;
                Op::GlobalAvgPool(x)
            }
            op::FULLY_CONNECTED => {
                let (batch, in_features) = flatten_shape(&x, 1)?;
                let (ob, out_features) = flatten_shape(&y, 1)?;
                if ob != batch {
                    return Err(Error::SizeMismatch);
                }
                let wl = in_features
                    .checked_mul(out_features)
                    .ok_or(Error::Overflow)?;
                Op::FullyConnected {
                    batch,
                    in_features,
                    out_features,
                    weights: self.exact(wr[W_MAIN], wl)?,
                    bias: self.optional(wr[W_BIAS], out_features)?,
                }
            }
            op::ACTIVATION => {
                same(y, x)?;
                let act = act_of(p)?;
                let slopes = self.range(wr[W_SLOPES])?;
                if let Some(s) = slopes {
                    if s.len() != 1 && s.len() != x.c {
                        return Err(Error::SizeMismatch);
                    }
                }
                check_activation(act, x.c, slopes)?;
                Op::Activation {
                    shape: x,
                    act,
                    slopes,
                }
            }
            op::SOFTMAX => {
                same(y, x)?;
                if p[P_AXIS] > 3 {
                    return Err(Error::InvalidArgument);
                }
                Op::Softmax(x, us(P_AXIS))
            }
            op::REDUCE_MEAN => {
                let bits = p[P_AXIS];
                if bits > 0xF {
                    return Err(Error::InvalidArgument);
                }
                let axes = [0, 1, 2, 3].map(|i| bits & (1 << i) != 0);
                same(y, reduce_shape(&x, axes))?;
                Op::ReduceMean(x, axes)
            }
            op::ADD | op::SUB | op::MUL => {
                let bop = match node.op {
                    op::ADD => BinaryOp::Add,
                    op::SUB => BinaryOp::Sub,
                    _ => BinaryOp::Mul,
                };
                let b = self.shape(node.inputs[1])?;
                if p[P_AXIS] == 3 {
                    same(y, broadcast_shape(&x, &b)?)?;
                    return Ok(Op::BinaryBroadcast(bop, x, b, y));
                }
                same(y, x)?;
                let bl = b.elements()?;
                let bc = match p[P_AXIS] {
                    0 => {
                        same(b, x)?;
                        Broadcast::Same
                    }
                    1 if bl == x.c => Broadcast::PerChannel,
                    2 if bl == 1 => Broadcast::Scalar,
                    1 | 2 => return Err(Error::SizeMismatch),
                    _ => return Err(Error::InvalidArgument),
                };
                Op::Binary(bop, x, bc)
            }
            op::MATMUL => {
                let b = self.shape(node.inputs[1])?;
                let (ra, rb) = (p[P_AXIS] as usize, p[P_RANK_B] as usize);
                let (ab, m, k) = matrices(&x, ra)?;
                let (bb, k2, n) = matrices(&b, rb)?;
                if k != k2 {
                    return Err(Error::SizeMismatch);
                }
                let shape = MatMulShape {
                    a_batch: ab,
                    b_batch: bb,
                    m,
                    k,
                    n,
                };
                let d = shape.dims()?;
                let ro = ra.max(rb);
                let full = [d.out_batch[0], d.out_batch[1], m, n];
                let mut o = [1; 4];
                o[..ro].copy_from_slice(&full[4 - ro..]);
                same(y, Shape4::new(o[0], o[1], o[2], o[3])?)?;
                Op::MatMul(shape)
            }
            op::RESHAPE => {
                if y.elements()? != x.elements()? {
                    return Err(Error::SizeMismatch);
                }
                Op::Reshape
            }
            op::CONCAT => {
                let mut shapes = [x; 4];
                for (s, &id) in shapes.iter_mut().zip(&node.inputs[..count]) {
                    *s = self.shape(id)?;
                }
                if p[P_AXIS] > 3 {
                    return Err(Error::InvalidArgument);
                }
                same(y, concat_shape(&shapes[..count], us(P_AXIS))?)?;
                Op::Concat(us(P_AXIS))
            }
            op::FLATTEN => {
                if p[P_AXIS] > 4 {
                    return Err(Error::InvalidArgument);
                }
                let (rows, cols) = flatten_shape(&x, us(P_AXIS))?;
                same(y, Shape4::new(rows, cols, 1, 1)?)?;
                Op::Flatten
            }
            op::PAD => {
                let pads = Pads {
                    top: us(P_PAD_TOP),
                    left: us(P_PAD_LEFT),
                    bottom: us(P_PAD_BOTTOM),
                    right: us(P_PAD_RIGHT),
                };
                let mode = match p[P_AXIS] {
                    0 => PadMode::Constant(f32::from_bits(p[P_PAD_VALUE])),
                    1 => PadMode::Edge,
                    2 => PadMode::Reflect,
                    _ => return Err(Error::InvalidArgument),
                };
                if mode == PadMode::Reflect
                    && (pads.top.max(pads.bottom) >= x.h || pads.left.max(pads.right) >= x.w)
                {
                    return Err(Error::InvalidArgument);
                }
                same(y, pad_shape(&x, &pads)?)?;
                Op::Pad(x, pads, mode)
            }
            _ => {
                // op::BATCH_NORM (the only code left).
                same(y, x)?;
                let bn = BatchNormParams {
                    gamma: self.exact(wr[0], x.c)?,
                    beta: self.exact(wr[1], x.c)?,
                    mean: self.exact(wr[2], x.c)?,
                    var: self.exact(wr[3], x.c)?,
                    eps: f32::from_bits(p[P_AXIS]),
                };
                bn.check(x.c)?;
                Op::BatchNorm(x, bn)
            }
        })
    }

    /// Checks the whole graph, so that planning and [`forward`](super::plan::forward) cannot
    /// fail on it except for the caller's buffer sizes.
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`]: no nodes, inputs or outputs; an unknown op code; an input
    ///   count outside the operator's range; an operator argument out of range (axis, mode, MatMul rank,
    ///   activation kind or its parameters, flags other than 0/1, Reflect padding not smaller
    ///   than the input); a tensor that is a graph input twice, or both a graph input and a node
    ///   output, or the output of two nodes;
    /// * [`Error::OutOfBounds`]: a tensor id outside [`Graph::tensors`], a weight range outside
    ///   [`Graph::weights`];
    /// * [`Error::NotInitialized`]: a node reads, or the graph outputs, a tensor that is neither
    ///   a graph input nor the output of an earlier node (out of order, or a cycle);
    /// * [`Error::SizeMismatch`]: an output shape other than the operator computes from its
    ///   inputs, a weight range of the wrong length, a kernel larger than its padded input;
    /// * [`Error::ZeroSize`] / [`Error::Overflow`]: a tensor with a zero dimension or too many
    ///   elements, or geometry with zero sizes (those of the layer shape functions).
    ///
    /// Costs `O(N²)` for `N` nodes (each read is looked up among the earlier nodes' outputs).
    pub fn validate(&self) -> Result<()> {
        if self.nodes.is_empty() || self.inputs.is_empty() || self.outputs.is_empty() {
            return Err(Error::InvalidArgument);
        }
        for t in self.tensors {
            t.shape()?;
        }
        for (i, &t) in self.inputs.iter().enumerate() {
            self.shape(t)?;
            if self.inputs[..i].contains(&t) {
                return Err(Error::InvalidArgument);
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            self.decode(node)?;
            let count = node.input_count as usize;
            for &t in &node.inputs[..count] {
                if !self.defined_before(t, i) {
                    return Err(Error::NotInitialized);
                }
            }
            if self.inputs.contains(&node.output) || self.produced_before(node.output, i) {
                return Err(Error::InvalidArgument);
            }
        }
        for &t in self.outputs {
            self.shape(t)?;
            if !self.defined_before(t, self.nodes.len()) {
                return Err(Error::NotInitialized);
            }
        }
        Ok(())
    }

    /// Whether `t` is written by one of the first `before` nodes.
    fn produced_before(&self, t: u32, before: usize) -> bool {
        self.nodes[..before].iter().any(|n| n.output == t)
    }

    /// Whether `t` is a graph input or written by one of the first `before` nodes.
    fn defined_before(&self, t: u32, before: usize) -> bool {
        self.inputs.contains(&t) || self.produced_before(t, before)
    }
}
