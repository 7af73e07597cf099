#!/usr/bin/env bash
# Runs every test stage of the justfile, in order: Rust unit and C-ABI tests, the docs book and its links,
# the header checks, the code blocks of the docs compiled, the C/C++ hosts, ABI 1 compatibility, the HALCON glue, the deployable package, the
# parity test against a plain Python onnxruntime + numpy + Pillow reference, the tests on real trained
# models (fetched from the package registries), ONNX Runtime 1.24.4 and OpenVINO 1.24.1 against 1.31.1,
# outlines and annotation files against OpenCV, pycocotools and LabelMe, the SAM2 video modules, the GPU providers' failures and
# fallbacks without a GPU, the .NET wrapper and WinForms sample on Mono, a panic forced inside a run,
# and Windows x64 under Wine. First installs what they need (scripts/setup.sh: apt, a Python
# virtualenv in .venv/ with the prebuilt tools, ONNX Runtime from its PyPI wheel). A stage runs alone
# with `just STAGE`; the stages are listed in docs/src/quality/testing.md.
# The Windows stage runs in the background from the docs stage on, beside the single-threaded stages,
# at a lower priority; SEGRT_WINDOWS=0 leaves it out. Each stage's time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
windows=${SEGRT_WINDOWS:-1}
if [ "$windows" != 0 ]; then ./scripts/setup.sh; else ./scripts/setup.sh python mono valgrind; fi
export PATH=$PWD/.venv/bin:$PATH

times=()
stage() {
  local start=$SECONDS
  echo "== $1 (just $*)"
  just "$@"
  times+=("$1 $(( SECONDS - start ))")
}

stage rust
stage soak
stage docs

# The compile-heavy part is over: CI (.ci/run) starts its fuzzing beside the lighter stages from here.
if [ -n "${SEGRT_HEAVY_STAGES_DONE:-}" ]; then touch "$SEGRT_HEAVY_STAGES_DONE"; fi

# The Windows stage's segrt.dll goes into the NuGet package of the dotnet stage, which therefore runs
# late and waits for it (the marker file).
windows_pid=
if [ "$windows" != 0 ]; then
  echo "== windows: started in the background (just windows; its log is printed at the end)"
  windows_log=$(mktemp)
  windows_built=$(mktemp -u)
  windows_start=$SECONDS
  setsid nice -n 5 just windows --built-marker "$windows_built" > "$windows_log" 2>&1 &
  windows_pid=$!
  trap 'kill -- -"$windows_pid" 2>/dev/null || true' EXIT
fi

stage header
stage snippets
stage c
stage abi-c
stage halcon
stage package
stage parity
# A registry that cannot be reached skips this stage in one line, unless SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI).
stage real
# After real: the demos reuse the real files it fetched.
stage demos
# ONNX Runtime 1.24.4 and OpenVINO 1.24.1 against 1.31.1 (needs the real stage's MobileSAM-class pair).
stage ort-range
stage outlines
stage video
# Fetches ONNX Runtime's GPU build and NVIDIA's CUDA/cuDNN wheels (2.1 GB, cached in .onnxruntime-gpu/).
stage gpu

if [ -n "$windows_pid" ]; then
  wait_start=$SECONDS
  while [ ! -e "$windows_built" ] && kill -0 "$windows_pid" 2>/dev/null; do sleep 5; done
  if [ -e "$windows_built" ]; then export SEGRT_WIN_X64_NATIVE=$PWD/target/windows/win-x64-native; fi
  times+=("(waiting-for-segrt.dll) $(( SECONDS - wait_start ))")
fi
stage dotnet
stage abi-dotnet
# Last: it rebuilds the library with the test-only panic hook (target/debug/libsegrt.so included).
stage faults

if [ -n "$windows_pid" ]; then
  echo "== windows (in the background since the docs stage)"
  windows_rc=0
  wait "$windows_pid" || windows_rc=$?
  trap - EXIT
  grep -vE '^\s+(Compiling|Downloaded|Downloading) ' "$windows_log"
  rm -f "$windows_log" "$windows_built"
  times+=("windows(background) $(( SECONDS - windows_start ))")
  if [ "$windows_rc" -ne 0 ]; then echo "the Windows stage failed (exit $windows_rc)"; exit 1; fi
fi
echo "== stage times"
for t in "${times[@]}"; do printf "  %-26s %5d s\n" ${t% *} ${t##* }; done
