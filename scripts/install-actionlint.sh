#!/usr/bin/env bash
# Prints the path of an actionlint binary (the linter of GitHub Actions workflows), building it
# from its Go module the first time (`go install github.com/rhysd/actionlint/cmd/actionlint@
# $ACTIONLINT_VERSION`, through the Go module proxy) and caching it in ~/.cache/crd-audit-tools.
# actionlint runs shellcheck on the workflows' `run:` blocks when shellcheck is on PATH: as root
# this installs Debian's shellcheck when it is missing (else actionlint skips that part).
# Used by .ci/run on .github/workflows/*.yml.
set -euo pipefail
ACTIONLINT_VERSION="${ACTIONLINT_VERSION:-v1.7.12}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/actionlint-$ACTIONLINT_VERSION"
if ! command -v shellcheck >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's shellcheck (actionlint checks run: blocks with it)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends shellcheck >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null 2>&1 || true
      apt-get install -y -qq --no-install-recommends shellcheck >/dev/null 2>&1
    } || echo "notice: shellcheck could not be installed: actionlint will not check run: blocks" >&2
  else
    echo "notice: no shellcheck on PATH: actionlint will not check run: blocks" >&2
  fi
fi
if [ -x "$CACHE/actionlint" ]; then echo "$CACHE/actionlint"; exit 0; fi
command -v go >/dev/null || { echo "error: building actionlint needs Go (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building actionlint $ACTIONLINT_VERSION from its Go module (once)" >&2
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS="-trimpath" \
  go install -ldflags "-s -w -X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" \
  "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2
mv "$tmp/actionlint" "$CACHE/actionlint"
echo "$CACHE/actionlint"
