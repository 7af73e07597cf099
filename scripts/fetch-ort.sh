#!/usr/bin/env bash
# Fetches the official ONNX Runtime library (the version in scripts/ort-version.txt) from its PyPI wheel into .onnxruntime/ (ignored by git).
# Nothing binary is committed; segrt finds this folder in development builds (see src/runtime.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$(tr -d "[:space:]" < scripts/ort-version.txt)  # the one place the version is written
DEST=.onnxruntime
LIB=libonnxruntime.so.$VERSION
if [ -f "$DEST/$LIB" ]; then
  echo "ONNX Runtime $VERSION already in $DEST/"
  exit 0
fi
mkdir -p "$DEST"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "fetching onnxruntime==$VERSION wheel from PyPI ..."
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$TMP" "onnxruntime==$VERSION"
WHEEL=$(ls "$TMP"/onnxruntime-*.whl | head -n 1)
python3 - "$WHEEL" "$DEST" "$LIB" <<'PY'
import sys, zipfile, os
wheel, dest, lib = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    data = z.read(f"onnxruntime/capi/{lib}")
with open(os.path.join(dest, lib), "wb") as f:
    f.write(data)
PY
sha256sum "$DEST/$LIB" | tee "$DEST/SHA256SUMS"
echo "ONNX Runtime $VERSION -> $DEST/$LIB"
