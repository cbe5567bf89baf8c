#!/usr/bin/env bash
# The tools the tests need that are not this repository's Rust code, built or installed (and
# cached) one after another: .ci/run starts this in the background after its format and
# workflow checks, so that on a cold machine these builds (Go programs, Debian packages, tools
# from crates.io and PyPI: half an hour there) run beside the Rust builds instead of before
# them, and waits for it before the first step that needs them.
#
#   scripts/ci/prerequisites.sh
#
# Each tool's step prints a header with the seconds since CI_STARTED (a Unix time; default:
# now), as .ci/run's own headers do. Every step is one of the scripts .ci/run ran itself
# before; each caches what it builds, so a second run takes seconds. Runs one apt-get at a
# time (apt-get takes a lock; the steps here are the only ones of .ci/run that install
# Debian packages after its first steps).
set -euo pipefail
cd "$(dirname "$0")/../.."

started=${CI_STARTED:-$(date +%s)}
step() { echo "== [$(($(date +%s) - started))s] (prerequisites) $*"; }

# The crates.io tools build in a target directory of their own: cargo lets one build at a time
# use a target directory, and .ci/run's builds use CARGO_TARGET_DIR meanwhile.
step "cargo-semver-checks (scripts/install-semver-checks.sh: crates.io, once)"
env -u CARGO_TARGET_DIR bash scripts/install-semver-checks.sh
step "cargo-deny (scripts/install-cargo-deny.sh: crates.io, once)"
env -u CARGO_TARGET_DIR bash scripts/install-cargo-deny.sh
step "apiextensions-apiserver 1.36 for the end-to-end tests (../shared/oracle/build.sh)"
WITH_SERVER=1 bash ../shared/oracle/build.sh >/dev/null
step "promtool for the alert rule tests (Debian's prometheus package)"
bash scripts/install-promtool.sh
step "helm for the chart tests (scripts/install-helm.sh: built from its Go module, cached)"
bash scripts/install-helm.sh >/dev/null
step "helm-unittest for the chart's unit tests (scripts/install-helm-unittest.sh: built from its Go module, cached)"
bash scripts/install-helm-unittest.sh >/dev/null
step "the GitOps health checks' tool (scripts/install-gitops-health.sh: Argo CD's Lua, Flux's CEL and kstatus from their Go modules)"
bash scripts/install-gitops-health.sh >/dev/null
step "pre-commit for the hooks' tests (scripts/install-pre-commit.sh: PyPI, cached)"
bash scripts/install-pre-commit.sh >/dev/null
step "mdBook for the book's checks (scripts/install-mdbook.sh: crates.io, cached)"
bash scripts/install-mdbook.sh >/dev/null
step "Kubernetes 1.20 from Debian's source package, and the node's packages (tests/testenv/build.sh --node)"
bash tests/testenv/build.sh --node >/dev/null
step "done"
