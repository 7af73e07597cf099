#!/usr/bin/env bash
# Builds the stub NVIDIA driver library (stub_cuda.c) as DIR/libcuda.so.1 (default out/gpu/stub_cuda),
# and with --windows also DIR/nvcuda.dll (mingw-w64). Prints the file(s) it wrote.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-../../../out/gpu/stub_cuda}
mkdir -p "$out"
cc -shared -fPIC -O1 -Wall -Wextra -Werror -o "$out/libcuda.so.1" stub_cuda.c
echo "$out/libcuda.so.1"
if [ "${2:-}" = --windows ]; then
  x86_64-w64-mingw32-gcc -shared -O1 -Wall -Wextra -Werror -o "$out/nvcuda.dll" stub_cuda.c
  echo "$out/nvcuda.dll"
fi
