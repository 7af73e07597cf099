#!/usr/bin/env bash
# The committed header compiles warning-free as C99 and C++11, and including it twice is harmless;
# every versioned struct starts with its uint32_t struct_size (what `T s = { sizeof s }` and the
# struct_size contract rely on).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/twice.c" <<'C'
#include "segrt.h"
#include "segrt.h"
#include <stddef.h>
/* A negative array size if a versioned struct does not start with a 4-byte struct_size. */
#define FIRST_IS_SIZE(T) typedef char T##_starts_with_struct_size[offsetof(T, struct_size) == 0 && sizeof(((T *)0)->struct_size) == 4 ? 1 : -1]
FIRST_IS_SIZE(SegOptions);
FIRST_IS_SIZE(SegEverythingOptions);
FIRST_IS_SIZE(SegTrackOptions);
FIRST_IS_SIZE(SegRunInfo);
FIRST_IS_SIZE(SegSam2Result);
FIRST_IS_SIZE(SegSam2PromptsInfo);
FIRST_IS_SIZE(SegEverythingInfo);
FIRST_IS_SIZE(SegTrackInfo);
FIRST_IS_SIZE(SegTrackState);
FIRST_IS_SIZE(SegPropagation);
int main(void) {
    /* The size first, then the defaults (C99 designated / C++11 value-initialised: both free of
     * -Wmissing-field-initializers, which `{ sizeof o }` trips under -Wextra). */
#ifdef __cplusplus
    SegOptions o{};
    o.struct_size = sizeof o;
#else
    SegOptions o = {.struct_size = sizeof o};
#endif
    SegImage img;
    SegMask mask;
    SegRunInfo info;
    (void)img; (void)mask; (void)info;
    return seg_options_default(&o) == SEG_OK && SEGRT_VERSION_MAJOR >= 0 && SEG_ABI_VERSION >= 1 ? 0 : 1;
}
C
cp "$tmp/twice.c" "$tmp/twice.cpp"
gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude -c "$tmp/twice.c" -o "$tmp/c.o"
g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude -c "$tmp/twice.cpp" -o "$tmp/cpp.o"
# the version macros match Cargo.toml
want=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
grep -q "#define SEGRT_VERSION \"$want\"" include/segrt.h || { echo "include/segrt.h does not carry version $want"; exit 1; }
# every export in the header has a DllImport in the C# bindings
h=$(grep -cE '^[A-Za-z].*\bseg_[a-z_0-9]+\(' include/segrt.h)
cs=$(grep -c 'DllImport' bindings/csharp/NativeMethods.g.cs)
[ "$h" = "$cs" ] || { echo "header exports $h functions, C# bindings import $cs"; exit 1; }
echo "header: C99 and C++11 clean, version $want, $h exports = $cs DllImports"
