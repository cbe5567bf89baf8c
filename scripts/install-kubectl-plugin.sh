#!/usr/bin/env bash
# Installs crd-audit as the kubectl plugin `kubectl crd-audit`: builds the release binary and
# symlinks it as kubectl-crd_audit into DIR (default ~/.local/bin, which must be on PATH).
# Usage: scripts/install-kubectl-plugin.sh [DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$HOME/.local/bin}
cargo build --release --locked -p crd-audit --manifest-path "$repo/Cargo.toml"
target=${CARGO_TARGET_DIR:-$repo/target}
case $target in /*) ;; *) target=$PWD/$target ;; esac  # cargo reads it relative to here
bin=$target/release/crd-audit
mkdir -p "$dir"
ln -sf "$bin" "$dir/kubectl-crd_audit"
echo "installed $dir/kubectl-crd_audit -> $bin"
case ":$PATH:" in
  *":$dir:"*) ;;
  *) echo "note: $dir is not on PATH; add it so that kubectl finds the plugin" >&2 ;;
esac
