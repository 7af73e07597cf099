#!/usr/bin/env python3
"""The house rules that keep src/ readable, checked in CI (`just house`):

1. no file under src/ is longer than MAX_LINES lines (a longer file does several jobs: split it);
2. the maintainers' map (docs/src/maintainers/architecture.md) names every file and folder under
   src/, and every src/ path it names exists: a new module lands with its line on the map;
3. no circle between the modules of a folder (outside their tests): a module that needs a sibling
   which needs it back is one job in two files, or shares a piece that belongs to a third.

Exit status 1 with one line per problem. `--list` prints the files by size instead.
"""
import pathlib
import re
import subprocess
import sys

MAX_LINES = 600
# Circles that were there when rule 3 came, to be cut (then taken out of here): a circle that is not
# inside one of these fails, and so does one of these that is gone.
KNOWN_CIRCLES = {
    # control::run_error words the engine's failure; options holds OpenVINO's options type; runtime
    # names the build flavour engine::providers tells
    "src": [{"control", "engine", "options", "runtime"}],
    # session registers providers, providers' probe builds a session; the last arena user stops the idle timer
    "src/engine": [{"providers", "session"}, {"arena", "idle_release"}],
    # evidence builds find's `Found`, find calls instances, which uses both
    "src/sam2/reference": [{"evidence", "find", "instances"}],
}
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


def sibling_imports(folder, files):
    """{module: the sibling modules it names} for the modules of `folder` (its files but mod.rs, and its
    subfolders), from `super::NAME` / `crate::path::NAME` outside `#[cfg(test)]`."""
    rel = folder.relative_to(ROOT / "src").as_posix()
    crate_path = "crate::" + rel.replace("/", "::") if rel != "." else "crate"
    modules = {}
    for p in files:
        part = p.relative_to(folder).parts
        if len(part) == 1 and p.suffix == ".rs" and p.name not in ("mod.rs", "lib.rs", "main.rs"):
            modules.setdefault(p.stem, []).append((p, 1))
        elif len(part) > 1 and p.suffix == ".rs":
            modules.setdefault(part[0], []).append((p, len(part)))
    names = set(modules)
    graph = {}
    for m, sources in modules.items():
        uses = set()
        for p, depth in sources:
            text = p.read_text(encoding="utf-8").split("#[cfg(test)]")[0]
            text = re.sub(r"//[^\n]*", "", text)
            up = "::".join(["super"] * depth)
            for prefix in (up, crate_path):
                for n in names - {m}:
                    if re.search(rf"\b{re.escape(prefix)}::{n}\b", text) or \
                            re.search(rf"\b{re.escape(prefix)}::\{{[^}}]*\b{n}\b", text):
                        uses.add(n)
        graph[m] = uses
    return graph


def circles(graph):
    """The circles of the graph: its strongly connected components of two modules or more (Tarjan)."""
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                found.append(set(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


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

    for folder in sorted({p.parent for p in files} | {ROOT / "src"}):
        inside = [p for p in files if folder in p.parents]
        where = folder.relative_to(ROOT).as_posix()
        known = KNOWN_CIRCLES.get(where, [])
        found = circles(sibling_imports(folder, inside))
        for part in found:
            if not any(part <= k for k in known):
                problems.append(f"{where}/: these modules import each other in a circle: {', '.join(sorted(part))}")
        for k in known:
            if not any(part <= k for part in found):
                problems.append(f"{where}/: the known circle {', '.join(sorted(k))} is gone: take it out of KNOWN_CIRCLES")

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"house: {len(files)} files under src/, none over {MAX_LINES} lines; the map names all {len(files)} and their {len(folders)} folders; no circle between a folder's modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
