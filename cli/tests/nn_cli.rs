//! End-to-end tests of `mvision infer`, `mvision classify` and `mvision bench net`: the binary
//! runs the committed tiny model (`cmake/examples/data/tiny.mvnn`) and small models built here,
//! and its results are compared with the core's own `forward` (bit for bit) and with values
//! worked out by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mvision_core::nn::graph::{Graph, Node, TensorDesc, WeightRange};
use mvision_core::nn::model::{encode, encoded_len, Model};
use mvision_core::nn::plan::{forward, make_plan, PlanSlot};
use ndarray::{ArrayD, IxDyn};

fn mvision(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mvision"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run mvision")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "failed: {}", text(&out.stderr));
    text(&out.stdout)
}

fn fails(out: &Output, needle: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "expected a failure");
    assert!(
        err.contains(needle),
        "stderr should mention {needle:?}: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

fn tiny_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cmake/examples/data/tiny.mvnn")
}

fn save(path: &Path, shape: &[usize], data: Vec<f32>) {
    let a = ArrayD::from_shape_vec(IxDyn(shape), data).unwrap();
    ndarray_npy::write_npy(path, &a).unwrap();
}

/// The core's outputs for the tiny model on `inputs`, at the CLI's default budget.
fn core_outputs(inputs: &[&[f32]]) -> Vec<Vec<f32>> {
    let file = mvision_convert::ModelFile::read(tiny_path()).unwrap();
    let model = Model::parse(file.bytes()).unwrap();
    let g = model.graph();
    let mut slots = vec![PlanSlot::EMPTY; g.tensors.len()];
    let plan = make_plan(g, mvision::net::MV_NET_DEFAULT_WORKSPACE_BYTES, &mut slots).unwrap();
    let mut arena = vec![0.0; plan.arena_len()];
    let mut scratch = vec![0.0; plan.scratch_len()];
    let mut outs = vec![vec![0.0f32; 4], vec![0.0f32; 27]];
    let mut views: Vec<&mut [f32]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
    forward(g, &plan, inputs, &mut views, &mut arena, &mut scratch).unwrap();
    outs
}

#[test]
fn infer_matches_core_forward_and_applies_the_shape_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let image: Vec<f32> = (0..72).map(|i| (i as f32 * 0.37).sin()).collect();
    let bias = vec![0.5f32, -0.25, 0.125];
    save(&d.join("x.npy"), &[1, 2, 6, 6], image.clone());
    // A 1x3x1x1 input given with its trailing 1s dropped.
    save(&d.join("b.npy"), &[1, 3], bias.clone());
    let model = tiny_path();
    let m = model.to_str().unwrap();
    let args = [
        "infer", "--model", m, "--input", "x.npy", "--input", "b.npy", "--output", "p.npy",
        "--output", "q.npy", "--repeat", "3",
    ];
    let out = ok(&mvision(d, &args));
    assert!(out.contains("output 0 'probs': 1x4 -> p.npy"), "{out}");
    assert!(out.contains("output 1 'pooled': 1x3x3x3 -> q.npy"), "{out}");
    assert!(out.contains("median of 3"), "{out}");
    let want = core_outputs(&[&image, &bias]);
    let p: ArrayD<f32> = ndarray_npy::read_npy(d.join("p.npy")).unwrap();
    let q: ArrayD<f32> = ndarray_npy::read_npy(d.join("q.npy")).unwrap();
    assert_eq!(p.shape(), [1, 4]);
    assert_eq!(q.shape(), [1, 3, 3, 3]);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(p.as_slice().unwrap()), bits(&want[0]));
    assert_eq!(bits(q.as_slice().unwrap()), bits(&want[1]));

    // Rank 3 with the trailing 1 kept is accepted; a dropped leading 1, a wrong count, float64
    // and a missing file are clear errors.
    save(&d.join("b3.npy"), &[1, 3, 1], bias.clone());
    let mut a = args;
    a[6] = "b3.npy";
    ok(&mvision(d, &a));
    save(&d.join("flat.npy"), &[3], bias.clone());
    a[6] = "flat.npy";
    fails(&mvision(d, &a), "does not match the model input 1x3x1x1");
    save(&d.join("long.npy"), &[1, 4], vec![0.0; 4]);
    a[6] = "long.npy";
    fails(&mvision(d, &a), "does not match");
    let f64s = ArrayD::<f64>::zeros(IxDyn(&[1, 3]));
    ndarray_npy::write_npy(d.join("f64.npy"), &f64s).unwrap();
    a[6] = "f64.npy";
    fails(&mvision(d, &a), "float32");
    a[6] = "missing.npy";
    fails(&mvision(d, &a), "missing.npy");
    fails(&mvision(d, &args[..9]), "give --input 2 and --output 2");
    let not_a_model = [
        "infer", "--model", "x.npy", "--input", "x.npy", "--output", "y.npy",
    ];
    fails(&mvision(d, &not_a_model), "not a valid .mvnn model");
}

/// 1×`c`×4×4 → global average pool → flatten → fully connected (identity, `c` classes),
/// optionally → softmax: the class scores are the mean of each channel.
fn mean_classifier(c: u32, with_softmax: bool) -> Vec<u8> {
    let mut weights = vec![0.0f32; (c * c) as usize];
    for i in 0..c as usize {
        weights[i * c as usize + i] = 1.0;
    }
    let mut tensors = vec![
        TensorDesc::new(1, c, 4, 4),
        TensorDesc::new(1, c, 1, 1),
        TensorDesc::new(1, c, 1, 1),
        TensorDesc::new(1, c, 1, 1),
    ];
    let fw = WeightRange::new(0, c * c);
    let mut nodes = vec![
        Node::global_avg_pool(0, 1),
        Node::flatten(1, 2, 1),
        Node::fully_connected(2, 3, fw, WeightRange::default()),
    ];
    let mut out = 3;
    if with_softmax {
        tensors.push(TensorDesc::new(1, c, 1, 1));
        nodes.push(Node::softmax(3, 4, 1));
        out = 4;
    }
    let outputs = [out];
    let g = Graph {
        tensors: &tensors,
        nodes: &nodes,
        weights: &weights,
        inputs: &[0],
        outputs: &outputs,
    };
    let mut file = vec![0u8; encoded_len(&g, &["image"], &["scores"]).unwrap()];
    encode(&g, &["image"], &["scores"], &mut file).unwrap();
    file
}

#[test]
fn classify_ranks_the_channels_of_a_solid_image() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let img = image::RgbImage::from_pixel(10, 7, image::Rgb([200, 30, 90]));
    img.save(d.join("img.png")).unwrap();
    std::fs::write(d.join("labels.txt"), "red\ngreen\nblue\n").unwrap();
    std::fs::write(d.join("rgb.mvnn"), mean_classifier(3, false)).unwrap();
    std::fs::write(d.join("rgb_softmax.mvnn"), mean_classifier(3, true)).unwrap();
    std::fs::write(d.join("gray.mvnn"), mean_classifier(1, false)).unwrap();

    // Logits 200/255, 30/255, 90/255: softmax is applied.
    let base = [
        "classify",
        "--model",
        "rgb.mvnn",
        "--image",
        "img.png",
        "--labels",
        "labels.txt",
    ];
    let out = ok(&mvision(d, &base));
    assert!(out.contains("softmax applied"), "{out}");
    let e = [200.0f64, 30.0, 90.0].map(|v| (v / 255.0).exp());
    let sum: f64 = e.iter().sum();
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("1 red "), "{out}");
    assert!(lines[1].starts_with("2 blue "), "{out}");
    assert!(lines[2].starts_with("3 green "), "{out}");
    let score: f64 = lines[0].split(' ').nth(2).unwrap().parse().unwrap();
    assert!((score - e[0] / sum).abs() < 1e-5, "{out}");

    // The model's own softmax: printed as they are; --top 1; scale and offset.
    let mut a = base.to_vec();
    a[2] = "rgb_softmax.mvnn";
    a.extend(["--top", "1", "--scale", "-1", "--offset", "255"]);
    let out = ok(&mvision(d, &a));
    assert!(out.contains("already probabilities"), "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.lines().nth(1).unwrap().starts_with("1 green "), "{out}");

    // Gray model: one class, probability 1; no labels: the index.
    let g = ["classify", "--model", "gray.mvnn", "--image", "img.png"];
    let out = ok(&mvision(d, &g));
    assert!(out.lines().nth(1).unwrap().starts_with("1 0 1.0"), "{out}");

    // A sheet of two 4x4 tiles (the model's input size), red then blue, with the truth.
    let mut sheet = image::RgbImage::from_pixel(8, 4, image::Rgb([250, 10, 10]));
    for y in 0..4 {
        for x in 4..8 {
            sheet.put_pixel(x, y, image::Rgb([0, 20, 240]));
        }
    }
    sheet.save(d.join("sheet.png")).unwrap();
    std::fs::write(d.join("truth.txt"), "0\n2\n").unwrap();
    std::fs::write(d.join("wrong.txt"), "0\n1\n").unwrap();
    let mut tiles = base.to_vec();
    tiles[4] = "sheet.png";
    tiles.extend(["--tiles", "--truth", "truth.txt", "--top", "2"]);
    let out = ok(&mvision(d, &tiles));
    assert!(
        out.contains("tile 0 red ") && out.contains("tile 1 blue "),
        "{out}"
    );
    assert!(out.contains("top-1 accuracy: 2/2 (100.00 %)"), "{out}");
    assert!(out.contains("top-2 accuracy: 2/2"), "{out}");
    let at = tiles.len() - 3;
    tiles[at] = "wrong.txt";
    let out = ok(&mvision(d, &tiles));
    assert!(
        out.contains("(truth green)") && out.contains("top-1 accuracy: 1/2"),
        "{out}"
    );
    let mut odd = base.to_vec();
    odd.extend(["--tiles"]);
    fails(&mvision(d, &odd), "not a whole number of 4x4");

    // A model with two inputs is refused.
    let tiny = tiny_path();
    let t = [
        "classify",
        "--model",
        tiny.to_str().unwrap(),
        "--image",
        "img.png",
    ];
    fails(&mvision(d, &t), "one input");
}

#[test]
fn bench_net_reports_latency_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = tiny_path();
    let args = [
        "bench",
        "net",
        "--model",
        tiny.to_str().unwrap(),
        "--repeat",
        "2",
        "--json",
    ];
    let out = ok(&mvision(dir.path(), &args));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON document");
    assert_eq!(v["command"], "bench net");
    assert_eq!(v["threads"], 1);
    assert!(v["arena_bytes"].as_u64().unwrap() > 0);
    // The plan's scratch, in bytes (0 for the tiny model since its batch-1 fully connected
    // layer, the only node that needed working memory, packs nothing).
    let file = mvision_convert::ModelFile::read(&tiny).unwrap();
    let model = Model::parse(file.bytes()).unwrap();
    let g = model.graph();
    let mut slots = vec![PlanSlot::EMPTY; g.tensors.len()];
    let plan = make_plan(g, mvision::net::MV_NET_DEFAULT_WORKSPACE_BYTES, &mut slots).unwrap();
    assert_eq!(v["scratch_bytes"], plan.scratch_len() as u64 * 4);
    assert_eq!(
        v["prepared_bytes"], 0,
        "the tiny model has no Winograd layer"
    );
    assert!(v["median_ms"].as_f64().unwrap() > 0.0);
    let text_args = [
        "bench",
        "net",
        "--model",
        tiny.to_str().unwrap(),
        "--repeat",
        "1",
        "--prepared-budget",
        "1000000",
    ];
    let out = ok(&mvision(dir.path(), &text_args));
    assert!(out.contains("arena ") && out.contains("forward: "), "{out}");
    assert!(out.contains("prepared weights 0 bytes"), "{out}");
}

#[test]
fn digits_model_reproduces_its_held_out_accuracy() {
    // Issue 4: the digits CNN trained by models/train_digits.py (98.33 % held out, ONNX Runtime
    // agreeing on all 360) converted and run through `mvision classify`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/data");
    let (onnx, sheet, truth) = (
        data.join("digits.onnx"),
        data.join("digits_heldout.png"),
        data.join("digits_heldout_labels.txt"),
    );
    let convert = ["convert", onnx.to_str().unwrap(), "-o", "digits.mvnn"];
    ok(&mvision(d, &convert));
    let classify = [
        "classify",
        "--model",
        "digits.mvnn",
        "--image",
        sheet.to_str().unwrap(),
        "--tiles",
        "--truth",
        truth.to_str().unwrap(),
    ];
    let out = ok(&mvision(d, &classify));
    assert!(out.contains("360 tiles of 8x8"), "{out}");
    assert!(out.contains("top-1 accuracy: 354/360 (98.33 %)"), "{out}");
    // One digit on its own, with labels: models/data/digits_expected.json says 9 at 0.865439.
    let (nine, labels) = (
        data.join("digit_254_label9.png"),
        data.join("digits_labels.txt"),
    );
    let one = [
        "classify",
        "--model",
        "digits.mvnn",
        "--image",
        nine.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--top",
        "1",
    ];
    let out = ok(&mvision(d, &one));
    assert!(
        out.lines().nth(1).unwrap().starts_with("1 9 0.8654"),
        "{out}"
    );
}
