"""MTCNN (P-Net, R-Net, O-Net) weights from the PyPI `mtcnn` package and a numpy reference.

The `mtcnn` wheel (MIT licence, (c) 2019-2024 Ivan de Paz Centeno; the weights descend from
Zhang et al.'s MTCNN release) stores each net's Keras weights, in `model.get_weights()` order,
as an lz4-compressed joblib pickle: mtcnn/assets/weights/{pnet,rnet,onet}.lz4. This module
reads them from the downloaded .whl (zip) or from a pip-installed package folder, without
importing the package (which would import TensorFlow), and implements the networks exactly as
mtcnn/network/{pnet,rnet,onet}.py define them, in the Keras NHWC layout:

  Conv2D 'valid' (kernel H, W, Cin, Cout) -> PReLU(shared_axes=[1, 2]) -> MaxPooling2D with
  TensorFlow 'same' or 'valid' padding -> ... -> [R/O-Net] Permute((2, 1, 3)) -> Flatten ->
  Dense -> PReLU (per unit) -> Dense heads; the face head is a softmax ([not face, face]).

Inputs are RGB (the package decodes with tf.image.decode_image, channels=3) normalised as
mtcnn/utils/images.py:normalize_images does: (p - 127.5) / 128.
"""
import io
import os
import zipfile

import numpy as np

NETS = ("pnet", "rnet", "onet")
INPUT_HW = {"pnet": (12, 12), "rnet": (24, 24), "onet": (48, 48)}

# Layer lists following mtcnn/network/*.py. Conv: (name, kernel, cout); pools: (k, s, padding).
ARCH = {
    "pnet": [("conv", 3, 10), ("prelu",), ("pool", 2, 2, "same"),
             ("conv", 3, 16), ("prelu",),
             ("conv", 3, 32), ("prelu",),
             ("heads_conv", ["bbox", "prob"])],
    "rnet": [("conv", 3, 28), ("prelu",), ("pool", 3, 2, "same"),
             ("conv", 3, 48), ("prelu",), ("pool", 3, 2, "valid"),
             ("conv", 2, 64), ("prelu",),
             ("permute_flatten",), ("dense", 128), ("prelu",),
             ("heads_dense", ["bbox", "prob"])],
    "onet": [("conv", 3, 32), ("prelu",), ("pool", 3, 2, "same"),
             ("conv", 3, 64), ("prelu",), ("pool", 3, 2, "valid"),
             ("conv", 3, 64), ("prelu",), ("pool", 2, 2, "same"),
             ("conv", 2, 128), ("prelu",),
             ("permute_flatten",), ("dense", 256), ("prelu",),
             ("heads_dense", ["bbox", "landmarks", "prob"])],
}


def normalize(pixels):
    """MTCNN input normalisation of RGB 0..255 pixels: (p - 127.5) / 128."""
    return (np.asarray(pixels, np.float32) - 127.5) / 128.0


def find_installed():
    """Folder of a pip-installed mtcnn's weights, without importing the package."""
    import importlib.util
    spec = importlib.util.find_spec("mtcnn")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = os.path.join(list(spec.submodule_search_locations)[0], "assets", "weights")
    return d if os.path.isdir(d) else None


def load_weights(wheel=None, weights_dir=None):
    """{net: [arrays in Keras get_weights() order]} from a .whl or a weights folder."""
    import joblib  # noqa: F401  (the pickles need joblib + lz4)
    try:
        import lz4  # noqa: F401
    except ImportError:
        raise SystemExit("error: the 'lz4' package is needed to read mtcnn's weights "
                         "(pip install -r models/requirements.txt)")
    out = {}
    if wheel:
        if not os.path.isfile(wheel):
            raise SystemExit(f"error: wheel not found: {wheel} "
                             "(get it with: pip download mtcnn==1.0.0 --no-deps -d DIR)")
        with zipfile.ZipFile(wheel) as z:
            for net in NETS:
                member = f"mtcnn/assets/weights/{net}.lz4"
                try:
                    data = z.read(member)
                except KeyError:
                    raise SystemExit(f"error: {wheel} has no {member}; is it mtcnn 1.0.0?")
                out[net] = joblib.load(io.BytesIO(data))
    else:
        d = weights_dir or find_installed()
        if not d:
            raise SystemExit("error: give --wheel PATH (pip download mtcnn==1.0.0 --no-deps) "
                             "or --weights-dir, or pip install mtcnn --no-deps")
        for net in NETS:
            p = os.path.join(d, f"{net}.lz4")
            if not os.path.isfile(p):
                raise SystemExit(f"error: {p} not found")
            out[net] = joblib.load(p)
    for net in NETS:
        out[net] = [np.asarray(a, np.float32) for a in out[net]]
    return out


def tf_pool_pads(size, k, s, padding):
    """(out, pad_before, pad_after) of TensorFlow pooling along one axis."""
    if padding == "valid":
        return (size - k) // s + 1, 0, 0
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


# ---------------------------------------------------------------- numpy reference (NHWC)

def _conv(x, k, b):
    """'valid' stride-1 convolution; x (H, W, Cin), k (kh, kw, Cin, Cout)."""
    kh, kw = k.shape[:2]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(0, 1))  # H', W', Cin, kh, kw
    return np.einsum("hwcij,ijco->hwo", win.astype(np.float64), k.astype(np.float64)) + b


def _prelu(x, a):
    return np.where(x > 0, x, x * a.reshape(-1))


def _pool(x, k, s, padding):
    H, W, C = x.shape
    oh, pt, pb = tf_pool_pads(H, k, s, padding)
    ow, pl, pr = tf_pool_pads(W, k, s, padding)
    xp = np.pad(x, ((pt, pb), (pl, pr), (0, 0)), constant_values=-np.inf)
    out = np.full((oh, ow, C), -np.inf)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp[i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s, :])
    return out


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def reference_forward(net, weights, x_hwc):
    """Forward pass of one image, x (H, W, 3) normalised RGB, from the Keras-layout weights.

    Computed in float64. Returns the outputs in the Keras model's order ((bbox, prob) or
    (bbox, landmarks, prob)) as arrays shaped like the ONNX outputs (NCHW for P-Net's
    maps, (1, n) for the dense heads).
    """
    w = list(weights)
    x = np.asarray(x_hwc, np.float64)
    for layer in ARCH[net]:
        kind = layer[0]
        if kind == "conv":
            x = _conv(x, w.pop(0), w.pop(0))
        elif kind == "prelu":
            x = _prelu(x, w.pop(0))
        elif kind == "pool":
            x = _pool(x, *layer[1:])
        elif kind == "permute_flatten":
            x = x.transpose(1, 0, 2).reshape(-1)      # Permute((2, 1, 3)) then Flatten
        elif kind == "dense":
            x = x @ w.pop(0) + w.pop(0)
        elif kind == "heads_conv":
            outs = []
            for head in layer[1]:
                y = _conv(x, w.pop(0), w.pop(0))
                if head == "prob":
                    y = _softmax(y)
                outs.append(y.transpose(2, 0, 1)[None])
            assert not w
            return outs
        elif kind == "heads_dense":
            outs = []
            for head in layer[1]:
                y = x @ w.pop(0) + w.pop(0)
                if head == "prob":
                    y = _softmax(y)
                outs.append(y[None])
            assert not w
            return outs
    raise AssertionError("architecture without heads")
