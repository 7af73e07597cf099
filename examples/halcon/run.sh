#!/usr/bin/env bash
# Builds the HALCON glue against the HALCON stand-in and the built libsegrt.so, and runs its test plain
# and with AddressSanitizer + UBSan + LeakSanitizer (as tests/c/run.sh does for the C test). No HALCON needed or used.
# Usage: examples/halcon/run.sh [TARGET_DIR]   (default target/debug; run `cargo build` first)
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=${1:-target/debug}
build=target/halcon-example   # under target/: ignored by git
if [ ! -f "$lib/libsegrt.so" ]; then echo "no $lib/libsegrt.so: run cargo build first" >&2; exit 1; fi
mkdir -p "$build"
.venv/bin/python tests/c/make_inputs.py . "$build/inputs"
# ONNX Runtime: the debug/release libsegrt finds .onnxruntime/ of this build tree (docs/src/guide/finding-onnx-runtime.md).
src=(examples/halcon/segrt_halcon.c examples/halcon/segrt_halcon_reference.c examples/halcon/halcon_standin.c examples/halcon/test_halcon_glue.c)
flags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -DSEGRT_HALCON_STANDIN -Iinclude -Iexamples/halcon "${src[@]}"
       -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")

echo "-- HALCON glue (stand-in), plain"
gcc -O1 "${flags[@]}" -o "$build/test_plain"
"$build/test_plain" . "$build/inputs"

echo "-- HALCON glue (stand-in), AddressSanitizer + UBSan"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${flags[@]}" -o "$build/test_asan"
# LeakSanitizer on: the glue must free its mask buffer and every HALCON object it does not hand out
# (clean here; tests/c/run.sh keeps leaks off and leaves them to valgrind).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$build/test_asan" . "$build/inputs"

echo "-- HALCON glue: teach once, find (stand-in), plain and AddressSanitizer + UBSan + LeakSanitizer"
ref=(-std=c99 -Wall -Wextra -Wpedantic -Werror -DSEGRT_HALCON_STANDIN -Iinclude -Iexamples/halcon examples/halcon/segrt_halcon.c
     examples/halcon/segrt_halcon_reference.c examples/halcon/halcon_standin.c examples/halcon/test_halcon_reference.c
     -lm -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${ref[@]}" -o "$build/test_reference"
"$build/test_reference" .
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${ref[@]}" -o "$build/test_reference_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_reference_asan" .
