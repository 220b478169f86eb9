#!/usr/bin/env python3
"""Set `mvision bench filter` beside OpenCV on the same cases, sizes, border and thread count.

Requirements (this script installs nothing itself):

    pip install opencv-python-headless numpy

Usage, from the repository root:

    cargo build --release -p mvision-cli
    python3 bench/opencv_compare.py                       # defaults: 3 sizes, 15 samples
    python3 bench/opencv_compare.py --rounds 3 \\
        --mvision sse2=target/release/mvision \\
        --mvision native=target/native/release/mvision   # two builds, best of 3 rounds

BENCHMARKS.md lists the exact commands behind its tables.

What it does:

1. Runs each given `mvision` binary as `mvision bench filter --json` and reads the JSON object on
   its last line: our numbers, and the exact dense kernels the benchmark used.
2. Times the OpenCV counterpart of every case in this process, with `cv2.setNumThreads(1)` (our
   CPU path is single-threaded) and `BORDER_REFLECT_101` (our border), on uniform random images
   of the same sizes, with the same method: an untimed warm-up of at least 50 ms, then N samples
   of at least 10 ms of back-to-back calls into preallocated outputs, median per call. OpenCV is
   timed with its IPP acceleration on (its default) and, with `--ipp both` (the default), off
   as well. Python adds about a microsecond per call; that is at most ~5 % for the fastest
   case at 640x480 and is not subtracted. `--rounds R` repeats steps 1-2, alternating the two
   sides, and keeps each cell's best round, so a burst of load from other processes does not
   land on one side only.
3. Checks agreement where the two should agree: it writes one random image as PNG, runs
   `mvision filter` on it (the same core calls, through the CLI) and reports the largest absolute
   difference from OpenCV's result. u8 results are not expected to be bit-identical: we
   quantise kernels to 14 fractional bits (10 per axis for the Gaussian) and round halves up;
   OpenCV rounds in float (filter2D) or uses its own 8-bit fixed point (GaussianBlur). f32
   results are compared after rounding both to u8, which is all `mvision filter` writes.

Output: Markdown tables (throughput, ratios, agreement) on stdout, ready for BENCHMARKS.md;
progress on stderr; everything raw with `--json-out FILE`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import cv2
    import numpy as np
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(
        f"error: {exc.name} is missing; install with: pip install opencv-python-headless numpy"
    )

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = "640x480,1920x1080,3840x2160"
BORDER = cv2.BORDER_REFLECT_101
# Same measurement constants as cli/src/bench.rs, so both sides are timed alike.
WARM_UP_S = 0.050
MIN_SAMPLE_S = 0.010
# Seed of the OpenCV-side images. Content does not change any timing here (no data-dependent
# branches on either side), so it need not match mvision's SplitMix64 input.
SEED = 20240601


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for item in text.split(","):
        w, _, h = item.strip().lower().partition("x")
        sizes.append((int(w), int(h)))
    return sizes


def parse_build(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    if not sep:
        label, path = "mvision", text
    p = Path(path)
    return label, p if p.is_absolute() else (Path.cwd() / p)


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


def opencv_simd() -> str:
    info = cv2.getBuildInformation()
    keep = [
        line.strip()
        for line in info.splitlines()
        if line.strip().startswith(("Baseline:", "Dispatched code generation:"))
    ]
    return "; ".join(" ".join(k.split()) for k in keep)


def time_call(fn, repeat: int) -> dict:
    """Warm-up, then `repeat` samples of enough back-to-back calls to last MIN_SAMPLE_S."""
    start = time.perf_counter()
    warm = 0
    while warm == 0 or time.perf_counter() - start < WARM_UP_S:
        fn()
        warm += 1
    per_call = (time.perf_counter() - start) / warm
    runs = max(1, int(-(-MIN_SAMPLE_S // max(per_call, 1e-9))))
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(runs):
            fn()
        samples.append((time.perf_counter() - t) / runs)
    return {
        "median_ms": statistics.median(samples) * 1e3,
        "min_ms": min(samples) * 1e3,
        "max_ms": max(samples) * 1e3,
        "runs_per_sample": runs,
    }


def run_mvision_bench(
    binary: Path, sizes: str, repeat: int, cpu: str | None = None, cases: str | None = None
) -> dict:
    cmd = [str(binary), "bench", "filter", "--json", "--sizes", sizes, "--repeat", str(repeat)]
    if cases:
        cmd += ["--cases", cases]
    env = dict(os.environ)
    if cpu is not None:
        env["MVISION_CPU"] = cpu
    log(f"running: {'MVISION_CPU=' + cpu + ' ' if cpu else ''}{' '.join(cmd)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    log("\n".join(lines[:-1]))
    return json.loads(lines[-1])


def kernel_array(flat: list[float]) -> np.ndarray:
    k = int(round(len(flat) ** 0.5))
    return np.array(flat, dtype=np.float32).reshape(k, k)


def opencv_cases(case: str, img: np.ndarray, kernels: dict) -> list[tuple[str, object]]:
    """The OpenCV call(s) that compute `case` on `img` (u8), as (name, zero-arg callable)."""
    h, w = img.shape
    prec = case.rsplit("_", 1)[1]
    src = img if prec == "u8" else img.astype(np.float32)
    dst = np.empty_like(src)
    if case.startswith("filter2d_"):
        size = case.split("_")[1]
        k = kernel_array(kernels[size])
        return [("filter2D", lambda: cv2.filter2D(src, -1, k, dst=dst, borderType=BORDER))]
    if case.startswith("gaussian_"):
        ks = int(case.split("_")[1])
        # The bench's Gaussian cases use sigma = 0, which both libraries turn into OpenCV's
        # fixed tables for ksize <= 7 ([1 2 1]/4 for 3, ...; mvision since commit 4b9af44), so
        # "sigma=0" is the call users write and has exactly our weights; "sigma=<formula>" (the
        # sigma OpenCV documents for that size) is timed too, as a plain separable Gaussian.
        sigma = 0.3 * ((ks - 1) * 0.5 - 1) + 0.8
        g = cv2.getGaussianKernel(ks, sigma, ktype=cv2.CV_32F)

        def blur(s):
            return lambda: cv2.GaussianBlur(
                src, (ks, ks), s, dst=dst, sigmaY=s, borderType=BORDER
            )

        return [
            ("GaussianBlur sigma=0", blur(0)),
            (f"GaussianBlur sigma={sigma:g}", blur(sigma)),
            (
                f"sepFilter2D sigma={sigma:g}",
                lambda: cv2.sepFilter2D(src, -1, g, g, dst=dst, borderType=BORDER),
            ),
        ]
    if case.startswith("box_"):
        ks = int(case.split("_")[1])
        return [("blur", lambda: cv2.blur(src, (ks, ks), dst=dst, borderType=BORDER))]
    if case == "integral_u8":
        s = np.empty((h + 1, w + 1), np.int32)
        return [("integral", lambda: cv2.integral(img, sum=s, sdepth=cv2.CV_32S))]
    if case == "integral_sq_u8":
        s = np.empty((h + 1, w + 1), np.int32)
        sq = np.empty((h + 1, w + 1), np.float64)
        return [
            (
                "integral2",
                lambda: cv2.integral2(
                    img, sum=s, sqsum=sq, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F
                ),
            )
        ]
    raise ValueError(f"no OpenCV counterpart for case {case!r}")


def filter_cli_args(case: str, kernels: dict) -> list[str] | None:
    """`mvision filter` arguments that compute `case`, or None where the CLI has no such op."""
    prec = case.rsplit("_", 1)[1]
    flt = ["--float"] if prec == "f32" else []
    if case.startswith("filter2d_"):
        k = kernel_array(kernels[case.split("_")[1]])
        rows = ";".join(",".join(repr(float(v)) for v in row) for row in k)
        return ["--op", "kernel", "--kernel", rows, *flt]
    if case.startswith("gaussian_"):
        return ["--op", "gaussian", "--ksize", case.split("_")[1], *flt]
    if case.startswith("box_"):
        return ["--op", "box", "--ksize", case.split("_")[1], *flt]
    return None


def to_u8(a: np.ndarray) -> np.ndarray:
    """How `mvision filter --float` returns to 8 bits: round half away from zero, saturate."""
    if a.dtype == np.uint8:
        return a
    return np.clip(np.sign(a) * np.floor(np.abs(a) + 0.5), 0, 255).astype(np.uint8)


def check_agreement(binary: Path, cases: list[str], kernels: dict, size) -> list[dict]:
    w, h = size
    img = np.random.default_rng(SEED + 1).integers(0, 256, (h, w), dtype=np.uint8)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mvision-opencv-") as tmp:
        src_png = os.path.join(tmp, "in.png")
        cv2.imwrite(src_png, img)
        for case in cases:
            args = filter_cli_args(case, kernels)
            if args is None:
                for name, _ in opencv_cases(case, img, kernels):
                    rows.append({"case": case, "opencv": name, "max_abs_diff": None})
                continue
            out_png = os.path.join(tmp, f"{case}.png")
            cmd = [str(binary), "filter", *args, src_png, out_png]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr}")
            ours = cv2.imread(out_png, cv2.IMREAD_UNCHANGED)
            for name, fn in opencv_cases(case, img, kernels):
                theirs = to_u8(np.array(fn(), copy=True))
                diff = np.abs(ours.astype(np.int16) - theirs.astype(np.int16))
                rows.append(
                    {
                        "case": case,
                        "opencv": name,
                        "max_abs_diff": int(diff.max()),
                        "pixels_differing": int((diff != 0).sum()),
                        "pixels": int(diff.size),
                    }
                )
    return rows


def fmt_rate(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mvision",
        action="append",
        metavar="[LABEL=]PATH",
        help="an mvision binary to measure (repeatable); default target/release/mvision",
    )
    ap.add_argument(
        "--mvision-cpu",
        action="append",
        default=[],
        metavar="LABEL=LEVEL",
        help="run the build LABEL with MVISION_CPU=LEVEL (baseline, x86-64-v3, x86-64-v4), "
        "e.g. the same binary twice: --mvision base=B --mvision-cpu base=baseline --mvision dflt=B",
    )
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="comma-separated WxH")
    ap.add_argument("--repeat", type=int, default=15, help="timed samples per case (median)")
    ap.add_argument(
        "--ipp",
        choices=["on", "off", "both"],
        default="both",
        help="time OpenCV with its IPP acceleration on (default config), off, or both",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat the whole measurement, alternating mvision and OpenCV; keep the best",
    )
    ap.add_argument(
        "--cases",
        metavar="ID,...",
        help="only these case ids (e.g. integral_u8,integral_sq_u8), passed to `mvision bench "
        "filter --cases`; all when absent",
    )
    ap.add_argument("--check-size", default="640x480", help="image size of the agreement check")
    ap.add_argument("--json-out", metavar="FILE", help="also write every number as JSON")
    args = ap.parse_args()

    default_build = f"mvision={REPO / 'target' / 'release' / 'mvision'}"
    builds = [parse_build(b) for b in (args.mvision or [default_build])]
    cpu_caps = dict(c.split("=", 1) for c in args.mvision_cpu)
    for label in cpu_caps:
        if label not in {b[0] for b in builds}:
            sys.exit(f"error: --mvision-cpu {label}=...: no --mvision build is labelled {label}")
    for label, path in builds:
        if not path.is_file():
            sys.exit(
                f"error: {path} ({label}) not found; build it with "
                "`cargo build --release -p mvision-cli`"
            )
    sizes = parse_sizes(args.sizes)
    cv2.setNumThreads(1)
    ipp_modes = {"on": [True], "off": [False], "both": [True, False]}[args.ipp]

    # Rounds alternate the two sides, so a burst of load from another process on the machine
    # hits both alike; each cell keeps its best round (interference only ever slows a run).
    ours_rounds: dict = {label: [] for label, _ in builds}
    theirs = []  # one dict per (round, size, case, call, ipp)
    for rnd in range(args.rounds):
        for label, path in builds:
            cpu = cpu_caps.get(label)
            ours_rounds[label].append(run_mvision_bench(path, args.sizes, args.repeat, cpu, args.cases))
        kernels = ours_rounds[builds[0][0]][0]["dense_kernels"]
        case_ids = list(dict.fromkeys(r["case"] for r in ours_rounds[builds[0][0]][0]["results"]))
        for w, h in sizes:
            img = np.random.default_rng(SEED).integers(0, 256, (h, w), dtype=np.uint8)
            for case in case_ids:
                for name, fn in opencv_cases(case, img, kernels):
                    for ipp in ipp_modes:
                        cv2.ipp.setUseIPP(ipp)
                        t = time_call(fn, args.repeat)
                        t.update(
                            round=rnd,
                            case=case,
                            opencv=name,
                            ipp=ipp,
                            width=w,
                            height=h,
                            mpixel_per_s=w * h / (t["median_ms"] * 1e-3) / 1e6,
                        )
                        theirs.append(t)
                        log(
                            f"round {rnd + 1}: opencv {name:<26} ipp={'on ' if ipp else 'off'} "
                            f"{case:<17} {w}x{h}: {t['mpixel_per_s']:8.1f} Mpixel/s"
                        )
        cv2.ipp.setUseIPP(True)

    ours_rate: dict = {}  # (label, case, w, h) -> best Mpixel/s over rounds
    for label, runs in ours_rounds.items():
        for data in runs:
            for r in data["results"]:
                key = (label, r["case"], r["width"], r["height"])
                ours_rate[key] = max(ours_rate.get(key, 0.0), r["mpixel_per_s"] or 0.0)
    cv_best: dict = {}  # (w, h, case, call, ipp) -> best Mpixel/s over rounds
    for t in theirs:
        key = (t["width"], t["height"], t["case"], t["opencv"], t["ipp"])
        cv_best[key] = max(cv_best.get(key, 0.0), t["mpixel_per_s"])

    check = check_agreement(builds[0][1], case_ids, kernels, parse_sizes(args.check_size)[0])

    # --- report ----------------------------------------------------------------------------
    labels = [label for label, _ in builds]
    ref_ipp = ipp_modes[0]
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; 1 thread on both sides")
    print(
        f"OpenCV {cv2.__version__} (numpy {np.__version__}), {opencv_simd()}; "
        f"ratios against IPP {'on' if ref_ipp else 'off'}"
    )
    for label in labels:
        d = ours_rounds[label][0]
        print(f"mvision [{label}]: {d['build_profile']}, {d['arch']} {d['simd']}")
    print(
        f"Mpixel/s (higher is better): per cell the best of {args.rounds} round(s) of the "
        f"median of {args.repeat} samples"
    )
    print()
    names = [lb if lb == "mvision" else f"mvision {lb}" for lb in labels]
    head = ["size", "case", *names, "OpenCV call"]
    head += [f"OpenCV IPP {'on' if i else 'off'}" for i in ipp_modes]
    head += [f"ratio {lb}/OpenCV" for lb in labels]
    align = ["---", "---"] + ["---:"] * len(labels) + ["---"]
    align += ["---:"] * (len(ipp_modes) + len(labels))
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(align) + "|")
    cv_rate: dict = {}  # (w, h, case, call) -> [Mpixel/s per IPP mode], in measurement order
    for (w, h, case, name, _), rate in cv_best.items():
        cv_rate.setdefault((w, h, case, name), []).append(rate)
    for (w, h, case, name), cv in cv_rate.items():
        mine = [ours_rate.get((lb, case, w, h)) for lb in labels]
        ratios = ["n/a" if m is None else f"{m / cv[0]:.2f}" for m in mine]
        cells = [f"{w}x{h}", case, *map(fmt_rate, mine), name, *map(fmt_rate, cv)]
        print("| " + " | ".join(cells + ratios) + " |")
    print()
    print(f"Agreement with OpenCV at {args.check_size} (mvision filter vs OpenCV, u8 values):")
    print()
    print("| case | OpenCV call | max abs diff | pixels differing |")
    print("|---|---|---:|---:|")
    for r in check:
        if r["max_abs_diff"] is None:
            print(f"| {r['case']} | {r['opencv']} | n/a (not exposed by `mvision filter`) | |")
        else:
            n, total = r["pixels_differing"], r["pixels"]
            print(
                f"| {r['case']} | {r['opencv']} | {r['max_abs_diff']} "
                f"| {n} of {total} ({100 * n / total:.2f} %) |"
            )

    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(
                {
                    "cpu": cpu_model(),
                    "logical_cores": os.cpu_count(),
                    "opencv": cv2.__version__,
                    "opencv_simd": opencv_simd(),
                    "numpy": np.__version__,
                    "rounds": args.rounds,
                    "mvision": ours_rounds,
                    "opencv_results": theirs,
                    "agreement": check,
                },
                f,
                indent=1,
            )
        log(f"wrote {args.json_out}")


if __name__ == "__main__":
    main()
