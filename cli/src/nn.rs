//! Running a `.mvnn` network from the command line: the file read into aligned memory, and a
//! [`Runner`] that plans the network once and runs it (shared by `infer`, `classify` and
//! `bench net`).

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use mvision_core::nn::graph::Graph;
use mvision_core::nn::model::Model;
use mvision_core::nn::plan::{forward, make_plan, Plan, PlanSlot};

/// The workspace budget of `--workspace-budget` when absent: the C API's default (16 MiB).
pub const DEFAULT_WORKSPACE_BYTES: usize = mvision::net::MV_NET_DEFAULT_WORKSPACE_BYTES;

/// A model file's bytes in 16-byte aligned memory ([`Model::parse`] needs 4-byte alignment;
/// 16 keeps its weight sections aligned for vector loads).
pub struct ModelBytes {
    words: Vec<u128>,
    len: usize,
}

impl ModelBytes {
    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
}

/// Reads the file at `path` into aligned memory. (Private stand-in for the converter crate's
/// `ModelFile`, which will replace it.)
pub fn read_model_file(path: &Path) -> Result<ModelBytes> {
    let raw =
        std::fs::read(path).with_context(|| format!("cannot read model '{}'", path.display()))?;
    let mut words = vec![0u128; raw.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..raw.len()].copy_from_slice(&raw);
    Ok(ModelBytes {
        words,
        len: raw.len(),
    })
}

/// Parses a model read by [`read_model_file`], naming the file in the error.
pub fn parse_model<'a>(bytes: &'a ModelBytes, path: &Path) -> Result<Model<'a>> {
    Model::parse(bytes.bytes())
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("'{}' is not a valid .mvnn model", path.display()))
}

/// A planned network with its arena and scratch allocated.
pub struct Runner<'m> {
    graph: Graph<'m>,
    plan: Plan<'static>,
    arena: Vec<f32>,
    scratch: Vec<f32>,
}

/// `[n, c, h, w]` of tensor `id` (validated by [`Model::parse`]).
fn dims(graph: &Graph<'_>, id: u32) -> [usize; 4] {
    let t = graph.tensors[id as usize];
    [t.n, t.c, t.h, t.w].map(|d| d as usize)
}

impl<'m> Runner<'m> {
    /// Plans `graph` with convolutions limited to `workspace_budget_bytes` of working memory.
    pub fn new(graph: Graph<'m>, workspace_budget_bytes: usize) -> Result<Self> {
        // The plan borrows its slots; a CLI run plans a handful of models, so they are leaked
        // (a few bytes per tensor) rather than tied to a self-referential struct.
        let slots: &'static mut [PlanSlot] =
            Box::leak(vec![PlanSlot::EMPTY; graph.tensors.len()].into_boxed_slice());
        let plan = make_plan(&graph, workspace_budget_bytes, slots)
            .map_err(|e| anyhow!("cannot plan the network: {e}"))?;
        Ok(Self {
            graph,
            arena: vec![0.0; plan.arena_len()],
            scratch: vec![0.0; plan.scratch_len()],
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

    /// Fresh zeroed buffers for every output.
    pub fn output_buffers(&self) -> Vec<Vec<f32>> {
        (0..self.graph.outputs.len())
            .map(|k| vec![0.0; self.output_dims(k).iter().product()])
            .collect()
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
        forward(
            &self.graph,
            &self.plan,
            inputs,
            &mut views,
            &mut self.arena,
            &mut self.scratch,
        )
        .map_err(|e| anyhow!("forward failed: {e}"))
    }
}

/// `[n, c, h, w]` as `NxCxHxW`.
pub fn dims_text(d: &[usize]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("x")
}
