#!/usr/bin/env bash
# GPU check, the one command to prove segrt on an NVIDIA GPU: the providers the GPU build offers and
# whether CUDA initialises; for the demo UNet, the tiny SAM2 fixtures (fp32 and fp16 encoders) and, when
# present, the real-size hiera-tiny encoders: the provider in use, ONNX Runtime's nodes per provider
# (the operators it left to the CPU), and the latency on CUDA against the CPU (`segrt bench`); then
# the GPU memory over 1000 UNet runs (nvidia-smi); where TensorRT initialises, the shape profiles it
# is given and its engine build at the first start against the cache at the second. Exits non-zero when CUDA does not initialise, a
# session is not on CUDA, or (STRICT=1) ONNX Runtime placed nodes on the CPU.
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
#   GPU_ARGS="--conv-search exhaustive --gpu-mem-limit 2048" scripts/gpu-check.sh
#                                           # segrt's GPU options for every CUDA bench
#   CPU=0 / MEMORY_RUNS=0                   # skip the CPU comparison / the 1000-run memory check
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
# shellcheck disable=SC2206
gpu_args=(${GPU_ARGS:-})
[ "$provider" = cpu ] && gpu_args=()
# field FILE KEY: a string member of a bench report.
field() { tr -d '\n' < "$1" | grep -o "\"$2\": *\"[^\"]*\"" | head -1 | sed 's/.*: *"//; s/"$//'; }
# latency FILE: the median of one run in the report's first throughput line (ms), as segrt prints it.
latency() { tr -d '\n ' < "$1" | grep -o '"runs_per_second":[0-9.]*' | head -1 | sed 's/.*://' | awk '{ if ($1 > 0) printf "%.1f ms", 1000 / $1; else print "?" }'; }
# bench NAME ARGS...: one `segrt bench` on the provider checked (and on the CPU for comparison), with
# the provider it used and the nodes ONNX Runtime gave each provider.
bench() {
  local name=$1; shift
  echo "== $name"
  if ! "$segrt" bench "$@" --provider "$provider" "${gpu_args[@]}" --threads 1 --runs "$runs" --json "$out/$name.json" > "$out/$name.txt"; then
    cat "$out/$name.txt"; echo "gpu-check: FAIL: $name: segrt bench failed"; failed=1; return
  fi
  local used nodes cpu=""
  used=$(field "$out/$name.json" provider_in_use)
  nodes=$(grep "nodes per provider" "$out/$name.txt" | sed 's/^ *//' || true)
  if [ "${CPU:-1}" = 1 ] && [ "$provider" != cpu ] && "$segrt" bench "$@" --provider cpu --threads 1 --runs "$runs" --json "$out/$name.cpu.json" > /dev/null; then
    cpu=", CPU $(latency "$out/$name.cpu.json")"
  fi
  echo "   provider in use: $used"
  [ -n "$nodes" ] && echo "   $nodes"
  echo "   one run: $want $(latency "$out/$name.json")$cpu"
  case "$used" in
    "$want") ;;
    "$want (partly"*)
      echo "gpu-check: WARNING: $name: ONNX Runtime left nodes to the CPU (see the operators above)"
      [ "${STRICT:-0}" = 1 ] && failed=1 ;;
    *) echo "gpu-check: FAIL: $name ran on '$used', not $want"; failed=1 ;;
  esac
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

# TensorRT, where it initialises (TRT=0 skips it): the shape profile segrt gives a UNet with dynamic
# axes (tiles of 256x256, batches of up to 4), the first start (engines built) against the second
# (loaded from the cache folder), and a SAM2 pair's encoder and decoder profiles.
if [ "${TRT:-1}" = 1 ] && [ "$provider" != cpu ] \
  && tr -d '\n ' < "$out/providers.json" | grep -q "\"name\":\"TensorRT:$device\"[^}]*\"initialises\":true"; then
  echo "== TensorRT"
  cache=$out/trt-cache
  rm -rf "$cache"
  for start in first second; do
    t0=$(date +%s%N)
    if ! "$segrt" unet --model models/test/unet_dynamic.onnx --provider "tensorrt:$device" --trt-cache "$cache" \
      --tile on --tile-size 256x256 --tile-overlap 32 --tile-batch 4 --out "$out/trt-unet" models/samples/lesion_03.png > "$out/trt-$start.txt" 2>&1; then
      cat "$out/trt-$start.txt"; echo "gpu-check: FAIL: TensorRT UNet ($start start)"; failed=1; break
    fi
    echo "   $start start: $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(grep -m1 "TensorRT shape profile" "$out/trt-$start.txt" || echo "no profile line")"
  done
  s2=models/sam2
  if "$segrt" sam2 --encoder "$s2/sam2_tiny_sam2onnx_encoder.onnx" --decoder "$s2/sam2_tiny_sam2onnx_batched_decoder.onnx" \
    --provider "tensorrt:$device" --trt-cache "$cache" --point 200,150 --out "$out/trt-sam2.png" models/samples/lesion_03.png > "$out/trt-sam2.txt" 2>&1; then
    grep "TensorRT shape profile" "$out/trt-sam2.txt" | sed 's/^/   /'
  else
    cat "$out/trt-sam2.txt"; echo "gpu-check: FAIL: TensorRT SAM2 click"; failed=1
  fi
fi

# GPU memory over many runs: sampled by nvidia-smi every 200 ms while one process runs the UNet
# MEMORY_RUNS times; a leak shows as the last samples above the first ones after warm-up.
memory_runs=${MEMORY_RUNS:-1000}
if [ "$memory_runs" -gt 0 ] && [ "$provider" != cpu ] && command -v nvidia-smi >/dev/null; then
  echo "== GPU memory over $memory_runs UNet runs"
  nvidia-smi --id="$device" --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$out/memory.csv" &
  sampler=$!
  "$segrt" bench --model models/demo_unet.onnx --provider "$provider" "${gpu_args[@]}" --threads 1 --runs "$memory_runs" > /dev/null || failed=1
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  awk 'NF { v[n++] = $1 } END {
         if (n < 8) { print "   too few samples (" n ")"; exit }
         q = int(n / 4); a = 0; b = 0
         for (i = q; i < 2 * q; i++) if (v[i] > a) a = v[i]
         for (i = n - q; i < n; i++) if (v[i] > b) b = v[i]
         printf "   GPU memory used (MiB): %d samples; after warm-up %d, at the end %d (%+d)\n", n, a, b, b - a }' "$out/memory.csv"
fi

echo "figures in $out/*.json"
if [ "$failed" != 0 ]; then echo "gpu-check: FAIL"; exit 1; fi
echo "gpu-check: OK: every session ran on $want"
