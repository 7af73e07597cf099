#!/usr/bin/env bash
# The main job on the bundled model: fetch ONNX Runtime if missing, build, segment the bundled
# samples with the bundled demo UNet, write masks and overlays (default: out/demo/).
# SEGRT_BIN=path/to/segrt uses that segrt instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/fetch-ort.sh
if [ -n "${SEGRT_BIN:-}" ]; then
  SEGRT=$SEGRT_BIN
else
  cargo build --release --bin segrt
  SEGRT=./target/release/segrt
fi
"$SEGRT" demo "$@"
