#!/usr/bin/env bash
# Cross-builds segrt for Windows x64 on Linux and the C/C++ test hosts against it, and fetches the
# official onnxruntime.dll; tests/windows/run.sh runs them all under Wine, scripts/package-windows.sh
# zips them. (scripts/build-windows.ps1 is the MSVC build on a Windows PC, untested here.)
#
# Target: x86_64-win7-windows-gnu, not x86_64-pc-windows-gnu. The latter's std imports ProcessPrng
# from bcryptprimitives.dll, which Wine 8 lacks (LoadLibrary fails with error 126 unless a shim DLL is
# put beside the program); the win7 target uses older APIs (RtlGenRandom), so the same DLL runs on
# Wine 8 as it is and on Windows 7 to 11. Neither target is shipped by rustup for this machine's
# toolchain: Debian's rustc (rustc-web) builds std from rust-web-src (RUSTC_BOOTSTRAP=1, -Zbuild-std).
#
# Profile: release. Measured on the 2-core build machine, shared with other builds (load average 4):
# 14 min 34 s from nothing (the standard library included), 9 s when target/windows is warm and
# nothing changed. The release binaries are what the zip ships, so CI tests what users get, and they
# run the Wine tests in under half a minute. A debug build was not timed.
# SEGRT_WINDOWS_PROFILE=debug builds the debug form.
#
# Outputs, in $CARGO_TARGET_DIR (default target/windows, ignored by git):
#   x86_64-win7-windows-gnu/<profile>/segrt.dll, segrt.exe, libsegrt.dll.a (the import library)
#   hosts/test_segrt.exe, test_segrt_cpp.exe, test_track.exe, test_track_cpp.exe, test_paths.exe (mingw,
#   linked against segrt.dll)
# and, in the repository's git-ignored .onnxruntime/win-x64/: onnxruntime.dll (sha256 pinned), LICENSE
# and ThirdPartyNotices.txt from the wheel.
# Installs what is missing through scripts/setup.sh (its windows group: Debian's rustc-web 1.96,
# mingw-w64, wine64).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$(date +%s)
profile=${SEGRT_WINDOWS_PROFILE:-release}
target=x86_64-win7-windows-gnu
export CARGO_TARGET_DIR=${SEGRT_WINDOWS_TARGET_DIR:-$repo/target/windows}

./scripts/setup.sh windows

# ONNX Runtime for Windows x64: the official wheel's DLL, pinned by its sha256 (the wheel's own hash
# differs per Python version; the DLL inside is the same).
ort_version=$(tr -d "[:space:]" < scripts/ort-version.txt)
ort_sha256=8482d2ee174e28504f99730fb01d6861575870283de4ed3a897ad39170d9a9b9   # onnxruntime.dll 1.31.1
ort_dir=.onnxruntime/win-x64
if [ "$ort_version" != 1.31.1 ]; then
  echo "scripts/ort-version.txt says $ort_version: update ort_sha256 in $0 for its onnxruntime.dll"; exit 1
fi
if ! echo "$ort_sha256  $ort_dir/onnxruntime.dll" | sha256sum --check --status 2>/dev/null; then
  echo "== fetching onnxruntime==$ort_version (win_amd64 wheel) from PyPI"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform win_amd64 --python-version 3.11 --dest "$tmp" "onnxruntime==$ort_version"
  mkdir -p "$ort_dir"
  (cd "$tmp" && unzip -q -o onnxruntime-*.whl onnxruntime/capi/onnxruntime.dll onnxruntime/LICENSE onnxruntime/ThirdPartyNotices.txt)
  echo "$ort_sha256  $tmp/onnxruntime/capi/onnxruntime.dll" | sha256sum --check --quiet \
    || { echo "onnxruntime.dll from the wheel does not have the pinned sha256"; exit 1; }
  cp "$tmp/onnxruntime/capi/onnxruntime.dll" "$tmp/onnxruntime/LICENSE" "$tmp/onnxruntime/ThirdPartyNotices.txt" "$ort_dir/"
  (cd "$ort_dir" && sha256sum onnxruntime.dll > SHA256SUMS)
fi
echo "ONNX Runtime $ort_version for Windows x64 in $ort_dir/"

# The linker for the Windows targets, in a config file under the target dir (the tree stays clean).
mkdir -p "$CARGO_TARGET_DIR"
cat > "$CARGO_TARGET_DIR/cross.toml" <<'EOF'
[target.x86_64-win7-windows-gnu]
linker = "x86_64-w64-mingw32-gcc"
[target.x86_64-pc-windows-gnu]
linker = "x86_64-w64-mingw32-gcc"
EOF

# One cargo invocation builds segrt.dll, segrt.exe and the Rust C-ABI tests that run under Wine
# (tests/windows/rust-tests.txt). Building test targets brings the dev-dependencies' features into the
# resolution; a `cargo build` without them and a `cargo test` after it would each compile every
# dependency (the proc-macros' features differ, and so every crate's hash). The library and the
# executable are the ordinary release artifacts, the ones the zip ships and the tests run.
mapfile -t rust_tests < <(grep -vE '^\s*(#|$)' tests/windows/rust-tests.txt)
test_args=(); for t in "${rust_tests[@]}"; do test_args+=(--test "$t"); done
echo "== segrt.dll, segrt.exe and ${#rust_tests[@]} Rust test files for $target ($profile), Debian's rustc $(/usr/bin/rustc --version | cut -d' ' -f2)"
profile_flag=(); [ "$profile" = release ] && profile_flag=(--release)
build_start=$(date +%s)
# Debian's cargo is first on PATH only as /usr/bin/cargo; rustup's cargo works too, given RUSTC.
RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build "${profile_flag[@]}" \
  --config "$CARGO_TARGET_DIR/cross.toml" --target "$target" -Zbuild-std=std,panic_abort --lib --bin segrt "${test_args[@]}"
out=$CARGO_TARGET_DIR/$target/$profile
echo "built in $(( $(date +%s) - build_start )) s: $(ls -l "$out/segrt.dll" "$out/segrt.exe" | awk '{printf "%s %d bytes; ", $NF, $5}')"

echo "== C and C++ test hosts (mingw-w64, linked against segrt.dll)"
hosts=$CARGO_TARGET_DIR/hosts
mkdir -p "$hosts"
# Threads (test_segrt.c cancels from another thread, test_track.c runs tracks on several) through mingw's
# winpthreads, linked statically so no libwinpthread-1.dll has to sit beside the test programs.
x86_64-w64-mingw32-gcc -O1 -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_segrt.c \
  -L"$out" -lsegrt -Wl,-Bstatic -lwinpthread -Wl,-Bdynamic -o "$hosts/test_segrt.exe"
x86_64-w64-mingw32-gcc -O1 -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude tests/c/test_track.c \
  -L"$out" -lsegrt -Wl,-Bstatic -lwinpthread -Wl,-Bdynamic -lpsapi -o "$hosts/test_track.exe"
# The posix flavour of mingw's g++ (the win32 one has no std::thread, which the C++ test uses to cancel
# from another thread), its runtime linked in whole (-static; segrt.dll through its import library, named
# as a file so -static does not look for a static libsegrt.a): no mingw DLL beside the test programs.
for t in test_segrt test_track; do
  x86_64-w64-mingw32-g++-posix -O1 -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude "tests/c/$t.cpp" \
    -static "$out/libsegrt.dll.a" -o "$hosts/${t}_cpp.exe"
done
# The SAM2 click in a folder named with Chinese characters and a space (UTF-8 path in the source).
x86_64-w64-mingw32-gcc -O1 -std=c99 -Wall -Wextra -Werror -Iinclude tests/windows/test_paths.c \
  -L"$out" -lsegrt -o "$hosts/test_paths.exe"
ls -l "$hosts"/*.exe | awk '{print "  " $NF, $5}'
echo "Windows build done in $(( $(date +%s) - start )) s"
