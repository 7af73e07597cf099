#!/usr/bin/env bash
# Builds the Segrt.Net NuGet package (.NET Framework 4.6.1, x64):  dist/Segrt.Net.<version>.nupkg
#   lib/net461/Segrt.Net.dll, Segrt.Net.xml       the managed wrapper (bindings/csharp/Segrt.Net.csproj)
#   build/net461/Segrt.Net.props, .targets       copy runtimes/<rid>/native/* beside the program; refuse
#                                                x86 and AnyCPU + Prefer32Bit (packaging/msbuild/)
#   runtimes/linux-x64/native/                    libsegrt.so + libonnxruntime.so.<version> (this build)
#   runtimes/win-x64/native/                      segrt.dll + onnxruntime.dll when SEGRT_WIN_X64_NATIVE names
#                                                a folder holding them (built on Windows: see
#                                                packaging/win-x64-native-README.txt); otherwise that README.
# The managed assembly is Segrt.Net.dll and the native library segrt.dll / libsegrt.so: different files
# even where file names ignore case, so both sit beside the program.
# Usage: scripts/pack-nuget.sh   (needs target/<profile>/libsegrt.so, .onnxruntime/, mono's xbuild, nuget)
#   SEGRT_PACKAGE_PROFILE=debug  packs target/debug (CI); default release (what users get)
#   SEGRT_WIN_X64_NATIVE=dir     adds dir/segrt.dll and dir/onnxruntime.dll as runtimes/win-x64/native/
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${SEGRT_PACKAGE_PROFILE:-release}"
lib="target/$profile/libsegrt.so"
[ -f "$lib" ] || { echo "$lib is missing: build it first (cargo build${profile/debug/}${profile/release/ --release})" >&2; exit 1; }
ort_files=(.onnxruntime/libonnxruntime.so.*.*.*)
[ -f "${ort_files[0]}" ] || { echo ".onnxruntime/ is empty: run scripts/fetch-ort.sh" >&2; exit 1; }
command -v nuget >/dev/null || { echo "nuget is not installed (Debian: apt-get install nuget)" >&2; exit 1; }
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "no version in Cargo.toml" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd bindings/csharp && xbuild /nologo /v:minimal /p:Configuration=Release /p:OutputPath="$tmp/bin/" \
    /p:IntermediateOutputPath="$tmp/obj/" Segrt.Net.csproj) > "$tmp/xbuild.log" 2>&1 || { cat "$tmp/xbuild.log" >&2; exit 1; }

pkg="$tmp/pkg"
mkdir -p "$pkg"/{lib/net461,build/net461,runtimes/linux-x64/native,runtimes/win-x64/native}
cp "$tmp/bin/Segrt.Net.dll" "$tmp/bin/Segrt.Net.xml" "$pkg/lib/net461/"
cp packaging/msbuild/Segrt.Net.props packaging/msbuild/Segrt.Net.targets "$pkg/build/net461/"
cp "$lib" "${ort_files[0]}" "$pkg/runtimes/linux-x64/native/"
if [ -n "${SEGRT_WIN_X64_NATIVE:-}" ]; then
  for f in segrt.dll onnxruntime.dll; do
    [ -f "$SEGRT_WIN_X64_NATIVE/$f" ] || { echo "SEGRT_WIN_X64_NATIVE: $SEGRT_WIN_X64_NATIVE/$f is missing" >&2; exit 1; }
    cp "$SEGRT_WIN_X64_NATIVE/$f" "$pkg/runtimes/win-x64/native/"
  done
  windows="segrt.dll + onnxruntime.dll from $SEGRT_WIN_X64_NATIVE"
else
  cp packaging/win-x64-native-README.txt "$pkg/runtimes/win-x64/native/README.txt"
  windows="not included (README.txt says how)"
fi
cat > "$pkg/Segrt.Net.nuspec" <<NUSPEC
<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://schemas.microsoft.com/packaging/2011/08/nuspec.xsd">
  <metadata>
    <id>Segrt.Net</id>
    <version>$version</version>
    <title>Segrt.Net</title>
    <authors>segrt</authors>
    <requireLicenseAcceptance>false</requireLicenseAcceptance>
    <description>.NET Framework 4.6.1+ (x64) wrapper of segrt, a native UNet and SAM2 segmentation runtime over ONNX Runtime: Segrt.Net.dll, with the native libraries copied beside the program at build time.</description>
    <tags>segmentation unet sam2 onnxruntime native x64</tags>
  </metadata>
  <files>
    <file src="lib/**" target="lib" />
    <file src="build/**" target="build" />
    <file src="runtimes/**" target="runtimes" />
  </files>
</package>
NUSPEC
mkdir -p dist
rm -f "dist/Segrt.Net.$version.nupkg"
nuget pack "$pkg/Segrt.Net.nuspec" -BasePath "$pkg" -OutputDirectory dist -NoPackageAnalysis -NonInteractive > "$tmp/pack.log" 2>&1 \
  || { cat "$tmp/pack.log" >&2; exit 1; }
nupkg="dist/Segrt.Net.$version.nupkg"
[ -f "$nupkg" ] || { cat "$tmp/pack.log" >&2; echo "nuget pack wrote no $nupkg" >&2; exit 1; }
echo "nupkg: $nupkg ($(du -h "$nupkg" | cut -f1)); linux-x64 from target/$profile; win-x64: $windows"
python3 - "$nupkg" <<'PY'
import sys, zipfile
for n in sorted(zipfile.ZipFile(sys.argv[1]).namelist()):
    if not n.startswith(("_rels/", "package/", "[Content_Types]")): print("  " + n)
PY
