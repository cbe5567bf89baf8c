# shellcheck shell=bash
# What scripts/ci/crd-changes.sh (the GitHub Action) and the pre-commit hooks
# (scripts/ci/pre-commit-check.sh, scripts/ci/pre-commit-diff.sh) share: finding crd-audit and
# python3, and the CRDs of a file, one by one. Sourced, not run. Written for bash 3.2 too (the
# hooks run on developers' machines, macOS included): no associative arrays, no mapfile.
#
# The CRDs of a file: `crd-audit diff` and `plan` take a file holding exactly one CRD, and
# `check` takes only CRDs, so a file is read document by document (scripts/ci/crd_docs.py
# split: YAML documents at their `---` markers, JSON values and `List` items; no YAML library
# needed) and each document that may hold a CRD is asked for its name with `crd-audit check
# -o json`. A document that is one of several is written to a file of its own in which every
# other line is blank: crd-audit's line numbers are those of the real file.

CRD_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# How the scripts say where crd-audit comes from.
CRD_LIB_INSTALL_HINT="install a release binary (kubectl-crd_audit-<tag>-linux-<arch>.tar.gz from https://github.com/crd-audit/crd-audit/releases, its kubectl-crd_audit renamed crd-audit, on PATH), build it with 'cargo install --locked --git https://github.com/crd-audit/crd-audit crd-audit', or set CRD_AUDIT to its path"

# Sets CRD_AUDIT_BIN to the crd-audit to run: $CRD_AUDIT (a path or a command name), else
# crd-audit on PATH. Says what to do and returns 1 when there is none.
crd_lib_find_tool() {
    local wanted=${CRD_AUDIT:-crd-audit}
    CRD_AUDIT_BIN=$(command -v -- "$wanted" 2>/dev/null || true)
    if [ -z "$CRD_AUDIT_BIN" ] || [ ! -x "$CRD_AUDIT_BIN" ] || [ -d "$CRD_AUDIT_BIN" ]; then
        if [ -n "${CRD_AUDIT:-}" ]; then
            echo "error: CRD_AUDIT=$CRD_AUDIT is not an executable crd-audit" >&2
        else
            echo "error: crd-audit is not installed (no crd-audit on PATH): $CRD_LIB_INSTALL_HINT" >&2
        fi
        return 1
    fi
    if ! "$CRD_AUDIT_BIN" --version >/dev/null 2>&1; then
        echo "error: $CRD_AUDIT_BIN --version failed: is it crd-audit, built for this machine?" >&2
        return 1
    fi
}

# Sets CRD_LIB_PY to the Python 3 to run crd_docs.py with ($CRD_AUDIT_PYTHON, else python3;
# the standard library is enough). Returns 1 when there is none.
crd_lib_find_python() {
    CRD_LIB_PY=${CRD_AUDIT_PYTHON:-python3}
    if ! "$CRD_LIB_PY" -c 'import sys; sys.exit(sys.version_info < (3, 6))' >/dev/null 2>&1; then
        echo "error: $CRD_LIB_PY (Python 3.6 or newer, standard library only) is needed to read CRD files document by document" >&2
        return 1
    fi
}

crd_lib_docs() {
    "$CRD_LIB_PY" "$CRD_LIB_DIR/crd_docs.py" "$@"
}

# Whether FILE may hold a CRD at all (cheap: before anything is split or run).
crd_lib_mentions_crd() {
    grep -q 'CustomResourceDefinition' -- "$1" 2>/dev/null
}

# crd_lib_crds FILE OUTDIR: the CRDs of FILE, one line each, tab-separated:
#   ok          NAME  PATH   LINE   a CRD: PATH holds it alone (FILE itself, or a file in OUTDIR)
#   list        NAME  PATH   LINE   one of several CRDs of one document (a List): PATH holds them all
#   unreadable  -     ERRORS LINE   a document of kind CustomResourceDefinition that crd-audit
#                                   cannot read: ERRORS holds what it said (naming FILE)
#   template    -     -      LINE   the same, holding template directives (`{{`): a Helm
#                                   template, say, which is no YAML until rendered
# Returns non-zero when FILE cannot be read at all. (One Python process a file: its start,
# not crd-audit's, is what takes time.)
crd_lib_crds() {
    mkdir -p "$2" || return 2
    crd_lib_docs crds "$1" "$2" "$CRD_AUDIT_BIN"
}

# Whether two CRD documents are the same apart from blank lines (the blanked lines of the
# other documents of their files).
crd_lib_same() {
    cmp -s <(grep -v '^[[:space:]]*$' -- "$1") <(grep -v '^[[:space:]]*$' -- "$2")
}

# crd_lib_replace FILE [FROM TO]...: the temporary paths crd-audit was given, in its output
# FILE, become the paths of the repository (text, or SARIF with its fingerprints).
crd_lib_replace() {
    crd_lib_docs rewrite "$@"
}
