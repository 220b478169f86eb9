#!/usr/bin/env python3
"""Whole-network latency of libmvision (`mvision bench net`) beside ONNX Runtime, one thread each.

Requirements: the models/ venv (`PY=$(scripts/nn-venv.sh | tail -n1)`), a release `mvision`,
and model folders written by `models/make_archs.py` / `models/mtcnn_to_onnx.py`:

    cargo build --release -p mvision-cli
    $PY models/make_archs.py --out build/nn-models
    $PY bench/net_compare.py --mvision target/release/mvision --dir build/nn-models --rounds 2

For each `DIR/<name>/model.onnx` it converts the model (`mvision convert`, into a temporary
folder), then times:

* mvision: `mvision bench net --model M.mvnn --repeat R --json` (median of R timed runs of one
  forward, after a warm-up; inputs generated; activation arena + scratch reported);
* ONNX Runtime: an `InferenceSession` with one intra-op and one inter-op thread, sequential
  execution, all graph optimisations, inputs and the output bound once (`IOBinding`), median of
  R runs after the same warm-up.

`--rounds N` repeats both and keeps each side's best median (the machine is shared;
interference only adds time). Output: a Markdown table (ms, ratio ORT / mvision: > 1 means
mvision is faster, and mvision's arena + scratch in MiB); `--json-out FILE` for the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(f"error: {exc.name} is missing; install with: pip install -r models/requirements.txt")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit(f"error: {cmd[0]} not found")
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed: {p.stderr.strip()}")
    return p.stdout


def ours(mvision: str, model: Path, repeat: int, prepared_budget: int) -> dict:
    cmd = [mvision, "bench", "net", "--model", str(model), "--repeat", str(repeat), "--json"]
    if prepared_budget:
        cmd += ["--prepared-budget", str(prepared_budget)]
    doc = json.loads(run(cmd))
    return {"ms": doc["median_ms"], "arena": doc["arena_bytes"], "scratch": doc["scratch_bytes"],
            "prepared": doc.get("prepared_bytes", 0)}


def bound_session(onnx_path: Path, profile_prefix: str | None = None):
    """An ONNX Runtime session as both benchmarks run it (one intra- and one inter-op thread,
    sequential, `ORT_ENABLE_ALL`; profiling into `profile_prefix` when given) with `mvision bench
    net`'s inputs and the outputs bound once: `(session, binding, outputs)`. It has run once
    (to size the outputs). The output arrays must outlive the binding (OrtValue borrows their
    memory), so they are returned with it."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix is not None:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        n = int(np.prod(i.shape))
        feeds[i.name] = (((np.arange(n) * 37) % 17) / 8.0 - 1.0).astype(np.float32).reshape(i.shape)
    binding = sess.io_binding()
    for name, x in feeds.items():
        binding.bind_cpu_input(name, x)
    outputs = [np.empty_like(y) for y in sess.run(None, feeds)]
    for o, y in zip(sess.get_outputs(), outputs):
        binding.bind_ortvalue_output(o.name, ort.OrtValue.ortvalue_from_numpy(y))
    return sess, binding, outputs


def theirs(onnx_path: Path, repeat: int) -> float:
    sess, binding, _outputs = bound_session(onnx_path)
    start = time.perf_counter()
    while time.perf_counter() - start < 0.2:
        sess.run_with_iobinding(binding)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run_with_iobinding(binding)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mvision", required=True)
    ap.add_argument("--dir", required=True, type=Path, action="append",
                    help="folder of <model>/model.onnx (repeatable)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--prepared-budget", type=int, default=0,
                    help="bytes of pre-transformed Winograd and blocked weights mvision may keep "
                         "(`bench net --prepared-budget`; 0: none, as mv_net_create)")
    ap.add_argument("--json-out", default="")
    args = ap.parse_args()

    models = sorted(p.parent for d in args.dir for p in d.glob("*/model.onnx"))
    if not models:
        sys.exit("error: no <model>/model.onnx under " + ", ".join(map(str, args.dir)))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for folder in models:
            name = folder.name
            mvnn = Path(tmp) / f"{name}.mvnn"
            run([args.mvision, "convert", str(folder / "model.onnx"), "-o", str(mvnn)])
            best_ours, best_ort = None, float("inf")
            for r in range(args.rounds):
                log(f"{name}: round {r + 1}/{args.rounds}")
                o = ours(args.mvision, mvnn, args.repeat, args.prepared_budget)
                if best_ours is None or o["ms"] < best_ours["ms"]:
                    best_ours = o
                best_ort = min(best_ort, theirs(folder / "model.onnx", args.repeat))
            results.append({"model": name, "mvision_ms": best_ours["ms"], "ort_ms": best_ort,
                            "ratio": best_ort / best_ours["ms"],
                            "arena_bytes": best_ours["arena"],
                            "scratch_bytes": best_ours["scratch"],
                            "prepared_bytes": best_ours["prepared"]})
    print(f"ONNX Runtime {ort.__version__}, both 1 thread; median of {args.repeat} runs, "
          f"best of {args.rounds} round(s)")
    print()
    print("| model | mvision ms | ORT ms | ORT / mvision | mvision arena + scratch MiB "
          "| prepared weights MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        mib = (r["arena_bytes"] + r["scratch_bytes"]) / 2**20
        print(f"| {r['model']} | {r['mvision_ms']:.2f} | {r['ort_ms']:.2f} | {r['ratio']:.2f} | "
              f"{mib:.1f} | {r['prepared_bytes'] / 2**20:.1f} |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
