#!/usr/bin/env bash
# Compares the engine crate's public API with the previous commit's (cargo semver-checks,
# installed by scripts/install-semver-checks.sh): a commit that breaks the API fails here unless
# it also raises the crate's version (before 1.0, the minor one) and says why in its CHANGELOG.
# The API checked is the default one plus the `k8s-openapi` feature (k8s-openapi's Kubernetes
# version chosen with its K8S_OPENAPI_ENABLED_VERSION, as the program picks it); `internals`
# and `fault-injection` are not an API.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${SEMVER_BASELINE_REV:-HEAD~1}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch -q --deepen=1
fi
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    echo "error: no commit $base to compare the engine crate's API with (a clone with history is needed)" >&2
    exit 1
fi
if ! git cat-file -e "$base:crates/crd-audit-engine/Cargo.toml" 2>/dev/null; then
    echo "the engine crate is new in this commit: no API to compare with"
    exit 0
fi
K8S_OPENAPI_ENABLED_VERSION=${K8S_OPENAPI_ENABLED_VERSION:-1.33} cargo semver-checks check-release -p crd-audit-engine --baseline-rev "$base" \
    --only-explicit-features --features k8s-openapi
