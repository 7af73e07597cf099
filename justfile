# The stages of CI, each runnable alone: `just STAGE` (just comes with `scripts/setup.sh`, in .venv/bin).
# `scripts/test.sh` runs every test stage in order (the README's test command); `.ci/run` adds the lint,
# drift and clean-tree checks and the fuzzing around it. What each stage checks:
# docs/src/quality/testing.md.

set shell := ["bash", "-euo", "pipefail", "-c"]
export PATH := justfile_directory() / ".venv/bin:" + env("PATH")

# List the stages.
default:
    @just --list --unsorted

# Install what the stages need (groups: python mono valgrind windows; none: all).
setup *groups:
    ./scripts/setup.sh {{ groups }}

# rustfmt on the crate, the fuzz harnesses and xtask.
fmt:
    cargo fmt --check
    cd fuzz && cargo fmt --check
    cd xtask && cargo fmt --check

# clippy on every target and feature, warnings denied.
clippy:
    cargo clippy --all-targets --all-features -- -D warnings

# No tracked file names a folder of a development machine: commands must work from a clone.
paths:
    #!/usr/bin/env bash
    if git grep -nI -E '/work/|/home/[a-z]+/|C:\\Users\\' -- . ':!fuzz/regressions' ':!.ci/run' ':!justfile'; then
      echo "the lines above name paths of a development machine: use paths relative to the clone"; exit 1
    fi

# No file under src/ over 600 lines; the maintainers' map names every file and folder of src/; no new
# circle between a folder's modules.
house:
    python3 scripts/house.py

# Write include/segrt.h and the C# declarations from src/ffi/ (after changing the C boundary).
bindings:
    cargo xtask bindings

# The committed header and C# declarations are what src/ffi/ generates.
bindings-check:
    cargo xtask bindings --check

# Every Rust unit and integration test (nextest, or cargo test without it).
rust: (setup "python")
    cargo build
    if cargo nextest --version >/dev/null 2>&1; then cargo nextest run --no-fail-fast; else cargo test --no-fail-fast; fi

# `segrt soak`, short form, on the bundled models and the real weights (reports kept in out/soak/).
soak: (setup "python")
    cargo build --bin segrt
    ./tests/soak/run.sh target/debug/segrt

# The docs book builds; no broken link or anchor in it, the README and the other Markdown files.
docs: (setup "python")
    ./scripts/docs.sh

# The committed header in C99 and C++11, warnings as errors; one C# DllImport per export.
header:
    ./tests/c/check_header.sh

# Every C, C++ and C# block of the Markdown files compiles (against the header, segrt.hpp, the wrapper).
snippets: (setup "mono")
    python3 scripts/doc_snippets.py

# The C and C++ hosts plain, under ASan + UBSan, the cancellation soak, valgrind on a quick workload.
c: (setup "python" "valgrind")
    cargo build --lib
    ./tests/c/run.sh --valgrind-quick

# A C host built against the frozen ABI 1 header, plain, ASan + UBSan, valgrind.
abi-c: (setup "python" "valgrind")
    cargo build --lib
    ./tests/abi/run.sh

# The HALCON glue against the stand-in.
halcon: (setup "python")
    cargo build --lib
    ./examples/halcon/run.sh

# The deployable package of the debug build, from a copy with an empty environment.
package: (setup "python")
    cargo build
    SEGRT_PACKAGE_PROFILE=debug ./tests/package/check.sh

# The .NET wrapper's tests, the WinForms sample under Xvfb and the NuGet package, on Mono.
dotnet: (setup "python" "mono")
    cargo build
    ./tests/csharp/run.sh

# The frozen ABI 1 C# wrapper and its tests against this library, on Mono.
abi-dotnet: (setup "python" "mono")
    cargo build --lib
    ./tests/abi/csharp_v1.sh

# The CLI's masks against plain onnxruntime + numpy + Pillow.
parity: (setup "python")
    cargo build --bin segrt
    .venv/bin/python tests/parity/parity.py --segrt target/debug/segrt

# Real trained models (fetched, pinned, cached in .real-weights/) against Python references.
real: (setup "python")
    cargo build --lib
    ./tests/real/run.sh

# Outlines, region figures and RLE against OpenCV and pycocotools; annotation files in their tools; shards merged.
outlines: (setup "python")
    cargo build --bin segrt
    ./tests/outlines/run.sh

# Every demo (scripts/demo*.sh) on a fresh clone of HEAD: no virtualenv, this checkout's segrt and download caches.
demos: (setup "python")
    cargo build --bin segrt
    ./scripts/check-demos.sh

# segrt's masks with ONNX Runtime 1.24.4 (CPU) and OpenVINO 1.24.1 (its CPU provider and OpenVINO)
# against 1.31.1's: the demo UNet, the tiny SAM2 pair, the MobileSAM-class real pair (after the real stage
# fetched it) and the tracker; the frozen ABI 1 C host on both; the two libraries fetched pinned into
# .onnxruntime/. `tests/ort_range/check.sh --full` runs every step.
ort-range: (setup "python")
    cargo build --lib --bin segrt
    ./tests/ort_range/check.sh

# The numpy SAM2 tracker on the four ONNX modules against the official predictor's reference.
video: (setup "python")
    .venv/bin/python models/sam2/video_ort_tracker.py

# The GPU providers' failures and fallbacks on a machine without a GPU (ONNX Runtime's GPU build and
# NVIDIA's CUDA wheels fetched, a driver library unpacked from Debian) and the GPU preload list.
gpu: (setup "python")
    cargo build
    ./tests/gpu/run.sh

# A panic forced inside a run, and `segrt soak` judging a build that leaks per call (rebuilds the library
# and segrt with the fault-injection feature).
faults: (setup "python")
    if cargo nextest --version >/dev/null 2>&1; then cargo nextest run --features fault-injection --test faults_c_abi --test fuzz_smoke --test cli_soak -E 'binary(faults_c_abi) | test(a_panic_inside_segrt_fails_the_harness) | test(a_build_leaking_4_kb_per_call_is_judged_grows)'; else cargo test --features fault-injection --test faults_c_abi && cargo test --features fault-injection --test fuzz_smoke a_panic_inside_segrt_fails_the_harness && cargo test --features fault-injection --test cli_soak a_build_leaking_4_kb_per_call_is_judged_grows; fi

# Windows x64: cross-build, zip, Rust C-ABI tests and every Windows case under Wine.
windows *args: (setup "python" "mono" "windows")
    ./scripts/test-windows.sh {{ args }}

# Coverage-guided fuzzing of the C ABI's parsers (SECONDS per target).
fuzz seconds="60": (setup "python")
    ./scripts/fuzz.sh {{ seconds }}

# Every test stage in order: the README's test command.
test:
    ./scripts/test.sh

# What CI runs on a clean clone.
ci:
    ./.ci/run
