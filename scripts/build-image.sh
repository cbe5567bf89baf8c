#!/usr/bin/env bash
# Writes the operator image as an OCI archive, without a Docker daemon: buildah, from scratch,
# with the layout of the Dockerfile's final stage (tests/image.rs checks that the two agree):
#   /crd-audit                          the static binary (scripts/build-static.sh)
#   /etc/crd-audit/crd-audit.yaml       the default configuration (config/crd-audit.yaml)
#   user 65532:65532, port 8080, ENTRYPOINT ["/crd-audit"],
#   CMD ["controller", "--config", "/etc/crd-audit/crd-audit.yaml"]
# plus what the distroless base gives the Dockerfile's image and the binary uses: the users
# (nonroot is 65532), the CA certificates and a /tmp.
#
#   scripts/build-image.sh OUT
#
# stdout: the image reference (repository:tag) the archive holds. Environment:
#   CRD_AUDIT_IMAGE       the reference (default localhost/crd-audit:<version>-<commit>)
#   CRD_AUDIT_STATIC_BIN  a static binary to use instead of building one
# buildah works in a storage of its own under a temporary directory, removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# = 1 ] || { echo "usage: scripts/build-image.sh OUT.tar" >&2; exit 2; }
out=$1
command -v buildah >/dev/null || {
    [ "$(id -u)" = 0 ] || { echo "error: buildah is needed (apt-get install buildah)" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 buildah ca-certificates >&2
}
[ -f /etc/ssl/certs/ca-certificates.crt ] || { echo "error: /etc/ssl/certs/ca-certificates.crt is missing (ca-certificates)" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
image=${CRD_AUDIT_IMAGE:-localhost/crd-audit:$version-$commit}
bin=${CRD_AUDIT_STATIC_BIN:-}
if [ -z "$bin" ]; then
    bin=${CARGO_TARGET_DIR:-target}/static/crd-audit
    bash scripts/build-static.sh "$bin" >&2
fi
[ -x "$bin" ] || { echo "error: $bin is not an executable" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-image.XXXXXX")
bh() { buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs "$@"; }
cleanup() {
    bh rm --all >/dev/null 2>&1 || true
    bh rmi --all --force >/dev/null 2>&1 || true
    chmod -R u+w "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The files of the distroless base that the binary relies on.
mkdir -p "$tmp/root/etc/ssl/certs" "$tmp/root/tmp"
printf '%s\n' 'root:x:0:0:root:/nonexistent:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' > "$tmp/root/etc/passwd"
printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > "$tmp/root/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$tmp/root/etc/ssl/certs/ca-certificates.crt"
chmod 1777 "$tmp/root/tmp"

c=$(bh from --quiet scratch)
bh copy --quiet "$c" "$tmp/root/" / >/dev/null
bh copy --quiet "$c" "$bin" /crd-audit >/dev/null
bh copy --quiet "$c" config/crd-audit.yaml /etc/crd-audit/crd-audit.yaml >/dev/null
bh config \
    --user 65532:65532 \
    --port 8080/tcp \
    --entrypoint '["/crd-audit"]' \
    --cmd '["controller", "--config", "/etc/crd-audit/crd-audit.yaml"]' \
    --env PATH=/usr/local/bin:/usr/bin:/bin \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    --label org.opencontainers.image.title=crd-audit \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.revision="$commit" \
    --label org.opencontainers.image.licenses=Apache-2.0 \
    --label org.opencontainers.image.source=https://github.com/crd-audit/crd-audit \
    "$c"
bh commit --quiet --format oci "$c" "$image" >/dev/null
mkdir -p "$(dirname "$out")"
rm -f "$out"
bh push --quiet "$image" "oci-archive:$out:$image"
echo "image $image: $out ($(du -h "$out" | cut -f1))" >&2
echo "$image"
