#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into docs/book/ (git-ignored) and fails on a broken link or anchor:
# between its pages, to repository files, and in the README and the other Markdown files of the tree
# (scripts/check_links.py, which first proves on a tiny book that it finds broken links).
# Installs mdBook from crates.io when it is missing or another version.
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.5.4
mdbook=mdbook
if ! command -v mdbook >/dev/null; then mdbook="${CARGO_HOME:-$HOME/.cargo}/bin/mdbook"; fi
if [ "$("$mdbook" --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "== installing mdBook $MDBOOK_VERSION from crates.io (a few minutes, once)"
  start=$(date +%s)
  # Without the default features `serve` and `watch` (a web server and a file watcher): less to compile.
  cargo install mdbook --locked --version "$MDBOOK_VERSION" --no-default-features --features search --quiet
  echo "mdBook installed in $(( $(date +%s) - start )) s"
  mdbook="${CARGO_HOME:-$HOME/.cargo}/bin/mdbook"
fi

python3 scripts/check_links.py --self-test
rm -rf docs/book
"$mdbook" build docs
python3 scripts/check_links.py --book-src docs/src --book-html docs/book \
  README.md CHANGELOG.md models/README.md models/sam2/README.md examples/halcon/README.md \
  dotnet-sample/README.md fuzz/regressions/README.md
