#!/usr/bin/env bash
# Every demo (scripts/demo*.sh) works on a fresh clone by itself: clones this checkout's HEAD into a
# temporary folder and runs each demo there, as a new user would before any test setup (no .venv, no
# outputs of other stages). To keep it cheap, the clone runs this checkout's debug segrt (SEGRT_BIN:
# a release build of the clone would add minutes and tests nothing a demo depends on) and reuses its
# download caches, ONNX Runtime (.onnxruntime) and the checksummed real files (.real-weights), which
# the demos' own fetch scripts verify; everything else a demo needs it must fetch or make itself.
# Usage: scripts/check-demos.sh [SEGRT]   (default target/debug/segrt)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
segrt=$(realpath "${1:-target/debug/segrt}")
[ -x "$segrt" ] || { echo "check-demos: $segrt is not built (cargo build)"; exit 1; }
clone=$(mktemp -d)
trap 'rm -rf "$clone"' EXIT
git clone --quiet --no-hardlinks "$root" "$clone/segrt"
cd "$clone/segrt"
for cache in .onnxruntime .real-weights; do
  if [ -d "$root/$cache" ]; then ln -s "$root/$cache" "$cache"; fi
done
# No inherited virtualenv on the PATH (CI puts .venv/bin first).
path=$(tr ':' '\n' <<< "$PATH" | grep -v '/\.venv' | paste -sd:)
status=0
for demo in scripts/demo*.sh; do
  start=$SECONDS
  log="$clone/$(basename "$demo" .sh).log"
  # No inherited virtualenv or Python: the demo finds or makes its own.
  if env -u VIRTUAL_ENV -u PYTHON PATH="$path" SEGRT_BIN="$segrt" "$demo" > "$log" 2>&1; then
    echo "$demo: ok on a fresh clone ($(( SECONDS - start )) s)"
  else
    rc=$?
    echo "$demo: FAILED on a fresh clone (exit $rc, $(( SECONDS - start )) s); its last lines:"
    tail -n 15 "$log" | sed 's/^/  /'
    status=1
  fi
done
exit $status
