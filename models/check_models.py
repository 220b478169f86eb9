#!/usr/bin/env python3
"""Checks mvision's ONNX converter and runtime against ONNX Runtime outputs.

For every subfolder X of --dir that holds model.onnx, input.npy and expected.npy (as written
by make_archs.py) this runs

    mvision convert X/model.onnx -o X/model.mvnn
    mvision infer --model X/model.mvnn --input X/input.npy --output X/output.npy

and compares output.npy (y) with expected.npy (e). Pass criterion, elementwise over the whole
output tensor (which must have e's shape):

    max |y - e|  <=  rtol * max(1, max |e|)

i.e. an absolute tolerance of rtol scaled up by the output's largest magnitude when that
exceeds 1 (default rtol 1e-4). NaN or Inf in y fails. Also printed per model: max abs error,
max relative error max(|y - e| / max(|e|, 1e-6)) (informative only: it is large where e is
near 0) and the wall time of the infer command.

Models with several inputs/outputs: input.npy / expected.npy may be replaced by input0.npy,
input1.npy, ... and expected0.npy, expected1.npy, ... (graph order).

Exit status: 0 if every model passes, 1 if any fails, 2 on a usage error (missing binary,
empty folder).

Usage: python models/check_models.py --mvision target/release/mvision --dir build/nn-models
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

import numpy as np


def numbered(folder, stem):
    """[folder/stem.npy] or [folder/stem0.npy, folder/stem1.npy, ...]."""
    single = os.path.join(folder, stem + ".npy")
    if os.path.exists(single):
        return [single]
    files = []
    while os.path.exists(os.path.join(folder, f"{stem}{len(files)}.npy")):
        files.append(os.path.join(folder, f"{stem}{len(files)}.npy"))
    return files


def run(cmd, what):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()[-5:]
        return dt, f"{what} failed (exit {p.returncode}): " + " | ".join(msg)
    return dt, None


def check_one(mvision, folder, rtol, drop_converted=False):
    ok = check_converted(mvision, folder, rtol)
    if drop_converted:
        for f in glob.glob(os.path.join(folder, "model.mvnn")) + glob.glob(
                os.path.join(folder, "output*.npy")):
            os.remove(f)
    return ok


def check_converted(mvision, folder, rtol):
    name = os.path.basename(os.path.normpath(folder))
    onnx_path = os.path.join(folder, "model.onnx")
    mvnn = os.path.join(folder, "model.mvnn")
    inputs = numbered(folder, "input")
    expected = numbered(folder, "expected")
    if not inputs or not expected:
        print(f"FAIL {name}: needs input.npy and expected.npy beside model.onnx")
        return False
    outputs = [os.path.join(folder, f"output{i}.npy") for i in range(len(expected))]
    for o in outputs:
        if os.path.exists(o):
            os.remove(o)

    _, err = run([mvision, "convert", onnx_path, "-o", mvnn], "convert")
    if err:
        print(f"FAIL {name}: {err}")
        return False
    cmd = [mvision, "infer", "--model", mvnn]
    for i in inputs:
        cmd += ["--input", i]
    for o in outputs:
        cmd += ["--output", o]
    dt, err = run(cmd, "infer")
    if err:
        print(f"FAIL {name}: {err}")
        return False

    ok = True
    for k, (o, e_path) in enumerate(zip(outputs, expected)):
        label = name if len(expected) == 1 else f"{name}[{k}]"
        if not os.path.exists(o):
            print(f"FAIL {label}: infer wrote no {o}")
            ok = False
            continue
        y = np.load(o)
        e = np.load(e_path)
        if y.shape != e.shape:
            print(f"FAIL {label}: output shape {y.shape}, expected {e.shape}")
            ok = False
            continue
        y64, e64 = y.astype(np.float64), e.astype(np.float64)
        diff = np.abs(y64 - e64)
        max_abs = float(diff.max()) if diff.size else 0.0
        max_rel = float((diff / np.maximum(np.abs(e64), 1e-6)).max()) if diff.size else 0.0
        scale = max(1.0, float(np.abs(e64).max()) if e64.size else 0.0)
        passed = bool(np.all(np.isfinite(y64))) and max_abs <= rtol * scale
        ok &= passed
        print(f"{'PASS' if passed else 'FAIL'} {label:20s} max_abs {max_abs:.3e}  "
              f"max_rel {max_rel:.3e}  bound {rtol * scale:.3e}  infer {dt:.3f}s")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mvision", required=True, help="path to the mvision binary")
    ap.add_argument("--dir", required=True, help="folder of model folders (make_archs.py --out)")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="pass if max|y-e| <= rtol*max(1, max|e|) (default 1e-4)")
    ap.add_argument("--drop-converted", action="store_true",
                    help="delete each model.mvnn and output*.npy once checked (saves disk: "
                         "AlexNet's .mvnn alone is 244 MB)")
    args = ap.parse_args()

    mvision = args.mvision
    if os.sep not in mvision:
        mvision = shutil.which(mvision) or mvision
    if not (os.path.isfile(mvision) and os.access(mvision, os.X_OK)):
        print(f"error: mvision binary not found or not executable: {args.mvision}\n"
              f"       build it first (cargo build --release -p mvision-cli) and pass its path",
              file=sys.stderr)
        return 2
    if not os.path.isdir(args.dir):
        print(f"error: --dir {args.dir} is not a folder; run models/make_archs.py --out {args.dir}",
              file=sys.stderr)
        return 2
    folders = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(args.dir, "*", "model.onnx")))
    if not folders:
        print(f"error: no */model.onnx under {args.dir}; run models/make_archs.py --out {args.dir}",
              file=sys.stderr)
        return 2

    results = [check_one(mvision, f, args.rtol, args.drop_converted) for f in folders]
    n_fail = results.count(False)
    print(f"{len(results) - n_fail} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
