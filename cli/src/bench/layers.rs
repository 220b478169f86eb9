//! `mvision bench net --layers`: each node's median time over the timed runs, printed with its
//! operator, output shape and (for convolutions) kernel geometry and method, then the totals per
//! kind of layer. The clock is read between nodes through `forward_observed`'s callback, so the
//! plain `forward` that `bench net` times otherwise is unchanged; reading it costs well under a
//! microsecond per node, which the per-layer sum includes (it is printed beside the total).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Result;
use mvision_core::nn::conv::ConvMethod;
use mvision_core::nn::graph::{
    op, Graph, Node, P_ACT, P_GROUPS, P_KH, P_KW, P_STRIDE_H, P_STRIDE_W,
};
use mvision_core::nn::plan::Plan;

use super::median;
use crate::nn::Runner;

/// The warm-up before the timed runs.
const WARM_UP: Duration = Duration::from_millis(200);

/// ONNX-style name of an operator code.
fn op_name(code: u32) -> &'static str {
    match code {
        op::CONV => "Conv",
        op::MAX_POOL => "MaxPool",
        op::AVG_POOL => "AveragePool",
        op::GLOBAL_AVG_POOL => "GlobalAveragePool",
        op::FULLY_CONNECTED => "Gemm",
        op::ACTIVATION => "Activation",
        op::SOFTMAX => "Softmax",
        op::REDUCE_MEAN => "ReduceMean",
        op::ADD => "Add",
        op::CONCAT => "Concat",
        op::FLATTEN => "Flatten",
        op::PAD => "Pad",
        op::BATCH_NORM => "BatchNormalization",
        op::MATMUL => "MatMul",
        op::RESHAPE => "Reshape",
        op::SUB => "Sub",
        op::MUL => "Mul",
        op::CONSTANT => "Constant",
        _ => "?",
    }
}

/// Short name of a convolution method.
fn method_name(m: ConvMethod) -> &'static str {
    match m {
        ConvMethod::Direct => "direct",
        ConvMethod::Im2col => "im2col",
        ConvMethod::Mec => "mec",
        ConvMethod::Mfca { .. } => "mfca",
        ConvMethod::Winograd => "winograd",
        ConvMethod::Blocked => "blocked",
    }
}

/// Kind of a node for the totals (`Conv depthwise 3x3/1 direct`, `Conv 1x1 im2col`, `Add`…),
/// and the detail printed on its line (kernel, stride, groups, activation, prepared weights).
fn describe(graph: &Graph<'_>, plan: &Plan<'_>, node: &Node) -> (String, String) {
    let name = op_name(node.op);
    if node.op != op::CONV {
        return (name.to_string(), String::new());
    }
    let p = &node.params;
    let c_in = graph.tensors[node.inputs[0] as usize].c;
    let groups = p[P_GROUPS];
    let kind = if groups > 1 && groups == c_in {
        "depthwise "
    } else if groups > 1 {
        "grouped "
    } else {
        ""
    };
    let method = plan.method(node.output).map_or("?", method_name);
    let prepared = if plan.is_prepared(node.output) {
        " (prepared)"
    } else {
        ""
    };
    let act = [
        "",
        "+relu",
        "+relu6",
        "+clip",
        "+leakyrelu",
        "+prelu",
        "+sigmoid",
    ]
    .get(p[P_ACT] as usize)
    .unwrap_or(&"+?");
    let geometry = format!("{}x{}/{}", p[P_KH], p[P_KW], p[P_STRIDE_H]);
    let kind_text = format!("Conv {kind}{geometry} {method}");
    let stride_w = if p[P_STRIDE_W] == p[P_STRIDE_H] {
        String::new()
    } else {
        format!(",{}", p[P_STRIDE_W])
    };
    let detail = format!("{geometry}{stride_w} g={groups}{act} {method}{prepared}");
    (kind_text, detail)
}

/// Runs `runner` for at least [`WARM_UP`], then `repeat` timed runs, and prints each node's
/// median time and the totals per kind of node (sorted by time).
pub(super) fn print_layers(
    runner: &mut Runner<'_>,
    inputs: &[&[f32]],
    outputs: &mut [Vec<f32>],
    repeat: u32,
    out: &mut impl Write,
) -> Result<()> {
    let nodes = runner.graph().nodes.len();
    let mut scratch = vec![Duration::ZERO; nodes];
    let start = Instant::now();
    while start.elapsed() < WARM_UP {
        runner.run_timed(inputs, outputs, &mut scratch)?;
    }
    let mut samples = vec![Vec::with_capacity(repeat as usize); nodes];
    let mut totals = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat.max(1) {
        scratch.fill(Duration::ZERO);
        let t = Instant::now();
        runner.run_timed(inputs, outputs, &mut scratch)?;
        totals.push(t.elapsed());
        for (s, &d) in samples.iter_mut().zip(&scratch) {
            s.push(d);
        }
    }
    let medians: Vec<Duration> = samples.iter_mut().map(|s| median(s)).collect();
    let total = median(&mut totals);
    let sum: Duration = medians.iter().sum();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    writeln!(
        out,
        "per node, median of {} runs (whole run {:.3} ms median; sum of node medians {:.3} ms):",
        repeat.max(1),
        ms(total),
        ms(sum)
    )?;
    writeln!(
        out,
        "{:>4}  {:<18} {:<16} {:<34} {:>8} {:>6}",
        "node", "op", "output", "conv", "ms", "%"
    )?;
    let graph = *runner.graph();
    let mut by_kind: BTreeMap<String, (Duration, usize)> = BTreeMap::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let (kind, detail) = describe(&graph, runner.plan(), node);
        let t = graph.tensors[node.output as usize];
        let shape = format!("{}x{}x{}x{}", t.n, t.c, t.h, t.w);
        let pct = 100.0 * medians[i].as_secs_f64() / sum.as_secs_f64().max(1e-12);
        writeln!(
            out,
            "{i:>4}  {:<18} {shape:<16} {detail:<34} {:>8.4} {pct:>6.2}",
            op_name(node.op),
            ms(medians[i])
        )?;
        let e = by_kind.entry(kind).or_default();
        e.0 += medians[i];
        e.1 += 1;
    }
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1 .0));
    writeln!(out, "per kind of node:")?;
    writeln!(out, "{:<40} {:>5} {:>8} {:>6}", "kind", "count", "ms", "%")?;
    for (kind, (t, count)) in kinds {
        let pct = 100.0 * t.as_secs_f64() / sum.as_secs_f64().max(1e-12);
        writeln!(out, "{kind:<40} {count:>5} {:>8.3} {pct:>6.2}", ms(t))?;
    }
    Ok(())
}
