#!/usr/bin/env bash
# Prints the path of a Helm 3 binary, building it from its Go module the first time
# (`go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION`, through the Go module proxy) and caching
# it in ~/.cache/crd-audit-tools. A `helm` on PATH of the same major version is used as is.
# Used by .ci/run and by the chart tests (tests/chart.rs, tests/e2e/chart.rs).
set -euo pipefail
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/helm-$HELM_VERSION"
if [ -x "$CACHE/helm" ]; then echo "$CACHE/helm"; exit 0; fi
if command -v helm >/dev/null && helm version --template '{{.Version}}' 2>/dev/null | grep -q '^v3\.'; then
  command -v helm; exit 0
fi
command -v go >/dev/null || { echo "error: building helm needs Go (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building helm $HELM_VERSION from its Go module (a few minutes, once)" >&2
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS="-trimpath" \
  go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
mv "$tmp/helm" "$CACHE/helm"
echo "$CACHE/helm"
