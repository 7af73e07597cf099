#!/usr/bin/env python3
"""SAM2 video tracking per frame, split by module, through video_ort_tracker.py (the official
SAM2VideoPredictor's rules on the four ONNX modules, numpy + onnxruntime; its parity with the predictor
is asserted by that script), and the memory it holds (figures, not assertions). The Python
side of examples/bench_track.rs; scripts/bench_track.sh runs both.

    .venv/bin/python models/sam2/bench_video_ort.py [--models DIR] [--frames 100] [--width 1280 --height 720]
        [--objects 1|2] [--warmup 3] [--threads 0] [--json OUT]

Frames are synthesised with the same formulas as examples/bench_track.rs (gradient + checker + integer
noise background, a moving/deforming ellipse = object 1, a growing square = object 2), made on demand
(a lazy sequence: the frames are not all held). Object 1 (and with --objects 2 object 2) is clicked at its
centre on frame 0, then the tracker propagates over every frame (preflight, then frame by frame), as
segrt's add_frame + track_frame stream does.

ONNX Runtime settings as segrt's defaults (src/engine/session.rs, src/runtime.rs): CPU provider,
intra-op threads = ONNX Runtime's default (0: one per physical core; segrt's default uses ONNX Runtime's
global pool of that size), intra-op spinning off, default graph optimisation (all). Python gives each
session its own pool of that size; the modules run one after another, so the threads at work are the same.
Memory: by default each session has ORT's own CPU arena (power-of-two growth), as the official predictor
with ORT sessions would; --arena segrt registers one shared arena with blocks sized as requested
(kSameAsRequested) and opts the sessions in (session.use_env_allocators), exactly as segrt does.

Timing: each ORT session run is timed per module; preprocess = Tracker.preprocess (PIL bicubic resize,
normalisation); postprocess = video_res_all (bilinear upsampling of every object's low-res logits to
the frame's size) + the `> 0` threshold; total = the whole frame. Like the official predictor,
video_ort_tracker keeps every frame's encoder outputs (feat_cache) and every tracked output: the memory
table shows that growth.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import video_ort_tracker as vot  # noqa: E402

MODULES = ["preprocess", "image_encoder", "memory_attention", "mask_decoder", "memory_encoder", "postprocess",
           "other", "total"]


def ellipse(t, n, w, h):
    n = max(n, 2)
    cx = w * (0.2 + 0.4 * t / (n - 1.0))
    cy = h * (0.5 + 0.1 * math.sin(0.15 * t))
    return cx, cy, w * 0.09 * (1.0 + 0.25 * math.sin(0.2 * t)), h * 0.14 * (1.0 + 0.25 * math.cos(0.17 * t))


def square(t, n, w, h):
    n = max(n, 2)
    f = t / (n - 1.0)
    return w * (0.8 - 0.2 * f), h * (0.25 + 0.3 * f), h * (0.08 + 0.04 * f)


def synth_frame(t, n, w, h):
    """Frame t of n, HxWx3 uint8 RGB (examples/bench_track.rs synth_frame)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    noise = ((x * 7 + y * 13) ^ (x * y)) & 15
    checker = np.where((x // 32 + y // 32) % 2 == 0, 25, 0)
    img = np.stack([60 + x * 120 // w + checker + noise, 80 + y * 100 // h + checker + noise,
                    110 + checker + noise], -1)
    ex, ey, ea, eb = ellipse(t, n, w, h)
    sx, sy, sh = square(t, n, w, h)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    in_e = ((xf - ex) / ea) ** 2 + ((yf - ey) / eb) ** 2 <= 1.0
    in_s = (np.abs(xf - sx) <= sh) & (np.abs(yf - sy) <= sh) & ~in_e
    img[in_e] = (220, 60, 40)
    img[in_s] = (40, 200, 80)
    return np.minimum(img, 255).astype(np.uint8)


class LazyFrames:
    """The video as video_ort_tracker.Tracker reads it (len, [t], [0].shape), made on demand; prepare(t)
    makes frame t ahead (outside the timed part), and only that frame is held."""

    def __init__(self, n, w, h):
        self.n, self.w, self.h = n, w, h
        self.cached = (None, None)

    def __len__(self):
        return self.n

    def prepare(self, t):
        if 0 <= t < self.n and self.cached[0] != t:
            self.cached = (t, synth_frame(t, self.n, self.w, self.h))

    def __getitem__(self, t):
        if not 0 <= t < self.n:
            raise IndexError(t)
        self.prepare(t)
        return self.cached[1]


class TimedModules(vot.Modules):
    """vot.Modules with segrt's ORT settings and the time of each session run added per module."""

    def __init__(self, d, threads, arena):
        self.meta = json.load(open(os.path.join(d, "video_metadata.json")))
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if arena == "segrt":  # src/runtime.rs register_shared_cpu_arena + session.use_env_allocators
            mi = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
            ort.create_and_register_allocator(mi, ort.OrtArenaCfg({"arena_extend_strategy": 1}))  # kSameAsRequested
            so.add_session_config_entry("session.use_env_allocators", "1")
        so.log_severity_level = 3
        self.s = {k: ort.InferenceSession(os.path.join(d, f), so, providers=["CPUExecutionProvider"])
                  for k, f in self.meta["files"].items()}
        self.times = dict.fromkeys(MODULES, 0.0)

    def run(self, name, **feed):
        start = time.perf_counter()
        r = super().run(name, **feed)
        self.times[name] += (time.perf_counter() - start) * 1e3
        return r


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=os.path.join(HERE, "real-size", "video"))
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--objects", type=int, choices=[1, 2], default=1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0 = ONNX Runtime's default, as segrt)")
    ap.add_argument("--arena", choices=["default", "segrt"], default="default",
                    help="default: each session its own CPU arena (ORT's default, power-of-two growth); segrt: one "
                         "shared arena, blocks sized as requested, as segrt registers it")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.models, "video_metadata.json")):
        sys.exit(f"{a.models} has no video_metadata.json: generate it with "
                 "`python models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video` (needs PyTorch)")
    n, w, h = a.frames, a.width, a.height

    start = time.perf_counter()
    mods = TimedModules(a.models, a.threads, a.arena)
    load_ms = (time.perf_counter() - start) * 1e3
    md = mods.meta
    frames = LazyFrames(n, w, h)
    trk = vot.Tracker(mods, frames)
    times = mods.times
    for name, key in (("preprocess", "preprocess"), ("video_res_all", "postprocess")):
        def timed(*args, _f=getattr(trk, name), _k=key, **kw):
            s = time.perf_counter()
            r = _f(*args, **kw)
            times[_k] += (time.perf_counter() - s) * 1e3
            return r
        setattr(trk, name, timed)
    rss_loaded = rss_mib()
    print(f"bench_video_ort: {a.models} (image {md['image_size']}, num_maskmem {md['num_maskmem']}), {n} frames "
          f"synthetic {w}x{h}, {a.objects} object(s), every frame kept (as the official predictor), onnxruntime "
          f"{ort.__version__}, intra threads {a.threads or 'ORT default (physical cores)'}, spinning off, arena {a.arena}")
    print(f"modules loaded in {load_ms:.0f} ms, RSS {rss_loaded:.0f} MiB")

    checkpoints = {10, 25, 50, 100}
    rows, memory, present, rss_per_frame = [], [], [0, 0], []
    ex, ey, _, _ = ellipse(0, n, w, h)
    sx, sy, _ = square(0, n, w, h)
    clicks = [(ex, ey), (sx, sy)][:a.objects]

    def snapshot():
        return dict(times)

    frames.prepare(0)
    before, frame_start = snapshot(), time.perf_counter()
    for k, p in enumerate(clicks):  # frame 0's clicks belong to frame 0's figures, as in bench_track.rs
        trk.add_points(0, k + 1, [p], [1])
    for t, vres in trk.propagate():
        s = time.perf_counter()
        masks = vres[:, 0] > 0
        times["postprocess"] += (time.perf_counter() - s) * 1e3
        total = (time.perf_counter() - frame_start) * 1e3
        d = {k: times[k] - before[k] for k in MODULES[:6]}
        d["other"] = total - sum(d.values())
        d["total"] = total
        rows.append(d)
        for k, oid in enumerate(trk.objs):
            out = trk.objs[oid]["cond"].get(t) or trk.objs[oid]["non_cond"].get(t)
            present[k] += int(float(out["object_score_logits"].reshape(-1)[0]) > 0)
        del masks
        rss_per_frame.append(rss_mib())
        if t + 1 in checkpoints or t + 1 == n:
            held_outputs = sum(len(o["cond"]) + len(o["non_cond"]) + len(o["temp"]["cond"]) + len(o["temp"]["non_cond"])
                               for o in trk.objs.values())
            memory.append(dict(frame=t + 1, rss_mib=rss_mib(), held_frames=len(trk.feat_cache), held_outputs=held_outputs))
        frames.prepare(t + 1)
        before, frame_start = snapshot(), time.perf_counter()

    warm = min(a.warmup, n - 1)
    measured = rows[warm:]
    print(f"per frame, frames {warm}..{n - 1} ({len(measured)} frames after {warm} warm-up):")
    print(f"  {'module':<18} {'median ms':>10} {'mean ms':>10}")
    per_frame = {}
    for k in MODULES:
        v = [r[k] for r in measured]
        per_frame[k] = dict(median=float(np.median(v)), mean=float(np.mean(v)))
        print(f"  {k:<18} {per_frame[k]['median']:>10.1f} {per_frame[k]['mean']:>10.1f}")
    print(f"objects present: {present[0]} of {n} frames (object 1)"
          + (f", {present[1]} of {n} (object 2)" if a.objects == 2 else ""))
    print(f"memory (RSS after loading: {rss_loaded:.0f} MiB):")
    print(f"  {'frame':>6} {'RSS MiB':>9} {'held frames':>12} {'held outputs':>13}")
    for m in memory:
        print(f"  {m['frame']:>6} {m['rss_mib']:>9.0f} {m['held_frames']:>12} {m['held_outputs']:>13}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(side="python-ort", arena=a.arena, frames=n, objects=a.objects, keep_frames=None, warmup=warm,
                           load_ms=load_ms, rss_loaded_mib=rss_loaded, per_frame_ms=per_frame, memory=memory,
                           rss_per_frame_mib=rss_per_frame), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
