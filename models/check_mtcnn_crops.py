#!/usr/bin/env python3
"""Run MTCNN's trained P-, R- and O-Net through mvision on the committed astronaut.png crops and
compare the face probabilities with the independent numpy reference.

    mvision convert DIR/<net>/model.onnx -o DIR/<net>/model.mvnn      (once per net)
    mvision infer --model DIR/<net>/model.mvnn --input models/data/crop_<name>_<S>x<S>.npy \\
        --output <tmp>/y0.npy --output <tmp>/y1.npy [...]

DIR is the output folder of `models/mtcnn_to_onnx.py` (pnet/, rnet/, onet/). The face
probability is element 1 of the last output (`prob`, softmax over 2 channels). A crop passes
when |p_mvision − p_reference| ≤ --atol (default 1e-4; the reference in
`models/data/mtcnn_expected.json` is rounded to 6 decimals) and, as a sanity check of the
verdict, face crops score > 0.9 and the others < 0.5 on every net. Prints a table; exits 1 on
any failure, 2 if the binary or a folder is missing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

NETS = {"pnet": 12, "rnet": 24, "onet": 48}
OUTPUTS = {"pnet": 2, "rnet": 2, "onet": 3}
DATA = Path(__file__).resolve().parent / "data"


def run(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit(print(f"error: {cmd[0]} not found", file=sys.stderr) or 2)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mvision", required=True, help="the mvision binary")
    ap.add_argument("--dir", required=True, type=Path, help="output folder of mtcnn_to_onnx.py")
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()

    expected = json.loads((DATA / "mtcnn_expected.json").read_text())["face_probability"]
    failures = 0
    print("| crop | net | mvision | reference | |diff| | verdict |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for net, size in NETS.items():
            onnx_path = args.dir / net / "model.onnx"
            if not onnx_path.is_file():
                print(f"error: {onnx_path} is missing; run models/mtcnn_to_onnx.py", file=sys.stderr)
                return 2
            model = Path(tmp) / f"{net}.mvnn"
            run([args.mvision, "convert", str(onnx_path), "-o", str(model)])
            for crop, probs in expected.items():
                x = DATA / f"crop_{crop}_{size}x{size}.npy"
                outs = [Path(tmp) / f"{net}_{crop}_y{i}.npy" for i in range(OUTPUTS[net])]
                cmd = [args.mvision, "infer", "--model", str(model), "--input", str(x)]
                for o in outs:
                    cmd += ["--output", str(o)]
                run(cmd)
                prob = np.load(outs[-1]).reshape(-1)
                if prob.size != 2:
                    raise RuntimeError(f"{net} prob output has {prob.size} elements, expected 2")
                got, want = float(prob[1]), float(probs[net])
                diff = abs(got - want)
                sane = got > 0.9 if crop == "face" else got < 0.5
                ok = diff <= args.atol and sane
                failures += not ok
                print(
                    f"| {crop} | {net} | {got:.6f} | {want:.6f} | {diff:.1e} | "
                    f"{'ok' if ok else 'FAIL'} |"
                )
    print(f"\n{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
