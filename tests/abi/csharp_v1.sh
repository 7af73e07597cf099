#!/usr/bin/env bash
# The frozen ABI 1 C# wrapper and its tests (tests/abi/csharp-v1/) against the current native library,
# on Mono: compiled as tests/csharp/run.sh compiles the current ones (.NET Framework 4.6.1 reference
# assemblies, x64), run from a folder holding libsegrt.so and ONNX Runtime as a deployed program would.
# Needs what tests/csharp/run.sh needs (mono-devel; target/<profile>/libsegrt.so; .onnxruntime/).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
profile="${SEGRT_PROFILE:-debug}"
frozen="$repo/tests/abi/csharp-v1"
out="$repo/tests/abi/build/csharp-v1"
rm -rf "$out" && mkdir -p "$out"
cp "$repo/target/$profile/libsegrt.so" "$repo"/.onnxruntime/libonnxruntime.so.* "$out/"
mapfile -t sources < <(find "$frozen/wrapper" "$frozen/tests" -name '*.cs' | sort)
mcs -sdk:4.6.1 -noconfig -platform:x64 -warnaserror+ -langversion:7.2 -unsafe+ \
    -r:System.dll -r:System.Core.dll -r:System.Drawing.dll -r:System.Xml.dll -r:System.Runtime.Serialization.dll \
    -r:System.Windows.Forms.dll -target:exe -out:"$out/SegrtTests.exe" "${sources[@]}"
# The tests take a repository folder: its models, and the sources and header their rule checks read.
# For the frozen tests those are the frozen wrapper and header (checking the current sources against the
# frozen assembly would fail on every public type added since), the models are today's.
view="$out/repo"
mkdir -p "$view/bindings"
ln -s "$repo/models" "$view/models"
ln -s "$repo/tests/abi/v1" "$view/include"
ln -s "$frozen/wrapper" "$view/bindings/csharp"
cd /tmp   # any working directory: DllImport finds libsegrt.so beside the .exe
# One frozen test asserts more than ABI 1 promised: that progress never reports 1.0 (its report counts
# and "all in [0, 1)"). The library now ends every progress stage with a report of 1.0, within the
# documented range [0, 1]; the frozen wrapper itself is unaffected. That test may fail with exactly
# this cause, and only it. A second one asserts that a new object after tracking started is refused:
# tracks now accept it, as SAM2's own predictor does (a call that failed now succeeds; ABI 1 unchanged).
# Those two may fail with exactly these causes; any other failure fails the stage.
expected_fail='FAIL  tracking: bad frames and prompts are SegExceptions with the native status
FAIL  cancel: progress of a tiled run (Tiles, increasing), an untiled run (Run) and SegmentEverything (Encode, Prompts)'
log=$(mktemp)
rc=0
mono --debug "$out/SegrtTests.exe" "$view" > "$log" || rc=$?
# The runner's own count line, named as the frozen suite's (the verdict of this stage is printed below).
sed -E 's/^([0-9]+ passed, [0-9]+ failed)$/frozen ABI 1 C# tests: \1/' "$log"
if [ "$rc" -ne 0 ]; then
  if [ "$(grep '^FAIL  ' "$log")" != "$expected_fail" ] \
     || ! grep -qF "check failed: one report per tile (batch 1): 17 for 16 tiles" "$log" \
     || ! grep -qF "a new object after tracking started: expected SegrtException, nothing was thrown" "$log"; then
    rm -f "$log"
    exit "$rc"
  fi
  echo "the two failures are the frozen progress-count test (progress now ends at 1.0, as ABI 1's [0, 1] allows)"
  echo "and the refusal of a new object after tracking started (now accepted, as SAM2's predictor does): accepted"
  echo "frozen ABI 1 C# tests: every test passed but those two, documented changes"
fi
rm -f "$log"
