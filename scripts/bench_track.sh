#!/usr/bin/env bash
# SAM2 video tracking benchmark: segrt (examples/bench_track.rs) against the official
# predictor's rules on the same ONNX modules in Python with ONNX Runtime (models/sam2/bench_video_ort.py,
# which runs models/sam2/video_ort_tracker.py), on synthetic frames, alternating Rust then Python for
# --rounds rounds; then the per-module ratio segrt / Python of the per-frame medians and the memory
# held. Figures only, no assertions.
#
#   scripts/bench_track.sh [--frames 100] [--objects 1|2] [--rounds 2] [--warmup 3] [--keep-all]
#                          [--models DIR] [--width 1280 --height 720] [--arena default|segrt] [--out DIR]
#
# --keep-all adds a segrt run with --keep-frames all (every frame's encoder outputs kept, as the
# official predictor) for the memory contrast. --arena segrt gives the Python side segrt's memory
# arena (one shared CPU arena, blocks sized as requested) instead of ONNX Runtime's default.
# Needs the real-size video modules:
#   .venv-torch/bin/python models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video
# Python: $PYTHON (default .venv/bin/python: numpy, onnxruntime 1.31.1, pillow).
set -euo pipefail
cd "$(dirname "$0")/.."

frames=100 objects=1 rounds=2 warmup=3 keep_all=0 arena=default models=models/sam2/real-size/video width=1280 height=720 out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --objects) objects=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --keep-all) keep_all=1; shift ;;
        --arena) arena=$2; shift 2 ;;
        --models) models=$2; shift 2 ;;
        --width) width=$2; shift 2 ;;
        --height) height=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "bench_track.sh: unknown argument '$1' (see the top of $0)" >&2; exit 2 ;;
    esac
done
PYTHON=${PYTHON:-.venv/bin/python}
out=${out:-$(mktemp -d)}
mkdir -p "$out"

cargo build --release --example bench_track
common=(--models "$models" --frames "$frames" --objects "$objects" --width "$width" --height "$height" --warmup "$warmup")
for r in $(seq 1 "$rounds"); do
    echo "== round $r: segrt"
    ./target/release/examples/bench_track "${common[@]}" --json "$out/segrt_$r.json"
    echo "== round $r: Python + ONNX Runtime"
    "$PYTHON" models/sam2/bench_video_ort.py "${common[@]}" --arena "$arena" --json "$out/python_$r.json"
done
if [ "$keep_all" = 1 ]; then
    echo "== segrt, --keep-frames all"
    ./target/release/examples/bench_track "${common[@]}" --keep-frames all --json "$out/segrt_keep_all.json"
fi

"$PYTHON" - "$out" "$rounds" <<'EOF'
import json, os, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda name: json.load(open(os.path.join(out, name)))
rs = [load(f"segrt_{r}.json") for r in range(1, rounds + 1)]
py = [load(f"python_{r}.json") for r in range(1, rounds + 1)]
print(f"\n== per frame, median ms over frames {rs[0]['warmup']}..{rs[0]['frames'] - 1} of each run "
      f"({rs[0]['objects']} object(s); rounds separated by /)")
print(f"  {'module':<18} {'segrt':>20} {'Python + ORT':>20} {'segrt / Python':>15}")
for m in ["preprocess", "image_encoder", "memory_attention", "mask_decoder", "memory_encoder", "postprocess", "other",
          "total"]:
    a = [x["per_frame_ms"][m]["median"] for x in rs]
    b = [x["per_frame_ms"][m]["median"] for x in py]
    ratio = sum(a) / sum(b) if sum(b) > 0 else float("nan")
    print(f"  {m:<18} {' / '.join(f'{v:.1f}' for v in a):>20} {' / '.join(f'{v:.1f}' for v in b):>20} {ratio:>15.2f}")
runs = [("segrt keep %s (round 1)" % rs[0]["keep_frames"], rs[0]), ("Python, every frame kept (round 1)", py[0])]
if os.path.exists(os.path.join(out, "segrt_keep_all.json")):
    runs.append(("segrt keep all", load("segrt_keep_all.json")))
print("\n== memory: RSS MiB / held frames / held outputs after N frames")
for name, x in runs:
    cells = "  ".join(f"{m['frame']}: {m['rss_mib']:.0f} / {m['held_frames']} / {m['held_outputs']}" for m in x["memory"])
    print(f"  {name:<36} loaded {x['rss_loaded_mib']:.0f}  {cells}")
print(f"\n(JSON in {out})")
EOF
