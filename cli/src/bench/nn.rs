//! `mvision bench gemm|conv|net`: the CNN core, single-threaded. The GEMM and convolution cases
//! are the shared catalogue of `mvision_benches::nn_cases` (the criterion benches run the same);
//! timing is [`time_runs`] (warm-up, then samples of at least 10 ms, median per run).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use serde_json::{json, Value};

use mvision_benches::nn_cases::{
    alexnet_conv_shapes, conv_methods, gemm_shapes, ConvCase, ConvShape, GemmCase, GemmVariant,
    SEED004,
};
use mvision_core::nn::conv::{Conv2dShape, ConvMethod};

use super::{simd_level, time_runs, Timing};
use crate::nn::{dims_text, parse_model, read_model_file, Runner, DEFAULT_WORKSPACE_BYTES};

pub(super) const GEMM_LONG_ABOUT: &str = "\
GFLOP/s (2*m*n*k / median time) of the core's SGEMM, C = A*B row-major, on 256^3, 512^3,
1024^3, 2048^3 and the seven FastPoorNet conv GEMMs (seed 000), on two paths: the core's own
packed GEMM (what libmvision and no_std builds run: on x86 AVX-512 or AVX2 micro-kernels by
the active level, portable elsewhere) and the std path, which hands products of at least 12^3
multiply-adds to the gemm crate (runtime AVX-512/AVX2/NEON dispatch). Single-threaded.
--json prints one JSON document instead of the table.";

pub(super) const CONV_LONG_ABOUT: &str = "\
Each convolution method of the core (direct, im2col, MEC, MFCA with the paper's m) on seed
004's nine single-channel shapes and AlexNet's five conv layers (batch 1, 224^2 input):
median ms, GFLOP/s (2 * multiply-adds of the convolution / time) and workspace bytes
(workspace_len). GEMM-based methods use the gemm crate for large products, as the std build
does. No bias, no activation. Single-threaded. --json prints one JSON document instead.";

pub(super) const NET_LONG_ABOUT: &str = "\
Latency of a whole network (.mvnn): the median time of one forward pass (warm-up, then --repeat
samples), on a deterministic input (element i of every input: ((i*37) mod 17)/8 - 1), with
the activation arena and scratch bytes the plan needs under --workspace-budget (and the
pre-transformed Winograd and blocked weights under --prepared-budget).
Single-threaded. --json prints one JSON document instead.";

/// `mvision bench gemm` arguments.
#[derive(Args, Debug)]
pub struct GemmBenchArgs {
    /// Timed samples per case; the median is reported.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

/// `mvision bench conv` arguments.
#[derive(Args, Debug)]
pub struct ConvBenchArgs {
    /// Timed samples per case; the median is reported.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

/// `mvision bench net` arguments.
#[derive(Args, Debug)]
pub struct NetBenchArgs {
    /// The model (.mvnn).
    #[arg(long, value_name = "M.mvnn")]
    model: PathBuf,
    /// Timed samples; the median is reported.
    #[arg(long, value_name = "N", default_value_t = 20,
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
    /// Print one JSON document instead of the text.
    #[arg(long)]
    json: bool,
    /// Also print each node's median time (operator, output shape, convolution method) and
    /// the totals per kind of node, timed in separate runs after the whole-network timing.
    #[arg(long, conflicts_with = "json")]
    layers: bool,
}

fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// The header line of every report.
fn header(out: &mut impl Write, what: &str, repeat: u32) -> Result<()> {
    writeln!(
        out,
        "mvision bench {what}: host CPU, 1 thread, {} (core compiled for {}; GEMMs on {}), {} \
         build{}, median of {repeat} samples",
        std::env::consts::ARCH,
        simd_level(),
        if mvision_core::nn::gemm::gemm_crate_enabled() {
            "the gemm crate, which picks its SIMD at run time (MVISION_GEMM=crate)"
        } else {
            "the core's own kernels, as in libmvision (MVISION_GEMM=own)"
        },
        profile(),
        if cfg!(debug_assertions) {
            " (numbers are meaningless: build with --release)"
        } else {
            ""
        }
    )?;
    Ok(())
}

/// The fields every JSON report starts with.
fn json_base(command: &str, repeat: u32) -> serde_json::Map<String, Value> {
    let v = json!({
        "command": command,
        "version": mvision_core::VERSION,
        "build_profile": profile(),
        "arch": std::env::consts::ARCH,
        "simd": simd_level(),
        "threads": 1,
        "repeat": repeat,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("json! of an object literal"),
    }
}

fn ms(t: &Timing) -> f64 {
    t.median.as_secs_f64() * 1e3
}

fn gflops(flop: u64, t: &Timing) -> Option<f64> {
    let s = t.median.as_secs_f64();
    (s > 0.0).then(|| flop as f64 / s / 1e9)
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.digits$}"))
}

/// Runs `mvision bench gemm`.
pub fn run_gemm(args: &GemmBenchArgs, out: &mut impl Write) -> Result<()> {
    let variants = [GemmVariant::Portable, GemmVariant::Sgemm];
    // The second column is the crate's whatever `MVISION_GEMM` says (restored below).
    let crate_on = mvision_core::nn::gemm::gemm_crate_enabled();
    mvision_core::nn::gemm::set_gemm_crate(true);
    let mut rows = Vec::new();
    for (m, n, k) in gemm_shapes() {
        let mut cells = Vec::new();
        for v in variants {
            let mut case = GemmCase::new(v, m, n, k).map_err(|e| anyhow!("{e}"))?;
            let flop = case.flop();
            let t = time_runs(&mut || case.run().map_err(|e| anyhow!("{e}")), args.repeat)
                .with_context(|| format!("gemm {m}x{n}x{k} ({})", v.id()))?;
            cells.push((v, flop, t));
        }
        rows.push(((m, n, k), cells));
    }
    mvision_core::nn::gemm::set_gemm_crate(crate_on);
    if args.json {
        let results: Vec<Value> = rows
            .iter()
            .flat_map(|&((m, n, k), ref cells)| {
                cells.iter().map(move |(v, flop, t)| {
                    json!({"m": m, "n": n, "k": k, "variant": v.id(), "median_ms": ms(t),
                           "gflop_per_s": gflops(*flop, t), "runs_per_sample": t.runs_per_sample})
                })
            })
            .collect();
        let mut doc = json_base("bench gemm", args.repeat);
        doc.insert(
            "layout".into(),
            json!("row-major, C = A*B, alpha 1, beta 0"),
        );
        doc.insert("results".into(), json!(results));
        writeln!(out, "{}", Value::Object(doc))?;
        return Ok(());
    }
    header(out, "gemm", args.repeat)?;
    writeln!(
        out,
        "{:<16}  {:>16}  {:>16}",
        "GFLOP/s  m×n×k", "core's own", "gemm crate"
    )?;
    for ((m, n, k), cells) in &rows {
        write!(out, "{:<16}", format!("{m}x{n}x{k}"))?;
        for (_, flop, t) in cells {
            write!(out, "  {:>16}", fmt_opt(gflops(*flop, t), 1))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn method_name(m: ConvMethod) -> String {
    match m {
        ConvMethod::Direct => "direct".into(),
        ConvMethod::Im2col => "im2col".into(),
        ConvMethod::Mec => "mec".into(),
        ConvMethod::Mfca { m } => format!("mfca[m={m}]"),
        ConvMethod::Winograd => "winograd".into(),
        ConvMethod::Blocked => "blocked".into(),
    }
}

/// The shapes of `bench conv`: seed 004's nine, then AlexNet's five.
fn conv_bench_shapes() -> Vec<ConvShape> {
    let mut v: Vec<ConvShape> = SEED004
        .iter()
        .map(|&(w, h, k)| ConvShape {
            id: format!("seed004 {w}x{h} {k}x{k}"),
            shape: Conv2dShape::new(1, 1, h, w, 1, k, k),
        })
        .collect();
    v.extend(alexnet_conv_shapes());
    v
}

/// Runs `mvision bench conv`.
pub fn run_conv(args: &ConvBenchArgs, out: &mut impl Write) -> Result<()> {
    let mut rows = Vec::new();
    for s in conv_bench_shapes() {
        let mut cells = Vec::new();
        for method in conv_methods(&s.shape).map_err(|e| anyhow!("{e}"))? {
            let mut case = ConvCase::new(method, s.shape).map_err(|e| anyhow!("{e}"))?;
            let (flop, ws) = (case.flop(), case.workspace_bytes());
            let t = time_runs(&mut || case.run().map_err(|e| anyhow!("{e}")), args.repeat)
                .with_context(|| format!("conv {} ({})", s.id, method_name(method)))?;
            cells.push((method, flop, ws, t));
        }
        rows.push((s.id, cells));
    }
    if args.json {
        let results: Vec<Value> = rows
            .iter()
            .flat_map(|(id, cells)| {
                cells.iter().map(move |(m, flop, ws, t)| {
                    json!({"shape": id, "method": method_name(*m), "median_ms": ms(t),
                           "gflop_per_s": gflops(*flop, t), "workspace_bytes": ws,
                           "flop": flop, "runs_per_sample": t.runs_per_sample})
                })
            })
            .collect();
        let mut doc = json_base("bench conv", args.repeat);
        doc.insert(
            "gemm".into(),
            json!("sgemm with the gemm crate for products >= 12^3"),
        );
        doc.insert("results".into(), json!(results));
        writeln!(out, "{}", Value::Object(doc))?;
        return Ok(());
    }
    header(out, "conv", args.repeat)?;
    writeln!(
        out,
        "cells: ms / GFLOP/s / workspace KiB; GEMM methods use the gemm crate for products >= 12^3"
    )?;
    const W: usize = 24;
    writeln!(
        out,
        "{:<32}  {:>W$}  {:>W$}  {:>W$}  {:>W$}  {:>W$}  {:>W$}",
        "shape", "direct", "im2col", "mec", "mfca", "winograd (3x3 s1 only)", "blocked"
    )?;
    for (id, cells) in &rows {
        write!(out, "{id:<32}")?;
        for (m, flop, ws, t) in cells {
            if *m == ConvMethod::Blocked && !cells.iter().any(|c| c.0 == ConvMethod::Winograd) {
                write!(out, "  {:>W$}", "-")?;
            }
            let mut cell = format!(
                "{:.3} / {} / {:.0}",
                ms(t),
                fmt_opt(gflops(*flop, t), 1),
                *ws as f64 / 1024.0
            );
            if let ConvMethod::Mfca { m } = m {
                cell.push_str(&format!(" [{m}]"));
            }
            write!(out, "  {cell:>W$}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Runs `mvision bench net`.
pub fn run_net(args: &NetBenchArgs, out: &mut impl Write) -> Result<()> {
    let bytes = read_model_file(&args.model)?;
    let model = parse_model(&bytes, &args.model)?;
    let mut runner = Runner::new(*model.graph(), args.workspace_budget, args.prepared_budget)?;
    let inputs: Vec<Vec<f32>> = (0..runner.graph().inputs.len())
        .map(|k| {
            let len: usize = runner.input_dims(k).iter().product();
            (0..len)
                .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
                .collect()
        })
        .collect();
    let views: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
    let mut outputs = runner.output_buffers();
    let (arena, scratch) = (runner.arena_bytes(), runner.scratch_bytes());
    let prepared = runner.prepared_bytes();
    let shapes: Vec<String> = (0..views.len())
        .map(|k| dims_text(&runner.input_dims(k)))
        .collect();
    let t = time_runs(&mut || runner.run(&views, &mut outputs), args.repeat)?;
    if args.json {
        let mut doc = json_base("bench net", args.repeat);
        doc.insert("model".into(), json!(args.model.display().to_string()));
        doc.insert("inputs".into(), json!(shapes));
        doc.insert(
            "workspace_budget_bytes".into(),
            json!(args.workspace_budget),
        );
        doc.insert("arena_bytes".into(), json!(arena));
        doc.insert("scratch_bytes".into(), json!(scratch));
        doc.insert("prepared_bytes".into(), json!(prepared));
        doc.insert("median_ms".into(), json!(ms(&t)));
        doc.insert("min_ms".into(), json!(t.min.as_secs_f64() * 1e3));
        doc.insert("max_ms".into(), json!(t.max.as_secs_f64() * 1e3));
        doc.insert("runs_per_sample".into(), json!(t.runs_per_sample));
        writeln!(out, "{}", Value::Object(doc))?;
        return Ok(());
    }
    header(out, "net", args.repeat)?;
    writeln!(
        out,
        "{}: input(s) {}; arena {arena} bytes, scratch {scratch} bytes (budget {} bytes), \
         prepared weights {prepared} bytes",
        args.model.display(),
        shapes.join(", "),
        args.workspace_budget
    )?;
    writeln!(
        out,
        "forward: {:.3} ms median (min {:.3}, max {:.3})",
        ms(&t),
        t.min.as_secs_f64() * 1e3,
        t.max.as_secs_f64() * 1e3
    )?;
    if args.layers {
        super::layers::print_layers(&mut runner, &views, &mut outputs, args.repeat, out)?;
    }
    Ok(())
}
