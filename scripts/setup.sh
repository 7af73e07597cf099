#!/usr/bin/env bash
# Installs what the stages need, all in this one place; each group is skipped when already present, so
# the stages call it freely (`just setup GROUP`).
#   python    .venv/: onnxruntime (scripts/ort-version.txt), numpy, Pillow for the Python references,
#             OpenCV (headless) and pycocotools for the outlines stage, LabelMe's wheel (not installed: its
#             GUI needs Qt; tests/outlines/labelme_loader.py runs its JSON loader) in .venv/wheels, and
#             the prebuilt tools of scripts/tools.txt (just, mdBook, cargo-fuzz) in .venv/bin; ONNX Runtime's
#             Linux library into .onnxruntime/ (scripts/fetch-ort.sh)
#   mono      Mono (mcs, xbuild), the nuget client, Xvfb: the .NET stages (apt)
#   valgrind  valgrind: the C host stages (apt)
#   windows   Debian's rustc-web/cargo-web/rust-web-src (1.96: the x86_64-win7-windows-gnu target and
#             the std source), mingw-w64 gcc and g++, wine64: the Windows stage (apt)
# Usage: scripts/setup.sh [GROUP...]   (no group: all of them)
# apt needs root or sudo; one `apt-get install` for every missing package, `apt-get update` first only
# when that fails or when the installed rustc-web is too old for the Windows target.
set -euo pipefail
cd "$(dirname "$0")/.."
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(python mono valgrind windows)
windows_target=x86_64-win7-windows-gnu

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
apt_missing=()
apt_update_first=false
for group in "${groups[@]}"; do
  case $group in
    python) ;;
    mono) pkgs=(mono-devel nuget xvfb xauth) ;;
    valgrind) pkgs=(valgrind) ;;
    windows)
      pkgs=(rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine64)
      # Bookworm's own rustc-web is 1.85 (no win7 target); bookworm-security has 1.96. Package lists
      # older than that update (a new machine's) would install 1.85: update them first.
      if ! installed rustc-web; then
        apt_update_first=true
      elif ! /usr/bin/rustc --print target-list 2>/dev/null | grep -qx "$windows_target"; then
        apt_missing+=(rustc-web cargo-web rust-web-src); apt_update_first=true
      fi ;;
    *) echo "scripts/setup.sh: unknown group '$group' (python, mono, valgrind, windows)"; exit 2 ;;
  esac
  [ "$group" = python ] && continue
  for p in "${pkgs[@]}"; do installed "$p" || apt_missing+=("$p"); done
done

if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "== setup: apt-get install ${apt_missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { $sudo apt-get install -y -q --no-install-recommends "${apt_missing[@]}" >/dev/null; }
  if $apt_update_first || ! apt_install; then
    $sudo apt-get update >/dev/null
    apt_install
  fi
fi
for group in "${groups[@]}"; do
  if [ "$group" = windows ] && ! /usr/bin/rustc --print target-list | grep -qx "$windows_target"; then
    echo "Debian's rustc ($(/usr/bin/rustc --version)) has no $windows_target target: rustc-web 1.96 from bookworm-security is needed"
    exit 1
  fi
done

if [[ " ${groups[*]} " == *" python "* ]]; then
  ./scripts/fetch-ort.sh >/dev/null
  ort_version=$(tr -d "[:space:]" < scripts/ort-version.txt)
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, PIL, onnxruntime; assert onnxruntime.__version__ == '$ort_version'" 2>/dev/null; then
    echo "== setup: .venv (onnxruntime==$ort_version, numpy, pillow)"
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "onnxruntime==$ort_version" numpy pillow
  fi
  # The outlines stage's references, pinned (OpenCV's wheel is 64 MB; the versions the parity figures
  # in docs/src/quality/testing.md were measured with).
  if ! .venv/bin/python -c "import cv2, pycocotools; assert cv2.__version__ == '5.1.0'" 2>/dev/null; then
    echo "== setup: .venv (opencv-python-headless, pycocotools)"
    .venv/bin/pip install --quiet --disable-pip-version-check "opencv-python-headless==5.1.0.95" "pycocotools==2.0.11"
  fi
  if [ ! -f .venv/wheels/labelme-6.3.1-py3-none-any.whl ]; then
    .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --dest .venv/wheels "labelme==6.3.1"
  fi
  tools_stamp=.venv/tools.txt
  if ! cmp -s scripts/tools.txt "$tools_stamp"; then
    echo "== setup: just, mdBook and cargo-fuzz into .venv/bin (scripts/tools.txt)"
    .venv/bin/pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r scripts/tools.txt
    cp scripts/tools.txt "$tools_stamp"
  fi
fi
