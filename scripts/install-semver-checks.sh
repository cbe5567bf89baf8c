#!/usr/bin/env bash
# Installs cargo-semver-checks (a pinned version, from crates.io) unless it is already on PATH.
# .ci/run uses it to compare the engine crate's public API with the previous commit's.
set -euo pipefail
version=0.51.0
if command -v cargo-semver-checks >/dev/null && cargo semver-checks --version | grep -q " $version"; then
    exit 0
fi
# Its release profile asks for fat LTO and one codegen unit: a tool run once per CI job does not
# need them, and it builds faster without them.
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install cargo-semver-checks --locked --version "$version"
