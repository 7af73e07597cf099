#!/usr/bin/env bash
# Builds tests/c/test_segrt.c, tests/c/test_track.c (SAM2 video tracking), tests/c/test_edges.c (the
# contract's edges), tests/c/test_pixels.c (16-bit, signed 16-bit and float images) and
# tests/c/test_regions.c/.cpp (regions, outlines, RLE), tests/c/test_reference.cpp (segrt::Reference)
# against include/segrt.h
# and the built libsegrt.so, and runs them plain
# and with AddressSanitizer + UBSan; with --valgrind also under valgrind (errors and definite leaks
# fail the run; 6 to 9 minutes on 2 cores, as ONNX Runtime runs some 100x slower under valgrind);
# --valgrind-quick runs the test's --quick workload under valgrind instead (one small UNet run, the
# bad-input checks, the frees: under a minute, meant for CI) and test_track's --quick workload (about
# 4 minutes: ONNX Runtime loading the four video modules alone takes a minute under valgrind).
# Usage: tests/c/run.sh [--valgrind | --valgrind-quick] [TARGET_DIR]   (default target/debug)
set -euo pipefail
cd "$(dirname "$0")/../.."
valgrind=   # empty, full or quick
case "${1:-}" in
  --valgrind) valgrind=full; shift ;;
  --valgrind-quick) valgrind=quick; shift ;;
esac
lib=${1:-target/debug}
build=tests/c/build
mkdir -p "$build"
.venv/bin/python tests/c/make_inputs.py . "$build/inputs"
flags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_segrt.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")

echo "-- plain"
gcc -O1 "${flags[@]}" -o "$build/test_plain"
"$build/test_plain" . "$build/inputs"

echo "-- AddressSanitizer + UBSan"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${flags[@]}" -o "$build/test_asan"
# Leaks are checked by the --valgrind run, where third-party one-time allocations can be told apart.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_asan" . "$build/inputs"

echo "-- SAM2 video tracking host (tests/c/test_track.c: lifecycle, threads, 500-frame memory soak), plain and ASan + UBSan"
# C11 for _Thread_local (per-thread error buffers of the worker threads) and pthreads.
track=(-std=c11 -pthread -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_track.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${track[@]}" -o "$build/test_track"
"$build/test_track" .
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${track[@]}" -o "$build/test_track_asan"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_track_asan" .

echo "-- the contract at its edges (tests/c/test_edges.c: record sizes, cancel then reset, cancelled cached calls, re-entry), plain and ASan + UBSan"
edges=(-std=c11 -pthread -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_edges.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${edges[@]}" -o "$build/test_edges"
"$build/test_edges" .
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${edges[@]}" -o "$build/test_edges_asan"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_edges_asan" .

echo "-- wide pixels (tests/c/test_pixels.c: 16-bit, signed 16-bit and float images, the intensity stage, bad pixels and settings), plain and ASan + UBSan"
pixels=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_pixels.c -lm -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${pixels[@]}" -o "$build/test_pixels"
"$build/test_pixels" . "$build/inputs"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${pixels[@]}" -o "$build/test_pixels_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_pixels_asan" . "$build/inputs"

echo "-- cancellation soak (tests/c/cancel_soak.c: calls cancelled at random moments), plain and ASan + UBSan + LeakSanitizer"
soak=(-std=c11 -pthread -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/cancel_soak.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${soak[@]}" -o "$build/cancel_soak"
"$build/cancel_soak" . --cancels "${SEGRT_SOAK_CANCELS:-250}"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${soak[@]}" -o "$build/cancel_soak_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$build/cancel_soak_asan" . --cancels "${SEGRT_SOAK_CANCELS_ASAN:-100}"

echo "-- C++ layer (include/segrt.hpp), plain and ASan + UBSan"
cxx=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_segrt.cpp -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
g++ -O1 "${cxx[@]}" -o "$build/test_cpp"
"$build/test_cpp" . "$build/inputs"
g++ -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${cxx[@]}" -o "$build/test_cpp_asan"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_cpp_asan" . "$build/inputs"
# segrt::VideoModel / segrt::Tracker on the reference clip (frames and masks converted by make_inputs.py)
cxxt=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_track.cpp -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
g++ -O1 "${cxxt[@]}" -o "$build/test_track_cpp"
"$build/test_track_cpp" . "$build/inputs"
g++ -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${cxxt[@]}" -o "$build/test_track_cpp_asan"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_track_cpp_asan" . "$build/inputs"

echo "-- teach once, find (tests/c/test_reference.cpp: segrt::Reference on the oracle models), plain and ASan + UBSan"
cxxref=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_reference.cpp -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
g++ -O1 "${cxxref[@]}" -o "$build/test_reference_cpp"
"$build/test_reference_cpp" .
g++ -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${cxxref[@]}" -o "$build/test_reference_cpp_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_reference_cpp_asan" .

echo "-- regions and RLE (tests/c/test_regions.c, test_regions.cpp: outlines against OpenCV's chains, counts, bad input), plain and ASan + UBSan"
regions=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_regions.c -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
gcc -O1 "${regions[@]}" -o "$build/test_regions"
"$build/test_regions"
gcc -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${regions[@]}" -o "$build/test_regions_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_regions_asan"
cxxr=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_regions.cpp -L"$lib" -lsegrt -Wl,-rpath,"$PWD/$lib")
g++ -O1 "${cxxr[@]}" -o "$build/test_regions_cpp"
"$build/test_regions_cpp"
g++ -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer "${cxxr[@]}" -o "$build/test_regions_cpp_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/test_regions_cpp_asan"

[ -n "$valgrind" ] || exit 0
echo "-- valgrind ($valgrind workload)"
gcc -O1 -g "${flags[@]}" -o "$build/test_vg"
workload=()
if [ "$valgrind" = quick ]; then workload=(--quick); fi
start=$(date +%s)
# SIMD resize off: valgrind cannot execute some AVX2 instructions (see src/image/resize.rs).
SEGRT_SCALAR_RESIZE=1 valgrind --quiet --error-exitcode=99 --num-callers=30 --leak-check=full \
  --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/c/valgrind.supp \
  "$build/test_vg" . "$build/inputs" "${workload[@]}"
g++ -O1 -g "${cxx[@]}" -o "$build/test_cpp_vg"
SEGRT_SCALAR_RESIZE=1 valgrind --quiet --error-exitcode=99 --num-callers=30 --leak-check=full \
  --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/c/valgrind.supp \
  "$build/test_cpp_vg" . "${workload[@]}"
gcc -O1 -g "${track[@]}" -o "$build/test_track_vg"
# Under valgrind the video session takes a minute to load and a frame some 15 s: the quick workload
# (one call per thread, no reset race, no soak; ~250 s on 2 cores), plus in the full form a 12-frame
# soak (frames leave the keep_frames window and are released).
track_workload=(--quick --soak 12)
if [ "$valgrind" = quick ]; then track_workload=(--quick); fi
SEGRT_SCALAR_RESIZE=1 valgrind --quiet --error-exitcode=99 --num-callers=30 --leak-check=full \
  --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/c/valgrind.supp \
  "$build/test_track_vg" . "${track_workload[@]}"
if [ "$valgrind" = full ]; then
  # segrt::Tracker's quick workload (2 frames, a click, one tracked frame, one next): ~100 s under
  # valgrind, so only in the full form; the quick form has it plain and under ASan above.
  g++ -O1 -g "${cxxt[@]}" -o "$build/test_track_cpp_vg"
  SEGRT_SCALAR_RESIZE=1 valgrind --quiet --error-exitcode=99 --num-callers=30 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/c/valgrind.supp \
    "$build/test_track_cpp_vg" . "$build/inputs" --quick
fi
gcc -O1 -g "${regions[@]}" -o "$build/test_regions_vg"
valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
  "$build/test_regions_vg"
echo "valgrind: no errors, no definite leaks ($(( $(date +%s) - start )) s)"
