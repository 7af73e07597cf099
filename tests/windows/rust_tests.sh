#!/usr/bin/env bash
# The Rust test suite's C-ABI tests, cross-built for Windows x64 and run under Wine (cargo's target
# runner), against the official onnxruntime.dll. Release profile: it reuses the dependencies
# scripts/build-windows.sh compiled (the dev profile would compile everything, std included, again).
#
# The test files are those of tests/windows/rust-tests.txt (which says why the others are left out);
# scripts/build-windows.sh builds them with the library.
# Usage: tests/windows/rust_tests.sh   (after scripts/build-windows.sh; prints cargo's summaries)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=x86_64-win7-windows-gnu
export CARGO_TARGET_DIR=${SEGRT_WINDOWS_TARGET_DIR:-$repo/target/windows}
wine=/usr/lib/wine/wine64
export WINEPREFIX=$CARGO_TARGET_DIR/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[ -f "$CARGO_TARGET_DIR/cross.toml" ] || { echo "run scripts/build-windows.sh first"; exit 1; }
# The tests find models/ by the path cargo compiles in (a Linux path: under Wine, Z:\ + that path on the
# current drive, which is Z: since the working folder is the repository). ONNX Runtime: the official DLL,
# named by SEGRT_ORT_PATH (the test executables in deps/ have none beside them).
export SEGRT_ORT_PATH="Z:${repo//\//\\}\\.onnxruntime\\win-x64\\onnxruntime.dll"
mapfile -t tests < <(grep -vE '^\s*(#|$)' tests/windows/rust-tests.txt)
test_args=()
for t in "${tests[@]}"; do test_args+=(--test "$t"); done
echo "== the Rust C-ABI tests under Wine: ${tests[*]}"
start=$(date +%s)
log=$CARGO_TARGET_DIR/rust-tests.log
: > "$log"
# The test executables, from cargo (built already by scripts/build-windows.sh: nothing is compiled here).
mapfile -t exes < <(RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 /usr/bin/cargo test --no-run --release \
  --config "$CARGO_TARGET_DIR/cross.toml" --target "$target" -Zbuild-std=std,panic_abort "${test_args[@]}" \
  --message-format json 2>>"$log" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]:
        print(m["executable"])')
[ "${#exes[@]}" -eq "${#tests[@]}" ] || { cat "$log"; echo "expected ${#tests[@]} test executables, cargo named ${#exes[@]}"; exit 1; }
# Each test in a process of its own, two at a time, as cargo-nextest runs them on Linux: some tests set
# process-wide state (the temporary folder's variables, the ONNX Runtime path) that must not leak into others.
for exe in "${exes[@]}"; do
  "$wine" "$exe" --list --format terse 2>/dev/null | tr -d '\r' | sed -n 's/: test$//p' | sed "s|^|$exe\t|"
done > "$CARGO_TARGET_DIR/rust-tests.list"
run_one() {
  local exe=$1 name=$2 out
  if out=$("$wine" "$exe" --exact "$name" --nocapture 2>&1); then
    echo "PASS $(basename "${exe%-*}") $name"
  else
    echo "FAIL $(basename "${exe%-*}") $name"
    printf '%s\n' "$out" | tr -d '\r' | grep -vxF 'Failed to create DXGI factory.' | tail -n 30 | sed 's/^/     /'
  fi
}
export -f run_one
export wine
tr '\t' '\n' < "$CARGO_TARGET_DIR/rust-tests.list" | xargs -d '\n' -n 2 -P 2 bash -c 'run_one "$0" "$1"' >> "$log"
grep -E "^FAIL|^     " "$log" || true
passed=$(grep -c "^PASS" "$log" || true)
failed=$(grep -c "^FAIL" "$log" || true)
listed=$(wc -l < "$CARGO_TARGET_DIR/rust-tests.list")
echo "Rust C-ABI tests under Wine: $passed passed, $failed failed of $listed tests in ${#tests[@]} test files, $(( $(date +%s) - start )) s (log: $log)"
[ "$failed" -eq 0 ] && [ "$passed" -eq "$listed" ] && [ "$listed" -gt 0 ]
