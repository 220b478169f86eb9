"""Helpers shared by the scripts in models/: ONNX graph building, saving and running.

Every model these scripts write uses opset 13 and is saved with ir_version 8 (ONNX Runtime
rejects IR versions newer than the one it was built for, and mvision's converter targets
opset 13 semantics).
"""
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover - message for people without the venv
    sys.exit("error: the 'onnx' package is missing; create the venv with "
             "scripts/nn-venv.sh (or pip install -r models/requirements.txt)")

OPSET = 13
IR_VERSION = 8


class Graph:
    """Accumulates nodes and initializers; names tensors automatically."""

    def __init__(self, name):
        self.name = name
        self.nodes = []
        self.inits = []
        self.inputs = []
        self.outputs = []
        self._n = 0

    def fresh(self, prefix):
        self._n += 1
        return f"{prefix}_{self._n}"

    def init(self, name, array):
        """Adds a float32 (or int64) initializer and returns its name."""
        arr = np.asarray(array)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op, inputs, n_out=1, name=None, out=None, **attrs):
        """Adds a node; its output is named `out` if given, else after the node."""
        name = name or out or self.fresh(op.lower())
        outs = [out or name] if n_out == 1 else [f"{name}_out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def add_input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        return name

    def add_output(self, tensor, shape):
        """Declares an existing tensor (name it with node(..., out=NAME)) as a graph output."""
        self.outputs.append(helper.make_tensor_value_info(tensor, TensorProto.FLOAT, list(shape)))

    def model(self, doc=""):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="libmvision-models", doc_string=doc)
        m.ir_version = IR_VERSION
        onnx.checker.check_model(m)
        return m


def save(model, path):
    onnx.save(model, str(path))


def ort_session(path_or_bytes):
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit("error: the 'onnxruntime' package is missing; see models/requirements.txt")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path_or_bytes if isinstance(path_or_bytes, (bytes, str))
                                else str(path_or_bytes), so, providers=["CPUExecutionProvider"])


def ort_run(path, feeds):
    """Runs a model single-threaded; returns the outputs in graph order."""
    sess = ort_session(path)
    return sess.run(None, feeds)


def used_ops(model):
    return sorted({n.op_type for n in model.graph.node})


SUPPORTED_OPS = {
    "Conv", "Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "MaxPool", "AveragePool",
    "GlobalAveragePool", "Gemm", "MatMul", "Flatten", "Add", "Concat", "Softmax",
    "BatchNormalization", "Pad", "ReduceMean", "Dropout", "Reshape", "Sub", "Mul", "Identity",
    "Constant",
}


def check_supported(model):
    """Fails if the model uses an op that mvision's converter does not support."""
    bad = sorted(set(used_ops(model)) - SUPPORTED_OPS)
    if bad:
        raise SystemExit(f"error: model {model.graph.name} uses unsupported ops {bad}")
