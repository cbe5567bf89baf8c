#!/usr/bin/env bash
# Prints the path of an mdBook binary (the builder of the book in docs/), building the pinned
# version from crates.io the first time (`cargo install --locked mdbook`) and caching it in
# ${XDG_CACHE_HOME:-~/.cache}/crd-audit-tools/mdbook-<version>/bin/mdbook. Only what
# `mdbook build` needs: no `serve` or `watch` (their web server and file watcher), with the
# search index of the published site. Its own target directory, in a temporary directory
# removed afterwards, never the project's. Used by scripts/check-book.sh and the release
# workflow (the book's GitHub Pages job).
#   MDBOOK_JOBS=N   cargo's -j (default: all cores)
set -euo pipefail
MDBOOK_VERSION="${MDBOOK_VERSION:-0.5.4}"
ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/mdbook-$MDBOOK_VERSION"
BIN="$ROOT/bin/mdbook"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
command -v cargo >/dev/null || { echo "error: building mdbook needs cargo (https://rustup.rs)" >&2; exit 1; }
mkdir -p "$ROOT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdbook-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
jobs=()
if [ -n "${MDBOOK_JOBS:-}" ]; then jobs=(-j "$MDBOOK_JOBS"); fi
echo "building mdbook $MDBOOK_VERSION from crates.io (a few minutes, once)" >&2
# Installed into a staging root first, so that an interrupted build leaves no half binary.
CARGO_TARGET_DIR="$tmp/target" cargo install --locked --quiet "${jobs[@]}" \
  --root "$tmp/root" mdbook --version "=$MDBOOK_VERSION" --no-default-features --features search >&2
mkdir -p "$ROOT/bin"
mv "$tmp/root/bin/mdbook" "$BIN"
"$BIN" --version >&2
echo "$BIN"
