#!/usr/bin/env bash
# Tests on real trained models and real pictures, fetched at run time (never committed):
#   1. parity of segrt (C ABI) with plain onnxruntime + numpy + Pillow references: the MobileSAM-class
#      SAM pair, U^2-Net-P and the PP-OCR text detector on real photos, RGB, BGR and gray buffers;
#   2. accuracy of the SAM pair on the 125 labelled nuclei of stardist's DSB-2018 image;
#   3. the CLI on real DICOM and NIfTI files (tests/real/medical.sh);
#   4. `segrt sam2 --everything` on the SAM pair against segment_anything's automatic mask generator
#      ported to onnxruntime + numpy (tests/real/everything_sam1.py).
# When a registry cannot be reached, scripts/fetch-real-weights.sh exits 3: then this prints one line
# and succeeds, unless SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI), which fails instead.
#
#   tests/real/run.sh [--lib PATH]   (default target/debug/libsegrt.so; PYTHON defaults to .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
lib=target/debug/libsegrt.so
if [ "${1:-}" = "--lib" ]; then lib=$2; fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
./scripts/fetch-real-weights.sh >"$log" 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then
  if [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" = 1 ]; then
    cat "$log"
    echo "real weights: registry unreachable, and SEGRT_REQUIRE_REAL_WEIGHTS=1 asks for the tests to run: failing"
    exit 1
  fi
  echo "real weights: skipped (registry unreachable)"
  exit 0
elif [ "$rc" -ne 0 ]; then
  cat "$log"
  exit "$rc"
fi
tail -n 1 "$log"

start=$(date +%s)
status=0
"$python" tests/real/parity_real.py --lib "$lib" || status=1
"$python" tests/real/accuracy_nuclei.py --lib "$lib" || status=1
# 3. and 4.: the CLI (the segrt beside the library) on real DICOM and NIfTI files (about a second),
# and segment-everything on two photos against its reference (a 6x6 grid: one decoder run per point).
segrt_bin="$(dirname "$lib")/segrt"
if [ -x "$segrt_bin" ]; then
  tests/real/medical.sh "$segrt_bin" || status=1
  t=$(date +%s)
  "$python" tests/real/everything_sam1.py --segrt "$segrt_bin" || status=1
  echo "everything on the SAM pair: $(( $(date +%s) - t )) s"
else
  echo "medical, everything: skipped ($segrt_bin not built)"
fi
echo "real weights: tests took $(( $(date +%s) - start )) s"
exit "$status"
