//! `mvision infer`: runs a `.mvnn` network on tensors read from `.npy` files and writes its
//! outputs as `.npy` files.
//!
//! Shapes. Every tensor of a model is 4-D NCHW. An input file must hold little-endian `float32`
//! (`<f4`, C or Fortran order) of rank at most 4 whose shape equals the model input's after
//! trailing 1s are dropped from both: for a `1×10×1×1` input, `(1, 10)`, `(1, 10, 1)` and
//! `(1, 10, 1, 1)` are accepted, `(10,)` is not.
//!
//! Outputs. The model stores a tensor of ONNX rank `r` as its dimensions followed by `4 − r`
//! ones, so the rank is not in the file; it is inferred along the graph ([`tensor_ranks`]):
//! a graph input has the rank of its `.npy` file; Conv, pooling, Pad, BatchNorm and ReduceMean
//! give 4 (NCHW); Flatten and fully connected layers 2; element-wise operators, Softmax and
//! Concat keep their (largest) input's rank; MatMul the larger of its operands' recorded ranks.
//! An output is written with that rank (`1×4×1×1` from a convolution stays `(1, 4, 1, 1)`; after
//! a fully connected layer it is `(1, 4)`). Where the rank is unknown (Reshape, Constant) or
//! its dropped dimensions are not all 1, the output has the 4-D shape less its trailing 1s,
//! keeping at least two dimensions.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use ndarray::{ArrayD, IxDyn};

use mvision_core::nn::graph::{op, Graph, P_AXIS, P_RANK_B};

use crate::bench::median;
use crate::nn::{dims_text, parse_model, read_model_file, Runner, DEFAULT_WORKSPACE_BYTES};

/// `mvision infer` arguments.
#[derive(Args, Debug)]
pub struct InferArgs {
    /// The model (.mvnn).
    #[arg(long, value_name = "M.mvnn")]
    model: PathBuf,
    /// An input tensor (.npy, float32), once per model input in the model's order.
    #[arg(long = "input", value_name = "X.npy", required = true)]
    inputs: Vec<PathBuf>,
    /// Where to write an output tensor (.npy, float32), once per model output in order.
    #[arg(long = "output", value_name = "Y.npy", required = true)]
    outputs: Vec<PathBuf>,
    /// Forward passes to time; the median is printed.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    repeat: u32,
    /// Most working memory one convolution may use, bytes (0: direct convolution only).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_WORKSPACE_BYTES)]
    workspace_budget: usize,
    /// Most memory for Winograd and blocked-convolution weights transformed once at load
    /// instead of on every pass, bytes (each 3×3 Winograd layer so run takes 16/9 of its
    /// weights, each blocked layer its weights; 0: none).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    prepared_budget: usize,
}

/// `d` without its trailing 1s, keeping at least `keep` dimensions.
pub fn trim_trailing_ones(d: &[usize], keep: usize) -> &[usize] {
    let mut n = d.len();
    while n > keep && d[n - 1] == 1 {
        n -= 1;
    }
    &d[..n]
}

/// Checks an input file's shape against the model input's `dims` (the rule of the module docs).
pub fn check_input_shape(file: &[usize], dims: &[usize; 4]) -> Result<()> {
    if file.len() > 4 || trim_trailing_ones(file, 0) != trim_trailing_ones(dims, 0) {
        bail!(
            "shape ({}) does not match the model input {} (equal after dropping trailing 1s, \
             rank at most 4)",
            file.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            dims_text(dims)
        );
    }
    Ok(())
}

/// The ONNX rank of every tensor as far as the graph tells it (module docs), from the ranks
/// of the graph inputs (`input_ranks`, in graph order); `None` where unknown.
pub fn tensor_ranks(graph: &Graph<'_>, input_ranks: &[usize]) -> Vec<Option<usize>> {
    let mut rank = vec![None; graph.tensors.len()];
    for (&t, &r) in graph.inputs.iter().zip(input_ranks) {
        rank[t as usize] = Some(r);
    }
    for node in graph.nodes {
        let ins = &node.inputs[..(node.input_count as usize).min(4)];
        let of = |k: usize| {
            ins.get(k)
                .and_then(|&t| rank.get(t as usize).copied().flatten())
        };
        let r = match node.op {
            op::CONV
            | op::MAX_POOL
            | op::AVG_POOL
            | op::GLOBAL_AVG_POOL
            | op::PAD
            | op::BATCH_NORM
            | op::REDUCE_MEAN => Some(4),
            op::FLATTEN | op::FULLY_CONNECTED => Some(2),
            op::ACTIVATION | op::SOFTMAX => of(0),
            op::CONCAT => (0..ins.len()).map(of).max().flatten(),
            op::ADD | op::SUB | op::MUL => of(0).zip(of(1)).map(|(a, b)| a.max(b)),
            op::MATMUL => Some(node.params[P_AXIS].max(node.params[P_RANK_B]) as usize)
                .filter(|r| (2..=4).contains(r)),
            _ => None, // Reshape, Constant: the file does not say
        };
        if let Some(slot) = rank.get_mut(node.output as usize) {
            *slot = r;
        }
    }
    rank
}

/// The `.npy` shape of an output of 4-D shape `dims` and inferred rank `rank` (module docs).
pub fn output_shape(dims: &[usize; 4], rank: Option<usize>) -> Vec<usize> {
    match rank {
        Some(r) if (1..=4).contains(&r) && dims[r..].iter().all(|&d| d == 1) => dims[..r].to_vec(),
        _ => trim_trailing_ones(dims, 2).to_vec(),
    }
}

/// Reads a float32 `.npy` file as packed data in C order, with its shape.
pub fn read_npy(path: &Path) -> Result<(Vec<f32>, Vec<usize>)> {
    let a: ArrayD<f32> = ndarray_npy::read_npy(path).with_context(|| {
        format!(
            "cannot read '{}' as a little-endian float32 .npy file",
            path.display()
        )
    })?;
    let shape = a.shape().to_vec();
    Ok((a.as_standard_layout().iter().copied().collect(), shape))
}

/// Writes `data` as a float32 `.npy` file of `shape` (C order).
pub fn write_npy(path: &Path, data: &[f32], shape: &[usize]) -> Result<()> {
    let a = ArrayD::from_shape_vec(IxDyn(shape), data.to_vec())?;
    ndarray_npy::write_npy(path, &a).with_context(|| format!("cannot write '{}'", path.display()))
}

/// Runs `mvision infer`.
pub fn run(args: &InferArgs, out: &mut impl Write) -> Result<()> {
    let bytes = read_model_file(&args.model)?;
    let model = parse_model(&bytes, &args.model)?;
    let mut runner = Runner::new(*model.graph(), args.workspace_budget, args.prepared_budget)?;
    let (n_in, n_out) = (runner.graph().inputs.len(), runner.graph().outputs.len());
    if args.inputs.len() != n_in || args.outputs.len() != n_out {
        bail!(
            "the model has {n_in} input(s) and {n_out} output(s); give --input {n_in} and \
             --output {n_out} time(s) (given: {} and {})",
            args.inputs.len(),
            args.outputs.len()
        );
    }
    let mut inputs = Vec::with_capacity(n_in);
    let mut input_ranks = Vec::with_capacity(n_in);
    for (k, path) in args.inputs.iter().enumerate() {
        let (data, shape) = read_npy(path)?;
        input_ranks.push(shape.len());
        let dims = runner.input_dims(k);
        let name = model.input_name(k).unwrap_or_default();
        check_input_shape(&shape, &dims)
            .with_context(|| format!("input {k} '{name}' from '{}'", path.display()))?;
        inputs.push(data);
    }
    let views: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
    let mut outputs = runner.output_buffers();
    let mut times = Vec::with_capacity(args.repeat as usize);
    for _ in 0..args.repeat {
        let t = Instant::now();
        runner.run(&views, &mut outputs)?;
        times.push(t.elapsed());
    }
    writeln!(
        out,
        "{}: {n_in} input(s), {n_out} output(s); arena {} bytes, scratch {} bytes",
        args.model.display(),
        runner.arena_bytes(),
        runner.scratch_bytes()
    )?;
    let ranks = tensor_ranks(runner.graph(), &input_ranks);
    for (k, path) in args.outputs.iter().enumerate() {
        let dims = runner.output_dims(k);
        let rank = ranks[runner.graph().outputs[k] as usize];
        let shape = output_shape(&dims, rank);
        write_npy(path, &outputs[k], &shape)?;
        writeln!(
            out,
            "output {k} '{}': {} -> {}",
            model.output_name(k).unwrap_or_default(),
            dims_text(&shape),
            path.display()
        )?;
    }
    writeln!(
        out,
        "forward: {:.3} ms (median of {} run(s), 1 thread)",
        median(&mut times).as_secs_f64() * 1e3,
        args.repeat
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_match_after_dropping_trailing_ones() {
        let dims = [1, 10, 1, 1];
        for ok in [&[1, 10][..], &[1, 10, 1], &[1, 10, 1, 1]] {
            assert!(check_input_shape(ok, &dims).is_ok(), "{ok:?}");
        }
        for bad in [&[10][..], &[1, 10, 1, 1, 1], &[1, 1, 10], &[]] {
            assert!(check_input_shape(bad, &dims).is_err(), "{bad:?}");
        }
        assert!(check_input_shape(&[], &[1, 1, 1, 1]).is_ok());
        assert_eq!(trim_trailing_ones(&[1, 10, 1, 1], 2), [1, 10]);
        assert_eq!(trim_trailing_ones(&[1, 1, 1, 1], 2), [1, 1]);
        assert_eq!(trim_trailing_ones(&[1, 3, 1, 5], 2), [1, 3, 1, 5]);
    }

    #[test]
    fn output_rank_follows_the_graph() {
        use mvision_core::nn::activation::Activation;
        use mvision_core::nn::graph::{Node, TensorDesc, WeightRange};
        // x (1x2x2x2) -> global pool (1x2x1x1) -> flatten (1x2) -> reshape (1x2x1x1) -> relu.
        let tensors = [
            TensorDesc::new(1, 2, 2, 2),
            TensorDesc::new(1, 2, 1, 1),
            TensorDesc::new(1, 2, 1, 1),
            TensorDesc::new(1, 2, 1, 1),
            TensorDesc::new(1, 2, 1, 1),
            TensorDesc::new(1, 2, 1, 1),
        ];
        let nodes = [
            Node::global_avg_pool(0, 1),
            Node::flatten(1, 2, 1),
            Node::reshape(2, 3),
            Node::activation(1, 4, Activation::Relu, WeightRange::default()),
            Node::activation(2, 5, Activation::Relu, WeightRange::default()),
        ];
        let g = Graph {
            tensors: &tensors,
            nodes: &nodes,
            weights: &[],
            inputs: &[0],
            outputs: &[1],
        };
        let r = tensor_ranks(&g, &[4]);
        assert_eq!(r, [Some(4), Some(4), Some(2), None, Some(4), Some(2)]);
        assert_eq!(output_shape(&[1, 4, 1, 1], Some(4)), [1, 4, 1, 1]);
        assert_eq!(output_shape(&[1, 4, 1, 1], Some(2)), [1, 4]);
        assert_eq!(output_shape(&[1, 4, 1, 1], None), [1, 4]);
        assert_eq!(output_shape(&[1, 4, 3, 1], Some(2)), [1, 4, 3]);
        assert_eq!(output_shape(&[5, 1, 1, 1], Some(1)), [5]);
    }
}
