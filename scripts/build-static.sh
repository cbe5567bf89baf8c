#!/usr/bin/env bash
# Builds the static crd-audit binary exactly as the Dockerfile's build stage does (CI runs
# this outside Docker to prove those steps), checks that it is static and that it runs.
#   scripts/build-static.sh [OUT]      (default OUT: target/static/crd-audit)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${CARGO_TARGET_DIR:-target}/static/crd-audit}
target=x86_64-unknown-linux-gnu
# The image runs the operator: glibc's malloc (feature system-allocator, src/allocator.rs).
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --target "$target" -p crd-audit --features system-allocator
bin=${CARGO_TARGET_DIR:-target}/$target/release/crd-audit
if ! ldd "$bin" 2>&1 | grep -qE "statically linked|not a dynamic executable"; then
    echo "error: $bin is dynamically linked:" >&2
    ldd "$bin" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$bin" "$out"
version=$("$out" --version)
echo "$version"
case "$version" in
*", glibc malloc)") ;;
*) echo "error: $out was not built with the system allocator: $version" >&2; exit 1 ;;
esac
echo "static binary: $out ($(du -h "$out" | cut -f1))"
