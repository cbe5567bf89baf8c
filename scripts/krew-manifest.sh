#!/usr/bin/env bash
# Writes the krew manifest of a release to stdout: plugins/krew/crd-audit.yaml with
# spec.version set to TAG and, for each platform, the uri and sha256 of its archive
# (kubectl-crd_audit-TAG-OS-ARCH.tar.gz in DIR, made by scripts/krew-archive.sh).
#   scripts/krew-manifest.sh TAG DIR [MANIFEST]
# Fails when a platform of the manifest has no archive, when an archive has no platform in
# the manifest, or when an archive lacks the kubectl-crd_audit binary.
# KREW_BASE_URL is where the release's files are downloaded from (default: the GitHub
# releases of github.com/crd-audit/crd-audit); the archive's URL is KREW_BASE_URL/TAG/NAME.
# The release workflow runs it on the release's archives; .ci/run on stand-in archives.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ] || [ $# -gt 3 ]; then echo "usage: scripts/krew-manifest.sh TAG DIR [MANIFEST]" >&2; exit 2; fi
tag=$1 dir=$2 manifest=${3:-$root/plugins/krew/crd-audit.yaml}
base=${KREW_BASE_URL:-https://github.com/crd-audit/crd-audit/releases/download}
[[ $tag =~ ^v[0-9] ]] || { echo "error: tag $tag does not start with v and a digit" >&2; exit 2; }
[ -f "$manifest" ] || { echo "error: no manifest $manifest" >&2; exit 1; }

# os-arch name sha256, one line per archive of this tag.
prefix="kubectl-crd_audit-$tag-"
table=$(mktemp "${TMPDIR:-/tmp}/krew-manifest.XXXXXX")
used=$(mktemp "${TMPDIR:-/tmp}/krew-manifest.XXXXXX")
filled=$(mktemp "${TMPDIR:-/tmp}/krew-manifest.XXXXXX")
trap 'rm -f "$table" "$used" "$filled"' EXIT
shopt -s nullglob
for archive in "$dir/$prefix"*.tar.gz; do
    name=${archive##*/}
    key=${name#"$prefix"}
    key=${key%.tar.gz}
    # (The listing whole first: grep -q stopping early would fail tar's pipe.)
    contents=$(tar -tzf "$archive") || { echo "error: $archive is no tar.gz" >&2; exit 1; }
    if ! grep -qx 'kubectl-crd_audit' <<<"$contents"; then
        echo "error: $archive holds no kubectl-crd_audit" >&2
        exit 1
    fi
    sum=$(sha256sum "$archive" | cut -d' ' -f1)
    echo "$key $name $sum" >>"$table"
done
[ -s "$table" ] || { echo "error: no $prefix*.tar.gz in $dir" >&2; exit 1; }

# Each platform entry starts with "- selector:"; its matchLabels name os and arch before its
# uri and sha256 (the manifest's order).
awk -v tag="$tag" -v base="$base" -v table="$table" -v used="$used" '
    BEGIN {
        while ((getline line < table) > 0) {
            split(line, f, " ")
            file[f[1]] = f[2]; sum[f[1]] = f[3]
        }
    }
    function key() {
        if (os == "" || arch == "") {
            printf "error: line %d: a uri or sha256 before the platform'"'"'s os and arch\n", NR > "/dev/stderr"
            failed = 1; exit 1
        }
        if (!((os "-" arch) in file)) {
            printf "error: no archive for platform %s/%s (%s%s-%s.tar.gz)\n", os, arch, "kubectl-crd_audit-" tag "-", os, arch > "/dev/stderr"
            failed = 1; exit 1
        }
        return os "-" arch
    }
    /^spec:/ { in_spec = 1 }
    in_spec && /^  version:/ { print "  version: " tag; next }
    /^ *- selector:/ { os = ""; arch = "" }
    /^ +os: / { os = $2 }
    /^ +arch: / { arch = $2 }
    /^ +uri: / {
        k = key(); match($0, /^ +/)
        print substr($0, 1, RLENGTH) "uri: " base "/" tag "/" file[k]
        platforms++; next
    }
    /^ +sha256: / {
        k = key(); match($0, /^ +/)
        print substr($0, 1, RLENGTH) "sha256: \"" sum[k] "\""
        print k > used; next
    }
    { print }
    END {
        if (!failed && platforms == 0) { print "error: the manifest names no platform" > "/dev/stderr"; exit 1 }
    }
' "$manifest" >"$filled"

# Every archive is a platform of the manifest.
while read -r key name _; do
    if ! grep -qx "$key" "$used"; then
        echo "error: $name is no platform of $manifest (add it there)" >&2
        exit 1
    fi
done <"$table"
cat "$filled"
