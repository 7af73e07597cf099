#!/usr/bin/env python3
"""Checks Windows PE files by their headers: `pe_check.py KIND FILE...`, KIND one of
  native-dll   a PE32+ x86-64 DLL with native code (segrt.dll, onnxruntime.dll)
  native-exe   a PE32+ x86-64 program with native code (segrt.exe)
  managed-x64  a .NET assembly that runs as a 64-bit process (SegrtDemo.exe built with -platform:x64)
  managed      a .NET assembly of any platform (Segrt.Net.dll: AnyCPU, it runs in the host's process)
Prints one line per file; exits 1 when a file is not of its kind (a 32-bit DLL, an AnyCPU program that
would run as 32-bit, a file that is not PE at all)."""
import struct
import sys

MACHINES = {0x14C: "x86", 0x8664: "x86-64", 0xAA64: "ARM64"}


def describe(path):
    data = open(path, "rb").read()
    if data[:2] != b"MZ":
        return None
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        return None
    machine, _, _, _, _, opt_size, characteristics = struct.unpack_from("<HHIIIHH", data, pe + 4)
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    plus = magic == 0x20B
    # Data directory 14 (the CLR header) is non-empty for .NET assemblies.
    directories = opt + (112 if plus else 96)
    clr_rva, clr_size = struct.unpack_from("<II", data, directories + 14 * 8)
    return {
        "machine": MACHINES.get(machine, hex(machine)),
        "format": "PE32+" if plus else "PE32",
        "dll": bool(characteristics & 0x2000),
        "managed": clr_size > 0,
    }


def matches(kind, d):
    native_x64 = d["format"] == "PE32+" and d["machine"] == "x86-64" and not d["managed"]
    return {
        "native-dll": native_x64 and d["dll"],
        "native-exe": native_x64 and not d["dll"],
        "managed-x64": d["managed"] and d["format"] == "PE32+" and d["machine"] == "x86-64",
        "managed": d["managed"],
    }[kind]


def main():
    kind, files = sys.argv[1], sys.argv[2:]
    if kind not in ("native-dll", "native-exe", "managed-x64", "managed") or not files:
        sys.exit(__doc__)
    bad = 0
    for f in files:
        d = describe(f)
        text = "not a PE file" if d is None else f"{d['format']} {d['machine']} {'DLL' if d['dll'] else 'program'}" + (
            " (.NET)" if d["managed"] else "")
        ok = d is not None and matches(kind, d)
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {f}: {text}{'' if ok else ', expected ' + kind}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
