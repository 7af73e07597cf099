#!/usr/bin/env python3
"""Compiles the C, C++ and C# code blocks of the Markdown files, as rustdoc compiles Rust doc examples.

Every fenced block tagged c, cpp (c++) or csharp (cs, c#) in a Markdown file git tracks is compiled: C with
gcc -std=c99 and C++ with g++ -std=c++11 against include/ (warnings as errors, but a fragment may leave a
variable unused), C# with Mono's mcs against the .NET Framework 4.6.1 reference assemblies and the wrapper
(bindings/csharp, built into a DLL once). Most blocks are fragments, so each is wrapped: its #include lines
and C# using directives go to the top of the file, the rest into a function body (C, C++) or a method (C#);
a C# block that starts with a method goes into the class as it is, and a block with its own main() or class
is compiled as it stands. The names fragments use without declaring them (pixels, width, bitmap, token, ...)
are declared around them, in CONTEXT below, where a block's own declarations shadow them; `...` standing for
the reader's own code is an empty statement. A #line directive makes compiler messages name the Markdown
file and line.

A block that cannot compile (WPF, which Mono lacks) is preceded by `<!-- no-compile: REASON -->`.
Prints how many blocks it compiled per language; fails naming file:line of each block that did not compile.
Usage: scripts/doc_snippets.py [FILE.md ...]   (paths from the repository root; default: every Markdown file git tracks)
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANGS = {"c": "c", "cpp": "cpp", "c++": "cpp", "csharp": "cs", "cs": "cs", "c#": "cs"}
NO_COMPILE = re.compile(r"^\s*<!--\s*no-compile:\s*(.*?)\s*-->\s*$")
# `...` as a statement: alone on its line or between braces (not `for (...)`, not inside a string).
ELLIPSIS = re.compile(r"(^|\{)(\s*)\.\.\.(?=\s*(?:\}|//|/\*|$))")

# The names the fragments use without declaring them. C and C++: unused parameters raise no -Wall
# warning, and the fragment goes into an inner block where its own declarations may shadow them.
# C#: fields, which a local of the same name may shadow.
CONTEXT = {
    "c": """\
    unsigned char *pixels, int width, int height, int stride, int w, int h,
    uint8_t *mask_buf, uint8_t *m0, uint8_t *m1, SegImage img, SegImage frame0, SegImage next_frame,
    SegMask mask, SegSession *s, SegSession *sam, SegRunInfo info, SegProgressCallback on_progress, void *ui,
    Hobject image, Hobject *slices, Hlong num_slices,
    double row, double column, double row1, double column1, double row2, double column2,
    const uint8_t *model_bytes, size_t model_len, const uint8_t *data_bytes, size_t data_len""",
    "cpp": """\
    segrt::Session &session, SegImage img, const std::vector<std::vector<uint8_t>> &frames,
    void (*wait_for_user_abort)()""",
    "cs": """\
    string encoderPath = "", decoderPath = "";
    Bitmap bitmap = null, firstFrame = null, bigBitmap = null;
    IEnumerable<Bitmap> nextFrames = null;
    InputImage image = null;
    byte[] pixels = null;
    int width = 0, height = 0, stride = 0;
    float x = 0, y = 0;
    IList<Sam2Point> points1 = null, points2 = null;
    RectangleF? box = null;
    UnetSegmenter unet = null;
    Sam2Segmenter sam = null;
    Sam2Annotator annotator = null;
    CancellationToken token = default(CancellationToken);
    CancellationTokenSource encodeCts = null;
    Task encoding = null;
    IProgress<SegrtProgress> progress = null;
    PictureBox pictureBox = null;
    ProgressBar progressBar = null;
    Camera camera = null;
    InputImage CopyPixels(Bitmap b) { return b; }
    class Camera { public bool Next(out IntPtr frame, out int stride) { frame = IntPtr.Zero; stride = 0; return false; } }""",
}

C_HEAD = "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include \"segrt_halcon.h\"\n"
CPP_HEAD = "#include <cstdint>\n#include <cstdio>\n#include <thread>\n#include <vector>\n#include \"segrt.hpp\"\n"
CS_HEAD = ("using System; using System.Collections.Generic; using System.Drawing; using System.Threading;\n"
           "using System.Threading.Tasks; using System.Windows.Forms; using Segrt;\n")
# C# warnings a fragment may cause: a variable or field left unused, a using repeated, an async method
# without await.
CS_NOWARN = "0105,0168,0169,0219,0414,0649,1998"
CS_REFS = ["-r:System.dll", "-r:System.Core.dll", "-r:System.Drawing.dll", "-r:System.Windows.Forms.dll"]
MCS = ["mcs", "-sdk:4.6.1", "-noconfig", "-platform:x64", "-langversion:7.2"]
GCC_WARN = ["-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-but-set-variable"]
INCLUDES = ["-I" + os.path.join(REPO, "include"), "-I" + os.path.join(REPO, "examples/halcon"), "-DSEGRT_HALCON_STANDIN"]


def blocks(path):
    """(language, first content line, content lines, no-compile reason or None) per tagged block."""
    lines = open(os.path.join(REPO, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, tag = m.group(1), m.group(2), m.group(3).lower()
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[end]):
            end += 1
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:end]]
        prev = next((l for l in reversed(lines[:i]) if l.strip()), "")
        skip = NO_COMPILE.match(prev)
        if tag in LANGS:
            yield LANGS[tag], i + 2, body, (skip.group(1) if skip else None)
        i = end + 1


def hoist(body, pattern):
    """Splits the lines matching pattern (kept blank in place, so line numbers hold) from the rest."""
    top = [l for l in body if re.match(pattern, l)]
    rest = ["" if re.match(pattern, l) else ELLIPSIS.sub(r"\1\2/* ... */", l) for l in body]
    return "\n".join(top), "\n".join(rest)


def wrap(lang, path, line, body):
    """The compilable source of one block."""
    at = '#line %d "%s"\n' % (line, path)
    if lang in ("c", "cpp"):
        top, rest = hoist(body, r"^\s*#\s*include\b")
        head = C_HEAD if lang == "c" else CPP_HEAD
        if re.search(r"^\w[\w\s\*]*\bmain\s*\(", rest, re.M):
            return head + top + "\n" + at + rest + "\n"
        return "%s%s\nint snippet(\n%s)\n{\n{\n%s%s\n}\nreturn 0;\n}\n" % (head, top, CONTEXT[lang], at, rest)
    top, rest = hoist(body, r"^\s*using\s+[\w.]+\s*;")
    if re.search(r"^\s*((public|internal|static|sealed)\s+)*(class|namespace)\b", rest, re.M):
        return CS_HEAD + top + "\n" + at + rest + "\n"
    first = next((l for l in rest.split("\n") if l.strip() and not l.strip().startswith("//")), "")
    member = re.match(r"^\s*((public|private|static|async|override)\s+)*[\w.<>\[\]]+\s+\w+\s*\([^;=]*\)\s*$", first)
    if member:
        return "%s%s\nclass Snippet\n{\n%s\n%s%s\n}\n" % (CS_HEAD, top, CONTEXT["cs"], at, rest)
    return "%s%s\nclass Snippet\n{\n%s\nasync Task Run()\n{\n%s%s\n}\n}\n" % (CS_HEAD, top, CONTEXT["cs"], at, rest)


def build_wrapper(tmp):
    """Segrt.Net.dll from the wrapper's sources, as its project compiles them (tests/csharp/run.sh)."""
    src = os.path.join(REPO, "bindings/csharp")
    files = sorted(f for f in glob.glob(src + "/*.cs") + glob.glob(src + "/*/*.cs") if "/bin/" not in f and "/obj/" not in f)
    dll = os.path.join(tmp, "Segrt.Net.dll")
    refs = ["-r:System.dll", "-r:System.Core.dll", "-r:System.Drawing.dll", "-r:System.Runtime.Serialization.dll", "-r:System.Xml.dll"]
    subprocess.run(MCS + ["-unsafe+", "-target:library", "-out:" + dll] + refs + files, check=True, stdout=subprocess.DEVNULL)
    return dll


def compile_block(lang, source, tmp, dll):
    src = os.path.join(tmp, "snippet." + lang)
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    if lang == "c":
        cmd = ["gcc", "-std=c99"] + GCC_WARN + INCLUDES + ["-fsyntax-only", src]
    elif lang == "cpp":
        cmd = ["g++", "-std=c++11"] + GCC_WARN + INCLUDES + ["-fsyntax-only", src]
    else:
        cmd = MCS + ["-target:library", "-warnaserror+", "-nowarn:" + CS_NOWARN, "-r:" + dll,
                     "-out:" + os.path.join(tmp, "snippet.dll")] + CS_REFS + [src]
    r = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return r.returncode == 0, r.stdout


def main(paths):
    if not paths:
        paths = subprocess.check_output(["git", "ls-files", "*.md"], cwd=REPO, universal_newlines=True).split()
    compiled = {"c": 0, "cpp": 0, "cs": 0}
    skipped, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        dll = None
        for path in paths:
            for lang, line, body, reason in blocks(path):
                where = "%s:%d" % (path, line - 1)
                if reason is not None:
                    if not reason:
                        failed.append(where + " (%s): no-compile needs a reason" % lang)
                    else:
                        skipped.append("%s (%s): %s" % (where, lang, reason))
                    continue
                if lang == "cs" and dll is None:
                    dll = build_wrapper(tmp)
                ok, out = compile_block(lang, wrap(lang, path, line, body), tmp, dll)
                if ok:
                    compiled[lang] += 1
                else:
                    failed.append("%s (%s)" % (where, lang))
                    out = out.replace(tmp + os.sep, "")  # mcs reads #line paths as relative to the source
                    print("FAILED %s (%s):\n%s" % (where, lang, out.rstrip()), flush=True)
    print("doc snippets compiled: C %d, C++ %d, C# %d" % (compiled["c"], compiled["cpp"], compiled["cs"]))
    for s in skipped:
        print("  not compiled: " + s)
    if failed:
        print("%d block(s) did not compile:\n  %s" % (len(failed), "\n  ".join(failed)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
