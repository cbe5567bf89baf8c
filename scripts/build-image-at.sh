#!/usr/bin/env bash
# Builds the operator image of another commit (the upgrade test's "previous" image): a git
# worktree of that commit, its own scripts/build-static.sh and scripts/build-image.sh, and the
# archive cached by commit id, so that CI builds it once per commit.
#
#   scripts/build-image-at.sh COMMIT
#
# stdout: two words, the archive's path and the image reference it holds
# (localhost/crd-audit:<commit, 12 digits>). stderr: what was built and how long it took.
# Cache: ${CRD_AUDIT_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-images}/
#   <commit>.tar   the archive (kept; a later run prints it at once)
# The build shares the caller's cargo target directory (CARGO_TARGET_DIR, else this checkout's
# target/): the dependencies that scripts/build-static.sh built for the working tree (the
# same flags and, most often, the same Cargo.lock) are not built again, only the workspace's
# crates of that commit (they sit beside the working tree's, under other hashes).
#   .lock          one build at a time
# The worktree is made under a temporary directory and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# = 1 ] || { echo "usage: scripts/build-image-at.sh COMMIT" >&2; exit 2; }
commit=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "error: no commit $1 here" >&2; exit 1; }
cache=${CRD_AUDIT_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-images}
mkdir -p "$cache"
archive=$cache/$commit.tar
image=localhost/crd-audit:${commit:0:12}

exec 9>"$cache/.lock"
if ! flock -n 9; then
    echo "another run is building an image in $cache; waiting for it" >&2
    flock 9
fi
if [ -s "$archive" ]; then
    echo "image $image of $commit: $archive (cached)" >&2
    echo "$archive $image"
    exit 0
fi

started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-image-at.XXXXXX")
repo=$(pwd)
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case $target_dir in /*) ;; *) target_dir=$repo/$target_dir ;; esac
cleanup() {
    git -C "$repo" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true
    rm -rf "$tmp"
    git -C "$repo" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
git worktree add --detach --quiet "$tmp/src" "$commit" >&2
# That commit's build-static.sh may not leave out what cargo set for a crate that runs this.
# shellcheck source=scripts/lib/crate-env.sh
source scripts/lib/crate-env.sh
(
    cd "$tmp/src"
    export CARGO_TARGET_DIR=$target_dir
    # The binary says which commit it is. Named here, not read by build.rs from the worktree's
    # HEAD: the build script's output is cached in the shared target directory, keyed to the
    # working tree's HEAD, and would name the working tree's commit.
    export CRD_AUDIT_GIT_COMMIT=${commit:0:12}
    without_crate_env bash scripts/build-static.sh "$tmp/crd-audit" >&2
    CRD_AUDIT_IMAGE=$image CRD_AUDIT_STATIC_BIN=$tmp/crd-audit bash scripts/build-image.sh "$tmp/image.tar" >/dev/null
)
mv "$tmp/image.tar" "$archive"
echo "image $image of $commit: $archive, built in $(( $(date +%s) - started )) s" >&2
echo "$archive $image"
