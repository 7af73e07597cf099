#!/usr/bin/env python3
"""Lists the CUDA architectures compiled into a library (ELF .so or Windows PE .dll) by reading its
embedded fatbins: the SASS (cubin) and PTX entries per architecture, as `cuobjdump --list-elf` /
`--list-ptx` count them. cuobjdump on Linux reads only ELF hosts ("does not contain device code" for
a DLL), so this reads the fatbin container itself (magic 0xBA55ED50), which is the same in both.

    python3 tests/gpu/fatbin_archs.py libonnxruntime_providers_cuda.so [onnxruntime_providers_cuda.dll ...]
"""
import collections
import mmap
import struct
import sys

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
KIND = {1: "ptx", 2: "sass"}
# Entry flag for an arch-specific target (sm_90a, sm_120a): runs on that exact compute capability only.
# Found by comparing with cuobjdump 13.5's names for onnxruntime-gpu's Linux provider libraries: its
# sm_90a and sm_120a entries are exactly the ones with this bit.
ARCH_SPECIFIC_FLAG = 0x100000


def entries(data):
    """Yields (kind, arch, flags) for every entry of every fatbin in `data`."""
    at = data.find(FATBIN_MAGIC)
    while at != -1:
        version, header_size, fat_size = struct.unpack_from("<HHQ", data, at + 4)
        if version != 1 or header_size != 16 or fat_size == 0 or at + 16 + fat_size > len(data):
            at = data.find(FATBIN_MAGIC, at + 4)
            continue
        entry = at + 16
        end = entry + fat_size
        while entry + 64 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            if kind not in KIND or entry_header < 64:
                break
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            flags = struct.unpack_from("<Q", data, entry + 40)[0]
            yield KIND[kind], arch, flags
            entry += entry_header + payload
        at = data.find(FATBIN_MAGIC, max(end, at + 4))


def main(paths):
    for path in paths:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            counts = collections.Counter()
            for kind, arch, flags in entries(data):
                counts[(kind, arch, flags)] += 1
        print(f"== {path}")
        for (kind, arch, flags), n in sorted(counts.items()):
            name = f"sm_{arch}" + ("a" if flags & ARCH_SPECIFIC_FLAG else "")
            print(f"  {kind:4} {name:8} {n} entries (flags 0x{flags:x})")


if __name__ == "__main__":
    main(sys.argv[1:])
