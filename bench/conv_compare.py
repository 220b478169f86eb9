#!/usr/bin/env python3
"""Set libmvision's conv2d methods beside ONNX Runtime's Conv, single-threaded, same run.

Requirements (this script installs nothing itself):

    pip install numpy onnx onnxruntime      # models/requirements.txt pins the versions

Usage, from the repository root:

    cargo build --release -p mvision-benches --example nn_bench --features gemm-crate \\
        --target-dir target/gemm-crate
    python3 bench/conv_compare.py --rounds 2 --mvision target/gemm-crate/release/examples/nn_bench

BENCHMARKS.md lists the exact commands behind its tables.

What it does:

1. Runs `nn_bench --conv` (`benches/examples/nn_bench.rs`), which prints one JSON object per
   (shape, method): seed 004's nine single-channel shapes, FastPoorNet's conv layers and
   AlexNet's (torchvision) conv layers at 224×224, batch 1, each with its geometry, median
   seconds per call and workspace bytes. `WinogradPrepared` (where Winograd applies) and
   `BlockedPrepared` are Winograd and the blocked direct method on weights transformed once
   before timing (as ORT pre-packs its weights at session creation); those weights (16/9 of
   the layer's, and the layer's re-laid out) are outside the workspace column.
2. For each shape, builds a one-node ONNX model (Conv without bias, the same geometry, float32,
   random weights as an initializer) and times ONNX Runtime on it with one intra-op and one
   inter-op thread, sequential execution, all graph optimisations, the input bound once (an
   `IOBinding` with preallocated output, so no per-call allocation of ours or theirs is timed),
   with the same method as `nn_bench`: an untimed warm-up of at least 50 ms, then N samples of
   at least T ms of back-to-back calls, median per call.
3. `--rounds R` repeats 1-2 alternating the sides and keeps each cell's best round (the machine
   is shared; interference only ever adds time).

Output: a Markdown table on stdout per shape: each of our methods (ms, GFLOP/s, workspace), ONNX
Runtime (ms, GFLOP/s) and the ratio ORT time / our best time (> 1: we are faster); progress on
stderr; raw results with `--json-out FILE`.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime as ort
    from gemm_compare import time_call  # the same timing method as the GEMM comparison
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(f"error: {exc.name} is missing; install with: pip install -r models/requirements.txt")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_ours(binary: str, samples: int, min_ms: int, only: str, methods: str) -> list[dict]:
    cmd = [binary, "--conv", "--samples", str(samples), "--min-ms", str(min_ms), "--only", only]
    if methods:
        cmd += ["--methods", methods]
    log("running: " + " ".join(cmd))
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"error: {binary} not found; build it first (see this script's docstring)")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [r for r in rows if r.get("kind") == "conv"]


def conv_model(g: dict, seed: int) -> tuple[bytes, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (g["n"], g["c"], g["h"], g["w"])).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (g["out_c"], g["c"] // g["groups"], g["kh"], g["kw"]))
    w = numpy_helper.from_array(w.astype(np.float32), "W")
    top, left, bottom, right = g["pads"]
    node = helper.make_node(
        "Conv",
        ["X", "W"],
        ["Y"],
        kernel_shape=[g["kh"], g["kw"]],
        strides=g["stride"],
        pads=[top, left, bottom, right],
        dilations=g["dilation"],
        group=g["groups"],
    )
    graph = helper.make_graph(
        [node],
        "conv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape(g))],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString(), x


def run_ort(g: dict, samples: int, min_ms: int) -> float:
    model, x = conv_model(g, 1)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    y = sess.run(None, {"X": x})[0]
    out = ort.OrtValue.ortvalue_from_numpy(np.empty_like(y))
    binding.bind_ortvalue_output("Y", out)
    return time_call(lambda: sess.run_with_iobinding(binding), samples, min_ms / 1000)


def out_shape(g: dict) -> list[int]:
    kh, kw = g["kh"], g["kw"]
    dh, dw = g["dilation"]
    sh, sw = g["stride"]
    top, left, bottom, right = g["pads"]
    oh = (g["h"] + top + bottom - (dh * (kh - 1) + 1)) // sh + 1
    ow = (g["w"] + left + right - (dw * (kw - 1) + 1)) // sw + 1
    return [g["n"], g["out_c"], oh, ow]


def flop(g: dict) -> float:
    n, oc, oh, ow = out_shape(g)
    return 2.0 * n * oc * oh * ow * (g["c"] // g["groups"]) * g["kh"] * g["kw"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mvision", required=True, help="path to the nn_bench example binary")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--min-ms", type=int, default=200)
    ap.add_argument("--only", default="", help="substring of the shape ids to keep")
    ap.add_argument(
        "--methods",
        default="",
        help="comma-separated methods to time (nn_bench --methods), e.g. Im2col,WinogradPrepared",
    )
    ap.add_argument("--json-out", default="")
    args = ap.parse_args()

    ours: dict[tuple[str, str], dict] = {}
    theirs: dict[str, float] = {}
    geometry: dict[str, dict] = {}
    for r in range(args.rounds):
        log(f"round {r + 1}/{args.rounds}: libmvision")
        for row in run_ours(args.mvision, args.samples, args.min_ms, args.only, args.methods):
            if args.only not in row["shape"]:
                continue
            key = (row["shape"], row["method"])
            geometry[row["shape"]] = row["geometry"]
            if key not in ours or row["seconds"] < ours[key]["seconds"]:
                ours[key] = row
        log(f"round {r + 1}/{args.rounds}: onnxruntime {ort.__version__}")
        for shape, g in geometry.items():
            s = run_ort(g, args.samples, args.min_ms)
            theirs[shape] = min(s, theirs.get(shape, float("inf")))

    print(f"ONNX Runtime {ort.__version__}, 1 thread; {platform.processor() or platform.machine()}")
    print()
    if any(m.endswith("Prepared") for _, m in ours):
        print("*Prepared = the method on weights transformed once, outside the timed calls.")
        print()
    print("| shape | method | ms | GFLOP/s | workspace KiB | ORT ms | ORT GFLOP/s | ORT / ours |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    summary = []
    for shape, g in geometry.items():
        rows = [v for (s, _), v in ours.items() if s == shape]
        best = min(rows, key=lambda v: v["seconds"])
        f = flop(g)
        for v in rows:
            mark = " **best**" if v is best else ""
            print(
                f"| {shape} | {v['method']}{mark} | {v['seconds'] * 1e3:.3f} | "
                f"{f / v['seconds'] / 1e9:.1f} | {v['workspace_bytes'] / 1024:.0f} | | | |"
            )
        t = theirs[shape]
        ratio = t / best["seconds"]
        print(f"| {shape} | ONNX Runtime | | | | {t * 1e3:.3f} | {f / t / 1e9:.1f} | {ratio:.2f} |")
        summary.append({"shape": shape, "best": best, "ort_seconds": t, "ratio": ratio})
    print()
    print("| shape | our best method | ours ms | ORT ms | ORT / ours |")
    print("|---|---|---:|---:|---:|")
    for s in summary:
        print(
            f"| {s['shape']} | {s['best']['method']} | {s['best']['seconds'] * 1e3:.3f} | "
            f"{s['ort_seconds'] * 1e3:.3f} | {s['ratio']:.2f} |"
        )
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
