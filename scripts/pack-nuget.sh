#!/usr/bin/env bash
# Builds the Segrt.Net NuGet package (.NET Framework 4.6.1, x64):  dist/Segrt.Net.<version>.nupkg
#   lib/net461/Segrt.Net.dll, Segrt.Net.xml       the managed wrapper (bindings/csharp/Segrt.Net.csproj)
#   Segrt.Net.nuspec                              packaging/Segrt.Net.nuspec: id, version (Cargo.toml), licence,
#                                                repository commit, release notes
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
# The manifest: packaging/Segrt.Net.nuspec with the version and commit in place. nuget 2.8.7 refuses the
# newer <license> and <repository> elements, so it packs a copy without them; the package then gets the whole
# manifest (without <files>, plus the licenseUrl current clients write for old ones), as a current client packs it.
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
python3 - "$version" "$commit" packaging/Segrt.Net.nuspec "$pkg/Segrt.Net.nuspec" "$tmp/Segrt.Net.nuspec" <<'PY'
import re, sys
version, commit, source, for_packing, for_package = sys.argv[1:]
text = open(source, encoding="utf-8").read().replace("$version$", version).replace("$commit$", commit)
text = re.sub(r"<!--.*?-->\n", "", text, flags=re.S)
license = re.search(r'<license type="expression">([^<]*)</license>', text).group(1)
url = "https://licenses.nuget.org/" + license.replace(" ", "%20")
open(for_packing, "w", encoding="utf-8").write(re.sub(r"\s*<(license|repository)\b[^>]*(/>|>[^<]*</\1>)", "", text))
packaged = re.sub(r"\s*<files>.*?</files>", "", text, flags=re.S)
packaged = re.sub(r"(\s*)(<license [^>]*>[^<]*</license>)", r"\1\2\1<licenseUrl>" + url + "</licenseUrl>", packaged)
open(for_package, "w", encoding="utf-8").write(packaged)
PY
mkdir -p dist
rm -f "dist/Segrt.Net.$version.nupkg"
nuget pack "$pkg/Segrt.Net.nuspec" -BasePath "$pkg" -OutputDirectory dist -NoPackageAnalysis -NonInteractive > "$tmp/pack.log" 2>&1 \
  || { cat "$tmp/pack.log" >&2; exit 1; }
nupkg="dist/Segrt.Net.$version.nupkg"
[ -f "$nupkg" ] || { cat "$tmp/pack.log" >&2; echo "nuget pack wrote no $nupkg" >&2; exit 1; }
python3 - "$nupkg" "$tmp/Segrt.Net.nuspec" <<'PY'
import os, sys, zipfile
nupkg, manifest = sys.argv[1:]
with zipfile.ZipFile(nupkg) as z:
    entries = [(i, z.read(i.filename)) for i in z.infolist()]
with zipfile.ZipFile(nupkg + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
    for info, data in entries:
        z.writestr(info, open(manifest, "rb").read() if info.filename == "Segrt.Net.nuspec" else data)
os.replace(nupkg + ".tmp", nupkg)
PY
echo "nupkg: $nupkg ($(du -h "$nupkg" | cut -f1)); linux-x64 from target/$profile; win-x64: $windows"
python3 - "$nupkg" <<'PY'
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in sorted(z.namelist()):
    if not n.startswith(("_rels/", "package/", "[Content_Types]")): print("  " + n)
nuspec = z.read("Segrt.Net.nuspec").decode("utf-8")
for element in ("version", "license", "licenseUrl", "repository", "releaseNotes"):
    m = re.search(r"<%s\b[^>]*?(/>|>[^<]*</%s>)" % (element, element), nuspec)
    if not m: sys.exit("the package's manifest has no <%s>" % element)
    print("  manifest: " + m.group(0)[:110] + ("..." if len(m.group(0)) > 110 else ""))
PY
