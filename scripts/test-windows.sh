#!/usr/bin/env bash
# The Windows x64 stage, on Linux: cross-builds segrt.dll, segrt.exe and the C/C++ test hosts
# (scripts/build-windows.sh), puts segrt.dll and the official onnxruntime.dll in target/windows/win-x64-native/
# (what the NuGet package carries as runtimes/win-x64/native/), writes the zip (scripts/package-windows.sh),
# runs the C-ABI tests of the Rust test suite that can run under Wine (tests/windows/rust_tests.sh), then
# the Wine tests of the binaries and of the zip unzipped elsewhere (tests/windows/run.sh --zip).
# Usage: scripts/test-windows.sh [--built-marker FILE]
#   --built-marker FILE  touch FILE as soon as win-x64-native/ is ready (scripts/test.sh runs this stage in
#                        the background and waits for FILE before packing the NuGet package with it).
# Installs what it needs from apt (see scripts/build-windows.sh); scripts/package-windows.sh needs Mono.
set -euo pipefail
cd "$(dirname "$0")/.."
marker=
[ "${1:-}" = --built-marker ] && marker=${2:?--built-marker needs a file}
start=$(date +%s)
target_dir=${SEGRT_WINDOWS_TARGET_DIR:-$PWD/target/windows}
profile=${SEGRT_WINDOWS_PROFILE:-release}

./scripts/build-windows.sh
native=$target_dir/win-x64-native
mkdir -p "$native"
cp "$target_dir/x86_64-win7-windows-gnu/$profile/segrt.dll" .onnxruntime/win-x64/onnxruntime.dll "$native/"
[ -z "$marker" ] || touch "$marker"
echo "== win-x64 native files for the NuGet package in $native ($(( $(date +%s) - start )) s)"

./scripts/package-windows.sh
./tests/windows/rust_tests.sh
./tests/windows/run.sh --zip
echo "Windows stage done in $(( $(date +%s) - start )) s"
