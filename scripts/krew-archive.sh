#!/usr/bin/env bash
# Packs a crd-audit binary as the kubectl plugin archive of one platform, as krew installs it
# (plugins/krew/crd-audit.yaml): kubectl-crd_audit-TAG-OS-ARCH.tar.gz holding the binary named
# kubectl-crd_audit and the LICENSE, with fixed owners, modes and times (the same inputs give
# the same bytes). Prints the archive's path.
#   scripts/krew-archive.sh BIN OS/ARCH TAG OUTDIR
# The release workflow runs it on the static binaries; .ci/run on a stand-in binary.
set -euo pipefail
[ $# = 4 ] || { echo "usage: scripts/krew-archive.sh BIN OS/ARCH TAG OUTDIR" >&2; exit 2; }
bin=$1 platform=$2 tag=$3 outdir=$4
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then echo "error: $bin is not an executable file" >&2; exit 1; fi
[[ $platform =~ ^[a-z0-9]+/[a-z0-9]+$ ]] || { echo "error: platform $platform is not OS/ARCH" >&2; exit 2; }
[[ $tag =~ ^v[0-9] ]] || { echo "error: tag $tag does not start with v and a digit" >&2; exit 2; }

stage=$(mktemp -d "${TMPDIR:-/tmp}/krew-archive.XXXXXX")
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$bin" "$stage/kubectl-crd_audit"
install -m 0644 "$root/LICENSE" "$stage/LICENSE"
mkdir -p "$outdir"
archive="$outdir/kubectl-crd_audit-$tag-${platform%/*}-${platform#*/}.tar.gz"
# The commit's time when there is one (SOURCE_DATE_EPOCH wins), else the epoch.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf - kubectl-crd_audit LICENSE | gzip -9 -n >"$archive"
echo "$archive"
