#!/usr/bin/env python3
"""Run OpenCV's single-object trackers on the real clips of ../shared/data/tracking and score them.

The OpenCV peer of our tracking numbers in BENCHMARKS.md: same clips, same initialisation, same
scoring rules as the Rust side (bench/tracking_metrics.py states the rules and self-tests them).

Requirements (this script installs nothing itself; TLD, MedianFlow, KCF and CSRT live in the
contrib build, which replaces, and must not be installed beside, opencv-python):

    pip install opencv-contrib-python-headless==4.10.0.84 numpy

Usage, from the repository root:

    python3 bench/tracking_compare.py                          # tld,kcf,csrt on all clips
    python3 bench/tracking_compare.py --trackers tld,kcf,csrt,medianflow \\
        --json-out tracking.json --results-dir tracking-results
    python3 bench/tracking_compare.py --clips 02_jumping --max-frames 50   # quick check

Data: `--data DIR` (default `../shared/data/tracking` beside the repository root; see
../shared/data/README.md), clips in OTB layout: `<clip>/img/00001.jpg ...` and
`<clip>/groundtruth_rect.txt` with one `x,y,w,h` row per frame, `NaN,NaN,NaN,NaN` where the target
is absent. A missing data directory is reported and the script exits with status 2.

What it does, per clip and tracker:

1. Decodes every frame of the clip with `cv2.imread` (BGR colour, as decoded; the trackers get
   colour frames) before any timing.
2. Initialises the tracker on frame 1 with the first ground-truth row (checked to be present).
   The new-API trackers (KCF, CSRT) take an integer `Rect`: a non-integer first row is rounded and
   the rounded box is used and reported; the legacy ones (TLD, MedianFlow) take it as `Rect2d`.
   Then calls `update` on frames 2..N, feeding every frame even after a failure (the tracker keeps
   its own state and may recover, as TLD does by re-detection).
3. Trackers and settings:
   * `tld`: `cv2.legacy.TrackerTLD_create()`, defaults.
   * `kcf`: `cv2.TrackerKCF_create(params)` with `params.detect_thresh = 0`: with the default
     (0.5) OpenCV's KCF reports failure, and keeps reporting it, once its correlation peak drops
     below the threshold, which it does on ordinary appearance change; 0 keeps it tracking, like
     the published KCF, which has no failure test. And after `init(frame1, box)` one extra
     `update(frame1)` on the same first frame: OpenCV's KCF does not train its filter in `init`
     but in its first `update`, which does no detection, so without it the tracker lags one frame
     (it would train on frame 2 at the frame-1 box). The extra call is timed as tracker time; its
     box is not used (frame 1 reports the init box) but is kept in the JSON.
   * `csrt`: `cv2.TrackerCSRT_create()`, defaults.
   * `medianflow`: `cv2.legacy.TrackerMedianFlow_create()`, defaults.
   `cv2.setNumThreads(1)`: we compare single-threaded; `cv2.ocl.setUseOpenCL(False)`: CPU only
   (KCF and CSRT would otherwise use an OpenCL device where one exists). IPP stays at OpenCV's
   default (on).
   Every (tracker, clip) run happens in a fresh process (multiprocessing, spawn): OpenCV's legacy
   TLD keeps random state that outlives the tracker object and that `cv2.setRNGSeed` does not
   reset (two back-to-back TLD runs of one clip in one process give different boxes), so in a
   shared process a clip's result would depend on what ran before it. In a fresh process every
   tracker here is deterministic: same numbers run to run, whatever `--clips`/`--trackers` say.
4. Result per frame: frame 1 = the init box; later frames = the box `update` returns when it
   returns ok=True, "absent" when ok=False (or, counted separately, when it raises cv2.error).
   A box is scored as returned, even an empty one: OpenCV's KCF clips its box to the image, so
   once its window has drifted off the image it returns ok=True with (0, 0, 0, 0), which scores
   as a present box (IoU 0, also on frames where the target is absent). The progress log counts
   such empty boxes.
5. Timing: `time.perf_counter` around the tracker calls only (init, KCF's extra first update, every
   update), not decoding or scoring. FPS = frames processed (init frame included) / total tracker
   time; pooled FPS = all frames / all tracker time of that tracker.
6. Scoring (bench/tracking_metrics.py): per frame IoU of the continuous rectangles
   [x, x+w) × [y, y+h) and centre error; target absent in both -> IoU 1, centre error 0; absent in
   exactly one -> IoU 0, centre error +inf. Success S(t) = share of frames with IoU > t (strict;
   IoU 1 does not count at t = 1.0, so even a perfect run scores 20/21), t = 0, 0.05, ..., 1;
   success AUC = mean of the 21 values. Precision P(d) = share of frames with centre error <= d,
   d = 0..50 px; precision@20 = P(20). "Pooled" rows score the concatenation of all frames of all
   clips (frame-weighted), not a mean of per-clip numbers.

Output: a Markdown table on stdout (per clip and pooled: frames, success AUC, precision@20, FPS,
frames reported absent), ready for BENCHMARKS.md; progress on stderr; with `--json-out FILE`
everything raw (per-frame boxes, IoU, centre error with +inf written as null, per-call times,
curves); with `--results-dir DIR` OTB-format result files `<tracker>_<clip>.txt` (x,y,w,h per
line, at most 3 decimals, `NaN,NaN,NaN,NaN` for absent).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

try:
    import cv2
    import numpy as np
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(
        f"error: {exc.name} is missing; install with: "
        "pip install opencv-contrib-python-headless==4.10.0.84 numpy"
    )

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tracking_metrics as tm  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / ".." / "shared" / "data" / "tracking"
ALL_TRACKERS = ("tld", "kcf", "csrt", "medianflow")
DEFAULT_TRACKERS = "tld,kcf,csrt"
EXIT_NO_DATA = 2


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


# --- trackers ----------------------------------------------------------------------------------


def make_tracker(name: str):
    """(tracker, uses integer Rect) for one of ALL_TRACKERS."""
    try:
        if name == "tld":
            return cv2.legacy.TrackerTLD_create(), False
        if name == "medianflow":
            return cv2.legacy.TrackerMedianFlow_create(), False
        if name == "kcf":
            params = cv2.TrackerKCF_Params()
            params.detect_thresh = 0.0
            return cv2.TrackerKCF_create(params), True
        if name == "csrt":
            return cv2.TrackerCSRT_create(), True
    except AttributeError as exc:
        sys.exit(
            f"error: this OpenCV build lacks {name} ({exc}); install the contrib build: "
            "pip install opencv-contrib-python-headless==4.10.0.84"
        )
    raise ValueError(f"unknown tracker {name!r}")


def run_tracker(name: str, frames: list, init_box: tuple) -> dict:
    tracker, int_rect = make_tracker(name)
    box0 = tuple(int(round(v)) for v in init_box) if int_rect else tuple(float(v) for v in init_box)
    boxes: list = [list(map(float, box0))]  # frame 1 reports the init box
    call_s: list = []
    errors: list = []
    extra = None

    t = time.perf_counter()
    tracker.init(frames[0], box0)
    if name == "kcf":
        ok, b = tracker.update(frames[0])  # train on frame 1 (see docstring)
        extra = {"ok": bool(ok), "box": [float(v) for v in b]}
    call_s.append(time.perf_counter() - t)

    for i in range(1, len(frames)):
        t = time.perf_counter()
        try:
            ok, b = tracker.update(frames[i])
        except cv2.error as exc:
            ok, b = False, None
            errors.append({"frame": i + 1, "error": str(exc).strip().splitlines()[-1]})
        call_s.append(time.perf_counter() - t)
        boxes.append([float(v) for v in b] if ok else None)

    total = sum(call_s)
    return {
        "init_box": list(map(float, box0)),
        "boxes": boxes,
        "call_ms": [s * 1e3 for s in call_s],
        "tracker_time_s": total,
        "fps": len(frames) / total if total > 0 else math.inf,
        "kcf_first_frame_update": extra,
        "update_errors": errors,
    }


def run_isolated(clip_dir: str, n_frames: int, name: str, init_box: tuple) -> dict:
    """Body of one fresh worker process: decode the clip, run one tracker, return its run."""
    cv2.setNumThreads(1)
    cv2.ocl.setUseOpenCL(False)
    t0 = time.perf_counter()
    frames = load_frames(Path(clip_dir), n_frames)
    decode_s = time.perf_counter() - t0
    run = run_tracker(name, frames, init_box)
    run["decode_s"] = decode_s
    run["frame_size"] = [int(frames[0].shape[1]), int(frames[0].shape[0])]
    return run


# --- data --------------------------------------------------------------------------------------


def read_groundtruth(path: Path) -> list:
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        vals = [float(v) for v in re.split(r"[,\s]+", line.strip())]
        if len(vals) != 4:
            sys.exit(f"error: {path}:{n}: expected x,y,w,h, got {line!r}")
        rows.append(None if any(math.isnan(v) for v in vals) else tuple(vals))
    return rows


def load_frames(clip_dir: Path, n_frames: int) -> list:
    frames = []
    for i in range(1, n_frames + 1):
        p = clip_dir / "img" / f"{i:05d}.jpg"
        img = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if img is None:
            raise FileNotFoundError(f"cannot read {p} (ground truth has {n_frames} rows)")
        frames.append(img)
    return frames


def list_clips(data: Path) -> list[str]:
    return sorted(
        d.name for d in data.iterdir() if d.is_dir() and (d / "groundtruth_rect.txt").is_file()
    )


# --- output ------------------------------------------------------------------------------------


def fmt_coord(v: float) -> str:
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def write_otb(path: Path, boxes: list) -> None:
    with open(path, "w") as f:
        for b in boxes:
            f.write("NaN,NaN,NaN,NaN\n" if b is None else ",".join(fmt_coord(v) for v in b) + "\n")


def json_float(v: float):
    return None if math.isinf(v) or math.isnan(v) else v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="clips in OTB layout")
    ap.add_argument(
        "--trackers",
        default=DEFAULT_TRACKERS,
        help=f"comma-separated subset of {','.join(ALL_TRACKERS)} (default {DEFAULT_TRACKERS})",
    )
    ap.add_argument("--clips", help="comma-separated clip names (default: all under --data)")
    ap.add_argument("--max-frames", type=int, help="use only the first N frames of each clip")
    ap.add_argument("--json-out", metavar="FILE", help="also write everything raw as JSON")
    ap.add_argument("--results-dir", metavar="DIR", help="write OTB result files here")
    args = ap.parse_args()

    data = args.data.resolve()
    if not data.is_dir():
        log(
            f"error: tracking data not found at {data}; it is the shared data set described in "
            "../shared/data/README.md (pass --data DIR to point elsewhere)"
        )
        sys.exit(EXIT_NO_DATA)
    trackers = list(dict.fromkeys(t.strip() for t in args.trackers.split(",") if t.strip()))
    bad = [t for t in trackers if t not in ALL_TRACKERS]
    if bad or not trackers:
        ap.error(f"unknown tracker(s) {bad}; choose from {','.join(ALL_TRACKERS)}")
    available = list_clips(data)
    clips = list(dict.fromkeys(c.strip() for c in args.clips.split(","))) if args.clips else available
    missing = [c for c in clips if c not in available]
    if missing or not clips:
        log(f"error: clip(s) {missing or '(none)'} not found in {data}; have {available}")
        sys.exit(EXIT_NO_DATA)
    if args.max_frames is not None and args.max_frames < 1:
        ap.error("--max-frames must be at least 1")
    results_dir = Path(args.results_dir) if args.results_dir else None
    if results_dir:
        results_dir.mkdir(parents=True, exist_ok=True)

    cv2.setNumThreads(1)
    cv2.ocl.setUseOpenCL(False)
    wall0 = time.perf_counter()
    runs: dict = {t: {} for t in trackers}  # tracker -> clip -> run
    clip_info: dict = {}
    spawn = multiprocessing.get_context("spawn")
    for clip in clips:
        gt = read_groundtruth(data / clip / "groundtruth_rect.txt")
        if args.max_frames is not None:
            gt = gt[: args.max_frames]
        if not gt or gt[0] is None:
            log(f"error: {clip}: no first ground-truth row (empty or NaN); cannot initialise")
            sys.exit(EXIT_NO_DATA)
        clip_info[clip] = {
            "frames": len(gt),
            "gt_absent_frames": sum(g is None for g in gt),
            "groundtruth": [None if g is None else list(g) for g in gt],
        }
        log(f"{clip}: {len(gt)} frames, {clip_info[clip]['gt_absent_frames']} absent in GT")
        for name in trackers:
            t0 = time.perf_counter()
            with spawn.Pool(1) as pool:  # a fresh process per run: see the docstring
                try:
                    run = pool.apply(run_isolated, (str(data / clip), len(gt), name, gt[0]))
                except FileNotFoundError as exc:
                    log(f"error: {exc}")
                    sys.exit(EXIT_NO_DATA)
            clip_info[clip]["width"], clip_info[clip]["height"] = run["frame_size"]
            ious, errs = tm.per_frame(gt, run["boxes"])
            run.update(tm.summarise(ious, errs))
            run["iou"] = [float(v) for v in ious]
            run["centre_error"] = [json_float(float(v)) for v in errs]
            run["absent_reported"] = sum(b is None for b in run["boxes"])
            run["wall_s"] = time.perf_counter() - t0
            run["_ious"], run["_errs"] = ious, errs
            runs[name][clip] = run
            lost = next((i + 1 for i, b in enumerate(run["boxes"]) if b is None), None)
            notes = "" if lost is None else f" (first at frame {lost})"
            empty = [i + 1 for i, b in enumerate(run["boxes"]) if b and (b[2] <= 0 or b[3] <= 0)]
            run["empty_box_frames"] = len(empty)
            if empty:
                notes += f", {len(empty)} empty boxes with ok=True (first at frame {empty[0]})"
            if run["update_errors"]:
                notes += f", {len(run['update_errors'])} update(s) raised cv2.error"
            log(
                f"  {name:<10} AUC {run['success_auc']:.3f}  P@20 {run['precision20']:.3f}  "
                f"{run['fps']:7.1f} fps  absent reported {run['absent_reported']:4d}{notes}"
                f"  [{run['wall_s']:.1f} s]"
            )
            if results_dir:
                write_otb(results_dir / f"{name}_{clip}.txt", run["boxes"])

    pooled: dict = {}
    for name in trackers:
        ious = np.concatenate([runs[name][c].pop("_ious") for c in clips])
        errs = np.concatenate([runs[name][c].pop("_errs") for c in clips])
        total_t = sum(runs[name][c]["tracker_time_s"] for c in clips)
        p = tm.summarise(ious, errs)
        p["tracker_time_s"] = total_t
        p["fps"] = len(ious) / total_t if total_t > 0 else math.inf
        p["absent_reported"] = sum(runs[name][c]["absent_reported"] for c in clips)
        pooled[name] = p

    # --- report ----------------------------------------------------------------------------
    frames_note = "" if args.max_frames is None else f", first {args.max_frames} frames per clip"
    print(
        f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; OpenCV {cv2.__version__} "
        f"(numpy {np.__version__}), 1 thread, OpenCL off{frames_note}"
    )
    print(
        "Success AUC: mean over IoU thresholds 0, 0.05, ..., 1 of the share of frames with "
        "IoU > t; precision@20: share of frames with centre error <= 20 px; target absent in "
        "both ground truth and result scores IoU 1 / error 0, in one only IoU 0 / error inf. "
        "FPS: frames / time in tracker calls (decoding excluded). Pooled: all frames of all clips."
    )
    print()
    print("| clip | frames | tracker | success AUC | precision@20 | FPS | frames reported absent |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for clip in clips:
        n = clip_info[clip]["frames"]
        na = clip_info[clip]["gt_absent_frames"]
        label = f"{clip} ({na} absent in GT)" if na else clip
        for name in trackers:
            r = runs[name][clip]
            print(
                f"| {label} | {n} | {name} | {r['success_auc']:.3f} | {r['precision20']:.3f} "
                f"| {r['fps']:.1f} | {r['absent_reported']} |"
            )
    n_all = sum(clip_info[c]["frames"] for c in clips)
    na_all = sum(clip_info[c]["gt_absent_frames"] for c in clips)
    for name in trackers:
        p = pooled[name]
        print(
            f"| **pooled** ({na_all} absent in GT) | {n_all} | {name} | {p['success_auc']:.3f} "
            f"| {p['precision20']:.3f} | {p['fps']:.1f} | {p['absent_reported']} |"
        )

    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(
                {
                    "cpu": cpu_model(),
                    "logical_cores": os.cpu_count(),
                    "opencv": cv2.__version__,
                    "numpy": np.__version__,
                    "python": platform.python_version(),
                    "threads": 1,
                    "opencl": bool(cv2.ocl.useOpenCL()),
                    "isolation": "one fresh process (spawn) per tracker and clip",
                    "data": str(data),
                    "max_frames": args.max_frames,
                    "trackers": trackers,
                    "settings": {
                        "kcf": "detect_thresh=0; one extra update on frame 1 after init",
                        "tld": "legacy defaults",
                        "csrt": "defaults",
                        "medianflow": "legacy defaults",
                    },
                    "protocol": {
                        "success_thresholds": [float(v) for v in tm.SUCCESS_THRESHOLDS],
                        "success_rule": "IoU > t (strict)",
                        "precision_thresholds_px": [float(v) for v in tm.PRECISION_THRESHOLDS],
                        "precision_rule": "centre error <= d",
                        "absent": "both absent: IoU 1, error 0; one absent: IoU 0, error inf",
                        "centre_error_null_means": "+inf",
                        "boxes_null_means": "tracker reported absent (ok=False)",
                    },
                    "clips": clip_info,
                    "runs": runs,
                    "pooled": pooled,
                    "wall_s": time.perf_counter() - wall0,
                },
                f,
                indent=1,
                allow_nan=False,
            )
        log(f"wrote {args.json_out}")
    log(f"total wall time {time.perf_counter() - wall0:.1f} s")


if __name__ == "__main__":
    main()
