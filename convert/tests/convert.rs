//! Converter behaviour beyond conformance: error messages that name what is unsupported, no
//! panic on truncated or garbage input, the fusions it reports, the batch option, and
//! [`ModelFile`] (with the huge-page span it advises).

use std::path::Path;

use mvision_convert::{convert, ConvertError, ConvertOptions, ModelFile};
use mvision_core::nn::model::{huge_page_span, HUGE_PAGE_BYTES};
use onnx_protobuf::tensor_shape_proto::{dimension, Dimension};
use onnx_protobuf::type_proto::{Tensor, Value as Ty};
use onnx_protobuf::{
    GraphProto, Message, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};

fn case(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/onnx-node/cases")
        .join(name)
        .join("model.onnx");
    std::fs::read(p).expect("run tests/onnx-node/extract.py")
}

fn value(name: &str, elem_type: i32, dims: &[Option<i64>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| {
            let mut x = Dimension::new();
            x.value = Some(match d {
                Some(v) => dimension::Value::DimValue(*v),
                None => dimension::Value::DimParam("N".into()),
            });
            x
        })
        .collect();
    let mut shape = TensorShapeProto::new();
    shape.dim = dim;
    let mut t = Tensor::new();
    t.elem_type = elem_type;
    t.shape = Some(shape).into();
    let mut ty = TypeProto::new();
    ty.value = Some(Ty::TensorType(t));
    let mut v = ValueInfoProto::new();
    v.name = name.into();
    v.type_ = Some(ty).into();
    v
}

fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    let mut n = NodeProto::new();
    n.op_type = op.into();
    n.name = name.into();
    n.input = inputs.iter().map(|s| s.to_string()).collect();
    n.output = outputs.iter().map(|s| s.to_string()).collect();
    n
}

fn model(nodes: Vec<NodeProto>, input: ValueInfoProto, output: &str) -> Vec<u8> {
    let mut g = GraphProto::new();
    g.node = nodes;
    g.input = vec![input];
    g.output = vec![value(output, 1, &[])];
    let mut m = ModelProto::new();
    m.ir_version = 8;
    let mut op = OperatorSetIdProto::new();
    op.version = 13;
    m.opset_import = vec![op];
    m.graph = Some(g).into();
    m.write_to_bytes().unwrap()
}

#[test]
fn unsupported_operators_are_all_named() {
    let m = model(
        vec![
            node("Relu", "r", &["x"], &["a"]),
            node("Foo", "foo1", &["a"], &["b"]),
            node("Bar", "", &["b"], &["c"]),
            node("Foo", "foo2", &["c"], &["y"]),
        ],
        value("x", 1, &[Some(1), Some(2)]),
        "y",
    );
    let e = convert(&m, &ConvertOptions::default()).unwrap_err();
    assert_eq!(
        e,
        ConvertError::UnsupportedOps {
            ops: vec!["Bar".into(), "Foo".into()],
            nodes: vec!["foo1".into(), "#2".into(), "foo2".into()],
        }
    );
    assert_eq!(
        e.to_string(),
        "unsupported ONNX operators: Bar, Foo (nodes foo1, #2, foo2)"
    );
}

#[test]
fn truncated_or_garbage_input_is_an_error_not_a_panic() {
    let bytes = case("custom_mtcnn_like_chain");
    convert(&bytes, &ConvertOptions::default()).unwrap();
    let mut errors = 0;
    for len in (0..bytes.len()).step_by(3) {
        if convert(&bytes[..len], &ConvertOptions::default()).is_err() {
            errors += 1;
        }
    }
    assert!(errors > bytes.len() / 3 - 2, "{errors} errors");
    let mut state = 0x1234_5678_9abc_def0u64;
    for len in [0, 1, 7, 100, 5000] {
        let garbage: Vec<u8> = (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        assert!(convert(&garbage, &ConvertOptions::default()).is_err());
    }
    // Flipped bytes: an error or a valid conversion, never a panic.
    for i in (0..bytes.len()).step_by(5) {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        let _ = convert(&b, &ConvertOptions::default());
    }
}

#[test]
fn conv_batchnorm_relu_becomes_one_node() {
    let c = convert(
        &case("custom_conv_group2_dilated_bn_relu"),
        &ConvertOptions::default(),
    )
    .unwrap();
    assert_eq!(c.nodes.len(), 1);
    assert_eq!(c.stats.folded_batch_norms, 1);
    assert_eq!(c.stats.fused_activations, 1);
    // The residual case: the Relu output is a graph output and read by the second conv,
    // but the first conv's output has the Relu as its only reader, so the Relu still fuses.
    let r = convert(&case("custom_residual_add"), &ConvertOptions::default()).unwrap();
    assert_eq!(r.stats.fused_activations, 1);
    assert_eq!(r.output_names, ["y", "r"]);
}

#[test]
fn symbolic_batch_needs_the_batch_option() {
    let m = model(
        vec![node("Relu", "r", &["x"], &["y"])],
        value("x", 1, &[None, Some(3), Some(4)]),
        "y",
    );
    let e = convert(&m, &ConvertOptions::default()).unwrap_err();
    assert_eq!(
        e,
        ConvertError::DynamicShape {
            name: "x".into(),
            dim: 0
        }
    );
    assert!(e.to_string().contains("--batch"));
    let c = convert(&m, &ConvertOptions { batch: Some(5) }).unwrap();
    assert_eq!(c.input_dims, [vec![5, 3, 4]]);
    assert_eq!(c.output_dims, [vec![5, 3, 4]]);
    let bad = model(
        vec![node("Relu", "r", &["x"], &["y"])],
        value("x", 1, &[Some(2), None]),
        "y",
    );
    assert!(matches!(
        convert(&bad, &ConvertOptions { batch: Some(5) }),
        Err(ConvertError::DynamicShape { dim: 1, .. })
    ));
    let int = model(
        vec![node("Relu", "r", &["x"], &["y"])],
        value("x", 7, &[Some(2)]),
        "y",
    );
    assert!(matches!(
        convert(&int, &ConvertOptions::default()),
        Err(ConvertError::NonFloat { data_type: 7, .. })
    ));
    let rank5 = model(
        vec![node("Relu", "r", &["x"], &["y"])],
        value("x", 1, &[Some(1); 5]),
        "y",
    );
    assert!(matches!(
        convert(&rank5, &ConvertOptions::default()),
        Err(ConvertError::Rank { rank: 5, .. })
    ));
}

#[test]
fn model_file_round_trip() {
    let c = convert(&case("custom_mtcnn_like_chain"), &ConvertOptions::default()).unwrap();
    let bytes = c.to_mvnn().unwrap();
    let path = std::env::temp_dir().join(format!("mvision-convert-{}.mvnn", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let f = ModelFile::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(f.bytes(), bytes.as_slice());
    assert_eq!(f.bytes().as_ptr() as usize % 16, 0);
    let m = f.model().unwrap();
    assert_eq!(m.graph().nodes, c.nodes.as_slice());
    assert_eq!(m.input_name(0), Some("x"));
    assert_eq!(m.output_name(0), Some("y"));
    let cut = ModelFile::from_bytes(&bytes[..bytes.len() - 1]);
    assert!(cut.model().is_err());
    assert!(matches!(
        ModelFile::read("/nonexistent/x.mvnn"),
        Err(ConvertError::Io(_))
    ));
}

#[test]
fn huge_page_span_is_the_whole_aligned_pages() {
    const H: usize = HUGE_PAGE_BYTES;
    assert_eq!(huge_page_span(0, 2 * H), Some((0, 2 * H)));
    assert_eq!(huge_page_span(1, 2 * H), Some((H, H)));
    assert_eq!(huge_page_span(1, H), None);
    assert_eq!(huge_page_span(H - 1, H + 1), Some((H, H)));
    assert_eq!(huge_page_span(H - 1, H), None);
    assert_eq!(huge_page_span(3 * H, H - 1), None);
    assert_eq!(huge_page_span(usize::MAX - 5, 5), None);
    assert_eq!(huge_page_span(usize::MAX - 5, 10), None);
    // Random spans: aligned, inside the buffer, and less than a page short at either end.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..10_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let addr = (state % (1 << 40)) as usize;
        let len = ((state >> 40) as usize) % (8 * H);
        match huge_page_span(addr, len) {
            Some((start, bytes)) => {
                assert!(start % H == 0 && bytes % H == 0 && bytes > 0);
                assert!(start >= addr && start + bytes <= addr + len);
                assert!(start - addr < H && addr + len - (start + bytes) < H);
            }
            None => assert!(addr.next_multiple_of(H) + H > addr + len),
        }
    }
    // A model-sized buffer keeps its bytes (the advice changes only how pages are backed).
    let big: Vec<u8> = (0..5 * H + 7).map(|i| (i * 7 + i / 4099) as u8).collect();
    let f = ModelFile::from_bytes(&big);
    assert_eq!(f.bytes(), big.as_slice());
}
