#!/usr/bin/env bash
# The pre-commit hook crd-audit-diff (.pre-commit-hooks.yaml): for every CRD of the files
# pre-commit hands it (their staged versions) that HEAD has too (in the same file, or in the
# file a staged rename comes from), `crd-audit diff HEAD's-CRD staged-CRD`; fails when one
# tightens (objects valid before may be invalid after: a lower maximum, a new required field,
# a removed enum value, ...) or when a CRD of HEAD's file is gone from it. CRDs are paired by
# name, so a file may hold several. New files pass (crd-audit-check checks them).
#   scripts/ci/pre-commit-diff.sh FILE...
# To commit a tightening on purpose: SKIP=crd-audit-diff git commit ...
# crd-audit must be installed (on PATH, or CRD_AUDIT=/path/to/crd-audit); python3 too.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/ci/lib.sh
. "$here/lib.sh"

if [ "${1:-}" = -- ]; then shift; fi
[ $# -gt 0 ] || exit 0
git rev-parse --verify --quiet HEAD >/dev/null || exit 0 # no commit yet: nothing to compare with
crd_lib_find_tool || { echo "crd-audit-diff: crd-audit is needed for this hook" >&2; exit 1; }
crd_lib_find_python || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-diff.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# Staged renames, NUL-separated: status, source, destination.
git diff --cached --name-status -z -M --diff-filter=R HEAD -- >"$work/renames" 2>/dev/null || : >"$work/renames"

# The path at HEAD of a staged FILE: itself, or the source of its rename; none for a new file.
head_path() {
    local status old new
    if git cat-file -e "HEAD:$1" 2>/dev/null; then
        printf '%s' "$1"
        return 0
    fi
    while IFS= read -r -d '' status && IFS= read -r -d '' old && IFS= read -r -d '' new; do
        if [ "$new" = "$1" ]; then
            printf '%s' "$old"
            return 0
        fi
    done <"$work/renames"
    return 1
}

# The PATH of NAME in a crd_lib_crds listing, for CRDs of state STATE (a pattern).
path_of() { # LISTING NAME STATE
    awk -F'\t' -v name="$2" -v state="$3" '$1 ~ state && $2 == name { print $3; exit }' "$1"
}

status=0
n=0
for file in "$@"; do
    [ -f "$file" ] || continue
    old=$(head_path "$file") || continue
    n=$((n + 1))
    mkdir -p "$work/$n"
    copy="$work/$n/${old##*/}"
    git cat-file blob "HEAD:$old" >"$copy" || continue
    crd_lib_mentions_crd "$copy" || continue
    crd_lib_crds "$copy" "$work/$n/head" >"$work/$n/head.tsv" || continue
    [ -s "$work/$n/head.tsv" ] || continue
    : >"$work/$n/staged.tsv"
    if crd_lib_mentions_crd "$file"; then
        crd_lib_crds "$file" "$work/$n/staged" >"$work/$n/staged.tsv" || {
            echo "$file: cannot be read" >&2
            status=1
            continue
        }
    fi
    while IFS=$'\t' read -r state name before _; do
        [ "$state" = ok ] || continue
        after=$(path_of "$work/$n/staged.tsv" "$name" '^ok$')
        if [ -z "$after" ]; then
            # Gone, unless in a List, or the staged file is a template (no YAML to read).
            if [ -z "$(path_of "$work/$n/staged.tsv" "$name" '^list$')" ] &&
                ! grep -q '^template	' "$work/$n/staged.tsv"; then
                echo "crd-audit-diff: $file: the CRD $name of HEAD's $old is gone: applied with pruning, it and all its objects are deleted"
                status=1
            fi
            continue
        fi
        crd_lib_same "$before" "$after" && continue
        rc=0
        output=$("$CRD_AUDIT_BIN" diff -- "$before" "$after" 2>&1) || rc=$?
        output=${output//"$before"/"HEAD:$old"}
        output=${output//"$after"/"$file"}
        case $rc in
            0) ;;
            1)
                echo "crd-audit-diff: $file: $name tightens (HEAD → staged): objects valid now may be invalid after this change"
                printf '%s\n' "$output"
                status=1
                ;;
            *)
                echo "crd-audit-diff: $file: crd-audit diff failed for $name:"
                printf '%s\n' "$output"
                status=1
                ;;
        esac
    done <"$work/$n/head.tsv"
done
if [ "$status" != 0 ]; then
    echo "(to commit a tightening on purpose: SKIP=crd-audit-diff git commit ...)"
fi
exit "$status"
