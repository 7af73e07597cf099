#!/usr/bin/env bash
# Two onnxruntime.dll files segrt must refuse with a clear message, for tests/windows/run.sh: ONNX Runtime
# 1.19.2 for x64 (another version) and for x86 (a 32-bit DLL, what an AnyCPU/x86 project may copy beside a
# 64-bit program), from the official PyPI wheels (1.19.2 is the last release with a win32 wheel), each
# pinned by its sha256. Cached in the git-ignored .onnxruntime/win-foreign/{x64,x86}/.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=1.19.2
declare -A sha256=(
  [win_amd64]=4c23048301a4f93c8ad0f714733f2451ede1084c9455c243661019b9857274c0
  [win32]=f3847def14b13e9aee54b46fe5ee6df41c05e0e4f5ee2df3f8030ec27b3a8726
)
declare -A folder=([win_amd64]=x64 [win32]=x86)
for platform in win_amd64 win32; do
  dll=.onnxruntime/win-foreign/${folder[$platform]}/onnxruntime.dll
  if echo "${sha256[$platform]}  $dll" | sha256sum --check --status 2>/dev/null; then continue; fi
  echo "== fetching onnxruntime==$version ($platform wheel) from PyPI"
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform "$platform" --python-version 3.9 --dest "$tmp" "onnxruntime==$version"
  mkdir -p "$(dirname "$dll")"
  unzip -p "$tmp"/onnxruntime-*.whl onnxruntime/capi/onnxruntime.dll > "$tmp/onnxruntime.dll"
  echo "${sha256[$platform]}  $tmp/onnxruntime.dll" | sha256sum --check --quiet \
    || { echo "onnxruntime.dll of the $platform wheel does not have the pinned sha256"; rm -rf "$tmp"; exit 1; }
  mv "$tmp/onnxruntime.dll" "$dll"
  rm -rf "$tmp"
done
