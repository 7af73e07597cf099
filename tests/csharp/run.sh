#!/usr/bin/env bash
# Builds the .NET wrapper and its tests with Mono's C# compiler against the .NET Framework 4.6.1
# reference assemblies, puts libsegrt.so and ONNX Runtime beside the .exe (as a Windows app would
# have segrt.dll and onnxruntime.dll) and runs the tests on Mono.
# Needs: mono-devel (see .ci/run), a built target/<profile>/libsegrt.so, .onnxruntime/.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
profile="${SEGRT_PROFILE:-debug}"
out="$repo/tests/csharp/build"
rm -rf "$out" && mkdir -p "$out"

cp "$repo/target/$profile/libsegrt.so" "$out/"
cp "$repo"/.onnxruntime/libonnxruntime.so.* "$out/"

# What a .NET Framework 4.6.1 x64 project gets; plain mcs would accept APIs 4.6.1 lacks.
MCS=(mcs -sdk:4.6.1 -noconfig -unsafe+ -platform:x64 -warnaserror+ -nowarn:1591
     -r:System.dll -r:System.Core.dll -r:System.Drawing.dll)
"${MCS[@]}" -target:library -out:"$out/Segrt.dll" -doc:"$out/Segrt.xml" "$repo"/bindings/csharp/*.cs
# The tests compile the wrapper sources in, to reach internals (the native options struct).
"${MCS[@]}" -target:exe -out:"$out/SegrtTests.exe" "$repo"/bindings/csharp/*.cs "$repo/tests/csharp/SegrtTests.cs"

cd /tmp   # any working directory: DllImport must find libsegrt.so beside the .exe
mono --debug "$out/SegrtTests.exe" "$repo"
