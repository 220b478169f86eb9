#!/usr/bin/env python3
"""Copies the ONNX backend node tests that mvision-convert supports into cases/<name>/.

Usage: python3 extract.py   (needs `pip install onnx==1.22.0 numpy onnxruntime==1.22.1`: onnx
1.22.0 is the last wheel that ships onnx/backend/test/data/node/*/{model.onnx,test_data_set_0/*.pb};
ONNX Runtime computes the custom cases' expected outputs).

The node tests pass weights as graph inputs, but the engine needs them constant (Conv W/B, Gemm
B/C, PRelu slope, BatchNormalization parameters, Clip min/max, Pad pads/value/axes, Reshape
shape, ReduceMean axes, Dropout ratio/training_mode). For every such operand that is a graph
input, this script turns the graph input into an initializer holding the value from the case's
test_data_set_0/input_K.pb, drops that .pb, and renumbers the remaining input_*.pb files in
graph-input order. Models are saved with ir_version = 8 (what ONNX Runtime 1.31 accepts). The
first input of every node is never rewritten, so each case keeps real graph inputs.

test_edge_pad and test_reflect_pad use int32 data (small integers); they are cast to float
(exact), model and .pb files alike, so that the float engine covers those modes.

It also writes a few custom_* cases that the node tests lack (a depthwise and a grouped, dilated
convolution; Conv + BatchNormalization + Relu, which the converter folds and fuses; an
MTCNN-like Conv + PRelu + MaxPool(ceil) + Gemm + Softmax chain; a residual Add), built with
onnx.helper from seeded random weights, with expected outputs from ONNX Runtime (onnx.reference
gets opset-11 Softmax and opset-13 BatchNormalization wrong); older-opset forms (Softmax over the
2-D coercion, Clip / Pad / ReduceMean attributes); constant operands (Gemm with a constant
transposed A, MatMul by a constant matrix, Sub / Mul with constants).

Prints the included and skipped cases and writes the table of README.md.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
OUT = os.path.join(HERE, "cases")

# Cases considered: test names starting with one of these.
PREFIXES = [
    "test_conv_", "test_basic_conv_", "test_maxpool_", "test_averagepool_",
    "test_globalaveragepool", "test_gemm_", "test_matmul_", "test_relu", "test_leakyrelu",
    "test_prelu_", "test_clip", "test_sigmoid", "test_softmax_", "test_batchnorm_",
    "test_concat_", "test_add", "test_sub", "test_mul", "test_flatten_", "test_reshape_",
    "test_constant_pad", "test_edge_pad", "test_reflect_pad", "test_wrap_pad",
    "test_reduce_mean_", "test_dropout_", "test_identity",
]

# Which inputs of each operator must be constant in our engine.
CONST_INPUTS = {
    "Conv": {1, 2}, "Gemm": {1, 2}, "PRelu": {1}, "BatchNormalization": {1, 2, 3, 4},
    "Clip": {1, 2}, "Pad": {1, 2, 3}, "Reshape": {1}, "ReduceMean": {1}, "Dropout": {1, 2},
}

# Cases the engine does not support, with the reason (the converter rejects each clearly).
EXCLUDE = {
    "test_averagepool_2d_dilations": "dilated pooling is not supported",
    "test_maxpool_2d_dilations": "dilated pooling is not supported",
    "test_maxpool_with_argmax_2d_precomputed_pads": "the Indices output is not supported",
    "test_maxpool_with_argmax_2d_precomputed_strides": "the Indices output is not supported",
    "test_gemm_transposeA": "transA = 1 needs a constant A (A is the graph input)",
    "test_gemm_all_attributes": "transA = 1 needs a constant A (A is the graph input)",
    "test_clip_min_greater_than_max": "min > max is rejected",
    "test_wrap_pad": "wrap padding is not supported",
    "test_batchnorm_epsilon_training_mode": "training mode (inference only)",
    "test_batchnorm_example_training_mode": "training mode (inference only)",
    "test_dropout_default_mask": "the mask output is not supported",
    "test_dropout_default_mask_ratio": "the mask output is not supported",
    "test_identity_opt": "optional types are not supported",
    "test_identity_sequence": "sequence types are not supported",
    "test_reshape_allowzero_reordered": "zero-size tensors are not supported",
    "test_constant_pad_negative_axes": "",  # placeholder removed below when supported
}
EXCLUDE.pop("test_constant_pad_negative_axes")

# int32 cases cast to float (module docs).
CAST_TO_FLOAT = {"test_edge_pad", "test_reflect_pad"}


def cast_model(model):
    for v in list(model.graph.input) + list(model.graph.output):
        if v.type.tensor_type.elem_type == TensorProto.INT32:
            v.type.tensor_type.elem_type = TensorProto.FLOAT


def cast_pb(src, dst):
    t = TensorProto()
    with open(src, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == TensorProto.INT32:
        a = numpy_helper.to_array(t).astype(np.float32)
        t = numpy_helper.from_array(a, t.name)
    with open(dst, "wb") as f:
        f.write(t.SerializeToString())


def custom_cases():
    """Small models the node tests lack (module docs): (name, model, inputs)."""
    rng = np.random.default_rng(20261121)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    init = lambda name, a: numpy_helper.from_array(a, name)
    vi = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    cases = []

    def add(name, nodes, inits, inputs, outputs, opset=13):
        g = helper.make_graph(nodes, name, [vi(n, x.shape) for n, x in inputs],
                              [vi(n, None) for n in outputs], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        cases.append((name, m, [x for _, x in inputs]))

    add("custom_conv_depthwise",
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=4, pads=[1, 1, 1, 1], strides=[2, 1])],
        [init("w", f32(4, 1, 3, 3)), init("b", f32(4))], [("x", f32(2, 4, 7, 6))], ["y"])
    add("custom_conv_group2_dilated_bn_relu",
        [helper.make_node("Conv", ["x", "w"], ["c"], group=2, dilations=[2, 2], pads=[2, 1, 2, 1]),
         helper.make_node("BatchNormalization", ["c", "g", "be", "m", "v"], ["n"], epsilon=1e-3),
         helper.make_node("Relu", ["n"], ["y"])],
        [init("w", f32(6, 2, 3, 3)), init("g", f32(6)), init("be", f32(6)), init("m", f32(6)),
         init("v", (rng.random(6) + 0.5).astype(np.float32))],
        [("x", f32(1, 4, 9, 8))], ["y"])
    add("custom_mtcnn_like_chain",
        [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
         helper.make_node("PRelu", ["c", "s"], ["p"]),
         helper.make_node("MaxPool", ["p"], ["q"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
         helper.make_node("Flatten", ["q"], ["f"]),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
         helper.make_node("Softmax", ["g"], ["y"], axis=1)],
        [init("w", f32(5, 3, 3, 3)), init("b", f32(5)), init("s", (0.25 * rng.random((5, 1, 1))).astype(np.float32)),
         init("fw", f32(2, 5 * 6 * 5)), init("fb", f32(2))],
        [("x", f32(2, 3, 14, 12))], ["y"])
    add("custom_residual_add",
        [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["a"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["b"], pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["b", "x"], ["s"]),
         helper.make_node("Clip", ["s", "lo", "hi"], ["t"]),
         helper.make_node("GlobalAveragePool", ["t"], ["y"])],
        [init("w1", f32(3, 3, 3, 3)), init("w2", f32(3, 3, 3, 3)),
         init("lo", np.array(0, np.float32)), init("hi", np.array(6, np.float32))],
        [("x", f32(1, 3, 6, 5))], ["y", "r"])
    # Older opsets' semantics (attributes instead of inputs, Softmax over the 2-D coercion).
    add("custom_opset11_softmax_coerced",
        [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [], [("x", f32(2, 3, 4))], ["y"], opset=11)
    add("custom_opset10_clip_attributes",
        [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.7)], [], [("x", f32(2, 5))], ["y"], opset=10)
    add("custom_opset10_pad_attribute",
        [helper.make_node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 0, 2, 1, 0, 0, 1, 2])],
        [], [("x", f32(1, 2, 4, 5))], ["y"], opset=10)
    add("custom_opset13_reduce_mean_axes_attribute",
        [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1, -1], keepdims=0)],
        [], [("x", f32(2, 3, 4, 5))], ["y"], opset=13)
    # Constant operands: Gemm with a constant transposed A and a dynamic B (MatMul with a
    # Constant node, alpha folded), a [M, 1] bias; MatMul of a 3-D input by a constant matrix
    # (fully connected over the rows); Sub / Mul with constants (per channel, scalar, general).
    add("custom_gemm_constant_a_dynamic_b",
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=0.5, beta=2.0)],
        [init("a", f32(4, 3)), init("c", f32(3, 1))], [("b", f32(4, 5))], ["y"])
    add("custom_matmul_3d_constant_b",
        [helper.make_node("MatMul", ["x", "w"], ["y"])], [init("w", f32(4, 5))],
        [("x", f32(2, 3, 4))], ["y"])
    add("custom_sub_mul_constants",
        [helper.make_node("Sub", ["x", "m"], ["a"]),
         helper.make_node("Mul", ["k", "a"], ["b"]),
         helper.make_node("Mul", ["b", "r"], ["c"]),
         helper.make_node("Add", ["c", "c"], ["y"])],
        [init("m", f32(3, 1, 1)), init("k", np.array(1.5, np.float32)), init("r", f32(1, 5))],
        [("x", f32(2, 3, 4, 5))], ["y"])
    return cases


def write_custom():
    out = []
    for name, model, xs in custom_cases():
        dst = os.path.join(OUT, name)
        os.makedirs(dst)
        onnx.save(model, os.path.join(dst, "model.onnx"))
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        ys = sess.run(None, {i.name: x for i, x in zip(model.graph.input, xs)})
        for k, x in enumerate(xs):
            with open(os.path.join(dst, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, model.graph.input[k].name).SerializeToString())
        for k, y in enumerate(ys):
            with open(os.path.join(dst, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(y, np.float32), model.graph.output[k].name).SerializeToString())
        out.append((name, "custom: ONNX Runtime outputs"))
    return out


def skip_reason(name, model):
    if name.endswith("_expanded") or "_expanded_" in name:
        return "expanded function body (the plain case is tested)"
    if name in EXCLUDE:
        return EXCLUDE[name]
    g = model.graph
    for v in list(g.input) + list(g.output):
        tt = v.type.tensor_type if v.type.HasField("tensor_type") else None
        if tt is None:
            return "non-tensor input or output"
        if tt.elem_type not in (TensorProto.FLOAT, TensorProto.INT64):
            return f"{TensorProto.DataType.Name(tt.elem_type).lower()} tensors (float only)"
    for n in g.node:
        if n.op_type in ("MaxPool", "AveragePool", "Conv"):
            for a in n.attribute:
                if a.name == "kernel_shape" and len(a.ints) != 2:
                    return f"{len(a.ints)}-D {n.op_type} (2-D only)"
    for v in g.input:
        if len(v.type.tensor_type.shape.dim) > 4:
            return "rank above 4"
    return None


def rewrite(model, data_dir):
    """Graph inputs used as constant operands become initializers (module docs)."""
    g = model.graph
    const_names = set()
    for n in g.node:
        for k in CONST_INPUTS.get(n.op_type, ()):
            if k < len(n.input) and n.input[k]:
                const_names.add(n.input[k])
    keep, moved = [], []
    for k, v in enumerate(g.input):
        pb = os.path.join(data_dir, f"input_{k}.pb")
        if v.name in const_names:
            t = TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            t.name = v.name
            g.initializer.append(t)
            moved.append(v.name)
        else:
            keep.append((v, pb))
    del g.input[:]
    g.input.extend(v for v, _ in keep)
    for v in g.input:
        if v.type.tensor_type.elem_type != TensorProto.FLOAT:
            return None, None, "non-float graph input"
    model.ir_version = 8
    return model, [pb for _, pb in keep], moved


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    included, skipped = [], []
    for name in sorted(os.listdir(NODE_DIR)):
        if not any(name.startswith(p) for p in PREFIXES):
            continue
        src = os.path.join(NODE_DIR, name)
        model = onnx.load(os.path.join(src, "model.onnx"))
        if name in CAST_TO_FLOAT:
            cast_model(model)
        why = skip_reason(name, model)
        data = os.path.join(src, "test_data_set_0")
        if why is None:
            model, inputs, moved = rewrite(model, data)
            if model is None:
                why = moved
        if why is not None:
            skipped.append((name, why))
            continue
        dst = os.path.join(OUT, name[len("test_"):])
        os.makedirs(dst)
        onnx.save(model, os.path.join(dst, "model.onnx"))
        copy = cast_pb if name in CAST_TO_FLOAT else shutil.copy
        for k, pb in enumerate(inputs):
            copy(pb, os.path.join(dst, f"input_{k}.pb"))
        outs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
        for f in outs:
            copy(os.path.join(data, f), os.path.join(dst, f))
        note = "constant: " + ", ".join(moved) if moved else "as is"
        if name in CAST_TO_FLOAT:
            note += "; int32 cast to float"
        included.append((name, note))
    included += write_custom()
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"included {len(included)} cases ({size} bytes), skipped {len(skipped)}")
    for n, m in included:
        print(f"  + {n}   ({m})")
    for n, w in skipped:
        print(f"  - {n}: {w}")
    lines = [
        "| case | status |",
        "|------|--------|",
    ]
    lines += [f"| {n} | included ({m}) |" for n, m in included]
    lines += [f"| {n} | skipped: {w} |" for n, w in skipped]
    readme = os.path.join(HERE, "README.md")
    head = open(readme).read().split("<!-- table -->")[0] if os.path.exists(readme) else ""
    with open(readme, "w") as f:
        f.write(head + "<!-- table -->\n" + "\n".join(lines) + "\n")
    if size > 2 << 20:
        sys.exit(f"cases take {size} bytes, over 2 MiB")


if __name__ == "__main__":
    main()
