//! ONNX backend node conformance: every case of `tests/onnx-node/cases/` (written by
//! `extract.py`, see its README) is converted, written as a `.mvnn` file, parsed back in place,
//! planned and run; each output must match the expected one within
//! `|y − e| ≤ 1e-4·max(1, |e|)`. Every failing case is reported by name.

use std::fs;
use std::path::{Path, PathBuf};

use mvision_convert::{convert, read_tensor, ConvertOptions, ModelFile};
use mvision_core::nn::plan::{forward, make_plan, plan_len, PlanSlot};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-node/cases");
    let mut v: Vec<PathBuf> = fs::read_dir(&root)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|k| dir.join(format!("{prefix}_{k}.pb")))
        .take_while(|p| p.exists())
        .collect()
}

fn run_case(dir: &Path) -> Result<(), String> {
    let onnx = fs::read(dir.join("model.onnx")).map_err(|e| e.to_string())?;
    let conv = convert(&onnx, &ConvertOptions::default()).map_err(|e| format!("convert: {e}"))?;
    let file = ModelFile::from_bytes(&conv.to_mvnn().map_err(|e| e.to_string())?);
    let model = file.model().map_err(|e| format!("parse: {e}"))?;
    let g = model.graph();
    let mut inputs = Vec::new();
    for (k, p) in numbered(dir, "input").iter().enumerate() {
        let (_, _, v) = read_tensor(&fs::read(p).map_err(|e| e.to_string())?)
            .map_err(|e| format!("input {k}: {e}"))?;
        inputs.push(v);
    }
    if inputs.len() != g.inputs.len() {
        return Err(format!(
            "{} input files for {} inputs",
            inputs.len(),
            g.inputs.len()
        ));
    }
    for (k, (x, &t)) in inputs.iter().zip(g.inputs).enumerate() {
        let n = g
            .shape(t)
            .map_err(|e| e.to_string())?
            .elements()
            .unwrap_or(0);
        if x.len() != n {
            return Err(format!("input {k}: {} values for {n} elements", x.len()));
        }
    }
    let mut slots = vec![PlanSlot::EMPTY; plan_len(g)];
    let plan = make_plan(g, 1 << 20, &mut slots).map_err(|e| format!("plan: {e}"))?;
    let mut arena = vec![f32::NAN; plan.arena_len()];
    let mut scratch = vec![f32::NAN; plan.scratch_len()];
    let mut outs: Vec<Vec<f32>> = g
        .outputs
        .iter()
        .map(|&t| vec![f32::NAN; g.shape(t).and_then(|s| s.elements()).unwrap_or(0)])
        .collect();
    {
        let ins: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let mut refs: Vec<&mut [f32]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
        forward(g, &plan, &ins, &mut refs, &mut arena, &mut scratch)
            .map_err(|e| format!("forward: {e}"))?;
    }
    let expected = numbered(dir, "output");
    if expected.len() != outs.len() {
        return Err(format!(
            "{} expected outputs for {}",
            expected.len(),
            outs.len()
        ));
    }
    for (k, (p, y)) in expected.iter().zip(&outs).enumerate() {
        let (_, dims, e) = read_tensor(&fs::read(p).map_err(|e| e.to_string())?)
            .map_err(|e| format!("output {k}: {e}"))?;
        if dims != conv.output_dims[k] {
            return Err(format!(
                "output {k}: dims {:?}, expected {dims:?}",
                conv.output_dims[k]
            ));
        }
        if e.len() != y.len() {
            return Err(format!(
                "output {k}: {} values, expected {}",
                y.len(),
                e.len()
            ));
        }
        for (i, (&a, &b)) in y.iter().zip(&e).enumerate() {
            let ok = (a - b).abs() <= 1e-4 * b.abs().max(1.0) || (a.is_nan() && b.is_nan());
            if !ok {
                return Err(format!("output {k}[{i}] = {a}, expected {b}"));
            }
        }
    }
    Ok(())
}

#[test]
fn onnx_backend_node_cases() {
    let cases = cases();
    assert!(
        !cases.is_empty(),
        "no cases: run tests/onnx-node/extract.py (see its README)"
    );
    let mut failed = Vec::new();
    for dir in &cases {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if let Err(e) = run_case(dir) {
            failed.push(format!("{name}: {e}"));
        }
    }
    println!(
        "{} of {} cases pass",
        cases.len() - failed.len(),
        cases.len()
    );
    assert!(
        failed.is_empty(),
        "{} failing cases:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
