#!/usr/bin/env bash
# GPU check: runs segrt with the CUDA provider on the demo UNet, the tiny SAM2 fixtures (fp32 and fp16
# encoders) and, when present, the real-size fp32/fp16 hiera-tiny encoders; prints the provider each
# session actually uses and the timings (`segrt bench`), and exits non-zero if CUDA is unavailable or
# any session runs on something other than CUDA.
#
# UNTESTED ON A GPU: written on a machine without one; it has never run on a GPU. Checked only with
# bash -n, the CPU dry run below, and the CPU build in place of the GPU one (exits 1: CUDA does not
# initialise). Expect to fix small things the first time.
#
# Needs: an NVIDIA GPU with its driver (libcuda.so.1), ONNX Runtime's GPU build plus the CUDA 13
# runtime wheels (cuBLAS, cuDNN 9, ...) in .onnxruntime-gpu/ (`scripts/fetch-ort-gpu.sh --with-cuda`,
# run here when the folder lacks them unless FETCH=0), and a segrt binary (SEGRT, default
# target/release/segrt, built when missing).
#
#   scripts/gpu-check.sh [DEVICE_ID]        # e.g. scripts/gpu-check.sh 0; RUNS=20 by default
#   PROVIDER=cpu ORT_LIB=$PWD/.onnxruntime/libonnxruntime.so.1.31.1 scripts/gpu-check.sh
#                                           # dry run of the script's own steps on the CPU (no GPU check)
set -euo pipefail
cd "$(dirname "$0")/.."
device=${1:-0}
runs=${RUNS:-20}
version=$(tr -d "[:space:]" < scripts/ort-version.txt)
# ORT_LIB: another ONNX Runtime library to use instead (then nothing is fetched).
ort=${ORT_LIB:-$PWD/.onnxruntime-gpu/libonnxruntime.so.$version}
segrt=${SEGRT:-target/release/segrt}
out=${OUT_DIR:-out/gpu-check}
provider=${PROVIDER:-cuda:$device}
want=CUDA:$device
[ "$provider" = cpu ] && want=CPU
mkdir -p "$out"

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(no nvidia-smi)"
if [ -z "${ORT_LIB:-}" ] && { [ ! -f "$ort" ] || ! ls .onnxruntime-gpu/libcudnn.so.9* >/dev/null 2>&1; }; then
  [ "${FETCH:-1}" = 1 ] || { echo "gpu-check: $ort or cuDNN missing (FETCH=0)"; exit 2; }
  scripts/fetch-ort-gpu.sh --with-cuda
fi
[ -x "$segrt" ] || cargo build --release --bin segrt
export SEGRT_ORT_PATH=$ort

echo "== providers (ONNX Runtime from $ort)"
"$segrt" providers --device "$device"
"$segrt" providers --device "$device" --json > "$out/providers.json"
# One line per provider in the JSON: the CUDA entry must say it initialises.
if ! tr -d '\n ' < "$out/providers.json" | grep -q "\"name\":\"$want\"[^}]*\"initialises\":true"; then
  echo "gpu-check: FAIL: $want does not initialise (see the reason above)"; exit 1
fi

failed=0
# bench NAME ARGS...: one `segrt bench` on CUDA, its figures and the provider it used.
bench() {
  local name=$1; shift
  echo "== $name"
  if ! "$segrt" bench "$@" --provider "$provider" --threads 1,2 --runs "$runs" --json "$out/$name.json"; then
    echo "gpu-check: FAIL: $name: segrt bench failed"; failed=1; return
  fi
  local used
  used=$(tr -d '\n' < "$out/$name.json" | grep -o '"provider_in_use": *"[^"]*"' | sed 's/.*: *"//; s/"$//')
  echo "   provider in use: $used"
  if [ "$used" != "$want" ]; then
    echo "gpu-check: FAIL: $name ran on '$used', not $want"; failed=1
  fi
}

s=models/sam2
bench unet --model models/demo_unet.onnx
for c in samexporter sam2onnx osam; do
  bench "sam2_${c}.fp32" --encoder "$s/sam2_tiny_${c}_encoder.onnx" --decoder "$s/sam2_tiny_${c}_decoder.onnx"
done
# the one committed fp16 fixture (the conversion does not depend on the convention)
bench sam2_samexporter.fp16 --encoder "$s/sam2_tiny_samexporter_encoder.fp16.onnx" --decoder "$s/sam2_tiny_samexporter_decoder.onnx"
r=$s/real-size/sam2_tiny_random_1024_samexporter
if [ -f "${r}_encoder.onnx" ]; then
  bench sam2_real_fp32 --encoder "${r}_encoder.onnx" --decoder "${r}_decoder.onnx"
  [ -f "${r}_encoder.fp16.onnx" ] || python3 $s/convert_fp16.py "${r}_encoder.onnx" "${r}_encoder.fp16.onnx" || true
  [ -f "${r}_encoder.fp16.onnx" ] && bench sam2_real_fp16 --encoder "${r}_encoder.fp16.onnx" --decoder "${r}_decoder.onnx"
else
  echo "(no $s/real-size: export it with models/sam2/export_sam2.py --real-size for real-size GPU figures)"
fi

echo "figures in $out/*.json"
if [ "$failed" != 0 ]; then echo "gpu-check: FAIL"; exit 1; fi
echo "gpu-check: OK: every session ran on $want"
