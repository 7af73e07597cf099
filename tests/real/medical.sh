#!/usr/bin/env bash
# The CLI on the real DICOM and NIfTI files fetched by scripts/fetch-real-weights.sh (pydicom 3.0.2's
# CT_small/MR_small/MR_small_RLE, nibabel 5.4.2's anatomical.nii): what each file says is read as it
# says (signed data, the rescale, the file's window), a compressed one is refused in one line, and a
# NIfTI volume's mask volume keeps its header. Uses the demo UNet (about a second in all).
#
#   tests/real/medical.sh [SEGRT]   (default target/debug/segrt)
set -euo pipefail
cd "$(dirname "$0")/../.."
segrt=${1:-target/debug/segrt}
python=${PYTHON:-.venv/bin/python}
M=.real-weights/medical
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "medical: FAIL: $*"; exit 1; }
run() { "$segrt" unet --model models/demo_unet.onnx --out "$out/$1" "${@:2}" 2>&1; }

log=$(run ct "$M/CT_small.dcm") || fail "CT_small: $log"
grep -q 'DICOM 128x128, signed 16-bit stored in 16 bits, rescale v \* 1 + -1024' <<<"$log" || fail "CT_small: $log"
log=$(run mr "$M/MR_small.dcm") || fail "MR_small: $log"
grep -q 'window from the file: WindowCenter 600, WindowWidth 1600' <<<"$log" || fail "MR_small: $log"
# The same MR slice in explicit big endian and implicit VR little endian: the same mask.
for syntax in bigendian implicit; do
  log=$(run "mr_$syntax" "$M/MR_small_$syntax.dcm") || fail "MR_small_$syntax: $log"
  cmp -s "$out/mr/MR_small_mask.png" "$out/mr_$syntax/MR_small_${syntax}_mask.png" || fail "MR_small_$syntax: another mask than MR_small's"
done
if log=$(run rle "$M/MR_small_RLE.dcm"); then fail "MR_small_RLE accepted: $log"; fi
grep -q '(RLE Lossless) is compressed' <<<"$log" || fail "MR_small_RLE: $log"
[ "$(wc -l <<<"$log")" = 1 ] || fail "MR_small_RLE: more than one line: $log"
[ ! -e "$out/rle" ] || fail "MR_small_RLE: the refused run wrote $out/rle"
log=$(run nii "$M/anatomical.nii") || fail "anatomical.nii: $log"
grep -q 'NIfTI volume 33x41x25, datatype 4' <<<"$log" || fail "anatomical.nii: $log"
"$python" - "$M/anatomical.nii" "$out/nii/anatomical_mask.nii" <<'PY' || fail "anatomical.nii: the mask volume's header"
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
changed = set(range(70, 74)) | set(range(108, 120)) | set(range(124, 132))
diff = [o for o in range(348) if a[o] != b[o] and o not in changed]
assert not diff, f"header bytes {diff} differ"
assert len(b) == 352 + 33 * 41 * 25, len(b)
PY
echo "medical: CT_small (signed, HU), MR_small (file window; big endian and implicit VR alike), MR_small_RLE (refused), anatomical.nii (mask volume header) ok"
