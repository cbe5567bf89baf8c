#!/usr/bin/env bash
# Builds the static crd-audit binary exactly as the Dockerfile's build stage does (CI runs
# this outside Docker to prove those steps), checks that it is static and that it runs.
#   scripts/build-static.sh [OUT]      (default OUT: target/static/crd-audit)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${CARGO_TARGET_DIR:-target}/static/crd-audit}
target=x86_64-unknown-linux-gnu
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --target "$target" -p crd-audit
bin=${CARGO_TARGET_DIR:-target}/$target/release/crd-audit
if ! ldd "$bin" 2>&1 | grep -qE "statically linked|not a dynamic executable"; then
    echo "error: $bin is dynamically linked:" >&2
    ldd "$bin" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$bin" "$out"
"$out" --version
echo "static binary: $out ($(du -h "$out" | cut -f1))"
