#!/usr/bin/env python3
"""Each convolution of a network beside ONNX Runtime's, in the network, one thread each: the
per-node times of `mvision bench net --layers` matched with ORT's own profile
(`bench/ort_profile.py`), in alternating rounds.

    $PY bench/layer_compare.py --mvision target/release/mvision \\
        --model build/nn-models/resnet18/model.onnx --rounds 3 [--prepared-budget 100000000]

The model is converted once (`mvision convert`, into a temporary folder). Each round runs
`mvision bench net --layers --repeat R` and then profiles ORT (`--repeat R` runs after a
warm-up, through `ort_profile.profile`). ORT names nodes after the fused kernels it chose and
may order independent branches differently (SqueezeNet's expand 3×3 before its expand 1×1),
so the convolutions are matched by key -- output shape (channels rounded up to 16, as ORT pads
them), kernel size, stride, groups (ORT's from its weight and input shapes) -- and, among equal
keys, in order of execution. Printed per convolution: ours and ORT's
node medians as min–max over the rounds, the ratio ORT / ours of the minima (> 1: mvision is
faster), then the sums and the nodes below 1.0. Timing noise only adds time, so the minima
are the better estimates on a shared machine; ORT pre-packs its weights when the session is
made, which `--prepared-budget` gives mvision too (`mv_net_create_prepared`).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import tempfile
from pathlib import Path

from net_compare import run
from ort_profile import profile

# "   4  Conv  1x64x55x55  3x3/1 g=1+relu blocked (prepared)  0.2939  7.92"
OURS = re.compile(
    r"^\s*(\d+)\s+Conv\s+(\S+)\s+(\d+)x(\d+)/(\d+) g=(\d+)(\S*)\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s*$"
)


def shape_key(dims: list[int]) -> str:
    """An NCHW shape with its channels rounded up to 16 (ORT's NCHWc pads them: 1000 -> 1008)."""
    n, c, h, w = dims
    return f"{n}x{-(-c // 16) * 16}x{h}x{w}"


def ours(mvision: str, mvnn: Path, repeat: int, prepared: int) -> list[dict]:
    cmd = [mvision, "bench", "net", "--model", str(mvnn), "--repeat", str(repeat), "--layers"]
    if prepared:
        cmd += ["--prepared-budget", str(prepared)]
    nodes = []
    for line in run(cmd).splitlines():
        m = OURS.match(line)
        if m:
            idx, out, kh, kw, stride, groups, act, method, ms, _ = m.groups()
            nodes.append({
                "key": (shape_key([int(d) for d in out.split("x")]), int(kh), int(kw),
                        int(stride), int(groups)),
                "label": f"{idx:>3} {out} {kh}x{kw}/{stride} g={groups}{act} {method}",
                "ms": float(ms),
            })
    if not nodes:
        sys.exit("error: no Conv nodes in `mvision bench net --layers` output")
    return nodes


def theirs(onnx_path: Path, repeat: int) -> list[dict]:
    nodes = []
    for n in profile(onnx_path, repeat)[1]:
        if "Conv" not in n["op"]:
            continue
        x, w, out = n["inputs"][0], n["inputs"][1], n["output"]
        stride = max(1, round(x[2] / out[2]))
        key = (shape_key(out), w[2], w[3], stride, x[1] // w[1])
        nodes.append({"key": key, "name": n["name"], "ms": n["ms"]})
    return nodes


def match(a: list[dict], b: list[dict]) -> list[tuple[int, int]]:
    """Pairs (index in a, index in b) with equal keys, the k-th of a key with the k-th."""
    seen: dict[tuple, list[int]] = collections.defaultdict(list)
    for j, n in enumerate(b):
        seen[n["key"]].append(j)
    pairs = []
    for i, n in enumerate(a):
        if seen[n["key"]]:
            pairs.append((i, seen[n["key"]].pop(0)))
    return pairs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mvision", required=True)
    ap.add_argument("--model", required=True, type=Path, help="an ONNX model")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--prepared-budget", type=int, default=0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        mvnn = Path(tmp) / "model.mvnn"
        run([args.mvision, "convert", str(args.model), "-o", str(mvnn)])
        ours_runs, ort_runs = [], []
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
            ours_runs.append(ours(args.mvision, mvnn, args.repeat, args.prepared_budget))
            ort_runs.append(theirs(args.model, args.repeat))

    base, ort_base = ours_runs[0], ort_runs[0]
    pairs = match(base, ort_base)
    if len(pairs) != len(base) or len(ort_base) != len(base):
        print(f"warning: {len(base)} convolutions here, {len(ort_base)} in ORT, "
              f"{len(pairs)} matched", file=sys.stderr)
        got = {i for i, _ in pairs}, {j for _, j in pairs}
        for i, n in enumerate(base):
            if i not in got[0]:
                print(f"  not matched here: {n['label']} {n['key']}", file=sys.stderr)
        for j, n in enumerate(ort_base):
            if j not in got[1]:
                print(f"  not matched in ORT: {n['name']} {n['key']}", file=sys.stderr)
    ours_ms = [[run_[i]["ms"] for run_ in ours_runs] for i, _ in pairs]
    ort_ms = [[run_[j]["ms"] for run_ in ort_runs] for _, j in pairs]
    print(f"{args.model}: {len(pairs)} convolutions, {args.rounds} alternating rounds of "
          f"{args.repeat} runs, prepared budget {args.prepared_budget} bytes; ms min–max over "
          "the rounds of each node's median; ratio = ORT min / ours min")
    print("| node | ours ms | ORT ms | ORT / ours |")
    print("|---|---:|---:|---:|")
    below = []
    for (i, j), o, t in zip(pairs, ours_ms, ort_ms):
        ratio = min(t) / min(o)
        flag = "" if ratio >= 1.0 else " **"
        print(f"| {base[i]['label']} ({ort_base[j]['name']}) | {min(o):.3f}–{max(o):.3f} | "
              f"{min(t):.3f}–{max(t):.3f} | {ratio:.2f}{flag} |")
        if ratio < 1.0:
            below.append((min(o) - min(t), base[i]["label"], ratio))
    so, st = sum(min(o) for o in ours_ms), sum(min(t) for t in ort_ms)
    print(f"| all matched convolutions (sum of minima) | {so:.3f} | {st:.3f} | {st / so:.2f} |")
    print(f"below 1.0: {len(below)} of {len(pairs)}, by absolute gap (ms):")
    for gap, label, ratio in sorted(below, reverse=True):
        print(f"  {gap:.3f}  {ratio:.2f}  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
