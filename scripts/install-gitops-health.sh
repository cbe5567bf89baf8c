#!/usr/bin/env bash
# Prints the path of a gitops-health binary (scripts/gitops-health: the SchemaAudit health
# checks of integrations/ run as kstatus, Argo CD's Lua and Flux's CEL compute them), building
# it from the module's sources the first time and caching it in ~/.cache/crd-audit-tools under
# a hash of those sources, so an edit to the tool builds it again. Its dependencies come
# through the Go module proxy. Logs go to stderr; the path alone to stdout. Run it as
#   "$(scripts/install-gitops-health.sh)" argocd-lua integrations/argocd/argocd-cm.yaml integrations/argocd
#   "$(scripts/install-gitops-health.sh)" flux-cel integrations/flux/kustomization.yaml --expect integrations/flux/health_test.yaml
#   "$(scripts/install-gitops-health.sh)" kstatus --expect integrations/flux/health_test.yaml
# (integrations/README.md says more).
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/gitops-health" && pwd)"
hash=$(cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
base="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools"
CACHE="$base/gitops-health-$hash"
if [ -x "$CACHE/gitops-health" ]; then echo "$CACHE/gitops-health"; exit 0; fi
command -v go >/dev/null || { echo "error: building gitops-health needs Go (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$CACHE"
tmp=$(mktemp -d "$base/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building gitops-health $hash from $src (a few minutes, once)" >&2
# One package at a time and at the lowest priority: the machines have 2 cores and other
# builds run beside this one.
(cd "$src" && CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly -buildvcs=false" \
  nice -n 19 go build -p 1 -ldflags "-s -w" -o "$tmp/gitops-health" .) >&2
mv "$tmp/gitops-health" "$CACHE/gitops-health"
echo "$CACHE/gitops-health"
