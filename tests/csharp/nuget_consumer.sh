#!/usr/bin/env bash
# The Segrt.Net NuGet package as a user consumes it: scripts/pack-nuget.sh makes it, it goes into a local
# folder feed, and two fresh packages.config-style projects -- the console program tests/csharp/consumer
# and the WinForms sample -- are written as Visual Studio leaves them after Install-Package (packages.config,
# a Reference to lib/net461/Segrt.Net.dll, the build/net461 .props/.targets imports), restored with the
# nuget client from that feed only, built with xbuild and run from their output folders with an empty
# environment: the native libraries must have been copied there by the package, nothing by hand.
# Also: an x86 build of the console project is refused with segrt's message.
# Usage: tests/csharp/nuget_consumer.sh <work dir>   (run.sh calls it; SEGRT_PROFILE as there)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$1"
profile="${SEGRT_PROFILE:-debug}"
python="$repo/.venv/bin/python"
rm -rf "$work" && mkdir -p "$work/feed"

"$repo/scripts/setup.sh" mono
command -v nuget >/dev/null || { echo "nuget client not installable here (apt-get install nuget failed): package consumer test not run" >&2; exit 1; }

pack_log=$(SEGRT_PACKAGE_PROFILE="$profile" "$repo/scripts/pack-nuget.sh")
echo "$pack_log"
nupkg="$repo/$(sed -n 's/^nupkg: \([^ ]*\) .*/\1/p' <<<"$pack_log")"
version=$(basename "$nupkg" .nupkg); version=${version#Segrt.Net.}
cp "$nupkg" "$work/feed/"
# Only this feed: no machine-wide or user sources.
cat > "$work/NuGet.Config" <<XML
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources><clear /><add key="local" value="$work/feed" /></packageSources>
</configuration>
XML

# project <dir> <name> <output type> <extra properties> <extra references> <compile items>
project() {
  local dir="$work/$1" name="$2"
  mkdir -p "$dir"
  cat > "$dir/packages.config" <<XML
<?xml version="1.0" encoding="utf-8"?>
<packages>
  <package id="Segrt.Net" version="$version" targetFramework="net461" />
</packages>
XML
  cat > "$dir/$name.csproj" <<XML
<?xml version="1.0" encoding="utf-8"?>
<Project ToolsVersion="14.0" DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <Import Project="packages\\Segrt.Net.$version\\build\\net461\\Segrt.Net.props" Condition="Exists('packages\\Segrt.Net.$version\\build\\net461\\Segrt.Net.props')" />
  <PropertyGroup>
    <Configuration Condition=" '\$(Configuration)' == '' ">Release</Configuration>
    <Platform Condition=" '\$(Platform)' == '' ">x64</Platform>
    <OutputType>$3</OutputType>
    <AssemblyName>$name</AssemblyName>
    <TargetFrameworkVersion>v4.6.1</TargetFrameworkVersion>
    <PlatformTarget>x64</PlatformTarget>
    <Prefer32Bit>false</Prefer32Bit>
    <OutputPath>bin\\</OutputPath>
    $4
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="System" />
    <Reference Include="System.Core" />
    <Reference Include="System.Drawing" />
    $5
    <Reference Include="Segrt.Net">
      <HintPath>packages\\Segrt.Net.$version\\lib\\net461\\Segrt.Net.dll</HintPath>
    </Reference>
  </ItemGroup>
  <ItemGroup>
    $6
    <None Include="packages.config" />
  </ItemGroup>
  <Import Project="\$(MSBuildToolsPath)\\Microsoft.CSharp.targets" />
  <Import Project="packages\\Segrt.Net.$version\\build\\net461\\Segrt.Net.targets" Condition="Exists('packages\\Segrt.Net.$version\\build\\net461\\Segrt.Net.targets')" />
</Project>
XML
  (cd "$dir" && nuget restore packages.config -PackagesDirectory packages -ConfigFile "$work/NuGet.Config" -NonInteractive) > "$dir/restore.log" 2>&1 \
    || { cat "$dir/restore.log"; echo "nuget restore failed" >&2; exit 1; }
  test -f "$dir/packages/Segrt.Net.$version/lib/net461/Segrt.Net.dll" || { cat "$dir/restore.log"; echo "restore did not unpack Segrt.Net" >&2; exit 1; }
}

clean_env=(env -i PATH=/usr/bin:/bin HOME="$work")

# 1. A console program (no AllowUnsafeBlocks).
cp "$repo/tests/csharp/consumer/Program.cs" "$work/"
project Console Consumer Exe "" "" '<Compile Include="..\Program.cs" />'
app="$work/Console"
(cd "$app" && xbuild /nologo /v:minimal Consumer.csproj) > "$app/build.log" 2>&1 || { cat "$app/build.log"; exit 1; }
for f in Consumer.exe Segrt.Net.dll libsegrt.so "$(basename "$repo"/.onnxruntime/libonnxruntime.so.*.*.*)"; do
  test -f "$app/bin/$f" || { ls "$app/bin"; echo "$f is not in the consumer's bin/ after the build" >&2; exit 1; }
done
ran=$(cd / && "${clean_env[@]}" mono "$app/bin/Consumer.exe" "$repo/models/samples/lesion_01.png" \
      "$repo/models/samples/lesion_01_gt.png" "$repo/models/demo_unet.onnx")
echo "$ran"
grep -q "loaded from $app/bin/libonnxruntime.so" <<<"$ran" || { echo "the consumer did not load ONNX Runtime from its bin/" >&2; exit 1; }
echo "NuGet console consumer: restored Segrt.Net $version from the local feed, built, ran from bin/ with an empty environment"

# The Windows files: with SEGRT_WIN_X64_NATIVE (scripts/test.sh sets it once the Windows stage has built
# segrt.dll), the package carries them in runtimes/win-x64/native/; check what they are, and that a Windows
# build of the project (the .targets pick win-x64 there) copies them beside the program.
if [ -n "${SEGRT_WIN_X64_NATIVE:-}" ]; then
  native="$app/packages/Segrt.Net.$version/runtimes/win-x64/native"
  "$python" "$repo/tests/windows/pe_check.py" native-dll "$native/segrt.dll" "$native/onnxruntime.dll"
  (cd "$app" && xbuild /nologo /v:minimal /p:SegrtRuntime=win-x64 /p:OutputPath=bin-win-x64/ \
      /p:IntermediateOutputPath=obj-win-x64/ Consumer.csproj) > "$app/build-win-x64.log" 2>&1 || { cat "$app/build-win-x64.log"; exit 1; }
  "$python" "$repo/tests/windows/pe_check.py" native-dll "$app/bin-win-x64/segrt.dll" "$app/bin-win-x64/onnxruntime.dll"
  cmp "$native/segrt.dll" "$SEGRT_WIN_X64_NATIVE/segrt.dll"
  echo "NuGet package: runtimes/win-x64/native holds the segrt.dll built here and onnxruntime.dll; a Windows build copies them beside the program"
else
  grep -q . "$app/packages/Segrt.Net.$version/runtimes/win-x64/native/README.txt"
  echo "NuGet package: no win-x64 native files (SEGRT_WIN_X64_NATIVE unset; scripts/test.sh sets it from the Windows stage)"
fi

# x86 is refused with the reason, before anything is compiled.
if (cd "$app" && xbuild /nologo /v:minimal /p:PlatformTarget=x86 /p:OutputPath=bin-x86/ Consumer.csproj) > "$app/x86.log" 2>&1; then
  echo "an x86 build of a Segrt.Net consumer should fail" >&2; exit 1
fi
grep -q "error : segrt: " "$app/x86.log" || { cat "$app/x86.log"; exit 1; }
echo "NuGet console consumer: x86 refused: $(grep -o 'error : segrt: .\{0,80\}' "$app/x86.log" | head -n 1)..."

# 2. The WinForms sample from the package (its own overlay code is unsafe, hence AllowUnsafeBlocks), run
#    through its self-test (tests/csharp/sample/, built against the SegrtDemo.exe made here) under Xvfb.
mkdir -p "$work/sample" && cp "$repo"/dotnet-sample/*.cs "$work/sample/"
project WinForms SegrtDemo WinExe "<AllowUnsafeBlocks>true</AllowUnsafeBlocks><LangVersion>7.2</LangVersion>" '<Reference Include="System.Windows.Forms" />' \
  '<Compile Include="..\sample\*.cs" />'
demo="$work/WinForms"
(cd "$demo" && xbuild /nologo /v:minimal SegrtDemo.csproj) > "$demo/build.log" 2>&1 || { cat "$demo/build.log"; exit 1; }
test -f "$demo/bin/libsegrt.so" && test -f "$demo/bin/Segrt.Net.dll"
mcs -sdk:4.6.1 -noconfig -platform:x64 -warnaserror+ -langversion:7.2 -r:System.dll -r:System.Core.dll -r:System.Drawing.dll \
  -r:System.Windows.Forms.dll -r:"$demo/bin/Segrt.Net.dll" -r:"$demo/bin/SegrtDemo.exe" -target:exe \
  -out:"$demo/bin/SegrtDemo.SelfTest.exe" "$repo/tests/csharp/sample/SampleSelfTest.cs"
mkdir -p "$demo/bin/models/sam2"
cp "$repo/models/demo_unet.onnx" "$demo/bin/models/"
cp "$repo"/models/sam2/sam2_tiny_samexporter_*.onnx "$demo/bin/models/sam2/"
cp -r "$repo/models/samples" "$demo/bin/models/"
mkdir -p "$demo/bin/models/sam2/video/reference"
cp "$repo"/models/sam2/video/*.onnx "$repo/models/sam2/video/video_metadata.json" "$demo/bin/models/sam2/video/"
cp -r "$repo/models/sam2/video/reference/frames" "$demo/bin/models/sam2/video/reference/"
(cd / && timeout 300 xvfb-run -a -s "-screen 0 1280x1024x24" mono "$demo/bin/SegrtDemo.SelfTest.exe" "$work/nuget-winforms.png")
"$python" "$repo/tests/csharp/check_screenshot.py" "$work/nuget-winforms-unet.png" unet
"$python" "$repo/tests/csharp/check_screenshot.py" "$work/nuget-winforms.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$work/nuget-winforms-track.png" sam2
"$python" "$repo/tests/csharp/check_screenshot.py" "$work/nuget-winforms-volume.png" sam2
echo "NuGet WinForms sample: restored, built, self-test passed from bin/"
