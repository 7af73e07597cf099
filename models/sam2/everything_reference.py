#!/usr/bin/env python3
"""Reference outputs of SAM2's official automatic mask generator for segrt's segment-everything.

Runs `sam2.automatic_mask_generator.SAM2AutomaticMaskGenerator` (PyPI sam2 1.1.0, pinned in
export_sam2.py) with the same random-weight tiny real-architecture model the SAM2 fixtures were
exported from (`export_sam2.build_model()`: torch.manual_seed(0), the tiny hydra overrides, the
conditioned output layers) on the two reference images, and writes
`models/sam2/reference/everything.json`: the settings, and for each image every record the
generator returns (box XYWH, area, predicted IoU, stability score, prompt point) with its mask as
the generator's own mask (its `uncompressed_rle` output decoded), stacked one below the other in
`everything_<image>_masks.png` (1-bit PNG, record order).

Random weights do not behave like a trained model under the default quality filters (0.8 / 0.95
keep almost nothing), so the thresholds are lowered to values that keep at least 10 objects per
image; they are recorded in the JSON and the Rust test (tests/sam2_everything.rs) uses them.
The tiny model's masks are scattered over the whole picture, so every box is (nearly) the whole
image and any box NMS threshold below 1 keeps a single object: NMS is off here (1.0); the geometric
oracle test proves segrt's NMS, and predicted IoU 0.2 / stability 0.05 keep 210 and 24 objects.

Run from the repository root:
    .venv-torch/bin/python models/sam2/everything_reference.py
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_sam2  # noqa: E402

SETTINGS = dict(
    points_per_side=16,
    points_per_batch=64,
    pred_iou_thresh=0.2,
    stability_score_thresh=0.05,
    stability_score_offset=1.0,
    mask_threshold=0.0,
    box_nms_thresh=1.0,
    min_mask_region_area=0,
    crop_n_layers=0,
)
IMAGES = ["img0.png", "img1.png"]


def main():
    warnings.filterwarnings("ignore")
    from sam2.automatic_mask_generator import SAM2AutomaticMaskGenerator
    from sam2.utils.amg import rle_to_mask

    settings = dict(SETTINGS)
    for a in sys.argv[1:]:  # key=value overrides, for choosing the settings
        k, v = a.split("=")
        settings[k] = type(SETTINGS[k])(v)
    model = export_sam2.build_model()
    S = model.image_size
    gen = SAM2AutomaticMaskGenerator(model, output_mode="uncompressed_rle", **settings)
    # SAM2ImagePredictor hard-codes the 1024-input feature sizes
    gen.predictor._bb_feat_sizes = [(S // 4, S // 4), (S // 8, S // 8), (S // 16, S // 16)]
    out = dict(
        format_version=1,
        description="SAM2AutomaticMaskGenerator on the tiny random-weight SAM2 (see everything_reference.py)",
        sam2_version=export_sam2.SAM2_VERSION, torch=torch.__version__, seed=export_sam2.SEED,
        encoder="sam2_tiny_sam2onnx_encoder.onnx", decoder="sam2_tiny_sam2onnx_decoder.onnx",
        settings=settings, images=[],
    )
    for name in IMAGES:
        rgb = np.asarray(Image.open(os.path.join(HERE, "reference", name)).convert("RGB"))
        with torch.no_grad():
            anns = gen.generate(rgb)
        recs, masks = [], []
        for a in anns:
            recs.append(dict(
                bbox_xywh=[int(v) for v in a["bbox"]], area=int(a["area"]),
                predicted_iou=a["predicted_iou"], stability_score=a["stability_score"],
                point=[float(v) for v in a["point_coords"][0]],
            ))
            masks.append(rle_to_mask(a["segmentation"]))
        stem = os.path.splitext(name)[0]
        masks_png = f"everything_{stem}_masks.png"
        if masks:
            # the masks one below the other (record order), 1 bit per pixel
            Image.fromarray(np.concatenate(masks, 0)).convert("1").save(
                os.path.join(HERE, "reference", masks_png), optimize=True)
        out["images"].append(dict(file=name, width=rgb.shape[1], height=rgb.shape[0], masks_png=masks_png,
                                  objects=recs))
        areas = sorted(r["area"] for r in recs)
        print(f"{name}: {len(recs)} objects, areas {areas[:3]}..{areas[-3:]}, "
              f"iou {min((r['predicted_iou'] for r in recs), default=0):.3f}..{max((r['predicted_iou'] for r in recs), default=0):.3f}")
    path = os.path.join(HERE, "reference", "everything.json")
    if "--dry" not in os.environ.get("EVR", ""):
        with open(path, "w") as f:
            json.dump(out, f, separators=(",", ":"))
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
