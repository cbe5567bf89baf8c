#!/usr/bin/env bash
# Compares the engine crate's public API with the previous commit's (cargo semver-checks,
# installed by scripts/install-semver-checks.sh): a commit that breaks the API fails here unless
# it also raises the crate's version (before 1.0, the minor one) and says why in its CHANGELOG.
# The API checked is the default one plus the `k8s-openapi` feature (k8s-openapi's Kubernetes
# version chosen with its K8S_OPENAPI_ENABLED_VERSION, as the program picks it); `internals`
# and `fault-injection` are not an API.
# When nothing the API is made of differs from the baseline (the engine crate, the workspace
# manifest, the lock file, vendor/: in the working tree, untracked files included), the API is
# the baseline's and the check passes without building anything (cargo-semver-checks is then
# not even installed: on a cold machine its build is the costliest of CI's tools).
#   SEMVER_BASELINE_REV=REV   the baseline (default HEAD~1)
#   SEMVER_CHECK_ALWAYS=1     compare even when nothing differs
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
inputs=(crates/crd-audit-engine Cargo.toml Cargo.lock vendor)
if [ "${SEMVER_CHECK_ALWAYS:-0}" != 1 ] && git --no-optional-locks diff --quiet "$base" -- "${inputs[@]}" &&
    [ -z "$(git ls-files --others --exclude-standard -- "${inputs[@]}")" ]; then
    echo "the engine crate, Cargo.toml, Cargo.lock and vendor/ are as at $base: the API is $base's"
    exit 0
fi
bash scripts/install-semver-checks.sh
K8S_OPENAPI_ENABLED_VERSION=${K8S_OPENAPI_ENABLED_VERSION:-1.33} cargo semver-checks check-release -p crd-audit-engine --baseline-rev "$base" \
    --only-explicit-features --features k8s-openapi
