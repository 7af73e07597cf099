#!/usr/bin/env bash
# Builds the release library and assembles the deployable package
#   dist/segrt-<version>-linux-x64/   and   dist/segrt-<version>-linux-x64.tar.gz
# (layout: packaging/README.txt). Versions are read from the built library, never typed here: a probe
# program loads the staged libsegrt.so, which must find ONNX Runtime beside itself, and prints seg_version().
# Usage: scripts/package.sh            (tests/package/check.sh tests the result)
# SEGRT_PACKAGE_PROFILE=debug packages the debug build instead (CI does, to skip a second full build;
# VERSIONS.txt then says so). Packages for users are release builds.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${SEGRT_PACKAGE_PROFILE:-release}"

./scripts/fetch-ort.sh >/dev/null
case "$profile" in
  release) cargo build --release ;;
  debug) cargo build ;;
  *) echo "SEGRT_PACKAGE_PROFILE must be release or debug" >&2; exit 2 ;;
esac
ort_files=(.onnxruntime/libonnxruntime.so.*.*.*)   # the versioned file itself
ort_lib=$(basename "${ort_files[0]}")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Versions, from the library as a user's program will load it: libsegrt.so + ONNX Runtime in one folder.
mkdir "$tmp/lib"
cp target/$profile/libsegrt.so ".onnxruntime/$ort_lib" "$tmp/lib/"
cat > "$tmp/probe.c" <<'EOF'
#include <stdio.h>
#include "segrt.h"
int main(void) {
    char buf[2048];
    SegStatus st = seg_runtime_init(NULL);   /* the default search: beside libsegrt.so first */
    seg_version(buf, sizeof buf);
    printf("%s\n", buf);
    if (st != SEG_OK) { seg_last_error(buf, sizeof buf); fprintf(stderr, "%s\n", buf); return 1; }
    if (seg_abi_version() != SEG_ABI_VERSION) { fprintf(stderr, "ABI %u, header %d\n", seg_abi_version(), SEG_ABI_VERSION); return 1; }
    return 0;
}
EOF
gcc -std=c99 -Wall -Werror -Iinclude "$tmp/probe.c" -o "$tmp/probe" -L"$tmp/lib" -lsegrt -Wl,-rpath,"$tmp/lib"
# e.g. "segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from /tmp/tmp.x/lib/libonnxruntime.so.1.31.1"
line=$(env -u SEGRT_ORT_PATH "$tmp/probe")
echo "probe: $line"
re='^segrt ([^ ]+) \(ABI ([0-9]+)\); ONNX Runtime ([^ ]+) loaded from (.+)$'
[[ $line =~ $re ]] || { echo "unexpected seg_version() text: $line" >&2; exit 1; }
version=${BASH_REMATCH[1]} abi=${BASH_REMATCH[2]} ort_version=${BASH_REMATCH[3]} loaded=${BASH_REMATCH[4]}
if [ "$loaded" != "$(realpath "$tmp/lib/$ort_lib")" ]; then
  echo "libsegrt.so loaded ONNX Runtime from $loaded, not from beside itself" >&2; exit 1
fi
cargo_version=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
[ "$version" = "$cargo_version" ] || { echo "library says $version, Cargo.toml $cargo_version" >&2; exit 1; }
# The newest glibc symbol version the libraries need = the oldest glibc they run on.
glibc=$(objdump -T "$tmp/lib/"* | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)

# 2. The package folder.
name=segrt-$version-linux-x64
pkg=dist/$name
rm -rf "$pkg" "dist/$name.tar.gz"
mkdir -p "$pkg"/{lib,include,bindings/csharp,runtimes/linux-x64/native,runtimes/win-x64/native,build,models/samples,examples/c}
cp target/$profile/libsegrt.so ".onnxruntime/$ort_lib" "$pkg/lib/"
cp target/$profile/libsegrt.so ".onnxruntime/$ort_lib" "$pkg/runtimes/linux-x64/native/"
cp packaging/win-x64-native-README.txt "$pkg/runtimes/win-x64/native/README.txt"
cp include/segrt.h include/segrt.hpp "$pkg/include/"
cp bindings/csharp/Segrt.Net.csproj "$pkg/bindings/csharp/"
# The C# sources keep their folders (Segrt.Net.csproj compiles *.cs and */*.cs).
csharp_dest="$PWD/$pkg/bindings/csharp"
(cd bindings/csharp && find . -maxdepth 2 -name '*.cs' -not -path './bin/*' -not -path './obj/*' -exec cp --parents {} "$csharp_dest/" \;)
cp packaging/msbuild/Segrt.Net.props packaging/msbuild/Segrt.Net.targets "$pkg/build/"
cp models/demo_unet.onnx "$pkg/models/"
cp models/samples/lesion_01.png models/samples/lesion_01_gt.png "$pkg/models/samples/"
cp packaging/examples/c/segment.c packaging/examples/c/Makefile "$pkg/examples/c/"
cp packaging/README.txt "$pkg/"
# C has no PNG decoder: the sample also as binary PPM/PGM for the C example (Pillow, as tests/c does).
python=.venv/bin/python
[ -x "$python" ] || python=python3
"$python" - "$pkg/models/samples" <<'EOF'
import sys, pathlib
from PIL import Image
d = pathlib.Path(sys.argv[1])
Image.open(d / "lesion_01.png").convert("RGB").save(d / "lesion_01.ppm")
Image.open(d / "lesion_01_gt.png").convert("L").save(d / "lesion_01_gt.pgm")
EOF

commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit="$commit plus uncommitted changes"; fi
cat > "$pkg/VERSIONS.txt" <<EOF
segrt $version
C ABI $abi
ONNX Runtime $ort_version ($ort_lib, official onnxruntime==$ort_version PyPI wheel)
platform linux-x64, glibc $glibc or later
built from $commit with $(rustc --version), $profile profile
EOF

# 3. Checksums of every file, then the archive.
(cd "$pkg" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum > "$tmp/SHA256SUMS")
mv "$tmp/SHA256SUMS" "$pkg/SHA256SUMS"
tar -C dist --owner=0 --group=0 --numeric-owner -czf "dist/$name.tar.gz" "$name"
echo "package: $pkg ($(du -sh "$pkg" | cut -f1)), dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1))"
cat "$pkg/VERSIONS.txt"
