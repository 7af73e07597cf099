#!/usr/bin/env bash
# ABI compatibility: tests/abi/v1_host.c, built against the frozen ABI 1 header (tests/abi/v1/segrt.h),
# runs against the library built now: plain, under AddressSanitizer + UBSan, and under valgrind
# (its --quick workload: ONNX Runtime runs some 100x slower there). Its guard bytes after every versioned
# struct and record catch a write past what the host declared; the sanitizers catch reads.
# Usage: tests/abi/run.sh [TARGET_DIR]   (default target/debug)
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=${1:-target/debug}
build=tests/abi/build
mkdir -p "$build"
flags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Itests/abi tests/abi/v1_host.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")

echo "-- ABI 1 host, plain"
gcc -O1 "${flags[@]}" -o "$build/v1_host"
"$build/v1_host" .

echo "-- ABI 1 host, AddressSanitizer + UBSan"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${flags[@]}" -o "$build/v1_host_asan"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/v1_host_asan" .

if command -v valgrind >/dev/null; then
  echo "-- ABI 1 host, valgrind (--quick: the *_default functions and seg_create)"
  gcc -O1 -g "${flags[@]}" -o "$build/v1_host_vg"
  SEGRT_SCALAR_RESIZE=1 valgrind --quiet --error-exitcode=99 --num-callers=30 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/c/valgrind.supp \
    "$build/v1_host_vg" . --quick
fi
