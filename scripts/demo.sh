#!/usr/bin/env bash
# The main job on the bundled model: fetch ONNX Runtime if missing, build, segment the bundled
# samples with the bundled demo UNet, write masks and overlays (default: out/demo/).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/fetch-ort.sh
cargo build --release --bin segrt
./target/release/segrt demo "$@"
