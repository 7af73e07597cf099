#!/usr/bin/env bash
# Fetches the GPU build of ONNX Runtime (onnxruntime-gpu 1.31.1, CUDA + TensorRT providers) from its
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
# It is scripts/fetch-ort.sh's gpu-cuda13 flavour in the folder the GPU stage (tests/gpu) uses; the
# CUDA 12 build for older GPUs: scripts/fetch-ort.sh --flavour gpu-cuda12 [--with-cuda].
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/fetch-ort.sh --flavour gpu-cuda13 --dest .onnxruntime-gpu "$@"
