#!/usr/bin/env python3
"""The house rules that keep src/ readable, checked in CI (`just house`):

1. no file under src/ is longer than MAX_LINES lines (a longer file does several jobs: split it);
2. the maintainers' map (docs/src/maintainers/architecture.md) names every file and folder under
   src/, and every src/ path it names exists: a new module lands with its line on the map.

Exit status 1 with one line per problem. `--list` prints the files by size instead.
"""
import pathlib
import re
import subprocess
import sys

MAX_LINES = 600
ROOT = pathlib.Path(__file__).resolve().parents[1]
MAP = ROOT / "docs/src/maintainers/architecture.md"


def tracked_sources():
    """Every file under src/ that git tracks or would add (not the ignored ones)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "src"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return sorted(ROOT / line for line in out.splitlines() if (ROOT / line).is_file())
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in (ROOT / "src").rglob("*") if p.is_file())


def lines(path):
    """The file's line count; 0 for a file that is not text (a font compiled in with include_bytes!)."""
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except UnicodeDecodeError:
        return 0


def main():
    files = tracked_sources()
    if "--list" in sys.argv[1:]:
        for n, p in sorted(((lines(p), p) for p in files), reverse=True):
            print(f"{n:6} {p.relative_to(ROOT)}")
        return 0
    problems = []
    for p in files:
        n = lines(p)
        if n > MAX_LINES:
            problems.append(f"{p.relative_to(ROOT)} has {n} lines, more than {MAX_LINES}: split it by job (one file per job)")

    # The map names paths as links (`](../../../src/...)`) or as code (`src/...`).
    text = MAP.read_text()
    named = set()
    for m in re.finditer(r"\]\(\.\./\.\./\.\./(src/[^)#\s]*)\)|`(src/[^`\s]*)`", text):
        named.add((m.group(1) or m.group(2)).rstrip("/"))
    folders = sorted({p.parent for p in files if p.parent != ROOT / "src"})
    for path in [p.relative_to(ROOT).as_posix() for p in files] + [f.relative_to(ROOT).as_posix() for f in folders]:
        if path not in named:
            problems.append(f"{path} is not on the maintainers' map ({MAP.relative_to(ROOT)}): add its line")
    for path in sorted(named):
        if not (ROOT / path).exists():
            problems.append(f"{MAP.relative_to(ROOT)} names {path}, which does not exist")

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"house: {len(files)} files under src/, none over {MAX_LINES} lines; the map names all {len(files)} and their {len(folders)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
