#!/usr/bin/env bash
# Installs crd-audit from a GitHub release and prints its path: the release's kubectl plugin
# archive for this machine (kubectl-crd_audit-TAG-linux-ARCH.tar.gz, made by
# scripts/krew-archive.sh: the static binary and the LICENSE), checked against the release's
# SHA256SUMS, its binary installed as crd-audit. Used by the GitHub Action (action.yml).
#   scripts/ci/install-crd-audit.sh [VERSION]     VERSION: vX.Y.Z, X.Y.Z or latest (default)
# Environment:
#   CRD_AUDIT_REPOSITORY    owner/name of the releases (default crd-audit/crd-audit)
#   CRD_AUDIT_RELEASES_URL  where TAG/FILE are downloaded from (default
#                           $GITHUB_SERVER_URL/$CRD_AUDIT_REPOSITORY/releases/download)
#   CRD_AUDIT_INSTALL_DIR   where the binary goes (default: $RUNNER_TOOL_CACHE/crd-audit/TAG/ARCH,
#                           else ~/.cache/crd-audit-tools/crd-audit-TAG-ARCH); kept between runs
# Releases are built for linux/amd64 and linux/arm64 (.github/workflows/release.yml).
set -euo pipefail
version=${1:-${CRD_AUDIT_VERSION:-latest}}
repo=${CRD_AUDIT_REPOSITORY:-crd-audit/crd-audit}
server=${GITHUB_SERVER_URL:-https://github.com}
releases=${CRD_AUDIT_RELEASES_URL:-$server/$repo/releases/download}

case $(uname -s) in
    Linux) os=linux ;;
    *) echo "error: crd-audit releases are built for Linux only, not $(uname -s): give the action a binary (input binary) or build it with cargo install" >&2; exit 1 ;;
esac
case $(uname -m) in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "error: no crd-audit release for $(uname -m) (linux/amd64 and linux/arm64 only)" >&2; exit 1 ;;
esac
command -v curl >/dev/null || { echo "error: installing crd-audit needs curl" >&2; exit 1; }

if [ -z "$version" ] || [ "$version" = latest ]; then
    # github.com/OWNER/NAME/releases/latest redirects to .../releases/tag/TAG.
    url=$(curl -fsSLI --retry 3 -o /dev/null -w '%{url_effective}' "$server/$repo/releases/latest") || {
        echo "error: the latest release of $repo could not be found ($server/$repo/releases/latest)" >&2
        exit 1
    }
    tag=${url##*/}
else
    tag=v${version#v}
fi
[[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || { echo "error: '$tag' is no release tag (vMAJOR.MINOR.PATCH)" >&2; exit 1; }

if [ -n "${CRD_AUDIT_INSTALL_DIR:-}" ]; then
    dir=$CRD_AUDIT_INSTALL_DIR
elif [ -n "${RUNNER_TOOL_CACHE:-}" ]; then
    dir=$RUNNER_TOOL_CACHE/crd-audit/$tag/$arch
else
    dir=${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/crd-audit-$tag-$arch
fi
if [ -x "$dir/crd-audit" ] && "$dir/crd-audit" --version >/dev/null 2>&1; then
    echo "$dir/crd-audit"
    exit 0
fi

archive=kubectl-crd_audit-$tag-$os-$arch.tar.gz
tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/crd-audit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "downloading crd-audit $tag ($os/$arch) from $releases/$tag" >&2
for file in "$archive" SHA256SUMS; do
    curl -fsSL --retry 3 -o "$tmp/$file" "$releases/$tag/$file" || {
        echo "error: could not download $releases/$tag/$file" >&2
        exit 1
    }
done
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")
have=$(sha256sum "$tmp/$archive" | cut -d' ' -f1)
if [ -z "$want" ]; then echo "error: SHA256SUMS of $tag names no $archive" >&2; exit 1; fi
if [ "$want" != "$have" ]; then echo "error: $archive does not match SHA256SUMS ($have, expected $want)" >&2; exit 1; fi
tar -xzf "$tmp/$archive" -C "$tmp" kubectl-crd_audit
mkdir -p "$dir"
# Named crd-audit: run as kubectl-crd_audit it would speak as the kubectl plugin.
install -m 0755 "$tmp/kubectl-crd_audit" "$dir/crd-audit.new"
mv -f "$dir/crd-audit.new" "$dir/crd-audit"
"$dir/crd-audit" --version >&2
echo "$dir/crd-audit"
