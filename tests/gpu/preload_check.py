"""segrt's preload list against what ONNX Runtime's GPU build needs, on a machine without a GPU.

  1. every library of ONNX Runtime's own `preload_dlls` list (the GPU wheel's onnxruntime/__init__.py,
     evaluated for Linux and for Windows with the wheel's CUDA version) is in segrt's list for that
     system (src/engine/providers/cuda.rs, CUDA_LIBRARIES);
  2. every NEEDED entry (readelf -d) of ONNX Runtime's CUDA and TensorRT provider libraries and of the
     libraries segrt preloads is a system library (ldconfig knows it), the NVIDIA driver
     (libcuda.so.1), ONNX Runtime's own, or in segrt's list for that provider, not marked optional;
     the same for the import tables (objdump -p) of the Windows wheel's provider DLLs;
  3. at run time (the loader's LD_DEBUG=files,libs log of `segrt unet --provider cuda`), segrt itself
     opened each library of its list that is in ONNX Runtime's folder, by absolute path, before ONNX
     Runtime opened its CUDA provider, and the loader searched for no library of the list.

Usage: preload_check.py ORT_FOLDER LD_DEBUG_LOG SEGRT_BINARY WINDOWS_DLL_FOLDER
"""
import ast
import pathlib
import re
import shutil
import subprocess
import sys

DRIVERS = ("libcuda.so.1", "nvcuda.dll")
# Windows' own DLLs and the Visual C++ runtime (installed, never shipped beside ONNX Runtime).
WINDOWS_SYSTEM = re.compile(r"^(kernel32|advapi32|user32|ole32|shell32|ws2_32|setupapi|dbghelp|dxgi|msvcp|vcruntime|ucrtbase|api-ms-win-)", re.I)

ort_dir, ld_log, segrt = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
win_dir = pathlib.Path(sys.argv[4])
root = pathlib.Path(__file__).resolve().parents[2]
failures = []


def fail(message):
    failures.append(message)
    print("  FAIL:", message)


def segrt_list(const, cfg):
    """One `pub const` list of the provider modules (src/engine/providers/) under `#[cfg(cfg)]`: {name: optional}."""
    pattern = r"#\[cfg\(" + re.escape(cfg) + r"\)\]\s*pub const " + const + r": &\[GpuLibrary\] =\s*&\[(.*?)\];"
    sources = sorted((root / "src/engine/providers").rglob("*.rs"))
    m = next((m for m in (re.search(pattern, f.read_text(), re.S) for f in sources) if m), None)
    if not m:
        sys.exit(f"preload_check: {const} under cfg({cfg}) not found in src/engine/providers/")
    return {name: kind == "optional" for kind, name in re.findall(r'(lib|optional)\("([^"]+)"\)', m.group(1))}


def ort_list(is_windows):
    """ONNX Runtime's preload list: `_get_nvidia_dll_paths` and the helpers it calls, run on the
    wheel's own CUDA version (the module itself imports the Python bindings, absent here)."""
    py = ort_dir / "python"
    namespace = {}
    exec((py / "build_and_package_info.py").read_text(), namespace)
    if "cuda_version" not in namespace:
        sys.exit("preload_check: the wheel's build_and_package_info.py has no cuda_version")
    tree = ast.parse((py / "__init__.py").read_text())
    wanted = {"_extract_cuda_major_version", "_get_cufft_version", "_get_nvidia_dll_paths"}
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    if len(functions) != len(wanted):
        sys.exit(f"preload_check: the wheel's __init__.py lacks one of {sorted(wanted)}")
    exec(compile(ast.Module(body=functions, type_ignores=[]), "__init__.py", "exec"), namespace)
    return namespace["cuda_version"], [path[-1] for path in namespace["_get_nvidia_dll_paths"](is_windows)]


def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def imported(path):
    out = subprocess.run(["objdump", "-p", str(path)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"DLL Name: (\S+)", out)


def check_dependencies(lib, deps, ours, provider):
    """`lib`'s vendor dependencies must be on segrt's list for `provider`, and not as optional."""
    for dep in deps:
        if dep in DRIVERS or dep.lower().startswith(("libonnxruntime", "onnxruntime")):
            continue  # the driver is installed, never shipped; ONNX Runtime loads its own files
        if dep not in ours:
            fail(f"{lib} needs {dep}, which is not on segrt's {provider} list (src/engine/providers/)")
        elif ours[dep]:
            fail(f"{lib} needs {dep}, which segrt's {provider} list marks optional (src/engine/providers/)")


ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"  # not on a non-root user's PATH
system = set(re.findall(r"^\s*(\S+) \(", subprocess.run([ldconfig, "-p"], check=True, capture_output=True, text=True).stdout, re.M))
cuda_linux, cuda_windows = segrt_list("CUDA_LIBRARIES", "not(windows)"), segrt_list("CUDA_LIBRARIES", "windows")
trt_linux, trt_windows = segrt_list("TENSORRT_LIBRARIES", "not(windows)"), segrt_list("TENSORRT_LIBRARIES", "windows")

print("1. ONNX Runtime's own preload list (onnxruntime-gpu's onnxruntime/__init__.py) against segrt's")
for system_name, is_windows, ours in (("Linux", False, cuda_linux), ("Windows", True, cuda_windows)):
    cuda_version, theirs = ort_list(is_windows)
    print(f"   {system_name} (built with CUDA {cuda_version}): ONNX Runtime's {theirs}")
    print(f"   {' ' * len(system_name)}   segrt's {list(ours)}")
    for name in theirs:
        if name not in ours:
            fail(f"{name} is on ONNX Runtime's {system_name} preload list, not on segrt's (src/engine/providers/)")
    extra = [f"{n}{' (optional)' if ours[n] else ''}" for n in ours if n not in theirs]
    if extra:
        print(f"   segrt's {system_name} list has more: {', '.join(extra)}")

print("2. NEEDED entries (readelf -d) of the provider libraries and of what segrt preloads; Windows import tables")
for provider, lib, ours in [
    ("CUDA", "libonnxruntime_providers_cuda.so", cuda_linux),
    ("TensorRT", "libonnxruntime_providers_tensorrt.so", {**cuda_linux, **trt_linux}),
] + [("CUDA", n, cuda_linux) for n in cuda_linux if (ort_dir / n).is_file()]:
    vendor = [d for d in needed(ort_dir / lib) if d not in system]
    print(f"   {lib}: {' '.join(vendor) or '(system libraries only)'}")
    check_dependencies(lib, vendor, ours, provider)
for provider, provider_lib, ours in (
    ("CUDA", "onnxruntime_providers_cuda.dll", cuda_windows),
    ("TensorRT", "onnxruntime_providers_tensorrt.dll", {**cuda_windows, **trt_windows}),
):
    vendor = [d for d in imported(win_dir / provider_lib) if not WINDOWS_SYSTEM.match(d)]
    print(f"   {provider_lib} (Windows wheel): {' '.join(vendor)}")
    check_dependencies(provider_lib, vendor, ours, provider)
print("   (cuDNN opens its sub-libraries itself; TensorRT's own libraries are in no wheel fetched: not checked)")

print(f"3. the loader's log of segrt on the CUDA provider ({ld_log.name})")
log = ld_log.read_text(errors="replace")
opened = re.findall(r"file=(\S+) \[\d+\];\s+dynamically loaded by (\S+) \[", log)
order = [path for path, _ in opened]
provider_path = str(ort_dir / "libonnxruntime_providers_cuda.so")
if provider_path not in order:
    fail(f"ONNX Runtime never opened {provider_path}")
for name in cuda_linux:
    path = str(ort_dir / name)
    if not (ort_dir / name).is_file():
        print(f"   {name}: not in the folder (not fetched), so not preloaded")
        continue
    by = [who for p, who in opened if p == path]
    if not by:
        fail(f"{path} was never opened")
    elif pathlib.Path(by[0]).resolve() != segrt.resolve():
        fail(f"{path} was opened by {by[0]}, not by segrt")
    elif provider_path in order and order.index(path) > order.index(provider_path):
        fail(f"{path} was opened after ONNX Runtime's CUDA provider")
    else:
        print(f"   {name}: opened by segrt by absolute path, before the CUDA provider")
searched = set(re.findall(r"find library=(\S+) \[\d+\]; searching", log))
for name in sorted(searched & set(cuda_linux)):
    fail(f"the loader searched for {name}: segrt's preload did not provide it")
print(f"   searched for by name (the system's search): {' '.join(sorted(searched - system)) or 'nothing'} beside system libraries")

if failures:
    print(f"preload check: {len(failures)} failure(s)")
    sys.exit(1)
print("preload check: OK")
