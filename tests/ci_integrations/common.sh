# shellcheck shell=bash
# What the tests of tests/ci_integrations/ share (sourced): the binary under test ($CRD_AUDIT,
# set by tests/ci_integrations.rs), checks that count, scratch git repositories, and the
# rule for tools a test needs: under CI (`CI` set) or CRD_AUDIT_E2E=required a missing tool
# fails the test; elsewhere the test says so and exits 77 (tests/ci_integrations.rs: skipped).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export ROOT
: "${CRD_AUDIT:?set CRD_AUDIT to the crd-audit binary under test}"
CRD_AUDIT=$(cd "$(dirname "$CRD_AUDIT")" && pwd)/$(basename "$CRD_AUDIT")
export CRD_AUDIT
[ -x "$CRD_AUDIT" ] || { echo "error: CRD_AUDIT=$CRD_AUDIT is not executable" >&2; exit 1; }

# Scratch repositories: no user or system git configuration, a fixed identity.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=crd-audit-test GIT_AUTHOR_EMAIL=test@crd-audit.invalid
export GIT_COMMITTER_NAME=crd-audit-test GIT_COMMITTER_EMAIL=test@crd-audit.invalid
# Not the GitHub Actions run this may be part of.
unset GITHUB_ACTIONS GITHUB_BASE_REF GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_EVENT_NAME RUNNER_TEMP

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-ci.XXXXXX")
# CRD_AUDIT_KEEP_SCRATCH=1 keeps it (to look at what the scripts wrote).
cleanup() {
    if [ -n "${CRD_AUDIT_KEEP_SCRATCH:-}" ]; then echo "kept: $SCRATCH"; else rm -rf -- "$SCRATCH"; fi
}
trap cleanup EXIT

CHECKS=0
FAILED=0

tools_required() {
    [ "${CRD_AUDIT_E2E:-}" = required ] || [ -n "${CI:-}" ]
}

# A tool is missing: fails under CI, else says so; `skip` ends the test with 77.
missing_tool() { # MESSAGE [skip]
    if tools_required; then
        fail "$1 (required under CI / CRD_AUDIT_E2E=required)"
    else
        echo "NOTICE: $1"
        if [ "${2:-}" = skip ]; then exit 77; fi
    fi
}

pass() {
    CHECKS=$((CHECKS + 1))
    echo "ok: $1"
}

fail() {
    CHECKS=$((CHECKS + 1))
    FAILED=$((FAILED + 1))
    echo "FAIL: $1"
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# expect_status WANT DESCRIPTION COMMAND...: COMMAND's output goes to $SCRATCH/last.out.
expect_status() {
    local want=$1 what=$2 rc=0
    shift 2
    "$@" >"$SCRATCH/last.out" 2>&1 || rc=$?
    if [ "$rc" = "$want" ]; then
        pass "$what: exit $rc"
    else
        fail "$what: exit $rc, expected $want; output:"
        sed 's/^/    /' "$SCRATCH/last.out"
    fi
}

# has FILE PATTERN DESCRIPTION: an extended regular expression matches a line of FILE.
has() {
    if grep -Eq -- "$2" "$1" 2>/dev/null; then
        pass "$3"
    else
        fail "$3: no line of $1 matches /$2/"
        if [ -f "$1" ]; then sed 's/^/    | /' "$1" | head -n 80; fi
    fi
}

lacks() {
    if grep -Eq -- "$2" "$1" 2>/dev/null; then
        fail "$3: a line of $1 matches /$2/"
        grep -En -- "$2" "$1" | sed 's/^/    | /' | head -n 20
    else
        pass "$3"
    fi
}

# A new git repository at DIR (branch main).
scratch_repo() {
    mkdir -p "$1"
    git -C "$1" init -q -b main
    git -C "$1" config commit.gpgsign false
}

commit_all() { # DIR MESSAGE
    git -C "$1" add -A
    git -C "$1" commit -q -m "$2"
}

# Whether crd-audit writes Markdown (`-o markdown` of diff and plan) yet.
has_markdown() {
    "$CRD_AUDIT" diff --help 2>/dev/null | grep -qi markdown
}

# A Python with PyYAML (python3's, else pre-commit's from scripts/install-pre-commit.sh), in
# $YAML_PYTHON; returns 1 (having said why in $SCRATCH/yaml-python.err) when there is none.
YAML_PYTHON=python3
export YAML_PYTHON
yaml_python() {
    local pre_commit
    if python3 -c 'import yaml' 2>/dev/null; then
        YAML_PYTHON=python3
    elif pre_commit=$(bash "$ROOT/scripts/install-pre-commit.sh" 2>"$SCRATCH/yaml-python.err"); then
        YAML_PYTHON=$(dirname "$pre_commit")/python
    else
        return 1
    fi
}

finish() {
    echo "$((CHECKS - FAILED)) passed, $FAILED failed"
    if [ "$FAILED" -gt 0 ]; then exit 1; fi
    exit 0
}
