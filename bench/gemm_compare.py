#!/usr/bin/env python3
"""Set libmvision's GEMM (and conv2d methods) beside numpy's OpenBLAS, single-threaded, same run.

Requirements (this script installs nothing itself):

    pip install numpy            # numpy wheels bundle OpenBLAS

Usage, from the repository root:

    cargo build --release -p mvision-benches --example nn_bench
    cargo build --release -p mvision-benches --example nn_bench --features gemm-crate \\
        --target-dir target/gemm-crate
    python3 bench/gemm_compare.py --rounds 2 \\
        --mvision portable=target/release/examples/nn_bench \\
        --mvision gemm-crate=target/gemm-crate/release/examples/nn_bench

BENCHMARKS.md lists the exact commands behind its tables.

What it does:

1. Runs each given `nn_bench` binary (`examples/nn_bench.rs`), which prints one JSON object per
   case: every GEMM variant of the core on 256..2048 cubes and the FastPoorNet shapes, and (with
   `--conv`, for the first binary only) every conv2d method on the seed-004 and FastPoorNet
   shapes with its workspace.
2. Times `numpy.matmul` on the same shapes in this process with OpenBLAS limited to one thread
   (`OPENBLAS_NUM_THREADS=1`, set before numpy is imported; our code is single-threaded), float32,
   C-contiguous operands, into a preallocated output (`out=`), with the same method as
   `nn_bench`: an untimed warm-up of at least 50 ms, then N samples of at least T ms of
   back-to-back calls, median per call.
3. `--rounds R` repeats 1-2, alternating the two sides, and keeps each cell's best round: the
   machine is shared, and interference only ever adds time.

Output: Markdown tables on stdout (GFLOP/s = 2·m·n·k / time / 1e9; ratio = ours / numpy),
progress on stderr, raw results with `--json-out FILE`.
"""

from __future__ import annotations

import os

# Must precede the numpy import: OpenBLAS reads it once, when loaded.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

try:
    import numpy as np  # noqa: E402
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(f"error: {exc.name} is missing; install with: pip install numpy")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def time_call(fn, samples: int, min_s: float) -> float:
    """Median seconds per call: warm-up >= 50 ms, then `samples` batches of >= `min_s`."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        fn()
    per = []
    for _ in range(samples):
        runs = 0
        t = time.perf_counter()
        while True:
            fn()
            runs += 1
            el = time.perf_counter() - t
            if el >= min_s:
                break
        per.append(el / runs)
    return statistics.median(per)


def numpy_gemm(shapes, samples: int, min_s: float) -> dict:
    rng = np.random.default_rng(1)
    out = {}
    for m, n, k in shapes:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        s = time_call(lambda: np.matmul(a, b, out=c), samples, min_s)
        out[(m, n, k)] = s
        log(f"numpy {m}x{n}x{k}: {2 * m * n * k / s / 1e9:.1f} GFLOP/s")
    return out


def run_ours(path: str, samples: int, min_ms: int, conv: bool) -> list[dict]:
    cmd = [path, "--samples", str(samples), "--min-ms", str(min_ms), "--gemm"]
    if conv:
        cmd.append("--conv")
    log("running " + " ".join(cmd))
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mvision", action="append", required=True, metavar="LABEL=PATH",
                    help="an nn_bench binary; repeat for several builds")
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--min-ms", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-conv", action="store_true", help="skip the conv2d table")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    builds = [tuple(x.split("=", 1)) for x in args.mvision]

    best_ours: dict = {}  # (label, impl, m, n, k) -> seconds
    best_conv: dict = {}  # (shape, method) -> record
    best_np: dict = {}
    shapes: list = []
    for r in range(args.rounds):
        log(f"round {r + 1}/{args.rounds}")
        for i, (label, path) in enumerate(builds):
            recs = run_ours(path, args.samples, args.min_ms, conv=(i == 0 and not args.no_conv))
            for rec in recs:
                if rec["kind"] == "gemm":
                    key = (label, rec["impl"], rec["m"], rec["n"], rec["k"])
                    best_ours[key] = min(best_ours.get(key, 1e30), rec["seconds"])
                    shape = (rec["m"], rec["n"], rec["k"])
                    if shape not in shapes:
                        shapes.append(shape)
                else:
                    key = (rec["shape"], rec["method"])
                    if key not in best_conv or rec["seconds"] < best_conv[key]["seconds"]:
                        best_conv[key] = rec
        for shape, s in numpy_gemm(shapes, args.samples, args.min_ms / 1000).items():
            best_np[shape] = min(best_np.get(shape, 1e30), s)

    gf = lambda shape, s: 2 * shape[0] * shape[1] * shape[2] / s / 1e9  # noqa: E731
    impls = []
    for (label, impl, *_rest) in best_ours:
        name = impl if len(builds) == 1 else f"{label}: {impl}"
        if (label, impl, name) not in impls:
            impls.append((label, impl, name))
    # Columns: every implementation, numpy, and the ratio of each build's sgemm to numpy.
    sg = [(label, impl, name) for label, impl, name in impls if impl.startswith("sgemm")]
    print(f"numpy {np.__version__}, OpenBLAS "
          f"{np.show_config(mode='dicts')['Build Dependencies']['blas'].get('version', '?')}, "
          f"{platform.python_version()}, OPENBLAS_NUM_THREADS=1\n")
    head = ["m×n×k"] + [n for *_x, n in impls] + ["numpy"] + [f"{n} / numpy" for *_x, n in sg]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for shape in shapes:
        row = [f"{shape[0]}×{shape[1]}×{shape[2]}"]
        for label, impl, _ in impls:
            s = best_ours.get((label, impl, *shape))
            row.append(f"{gf(shape, s):.1f}" if s else "—")
        row.append(f"{gf(shape, best_np[shape]):.1f}")
        for label, impl, _ in sg:
            s = best_ours.get((label, impl, *shape))
            row.append(f"{best_np[shape] / s:.2f}" if s else "—")
        print("| " + " | ".join(row) + " |")
    if best_conv:
        print("\n| shape | method | time (ms) | GFLOP/s | workspace (KiB) |")
        print("|---|---|---|---|---|")
        for (shape, method), rec in best_conv.items():
            print(f"| {shape} | {method} | {rec['seconds'] * 1e3:.3f} | {rec['gflops']:.2f} | "
                  f"{rec['workspace_bytes'] / 1024:.1f} |")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"ours": [list(k) + [v] for k, v in best_ours.items()],
                       "numpy": [list(k) + [v] for k, v in best_np.items()],
                       "conv": list(best_conv.values())}, f, indent=1)


if __name__ == "__main__":
    main()
