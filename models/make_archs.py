#!/usr/bin/env python3
"""Builds torchvision CNN topologies as ONNX graphs with seeded random weights.

For each of AlexNet, SqueezeNet 1.1, ResNet-18 and MobileNetV2 (ImageNet, 1x3x224x224 input,
1x1000 logits output, no softmax) this writes

    DIR/<name>/model.onnx     opset 13, ir_version 8, built with onnx.helper (no torch)
    DIR/<name>/input.npy      seeded N(0, 1) float32 input, NCHW 1x3x224x224
    DIR/<name>/expected.npy   ONNX Runtime output (CPU, intra_op_num_threads=1, ORT_ENABLE_ALL)

The layer sizes, strides, pads and ceil modes follow torchvision's model definitions exactly
(torchvision/models/{alexnet,squeezenet,resnet,mobilenetv2}.py); the parameter counts printed
are compared with torchvision's (AlexNet 61,100,840; SqueezeNet 1.1 1,235,496; ResNet-18
11,689,512; MobileNetV2 3,504,872; BatchNorm running statistics are not parameters).
Deviations, all numerically neutral at 224x224:
  * AlexNet's AdaptiveAvgPool2d((6, 6)) is omitted: its input is already 6x6 at 224 input.
  * AdaptiveAvgPool2d((1, 1)) is exported as GlobalAveragePool.
  * Dropout layers are kept as Dropout nodes (inference: identity) in AlexNet and SqueezeNet,
    omitted in MobileNetV2, to exercise both cases.
  * Flatten: AlexNet, ResNet-18 and MobileNetV2 use Flatten(axis=1); SqueezeNet uses
    Reshape(shape=[1, -1]) so that mvision's flattening Reshape path is exercised too.

Weights: He-normal convolutions and linear layers (std = sqrt(2 / fan_in)); biases
U(-0.1, 0.1); every BatchNormalization (eps 1e-5) gets gamma U(0.5, 1.5), beta U(-0.2, 0.2),
and running mean/var taken from the layer's actual input statistics on a separate seeded
calibration input, then randomly perturbed (see calibrate_bn), so activations stay O(1). One numpy Generator,
seeded by --seed (default 0), feeds each model (seed + model index), so output is reproducible.

Usage: python models/make_archs.py --out build/nn-models [--models resnet18,mobilenetv2]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Graph, check_supported, ort_run, save, used_ops  # noqa: E402

TORCHVISION_PARAMS = {
    "alexnet": 61_100_840,
    "squeezenet1_1": 1_235_496,
    "resnet18": 11_689_512,
    "mobilenetv2": 3_504_872,
}


class Builder(Graph):
    """Graph with torch-like layer helpers and seeded random weights."""

    def __init__(self, name, rng):
        super().__init__(name)
        self.rng = rng
        self.params = 0  # torch-style parameter count (no BN running stats)

    def conv(self, x, cin, cout, k, stride=1, pad=0, groups=1, bias=True):
        w_name = self.fresh("conv_w")
        fan_in = cin // groups * k * k
        w = self.rng.standard_normal((cout, cin // groups, k, k)) * np.sqrt(2.0 / fan_in)
        ins = [x, self.init(w_name, w)]
        self.params += w.size
        if bias:
            b = self.rng.uniform(-0.1, 0.1, cout)
            ins.append(self.init(self.fresh("conv_b"), b))
            self.params += b.size
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, dilations=[1, 1], group=groups)

    def bn(self, x, c):
        r = self.rng
        gamma = self.init(self.fresh("bn_gamma"), r.uniform(0.5, 1.5, c))
        beta = self.init(self.fresh("bn_beta"), r.uniform(-0.2, 0.2, c))
        mean = self.init(self.fresh("bn_mean"), r.normal(0.0, 0.2, c))
        var = self.init(self.fresh("bn_var"), r.uniform(0.5, 2.0, c))
        self.params += 2 * c
        return self.node("BatchNormalization", [x, gamma, beta, mean, var], epsilon=1e-5)

    def relu(self, x):
        return self.node("Relu", [x])

    def relu6(self, x):
        if not hasattr(self, "_clip_lo"):
            self._clip_lo = self.init("clip_min_0", np.array(0.0, np.float32))
            self._clip_hi = self.init("clip_max_6", np.array(6.0, np.float32))
        return self.node("Clip", [x, self._clip_lo, self._clip_hi])

    def maxpool(self, x, k, s, pad=0, ceil=False):
        return self.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4,
                         ceil_mode=int(ceil))

    def linear(self, x, fin, fout, out=None):
        """torch.nn.Linear as Gemm(transB=1) with W of shape (fout, fin)."""
        w = self.rng.standard_normal((fout, fin)) * np.sqrt(2.0 / fin)
        b = self.rng.uniform(-0.1, 0.1, fout)
        self.params += w.size + b.size
        return self.node("Gemm", [x, self.init(self.fresh("fc_w"), w),
                                  self.init(self.fresh("fc_b"), b)],
                         out=out, alpha=1.0, beta=1.0, transA=0, transB=1)

    def dropout(self, x):
        return self.node("Dropout", [x])


def alexnet(b):
    x = b.add_input("input", [1, 3, 224, 224])
    x = b.maxpool(b.relu(b.conv(x, 3, 64, 11, 4, 2)), 3, 2)          # 55 -> 27
    x = b.maxpool(b.relu(b.conv(x, 64, 192, 5, 1, 2)), 3, 2)         # 27 -> 13
    x = b.relu(b.conv(x, 192, 384, 3, 1, 1))
    x = b.relu(b.conv(x, 384, 256, 3, 1, 1))
    x = b.maxpool(b.relu(b.conv(x, 256, 256, 3, 1, 1)), 3, 2)        # 13 -> 6
    # AdaptiveAvgPool2d((6, 6)) on a 6x6 map is the identity: omitted.
    x = b.node("Flatten", [x], axis=1)
    x = b.relu(b.linear(b.dropout(x), 256 * 6 * 6, 4096))
    x = b.relu(b.linear(b.dropout(x), 4096, 4096))
    x = b.linear(x, 4096, 1000, out="logits")
    b.add_output(x, [1, 1000])


def squeezenet1_1(b):
    def fire(x, cin, squeeze, e1, e3):
        s = b.relu(b.conv(x, cin, squeeze, 1))
        a = b.relu(b.conv(s, squeeze, e1, 1))
        c = b.relu(b.conv(s, squeeze, e3, 3, 1, 1))
        return b.node("Concat", [a, c], axis=1)

    x = b.add_input("input", [1, 3, 224, 224])
    x = b.relu(b.conv(x, 3, 64, 3, 2))                              # 111
    x = b.maxpool(x, 3, 2, ceil=True)                               # 55
    x = fire(x, 64, 16, 64, 64)
    x = fire(x, 128, 16, 64, 64)
    x = b.maxpool(x, 3, 2, ceil=True)                               # 27
    x = fire(x, 128, 32, 128, 128)
    x = fire(x, 256, 32, 128, 128)
    x = b.maxpool(x, 3, 2, ceil=True)                               # 13
    x = fire(x, 256, 48, 192, 192)
    x = fire(x, 384, 48, 192, 192)
    x = fire(x, 384, 64, 256, 256)
    x = fire(x, 512, 64, 256, 256)
    x = b.dropout(x)
    x = b.relu(b.conv(x, 512, 1000, 1))
    x = b.node("GlobalAveragePool", [x])
    shape = b.init("flatten_shape", np.array([1, -1], np.int64))
    x = b.node("Reshape", [x, shape], out="logits")
    b.add_output(x, [1, 1000])


def resnet18(b):
    def block(x, cin, cout, stride):
        y = b.relu(b.bn(b.conv(x, cin, cout, 3, stride, 1, bias=False), cout))
        y = b.bn(b.conv(y, cout, cout, 3, 1, 1, bias=False), cout)
        if stride != 1 or cin != cout:
            x = b.bn(b.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
        return b.relu(b.node("Add", [y, x]))

    x = b.add_input("input", [1, 3, 224, 224])
    x = b.relu(b.bn(b.conv(x, 3, 64, 7, 2, 3, bias=False), 64))   # 112
    x = b.maxpool(x, 3, 2, pad=1)                                   # 56
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        x = block(x, cin, cout, stride)
        x = block(x, cout, cout, 1)
        cin = cout
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    x = b.linear(x, 512, 1000, out="logits")
    b.add_output(x, [1, 1000])


def mobilenetv2(b):
    def conv_bn_relu6(x, cin, cout, k, stride, groups=1):
        pad = (k - 1) // 2
        return b.relu6(b.bn(b.conv(x, cin, cout, k, stride, pad, groups, bias=False), cout))

    def inverted_residual(x, inp, oup, stride, t):
        hidden = int(round(inp * t))
        y = x
        if t != 1:
            y = conv_bn_relu6(y, inp, hidden, 1, 1)
        y = conv_bn_relu6(y, hidden, hidden, 3, stride, groups=hidden)
        y = b.bn(b.conv(y, hidden, oup, 1, 1, 0, bias=False), oup)
        if stride == 1 and inp == oup:
            y = b.node("Add", [x, y])
        return y

    x = b.add_input("input", [1, 3, 224, 224])
    x = conv_bn_relu6(x, 3, 32, 3, 2)                               # 112
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            x = inverted_residual(x, cin, c, s if i == 0 else 1, t)
            cin = c
    x = conv_bn_relu6(x, cin, 1280, 1, 1)                           # 7x7x1280
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    # Dropout(0.2) omitted (identity at inference).
    x = b.linear(x, 1280, 1000, out="logits")
    b.add_output(x, [1, 1000])


ARCHS = [("alexnet", alexnet), ("squeezenet1_1", squeezenet1_1), ("resnet18", resnet18),
         ("mobilenetv2", mobilenetv2)]


def calibrate_bn(model, rng, x_cal):
    """Sets each BatchNormalization's running stats from data, with random perturbation.

    Pure random running statistics let activations grow through ResNet-18's residual sums
    (logits ~1e2). Instead, layer by layer in graph order, the BN input is computed by ONNX
    Runtime on a calibration input (seeded, distinct from input.npy) and the running stats are
    set to mean_c + N(0, (0.2 std_c)^2) and var_c * U(0.6, 1.6): still non-trivial, but
    activations stay O(1).
    """
    from onnx import helper, numpy_helper, TensorProto
    import onnxruntime as ort
    inits = {t.name: t for t in model.graph.initializer}
    bns = [n for n in model.graph.node if n.op_type == "BatchNormalization"]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    for bn in bns:
        probe = type(model)()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.append(helper.make_tensor_value_info(bn.input[0], TensorProto.FLOAT, None))
        sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
        (t,) = sess.run(None, {"input": x_cal})
        mean = t.mean(axis=(0, 2, 3))
        var = t.var(axis=(0, 2, 3))
        mean = mean + rng.normal(0.0, 1.0, mean.shape) * 0.2 * np.sqrt(var)
        var = var * rng.uniform(0.6, 1.6, var.shape) + 1e-3
        for name, val in ((bn.input[3], mean), (bn.input[4], var)):
            inits[name].CopyFrom(numpy_helper.from_array(val.astype(np.float32), name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (one subfolder per model)")
    ap.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    ap.add_argument("--models", default=",".join(n for n, _ in ARCHS),
                    help="comma-separated subset of: " + ", ".join(n for n, _ in ARCHS))
    args = ap.parse_args()

    wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = sorted(set(wanted) - {n for n, _ in ARCHS})
    if unknown:
        ap.error(f"unknown model(s) {unknown}")

    ok = True
    for idx, (name, fn) in enumerate(ARCHS):
        if name not in wanted:
            continue
        rng = np.random.default_rng(args.seed + idx)
        b = Builder(name, rng)
        fn(b)
        model = b.model(doc=f"torchvision {name} topology, random weights (seed {args.seed + idx})")
        check_supported(model)
        if any(n.op_type == "BatchNormalization" for n in model.graph.node):
            x_cal = np.random.default_rng(2000 + args.seed + idx).standard_normal(
                (1, 3, 224, 224)).astype(np.float32)
            calibrate_bn(model, rng, x_cal)
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        save(model, path)
        x = np.random.default_rng(1000 + args.seed + idx).standard_normal(
            (1, 3, 224, 224)).astype(np.float32)
        t0 = time.perf_counter()
        (y,) = ort_run(path, {"input": x})
        dt = time.perf_counter() - t0
        np.save(os.path.join(d, "input.npy"), x)
        np.save(os.path.join(d, "expected.npy"), y)
        ref = TORCHVISION_PARAMS[name]
        match = "matches torchvision" if b.params == ref else f"MISMATCH (torchvision {ref:,})"
        ok &= b.params == ref
        print(f"{name:14s} {os.path.getsize(path) / 1e6:7.1f} MB  params {b.params:>11,} "
              f"({match})  nodes {len(model.graph.node):3d}  out {tuple(y.shape)} "
              f"max|y| {np.abs(y).max():.3g}  ort {dt:.2f}s  ops {','.join(used_ops(model))}")
    if not ok:
        sys.exit("error: a parameter count differs from torchvision's")


if __name__ == "__main__":
    main()
