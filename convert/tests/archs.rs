//! Whole networks: every `DIR/<name>/{model.onnx, input.npy, expected.npy}` (or `expected0.npy`,
//! `expected1.npy`… for several outputs) under the directory
//! named by `MVISION_MODELS_DIR` (written by `models/make_archs.py` or `models/mtcnn_to_onnx.py`:
//! AlexNet, SqueezeNet 1.1, ResNet-18, MobileNetV2, MTCNN, with ONNX Runtime's outputs) is
//! converted, round-tripped through `.mvnn`, run, and compared within
//! `|y − e| ≤ 1e-4·max(1, |e|)`. Without the variable the test says so and passes: the models
//! are generated, not committed.

use std::fs;
use std::path::Path;

use mvision_convert::{convert, ConvertOptions, ModelFile};
use mvision_core::nn::plan::{forward, make_plan, plan_len, PlanSlot};

/// The `float32` little-endian C-order data of a `.npy` file.
fn read_npy(path: &Path) -> Result<Vec<f32>, String> {
    let b = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return Err(format!("{}: not a .npy file", path.display()));
    }
    let (hlen, at) = if b[6] == 1 {
        (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
    } else {
        let h = b.get(8..12).ok_or("short header")?;
        (u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize, 12)
    };
    let header = String::from_utf8_lossy(b.get(at..at + hlen).ok_or("short header")?);
    if !header.contains("'<f4'") || header.contains("'fortran_order': True") {
        return Err(format!(
            "{}: not little-endian C-order float32",
            path.display()
        ));
    }
    Ok(b[at + hlen..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn run(dir: &Path) -> Result<String, String> {
    let onnx = fs::read(dir.join("model.onnx")).map_err(|e| e.to_string())?;
    let c = convert(&onnx, &ConvertOptions::default()).map_err(|e| e.to_string())?;
    let file = ModelFile::from_bytes(&c.to_mvnn().map_err(|e| e.to_string())?);
    let model = file.model().map_err(|e| e.to_string())?;
    let g = model.graph();
    if g.inputs.len() != 1 {
        return Err("expects one input".into());
    }
    let x = read_npy(&dir.join("input.npy"))?;
    let expected: Vec<Vec<f32>> = if dir.join("expected.npy").exists() {
        vec![read_npy(&dir.join("expected.npy"))?]
    } else {
        (0..)
            .map(|k| dir.join(format!("expected{k}.npy")))
            .take_while(|p| p.exists())
            .map(|p| read_npy(&p))
            .collect::<Result<_, _>>()?
    };
    if expected.len() != g.outputs.len() {
        return Err(format!(
            "{} expected outputs for {}",
            expected.len(),
            g.outputs.len()
        ));
    }
    let mut slots = vec![PlanSlot::EMPTY; plan_len(g)];
    let plan = make_plan(g, 64 << 20, &mut slots).map_err(|e| e.to_string())?;
    let mut arena = vec![0.0; plan.arena_len()];
    let mut scratch = vec![0.0; plan.scratch_len()];
    let mut ys: Vec<Vec<f32>> = expected.iter().map(|e| vec![f32::NAN; e.len()]).collect();
    {
        let mut refs: Vec<&mut [f32]> = ys.iter_mut().map(Vec::as_mut_slice).collect();
        forward(g, &plan, &[&x], &mut refs, &mut arena, &mut scratch).map_err(|e| e.to_string())?;
    }
    let mut worst = 0.0f32;
    for (k, (y, e)) in ys.iter().zip(&expected).enumerate() {
        for (i, (&a, &b)) in y.iter().zip(e).enumerate() {
            let err = (a - b).abs() / b.abs().max(1.0);
            if err.is_nan() || err > 1e-4 {
                return Err(format!("output {k} [{i}] = {a}, expected {b}"));
            }
            worst = worst.max(err);
        }
    }
    Ok(format!(
        "{} nodes ({} activations fused, {} batch norms folded), arena {} bytes, worst error {worst:.2e}",
        c.nodes.len(),
        c.stats.fused_activations,
        c.stats.folded_batch_norms,
        plan.arena_bytes()
    ))
}

#[test]
fn generated_networks_match_onnx_runtime() {
    let Ok(root) = std::env::var("MVISION_MODELS_DIR") else {
        println!("skipped: set MVISION_MODELS_DIR to a directory written by models/make_archs.py");
        return;
    };
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .expect("MVISION_MODELS_DIR")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("model.onnx").exists() && p.join("input.npy").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no models under {root}");
    let mut failed = Vec::new();
    for d in &dirs {
        let name = d
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        match run(d) {
            Ok(s) => println!("{name}: {s}"),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
