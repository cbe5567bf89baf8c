#!/usr/bin/env bash
# Installs cargo-deny (a pinned version, from crates.io) unless it is already on PATH.
set -euo pipefail
version=0.20.2
if command -v cargo-deny >/dev/null && cargo deny --version | grep -q " $version"; then
    exit 0
fi
# Its release profile asks for fat LTO and one codegen unit, which lengthen its build on a cold
# machine: a gate run once per CI job does not need them.
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install cargo-deny --locked --version "$version"
