#!/usr/bin/env bash
# Fetches the GPU build of ONNX Runtime (onnxruntime-gpu==1.31.1, CUDA + TensorRT providers) from its
# PyPI wheel into .onnxruntime-gpu/, and with --with-cuda the CUDA 13 / cuDNN 9 runtime libraries it
# needs from NVIDIA's PyPI wheels, all flat in that one folder. segrt loads those GPU libraries by
# absolute path from ONNX Runtime's folder before registering the CUDA/TensorRT provider, so no
# LD_LIBRARY_PATH is needed. The NVIDIA driver (libcuda.so.1) must be installed on the machine.
#
#   scripts/fetch-ort-gpu.sh [--with-cuda]
#   SEGRT_ORT_PATH=$PWD/.onnxruntime-gpu/libonnxruntime.so.1.31.1 target/release/segrt providers
#
# The copy in .onnxruntime-gpu/ is used only when named (SEGRT_ORT_PATH, SegOptions.ort_path, --ort);
# for deployment put its files beside libsegrt.so / segrt.dll instead of the CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d "[:space:]" < "$(dirname "$0")/ort-version.txt")
dest=.onnxruntime-gpu
with_cuda=0
[ "${1:-}" = "--with-cuda" ] && with_cuda=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"
pkgs=("onnxruntime-gpu==$version")
# CUDA 13 + cuDNN 9 runtime libraries, as onnxruntime-gpu 1.31 is built against them.
[ "$with_cuda" = 1 ] && pkgs+=("nvidia-cuda-runtime>=13,<14" "nvidia-cublas>=13,<14" "nvidia-curand" "nvidia-cufft" "nvidia-cudnn-cu13>=9,<10")
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$tmp" "${pkgs[@]}"
for wheel in "$tmp"/*.whl; do
  # Only the shared libraries, flattened: a wheel's Python layout means nothing to segrt.
  python3 - "$wheel" "$dest" <<'PY'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        if ".so" in base and "pybind11" not in base:
            (dest / base).write_bytes(z.read(name))
            print("  ", base)
        # ONNX Runtime's own list of the CUDA/cuDNN libraries to preload (preload_dlls), and the CUDA
        # version it is computed from: tests/gpu compares segrt's list with it.
        elif name in ("onnxruntime/__init__.py", "onnxruntime/capi/build_and_package_info.py"):
            (dest / "python").mkdir(exist_ok=True)
            (dest / "python" / base).write_bytes(z.read(name))
PY
done
echo "ONNX Runtime GPU build in $dest/ (SEGRT_ORT_PATH=$PWD/$dest/libonnxruntime.so.$version)"
