//! The conversion proper: walks the ONNX nodes in order, infers every shape, turns constant
//! initializers into weights, and emits core [`Node`]s, fusing Conv + activation and folding
//! BatchNormalization into a preceding Conv where the Conv's output has no other consumer.

use std::collections::HashMap;

use mvision_core::nn::activation::Activation;
use mvision_core::nn::batchnorm::{fold_batch_norm, BatchNormParams};
use mvision_core::nn::conv::Conv2dShape;
use mvision_core::nn::elementwise::{binary_broadcast, BinaryOp, Broadcast};
use mvision_core::nn::graph::{Node, TensorDesc, WeightRange};
use mvision_core::nn::layout::{PadMode, Pads};
use mvision_core::nn::pool::Pool2dShape;
use mvision_core::nn::tensor::Shape4;
use onnx_protobuf::NodeProto;

use crate::onnx::{tensor_data, Attrs, Data};
use crate::{ConvertError, Stats};

const NONE: WeightRange = WeightRange::new(0, 0);

/// A value of the ONNX graph: a tensor of the engine graph, or a constant known at conversion.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// Engine tensor `id` with these ONNX dimensions (rank ≤ 4).
    Dyn { id: u32, dims: Vec<usize> },
    /// A constant.
    Const { dims: Vec<usize>, data: Data },
}

impl Value {
    fn dims(&self) -> &[usize] {
        match self {
            Value::Dyn { dims, .. } | Value::Const { dims, .. } => dims,
        }
    }
}

/// A convolution node emitted so far, kept so that a following activation or batch
/// normalisation can be merged into it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConvInfo {
    node: usize,
    input: u32,
    output: u32,
    shape: Conv2dShape,
    weights: WeightRange,
    bias: WeightRange,
    fused: bool,
}

/// The engine graph under construction.
#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) tensors: Vec<TensorDesc>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) weights: Vec<f32>,
    pub(crate) stats: Stats,
    pub(crate) values: HashMap<String, Value>,
    /// Uses of each ONNX value name (node inputs and graph outputs).
    pub(crate) uses: HashMap<String, usize>,
    /// Convolutions by output tensor id.
    pub(crate) convs: HashMap<u32, ConvInfo>,
    pub(crate) opset: i64,
}

/// The 4-D descriptor of ONNX dimensions: trailing 1s (module docs of the crate).
fn desc4(dims: &[usize]) -> [usize; 4] {
    let mut d = [1; 4];
    d[..dims.len()].copy_from_slice(dims);
    d
}

/// `dims` right-aligned to `rank` (leading 1s), numpy style.
fn align(dims: &[usize], rank: usize) -> Vec<usize> {
    let mut v = vec![1; rank - dims.len()];
    v.extend_from_slice(dims);
    v
}

fn product(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// Context for a node's errors.
pub(crate) struct Ctx<'a> {
    pub(crate) node: &'a NodeProto,
    pub(crate) name: String,
}

impl Ctx<'_> {
    fn unsupported(&self, reason: impl Into<String>) -> ConvertError {
        ConvertError::Unsupported {
            node: self.name.clone(),
            op: self.node.op_type.clone(),
            reason: reason.into(),
        }
    }

    fn invalid(&self, reason: impl Into<String>) -> ConvertError {
        ConvertError::Invalid {
            at: format!("node {} ({})", self.name, self.node.op_type),
            reason: reason.into(),
        }
    }

    fn core(&self, error: mvision_core::Error) -> ConvertError {
        ConvertError::Core {
            context: format!("node {} ({})", self.name, self.node.op_type),
            error,
        }
    }

    fn input_name(&self, k: usize) -> Option<&str> {
        self.node
            .input
            .get(k)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// A normalised axis for rank `rank` (`-rank..rank`).
    fn axis(&self, axis: i64, rank: usize) -> Result<usize, ConvertError> {
        let r = rank as i64;
        let a = if axis < 0 { axis + r } else { axis };
        if (0..r).contains(&a) {
            Ok(a as usize)
        } else {
            Err(self.invalid(format!("axis {axis} outside rank {rank}")))
        }
    }
}

/// Padding `(begin, end)` of one spatial axis under ONNX `auto_pad`.
fn auto_pad(
    mode: &str,
    size: usize,
    k: usize,
    stride: usize,
    dilation: usize,
    explicit: (usize, usize),
) -> Option<(usize, usize)> {
    match mode {
        "NOTSET" => Some(explicit),
        "VALID" => Some((0, 0)),
        "SAME_UPPER" | "SAME_LOWER" => {
            let out = size.div_ceil(stride.max(1));
            let span = (k.max(1) - 1) * dilation + 1;
            let total = ((out.max(1) - 1) * stride + span).saturating_sub(size);
            let small = total / 2;
            Some(if mode == "SAME_UPPER" {
                (small, total - small)
            } else {
                (total - small, small)
            })
        }
        _ => None,
    }
}

impl Builder {
    fn tensor(&mut self, dims: &[usize]) -> u32 {
        let d = desc4(dims).map(|v| v.min(u32::MAX as usize) as u32);
        self.tensors.push(TensorDesc::new(d[0], d[1], d[2], d[3]));
        self.tensors.len() as u32 - 1
    }

    fn store(&mut self, data: &[f32]) -> WeightRange {
        let r = WeightRange::new(self.weights.len() as u32, data.len() as u32);
        self.weights.extend_from_slice(data);
        r
    }

    fn value(&self, name: &str) -> Result<&Value, ConvertError> {
        self.values
            .get(name)
            .ok_or_else(|| ConvertError::MissingValue {
                name: name.to_string(),
            })
    }

    fn input(&self, c: &Ctx<'_>, k: usize) -> Result<Value, ConvertError> {
        let name = c
            .input_name(k)
            .ok_or_else(|| c.invalid(format!("input {k} is missing")))?;
        self.value(name).cloned()
    }

    fn opt_input(&self, c: &Ctx<'_>, k: usize) -> Result<Option<Value>, ConvertError> {
        match c.input_name(k) {
            None => Ok(None),
            Some(name) => self.value(name).cloned().map(Some),
        }
    }

    /// Input `k`, which must be an engine tensor: `(id, dims)`.
    fn dyn_input(&self, c: &Ctx<'_>, k: usize) -> Result<(u32, Vec<usize>), ConvertError> {
        match self.input(c, k)? {
            Value::Dyn { id, dims } => Ok((id, dims)),
            Value::Const { .. } => Err(c.unsupported(format!(
                "input {k} is a constant (constant folding of this operator is not supported)"
            ))),
        }
    }

    /// Input `k`, which must be a float constant: `(dims, values)`.
    fn const_f(&self, c: &Ctx<'_>, k: usize) -> Result<(Vec<usize>, Vec<f32>), ConvertError> {
        match self.input(c, k)? {
            Value::Const {
                dims,
                data: Data::F(v),
            } => Ok((dims, v)),
            Value::Const { .. } => Err(c.invalid(format!("input {k} must be float"))),
            Value::Dyn { .. } => Err(c.unsupported(format!(
                "input {k} must be a constant initializer (it is computed by the graph)"
            ))),
        }
    }

    /// Optional input `k` as integer constants.
    fn const_i(&self, c: &Ctx<'_>, k: usize) -> Result<Option<Vec<i64>>, ConvertError> {
        match self.opt_input(c, k)? {
            None => Ok(None),
            Some(Value::Const {
                data: Data::I(v), ..
            }) => Ok(Some(v)),
            Some(Value::Const { .. }) => Err(c.invalid(format!("input {k} must be integer"))),
            Some(Value::Dyn { .. }) => Err(c.unsupported(format!(
                "input {k} must be a constant initializer (it is computed by the graph)"
            ))),
        }
    }

    fn set_output(&mut self, c: &Ctx<'_>, k: usize, v: Value) {
        if let Some(name) = c.node.output.get(k).filter(|s| !s.is_empty()) {
            self.values.insert(name.clone(), v);
        }
    }

    fn set_dyn(&mut self, c: &Ctx<'_>, id: u32, dims: Vec<usize>) {
        self.set_output(c, 0, Value::Dyn { id, dims });
    }

    /// Rejects uses of outputs past the first `n`.
    fn only_outputs(&self, c: &Ctx<'_>, n: usize) -> Result<(), ConvertError> {
        if c.node.output.iter().skip(n).any(|o| !o.is_empty()) {
            return Err(c.unsupported(format!("only the first {n} output(s) are supported")));
        }
        Ok(())
    }

    /// `v` as an engine tensor whose 4-D descriptor is `desc4(dims)` (same element count):
    /// a Reshape alias of a tensor stored otherwise, a Constant node for a constant.
    fn materialize(&mut self, c: &Ctx<'_>, v: &Value, dims: &[usize]) -> Result<u32, ConvertError> {
        if dims.len() > 4 {
            return Err(c.unsupported(format!("a tensor of rank {} (at most 4)", dims.len())));
        }
        match v {
            Value::Dyn { id, dims: vd } => {
                if desc4(vd) == desc4(dims) {
                    Ok(*id)
                } else {
                    let y = self.tensor(dims);
                    self.nodes.push(Node::reshape(*id, y));
                    Ok(y)
                }
            }
            Value::Const { data, .. } => {
                let Data::F(f) = data else {
                    return Err(c.unsupported("an integer tensor used as data"));
                };
                let f = f.clone();
                let r = self.store(&f);
                let y = self.tensor(dims);
                self.nodes.push(Node::constant(y, r));
                Ok(y)
            }
        }
    }

    /// Whether ONNX value `name` is read exactly once (and is not a graph output).
    fn single_use(&self, name: &str) -> bool {
        self.uses.get(name).copied() == Some(1)
    }

    /// The not yet fused convolution writing tensor `id`, if its output (ONNX value `name`) has
    /// no other consumer.
    fn fusable_conv(&self, id: u32, name: &str) -> Option<ConvInfo> {
        self.convs
            .get(&id)
            .copied()
            .filter(|ci| !ci.fused && self.single_use(name))
    }

    pub(crate) fn node(&mut self, c: &Ctx<'_>) -> Result<(), ConvertError> {
        let a = Attrs::new(c.node, &c.name);
        match c.node.op_type.as_str() {
            "Identity" | "Dropout" => {
                if c.node.op_type == "Dropout" {
                    self.only_outputs(c, 1)?;
                    if let Some(t) = self.opt_input(c, 2)? {
                        let on = match t {
                            Value::Const {
                                data: Data::I(v), ..
                            } => v.iter().any(|&x| x != 0),
                            Value::Const {
                                data: Data::F(v), ..
                            } => v.iter().any(|&x| x != 0.0),
                            Value::Dyn { .. } => true,
                        };
                        if on {
                            return Err(c.unsupported("training_mode (inference only)"));
                        }
                    }
                }
                let v = self.input(c, 0)?;
                if let (Value::Dyn { id, .. }, Some(name)) = (&v, c.input_name(0)) {
                    // Merging through an alias is only safe if the alias is the sole reader.
                    if !self.single_use(name) {
                        if let Some(ci) = self.convs.get_mut(id) {
                            ci.fused = true;
                        }
                    }
                }
                self.stats.aliases_removed += 1;
                self.set_output(c, 0, v);
            }
            "Constant" => {
                let v = if let Some(t) = a.tensor("value") {
                    let (dims, data) = tensor_data(t)?;
                    Value::Const { dims, data }
                } else if a.has("value_float") {
                    Value::Const {
                        dims: vec![],
                        data: Data::F(vec![a.float("value_float", 0.0)]),
                    }
                } else if let Some(v) = a.floats("value_floats") {
                    Value::Const {
                        dims: vec![v.len()],
                        data: Data::F(v.to_vec()),
                    }
                } else if a.has("value_int") {
                    Value::Const {
                        dims: vec![],
                        data: Data::I(vec![a.int("value_int", 0)]),
                    }
                } else if let Some(v) = a.ints("value_ints") {
                    Value::Const {
                        dims: vec![v.len()],
                        data: Data::I(v.to_vec()),
                    }
                } else {
                    return Err(
                        c.unsupported("a Constant without a tensor, float(s) or int(s) value")
                    );
                };
                self.set_output(c, 0, v);
            }
            "Conv" => self.conv(c, &a)?,
            "Relu" => self.activation(c, Activation::Relu, None)?,
            "Sigmoid" => self.activation(c, Activation::Sigmoid, None)?,
            "LeakyRelu" => {
                let alpha = a.float("alpha", 0.01);
                self.activation(c, Activation::LeakyRelu { alpha }, None)?
            }
            "Clip" => {
                let (mut min, mut max) = (f32::NEG_INFINITY, f32::INFINITY);
                if self.opset < 11 {
                    min = a.float("min", f32::MIN);
                    max = a.float("max", f32::MAX);
                } else {
                    for (k, slot) in [(1, &mut min), (2, &mut max)] {
                        if c.input_name(k).is_some() {
                            let (_, v) = self.const_f(c, k)?;
                            *slot = *v.first().ok_or_else(|| c.invalid("empty Clip bound"))?;
                        }
                    }
                }
                if min.is_nan() || max.is_nan() || min > max {
                    return Err(c.unsupported(format!("Clip with min {min} > max {max}")));
                }
                let act = if min == 0.0 && max == 6.0 {
                    Activation::Relu6
                } else {
                    Activation::Clip { min, max }
                };
                self.activation(c, act, None)?
            }
            "PRelu" => {
                let (_, xd) = self.dyn_input(c, 0)?;
                let (sd, s) = self.const_f(c, 1)?;
                if sd.len() > xd.len() {
                    return Err(c.invalid("slope of higher rank than the input"));
                }
                let al = align(&sd, xd.len());
                let per_channel = xd.len() >= 2
                    && al
                        .iter()
                        .enumerate()
                        .all(|(i, &d)| d == 1 || (i == 1 && d == xd[1]));
                if s.len() != 1 && !per_channel {
                    // Any other broadcast slope: relu(x) + slope·(x − relu(x)), which is
                    // bit-exact PRelu (x − relu(x) is min(x, 0) exactly).
                    let xv = self.input(c, 0)?;
                    let (x, _) = self.dyn_input(c, 0)?;
                    let r = self.tensor(&xd);
                    self.nodes
                        .push(Node::activation(x, r, Activation::Relu, NONE));
                    let rv = Value::Dyn {
                        id: r,
                        dims: xd.clone(),
                    };
                    let neg = self.binary(c, BinaryOp::Sub, &xv, &rv)?;
                    let sv = Value::Const {
                        dims: sd,
                        data: Data::F(s),
                    };
                    let scaled = self.binary(c, BinaryOp::Mul, &neg, &sv)?;
                    let y = self.binary(c, BinaryOp::Add, &rv, &scaled)?;
                    self.set_output(c, 0, y);
                    return Ok(());
                }
                self.activation(c, Activation::PRelu, Some(s))?
            }
            "MaxPool" | "AveragePool" => self.pool(c, &a)?,
            "GlobalAveragePool" => {
                let (x, xd) = self.dyn_input(c, 0)?;
                if xd.len() != 4 {
                    return Err(c.unsupported("only rank-4 (NCHW) input"));
                }
                let dims = vec![xd[0], xd[1], 1, 1];
                let y = self.tensor(&dims);
                self.nodes.push(Node::global_avg_pool(x, y));
                self.set_dyn(c, y, dims);
            }
            "Gemm" => self.gemm(c, &a)?,
            "MatMul" => {
                let (av, bv) = (self.input(c, 0)?, self.input(c, 1)?);
                let (id, dims) = self.matmul(c, &av, &bv)?;
                self.set_dyn(c, id, dims);
            }
            "Add" | "Sub" | "Mul" => {
                let op = match c.node.op_type.as_str() {
                    "Add" => BinaryOp::Add,
                    "Sub" => BinaryOp::Sub,
                    _ => BinaryOp::Mul,
                };
                let (av, bv) = (self.input(c, 0)?, self.input(c, 1)?);
                let v = self.binary(c, op, &av, &bv)?;
                self.set_output(c, 0, v);
            }
            "Flatten" => {
                let v = self.input(c, 0)?;
                let d = v.dims().to_vec();
                let r = d.len();
                let axis = if a.int("axis", 1) == r as i64 {
                    r
                } else {
                    c.axis(a.int("axis", 1), r.max(1))?
                };
                let dims = vec![product(&d[..axis]), product(&d[axis..])];
                self.reshape_to(c, v, dims, |x, y| Node::flatten(x, y, axis as u32))?;
            }
            "Reshape" => {
                let v = self.input(c, 0)?;
                let shape = self.const_i(c, 1)?.ok_or_else(|| c.invalid("no shape"))?;
                let allow_zero = a.int("allowzero", 0) != 0;
                let d = v.dims().to_vec();
                let mut dims = Vec::with_capacity(shape.len());
                let mut infer = None;
                for (i, &s) in shape.iter().enumerate() {
                    match s {
                        0 if !allow_zero => dims.push(
                            *d.get(i)
                                .ok_or_else(|| c.invalid("0 past the input's rank"))?,
                        ),
                        -1 if infer.is_none() => {
                            infer = Some(i);
                            dims.push(1);
                        }
                        s if s > 0 => dims.push(s as usize),
                        _ => {
                            return Err(
                                c.unsupported(format!("shape {shape:?} (zero-size or several -1)"))
                            )
                        }
                    }
                }
                let total = product(&d);
                if let Some(i) = infer {
                    let rest = product(&dims);
                    if rest == 0 || !total.is_multiple_of(rest) {
                        return Err(c.invalid(format!("cannot reshape {d:?} to {shape:?}")));
                    }
                    dims[i] = total / rest;
                }
                if product(&dims) != total {
                    return Err(c.invalid(format!("cannot reshape {d:?} to {shape:?}")));
                }
                self.reshape_to(c, v, dims, Node::reshape)?;
            }
            "Concat" => self.concat(c, &a)?,
            "Softmax" => {
                let (x, xd) = self.dyn_input(c, 0)?;
                let r = xd.len().max(1);
                if self.opset >= 13 {
                    let axis = c.axis(a.int("axis", -1), r)?;
                    let y = self.tensor(&xd);
                    self.nodes.push(Node::softmax(x, y, axis as u32));
                    self.set_dyn(c, y, xd);
                } else {
                    // Opset < 13: over the input coerced to 2-D at `axis`.
                    let axis = c.axis(a.int("axis", 1), r)?;
                    let flat = vec![product(&xd[..axis]), product(&xd[axis..])];
                    let x2 = self.materialize(
                        c,
                        &Value::Dyn {
                            id: x,
                            dims: xd.clone(),
                        },
                        &flat,
                    )?;
                    let y2 = self.tensor(&flat);
                    self.nodes.push(Node::softmax(x2, y2, 1));
                    let y = self.materialize(c, &Value::Dyn { id: y2, dims: flat }, &xd)?;
                    self.set_dyn(c, y, xd);
                }
            }
            "BatchNormalization" => self.batch_norm(c, &a)?,
            "Pad" => self.pad(c, &a)?,
            "ReduceMean" => self.reduce_mean(c, &a)?,
            other => return Err(c.unsupported(format!("operator {other}"))),
        }
        Ok(())
    }

    /// A shape change: constants keep being constants, tensors get an alias node.
    fn reshape_to(
        &mut self,
        c: &Ctx<'_>,
        v: Value,
        dims: Vec<usize>,
        make: impl FnOnce(u32, u32) -> Node,
    ) -> Result<(), ConvertError> {
        if dims.len() > 4 {
            return Err(c.unsupported(format!("an output of rank {} (at most 4)", dims.len())));
        }
        match v {
            Value::Const { data, .. } => self.set_output(c, 0, Value::Const { dims, data }),
            Value::Dyn { id, .. } => {
                let y = self.tensor(&dims);
                self.nodes.push(make(id, y));
                self.set_dyn(c, y, dims);
            }
        }
        Ok(())
    }

    fn conv(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        let (x, xd) = self.dyn_input(c, 0)?;
        if xd.len() != 4 {
            return Err(c.unsupported(format!("only 2-D convolution (input of rank {})", xd.len())));
        }
        let (wd, w) = self.const_f(c, 1)?;
        if wd.len() != 4 {
            return Err(c.invalid(format!("weights of shape {wd:?}")));
        }
        let bias = match self.opt_input(c, 2)? {
            None => None,
            Some(_) => Some(self.const_f(c, 2)?.1),
        };
        let groups = a.int("group", 1).max(1) as usize;
        let k = a.sizes("kernel_shape", &wd[2..])?;
        let s = a.sizes("strides", &[1, 1])?;
        let d = a.sizes("dilations", &[1, 1])?;
        let p = a.sizes("pads", &[0, 0, 0, 0])?;
        if k.len() != 2 || s.len() != 2 || d.len() != 2 || p.len() != 4 || k[..] != wd[2..] {
            return Err(c.invalid("kernel_shape, strides, dilations or pads of the wrong length"));
        }
        let mode = a.string("auto_pad", "NOTSET")?;
        let ph = auto_pad(&mode, xd[2], k[0], s[0], d[0], (p[0], p[2]))
            .ok_or_else(|| c.invalid(format!("auto_pad {mode}")))?;
        let pw = auto_pad(&mode, xd[3], k[1], s[1], d[1], (p[1], p[3]))
            .ok_or_else(|| c.invalid(format!("auto_pad {mode}")))?;
        let shape = Conv2dShape {
            n: xd[0],
            c_in: xd[1],
            h: xd[2],
            w: xd[3],
            c_out: wd[0],
            kh: k[0],
            kw: k[1],
            stride_h: s[0],
            stride_w: s[1],
            pad_top: ph.0,
            pad_left: pw.0,
            pad_bottom: ph.1,
            pad_right: pw.1,
            dilation_h: d[0],
            dilation_w: d[1],
            groups,
        };
        let dims = shape.dims().map_err(|e| c.core(e))?;
        if dims.weight_len != w.len() || wd[1] * groups != xd[1] {
            return Err(c.invalid(format!(
                "weights {wd:?} for input {xd:?} and group {groups}"
            )));
        }
        if bias.as_ref().is_some_and(|b| b.len() != wd[0]) {
            return Err(c.invalid("bias length differs from the output channels"));
        }
        let wr = self.store(&w);
        let br = bias.map_or(NONE, |b| self.store(&b));
        let yd = vec![xd[0], wd[0], dims.out_h, dims.out_w];
        let y = self.tensor(&yd);
        self.convs.insert(
            y,
            ConvInfo {
                node: self.nodes.len(),
                input: x,
                output: y,
                shape,
                weights: wr,
                bias: br,
                fused: false,
            },
        );
        self.nodes
            .push(Node::conv(x, y, &shape, wr, br, Activation::None, NONE));
        self.set_dyn(c, y, yd);
        Ok(())
    }

    fn activation(
        &mut self,
        c: &Ctx<'_>,
        act: Activation,
        slopes: Option<Vec<f32>>,
    ) -> Result<(), ConvertError> {
        let (x, xd) = self.dyn_input(c, 0)?;
        let sr = slopes.map_or(NONE, |s| self.store(&s));
        let name = c.input_name(0).unwrap_or_default();
        if let Some(ci) = self.fusable_conv(x, name) {
            self.nodes[ci.node] =
                Node::conv(ci.input, ci.output, &ci.shape, ci.weights, ci.bias, act, sr);
            if let Some(e) = self.convs.get_mut(&x) {
                e.fused = true;
            }
            self.stats.fused_activations += 1;
            self.set_dyn(c, x, xd);
            return Ok(());
        }
        let y = self.tensor(&xd);
        self.nodes.push(Node::activation(x, y, act, sr));
        self.set_dyn(c, y, xd);
        Ok(())
    }

    fn pool(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        self.only_outputs(c, 1)?;
        let max = c.node.op_type == "MaxPool";
        let (x, xd) = self.dyn_input(c, 0)?;
        if xd.len() != 4 {
            return Err(c.unsupported(format!("only 2-D pooling (input of rank {})", xd.len())));
        }
        let k = a.sizes("kernel_shape", &[])?;
        let s = a.sizes("strides", &[1, 1])?;
        let p = a.sizes("pads", &[0, 0, 0, 0])?;
        let d = a.sizes("dilations", &[1, 1])?;
        if k.len() != 2 || s.len() != 2 || p.len() != 4 || d.len() != 2 {
            return Err(c.invalid("kernel_shape, strides, pads or dilations of the wrong length"));
        }
        if d != [1, 1] {
            return Err(c.unsupported("dilated pooling"));
        }
        if max && a.int("storage_order", 0) != 0 {
            return Err(c.unsupported("storage_order = 1"));
        }
        let mode = a.string("auto_pad", "NOTSET")?;
        let ph = auto_pad(&mode, xd[2], k[0], s[0], 1, (p[0], p[2]))
            .ok_or_else(|| c.invalid(format!("auto_pad {mode}")))?;
        let pw = auto_pad(&mode, xd[3], k[1], s[1], 1, (p[1], p[3]))
            .ok_or_else(|| c.invalid(format!("auto_pad {mode}")))?;
        let mut shape = Pool2dShape::new(xd[0], xd[1], xd[2], xd[3], k[0], k[1]);
        shape.stride_h = s[0];
        shape.stride_w = s[1];
        (shape.pad_top, shape.pad_bottom) = ph;
        (shape.pad_left, shape.pad_right) = pw;
        shape.ceil_mode = a.int("ceil_mode", 0) != 0;
        shape.count_include_pad = !max && a.int("count_include_pad", 0) != 0;
        let dims = shape.dims().map_err(|e| c.core(e))?;
        let yd = vec![xd[0], xd[1], dims.out_h, dims.out_w];
        let y = self.tensor(&yd);
        self.nodes.push(Node::pool(x, y, &shape, max));
        self.set_dyn(c, y, yd);
        Ok(())
    }

    fn gemm(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        let alpha = a.float("alpha", 1.0);
        let beta = a.float("beta", 1.0);
        let (ta, tb) = (a.int("transA", 0) != 0, a.int("transB", 0) != 0);
        let (av, bv) = (self.input(c, 0)?, self.input(c, 1)?);
        let cv = self.opt_input(c, 2)?;
        if av.dims().len() != 2 || bv.dims().len() != 2 {
            return Err(c.invalid("Gemm operands must be matrices"));
        }
        let transpose = |d: &[usize], v: &[f32]| -> Vec<f32> {
            let (r, k) = (d[0], d[1]);
            (0..k)
                .flat_map(|j| (0..r).map(move |i| v[i * k + j]))
                .collect()
        };
        let (mut y, mut yd);
        match (&av, &bv) {
            (
                Value::Dyn { id, dims },
                Value::Const {
                    dims: bd,
                    data: Data::F(b),
                },
            ) => {
                if ta {
                    return Err(c.unsupported("transA = 1 with a non-constant A"));
                }
                let m = dims[0];
                // Fully connected weights are out × in: B as stored when transB = 1.
                let mut w = if tb { b.clone() } else { transpose(bd, b) };
                let (k, n) = if tb { (bd[1], bd[0]) } else { (bd[0], bd[1]) };
                if k != dims[1] {
                    return Err(c.invalid(format!("A {dims:?} and B {bd:?} do not match")));
                }
                w.iter_mut().for_each(|v| *v *= alpha);
                let wr = self.store(&w);
                // A bias of one value per output column folds into the layer.
                let mut br = NONE;
                let mut rest = cv.clone();
                if let Some(Value::Const {
                    dims: cd,
                    data: Data::F(cb),
                }) = &cv
                {
                    let al = align(cd, 2);
                    if cd.len() <= 2 && al[0] == 1 && (al[1] == n || al[1] == 1) {
                        let bias: Vec<f32> = (0..n)
                            .map(|j| beta * cb[if al[1] == 1 { 0 } else { j }])
                            .collect();
                        br = self.store(&bias);
                        rest = None;
                    }
                }
                yd = vec![m, n];
                y = self.tensor(&yd);
                self.nodes.push(Node::fully_connected(*id, y, wr, br));
                if let Some(cv) = rest {
                    let r = self.scaled_add(c, y, &yd, &cv, beta)?;
                    (y, yd) = r;
                }
            }
            _ => {
                if tb {
                    return Err(c.unsupported("transB = 1 with a non-constant B"));
                }
                let av = match av {
                    Value::Const {
                        dims,
                        data: Data::F(v),
                    } => {
                        let (d, mut v) = if ta {
                            (vec![dims[1], dims[0]], transpose(&dims, &v))
                        } else {
                            (dims, v)
                        };
                        v.iter_mut().for_each(|x| *x *= alpha);
                        Value::Const {
                            dims: d,
                            data: Data::F(v),
                        }
                    }
                    Value::Dyn { .. } if ta => {
                        return Err(c.unsupported("transA = 1 with a non-constant A"))
                    }
                    Value::Dyn { .. } if alpha != 1.0 => {
                        return Err(c.unsupported("alpha ≠ 1 with non-constant A and B"))
                    }
                    other => other,
                };
                (y, yd) = self.matmul(c, &av, &bv)?;
                if let Some(cv) = &cv {
                    let r = self.scaled_add(c, y, &yd, cv, beta)?;
                    (y, yd) = r;
                }
            }
        }
        self.set_dyn(c, y, yd);
        Ok(())
    }

    /// `y + beta·cv` (the Gemm bias when it does not fold into the layer).
    fn scaled_add(
        &mut self,
        c: &Ctx<'_>,
        y: u32,
        yd: &[usize],
        cv: &Value,
        beta: f32,
    ) -> Result<(u32, Vec<usize>), ConvertError> {
        let cv = match cv {
            Value::Const {
                dims,
                data: Data::F(v),
            } => Value::Const {
                dims: dims.clone(),
                data: Data::F(v.iter().map(|x| x * beta).collect()),
            },
            Value::Dyn { .. } if beta != 1.0 => {
                return Err(c.unsupported("beta ≠ 1 with a non-constant C"))
            }
            other => other.clone(),
        };
        match self.binary(
            c,
            BinaryOp::Add,
            &Value::Dyn {
                id: y,
                dims: yd.to_vec(),
            },
            &cv,
        )? {
            Value::Dyn { id, dims } => Ok((id, dims)),
            Value::Const { .. } => Err(c.invalid("constant Gemm")),
        }
    }

    /// ONNX MatMul of `av` and `bv`: a fully connected layer when B is a constant matrix and A
    /// is computed, the MatMul operator otherwise.
    fn matmul(
        &mut self,
        c: &Ctx<'_>,
        av: &Value,
        bv: &Value,
    ) -> Result<(u32, Vec<usize>), ConvertError> {
        let (ad, bd) = (av.dims().to_vec(), bv.dims().to_vec());
        if ad.is_empty() || bd.is_empty() {
            return Err(c.invalid("MatMul of a scalar"));
        }
        // Rank 1: A [K] is [1, K], B [K] is [K, 1]; the added dimension is dropped after.
        let a2 = if ad.len() == 1 {
            vec![1, ad[0]]
        } else {
            ad.clone()
        };
        let b2 = if bd.len() == 1 {
            vec![bd[0], 1]
        } else {
            bd.clone()
        };
        let (ra, rb) = (a2.len(), b2.len());
        if ra > 4 || rb > 4 {
            return Err(c.unsupported("MatMul of rank above 4"));
        }
        let (m, k) = (a2[ra - 2], a2[ra - 1]);
        let (k2, n) = (b2[rb - 2], b2[rb - 1]);
        if k != k2 {
            return Err(c.invalid(format!("A {ad:?} and B {bd:?} do not match")));
        }
        let ro = ra.max(rb);
        let (ab, bb) = (align(&a2[..ra - 2], ro - 2), align(&b2[..rb - 2], ro - 2));
        let mut od = Vec::with_capacity(ro);
        for (&x, &y) in ab.iter().zip(&bb) {
            od.push(match (x, y) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return Err(c.invalid(format!("batch dimensions of {ad:?} and {bd:?}"))),
            });
        }
        od.extend([m, n]);
        // The ONNX result drops the dimensions added for rank-1 operands.
        let mut final_dims = od.clone();
        if bd.len() == 1 {
            final_dims.remove(ro - 1);
        }
        if ad.len() == 1 {
            final_dims.remove(ro - 2);
        }
        let y = match (av, bv) {
            (
                Value::Dyn { id, .. },
                Value::Const {
                    data: Data::F(b), ..
                },
            ) if rb == 2 => {
                // Fully connected over the rows of A: weights are Bᵀ (N × K).
                let rows = product(&a2[..ra - 1]);
                let w: Vec<f32> = (0..n)
                    .flat_map(|j| (0..k).map(move |i| b[i * n + j]))
                    .collect();
                let x = self.materialize(
                    c,
                    &Value::Dyn {
                        id: *id,
                        dims: ad.clone(),
                    },
                    &[rows, k],
                )?;
                let wr = self.store(&w);
                let y2 = self.tensor(&[rows, n]);
                self.nodes.push(Node::fully_connected(x, y2, wr, NONE));
                self.materialize(
                    c,
                    &Value::Dyn {
                        id: y2,
                        dims: vec![rows, n],
                    },
                    &final_dims,
                )?
            }
            _ => {
                let x = self.materialize(c, av, &a2)?;
                let w = self.materialize(c, bv, &b2)?;
                let y2 = self.tensor(&od);
                self.nodes
                    .push(Node::matmul(x, w, y2, ra as u32, rb as u32));
                self.materialize(c, &Value::Dyn { id: y2, dims: od }, &final_dims)?
            }
        };
        Ok((y, final_dims))
    }

    /// Add / Sub / Mul with numpy broadcasting (module docs of the crate).
    fn binary(
        &mut self,
        c: &Ctx<'_>,
        op: BinaryOp,
        av: &Value,
        bv: &Value,
    ) -> Result<Value, ConvertError> {
        let (ad, bd) = (av.dims().to_vec(), bv.dims().to_vec());
        let r = ad.len().max(bd.len());
        if r > 4 {
            return Err(c.unsupported(format!("operands of rank {r} (at most 4)")));
        }
        let (aa, ba) = (align(&ad, r), align(&bd, r));
        let mut od = Vec::with_capacity(r);
        for (&x, &y) in aa.iter().zip(&ba) {
            od.push(match (x, y) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return Err(c.invalid(format!("cannot broadcast {ad:?} with {bd:?}"))),
            });
        }
        let s4 = |d: &[usize]| {
            let d = desc4(d);
            Shape4::new(d[0], d[1], d[2], d[3])
        };
        // Both constant: computed now.
        if let (
            Value::Const {
                data: Data::F(a), ..
            },
            Value::Const {
                data: Data::F(b), ..
            },
        ) = (av, bv)
        {
            let (sa, sb) = (
                s4(&aa).map_err(|e| c.core(e))?,
                s4(&ba).map_err(|e| c.core(e))?,
            );
            let mut out = vec![0.0; product(&od)];
            binary_broadcast(op, &sa, a, &sb, b, &mut out).map_err(|e| c.core(e))?;
            return Ok(Value::Const {
                dims: od,
                data: Data::F(out),
            });
        }
        // The operand with the output's shape goes first where the order does not matter.
        let commutes = op != BinaryOp::Sub;
        let (av, bv, aa, ba) = if aa != od && ba == od && commutes {
            (bv, av, ba, aa)
        } else {
            (av, bv, aa, ba)
        };
        let o4 = desc4(&od);
        let bl = product(&ba);
        let y = self.tensor(&od);
        if aa == od {
            let x = self.materialize(c, av, &aa)?;
            let node = if bl == 1 {
                let b = self.materialize(c, bv, &ba)?;
                Node::binary(op, x, b, y, Broadcast::Scalar)
            } else if ba == od {
                let b = self.materialize(c, bv, &ba)?;
                Node::binary(op, x, b, y, Broadcast::Same)
            } else if desc4(&ba) == [1, o4[1], 1, 1] {
                let b = self.materialize(c, bv, &ba)?;
                Node::binary(op, x, b, y, Broadcast::PerChannel)
            } else {
                let b = self.materialize(c, bv, &ba)?;
                Node::binary_broadcast(op, x, b, y)
            };
            self.nodes.push(node);
        } else {
            let x = self.materialize(c, av, &aa)?;
            let b = self.materialize(c, bv, &ba)?;
            self.nodes.push(Node::binary_broadcast(op, x, b, y));
        }
        Ok(Value::Dyn { id: y, dims: od })
    }

    fn concat(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        let vals: Vec<Value> = (0..c.node.input.len())
            .filter(|&k| c.input_name(k).is_some())
            .map(|k| self.input(c, k))
            .collect::<Result<_, _>>()?;
        let first = vals
            .first()
            .ok_or_else(|| c.invalid("no inputs"))?
            .dims()
            .to_vec();
        let r = first.len();
        let axis = c.axis(a.int("axis", 0), r.max(1))?;
        if r > 4 {
            return Err(c.unsupported(format!("rank {r} (at most 4)")));
        }
        for v in &vals {
            let d = v.dims();
            if d.len() != r || (0..r).any(|i| i != axis && d[i] != first[i]) {
                return Err(c.invalid(format!(
                    "cannot concatenate {first:?} and {d:?} on axis {axis}"
                )));
            }
        }
        let mut ids = Vec::new();
        for v in &vals {
            ids.push((self.materialize(c, v, v.dims())?, v.dims().to_vec()));
        }
        // At most 4 inputs per node: longer lists are chained.
        let mut acc: Option<(u32, Vec<usize>)> = None;
        let mut rest = ids.as_slice();
        while !rest.is_empty() || acc.is_none() {
            let take = if acc.is_some() { 3 } else { 4 }.min(rest.len());
            let mut part: Vec<(u32, Vec<usize>)> = acc.take().into_iter().collect();
            part.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            let mut od = part[0].1.clone();
            od[axis] = part.iter().map(|p| p.1[axis]).sum();
            let y = self.tensor(&od);
            let inputs: Vec<u32> = part.iter().map(|p| p.0).collect();
            self.nodes.push(Node::concat(&inputs, y, axis as u32));
            acc = Some((y, od));
            if rest.is_empty() {
                break;
            }
        }
        let (y, od) = acc.ok_or_else(|| c.invalid("no inputs"))?;
        self.set_dyn(c, y, od);
        Ok(())
    }

    fn batch_norm(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        self.only_outputs(c, 1)?;
        if a.int("training_mode", 0) != 0 {
            return Err(c.unsupported("training_mode = 1 (inference only)"));
        }
        let (x, xd) = self.dyn_input(c, 0)?;
        if xd.len() < 2 || xd.len() > 4 {
            return Err(c.unsupported(format!("input of rank {}", xd.len())));
        }
        let ch = xd[1];
        let mut p = Vec::new();
        for k in 1..5 {
            let (_, v) = self.const_f(c, k)?;
            if v.len() != ch {
                return Err(c.invalid(format!(
                    "input {k} holds {} values for {ch} channels",
                    v.len()
                )));
            }
            p.push(v);
        }
        let eps = a.float("epsilon", 1e-5);
        let bn = BatchNormParams {
            gamma: &p[0],
            beta: &p[1],
            mean: &p[2],
            var: &p[3],
            eps,
        };
        bn.check(ch).map_err(|e| c.core(e))?;
        let name = c.input_name(0).unwrap_or_default();
        if let Some(ci) = self.fusable_conv(x, name) {
            let has_bias = ci.bias.len > 0;
            let bias = if has_bias {
                ci.bias
            } else {
                self.store(&vec![0.0; ci.shape.c_out])
            };
            let (wo, bo) = (ci.weights.offset as usize, bias.offset as usize);
            let (lo, hi) = self.weights.split_at_mut(bo);
            fold_batch_norm(
                &ci.shape,
                &mut lo[wo..wo + ci.weights.len as usize],
                &mut hi[..ci.shape.c_out],
                has_bias,
                &bn,
            )
            .map_err(|e| c.core(e))?;
            self.nodes[ci.node] = Node::conv(
                ci.input,
                ci.output,
                &ci.shape,
                ci.weights,
                bias,
                Activation::None,
                NONE,
            );
            if let Some(e) = self.convs.get_mut(&x) {
                e.bias = bias;
            }
            self.stats.folded_batch_norms += 1;
            self.set_dyn(c, x, xd);
            return Ok(());
        }
        let ranges = [0, 1, 2, 3].map(|i| self.store(&p[i]));
        let y = self.tensor(&xd);
        self.nodes.push(Node::batch_norm(x, y, ranges, eps));
        self.set_dyn(c, y, xd);
        Ok(())
    }

    fn pad(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        let (x, xd) = self.dyn_input(c, 0)?;
        let r = xd.len();
        let mode = a.string("mode", "constant")?;
        let (pads, value) = if self.opset >= 11 {
            let pads = self.const_i(c, 1)?.ok_or_else(|| c.invalid("no pads"))?;
            let value = if c.input_name(2).is_some() {
                match self.input(c, 2)? {
                    Value::Const {
                        data: Data::F(v), ..
                    } => v.first().copied().unwrap_or(0.0),
                    Value::Const {
                        data: Data::I(v), ..
                    } => v.first().copied().unwrap_or(0) as f32,
                    Value::Dyn { .. } => return Err(c.unsupported("a non-constant pad value")),
                }
            } else {
                0.0
            };
            (pads, value)
        } else {
            let p = a.ints("pads").ok_or_else(|| c.invalid("no pads"))?.to_vec();
            (p, a.float("value", 0.0))
        };
        // Opset 18: pads for the listed axes only.
        let axes: Vec<usize> = match self.const_i(c, 3)? {
            None => (0..r).collect(),
            Some(ax) => ax.iter().map(|&v| c.axis(v, r)).collect::<Result<_, _>>()?,
        };
        if pads.len() != 2 * axes.len() {
            return Err(c.invalid(format!("{} pads for {} axes", pads.len(), axes.len())));
        }
        let mut full = vec![0i64; 2 * r];
        for (i, &ax) in axes.iter().enumerate() {
            full[ax] = pads[i];
            full[r + ax] = pads[axes.len() + i];
        }
        if r != 4 || full[0] != 0 || full[1] != 0 || full[4] != 0 || full[5] != 0 {
            return Err(c.unsupported(format!(
                "pads {pads:?} on a rank-{r} input (only H and W of NCHW)"
            )));
        }
        if full.iter().any(|&v| v < 0) {
            return Err(c.unsupported("negative (cropping) pads"));
        }
        let pads = Pads {
            top: full[2] as usize,
            left: full[3] as usize,
            bottom: full[6] as usize,
            right: full[7] as usize,
        };
        let pm = match mode.as_str() {
            "constant" => PadMode::Constant(value),
            "edge" => PadMode::Edge,
            "reflect" => PadMode::Reflect,
            other => return Err(c.unsupported(format!("mode {other}"))),
        };
        let yd = vec![
            xd[0],
            xd[1],
            xd[2] + pads.top + pads.bottom,
            xd[3] + pads.left + pads.right,
        ];
        let y = self.tensor(&yd);
        self.nodes.push(Node::pad(x, y, &pads, pm));
        self.set_dyn(c, y, yd);
        Ok(())
    }

    fn reduce_mean(&mut self, c: &Ctx<'_>, a: &Attrs<'_>) -> Result<(), ConvertError> {
        let (x, xd) = self.dyn_input(c, 0)?;
        let r = xd.len();
        let axes = if self.opset >= 18 {
            self.const_i(c, 1)?
        } else {
            a.ints("axes").map(<[i64]>::to_vec)
        };
        let axes = axes.unwrap_or_default();
        let keep = a.int("keepdims", 1) != 0;
        if axes.is_empty() && a.int("noop_with_empty_axes", 0) != 0 {
            self.stats.aliases_removed += 1;
            self.set_dyn(c, x, xd);
            return Ok(());
        }
        let mut mark = [false; 4];
        if axes.is_empty() {
            mark[..r].fill(true);
        } else {
            for &ax in &axes {
                mark[c.axis(ax, r)?] = true;
            }
        }
        let kd: Vec<usize> = xd
            .iter()
            .enumerate()
            .map(|(i, &d)| if mark[i] { 1 } else { d })
            .collect();
        let y = self.tensor(&kd);
        self.nodes.push(Node::reduce_mean(x, y, mark));
        if keep {
            self.set_dyn(c, y, kd);
        } else {
            let sd: Vec<usize> = xd
                .iter()
                .enumerate()
                .filter(|(i, _)| !mark[*i])
                .map(|(_, &d)| d)
                .collect();
            let y2 = self.materialize(c, &Value::Dyn { id: y, dims: kd }, &sd)?;
            self.set_dyn(c, y2, sd);
        }
        Ok(())
    }

    /// Graph output `name` as an engine tensor (constants become Constant nodes).
    pub(crate) fn output(&mut self, name: &str) -> Result<(u32, Vec<usize>), ConvertError> {
        let v = self.value(name)?.clone();
        let dims = v.dims().to_vec();
        let fake = NodeProto::default();
        let c = Ctx {
            node: &fake,
            name: format!("output {name}"),
        };
        Ok((self.materialize(&c, &v, &dims)?, dims))
    }
}
