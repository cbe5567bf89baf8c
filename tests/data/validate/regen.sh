#!/bin/sh
# Regenerates oracle.jsonl in every case directory here: `oracle validate crd.yaml
# objects.yaml` (kube-apiserver's create path; see ../shared/oracle/README.md), or
# oracle-input.yaml instead of objects.yaml when a case has one (the objects as kubectl
# sends them, when that differs from what the oracle reads, as for lists inside lists).
# Usage: ORACLE=path/to/oracle ./regen.sh [CASE...]
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
[ $# -gt 0 ] || set -- */
for case in "$@"; do
    case=${case%/}
    input=$case/objects.yaml
    [ ! -f "$case/oracle-input.yaml" ] || input=$case/oracle-input.yaml
    "$ORACLE" validate "$case/crd.yaml" "$input" > "$case/oracle.jsonl"
    echo "$case: $(wc -l < "$case/oracle.jsonl") object(s)"
done
