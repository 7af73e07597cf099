#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into docs/book/ (git-ignored) and fails on a broken link or anchor:
# between its pages, to repository files, and in the README and the other Markdown files of the tree
# (scripts/check_links.py, which first proves on a tiny book that it finds broken links).
# mdBook is the prebuilt one of scripts/tools.txt (scripts/setup.sh puts it in .venv/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh python
mdbook=.venv/bin/mdbook

python3 scripts/check_links.py --self-test
rm -rf docs/book
"$mdbook" build docs
python3 scripts/check_links.py --book-src docs/src --book-html docs/book \
  README.md CHANGELOG.md models/README.md models/sam2/README.md examples/halcon/README.md \
  dotnet-sample/README.md fuzz/regressions/README.md
