//! `mvision convert`: an ONNX model to a `.mvnn` file ([`mvision_convert`]), with a summary of
//! the converted network and the activation memory it needs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use mvision_convert::{convert, ConvertOptions, ModelFile};
use mvision_core::nn::plan::{make_plan, plan_len, PlanSlot};

/// Workspace budget used for the summary's plan: what a convolution may use as scratch (bytes).
/// The default of `infer`, `classify`, `bench net` and `mv_net_create`, so that the arena and
/// scratch the summary prints are what they allocate.
pub const SUMMARY_WORKSPACE_BYTES: usize = crate::nn::DEFAULT_WORKSPACE_BYTES;

/// Arguments of `mvision convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The ONNX model to convert.
    pub input: PathBuf,
    /// Where to write the `.mvnn` file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Batch size for a symbolic (dynamic) first input dimension.
    #[arg(long)]
    pub batch: Option<usize>,
}

/// Converts, writes the file, checks it parses back, and prints the summary.
pub fn run(args: &ConvertArgs, out: &mut impl Write) -> Result<()> {
    let onnx = std::fs::read(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    let opts = ConvertOptions { batch: args.batch };
    let c = convert(&onnx, &opts).with_context(|| format!("{}", args.input.display()))?;
    let bytes = c.to_mvnn()?;
    // What the engine will see: the file parsed back in place.
    let file = ModelFile::from_bytes(&bytes);
    let model = file
        .model()
        .context("the written model does not parse back")?;
    let g = model.graph();
    let mut slots = vec![PlanSlot::EMPTY; plan_len(g)];
    let plan = make_plan(g, SUMMARY_WORKSPACE_BYTES, &mut slots).context("planning")?;
    std::fs::write(&args.output, &bytes)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let dims = |names: &[String], d: &[Vec<usize>]| {
        names
            .iter()
            .zip(d)
            .map(|(n, d)| format!("{n} {d:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "wrote {} ({} bytes)",
        args.output.display(),
        bytes.len()
    )?;
    writeln!(out, "inputs:  {}", dims(&c.input_names, &c.input_dims))?;
    writeln!(out, "outputs: {}", dims(&c.output_names, &c.output_dims))?;
    writeln!(
        out,
        "nodes {}, tensors {}, weights {} bytes",
        c.nodes.len(),
        c.tensors.len(),
        c.weight_bytes()
    )?;
    writeln!(
        out,
        "arena {} bytes, scratch {} bytes (workspace budget {} bytes)",
        plan.arena_bytes(),
        plan.scratch_len() * 4,
        SUMMARY_WORKSPACE_BYTES
    )?;
    writeln!(
        out,
        "fused activations {}, folded batch norms {}, removed identities {}",
        c.stats.fused_activations, c.stats.folded_batch_norms, c.stats.aliases_removed
    )?;
    Ok(())
}
