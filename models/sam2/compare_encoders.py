#!/usr/bin/env python3
"""Compares SAM2 encoders (fp32 reference vs INT8 / fp16 variants) on speed and mask agreement.

Masks: every encoder is paired with the SAME decoder and run through segrt's command line
(`segrt sam2 --encoder E --decoder D --point X,Y --out mask.png IMAGE`), one call per click, on
generated images (seeded, see quantize_encoder.synthetic_image) with a fixed set of clicks per image;
the IoU of each variant's full-size binary mask with the fp32 encoder's mask on the same click is
reported (both empty counts as IoU 1). This also proves segrt accepts each file under the convention
it recognises (printed from segrt's own output). segrt's encoder time per call is collected too.

Speed: each encoder alone in ONNX Runtime's Python API (same library version as segrt), on one
pre-processed input, at each --threads count, the encoders alternating run by run so that all see
the same machine load; medians.

Example (from the repository root):
  python models/sam2/compare_encoders.py --segrt target/release/segrt \\
      --decoder models/sam2/real-size/sam2_tiny_random_1024_samexporter_decoder.onnx \\
      --reference models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.onnx \\
      --variant int8=models/sam2/real-size/sam2_tiny_random_1024_samexporter_encoder.int8.onnx \\
      --json out/compare.json
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantize_encoder import encoder_image_input, encoder_input, synthetic_image  # noqa: E402

IMAGE_SIZES = [(640, 480), (480, 640), (800, 600), (1024, 576), (512, 512), (960, 540)]


def clicks_for(seed, width, height, count):
    """Fixed clicks (x, y) in image pixels, away from the border."""
    rng = np.random.default_rng(10_000 + seed)
    return [(int(rng.uniform(0.1, 0.9) * width), int(rng.uniform(0.1, 0.9) * height)) for _ in range(count)]


def segrt_mask(segrt, ort, encoder, decoder, image, click, out, threads):
    cmd = [segrt] + (["--ort", ort] if ort else []) + [
        "sam2", "--threads", str(threads), "--encoder", encoder, "--decoder", decoder,
        "--point", f"{click[0]},{click[1]}", "--out", out, image]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"segrt failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    conv = re.search(r"convention (\S+); provider (\S+)", r.stderr)
    enc = re.search(r"encoder ([0-9.]+) ms", r.stderr)
    from PIL import Image

    return np.asarray(Image.open(out)) > 127, conv.group(1) if conv else "?", float(enc.group(1)) if enc else None


def iou(a, b):
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def time_encoders(paths, threads, runs):
    import onnxruntime as ort
    import onnx

    name, size, dtype = encoder_image_input(onnx.load(paths[0], load_external_data=False))
    x = encoder_input(synthetic_image(0, 800, 600), size, dtype)
    result = {}
    for t in threads:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = t
        opts.inter_op_num_threads = 1
        sessions = [ort.InferenceSession(p, opts, providers=["CPUExecutionProvider"]) for p in paths]
        for s in sessions:
            s.run(None, {name: x})  # warm-up
        times = [[] for _ in paths]
        for _ in range(runs):
            for i, s in enumerate(sessions):
                t0 = time.perf_counter()
                s.run(None, {name: x})
                times[i].append((time.perf_counter() - t0) * 1e3)
        result[t] = [statistics.median(v) for v in times]
        result[f"{t}_all"] = times
        del sessions
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segrt", required=True, help="segrt command-line tool")
    ap.add_argument("--ort", help="ONNX Runtime library for segrt (--ort)")
    ap.add_argument("--decoder", required=True, help="the decoder every encoder is paired with")
    ap.add_argument("--reference", required=True, help="fp32 encoder")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PATH", help="encoder to compare (repeatable)")
    ap.add_argument("--images", type=int, default=4, help="generated images for the masks (0: speed figures only)")
    ap.add_argument("--clicks", type=int, default=8, help="clicks per image")
    ap.add_argument("--threads", default="1,2", help="intra-op threads for the speed figures, comma-separated")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per encoder and thread count (0: no speed figures)")
    ap.add_argument("--no-speed", dest="speed_variants", action="append", default=[], metavar="LABEL",
                    help="leave this variant out of the speed figures (e.g. fp16 on a CPU)")
    ap.add_argument("--segrt-threads", type=int, default=2, help="--threads for the segrt mask calls")
    ap.add_argument("--json", help="write every figure here")
    args = ap.parse_args()

    variants = [v.split("=", 1) for v in args.variant]
    encoders = [("fp32", args.reference)] + [(l, p) for l, p in variants]
    report = {"decoder": args.decoder, "encoders": dict(encoders), "images": [], "iou": {}, "segrt_encoder_ms": {}}

    with tempfile.TemporaryDirectory() as tmp:
        from PIL import Image

        masks = {label: [] for label, _ in encoders}
        seg_ms = {label: [] for label, _ in encoders}
        for i in range(args.images):
            w, h = IMAGE_SIZES[i % len(IMAGE_SIZES)]
            img_path = os.path.join(tmp, f"img{i}.png")
            Image.fromarray(synthetic_image(100 + i, w, h)).save(img_path)
            clicks = clicks_for(i, w, h, args.clicks)
            report["images"].append({"seed": 100 + i, "size": [w, h], "clicks": clicks})
            for c, click in enumerate(clicks):
                for label, enc in encoders:
                    m, conv, ms = segrt_mask(args.segrt, args.ort, enc, args.decoder, img_path, click,
                                             os.path.join(tmp, "m.png"), args.segrt_threads)
                    masks[label].append(m)
                    if ms is not None:
                        seg_ms[label].append(ms)
                    report.setdefault("conventions", {})[label] = conv
            print(f"image {i} ({w}x{h}): {len(clicks)} clicks done", flush=True)
        ref = masks["fp32"]
        report["fp32_mask_area_fraction"] = [float(m.mean()) for m in ref]
        for label, _ in encoders[1:] if args.images > 0 else []:
            ious = [iou(a, b) for a, b in zip(ref, masks[label])]
            report["iou"][label] = {"mean": statistics.mean(ious), "median": statistics.median(ious), "min": min(ious),
                                    "share_over_0.9": sum(v > 0.9 for v in ious) / len(ious), "all": ious}
        report["segrt_encoder_ms"] = {l: statistics.median(v) for l, v in seg_ms.items() if v}

    if args.images > 0:
        print(f"segrt recognised: {report['conventions']}")
        areas = report["fp32_mask_area_fraction"]
        print(f"fp32 mask area (fraction of the image) over {len(areas)} clicks: min {min(areas):.3f} "
              f"median {statistics.median(areas):.3f} max {max(areas):.3f}")
        for label, r in report["iou"].items():
            print(f"IoU {label} vs fp32 over {len(r['all'])} clicks: mean {r['mean']:.4f} median {r['median']:.4f} "
                  f"min {r['min']:.4f}, {100 * r['share_over_0.9']:.0f}% over 0.9")
        print(f"segrt encoder time per call (median, --threads {args.segrt_threads}, ms): "
              + ", ".join(f"{l} {v:.0f}" for l, v in report["segrt_encoder_ms"].items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)

    if args.runs > 0:
        timed = [(l, p) for l, p in encoders if l not in args.speed_variants]
        threads = [int(t) for t in args.threads.split(",")]
        speed = time_encoders([p for _, p in timed], threads, args.runs)
        report["speed_ms"] = {str(t): dict(zip([l for l, _ in timed], speed[t])) for t in threads}
        report["speed_ms_all"] = {str(t): dict(zip([l for l, _ in timed], speed[f"{t}_all"])) for t in threads}
        report["load_average_after"] = os.getloadavg()
        for t in threads:
            base = speed[t][0]
            print(f"encoder, ONNX Runtime {t} thread(s), median of {args.runs}: "
                  + ", ".join(f"{l} {v:.0f} ms (x{base / v:.2f})" for (l, _), v in zip(timed, speed[t])))
        print(f"load average after: {report['load_average_after']}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
