#!/usr/bin/env bash
# The pre-commit hook crd-audit-check (.pre-commit-hooks.yaml): `crd-audit check` on every
# CRD of the files pre-commit hands it (the staged versions: pre-commit stashes what is not
# staged). Documents that are no CRD are left out (a CRD file may also hold a Namespace, say),
# and a file with no CRD is passed over. Fails when a CRD has findings (structural-schema
# violations, CRD validation errors, size limits) or cannot be read.
#   scripts/ci/pre-commit-check.sh [--kubernetes-version X.Y] FILE...
# crd-audit must be installed (on PATH, or CRD_AUDIT=/path/to/crd-audit); python3 too.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/ci/lib.sh
. "$here/lib.sh"

opts=()
while [ $# -gt 0 ]; do
    case $1 in
        --kubernetes-version) opts+=("$1" "${2?--kubernetes-version needs a value}"); shift 2 ;;
        --kubernetes-version=*) opts+=("$1"); shift ;;
        --) shift; break ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || exit 0
crd_lib_find_tool || { echo "crd-audit-check: crd-audit is needed for this hook" >&2; exit 1; }
crd_lib_find_python || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-check.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

status=0
n=0
for file in "$@"; do
    if [ ! -f "$file" ] || ! crd_lib_mentions_crd "$file"; then continue; fi
    n=$((n + 1))
    if ! crd_lib_crds "$file" "$work/$n" >"$work/$n.tsv"; then
        echo "$file: cannot be read" >&2
        status=1
        continue
    fi
    checked=''
    while IFS=$'\t' read -r state _ path line; do
        if [ "$state" = template ]; then
            echo "note: $file (line $line): a CustomResourceDefinition with template directives ({{), no YAML until rendered: not checked"
            continue
        fi
        if [ "$state" = unreadable ]; then
            echo "$file (line $line): a CustomResourceDefinition crd-audit cannot read:"
            cat "$path"
            status=1
            continue
        fi
        # Each document once (the CRDs of a List share theirs).
        if [ "$path" = "$checked" ]; then continue; fi
        checked=$path
        rc=0
        output=$("$CRD_AUDIT_BIN" check ${opts[@]+"${opts[@]}"} -- "$path" 2>&1) || rc=$?
        if [ "$rc" != 0 ]; then
            status=1
            printf '%s\n' "${output//"$path"/"$file"}"
        fi
    done <"$work/$n.tsv"
done
exit "$status"
