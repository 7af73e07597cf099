#!/usr/bin/env python3
"""segrt's outlines and region figures against OpenCV on the same mask, in the same run (figures, not
assertions).

Makes a 4096x4096 mask of 1000 objects (discs, rings with holes, rotated ellipses, some cut by the
image border; seeded), then times
  - segrt (examples/bench_outlines, release build, one thread): regions with pixel-exact outlines and
    every figure (area, box, centroid, moments to third order, orientation, perimeter, holes, hull,
    rotated box), the same with outlines simplified at 1 px, figures only, COCO RLE;
  - OpenCV (one thread): findContours(RETR_CCOMP, CHAIN_APPROX_NONE) alone, and findContours plus
    the same figures per outer contour (moments, arcLength, convexHull, minAreaRect, boundingRect)
    plus connectedComponentsWithStats for pixel areas and centroids; approxPolyDP at 1 px;
  - pycocotools' mask.encode of the mask.
Prints one line per figure and the ratios segrt / OpenCV.

  .venv/bin/python benches/outlines_cv2.py [--size 4096] [--objects 1000] [--runs 7] [--bench PATH]

--bench defaults to target/release/examples/bench_outlines (built with
`cargo build --release --example bench_outlines` when missing).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np


def make_mask(size, objects, seed=7):
    rng = np.random.default_rng(seed)
    m = np.zeros((size, size), np.uint8)
    for i in range(objects):
        cx, cy = (int(v) for v in rng.integers(-20, size + 20, 2))
        a, b = (int(v) for v in rng.integers(4, 48, 2))
        angle = float(rng.uniform(0, 180))
        cv2.ellipse(m, (cx, cy), (a, b), angle, 0, 360, 255, -1)
        if i % 3 == 0 and min(a, b) > 8:
            cv2.ellipse(m, (cx, cy), (a // 2, b // 2), angle, 0, 360, 0, -1)
            if i % 2 == 0:
                cv2.circle(m, (cx, cy), 2, 255, -1)
    return m


def median_min(f, runs):
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t) * 1e3)
    ms.sort()
    return ms[len(ms) // 2], ms[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--objects", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bench", default="target/release/examples/bench_outlines")
    a = ap.parse_args()
    if not os.path.exists(a.bench):
        subprocess.run(["cargo", "build", "--release", "--example", "bench_outlines"], check=True)
    cv2.setNumThreads(1)
    m = make_mask(a.size, a.objects)

    def cv_contours():
        return cv2.findContours(m, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)

    def cv_full():
        contours, hierarchy = cv2.findContours(m, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        for c, h in zip(contours, hierarchy[0]):
            if h[3] < 0:  # outer outlines
                cv2.moments(c)
                cv2.arcLength(c, True)
                cv2.minAreaRect(cv2.convexHull(c))
                cv2.boundingRect(c)

    def cv_simplified():
        contours, _ = cv2.findContours(m, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        for c in contours:
            cv2.approxPolyDP(c, 1.0, True)

    from pycocotools import mask as cocomask
    fm = np.asfortranarray(m)
    cv_jobs = {
        "contours": cv_contours,
        "full": cv_full,
        "simplified": cv_simplified,
        "cc": lambda: cv2.connectedComponentsWithStats(m, connectivity=8),
        "coco": lambda: cocomask.encode(fm),
    }
    # Rounds alternate segrt (3 runs in its process, the fastest kept) and OpenCV (the fastest of
    # 3): on a shared machine each round's pair sees the same load; the medians over rounds count.
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "mask.raw")
        m.tofile(raw)
        for _ in range(a.runs):
            out = subprocess.run([a.bench, raw, str(a.size), str(a.size), "3"], check=True, capture_output=True, text=True)
            seg = json.loads(out.stdout)
            cv = {k: median_min(f, 3)[1] for k, f in cv_jobs.items()}
            rounds.append((seg, cv))

    def med(values):
        values = sorted(values)
        return values[len(values) // 2]

    seg = rounds[-1][0]
    sm = {k: med([r[0][k + "_min_ms"] for r in rounds]) for k in ("regions", "simplified", "figures_only", "rle")}
    cm = {k: med([r[1][k] for r in rounds]) for k in cv_jobs}
    ratio = {k: med([r[0][s + "_min_ms"] / r[1][k] for r in rounds]) for k, s in
             (("contours", "regions"), ("full", "regions"), ("simplified", "simplified"), ("coco", "rle"))}
    contours, hierarchy = cv_contours()
    outer = int((hierarchy[0][:, 3] < 0).sum())
    print(f"mask {a.size}x{a.size}, {a.objects} objects drawn: segrt {seg['regions']} regions, {seg['holes']} holes, "
          f"{seg['outline_points']} outline points; OpenCV {outer} outer contours, {len(contours) - outer} holes; "
          f"{a.runs} rounds, medians of each round's fastest of 3")
    print(f"segrt regions (outlines + every figure): {sm['regions']:.1f} ms")
    print(f"OpenCV findContours alone:               {cm['contours']:.1f} ms")
    print(f"OpenCV findContours + the same figures:  {cm['full']:.1f} ms (connectedComponentsWithStats, for pixel "
          f"areas and centroids, {cm['cc']:.1f} ms more)")
    print(f"segrt simplified at 1 px: {sm['simplified']:.1f} ms; OpenCV findContours + approxPolyDP: {cm['simplified']:.1f} ms")
    print(f"segrt figures only (no outlines): {sm['figures_only']:.1f} ms")
    print(f"segrt COCO RLE: {sm['rle']:.1f} ms; pycocotools mask.encode: {cm['coco']:.1f} ms")
    print(f"ratio segrt / OpenCV (median of the rounds' ratios): {ratio['contours']:.2f} against findContours alone "
          f"(goal <= 1.5), {ratio['full']:.2f} against findContours + figures, {ratio['simplified']:.2f} simplified; "
          f"RLE / pycocotools {ratio['coco']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
