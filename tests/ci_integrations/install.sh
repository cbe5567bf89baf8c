#!/usr/bin/env bash
# scripts/ci/install-crd-audit.sh (the action's install step) on a release laid out as the
# release workflow publishes it (.github/workflows/release.yml): the kubectl plugin archive of
# this machine's platform made by scripts/krew-archive.sh, and SHA256SUMS, read through a
# file: URL (CRD_AUDIT_RELEASES_URL). The archive holds a small stand-in for the binary (the
# debug binary under test is hundreds of MiB to compress) that says the name it runs under:
# the archive's kubectl-crd_audit is installed as crd-audit, and runs; a second install
# reuses it; an archive that does not match SHA256SUMS, a missing release and a wrong
# version fail.
# shellcheck disable=SC2016,SC2317 # a script in single quotes; functions called through checks
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/ci_integrations/common.sh
. "$here/common.sh"

case $(uname -s)/$(uname -m) in
    Linux/x86_64 | Linux/amd64) platform=linux/amd64 ;;
    Linux/aarch64 | Linux/arm64) platform=linux/arm64 ;;
    *) echo "NOTICE: no crd-audit release is built for $(uname -s)/$(uname -m): nothing to install"; exit 77 ;;
esac
command -v curl >/dev/null || missing_tool "curl is not installed" skip

tag=v0.0.0-test.1
releases=$SCRATCH/releases
mkdir -p "$releases/$tag"
stand_in=$SCRATCH/stand-in
printf '#!/bin/sh\ncase $1 in --version) echo "crd-audit 0.0.0-test" ;; *) echo "Usage: ${0##*/}" ;; esac\n' >"$stand_in"
chmod +x "$stand_in"
archive=$(bash "$ROOT/scripts/krew-archive.sh" "$stand_in" "$platform" "$tag" "$releases/$tag")
(cd "$releases/$tag" && sha256sum -- "$(basename "$archive")" >SHA256SUMS)

install() { # VERSION: installs into $SCRATCH/tool
    CRD_AUDIT_RELEASES_URL="file://$releases" CRD_AUDIT_INSTALL_DIR=$SCRATCH/tool \
        bash "$ROOT/scripts/ci/install-crd-audit.sh" "$1"
}

expect_status 0 "install $tag" install "$tag"
installed=$(tail -n 1 "$SCRATCH/last.out")
check "it prints the installed binary's path ($installed)" test "$installed" = "$SCRATCH/tool/crd-audit"
check "the installed crd-audit runs" "$SCRATCH/tool/crd-audit" --version
check "it is the archive's binary" cmp -s "$stand_in" "$SCRATCH/tool/crd-audit"
check "it runs as crd-audit, not as the kubectl plugin" \
    bash -c '"$1" --help | grep -qx "Usage: crd-audit"' _ "$SCRATCH/tool/crd-audit"

rm -rf "$releases/$tag"/*.tar.gz
expect_status 0 "a second install reuses the binary (the archive is gone)" install "${tag#v}"

rm -rf "$SCRATCH/tool"
archive=$(bash "$ROOT/scripts/krew-archive.sh" "$stand_in" "$platform" "$tag" "$releases/$tag")
echo "0000000000000000000000000000000000000000000000000000000000000000  $(basename "$archive")" >"$releases/$tag/SHA256SUMS"
expect_status 1 "an archive that does not match SHA256SUMS" install "$tag"
has "$SCRATCH/last.out" 'does not match SHA256SUMS' "the mismatch is said"
check "nothing is installed then" test ! -e "$SCRATCH/tool/crd-audit"

expect_status 1 "a release that does not exist" install v9.9.9
has "$SCRATCH/last.out" 'could not download' "the missing release is said"
expect_status 1 "a version that is no release tag" install 'v1;rm'

finish
