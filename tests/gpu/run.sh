#!/usr/bin/env bash
# The GPU provider paths on a machine without a GPU: ONNX Runtime's GPU build (onnxruntime-gpu) with
# NVIDIA's CUDA 13 / cuDNN 9 runtime wheels from PyPI (scripts/fetch-ort-gpu.sh --with-cuda, kept in
# .onnxruntime-gpu/), each case under REQUIRE (SEG_PROVIDER_UNAVAILABLE through the C ABI; the CLI's
# error: a plain reason, then ONNX Runtime's text) and FALLBACK (a CPU session with the reason in the
# session info and the log; the CLI writes the mask; `segrt providers` gives the same reason):
#   a. the GPU build alone: the first CUDA library missing is named (libcublasLt.so.13);
#   b. with the CUDA and cuDNN libraries, no driver: "no NVIDIA driver is installed"; also a SAM2
#      decoder alone on CUDA (--decoder-provider), the encoder on the CPU;
#   c. with Debian's driver library (libcuda1 535 from bookworm non-free, checked against the signed
#      archive index, unpacked with dpkg-deb -x, not installed, on LD_LIBRARY_PATH): the driver is too
#      old for CUDA 13; ONNX Runtime's text names the option it was parsing (device_id, from segrt);
#   d. TensorRT: TensorRT's libnvinfer.so.10 is named; the shape profile of a tiled dynamic UNet is
#      derived and reported on the TensorRT path;
#   f. a GeForce GTX 1050 (compute capability 6.1, the stub NVIDIA driver of tests/gpu/stub_cuda) under this
#      CUDA 13 build: refused before the provider is registered, naming the build that runs it (the CUDA 12
#      build 1.24.4 with cuDNN 9.10); FALLBACK runs on the CPU; an RTX 3060 (8.6) passes segrt's check;
#   e. segrt's preload list against ONNX Runtime's own list, the provider libraries' NEEDED entries and
#      the Windows wheel's import tables, and the loader's log of a run (tests/gpu/preload_check.py).
# A failure while ONNX Runtime creates the session (after the provider registered) is provoked by the
# faults stage (an injected fault), which checks that it falls back too.
# The Debian archive out of reach skips c in one line; outputs go to out/gpu/.
#
#   tests/gpu/run.sh [--release]   (target/debug/segrt and libsegrt.so, built by the rust stage; or the
#                                   release build's: what is checked does not depend on the profile)
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=debug
[ "${1:-}" = "--release" ] && profile=release
segrt=$PWD/target/$profile/segrt
lib=$PWD/target/$profile/libsegrt.so
python=${PYTHON:-.venv/bin/python}
version=$(tr -d "[:space:]" < scripts/ort-version.txt)
gpu=$PWD/.onnxruntime-gpu
ort=$gpu/libonnxruntime.so.$version
model=models/demo_unet.onnx
image=models/samples/lesion_01.png
out=$PWD/out/gpu
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS

if [ ! -f "$ort" ] || [ ! -f "$gpu/libcudnn.so.9" ] || [ ! -f "$gpu/python/__init__.py" ]; then
  fetch_start=$SECONDS
  scripts/fetch-ort-gpu.sh --with-cuda > "$out/fetch.log"
  echo "fetched the GPU build and the CUDA/cuDNN wheels in $(( SECONDS - fetch_start )) s: $(du -sh "$gpu" | cut -f1)"
fi
# The Windows wheel's provider DLLs, for their import tables only.
windows=$gpu/windows
if [ ! -f "$windows/onnxruntime_providers_tensorrt.dll" ]; then
  fetch_start=$SECONDS
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --platform win_amd64 \
    --python-version 3.12 -d "$out/windows-wheel" "onnxruntime-gpu==$version"
  python3 - "$out"/windows-wheel/*.whl "$windows" <<'PY'
import pathlib, sys, zipfile
dest = pathlib.Path(sys.argv[2])
dest.mkdir(exist_ok=True)
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith("onnxruntime/capi/onnxruntime_providers_") and name.endswith(".dll"):
            (dest / name.rsplit("/", 1)[-1]).write_bytes(z.read(name))
PY
  rm -rf "$out/windows-wheel"
  echo "fetched the Windows GPU wheel's provider DLLs in $(( SECONDS - fetch_start )) s"
fi
# a. ONNX Runtime's own files alone, in a folder of their own (hard links: no copy of 300 MB).
ort_only=$out/ort-only
mkdir -p "$ort_only"
for f in "$gpu"/libonnxruntime*.so*; do ln -f "$f" "$ort_only/" 2>/dev/null || cp "$f" "$ort_only/"; done

failed=0
fail() { echo "  FAIL: $*"; failed=1; }
# run NAME WANT_RC COMMAND...: the command's output in out/gpu/NAME.log, quoted in the stage's log.
run() {
  local name=$1 want=$2 rc=0
  shift 2
  "$@" > "$out/$name.log" 2>&1 || rc=$?
  sed 's/^/    | /' "$out/$name.log"
  [ "$rc" = "$want" ] || fail "$name: exit status $rc, expected $want"
}
# expect NAME TEXT: NAME's output holds TEXT.
expect() { grep -qF -- "$2" "$out/$1.log" || fail "$1: no '$2' in its output"; }

# scenario NAME ORT PROVIDER PLAIN: the demo UNet on PROVIDER under REQUIRE and FALLBACK, through the
# CLI and the C ABI; PLAIN is the plain reason segrt must give.
scenario() {
  local name=$1 ort=$2 provider=$3 plain=$4
  local failure="could not be initialised: $plain (ONNX Runtime: "
  echo "-- $name, REQUIRE: segrt unet --provider $provider"
  run "$name.require" 1 "$segrt" unet --ort "$ort" --provider "$provider" --model "$model" --out "$out/$name.require" "$image"
  expect "$name.require" "$failure"
  expect "$name.require" "(policy: require) (execution provider unavailable)"
  echo "-- $name, REQUIRE: seg_create through the C ABI"
  run "$name.c-require" 0 "$python" tests/gpu/c_abi.py "$lib" "$ort" "$model" "$provider" require
  expect "$name.c-require" "status: SEG_PROVIDER_UNAVAILABLE"
  expect "$name.c-require" "seg_last_error: "
  expect "$name.c-require" "$failure"
  echo "-- $name, FALLBACK: segrt unet --provider $provider --fallback"
  run "$name.fallback" 0 "$segrt" unet --ort "$ort" --provider "$provider" --fallback --model "$model" --out "$out/$name.fallback" "$image"
  expect "$name.fallback" "; provider CPU;"
  expect "$name.fallback" "warning: running on the CPU: "
  expect "$name.fallback" "$failure"
  [ -s "$out/$name.fallback/lesion_01_mask.png" ] || fail "$name.fallback: no mask written"
  echo "-- $name, FALLBACK: seg_create through the C ABI, the session info and the log"
  run "$name.c-fallback" 0 "$python" tests/gpu/c_abi.py "$lib" "$ort" "$model" "$provider" fallback
  expect "$name.c-fallback" "status: SEG_OK"
  expect "$name.c-fallback" '"in_use": "CPU"'
  expect "$name.c-fallback" "\"fallback_reason\": \"$(provider_name "$provider") $failure"
  expect "$name.c-fallback" "; running on the CPU (policy: fallback)"
  echo "-- $name: segrt providers (each provider's own session, its reason when it does not initialise)"
  run "$name.providers" 0 "$segrt" providers --ort "$ort"
  expect "$name.providers" "$(provider_name "$provider") $failure"
}
provider_name() { case $1 in cuda) echo "CUDA:0" ;; tensorrt) echo "TensorRT:0" ;; esac; }

echo "== a. the GPU build alone, without the CUDA libraries ($ort_only)"
scenario a "$ort_only/libonnxruntime.so.$version" cuda \
  "the CUDA 13 library libcublasLt.so.13 could not be loaded: put it beside ONNX Runtime (scripts/fetch-ort-gpu.sh --with-cuda fetches the CUDA and cuDNN ones)"

echo "== b. with the CUDA and cuDNN libraries, no NVIDIA driver"
scenario b "$ort" cuda "no NVIDIA driver is installed (libcuda.so.1 not found): install NVIDIA driver 580.65.06 or newer"

# The SAM2 decoder alone on CUDA (--decoder-provider): the same reason, for the decoder; the encoder
# stays on the CPU, and with FALLBACK the click runs with the decoder on the CPU.
sam2=(--encoder models/sam2/sam2_tiny_samexporter_encoder.onnx --decoder models/sam2/sam2_tiny_samexporter_decoder.onnx
      --point 105,105 models/sam2/reference/img0.png)
echo "-- b, REQUIRE: segrt sam2 --decoder-provider cuda"
run b.decoder-require 1 "$segrt" sam2 --ort "$ort" --decoder-provider cuda --out "$out/b.decoder.png" "${sam2[@]}"
expect b.decoder-require "decoder: CUDA:0 could not be initialised: no NVIDIA driver is installed (libcuda.so.1 not found)"
echo "-- b, FALLBACK: segrt sam2 --decoder-provider cuda --fallback"
run b.decoder-fallback 0 "$segrt" sam2 --ort "$ort" --decoder-provider cuda --fallback --out "$out/b.decoder.png" "${sam2[@]}"
expect b.decoder-fallback "; provider CPU; "
expect b.decoder-fallback "warning: the decoder runs on the CPU: CUDA:0 could not be initialised: no NVIDIA driver is installed"
[ -s "$out/b.decoder.png" ] || fail "b.decoder-fallback: no mask written"

echo "== d. TensorRT (not in the wheels: its libraries are missing)"
scenario d "$ort" tensorrt \
  "the TensorRT 10 library libnvinfer.so.10 could not be loaded: install TensorRT 10 for CUDA 13 and put its libraries beside ONNX Runtime"

# The shape profile segrt derives for TensorRT, on the TensorRT path itself (reported although the
# session falls back): a UNet with dynamic axes run in 256x256 tiles, up to 4 per run, gets one; whole
# images at their own size get none, and the reason.
echo "-- d, FALLBACK: the TensorRT shape profile of a tiled UNet with dynamic axes"
run d.profile 0 "$python" tests/gpu/c_abi.py "$lib" "$ort" models/test/unet_dynamic.onnx tensorrt fallback \
  tile_mode=1 tile_width=256 tile_height=256 tile_overlap=32 tile_batch=4
expect d.profile '"tensorrt_profile": "image 1..4x3x256x256"'
expect d.profile "log info: TensorRT shape profile: image 1..4x3x256x256"
echo "-- d, FALLBACK: whole images at their own size: no profile, and why"
run d.no-profile 0 "$python" tests/gpu/c_abi.py "$lib" "$ort" models/test/unet_dynamic.onnx tensorrt fallback
expect d.no-profile "TensorRT shape profile: none: the model's height and width are dynamic and whole images run at their own size"

echo "== e. the preload list"
# The loader's own log of a run on CUDA: who opened which library, and what it searched for by name.
LD_DEBUG=files,libs LD_DEBUG_OUTPUT=$out/ld-debug "$segrt" unet --ort "$ort" --provider cuda --fallback --model "$model" \
  --out "$out/e" "$image" > "$out/e.log" 2>&1 || fail "e: segrt unet --fallback failed (out/gpu/e.log)"
cat "$out"/ld-debug.* > "$out/ld-debug.log"
rm -f "$out"/ld-debug.[0-9]*
python3 tests/gpu/preload_check.py "$gpu" "$out/ld-debug.log" "$segrt" "$windows" || fail "e: the preload check"

echo "== c. with Debian's NVIDIA driver library (libcuda1, bookworm non-free), unpacked, not installed"
# The package's file name and SHA-256 come from the archive's index, whose own SHA-256 comes from the
# Release file signed with Debian's archive key (gpgv, debian-archive-keyring): apt's chain of trust.
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
index=non-free/binary-amd64/Packages.xz
deb_dir=$out/debian
mkdir -p "$deb_dir"
driver=""
deb_ok=1
if ! curl -fsS --retry 2 -o "$deb_dir/InRelease" "$mirror/dists/bookworm/InRelease" 2> "$deb_dir/curl.log" \
  || ! curl -fsS --retry 2 -o "$deb_dir/Packages.xz" "$mirror/dists/bookworm/$index" 2>> "$deb_dir/curl.log"; then
  echo "c. skipped: the Debian archive ($mirror) cannot be reached: $(tr '\n' ' ' < "$deb_dir/curl.log")"
else
  gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg --output "$deb_dir/Release" "$deb_dir/InRelease" 2> "$deb_dir/gpgv.log" \
    || { cat "$deb_dir/gpgv.log"; fail "c: the signature of bookworm's InRelease does not verify"; deb_ok=0; }
  index_sha=$(awk -v f="$index" '$3 == f && length($1) == 64 { print $1 }' "$deb_dir/Release")
  if [ "$(sha256sum < "$deb_dir/Packages.xz" | cut -d' ' -f1)" != "$index_sha" ]; then
    fail "c: $index does not match the signed Release file"; deb_ok=0
  fi
  deb_file="" deb_sha="" deb_version=""
  read -r deb_file deb_sha deb_version < <(xz -dc "$deb_dir/Packages.xz" | awk '
    /^Package: / { p = $2 } /^Version: / { v = $2 } /^Filename: / { f = $2 } /^SHA256: / { s = $2 }
    /^$/ { if (p == "libcuda1") print f, s, v; p = "" }') || { fail "c: no libcuda1 in bookworm's $index"; deb_ok=0; }
  if [ "$deb_ok" = 1 ]; then
    echo "   libcuda1 $deb_version: $mirror/$deb_file (SHA-256 $deb_sha)"
    curl -fsS --retry 2 -o "$deb_dir/libcuda1.deb" "$mirror/$deb_file"
    if [ "$(sha256sum < "$deb_dir/libcuda1.deb" | cut -d' ' -f1)" = "$deb_sha" ]; then
      dpkg-deb -x "$deb_dir/libcuda1.deb" "$deb_dir/root"
      driver=$(find "$deb_dir/root" -name libcuda.so.1 -printf '%h\n' | head -1)
      [ -n "$driver" ] || fail "c: no libcuda.so.1 in $deb_file"
    else
      fail "c: the .deb's SHA-256 is not the index's"
    fi
  fi
fi
if [ -n "$driver" ]; then
  echo "   LD_LIBRARY_PATH=${driver#"$PWD/"}"
  export LD_LIBRARY_PATH=$driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  scenario c "$ort" cuda \
    "the NVIDIA driver on this machine is too old for CUDA 13, which this ONNX Runtime build uses: install NVIDIA driver 580.65.06 or newer"
  # ONNX Runtime's CUDA provider checks device_id (segrt always passes it) against the GPUs the driver
  # reports, where a driver too old fails, naming the option: segrt's options reached its parser.
  expect c.require 'Failed to parse provider option "device_id": CUDA failure 35: CUDA driver version is insufficient'
fi

echo "== f. a GTX 1050 under the CUDA 13 build (the stub NVIDIA driver reports it)"
stub=$out/stub-driver
mkdir -p "$stub"
cc -shared -fPIC -O1 -o "$stub/libcuda.so.1" tests/gpu/stub_cuda/stub_cuda.c
gtx1050=(env LD_LIBRARY_PATH="$stub" STUB_CUDA_GPU=gtx1050 STUB_CUDA_DRIVER=13000)
run f.require 1 "${gtx1050[@]}" "$segrt" unet --ort "$ort" --provider cuda --model "$model" --out "$out/f.require" "$image"
expect f.require "CUDA:0 could not be initialised: the NVIDIA GeForce GTX 1050 (compute capability 6.1) cannot run ONNX Runtime $version's CUDA provider"
expect f.require "use the CUDA 12 build, onnxruntime-gpu 1.24.4 with cuDNN 9.10"
expect f.require "(policy: require) (execution provider unavailable)"
run f.fallback 0 "${gtx1050[@]}" "$segrt" unet --ort "$ort" --provider cuda --fallback --model "$model" --out "$out/f.fallback" "$image"
expect f.fallback "; provider CPU;"
[ -s "$out/f.fallback/lesion_01_mask.png" ] || fail "f.fallback: no mask written"
echo "-- f: an RTX 3060 passes segrt's check (ONNX Runtime's CUDA runtime then stops at the stub)"
run f.rtx3060 1 env LD_LIBRARY_PATH="$stub" STUB_CUDA_GPU=rtx3060 STUB_CUDA_DRIVER=13000 "$segrt" unet --ort "$ort" --provider cuda --model "$model" --out "$out/f.rtx3060" "$image"
if grep -q "compute capability" "$out/f.rtx3060.log"; then fail "f.rtx3060: refused by the compute-capability check"; fi

echo "gpu stage: $(( SECONDS - start )) s"
if [ "$failed" != 0 ]; then
  echo "gpu stage: FAILED (the lines marked FAIL above)"
  exit 1
fi
echo "gpu stage: OK"
