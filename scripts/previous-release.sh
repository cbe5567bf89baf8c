#!/usr/bin/env bash
# The release an admin upgrades from: the commit (first parents, from HEAD) that made the
# newest chart and binary other than the working tree's. Commits after it that change neither
# (tests, docs) make the same release; the oldest of them is printed, so that every later
# commit of that release picks the same one (and scripts/build-image-at.sh's cache, keyed by
# commit, holds its image).
#
#   scripts/previous-release.sh
#
# stdout: the commit's full id. The upgrade test (tests/e2e/node/upgrade.rs) upgrades from
# it (its image built by scripts/build-image-at.sh). Fails when no commit differs (a shallow
# clone: the upgrade test needs the history).
set -euo pipefail
cd "$(dirname "$0")/.."

# What makes the image and the chart: a commit that changes none of these makes the same
# release.
inputs=(charts/crd-audit src crates config build.rs Cargo.toml Cargo.lock Dockerfile
    scripts/build-static.sh scripts/build-image.sh)

# Whether the release of commit $1 differs from that of $2 (the working tree's when absent).
differs() {
    ! git diff --quiet "$@" -- "${inputs[@]}"
}

newest=
made=
while read -r commit; do
    if [ -z "$newest" ]; then
        if differs "$commit"; then
            newest=$commit
            made=$commit
        fi
    elif differs "$commit" "$newest"; then
        break
    else
        made=$commit
    fi
done < <(git log --first-parent --format=%H)
if [ -z "$made" ]; then
    echo "error: no commit's chart or binary differs from the working tree's (the checkout needs its history)" >&2
    exit 1
fi
echo "$made"
