#!/usr/bin/env python3
"""ONNX Runtime's own per-node profile of a model, one thread, for comparison with
`mvision bench net --layers`.

    $PY bench/ort_profile.py build/nn-models/mobilenetv2/model.onnx --repeat 50

The session is set up as in `bench/net_compare.py` (one intra- and inter-op thread, sequential,
`ORT_ENABLE_ALL`, inputs and outputs bound once) plus `SessionOptions.enable_profiling`. After a
0.2 s warm-up (not profiled: profiling starts with the session, so the warm-up runs are dropped
by counting the `model_run` events), `--repeat` runs are profiled; each node's kernel time
(`Node` events ending in `_kernel_time`) is the median over those runs. Printed: each node (op
type, ORT's node name, which names the fused kernels ORT chose, output shape, ms), then totals
per op type, and the median `model_run` time (which includes ORT's per-run overhead).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The session as bench/net_compare.py runs it (this folder is on sys.path when run as a
# script); it exits with a message when numpy or onnxruntime is missing.
from net_compare import bound_session, ort


def profile(model: Path, repeat: int, warm_up_s: float = 0.2) -> tuple[float, list[dict]]:
    """ORT's profile of `repeat` runs of `model` after a `warm_up_s` warm-up: the median
    `model_run` time (ms) and, in order of first execution, each node's `name`, `op`, `inputs`
    and `output` shapes (lists of dimensions) and `ms` (median kernel time)."""
    with tempfile.TemporaryDirectory() as tmp:
        sess, binding, _outputs = bound_session(model, os.path.join(tmp, "ort"))
        warm = 1  # bound_session's first run
        start = time.perf_counter()
        while time.perf_counter() - start < warm_up_s:
            sess.run_with_iobinding(binding)
            warm += 1
        for _ in range(repeat):
            sess.run_with_iobinding(binding)
        trace = json.loads(Path(sess.end_profiling()).read_text())

    runs = [e for e in trace if e.get("cat") == "Session" and e.get("name") == "model_run"]
    runs.sort(key=lambda e: e["ts"])
    timed = runs[warm:]
    if not timed:
        sys.exit("error: no profiled runs after the warm-up")
    t0 = timed[0]["ts"]
    per_node: dict[str, list[float]] = collections.defaultdict(list)
    nodes: dict[str, dict] = {}
    for e in trace:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time") or e["ts"] < t0:
            continue
        name = e["name"][: -len("_kernel_time")]
        if name not in nodes:
            a = e.get("args", {})
            dims = lambda shapes: [next(iter(x.values())) for x in shapes or []]
            outs = dims(a.get("output_type_shape"))
            nodes[name] = {"name": name, "op": a.get("op_name", "?"),
                           "inputs": dims(a.get("input_type_shape")),
                           "output": outs[0] if outs else []}
        per_node[name].append(e["dur"] / 1e3)
    for name, n in nodes.items():
        n["ms"] = statistics.median(per_node[name])
    return statistics.median(e["dur"] for e in timed) / 1e3, list(nodes.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--warm-up-s", type=float, default=0.2)
    args = ap.parse_args()

    run_ms, nodes = profile(args.model, args.repeat, args.warm_up_s)
    order = [n["name"] for n in nodes]
    med = {n["name"]: n["ms"] for n in nodes}
    info = {n["name"]: (n["op"], "x".join(str(d) for d in n["output"])) for n in nodes}
    total = sum(med.values())
    print(f"ONNX Runtime {ort.__version__}, 1 thread; {args.model}; median of {args.repeat} "
          f"profiled runs: model_run {run_ms:.3f} ms, sum of node medians {total:.3f} ms")
    print(f"{'op':<24} {'node':<44} {'output':<16} {'ms':>8} {'%':>6}")
    for n in order:
        op, shape = info[n]
        print(f"{op:<24} {n[:44]:<44} {shape:<16} {med[n]:>8.4f} {100 * med[n] / total:>6.2f}")
    by_op: dict[str, list[float]] = collections.defaultdict(list)
    for n in order:
        by_op[info[n][0]].append(med[n])
    print("per op type:")
    print(f"{'op':<24} {'count':>5} {'ms':>8} {'%':>6}")
    for op, v in sorted(by_op.items(), key=lambda kv: -sum(kv[1])):
        print(f"{op:<24} {len(v):>5} {sum(v):>8.3f} {100 * sum(v) / total:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
