#!/usr/bin/env bash
# Installs cargo-deny (a pinned version, from crates.io) unless it is already on PATH.
set -euo pipefail
version=0.20.2
if command -v cargo-deny >/dev/null && cargo deny --version | grep -q " $version"; then
    exit 0
fi
cargo install cargo-deny --locked --version "$version"
