//! Running a `.mvnn` network from the command line: the file read into aligned memory
//! (`mvision_convert::ModelFile`), and a [`Runner`] that plans the network once and runs it
//! (shared by `infer`, `classify` and `bench net`).

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use mvision_convert::ModelFile;
use mvision_core::nn::graph::Graph;
use mvision_core::nn::model::Model;
use mvision_core::nn::plan::{
    forward_observed, forward_prepared, make_plan_prepared, page_align_slack, page_aligned,
    page_aligned_ref, prepare_weights, Plan, PlanSlot,
};

/// The workspace budget of `--workspace-budget` when absent: the C API's default (16 MiB).
pub const DEFAULT_WORKSPACE_BYTES: usize = mvision::net::MV_NET_DEFAULT_WORKSPACE_BYTES;

/// Reads the model file at `path` into 16-byte aligned memory ([`Model::parse`] needs 4-byte
/// alignment; 16 keeps its weight sections aligned for vector loads).
pub fn read_model_file(path: &Path) -> Result<ModelFile> {
    ModelFile::read(path).map_err(|e| anyhow!("{e}"))
}

/// Parses a model read by [`read_model_file`], naming the file in the error.
pub fn parse_model<'a>(bytes: &'a ModelFile, path: &Path) -> Result<Model<'a>> {
    Model::parse(bytes.bytes())
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("'{}' is not a valid .mvnn model", path.display()))
}

/// A planned network with its arena, scratch and pre-transformed weights allocated (each
/// from a page boundary: [`page_aligned`]).
pub struct Runner<'m> {
    graph: Graph<'m>,
    plan: Plan<'static>,
    arena: Vec<f32>,
    scratch: Vec<f32>,
    prepared: Vec<f32>,
}

/// `[n, c, h, w]` of tensor `id` (validated by [`Model::parse`]).
fn dims(graph: &Graph<'_>, id: u32) -> [usize; 4] {
    let t = graph.tensors[id as usize];
    [t.n, t.c, t.h, t.w].map(|d| d as usize)
}

impl<'m> Runner<'m> {
    /// Plans `graph` with convolutions limited to `workspace_budget_bytes` of working memory,
    /// and up to `prepared_budget_bytes` of Winograd and blocked weights transformed once, here
    /// (`make_plan_prepared`).
    pub fn new(
        graph: Graph<'m>,
        workspace_budget_bytes: usize,
        prepared_budget_bytes: usize,
    ) -> Result<Self> {
        // The plan borrows its slots; a CLI run plans a handful of models, so they are leaked
        // (a few bytes per tensor) rather than tied to a self-referential struct.
        let slots: &'static mut [PlanSlot] =
            Box::leak(vec![PlanSlot::EMPTY; graph.tensors.len()].into_boxed_slice());
        let budgets = (workspace_budget_bytes, prepared_budget_bytes);
        let plan = make_plan_prepared(&graph, budgets.0, budgets.1, slots)
            .map_err(|e| anyhow!("cannot plan the network: {e}"))?;
        let mut prepared = page_buffer(plan.prepared_len());
        prepare_weights(&graph, &plan, aligned(&mut prepared, plan.prepared_len()))
            .map_err(|e| anyhow!("cannot prepare the weights: {e}"))?;
        Ok(Self {
            graph,
            arena: page_buffer(plan.arena_len()),
            scratch: page_buffer(plan.scratch_len()),
            prepared,
            plan,
        })
    }

    /// The network.
    pub fn graph(&self) -> &Graph<'m> {
        &self.graph
    }

    /// `[n, c, h, w]` of graph input `k`.
    pub fn input_dims(&self, k: usize) -> [usize; 4] {
        dims(&self.graph, self.graph.inputs[k])
    }

    /// `[n, c, h, w]` of graph output `k`.
    pub fn output_dims(&self, k: usize) -> [usize; 4] {
        dims(&self.graph, self.graph.outputs[k])
    }

    /// Bytes of the activation arena.
    pub fn arena_bytes(&self) -> usize {
        self.plan.arena_bytes()
    }

    /// Bytes of the scratch buffer.
    pub fn scratch_bytes(&self) -> usize {
        self.plan.scratch_len() * 4
    }

    /// Bytes of the pre-transformed Winograd and blocked weights.
    pub fn prepared_bytes(&self) -> usize {
        self.plan.prepared_len() * 4
    }

    /// Fresh zeroed buffers for every output.
    pub fn output_buffers(&self) -> Vec<Vec<f32>> {
        (0..self.graph.outputs.len())
            .map(|k| vec![0.0; self.output_dims(k).iter().product()])
            .collect()
    }

    /// The plan (convolution methods, arena offsets).
    pub fn plan(&self) -> &Plan<'static> {
        &self.plan
    }

    /// [`Runner::run`] that also adds each node's wall time to `node_times[i]` (one entry per
    /// node of the graph; `forward_observed` reads the clock between nodes).
    pub fn run_timed(
        &mut self,
        inputs: &[&[f32]],
        outputs: &mut [Vec<f32>],
        node_times: &mut [std::time::Duration],
    ) -> Result<()> {
        if node_times.len() != self.graph.nodes.len() {
            bail!(
                "{} node times for {} nodes",
                node_times.len(),
                self.graph.nodes.len()
            );
        }
        let mut views: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        let mut last: Option<(usize, std::time::Instant)> = None;
        forward_observed(
            &self.graph,
            &self.plan,
            aligned_ref(&self.prepared, self.plan.prepared_len()),
            inputs,
            &mut views,
            aligned(&mut self.arena, self.plan.arena_len()),
            aligned(&mut self.scratch, self.plan.scratch_len()),
            |i| {
                let now = std::time::Instant::now();
                if let Some((j, t)) = last {
                    node_times[j] += now - t;
                }
                last = Some((i, now));
            },
        )
        .map_err(|e| anyhow!("forward failed: {e}"))
    }

    /// Runs the network on `inputs` (one packed NCHW slice per graph input) into `outputs`
    /// (from [`Runner::output_buffers`]).
    pub fn run(&mut self, inputs: &[&[f32]], outputs: &mut [Vec<f32>]) -> Result<()> {
        if inputs.len() != self.graph.inputs.len() {
            bail!(
                "the model has {} input(s), {} given",
                self.graph.inputs.len(),
                inputs.len()
            );
        }
        let mut views: Vec<&mut [f32]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        forward_prepared(
            &self.graph,
            &self.plan,
            aligned_ref(&self.prepared, self.plan.prepared_len()),
            inputs,
            &mut views,
            aligned(&mut self.arena, self.plan.arena_len()),
            aligned(&mut self.scratch, self.plan.scratch_len()),
        )
        .map_err(|e| anyhow!("forward failed: {e}"))
    }
}

/// `len` zeros for [`aligned`], with [`page_align_slack`] more (`vec!` of zeros maps fresh
/// pages, so the slack is never touched).
fn page_buffer(len: usize) -> Vec<f32> {
    vec![0.0; len + page_align_slack(len)]
}

/// The `len` elements of `buf` (from [`page_buffer`]) that every call uses: [`page_aligned`].
fn aligned(buf: &mut [f32], len: usize) -> &mut [f32] {
    page_aligned(buf, len).expect("allocated with page_align_slack")
}

/// [`aligned`] for reading.
fn aligned_ref(buf: &[f32], len: usize) -> &[f32] {
    page_aligned_ref(buf, len).expect("allocated with page_align_slack")
}

/// `[n, c, h, w]` as `NxCxHxW`.
pub fn dims_text(d: &[usize]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("x")
}
