#!/usr/bin/env bash
# Tests the deployable package the way a user gets it:
#   1. scripts/package.sh builds it (dist/segrt-<version>-linux-x64/ and .tar.gz);
#   2. a copy elsewhere (and the unpacked .tar.gz) pass `sha256sum -c SHA256SUMS`;
#   3. with an empty environment (env -i PATH=/usr/bin:/bin), the C example builds with the package's
#      Makefile and segments the bundled sample from another working directory: exit 0, IoU >= 0.9, and
#      ONNX Runtime loaded from the copy's lib/ (not from this build tree);
#   4. build/Segrt.Net.props and Segrt.Net.targets are well-formed XML; where Mono's xbuild is installed, the
#      shipped bindings/csharp/Segrt.Net.csproj builds Segrt.Net.dll, and a
#      packages.config-style project importing them builds for x64 (the native files land next to the
#      .exe and load under Mono) and fails with segrt's message for x86 and for AnyCPU + Prefer32Bit.
# Usage: tests/package/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
start=$(date +%s)

work=$(mktemp -d /tmp/segrt-package-check.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== package"
./scripts/package.sh | tee "$work/package.log"
pkg=$(sed -n 's/^package: \(dist\/[^ ]*\) .*/\1/p' "$work/package.log")
name=$(basename "$pkg")
if [ ! -d "$pkg" ] || [ ! -f "dist/$name.tar.gz" ]; then echo "package.sh did not say where the package is" >&2; exit 1; fi
cp -r "$pkg" "$work/"
copy=$(realpath "$work/$name")
mkdir "$work/untarred"
tar -C "$work/untarred" -xzf "dist/$name.tar.gz"
clean_env=(env -i PATH=/usr/bin:/bin)

echo "== checksums (copy and unpacked archive)"
(cd "$copy" && "${clean_env[@]}" sha256sum -c --quiet SHA256SUMS)
(cd "$work/untarred/$name" && "${clean_env[@]}" sha256sum -c --quiet SHA256SUMS)
# Every file is listed: nothing shipped unchecked.
listed=$(wc -l < "$copy/SHA256SUMS")
present=$(cd "$copy" && find . -type f ! -name SHA256SUMS | wc -l)
[ "$listed" = "$present" ] || { echo "SHA256SUMS lists $listed files, the package has $present" >&2; exit 1; }
echo "$listed files OK"

echo "== C example from the copy, empty environment"
"${clean_env[@]}" make -C "$copy/examples/c"
cd /   # any working directory: nothing may depend on it
result=$("${clean_env[@]}" "$copy/bin/segrt-example" "$copy/models/demo_unet.onnx" "$copy/models/samples/lesion_01.ppm" \
         "$copy/models/samples/lesion_01_gt.pgm" "$work/mask.pgm")
cd "$repo"
echo "$result"
grep -q "loaded from $copy/lib/libonnxruntime.so" <<<"$result" \
  || { echo "ONNX Runtime was not loaded from the package's lib/" >&2; exit 1; }
iou=$(sed -n 's/^IoU with .*: \([0-9.]*\)$/\1/p' <<<"$result")
python3 -c "import sys; sys.exit(0 if float('$iou') >= 0.9 else 1)" || { echo "IoU $iou < 0.9" >&2; exit 1; }
"${clean_env[@]}" ldd "$copy/bin/segrt-example" | grep segrt

echo "== MSBuild files"
python3 - "$copy/build/Segrt.Net.props" "$copy/build/Segrt.Net.targets" <<'EOF'
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()   # raises on malformed XML
    assert root.tag == "{http://schemas.microsoft.com/developer/msbuild/2003}Project", root.tag
    print(path.rsplit("/", 1)[-1], "well-formed")
EOF
if command -v xbuild >/dev/null && command -v mono >/dev/null; then
  app=$work/App
  mkdir "$app"
  cat > "$app/Program.cs" <<'EOF'
using System;
using System.Runtime.InteropServices;
using System.Text;
static class Program {
    [DllImport("segrt")] static extern int seg_runtime_init(IntPtr path);
    [DllImport("segrt")] static extern UIntPtr seg_version(byte[] buf, UIntPtr cap);
    static int Main() {
        int status = seg_runtime_init(IntPtr.Zero);   // finds ONNX Runtime beside libsegrt
        byte[] buf = new byte[2048];
        seg_version(buf, (UIntPtr)buf.Length);
        Console.WriteLine(Encoding.UTF8.GetString(buf, 0, Array.IndexOf(buf, (byte)0)));
        return status;
    }
}
EOF
  # What NuGet writes into a packages.config project: the .props import first, the .targets import last.
  cat > "$app/App.csproj" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<Project ToolsVersion="4.0" DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <Import Project="$copy/build/Segrt.Net.props" />
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <AssemblyName>App</AssemblyName>
    <TargetFrameworkVersion>v4.6.1</TargetFrameworkVersion>
    <OutputPath>bin\\</OutputPath>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="System" />
    <Compile Include="Program.cs" />
  </ItemGroup>
  <Import Project="\$(MSBuildToolsPath)\\Microsoft.CSharp.targets" />
  <Import Project="$copy/build/Segrt.Net.targets" />
</Project>
EOF
  # The C# sources ship with their project: Segrt.Net.dll + docs build from the copy.
  (cd "$copy/bindings/csharp" && xbuild /nologo /verbosity:minimal /p:OutputPath="$work/Segrt.Net/" \
      /p:IntermediateOutputPath="$work/Segrt.Net-obj/" Segrt.Net.csproj) > "$work/segrt-net.log" 2>&1 \
    || { cat "$work/segrt-net.log"; echo "the package's Segrt.Net.csproj does not build" >&2; exit 1; }
  test -f "$work/Segrt.Net/Segrt.Net.dll" && test -f "$work/Segrt.Net/Segrt.Net.xml"
  echo "bindings/csharp/Segrt.Net.csproj from the copy builds Segrt.Net.dll + Segrt.Net.xml"
  build() { rm -rf "${app:?}/bin" "${app:?}/obj"; (cd "$app" && xbuild /nologo /verbosity:minimal "$@" App.csproj 2>&1); }
  for bad in "/p:PlatformTarget=x86" "/p:PlatformTarget=AnyCPU /p:Prefer32Bit=true"; do
    # shellcheck disable=SC2086
    if log=$(build $bad); then echo "$log"; echo "xbuild $bad succeeded; Segrt.Net.targets must stop it" >&2; exit 1; fi
    grep -q "error : segrt: " <<<"$log" || { echo "$log"; echo "xbuild $bad failed without segrt's message" >&2; exit 1; }
    echo "xbuild $bad: fails as it should: $(grep -o 'error : segrt: .\{0,90\}' <<<"$log" | head -n 1)..."
  done
  for good in "/p:PlatformTarget=x64" "/p:PlatformTarget=AnyCPU /p:Prefer32Bit=false"; do
    # shellcheck disable=SC2086
    log=$(build $good) || { echo "$log"; echo "xbuild $good failed" >&2; exit 1; }
    for f in "$copy"/runtimes/linux-x64/native/*; do
      cmp -s "$f" "$app/bin/$(basename "$f")" || { echo "$(basename "$f") not copied next to App.exe" >&2; exit 1; }
    done
    ran=$(cd / && "${clean_env[@]}" mono "$app/bin/App.exe")
    grep -q "loaded from $app/bin/libonnxruntime.so" <<<"$ran" || { echo "$ran"; echo "App.exe did not load segrt from bin/" >&2; exit 1; }
    echo "xbuild $good: builds, native files next to App.exe, mono App.exe: $ran"
  done
else
  echo "xbuild/mono not installed: MSBuild behaviour not checked (well-formedness only)"
fi
echo "package check passed in $(( $(date +%s) - start )) s"
