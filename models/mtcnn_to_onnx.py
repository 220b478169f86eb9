#!/usr/bin/env python3
"""Converts MTCNN's trained P-Net, R-Net and O-Net (PyPI `mtcnn` 1.0.0, MIT) to ONNX.

Writes, for each net in pnet, rnet, onet:

    DIR/<net>/model.onnx          opset 13, ir_version 8; input `input` 1x3xHxW (NCHW, RGB,
                                  normalised (p - 127.5) / 128); outputs in the Keras model's
                                  order: bbox (1x4[xhxw]), [landmarks (1x10) for O-Net],
                                  prob (1x2[xhxw], softmax: [not face, face])
    DIR/<net>/input.npy           a seeded uniform(-1, 1) input
    DIR/<net>/expected<i>.npy     ONNX Runtime's outputs for it (i = output index)

so `check_models.py --dir DIR` can compare mvision against them too.

Keras -> ONNX layout:
  * Conv2D kernels (kh, kw, Cin, Cout) are transposed to OIHW.
  * PReLU(shared_axes=[1, 2]) alphas (1, 1, C) become PRelu slopes (C, 1, 1); the dense
    PReLU's (C,) stays (C,).
  * MaxPooling2D 'same' uses TensorFlow's padding (total = max((ceil(n/s)-1)*s + k - n, 0),
    the smaller half before), written as explicit MaxPool pads with ceil_mode 0; 'valid' has
    no pads. The pads are computed for the fixed input size.
  * R-Net/O-Net: Keras applies Permute((2, 1, 3)) to the NHWC map (-> W, H, C) and flattens,
    so Keras feature index = w*H*C + h*C + c. Our graph flattens NCHW (index c*H*W + h*W + w),
    so the first Dense matrix's rows are reordered accordingly and used as a Gemm B
    (transB 0).

Every ONNX model is checked against an independent float64 numpy forward pass computed from
the Keras-layout weights (mtcnn_ref.py), on seeded random inputs and on the committed crops in
models/data/ if present: max |ORT - reference| must be <= 1e-5 on every output.

Usage:
    pip download mtcnn==1.0.0 --no-deps -d /tmp/whl
    python models/mtcnn_to_onnx.py --wheel /tmp/whl/mtcnn-1.0.0-py3-none-any.whl --out DIR
(or --weights-dir FOLDER_WITH_{pnet,rnet,onet}.lz4, or a pip-installed mtcnn).
Nothing is downloaded at run time.
"""
import argparse
import glob
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import Graph, check_supported, ort_session, save  # noqa: E402
from mtcnn_ref import ARCH, INPUT_HW, NETS, load_weights, reference_forward, tf_pool_pads  # noqa: E402

TOL = 1e-5


def build_onnx(net, weights, hw):
    """ONNX graph of one MTCNN net for a fixed input size hw = (H, W)."""
    g = Graph(f"mtcnn_{net}")
    w = list(weights)
    H, W = hw
    C = 3
    x = g.add_input("input", [1, 3, H, W])
    out_shapes = []
    flat_hwc = None
    for layer in ARCH[net]:
        kind = layer[0]
        if kind == "conv":
            k, b = w.pop(0), w.pop(0)
            kh, kw, cin, cout = k.shape
            assert (kh, cin, cout) == (layer[1], C, layer[2]), (net, k.shape, layer)
            x = g.node("Conv", [x, g.init(g.fresh("conv_w"), k.transpose(3, 2, 0, 1)),
                                g.init(g.fresh("conv_b"), b)],
                       kernel_shape=[kh, kw], strides=[1, 1], pads=[0, 0, 0, 0])
            H, W, C = H - kh + 1, W - kw + 1, cout
        elif kind == "prelu":
            a = w.pop(0).reshape(-1)
            slope = a.reshape(-1, 1, 1) if H is not None else a
            x = g.node("PRelu", [x, g.init(g.fresh("prelu_slope"), slope)])
        elif kind == "pool":
            _, k, s, padding = layer
            oh, pt, pb = tf_pool_pads(H, k, s, padding)
            ow, pl, pr = tf_pool_pads(W, k, s, padding)
            x = g.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s],
                       pads=[pt, pl, pb, pr], ceil_mode=0)
            H, W = oh, ow
        elif kind == "permute_flatten":
            x = g.node("Flatten", [x], axis=1)
            flat_hwc = (H, W, C)
            H = W = None
        elif kind == "dense":
            m, b = w.pop(0), w.pop(0)
            if flat_hwc is not None:
                fh, fw, fc = flat_hwc
                assert m.shape[0] == fh * fw * fc, (net, m.shape, flat_hwc)
                c, h, ww = np.meshgrid(np.arange(fc), np.arange(fh), np.arange(fw), indexing="ij")
                keras_index = (ww * fh * fc + h * fc + c).reshape(-1)   # in NCHW flatten order
                m = m[keras_index]
                flat_hwc = None
            x = g.node("Gemm", [x, g.init(g.fresh("fc_w"), m), g.init(g.fresh("fc_b"), b)],
                       transB=0)
            C = m.shape[1]
        elif kind in ("heads_conv", "heads_dense"):
            feat = x
            for head in layer[1]:
                m, b = w.pop(0), w.pop(0)
                pre = head + "_logits" if head == "prob" else head
                if kind == "heads_conv":
                    y = g.node("Conv", [feat, g.init(g.fresh("conv_w"), m.transpose(3, 2, 0, 1)),
                                        g.init(g.fresh("conv_b"), b)],
                               out=pre, kernel_shape=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0])
                    shape = [1, m.shape[3], H, W]
                else:
                    y = g.node("Gemm", [feat, g.init(g.fresh("fc_w"), m), g.init(g.fresh("fc_b"), b)],
                               out=pre, transB=0)
                    shape = [1, m.shape[1]]
                if head == "prob":
                    y = g.node("Softmax", [y], out="prob", axis=1)
                g.add_output(y, shape)
                out_shapes.append(shape)
    assert not w, f"{net}: {len(w)} weight arrays left over"
    model = g.model(doc=f"MTCNN {net} from PyPI mtcnn 1.0.0 (MIT); input RGB (p-127.5)/128, NCHW")
    check_supported(model)
    return model, out_shapes


def compare(net, weights, sess, x_nchw):
    outs = sess.run(None, {"input": x_nchw})
    ref = reference_forward(net, weights, x_nchw[0].transpose(1, 2, 0))
    errs = [float(np.abs(o.astype(np.float64) - r).max()) for o, r in zip(outs, ref)]
    return outs, ref, max(errs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (pnet/, rnet/, onet/ inside)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--wheel", help="path to mtcnn-1.0.0-py3-none-any.whl")
    src.add_argument("--weights-dir", help="folder holding pnet.lz4, rnet.lz4, onet.lz4")
    ap.add_argument("--pnet-size", type=int, nargs=2, metavar=("H", "W"), default=[12, 12],
                    help="fixed P-Net input size (default 12 12; P-Net is fully convolutional)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=os.path.join(HERE, "data"),
                    help="folder with crop_*_<size>.npy to check too (default models/data)")
    args = ap.parse_args()

    weights = load_weights(args.wheel, args.weights_dir)
    rng = np.random.default_rng(args.seed)
    worst = 0.0
    for net in NETS:
        hw = tuple(args.pnet_size) if net == "pnet" else INPUT_HW[net]
        model, _ = build_onnx(net, weights[net], hw)
        d = os.path.join(args.out, net)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        save(model, path)
        sess = ort_session(path)

        x = rng.uniform(-1, 1, (1, 3) + hw).astype(np.float32)
        outs, _, err = compare(net, weights[net], sess, x)
        np.save(os.path.join(d, "input.npy"), x)
        for i, o in enumerate(outs):
            np.save(os.path.join(d, f"expected{i}.npy"), o)
        errs = [err]
        for _ in range(4):
            errs.append(compare(net, weights[net], sess,
                                rng.uniform(-1, 1, (1, 3) + hw).astype(np.float32))[2])
        crops = sorted(glob.glob(os.path.join(args.data, f"crop_*_{hw[0]}x{hw[1]}.npy")))
        for c in crops:
            errs.append(compare(net, weights[net], sess, np.load(c))[2])
        e = max(errs)
        worst = max(worst, e)
        n_par = sum(a.size for a in weights[net])
        outs_desc = ", ".join(f"{o.name}{o.shape}" for o in sess.get_outputs())
        print(f"{net}: input 1x3x{hw[0]}x{hw[1]}  params {n_par:,}  "
              f"{os.path.getsize(path) / 1e6:.2f} MB  outputs {outs_desc}  "
              f"max|ORT - numpy ref| {e:.2e} over {len(errs)} inputs ({len(crops)} crops)")
        if e > TOL:
            sys.exit(f"error: {net}: ONNX Runtime differs from the numpy reference by {e:.3e} > {TOL}")
    print(f"all nets match the numpy reference within {TOL} (worst {worst:.2e})")


if __name__ == "__main__":
    main()
