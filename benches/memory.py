#!/usr/bin/env python3
"""Resident memory per stage: segrt through its C ABI against the plain Python pipeline doing the same
work (onnxruntime + numpy + Pillow, ONNX Runtime's defaults), each stage's peak and what stays after it.
Figures only, no assertion.

    python benches/memory.py sam2  [--lib target/release/libsegrt.so] [--rounds 2] [--clicks 5]
    python benches/memory.py unet  [--model models/generated/unet_base32_512.onnx] [--size 3840x2160]
    python benches/memory.py track [--frames 4]
    segrt options: [--max-sessions N] [--arena default|keep|release] [--cache-dir DIR]
    before/after: --sides plain,segrt,before --before-lib PATH (an earlier build of libsegrt)

Every side runs in a child process of its own (so its figures start clean), the sides alternately
(plain, segrt, segrt, plain, ...) for --rounds rounds; the tables give each stage's figures of every
round. Per stage: `peak` is the highest resident memory while the stage ran (Linux's VmHWM, reset at
the start of each stage through /proc/self/clear_refs), `after` what is resident when it returned.
`start` is the process with its modules imported and ONNX Runtime loaded (the plain side imports
onnxruntime, numpy and Pillow, the segrt side loads libsegrt and ONNX Runtime's library): the other rows
include it.

Pipelines (the same input for both sides, made by the child):
- sam2: a 1920x1080 BGR frame; create = the encoder and decoder sessions (seg_create_sam2); encode
  = BGR -> RGB, resize to 1024x1024, normalise, encoder run (seg_sam2_set_image); click = decoder
  run + the chosen low-res mask upsampled to 1920x1080 and thresholded, --clicks times
  (seg_run_sam2_points); free = sessions and embedding released (seg_free), then malloc_trim.
- unet: a --size RGB frame; create = the session; first run and --runs more (resize to the model's
  input, run, probability map resized to the frame, threshold 0.5); free.
- track: --frames synthetic 1280x720 frames (models/sam2/bench_video_ort.py's); create = the four
  video modules; first frame = encode + a click on the ellipse; frames = tracking the rest; free.
  The plain side is models/sam2/video_ort_tracker.py (the official predictor's rules, which keep
  every frame); segrt keeps its default `keep_frames`.
"""
import argparse
import ctypes as C
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SAM2_DIR = ROOT / "models/sam2/real-size"
DEFAULT_ENCODER = SAM2_DIR / "sam2_tiny_random_1024_samexporter_encoder.onnx"
DEFAULT_DECODER = SAM2_DIR / "sam2_tiny_random_1024_samexporter_decoder.onnx"
DEFAULT_VIDEO = SAM2_DIR / "video"
DEFAULT_UNET = ROOT / "models/generated/unet_base32_512.onnx"


# ---------------------------------------------------------------------------------------------
# Memory of this process
# ---------------------------------------------------------------------------------------------

def status_mib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def reset_peak():
    """Sets the high-water mark to the current resident size (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Stages:
    """Prints one JSON line per stage: resident after it, its peak, its time."""

    def __init__(self):
        self.can_reset = reset_peak()
        self.t = time.perf_counter()

    def begin(self):
        reset_peak()
        self.t = time.perf_counter()

    def end(self, stage, **extra):
        ms = (time.perf_counter() - self.t) * 1e3
        row = dict(stage=stage, after_mib=status_mib("VmRSS"), peak_mib=status_mib("VmHWM"), ms=ms, **extra)
        print(json.dumps(row), flush=True)
        self.begin()


def malloc_trim():
    try:
        C.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def sam2_frame(np):
    """examples/bench_sam2.rs's 1920x1080 BGR frame: a red disc on a gradient."""
    w, h = 1920, 1080
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x // 8) % 256, (y // 5) % 256, np.full_like(x, 90)], -1).astype(np.uint8)
    img[(x - 900) ** 2 + (y - 500) ** 2 < 200 * 200] = (40, 60, 220)
    return img


def unet_frame(np, w, h):
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), ((x // 64 + y // 64) % 2) * 200], -1)
    return img.astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# The plain Python pipeline
# ---------------------------------------------------------------------------------------------

def plain(args):
    import numpy as np
    import onnxruntime as ort
    from PIL import Image
    st = Stages()
    st.end("start")
    if args.pipeline == "sam2":
        img = sam2_frame(np)
        st.begin()
        enc = ort.InferenceSession(str(args.encoder), providers=["CPUExecutionProvider"])
        dec = ort.InferenceSession(str(args.decoder), providers=["CPUExecutionProvider"])
        st.end("create")
        names = [o.name for o in enc.get_outputs()]
        for i in range(args.encodes):
            if i:
                img = np.roll(img, 7, axis=1)
                del feats
            rgb = np.ascontiguousarray(img[..., ::-1])
            x = np.asarray(Image.fromarray(rgb).resize((1024, 1024), Image.BILINEAR), np.float32) / 255.0
            x = ((x - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).astype(np.float32).transpose(2, 0, 1)[None].copy()
            feats = dict(zip(names, enc.run(None, {enc.get_inputs()[0].name: x})))
            del x, rgb
            st.end("encode" if i == 0 else f"encode {i + 1}")
        h, w = img.shape[:2]
        times = []
        for _ in range(args.clicks):
            t = time.perf_counter()
            feed = {i.name: feats[i.name] for i in dec.get_inputs() if i.name in feats}
            feed["point_coords"] = np.array([[[900 * 1024 / w, 500 * 1024 / h]]], np.float32)
            feed["point_labels"] = np.array([[1]], np.float32)
            feed["mask_input"] = np.zeros((1, 1, 256, 256), np.float32)
            feed["has_mask_input"] = np.zeros((1,), np.float32)
            masks, iou = dec.run(None, feed)
            k = 1 + int(np.argmax(iou[0, 1:])) if masks.shape[1] == 4 else int(np.argmax(iou[0]))
            mask = (np.asarray(Image.fromarray(masks[0, k]).resize((w, h), Image.BILINEAR)) > 0).astype(np.uint8) * 255
            times.append((time.perf_counter() - t) * 1e3)
        st.end("click", click_ms=statistics.median(times), fg=int(np.count_nonzero(mask)))
        del enc, dec, feats, masks, mask
        malloc_trim()
        st.end("free")
    elif args.pipeline == "unet":
        w, h = args.size
        img = unet_frame(np, w, h)
        st.begin()
        s = ort.InferenceSession(str(args.model), providers=["CPUExecutionProvider"])
        st.end("create")
        inp = s.get_inputs()[0]
        mh, mw = inp.shape[2], inp.shape[3]

        def run():
            x = np.asarray(Image.fromarray(img).resize((mw, mh), Image.BOX), np.float32) / 255.0
            out = s.run(None, {inp.name: x.transpose(2, 0, 1)[None].copy()})[0][0, 0]
            prob = 1.0 / (1.0 + np.exp(-out)) if (out.min() < 0 or out.max() > 1) else out
            return (np.asarray(Image.fromarray(prob.astype(np.float32)).resize((w, h), Image.BILINEAR)) > 0.5).astype(np.uint8) * 255

        mask = run()
        st.end("first run")
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            mask = run()
            times.append((time.perf_counter() - t) * 1e3)
        st.end("runs", run_ms=statistics.median(times) if times else 0.0, fg=int(np.count_nonzero(mask)))
        del s, mask
        malloc_trim()
        st.end("free")
    else:
        sys.path.insert(0, str(ROOT / "models/sam2"))
        import bench_video_ort as bvo
        import video_ort_tracker as vot
        n, w, h = args.frames, 1280, 720
        st.begin()
        mods = vot.Modules(str(args.video))
        frames = bvo.LazyFrames(n, w, h)
        trk = vot.Tracker(mods, frames)
        st.end("create")
        ex, ey, _, _ = bvo.ellipse(0, n, w, h)
        frames.prepare(0)
        st.begin()
        trk.add_points(0, 1, [(ex, ey)], [1])
        gen = trk.propagate()
        next(gen)
        st.end("first frame")
        times = []
        t = time.perf_counter()
        for k, (_, vres) in enumerate(gen):
            _ = vres[:, 0] > 0
            times.append((time.perf_counter() - t) * 1e3)
            frames.prepare(k + 2)
            t = time.perf_counter()
        st.end("frames", frame_ms=statistics.median(times) if times else 0.0, held_frames=len(trk.feat_cache))
        del trk, mods, gen
        malloc_trim()
        st.end("free")


# ---------------------------------------------------------------------------------------------
# segrt through its C ABI
# ---------------------------------------------------------------------------------------------

def segrt(args):
    import numpy as np
    sys.path.insert(0, str(ROOT / "tests/real"))
    import segrt_c as sc
    st = Stages()
    lib = sc.Segrt(pathlib.Path(args.before_lib if args.child == "before" else args.lib), pathlib.Path(args.ort))
    L = lib.lib
    st.end("start")
    fields = {}
    if args.max_sessions is not None:
        fields["max_sessions"] = args.max_sessions
    if args.cache_dir:
        fields["cache_mode"] = 2
        fields["cache_dir"] = str(args.cache_dir).encode()
    arena = args.child.partition("-")[2] or args.arena
    if arena != "default":
        fields["arena"] = {"auto": 0, "keep": 1, "release": 2}[arena]
    if args.pipeline == "sam2":
        img = sam2_frame(np)
        h, w = img.shape[:2]
        st.begin()
        s = lib.sam(args.encoder, args.decoder, **fields)
        st.end("create")
        for i in range(args.encodes):
            if i:
                img = np.ascontiguousarray(np.roll(img, 7, axis=1))
            s.set_image(img, sc.BGR24)
            st.end("encode" if i == 0 else f"encode {i + 1}")
        times = []
        for _ in range(args.clicks):
            t = time.perf_counter()
            mask, _ = s.points((w, h), [(900.0, 500.0, 1)])
            times.append((time.perf_counter() - t) * 1e3)
        st.end("click", click_ms=statistics.median(times), fg=int(np.count_nonzero(mask)))
        s.close()
        malloc_trim()
        st.end("free")
    elif args.pipeline == "unet":
        w, h = args.size
        img = unet_frame(np, w, h)
        st.begin()
        s = lib.unet(args.model, **fields)
        st.end("create")
        mask = np.zeros((h, w), np.uint8)
        out = sc.SegMask(data=mask.ctypes.data, width=w, height=h, stride=0)
        image = sc.image_of(img, sc.RGB24)

        def run():
            lib.check(L.seg_run_unet(s.handle, C.byref(image), C.byref(out), None, 0, None, None), "seg_run_unet")

        run()
        st.end("first run")
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            run()
            times.append((time.perf_counter() - t) * 1e3)
        st.end("runs", run_ms=statistics.median(times) if times else 0.0, fg=int(np.count_nonzero(mask)))
        s.close()
        malloc_trim()
        st.end("free")
    else:
        sys.path.insert(0, str(ROOT / "models/sam2"))
        import bench_video_ort as bvo
        n, w, h = args.frames, 1280, 720
        p = C.c_void_p
        L.seg_create_sam2_video.argtypes = [C.c_char_p, C.POINTER(sc.SegOptions), C.POINTER(p)]
        L.seg_track_create.argtypes = [p, p, C.POINTER(p)]
        L.seg_track_free.argtypes = [p]
        L.seg_track_add_frame.argtypes = [p, C.POINTER(sc.SegImage), p, p, p]
        L.seg_track_add_prompt.argtypes = [p, C.c_int64, C.c_int32, C.POINTER(sc.SegPoint), C.c_size_t, p,
                                           p, C.c_size_t, p, C.c_size_t, p, p, p]
        L.seg_track_frame.argtypes = [p, C.c_int64, p, C.c_size_t, p, C.c_size_t, p, p, p]
        L.seg_track_next.argtypes = [p, C.POINTER(sc.SegImage), p, C.c_size_t, C.POINTER(sc.SegMask), C.c_size_t,
                                     p, p, p]
        st.begin()
        o = lib.options(**fields)
        session, track = C.c_void_p(), C.c_void_p()
        lib.check(L.seg_create_sam2_video(str(args.video).encode(), C.byref(o), C.byref(session)), "seg_create_sam2_video")
        lib.check(L.seg_track_create(session, None, C.byref(track)), "seg_track_create")
        st.end("create")
        mask = np.zeros((h, w), np.uint8)
        out = sc.SegMask(data=mask.ctypes.data, width=w, height=h, stride=0)
        f0 = bvo.synth_frame(0, n, w, h)
        lib.check(L.seg_track_add_frame(track, C.byref(sc.image_of(f0, sc.RGB24)), None, None, None), "add_frame")
        ex, ey, _, _ = bvo.ellipse(0, n, w, h)
        pt = sc.SegPoint(ex, ey, 1)
        lib.check(L.seg_track_add_prompt(track, 0, 1, C.byref(pt), 1, None, None, 0, None, 0, None, None, None), "add_prompt")
        lib.check(L.seg_track_frame(track, 0, None, 0, None, 0, None, None, None), "track_frame")
        del f0
        st.end("first frame")
        times = []
        for t in range(1, n):
            frame = bvo.synth_frame(t, n, w, h)
            start = time.perf_counter()
            lib.check(L.seg_track_next(track, C.byref(sc.image_of(frame, sc.RGB24)), None, 0, C.byref(out), 1, None,
                                       None, None), "track_next")
            times.append((time.perf_counter() - start) * 1e3)
        st.end("frames", frame_ms=statistics.median(times) if times else 0.0)
        L.seg_track_free(track)
        L.seg_free(session)
        malloc_trim()
        st.end("free")


# ---------------------------------------------------------------------------------------------
# The parent: children in turn, tables
# ---------------------------------------------------------------------------------------------

def size(text):
    m = re.fullmatch(r"(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError("WIDTHxHEIGHT")
    return int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pipeline", choices=["sam2", "unet", "track"])
    ap.add_argument("--lib", default=str(ROOT / "target/release/libsegrt.so"))
    ap.add_argument("--before-lib", default=None,
                    help="another libsegrt (an earlier build) for the side `before`, run with its defaults")
    ap.add_argument("--ort", default=str(next((ROOT / ".onnxruntime").glob("libonnxruntime.so*"), "")))
    ap.add_argument("--encoder", type=pathlib.Path, default=DEFAULT_ENCODER)
    ap.add_argument("--decoder", type=pathlib.Path, default=DEFAULT_DECODER)
    ap.add_argument("--video", type=pathlib.Path, default=DEFAULT_VIDEO)
    ap.add_argument("--model", type=pathlib.Path, default=DEFAULT_UNET)
    ap.add_argument("--size", type=size, default=(3840, 2160), help="UNet frame, WIDTHxHEIGHT (default 3840x2160)")
    ap.add_argument("--clicks", type=int, default=5)
    ap.add_argument("--encodes", type=int, default=1, help="SAM2: images encoded one after the other (each shifted)")
    ap.add_argument("--runs", type=int, default=3, help="UNet runs after the first")
    ap.add_argument("--frames", type=int, default=4, help="tracked frames, the first included")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sides", default="plain,segrt",
                    help="comma-separated: plain, segrt (its default arena policy), segrt-auto, segrt-keep, segrt-release, before")
    ap.add_argument("--max-sessions", type=int, default=None, help="segrt's max_sessions (default: segrt's default)")
    ap.add_argument("--arena", choices=["default", "auto", "keep", "release"], default="default",
                    help="segrt's arena policy (default: segrt's default)")
    ap.add_argument("--cache-dir", type=pathlib.Path, default=None, help="segrt's model cache folder (default: none)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write every row here")
    args = ap.parse_args()
    if args.child:
        (plain if args.child == "plain" else segrt)(args)
        return 0

    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    passthrough = [a for a in sys.argv[1:] if a not in ("--json",)]
    if "--json" in sys.argv:
        i = sys.argv.index("--json")
        passthrough = sys.argv[1:i] + sys.argv[i + 2:]
    rows = {s: [] for s in sides}
    for r in range(args.rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for side in order:
            out = subprocess.run([sys.executable, __file__, *passthrough, "--child", side], capture_output=True, text=True)
            if out.returncode != 0:
                sys.stderr.write(out.stdout + out.stderr)
                sys.exit(f"{side} round {r + 1} failed")
            stages = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
            rows[side].append(stages)
            print(f"round {r + 1} {side}: " + ", ".join(f"{s['stage']} {s['after_mib']:.0f}/{s['peak_mib']:.0f}" for s in stages),
                  flush=True)

    what = {"sam2": f"SAM2 {args.encoder.name} + {args.decoder.name}, 1920x1080 BGR, {args.clicks} clicks",
            "unet": f"UNet {args.model.name}, {args.size[0]}x{args.size[1]} RGB, 1 + {args.runs} runs",
            "track": f"SAM2 video {args.video}, {args.frames} frames 1280x720, 1 object"}[args.pipeline]
    segrt_opts = f"max_sessions {args.max_sessions if args.max_sessions is not None else 'default'}, arena {args.arena}"
    print(f"\n{what}; segrt: {segrt_opts}; {args.rounds} rounds, sides alternating; MiB, each round's figure")
    print(f"| stage | {' | '.join(f'{s} peak | {s} after' for s in sides)} |")
    print("|---|" + "---|---|" * len(sides))
    for i, stage in enumerate(rows[sides[0]][0]):
        cells = []
        for s in sides:
            peaks = ", ".join(f"{run[i]['peak_mib']:.0f}" for run in rows[s])
            afters = ", ".join(f"{run[i]['after_mib']:.0f}" for run in rows[s])
            cells += [peaks, afters]
        print(f"| {stage['stage']} | {' | '.join(cells)} |")
    timed = [k for k in ("click_ms", "run_ms", "frame_ms") if k in rows[sides[0]][0][-2]]
    for s in sides:
        for k in timed:
            print(f"{s} {k}: " + ", ".join(f"{run[-2][k]:.1f}" for run in rows[s]))
        for k, stage in enumerate(rows[s][0]):
            if stage["stage"].startswith(("encode", "first")):
                print(f"{s} {stage['stage']} ms: " + ", ".join(f"{run[k]['ms']:.0f}" for run in rows[s]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(args=vars(args) | {"model": str(args.model), "encoder": str(args.encoder),
                                              "decoder": str(args.decoder), "video": str(args.video),
                                              "cache_dir": str(args.cache_dir)}, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
