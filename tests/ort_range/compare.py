#!/usr/bin/env python3
"""Mask IoU of every mask PNG two tests/ort_range/run.sh folders share (0/255 masks; 16-bit label
images of segment-everything compared as foreground), the lowest first; exit 1 when a file is missing
on one side or an IoU is below --min (default 0.99).

    tests/ort_range/compare.py OUT_A OUT_B [--min 0.99]
"""
import argparse
import pathlib
import sys

import numpy as np
from PIL import Image


def iou(a, b):
    a, b = a > 0, b > 0
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    ap.add_argument("--min", type=float, default=0.99)
    args = ap.parse_args()
    masks = lambda d: {p.relative_to(d) for p in d.rglob("*.png") if "overlay" not in p.name}
    left, right = masks(args.a), masks(args.b)
    rows = []
    for name in sorted(left & right):
        x, y = np.array(Image.open(args.a / name)), np.array(Image.open(args.b / name))
        rows.append((iou(x, y) if x.shape == y.shape else 0.0, str(name)))
    for value, name in sorted(rows):
        print(f"  IoU {value:.4f}  {name}")
    only = sorted(str(n) for n in left ^ right)
    if only:
        print("  only on one side: " + ", ".join(only))
    worst = min((v for v, _ in rows), default=0.0)
    print(f"{len(rows)} masks compared, lowest IoU {worst:.4f}")
    return 0 if rows and not only and worst >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
