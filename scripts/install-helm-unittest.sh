#!/usr/bin/env bash
# Prints the path of a helm-unittest binary (github.com/helm-unittest/helm-unittest: the chart's
# unit tests in charts/crd-audit/tests/*_test.yaml), building it from its Go module the first
# time and caching it in ~/.cache/crd-audit-tools. The module's go.mod has a replace
# directive, which `go install module@version` refuses, so its source is fetched through the
# Go module proxy (`go mod download`) and built in place. Run it as
# `helm-unittest charts/crd-audit`. Used by .ci/run and by tests/chart.rs.
set -euo pipefail
HELM_UNITTEST_VERSION="${HELM_UNITTEST_VERSION:-v1.1.2}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/helm-unittest-$HELM_UNITTEST_VERSION"
if [ -x "$CACHE/helm-unittest" ]; then echo "$CACHE/helm-unittest"; exit 0; fi
command -v go >/dev/null || { echo "error: building helm-unittest needs Go (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building helm-unittest $HELM_UNITTEST_VERSION from its Go module (a minute, once)" >&2
module=github.com/helm-unittest/helm-unittest
# `go mod download` needs a module to run in; an empty one in the build directory will do.
(cd "$tmp" && go mod init crd-audit-tools/helm-unittest >/dev/null 2>&1)
dir=$(cd "$tmp" && go mod download -json "$module@$HELM_UNITTEST_VERSION" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "error: could not download $module@$HELM_UNITTEST_VERSION" >&2
  exit 1
fi
(cd "$dir" && CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly" go build -ldflags "-s -w" \
  -o "$tmp/helm-unittest" ./cmd/helm-unittest) >&2
mv "$tmp/helm-unittest" "$CACHE/helm-unittest"
echo "$CACHE/helm-unittest"
