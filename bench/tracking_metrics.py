#!/usr/bin/env python3
"""OTB-style tracking metrics (success AUC, precision@20) with explicit rules for absent targets.

Pure numpy; imported by `bench/tracking_compare.py`, and reusable by anyone who wants to check
the Rust side's numbers. `python3 bench/tracking_metrics.py` runs a self-test of hand-computed
cases and exits non-zero on failure.

Boxes are (x, y, w, h) in pixels, top-left corner, floats allowed. A box is "absent" when it is
None or has any NaN coordinate (ground truth `NaN,NaN,NaN,NaN`; a tracker whose `update`
returned ok=False).

Per frame, with ground truth g and result r:

* IoU: both present -> |g ∩ r| / |g ∪ r| of the real rectangles [x, x+w) × [y, y+h) (continuous,
  no "+1 pixel" convention; a box with w <= 0 or h <= 0 has area 0, and a union of area 0 gives
  IoU 0); both absent -> 1; exactly one absent -> 0.
* Centre error: both present -> Euclidean distance of the centres (x + w/2, y + h/2); both
  absent -> 0; exactly one absent -> +inf.

Curves over a sequence of frames (all arithmetic in float64):

* Success S(t) = share of frames with IoU > t (strict), t = i/20 for i = 0..20 (21 thresholds,
  computed as i / 20.0). Strict ">" everywhere: a frame with IoU exactly 1 (identical boxes, or
  the both-absent rule) does NOT count at t = 1.0, so a perfect tracker scores AUC 20/21.
* Success AUC = arithmetic mean of the 21 values of S.
* Precision P(d) = share of frames with centre error <= d, d = 0, 1, ..., 50 px;
  precision20 = P(20).
* Pooled over clips: concatenate the per-frame IoU and centre-error arrays of all clips and apply
  the same formulas (frame-weighted, not a mean of per-clip numbers).
"""

from __future__ import annotations

import math
import sys

import numpy as np

SUCCESS_THRESHOLDS = np.arange(21, dtype=np.float64) / 20.0  # 0, 0.05, ..., 1.0
PRECISION_THRESHOLDS = np.arange(51, dtype=np.float64)  # 0..50 px
PRECISION_AT = 20


def is_absent(box) -> bool:
    return box is None or any(math.isnan(float(v)) for v in box)


def iou(g, r) -> float:
    """IoU of one frame under the absent-target rules above."""
    ga, ra = is_absent(g), is_absent(r)
    if ga and ra:
        return 1.0
    if ga or ra:
        return 0.0
    gx, gy, gw, gh = (float(v) for v in g)
    rx, ry, rw, rh = (float(v) for v in r)
    iw = max(0.0, min(gx + gw, rx + rw) - max(gx, rx))
    ih = max(0.0, min(gy + gh, ry + rh) - max(gy, ry))
    inter = iw * ih
    union = max(gw, 0.0) * max(gh, 0.0) + max(rw, 0.0) * max(rh, 0.0) - inter
    return inter / union if union > 0.0 else 0.0


def centre_error(g, r) -> float:
    """Centre error of one frame (px) under the absent-target rules above."""
    ga, ra = is_absent(g), is_absent(r)
    if ga and ra:
        return 0.0
    if ga or ra:
        return math.inf
    gx, gy, gw, gh = (float(v) for v in g)
    rx, ry, rw, rh = (float(v) for v in r)
    return math.hypot((gx + gw / 2.0) - (rx + rw / 2.0), (gy + gh / 2.0) - (ry + rh / 2.0))


def per_frame(gt, res) -> tuple[np.ndarray, np.ndarray]:
    """(IoU, centre error) arrays for equally long sequences of ground-truth and result boxes."""
    if len(gt) != len(res):
        raise ValueError(f"{len(gt)} ground-truth boxes but {len(res)} results")
    ious = np.array([iou(g, r) for g, r in zip(gt, res)], dtype=np.float64)
    errs = np.array([centre_error(g, r) for g, r in zip(gt, res)], dtype=np.float64)
    return ious, errs


def success_curve(ious) -> np.ndarray:
    ious = np.asarray(ious, dtype=np.float64)
    if ious.size == 0:
        return np.full(SUCCESS_THRESHOLDS.shape, np.nan)
    return (ious[None, :] > SUCCESS_THRESHOLDS[:, None]).mean(axis=1)


def precision_curve(errs) -> np.ndarray:
    errs = np.asarray(errs, dtype=np.float64)
    if errs.size == 0:
        return np.full(PRECISION_THRESHOLDS.shape, np.nan)
    return (errs[None, :] <= PRECISION_THRESHOLDS[:, None]).mean(axis=1)


def summarise(ious, errs) -> dict:
    """Curves and the two headline numbers of one frame sequence (one clip, or pooled)."""
    s = success_curve(ious)
    p = precision_curve(errs)
    return {
        "frames": int(np.asarray(ious).size),
        "success_auc": float(s.mean()),
        "precision20": float(p[PRECISION_AT]),
        "success_curve": [float(v) for v in s],
        "precision_curve": [float(v) for v in p],
    }


# --- self-test ---------------------------------------------------------------------------------


def _self_test() -> int:
    nan = (math.nan,) * 4
    failures = []

    def check(name, got, want, tol=1e-12):
        ok = (math.isinf(want) and got == want) or abs(got - want) <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {name}: got {got!r}, want {want!r}")
        if not ok:
            failures.append(name)

    box = (10.0, 20.0, 30.0, 40.0)
    # Identical boxes: IoU 1, counts for t = 0..0.95 (20 of 21 thresholds), not for t = 1.
    check("identical IoU", iou(box, box), 1.0)
    check("identical AUC", summarise([1.0], [0.0])["success_auc"], 20 / 21)
    # Half overlap: (0,0,10,10) vs (0,0,10,20): inter 100, union 200 -> IoU 0.5, which counts
    # for t = 0, 0.05, ..., 0.45 (10 thresholds; 0.5 > 0.5 is false).
    h = iou((0, 0, 10, 10), (0, 0, 10, 20))
    check("half-overlap IoU", h, 0.5)
    check("half-overlap AUC", summarise([h], [0.0])["success_auc"], 10 / 21)
    # Shifted by half the width: (0,0,10,10) vs (5,0,10,10): inter 50, union 150 -> 1/3,
    # counts for t = 0..0.30 (7 thresholds).
    t = iou((0, 0, 10, 10), (5, 0, 10, 10))
    check("half-shift IoU", t, 1 / 3)
    check("half-shift AUC", summarise([t], [5.0])["success_auc"], 7 / 21)
    # Touching edges: zero intersection, IoU 0, counts for no threshold (0 > 0 is false).
    check("touching IoU", iou((0, 0, 10, 10), (10, 0, 10, 10)), 0.0)
    check("touching AUC", summarise([0.0], [10.0])["success_auc"], 0.0)
    # Absent / absent: IoU 1, centre error 0.
    check("absent/absent IoU", iou(nan, None), 1.0)
    check("absent/absent centre error", centre_error(None, nan), 0.0)
    # Absent / present (either way round): IoU 0, centre error +inf, fails every precision d.
    check("absent/present IoU", iou(nan, box), 0.0)
    check("present/absent IoU", iou(box, None), 0.0)
    check("absent/present centre error", centre_error(nan, box), math.inf)
    check("present/absent precision20", summarise([0.0], [math.inf])["precision20"], 0.0)
    # Known centre error: centres (5, 5) and (8, 9) -> 3-4-5 triangle.
    e = centre_error((0, 0, 10, 10), (2, 3, 12, 12))
    check("centre error 3-4-5", e, 5.0)
    # Precision boundary: error exactly 20 counts (<=), 20.5 does not.
    check("precision20 at 20", summarise([1.0], [20.0])["precision20"], 1.0)
    check("precision20 at 20.5", summarise([1.0], [20.5])["precision20"], 0.0)
    # A sequence: [identical, half, absent/absent, absent/present] ->
    # S(t) counts 3 frames for t < 0.5, 2 for 0.5 <= t < 1, 0 at t = 1:
    # AUC = (10*3 + 10*2 + 0) / (4 * 21) = 50/84.
    gt = [box, (0, 0, 10, 10), None, None]
    res = [box, (0, 0, 10, 20), nan, box]
    ious, errs = per_frame(gt, res)
    s = summarise(ious, errs)
    check("sequence AUC", s["success_auc"], 50 / 84)
    # Centre errors: 0, 5 (centres (5,5) vs (5,10)), 0, inf -> P(20) = 3/4, P(0) = 2/4.
    check("sequence precision20", s["precision20"], 0.75)
    check("sequence precision(0)", s["precision_curve"][0], 0.5)
    # Pooling is frame-weighted: clip A = 1 frame IoU 1, clip B = 3 frames IoU 0 ->
    # pooled AUC = (20/21) / 4, not the mean of the per-clip AUCs.
    check("pooled AUC", summarise([1.0, 0.0, 0.0, 0.0], [0.0] * 4)["success_auc"], 20 / 21 / 4)
    # Degenerate result box (w = 0): area 0, IoU 0 even inside the ground truth.
    check("zero-width IoU", iou((0, 0, 10, 10), (5, 5, 0, 3)), 0.0)

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_self_test())
