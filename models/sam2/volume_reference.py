#!/usr/bin/env python3
"""Reference outputs of the OFFICIAL SAM2 video predictor for volume-style use: propagation from any
frame in both directions, objects added after tracking started, corrections followed by
re-propagation, removed objects.

    /path/to/torch-venv/bin/python models/sam2/volume_reference.py   # -> models/sam2/video/reference/volume/

Same model and frames as video_reference.py (run that first: the frames are read from
reference/frames/ and checked against make_frames()). Each scenario is an event log replayed by
tests/sam2_video_volume.rs; every event goes through the predictor's public API:

  prompt     add_new_points_or_box(frame, obj, points/labels and/or box): the prompted object's low-res
             logits and score (from the temporary outputs) and every object's mask at video resolution
  propagate  propagate_in_video(start_frame_idx, max_frame_num_to_track, reverse): per yielded frame
             every object's stored object score and video-resolution mask (no logits: they would
             double the committed size; the scores are compared tightly on every frame)
  remove     remove_object(obj, strict=True)
  clear      clear_all_prompts_in_frame(frame, obj)

Scenarios (folders under reference/volume/):
  both     a middle frame clicked, forward then reverse from it (the volume workflow); a second object
           added on frame 10 AFTER tracking started, propagated both ways from its frame; a correction on
           frame 3 (tracked in reverse) and re-propagation in reverse from frame 2 with a frame budget;
           object 2 removed, then a short forward propagation.
           (Propagating forward from frame 0 after adding object 2 on frame 10 crashes sam2 1.1.0 - see
           SAM-INTEROP notes - so it is not recorded.)
  reverse  both objects prompted on the last frame (a box and a click), reverse propagation from it
           to frame 0.
  cond     the predictor with add_all_frames_to_correct_as_cond=True: a correction on a tracked frame
           becomes a conditioning frame, so propagation over that frame keeps it.
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

OUT = os.path.join(vr.OUT, "volume")


def rounded(*v):
    return [float(round(x)) for x in v]


class Recorder:
    def __init__(self, name, frames, correct_as_cond=False):
        self.dir = os.path.join(OUT, name)
        os.makedirs(self.dir)
        self.w = vr.Writer(self.dir)
        self.pred = xv.build_video_model()
        self.pred.add_all_frames_to_correct_as_cond = correct_as_cond
        S = self.pred.image_size
        names = [f"frames/{t:05d}.png" for t in range(len(frames))]
        tmp = tempfile.mkdtemp(prefix="sam2volume")
        try:
            for t, (f, n) in enumerate(zip(frames, names)):
                png = os.path.join(vr.OUT, n)
                assert np.array_equal(np.array(Image.open(png).convert("RGB")), f), f"{png} is not make_frames()'s"
                shutil.copyfile(png, os.path.join(tmp, f"{t:05d}.jpg"))
            with torch.inference_mode():
                self.state = self.pred.init_state(video_path=tmp)
        finally:
            shutil.rmtree(tmp)
        self.index = {
            "format_version": 1,
            "generator": f"models/sam2/volume_reference.py ({name})",
            "predictor": "sam2.sam2_video_predictor.SAM2VideoPredictor (PyPI sam2 1.1.0), tiny random weights, "
                         "models/sam2/video/*.onnx exported from the same model",
            "add_all_frames_to_correct_as_cond": correct_as_cond,
            "video_width": vr.W, "video_height": vr.H, "num_frames": len(frames), "image_size": S,
            "paths": "relative to this file's folder",
            "frames": ["../../" + n for n in names],
            "events": [],
        }
        self.n = 0

    def name(self, stem):
        self.n += 1
        return f"e{self.n:02d}_{stem}"

    def masks(self, video_res, obj_ids, stem):
        m = (video_res > 0).numpy()[:, 0]
        return [self.w.png(f"{stem}_obj{oid}.png", m[k]) for k, oid in enumerate(obj_ids)]

    def prompt(self, frame, obj, points=None, labels=None, box=None):
        with torch.inference_mode():
            _, obj_ids, video_res = self.pred.add_new_points_or_box(
                self.state, frame_idx=frame, obj_id=obj,
                points=None if points is None else np.array(points, np.float32),
                labels=None if labels is None else np.array(labels, np.int32),
                box=None if box is None else np.array(box, np.float32))
        k = self.state["obj_id_to_idx"][obj]
        key, out = vr.obj_out(self.state, k, frame, temp=True)
        stem = self.name(f"prompt_f{frame}")
        score = float(out["object_score_logits"].reshape(-1)[0])
        self.index["events"].append({
            "op": "prompt", "frame": frame, "obj_id": obj, "points": points or [], "labels": labels or [],
            "box": box, "storage": key, "object_score_logit": score,
            "low_res_logits": self.w.bin(f"{stem}_lowres.bin", out["pred_masks"].float().numpy()),
            "obj_ids": list(obj_ids), "masks": self.masks(video_res, obj_ids, stem),
        })
        print(f"prompt frame {frame} obj {obj}: {key} score {score:+.3f}")

    def propagate(self, start=None, reverse=False, max_frames=None):
        frames = []
        stem = self.name("prop")
        with torch.inference_mode():
            for fidx, obj_ids, video_res in self.pred.propagate_in_video(
                    self.state, start_frame_idx=start, max_frame_num_to_track=max_frames, reverse=reverse):
                scores, storage = [], []
                for k in range(len(obj_ids)):
                    key, out = vr.obj_out(self.state, k, fidx)
                    scores.append(float(out["object_score_logits"].reshape(-1)[0]))
                    storage.append(key)
                frames.append({
                    "frame": fidx, "obj_ids": list(obj_ids), "object_score_logits": scores, "storage": storage,
                    "masks": self.masks(video_res, obj_ids, f"{stem}_f{fidx:02d}"),
                })
        self.index["events"].append({"op": "propagate", "start": start, "reverse": reverse,
                                     "max_frames": max_frames, "frames": frames})
        print(f"propagate start {start} reverse {reverse} max {max_frames}: frames "
              f"{[f['frame'] for f in frames]}; scores " +
              " ".join("/".join(f"{s:+.1f}" for s in f["object_score_logits"]) for f in frames))

    def remove(self, obj):
        with torch.inference_mode():
            obj_ids, _ = self.pred.remove_object(self.state, obj, strict=True)
        self.index["events"].append({"op": "remove", "obj_id": obj, "obj_ids": list(obj_ids)})

    def clear(self, frame, obj):
        with torch.inference_mode():
            _, obj_ids, video_res = self.pred.clear_all_prompts_in_frame(self.state, frame, obj)
        stem = self.name(f"clear_f{frame}")
        self.index["events"].append({"op": "clear", "frame": frame, "obj_id": obj, "obj_ids": list(obj_ids),
                                     "masks": self.masks(video_res, obj_ids, stem)})

    def save(self):
        with open(os.path.join(self.dir, "index.json"), "w") as f:
            json.dump(self.index, f, indent=1)
            f.write("\n")
        total = sum(os.path.getsize(os.path.join(self.dir, x)) for x in os.listdir(self.dir))
        print(f"{self.dir}: {len(os.listdir(self.dir))} files, {total} B")


def centre1(t):
    cx, cy, _, _ = vr.obj1_params(t)
    return rounded(cx, cy)


def centre2(t):
    cx, cy, _ = vr.obj2_params(t)
    return rounded(cx, cy)


def both(frames):
    r = Recorder("both", frames)
    r.prompt(7, 1, points=[centre1(7)], labels=[1])
    r.propagate()  # forward from the earliest prompted frame (7) to the end
    r.propagate(reverse=True)  # and back from it to frame 0
    cx, cy, s = vr.obj2_params(10)
    r.prompt(10, 2, box=rounded(cx - s - 6, cy - s - 6, cx + s + 6, cy + s + 6))  # after tracking started
    r.propagate(start=10)
    r.propagate(start=10, reverse=True)
    x, y = centre1(3)
    r.prompt(3, 1, points=[[x + 4, y], [x + 40, y + 30]], labels=[1, 0])  # correction (frame 3 tracked in reverse)
    r.propagate(start=2, reverse=True, max_frames=2)  # re-propagation uses it: frames 2, 1, 0
    r.remove(2)
    r.propagate(start=7, max_frames=3)  # frames 7..10, object 1 only
    r.save()


def reverse(frames):
    r = Recorder("reverse", frames)
    last = len(frames) - 1
    cx, cy, s = vr.obj2_params(last)
    r.prompt(last, 2, box=rounded(cx - s - 5, cy - s - 5, cx + s + 5, cy + s + 5))
    r.prompt(last, 1, points=[centre1(last)], labels=[1])
    r.propagate(reverse=True)  # from the last frame to frame 0
    r.save()


def cond(frames):
    r = Recorder("cond", frames, correct_as_cond=True)
    r.prompt(4, 1, points=[centre1(4)], labels=[1])
    r.propagate()
    x, y = centre1(8)
    r.prompt(8, 1, points=[[x, y], [x - 30, y - 25]], labels=[1, 0])  # a conditioning frame now
    r.propagate(start=6)  # over the corrected frame: its output is kept
    r.clear(8, 1)  # downgraded to a non-conditioning output
    r.propagate(start=7, max_frames=3)
    r.save()


def main():
    vr.quiet()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    frames = vr.make_frames()
    both(frames)
    reverse(frames)
    cond(frames[:10])


if __name__ == "__main__":
    main()
