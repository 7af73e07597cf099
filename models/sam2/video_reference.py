#!/usr/bin/env python3
"""Reference outputs of the OFFICIAL SAM2 video predictor on a synthetic sequence.

    .venv-torch/bin/python models/sam2/video_reference.py      # -> models/sam2/video/reference/ (+ box/)
    .venv-torch/bin/python models/sam2/video_reference.py --scenario box   # only reference/box/

Model: export_sam2_video.build_video_model() = sam2's build_sam2_video_predictor on export_sam2.py's
tiny random-weight config (+ num_maskmem 7, mem_dim 8), seed 0, export_sam2's weight conditioning,
fill_hole_area 0 (the hole filling needs sam2's CUDA extension; without it sam2 only warns and skips it).
The ONNX files in models/sam2/video/ are exported from this same model.

Sequence: N_FRAMES frames of W x H RGB (flat background gradient + texture): object 1 = an ellipse moving
right and changing its shape (aspect ratio / size), ABSENT on frame HIDDEN_FRAME; object 2 = a square
moving down-left. Frames are committed as lossless PNG (frames/NNNNN.png). The predictor only lists
*.jpg files but decodes them with PIL by content, so the PNG bytes are copied to NNNNN.jpg in a temp
folder: the decoded pixels are exactly the PNG's (no JPEG loss), and its own loader
(sam2.utils.misc.load_video_frames: PIL resize to S x S, /255, ImageNet mean/std) does the preprocessing.
frames_256/NNNNN.png are those PIL-resized S x S frames (uint8, before /255), for runtimes that want to
check their resize separately.

Interaction (what the file records, in this order; all through the predictor's public API):
  event 0  add_new_points_or_box(frame 0, obj 1, one positive click)          (init conditioning frame)
  event 1  add_new_points_or_box(frame 0, obj 2, one positive click)          (init conditioning frame)
  event 2  add_new_points_or_box(frame CORR_FRAME, obj 1, positive + negative) (2nd conditioning frame of
           obj 1, before any propagation; 2 points -> single-mask output with dynamic stability fallback)
  propagate_in_video() from frame 0 to the end: per frame and object the stored low-res logits
           (pred_masks, 1 x 64 x 64), object_score_logits, and the video-resolution masks it yields
  event 3  add_new_points_or_box(frame FIX_FRAME, obj 2, one positive click) AFTER propagation: a correction on
           a tracked frame (not an init conditioning frame: memory-conditioned features + the previous
           logits as mask input)

Outputs (models/sam2/video/reference/): index.json (everything but arrays), *.bin raw little-endian
float32 C order (shapes in index.json), masks as 0/255 PNGs at video resolution.

Second scenario, box prompts (models/sam2/video/reference/box/, same model, same frames: its
index.json names them relative to box/, i.e. ../frames/NNNNN.png; the first BOX_N_FRAMES frames only, so
the video is shorter than max_obj_ptrs_in_encoder and the object-pointer distances are scaled by
BOX_N_FRAMES - 1):
  event 0  add_new_points_or_box(frame 0, obj 1, box + positive + negative click) (4 prompt points)
  event 1  add_new_points_or_box(frame 0, obj 2, box only)                   (2 prompt points: labels 2, 3)
  propagate_in_video() from frame 0 to the end (the ellipse is not drawn on HIDDEN_FRAME, the last frame)
  event 2  add_new_points_or_box(frame BOX_FIX_FRAME_1, obj 1, box only)     (correction on a tracked frame:
           a box is allowed there because clear_old_points=True, the default, replaces earlier prompts)
  event 3  add_new_points_or_box(frame BOX_FIX_FRAME_2, obj 2, box + positive click) (correction)
The predictor puts the box first, as two points labelled 2 (top-left) and 3 (bottom-right), then the clicks.
"""
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_sam2_video as xv  # noqa: E402

OUT = os.path.join(HERE, "video", "reference")
W, H = 320, 240
N_FRAMES = 14
HIDDEN_FRAME = 9
CORR_FRAME = 5
FIX_FRAME = 11
BOX_OUT = os.path.join(OUT, "box")
BOX_N_FRAMES = 10
BOX_FIX_FRAME_1 = 6
BOX_FIX_FRAME_2 = 8


def obj1_params(t):
    """centre, semi-axes of the ellipse on frame t (moving right, breathing / turning flatter)."""
    cx = 60 + 13 * t
    cy = 100 + 12 * np.sin(t / 3.0)
    ax = 28 + 10 * np.sin(t / 2.0)
    ay = 22 - 7 * np.sin(t / 2.5)
    return cx, cy, ax, ay


def obj2_params(t):
    return 250 - 6 * t, 50 + 9 * t, 22 + t  # centre x, y, half side


def make_frames():
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    rng = np.random.RandomState(7)
    # coarse 8x8-pixel texture (fine noise would make the committed PNGs ~10x larger)
    texture = np.kron(rng.randint(-8, 9, size=(H // 8, W // 8, 1)), np.ones((8, 8, 1)))
    frames = []
    for t in range(N_FRAMES):
        img = np.zeros((H, W, 3), np.float64)
        img[..., 0] = 70 + 60 * xx / W
        img[..., 1] = 90 + 40 * yy / H
        img[..., 2] = 120 - 30 * xx / W
        img += texture
        if t != HIDDEN_FRAME:
            cx, cy, ax, ay = obj1_params(t)
            m1 = ((xx - cx) / ax) ** 2 + ((yy - cy) / ay) ** 2 <= 1.0
            img[m1] = (225, 60, 40)
        cx, cy, s = obj2_params(t)
        m2 = (np.abs(xx - cx) <= s) & (np.abs(yy - cy) <= s)
        img[m2] = (30, 70, 220)
        frames.append(np.clip(np.round(img), 0, 255).astype(np.uint8))
    return frames


class Writer:
    def __init__(self, d):
        self.d = d
        os.makedirs(d, exist_ok=True)

    def bin(self, name, arr):
        arr = np.ascontiguousarray(arr, dtype="<f4")
        with open(os.path.join(self.d, name), "wb") as f:
            f.write(arr.tobytes())
        return {"file": name, "shape": list(arr.shape), "dtype": "float32"}

    def png(self, name, mask_bool):
        Image.fromarray(mask_bool.astype(np.uint8) * 255).save(os.path.join(self.d, name), optimize=True)
        return name


def obj_out(state, obj_idx, frame, temp=False):
    d = state["temp_output_dict_per_obj" if temp else "output_dict_per_obj"][obj_idx]
    for key in ("cond_frame_outputs", "non_cond_frame_outputs"):
        if frame in d[key]:
            return key, d[key][frame]
    return None, None


def quiet():
    warnings.filterwarnings("ignore")
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    torch.set_num_threads(2)


def record_propagation(pred, state, w, index):
    """propagate_in_video (forward) from the prompts so far: every frame's masks, low-res logits and
    object scores, written by `w` and listed in index["propagation"]."""
    with torch.inference_mode():
        for fidx, obj_ids, video_res in pred.propagate_in_video(state):
            masks = (video_res > 0).numpy()[:, 0]
            rec = {"frame": fidx, "objects": []}
            lows = []
            for k, oid in enumerate(obj_ids):
                key, out = obj_out(state, k, fidx)
                low = out["pred_masks"].float().numpy()
                lows.append(low[0])
                score = float(out["object_score_logits"].reshape(-1)[0])
                rec["objects"].append({
                    "obj_id": oid, "storage": key, "object_score_logit": score, "object_present": score > 0,
                    "mask": w.png(f"frame{fidx:02d}_obj{oid}_mask.png", masks[k]),
                    "mask_area": int(masks[k].sum()), "max_abs_logit": float(np.abs(low).max()),
                })
            rec["low_res_logits"] = w.bin(f"frame{fidx:02d}_lowres.bin", np.stack(lows))  # [num_obj,1,L,L]
            index["propagation"].append(rec)
            print(f"frame {fidx:2d}: " + "  ".join(
                f"obj{o['obj_id']} {o['storage'][:4]} score {o['object_score_logit']:+7.3f} area {o['mask_area']:5d}"
                for o in rec["objects"]))


def clicks_scenario():
    quiet()
    if os.path.isdir(OUT):  # everything but the box scenario's folder
        for name in os.listdir(OUT):
            if name != os.path.basename(BOX_OUT):
                p = os.path.join(OUT, name)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    w = Writer(OUT)
    os.makedirs(os.path.join(OUT, "frames"))
    os.makedirs(os.path.join(OUT, "frames_256"))
    frames = make_frames()
    pred = xv.build_video_model()
    S = pred.image_size
    tmp = tempfile.mkdtemp(prefix="sam2video")
    try:
        for t, f in enumerate(frames):
            png = os.path.join(OUT, "frames", f"{t:05d}.png")
            Image.fromarray(f).save(png, optimize=True)
            shutil.copyfile(png, os.path.join(tmp, f"{t:05d}.jpg"))  # PNG bytes, .jpg name (see above)
            Image.fromarray(f).resize((S, S)).save(os.path.join(OUT, "frames_256", f"{t:05d}.png"), optimize=True)
        with torch.inference_mode():
            state = pred.init_state(video_path=tmp)
    finally:
        shutil.rmtree(tmp)

    index = {
        "format_version": 1,
        "generator": "models/sam2/video_reference.py",
        "predictor": "sam2.sam2_video_predictor.SAM2VideoPredictor (PyPI sam2 1.1.0), tiny random weights, "
                     "models/sam2/video/*.onnx exported from the same model",
        "video_width": W, "video_height": H, "num_frames": N_FRAMES, "image_size": S,
        "hidden_frame_obj1": HIDDEN_FRAME,
        "frames": [f"frames/{t:05d}.png" for t in range(N_FRAMES)],
        "frames_resized": [f"frames_256/{t:05d}.png" for t in range(N_FRAMES)],
        "obj_ids": [1, 2],
        "events": [],
        "propagation": [],
    }

    def record_click(ev_i, frame, obj_id, points, labels):
        with torch.inference_mode():
            fidx, obj_ids, video_res = pred.add_new_points_or_box(
                state, frame_idx=frame, obj_id=obj_id, points=np.array(points, np.float32),
                labels=np.array(labels, np.int32))
        obj_idx = state["obj_id_to_idx"][obj_id]
        key, out = obj_out(state, obj_idx, frame, temp=True)
        low = out["pred_masks"].float().numpy()  # [1,1,L,L]
        score = float(out["object_score_logits"].reshape(-1)[0])
        masks = (video_res > 0).numpy()[:, 0]  # [num_obj_so_far, H, W]
        e = {
            "kind": "click", "frame": frame, "obj_id": obj_id, "points": points, "labels": labels,
            "points_model": [[x * S / W, y * S / H] for x, y in points],
            "storage": key,
            "low_res_logits": w.bin(f"event{ev_i}_obj{obj_id}_lowres.bin", low),
            "object_score_logit": score, "object_present": score > 0,
            "video_res_obj_ids": list(obj_ids),
            "masks": [w.png(f"event{ev_i}_obj{oid}_mask.png", masks[k]) for k, oid in enumerate(obj_ids)],
            "mask_areas": [int(masks[k].sum()) for k in range(len(obj_ids))],
        }
        index["events"].append(e)
        print(f"event {ev_i}: frame {frame} obj {obj_id} {key} score {score:+.3f} areas {e['mask_areas']} "
              f"max|logit| {np.abs(low).max():.2f}")

    c0 = obj1_params(0)
    c2 = obj2_params(0)
    record_click(0, 0, 1, [[float(round(c0[0])), float(round(c0[1]))]], [1])
    record_click(1, 0, 2, [[float(round(c2[0])), float(round(c2[1]))]], [1])
    cc = obj1_params(CORR_FRAME)
    c2c = obj2_params(CORR_FRAME)
    record_click(2, CORR_FRAME, 1, [[float(round(cc[0] + 5)), float(round(cc[1]))],
                                    [float(round(c2c[0])), float(round(c2c[1]))]], [1, 0])

    record_propagation(pred, state, w, index)

    fc = obj2_params(FIX_FRAME)
    record_click(3, FIX_FRAME, 2, [[float(round(fc[0] - 4)), float(round(fc[1] + 4))]], [1])
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(OUT) for x in fs)
    print(f"reference: {sum(len(fs) for _, _, fs in os.walk(OUT))} files, {total} B (box/ included when there)")


def box_bounds(x1, y1, x2, y2):
    return [float(round(x1)), float(round(y1)), float(round(x2)), float(round(y2))]


def box_scenario():
    """The box scenario (see the module docstring) -> BOX_OUT. Reads the committed frames of the clicks
    scenario (run that first) and checks they are what make_frames() draws."""
    quiet()
    if os.path.isdir(BOX_OUT):
        shutil.rmtree(BOX_OUT)
    w = Writer(BOX_OUT)
    frames = make_frames()[:BOX_N_FRAMES]
    pred = xv.build_video_model()
    S = pred.image_size
    names = [f"frames/{t:05d}.png" for t in range(BOX_N_FRAMES)]
    tmp = tempfile.mkdtemp(prefix="sam2videobox")
    try:
        for t, (f, name) in enumerate(zip(frames, names)):
            png = os.path.join(OUT, name)
            assert np.array_equal(np.array(Image.open(png).convert("RGB")), f), f"{png} is not make_frames()'s"
            shutil.copyfile(png, os.path.join(tmp, f"{t:05d}.jpg"))  # PNG bytes, .jpg name (see above)
        with torch.inference_mode():
            state = pred.init_state(video_path=tmp)
    finally:
        shutil.rmtree(tmp)

    index = {
        "format_version": 1,
        "generator": "models/sam2/video_reference.py --scenario box",
        "predictor": "sam2.sam2_video_predictor.SAM2VideoPredictor (PyPI sam2 1.1.0), tiny random weights, "
                     "models/sam2/video/*.onnx exported from the same model",
        "video_width": W, "video_height": H, "num_frames": BOX_N_FRAMES, "image_size": S,
        "hidden_frame_obj1": HIDDEN_FRAME,
        "paths": "relative to this file's folder",
        "frames": ["../" + n for n in names],
        "frames_resized": [f"../frames_256/{t:05d}.png" for t in range(BOX_N_FRAMES)],
        "obj_ids": [1, 2],
        "events_before_propagation": 2,
        "events": [],
        "propagation": [],
    }

    def record_prompt(ev_i, frame, obj_id, box, points, labels):
        with torch.inference_mode():
            fidx, obj_ids, video_res = pred.add_new_points_or_box(
                state, frame_idx=frame, obj_id=obj_id,
                points=None if not points else np.array(points, np.float32),
                labels=None if not points else np.array(labels, np.int32),
                box=np.array(box, np.float32))
        obj_idx = state["obj_id_to_idx"][obj_id]
        # what the predictor hands the model: box corners first (labels 2, 3), then the clicks
        pin = state["point_inputs_per_obj"][obj_idx][frame]
        key, out = obj_out(state, obj_idx, frame, temp=True)
        low = out["pred_masks"].float().numpy()  # [1,1,L,L]
        score = float(out["object_score_logits"].reshape(-1)[0])
        masks = (video_res > 0).numpy()[:, 0]  # [num_obj_so_far, H, W]
        e = {
            "kind": "box" if not points else "box+click", "frame": frame, "obj_id": obj_id,
            "box": box, "points": points, "labels": labels,
            "prompt_points_model": pin["point_coords"][0].tolist(),
            "prompt_labels_model": pin["point_labels"][0].tolist(),
            "storage": key,
            "low_res_logits": w.bin(f"event{ev_i}_obj{obj_id}_lowres.bin", low),
            "object_score_logit": score, "object_present": score > 0,
            "video_res_obj_ids": list(obj_ids),
            "masks": [w.png(f"event{ev_i}_obj{oid}_mask.png", masks[k]) for k, oid in enumerate(obj_ids)],
            "mask_areas": [int(masks[k].sum()) for k in range(len(obj_ids))],
        }
        index["events"].append(e)
        print(f"event {ev_i}: frame {frame} obj {obj_id} box {box} clicks {points} {labels} {key} "
              f"score {score:+.3f} areas {e['mask_areas']} max|logit| {np.abs(low).max():.2f}")

    # Prompts chosen (among a few tried) so that both objects stay present on every frame with these
    # random weights: a tight box alone, or a box with clicks around the square, came out absent from
    # frame 1 or 2 on, which leaves little to compare (absent objects' logits are -1024 everywhere).
    cx, cy, _, _ = obj1_params(0)
    record_prompt(0, 0, 1, box_bounds(cx - 30, cy - 24, cx + 30, cy + 24),
                  [[float(round(cx)), float(round(cy))], [float(round(cx - 35)), float(round(cy - 30))]], [1, 0])
    cx, cy, _ = obj2_params(0)
    record_prompt(1, 0, 2, box_bounds(cx - 50, cy - 40, cx + 50, cy + 40), [], [])

    record_propagation(pred, state, w, index)

    cx, cy, ax, ay = obj1_params(BOX_FIX_FRAME_1)
    record_prompt(2, BOX_FIX_FRAME_1, 1, box_bounds(cx - ax - 2, cy - ay - 2, cx + ax + 2, cy + ay + 2), [], [])
    cx, cy, s = obj2_params(BOX_FIX_FRAME_2)
    record_prompt(3, BOX_FIX_FRAME_2, 2, box_bounds(cx - s - 3, cy - s - 3, cx + s + 3, cy + s + 3),
                  [[float(round(cx + 4)), float(round(cy - 4))]], [1])
    with open(os.path.join(BOX_OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(BOX_OUT, x)) for x in os.listdir(BOX_OUT))
    print(f"box reference: {len(os.listdir(BOX_OUT))} files, {total} B")


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", choices=["all", "clicks", "box"], default="all",
                    help="clicks: reference/ (frames + the click scenario); box: reference/box/ (needs "
                         "reference/frames/); all: both, in that order")
    args = ap.parse_args()
    if args.scenario in ("all", "clicks"):
        clicks_scenario()
    if args.scenario in ("all", "box"):
        box_scenario()


if __name__ == "__main__":
    main()
