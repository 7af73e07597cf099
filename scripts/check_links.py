#!/usr/bin/env python3
"""Fails on a broken relative link or #anchor in the book and in the repository's Markdown files.

    python3 scripts/check_links.py --book-src docs/src --book-html docs/book FILE.md ...
    python3 scripts/check_links.py --self-test

Checked, for every Markdown file of the book (every page under --book-src) and every FILE.md given:
- a relative link must name a file or folder that exists in the tree (links between pages, to
  repository files such as `../../src/engine/pool.rs`, to other Markdown files);
- an #anchor on a book page must be an id of that page as mdBook built it (read from the HTML under
  --book-html, so the ids are mdBook's own, not a guess at its rules);
- an #anchor on another Markdown file (README.md, models/README.md) must be one of its headings, as
  GitHub names them;
- an #anchor on any other file is an error (a link cannot land there).
Then every relative href of the built HTML pages must land on a built file and, for a page, on one of
its ids, so a link mdBook rewrote (page.md -> page.html) is checked as the reader gets it.

External links (http:, https:, mailto:) are not fetched: CI has no network but the package registries.
Python 3 standard library only.
"""
import argparse
import html.parser
import os
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
FENCE = re.compile(r"^\s*(```|~~~)")
# [text](target "title") and ![alt](target); text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_HREF = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_lines(text, blank_code=True):
    """Yields (line number, line) outside fenced code blocks, inline code spans blanked unless asked."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if in_fence is None:
                in_fence = m.group(1)
            elif m.group(1) == in_fence:
                in_fence = None
            continue
        if in_fence is None:
            yield number, re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line) if blank_code else line


def links_of(text):
    for number, line in markdown_lines(text):
        for pattern in (INLINE_LINK, HTML_HREF):
            for m in pattern.finditer(line):
                yield number, m.group(1)
        m = REFERENCE_DEF.match(line)
        if m:
            yield number, m.group(1)


def github_slug(heading):
    """The id GitHub gives a Markdown heading (before the -1, -2 of repeated headings)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    kept = []
    for ch in text:
        if ch in "-_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            kept.append(ch)
        elif ch == " ":
            kept.append("-")
    return "".join(kept)


def markdown_anchors(path):
    anchors, seen = set(), {}
    for _, line in markdown_lines(path.read_text(encoding="utf-8"), blank_code=False):
        m = HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", path.read_text(encoding="utf-8")):
        anchors.add(m.group(1))
    return anchors


class _Html(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if tag == "a" and name == "href" and value:
                self.hrefs.append((self.getpos()[0], value))


def parse_html(path):
    parser = _Html()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


class Checker:
    def __init__(self, book_src, book_html):
        self.book_src = book_src.resolve() if book_src else None
        self.book_html = book_html.resolve() if book_html else None
        self.errors = []
        self._anchor_cache = {}

    def error(self, where, message):
        self.errors.append(f"{where}: {message}")

    def book_page_html(self, md_path):
        """The built HTML of a book page, or None when md_path is not a page of the book."""
        if not self.book_src or not self.book_html:
            return None
        try:
            rel = md_path.resolve().relative_to(self.book_src)
        except ValueError:
            return None
        name = "index.html" if rel.name.lower() in ("readme.md", "index.md") and rel.parent == Path(".") else None
        return self.book_html / (rel.parent / (name or rel.with_suffix(".html").name))

    def anchors_of(self, path):
        key = path.resolve()
        if key not in self._anchor_cache:
            page = self.book_page_html(key)
            if page is not None:
                self._anchor_cache[key] = parse_html(page).ids if page.is_file() else None
            elif key.suffix.lower() == ".md":
                self._anchor_cache[key] = markdown_anchors(key)
            else:
                self._anchor_cache[key] = None
        return self._anchor_cache[key]

    def check_markdown(self, path):
        text = path.read_text(encoding="utf-8")
        for number, target in links_of(text):
            if EXTERNAL.match(target):
                continue
            where = f"{path}:{number}"
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part) if file_part else path
            if not dest.exists():
                self.error(where, f"link to a missing file: {target}")
                continue
            if not anchor:
                continue
            anchors = self.anchors_of(dest)
            if anchors is None:
                page = self.book_page_html(dest)
                if page is not None:
                    self.error(where, f"{target}: the book has no built page {page} (is it in SUMMARY.md?)")
                else:
                    self.error(where, f"{target}: an anchor on a file that has none")
            elif anchor not in anchors:
                self.error(where, f"link to a missing anchor #{anchor} in {dest}: {target}")

    def check_built_html(self):
        skip = {"print.html", "toc.html", "404.html"}
        for page in sorted(self.book_html.rglob("*.html")):
            if page.name in skip:
                continue
            for line, href in parse_html(page).hrefs:
                if EXTERNAL.match(href) or href.startswith("//"):
                    continue
                where = f"{page}:{line}"
                file_part, _, anchor = href.partition("#")
                dest = (page.parent / file_part).resolve() if file_part else page.resolve()
                inside = str(dest).startswith(str(self.book_html) + os.sep) or dest == self.book_html
                if not inside:
                    # A link out of the book into the repository: mdBook turned page.md into page.html.
                    if not dest.exists() and not (dest.suffix == ".html" and dest.with_suffix(".md").exists()):
                        self.error(where, f"link out of the book to a missing file: {href}")
                    continue
                if dest.is_dir():
                    dest = dest / "index.html"
                if not dest.exists():
                    self.error(where, f"link to a missing built file: {href}")
                elif anchor and dest.suffix == ".html" and anchor not in parse_html(dest).ids:
                    self.error(where, f"link to a missing anchor #{anchor} in {dest.name}: {href}")


def run(book_src, book_html, files):
    checker = Checker(book_src, book_html)
    pages = sorted(book_src.rglob("*.md")) if book_src else []
    for path in pages + [Path(f) for f in files]:
        checker.check_markdown(path)
    if book_html:
        checker.check_built_html()
    return checker, len(pages) + len(files)


def self_test():
    """The checker on a tiny book with one good and four broken links: it must report exactly the four."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src, built = root / "src", root / "book"
        (src / "guide").mkdir(parents=True)
        (built / "guide").mkdir(parents=True)
        (root / "code.rs").write_text("fn main() {}\n")
        (root / "NOTES.md").write_text("# Notes\n\n## The `cache` file\n")
        (src / "guide" / "a.md").write_text(
            "# A\n\n## Good heading\n\n"
            "[ok](b.md#kept) [ok](../../code.rs) [ok](../../NOTES.md#the-cache-file) [ok](#good-heading)\n"
            "`[not a link](missing.md)`\n\n```\n[not a link](missing.md)\n```\n"
            "[broken file](c.md) [broken anchor](b.md#gone)\n"
            "[broken repo anchor](../../NOTES.md#nothing) [anchor on code](../../code.rs#L1)\n"
        )
        (src / "guide" / "b.md").write_text("# B\n\n## Kept\n")
        (built / "guide" / "a.html").write_text('<h1 id="a">A</h1><h2 id="good-heading">G</h2><a href="b.html#kept">b</a>')
        (built / "guide" / "b.html").write_text('<h1 id="b">B</h1><h2 id="kept">K</h2>')
        checker, _ = run(src, built, [])
        expected = ["missing file: c.md", "missing anchor #gone", "missing anchor #nothing", "an anchor on a file that has none"]
        found = [e for e in checker.errors]
        ok = len(found) == len(expected) and all(any(x in e for e in found) for x in expected)
        for e in found:
            print("  self-test reported:", e)
        print("link checker self-test:", "ok (4 broken links found, 4 good ones passed)" if ok else "FAILED")
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--book-src", type=Path, help="the book's Markdown sources (docs/src)")
    ap.add_argument("--book-html", type=Path, help="the book as mdBook built it (docs/book)")
    ap.add_argument("--self-test", action="store_true", help="prove the checker finds broken links, then exit")
    ap.add_argument("files", nargs="*", help="further Markdown files to check (README.md, ...)")
    args = ap.parse_args()
    if args.self_test:
        return 0 if self_test() else 1
    checker, n = run(args.book_src, args.book_html, args.files)
    for e in checker.errors:
        print(e)
    if checker.errors:
        print(f"{len(checker.errors)} broken link(s) in {n} Markdown files and the built book")
        return 1
    print(f"links ok: {n} Markdown files and the built book")
    return 0


if __name__ == "__main__":
    sys.exit(main())
