#!/usr/bin/env python3
"""Reference outputs of the OFFICIAL SAM2 video predictor for the memory approach of reference-based
segmentation ("teach once, find it in every image" on a video model):

    .venv-torch/bin/python models/sam2/memory_reference.py      # -> models/sam2/video/reference/memory/

Model: export_sam2_video.build_video_model() (the tiny random-weight model the ONNX files in
models/sam2/video/ are exported from), as video_reference.py. Frames: video_reference.py's committed
frames (reference/frames/NNNNN.png, checked against make_frames()).

Each case is a short video run through the predictor's public API, as the memory approach runs it:
  frames 0..k-1  the reference images, each given the object's mask with add_new_mask (its drawn shape:
                 a caller's mask, not one the model produced) -> initial conditioning frames;
  frame k        the new image;
  propagate_in_video() forward from frame 0: frame k is tracked against the conditioning frames' memory
                 only (nothing before it but them), which is what a find computes.
Recorded per case: frame k's low-res logits (1 x L x L), object-score logit and video-resolution mask
(frame k's mask, > 0), and each reference frame's conditioning output (low-res logits of the mask as
output, object score) from add_new_mask. Masks are 0/255 PNGs, the reference masks included.
The frames are PNG bytes copied under .jpg names (the predictor lists *.jpg only and decodes by content),
as video_reference.py does.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_sam2_video as xv  # noqa: E402
import video_reference as vr  # noqa: E402

FRAMES = os.path.join(HERE, "video", "reference")
OUT = os.path.join(FRAMES, "memory")

# (name, object, reference frames, new frame). Object 1 = the ellipse, 2 = the square.
CASES = [
    ("ellipse_0_to_3", 1, [0], 3),
    ("ellipse_0_to_7", 1, [0], 7),
    ("ellipse_0_to_9_hidden", 1, [0], vr.HIDDEN_FRAME),
    ("ellipse_0_to_12", 1, [0], 12),
    ("square_0_to_4", 2, [0], 4),
    ("square_0_to_10", 2, [0], 10),
    ("square_0_to_13", 2, [0], 13),
    ("ellipse_0_2_to_6", 1, [0, 2], 6),
    ("square_0_5_to_11", 2, [0, 5], 11),
]


def object_mask(obj, t):
    """The shape make_frames() draws for object `obj` on frame t (a caller's mask)."""
    yy, xx = np.mgrid[0:vr.H, 0:vr.W].astype(np.float64)
    if obj == 1:
        cx, cy, ax, ay = vr.obj1_params(t)
        return ((xx - cx) / ax) ** 2 + ((yy - cy) / ay) ** 2 <= 1.0
    cx, cy, s = vr.obj2_params(t)
    return (np.abs(xx - cx) <= s) & (np.abs(yy - cy) <= s)


def main():
    vr.quiet()
    frames = vr.make_frames()
    for t, f in enumerate(frames):
        png = os.path.join(FRAMES, "frames", f"{t:05d}.png")
        assert np.array_equal(np.array(Image.open(png).convert("RGB")), f), f"{png} is not make_frames()'s"
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    w = vr.Writer(OUT)
    pred = xv.build_video_model()
    index = {
        "format_version": 1,
        "generator": "models/sam2/memory_reference.py",
        "predictor": "sam2.sam2_video_predictor.SAM2VideoPredictor (PyPI sam2 1.1.0), tiny random weights, "
                     "models/sam2/video/*.onnx exported from the same model",
        "paths": "relative to this file's folder",
        "video_width": vr.W, "video_height": vr.H, "image_size": pred.image_size,
        "cases": [],
    }
    for name, obj, refs, new in CASES:
        order = refs + [new]
        tmp = tempfile.mkdtemp(prefix="sam2memory")
        try:
            for i, t in enumerate(order):
                shutil.copyfile(os.path.join(FRAMES, "frames", f"{t:05d}.png"), os.path.join(tmp, f"{i:05d}.jpg"))
            with torch.inference_mode():
                state = pred.init_state(video_path=tmp)
        finally:
            shutil.rmtree(tmp)
        case = {"name": name, "object": obj, "references": [], "new_frame": f"../frames/{new:05d}.png"}
        for i, t in enumerate(refs):
            m = object_mask(obj, t)
            with torch.inference_mode():
                pred.add_new_mask(state, frame_idx=i, obj_id=1, mask=m)
            _, out = vr.obj_out(state, 0, i, temp=True)
            case["references"].append({
                "frame": f"../frames/{t:05d}.png",
                "mask": w.png(f"{name}_ref{i}_mask.png", m),
                "mask_area": int(m.sum()),
                "low_res_logits": w.bin(f"{name}_ref{i}_lowres.bin", out["pred_masks"].float().numpy()),
                "object_score_logit": float(out["object_score_logits"].reshape(-1)[0]),
            })
        k = len(refs)
        with torch.inference_mode():
            for fidx, _, video_res in pred.propagate_in_video(state):
                if fidx != k:
                    continue
                _, out = vr.obj_out(state, 0, fidx)
                mask = (video_res > 0).numpy()[0, 0]
                score = float(out["object_score_logits"].reshape(-1)[0])
                case.update({
                    "storage": vr.obj_out(state, 0, fidx)[0],
                    "low_res_logits": w.bin(f"{name}_lowres.bin", out["pred_masks"].float().numpy()[0]),
                    "object_score_logit": score, "object_present": score > 0,
                    "mask": w.png(f"{name}_mask.png", mask), "mask_area": int(mask.sum()),
                    "truth_area": int(object_mask(obj, new).sum()) if not (obj == 1 and new == vr.HIDDEN_FRAME) else 0,
                })
        index["cases"].append(case)
        print(f"{name:24s} refs {refs} new {new:2d}: score {case['object_score_logit']:+8.3f} "
              f"area {case['mask_area']:5d} (drawn {case['truth_area']:5d}) ref scores "
              f"{[r['object_score_logit'] for r in case['references']]}")
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, x)) for x in os.listdir(OUT))
    print(f"memory reference: {len(os.listdir(OUT))} files, {total} B")


if __name__ == "__main__":
    main()
