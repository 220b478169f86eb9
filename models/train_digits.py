#!/usr/bin/env python3
"""Trains a small CNN on scikit-learn's 8x8 digits in plain numpy and exports it to ONNX.

Data: sklearn.datasets.load_digits (1797 images, 8x8, values 0..16, shipped inside the
scikit-learn wheel; BSD-3 licence, from the UCI "Optical Recognition of Handwritten Digits"
set), input x/16. Split: train_test_split(test_size=0.2, random_state=0, stratify=labels):
1437 train, 360 held out.

Network (NCHW, float32):
    input 1x1x8x8 -> Conv 3x3 pad 1, 12 ch -> Relu -> MaxPool 2x2 s2 -> Conv 3x3 pad 1, 16 ch
    -> Relu -> Flatten (16*4*4 = 256) -> Gemm 256->10 (transB 0) -> Softmax -> prob 1x10
Forward/backward are written by hand (im2col); training is Adam (lr 2e-3, batch 32, 40
epochs, weight decay 1e-4, random +-1 pixel shifts), seeded (--seed, default 0), under a minute on 2 cores.
Fails unless held-out accuracy >= 96 %.

Writes to --out:
    digits.onnx                 opset 13, ir_version 8, input `input` 1x1x8x8, output `prob` 1x10
    digits_labels.txt           0..9, one per line (for `mvision classify --labels`)
    digit_<index>_label<L>.png  one held-out digit per class, 8-bit grayscale 8x8, pixel =
                                round(x * 255 / 16) so classify's default scale 1/255 gives
                                ~x/16 (within 1/510); <index> is the row in load_digits()
    digits_expected.json        held-out accuracy (numpy and ONNX Runtime), and for each PNG the
                                label and the model's top-1 and its probability on the PNG's
                                own (quantised) pixels p/255

ONNX Runtime (1 thread) is run on every held-out digit and must give the same accuracy and the
same top-1 as the numpy model.

Usage: python models/train_digits.py --out models/data
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import Graph, check_supported, ort_session, save  # noqa: E402

C1, C2, NCLS = 12, 16, 10


# ------------------------------------------------------------------ layers (NCHW, float32)

def im2col3(x):
    """x (N, C, H, W) -> cols (N, H, W, C*9) for a 3x3 convolution with pad 1."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.empty((n, h, w, c, 3, 3), x.dtype)
    for i in range(3):
        for j in range(3):
            cols[..., i, j] = xp[:, :, i:i + h, j:j + w].transpose(0, 2, 3, 1)
    return cols.reshape(n, h, w, c * 9)


def col2im3(dcols, shape):
    n, c, h, w = shape
    d = dcols.reshape(n, h, w, c, 3, 3)
    dxp = np.zeros((n, c, h + 2, w + 2), dcols.dtype)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + h, j:j + w] += d[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1]


def conv_fwd(x, w, b):
    cols = im2col3(x)
    out = cols @ w.reshape(w.shape[0], -1).T + b          # N, H, W, O
    return out.transpose(0, 3, 1, 2), cols


def conv_bwd(dout, cols, w, xshape):
    d = dout.transpose(0, 2, 3, 1)                         # N, H, W, O
    dw = d.reshape(-1, w.shape[0]).T @ cols.reshape(-1, cols.shape[-1])
    db = d.sum(axis=(0, 1, 2))
    dcols = d @ w.reshape(w.shape[0], -1)
    return col2im3(dcols, xshape), dw.reshape(w.shape), db


def pool_fwd(x):
    n, c, h, w = x.shape
    r = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = r.max(axis=(3, 5))
    return out, r


def pool_bwd(dout, r, out):
    mask = r == out[:, :, :, None, :, None]
    # Route the gradient to the first maximum of each window only.
    first = np.cumsum(np.cumsum(mask, axis=3), axis=5) == 1
    mask &= first
    d = mask * dout[:, :, :, None, :, None]
    n, c, h2, _, w2, _ = r.shape
    return d.reshape(n, c, h2 * 2, w2 * 2)


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def forward(p, x, keep=False):
    a1, cols1 = conv_fwd(x, p["w1"], p["b1"])
    h1 = np.maximum(a1, 0)
    q1, r1 = pool_fwd(h1)
    a2, cols2 = conv_fwd(q1, p["w2"], p["b2"])
    h2 = np.maximum(a2, 0)
    f = h2.reshape(len(x), -1)                             # NCHW flatten, like ONNX Flatten
    logits = f @ p["w3"] + p["b3"]
    if not keep:
        return softmax(logits)
    return softmax(logits), (x, a1, cols1, h1, q1, r1, a2, cols2, h2, f)


def backward(p, cache, prob, y):
    x, a1, cols1, h1, q1, r1, a2, cols2, h2, f = cache
    n = len(y)
    dlog = prob.copy()
    dlog[np.arange(n), y] -= 1
    dlog /= n
    g = {"w3": f.T @ dlog, "b3": dlog.sum(0)}
    dh2 = (dlog @ p["w3"].T).reshape(h2.shape) * (a2 > 0)
    dq1, g["w2"], g["b2"] = conv_bwd(dh2, cols2, p["w2"], q1.shape)
    dh1 = pool_bwd(dq1, r1, q1) * (a1 > 0)
    _, g["w1"], g["b1"] = conv_bwd(dh1, cols1, p["w1"], x.shape)
    return g


def init_params(rng):
    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return {"w1": he((C1, 1, 3, 3), 9), "b1": np.zeros(C1, np.float32),
            "w2": he((C2, C1, 3, 3), C1 * 9), "b2": np.zeros(C2, np.float32),
            "w3": he((C2 * 16, NCLS), C2 * 16), "b3": np.zeros(NCLS, np.float32)}


def shift_augment(x, rng):
    """Shifts each image by a random -1..1 pixels in x and y (zero fill)."""
    out = np.zeros_like(x)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dy = rng.integers(-1, 2, len(x))
    dx = rng.integers(-1, 2, len(x))
    for k in range(len(x)):
        out[k] = xp[k, :, 1 + dy[k]:9 + dy[k], 1 + dx[k]:9 + dx[k]]
    return out


def train(xtr, ytr, rng, epochs=40, batch=32, lr=2e-3, wd=1e-4):
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(val) for k, val in p.items()}
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0
    for ep in range(epochs):
        order = rng.permutation(len(xtr))
        loss = 0.0
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            prob, cache = forward(p, shift_augment(xtr[idx], rng), keep=True)
            loss += -np.log(prob[np.arange(len(idx)), ytr[idx]] + 1e-12).sum()
            g = backward(p, cache, prob, ytr[idx])
            t += 1
            for k in p:
                gk = g[k] + (wd * p[k] if k.startswith("w") else 0)
                m[k] = b1 * m[k] + (1 - b1) * gk
                v[k] = b2 * v[k] + (1 - b2) * gk * gk
                mh = m[k] / (1 - b1 ** t)
                vh = v[k] / (1 - b2 ** t)
                p[k] = (p[k] - lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
        if (ep + 1) % 10 == 0:
            print(f"  epoch {ep + 1:3d}  train loss {loss / len(xtr):.4f}")
    return p


def to_onnx(p):
    g = Graph("digits_cnn")
    x = g.add_input("input", [1, 1, 8, 8])
    x = g.node("Conv", [x, g.init("conv1_w", p["w1"]), g.init("conv1_b", p["b1"])],
               kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    x = g.node("Relu", [x])
    x = g.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.node("Conv", [x, g.init("conv2_w", p["w2"]), g.init("conv2_b", p["b2"])],
               kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    x = g.node("Relu", [x])
    x = g.node("Flatten", [x], axis=1)
    x = g.node("Gemm", [x, g.init("fc_w", p["w3"]), g.init("fc_b", p["b3"])], transB=0)
    x = g.node("Softmax", [x], out="prob", axis=1)
    g.add_output(x, [1, NCLS])
    m = g.model(doc="8x8 digits CNN trained with numpy on sklearn load_digits; input x/16")
    check_supported(m)
    return m


def write_png_gray(path, img):
    from PIL import Image
    Image.fromarray(np.asarray(img, np.uint8), ).save(path, optimize=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (e.g. models/data)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=40)
    args = ap.parse_args()
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        sys.exit("error: scikit-learn is missing (pip install -r models/requirements.txt)")

    digits = load_digits()
    raw = digits.images.astype(np.float32)                       # 0..16
    x = (raw / 16.0)[:, None, :, :]
    y = digits.target.astype(np.int64)
    idx = np.arange(len(y))
    itr, ite = train_test_split(idx, test_size=0.2, random_state=0, stratify=y)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    p = train(x[itr], y[itr], rng, epochs=args.epochs)
    print(f"trained in {time.perf_counter() - t0:.1f}s on {len(itr)} digits")

    pred_np = forward(p, x[ite]).argmax(1)
    acc_np = float((pred_np == y[ite]).mean())
    print(f"held-out accuracy (numpy): {acc_np * 100:.2f} % of {len(ite)}")

    os.makedirs(args.out, exist_ok=True)
    model = to_onnx(p)
    path = os.path.join(args.out, "digits.onnx")
    save(model, path)
    sess = ort_session(path)
    prob_ort = np.concatenate([sess.run(None, {"input": x[i:i + 1]})[0] for i in ite])
    pred_ort = prob_ort.argmax(1)
    acc_ort = float((pred_ort == y[ite]).mean())
    max_diff = float(np.abs(prob_ort - forward(p, x[ite])).max())
    print(f"held-out accuracy (ONNX Runtime): {acc_ort * 100:.2f} %  "
          f"top-1 identical: {bool((pred_ort == pred_np).all())}  max|prob diff| {max_diff:.2e}")
    if acc_ort != acc_np or not (pred_ort == pred_np).all():
        sys.exit("error: ONNX Runtime and the numpy model disagree")
    if acc_np < 0.96:
        sys.exit(f"error: held-out accuracy {acc_np * 100:.2f} % < 96 %")

    with open(os.path.join(args.out, "digits_labels.txt"), "w") as f:
        f.write("".join(f"{i}\n" for i in range(NCLS)))

    pngs = []
    for label in range(NCLS):
        i = int(next(j for j in ite if y[j] == label))        # first held-out digit of each class
        pix = np.round(raw[i] * 255.0 / 16.0).astype(np.uint8)
        name = f"digit_{i}_label{label}.png"
        write_png_gray(os.path.join(args.out, name), pix)
        xq = (pix.astype(np.float32) / 255.0)[None, None]
        (pq,) = sess.run(None, {"input": xq})
        top = int(pq.argmax())
        pngs.append({"file": name, "index": i, "label": label, "top1": top,
                     "top1_prob": round(float(pq[0, top]), 6)})
        print(f"  {name:24s} top-1 {top} (p {pq[0, top]:.4f})")
    # The whole held-out set as one sheet (row-major, 20 digits per row) + labels, so the
    # held-out accuracy can be reproduced through `mvision classify` without Python.
    per_row = 20
    rows = -(-len(ite) // per_row)
    sheet = np.zeros((rows * 8, per_row * 8), np.uint8)
    sheet_ok = 0
    for k, j in enumerate(ite):
        pix = np.round(raw[j] * 255.0 / 16.0).astype(np.uint8)
        r, c = divmod(k, per_row)
        sheet[r * 8:(r + 1) * 8, c * 8:(c + 1) * 8] = pix
        (pq,) = sess.run(None, {"input": (pix.astype(np.float32) / 255.0)[None, None]})
        sheet_ok += int(pq.argmax()) == int(y[j])
    write_png_gray(os.path.join(args.out, "digits_heldout.png"), sheet)
    with open(os.path.join(args.out, "digits_heldout_labels.txt"), "w") as f:
        f.write("".join(f"{int(y[j])}\n" for j in ite))
    acc_q = sheet_ok / len(ite)
    print(f"held-out accuracy on the quantised sheet (ONNX Runtime): {acc_q * 100:.2f} %")

    info = {"dataset": "sklearn.datasets.load_digits, x/16",
            "split": "train_test_split(test_size=0.2, random_state=0, stratify=y)",
            "n_train": len(itr), "n_test": len(ite),
            "heldout_accuracy_numpy": acc_np, "heldout_accuracy_onnxruntime": acc_ort,
            "onnx_vs_numpy_max_prob_diff": max_diff,
            "png_input": "pixel p = round(x*255/16); model input p/255 "
                         "(mvision classify defaults --scale 1/255 --offset 0)",
            "pngs": pngs,
            "heldout_sheet": {"file": "digits_heldout.png", "labels": "digits_heldout_labels.txt",
                              "digits_per_row": per_row, "count": len(ite),
                              "accuracy_onnxruntime_quantised": acc_q}}
    with open(os.path.join(args.out, "digits_expected.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes), digits_labels.txt, "
          f"{len(pngs)} PNGs, digits_expected.json to {args.out}")


if __name__ == "__main__":
    main()
