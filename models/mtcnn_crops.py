#!/usr/bin/env python3
"""Cuts MTCNN test crops (a face and non-faces) from scikit-image's astronaut.png.

astronaut.png (512x512 RGB, Eileen Collins, NASA, public domain; shipped in scikit-image's
wheel as skimage/data/astronaut.png) is read from --image or straight out of a downloaded
scikit-image wheel (--skimage-wheel; nothing is installed or downloaded).

For each crop box (x0, y0, x1, y1 in pixels, half-open, see CROPS) and each MTCNN input size
S in 12 (P-Net), 24 (R-Net), 48 (O-Net), the box is resized to SxS with Pillow's antialiased
bilinear filter and written to --out (default models/data) as

    crop_<name>_<S>x<S>.npy   float32 1x3xSxS, NCHW, RGB order (as the mtcnn package, which
                              decodes with tf.image.decode_image), normalised (p - 127.5)/128
    crop_<name>_<S>x<S>.png   the same crop as 8-bit RGB, for looking at

With --mtcnn-wheel (or --mtcnn-weights-dir) it also writes mtcnn_expected.json: the face
probability (softmax output index 1) of P-Net, R-Net and O-Net on each crop of their input
size, from the numpy reference of mtcnn_ref.py, and fails unless O-Net gives the face
> 0.9 and every non-face < 0.5.

Usage:
    pip download scikit-image==0.25.2 --no-deps -d /tmp/whl
    pip download mtcnn==1.0.0 --no-deps -d /tmp/whl
    python models/mtcnn_crops.py --skimage-wheel /tmp/whl/scikit_image-0.25.2-*.whl \
        --mtcnn-wheel /tmp/whl/mtcnn-1.0.0-py3-none-any.whl
"""
import argparse
import io
import json
import os
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mtcnn_ref import load_weights, normalize, reference_forward  # noqa: E402

try:
    from PIL import Image
except ImportError:
    sys.exit("error: Pillow is missing (pip install -r models/requirements.txt)")

# (x0, y0, x1, y1) in the 512x512 image. The face box is square, eyebrows to chin, like the
# boxes MTCNN was trained on; the others hold no face.
CROPS = {
    "face": (176, 72, 272, 168),
    "flag": (0, 40, 80, 120),
    "suit": (40, 300, 136, 396),
    "rocket": (360, 60, 456, 156),
    "wall": (300, 10, 364, 74),
    "helmet": (300, 360, 420, 480),
}
SIZES = {"pnet": 12, "rnet": 24, "onet": 48}


def load_astronaut(image, wheel):
    if image:
        return Image.open(image).convert("RGB")
    if not wheel:
        sys.exit("error: give --image astronaut.png or --skimage-wheel PATH.whl "
                 "(pip download scikit-image==0.25.2 --no-deps -d DIR)")
    with zipfile.ZipFile(wheel) as z:
        try:
            data = z.read("skimage/data/astronaut.png")
        except KeyError:
            sys.exit(f"error: {wheel} has no skimage/data/astronaut.png")
    return Image.open(io.BytesIO(data)).convert("RGB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", help="astronaut.png")
    ap.add_argument("--skimage-wheel", help="scikit-image wheel holding skimage/data/astronaut.png")
    ap.add_argument("--out", default=os.path.join(HERE, "data"), help="default models/data")
    ap.add_argument("--mtcnn-wheel", help="mtcnn-1.0.0 wheel, to write mtcnn_expected.json")
    ap.add_argument("--mtcnn-weights-dir", help="folder with pnet/rnet/onet.lz4 instead")
    ap.add_argument("--preview", help="also write a PNG of the image with the boxes drawn here")
    args = ap.parse_args()

    img = load_astronaut(args.image, args.skimage_wheel)
    if img.size != (512, 512):
        sys.exit(f"error: expected the 512x512 astronaut.png, got {img.size}")
    os.makedirs(args.out, exist_ok=True)
    crops = {}
    for name, box in CROPS.items():
        for s in SIZES.values():
            small = img.crop(box).resize((s, s), Image.BILINEAR)
            Image.fromarray(np.asarray(small)).save(  # no metadata chunks
                os.path.join(args.out, f"crop_{name}_{s}x{s}.png"), optimize=True)
            x = normalize(np.asarray(small)).transpose(2, 0, 1)[None].astype(np.float32)
            np.save(os.path.join(args.out, f"crop_{name}_{s}x{s}.npy"), x)
            crops[(name, s)] = x
    print(f"wrote {len(crops)} crops ({', '.join(CROPS)}) x sizes {sorted(SIZES.values())} "
          f"to {args.out}")

    if args.preview:
        from PIL import ImageDraw
        im = img.copy()
        d = ImageDraw.Draw(im)
        for name, box in CROPS.items():
            d.rectangle([box[0], box[1], box[2] - 1, box[3] - 1],
                        outline=(0, 255, 0) if name == "face" else (255, 255, 0), width=2)
            d.text((box[0] + 3, box[1] + 3), name, fill=(255, 255, 0))
        im.save(args.preview)
        print(f"preview: {args.preview}")

    if not (args.mtcnn_wheel or args.mtcnn_weights_dir):
        print("no --mtcnn-wheel: mtcnn_expected.json not written")
        return
    weights = load_weights(args.mtcnn_wheel, args.mtcnn_weights_dir)
    result = {"source": "mtcnn_ref.reference_forward (float64 numpy, Keras-layout weights of "
                        "PyPI mtcnn 1.0.0)",
              "input": "NCHW RGB, (p - 127.5) / 128; files crop_<name>_<S>x<S>.npy",
              "boxes_xyxy": {k: list(v) for k, v in CROPS.items()},
              "face_probability": {}}
    ok = True
    for name in CROPS:
        row = {}
        for net, s in SIZES.items():
            outs = reference_forward(net, weights[net], crops[(name, s)][0].transpose(1, 2, 0))
            row[net] = round(float(np.asarray(outs[-1]).reshape(-1)[1]), 6)
        result["face_probability"][name] = row
        print(f"  {name:7s} P-Net {row['pnet']:.4f}  R-Net {row['rnet']:.4f}  O-Net {row['onet']:.4f}")
        if name == "face":
            ok &= row["onet"] > 0.9
        else:
            ok &= row["onet"] < 0.5
    path = os.path.join(args.out, "mtcnn_expected.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")
    if not ok:
        sys.exit("error: O-Net does not separate the face crop (> 0.9) from the others (< 0.5)")


if __name__ == "__main__":
    main()
