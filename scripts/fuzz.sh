#!/usr/bin/env bash
# Coverage-guided fuzzing of the C ABI surfaces that parse host input (fuzz/fuzz_targets/):
# image descriptors + buffers, SAM2 prompts, options structs, model bytes. cargo fuzz + libFuzzer +
# AddressSanitizer. cargo-fuzz is the prebuilt one of scripts/tools.txt (scripts/setup.sh). This machine has only the stable
# toolchain, so RUSTC_BOOTSTRAP=1 lets it take the -Zsanitizer flag cargo fuzz passes.
# Crashes are written to fuzz/artifacts/<target>/; once fixed, copy each to fuzz/regressions/<target>/,
# where tests/fuzz_smoke.rs replays it on every test run.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
./scripts/setup.sh python
export PATH=$PWD/.venv/bin:$PATH
export RUSTC_BOOTSTRAP=1
cd fuzz
cargo fuzz build -O
for target in image_descriptor sam2_prompts options_struct model_bytes sam2_everything sam2_many sam2_track; do
  mkdir -p "corpus/$target"
  seeds=() limits=()
  # Model files: small seed models (fuzz/seeds/model_bytes/, a few hundred bytes each, read only; new
  # inputs go to corpus/) and inputs capped at 16 KiB. ONNX Runtime parses and plans every input, so
  # the 1 MB test models as seeds allowed only a few executions per second.
  [ "$target" = model_bytes ] && seeds=(seeds/model_bytes) limits=(-max_len=16384)
  echo "== fuzz $target for ${secs} s"
  cargo fuzz run -O "$target" "corpus/$target" "${seeds[@]}" -- "${limits[@]}" \
    -max_total_time="$secs" -detect_leaks=0 -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 2>&1 \
    | grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|Done|==[0-9]+==|SUMMARY|.*panicked)" || true
  # libFuzzer leaves each failing input in artifacts/ (crash-, leak-, oom-, timeout-: over -timeout):
  # fail loudly. It also saves inputs slower than 10 s as slow-unit-: on a loaded CI machine at the
  # lowest priority that is the machine, not a defect (one took 5.9 s there idle, under ASan), so those
  # are listed, not failed on.
  for slow in artifacts/"$target"/slow-unit-*; do [ -e "$slow" ] && echo "fuzz $target: a slow input (not a failure): fuzz/$slow"; done
  if compgen -G "artifacts/$target/*" | grep -qv '/slow-unit-'; then
    echo "fuzz $target found a crash: fuzz/artifacts/$target/"; exit 1
  fi
done
