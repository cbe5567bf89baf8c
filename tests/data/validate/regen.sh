#!/bin/sh
# Regenerates oracle.jsonl in every case directory here: `oracle validate crd.yaml
# objects.yaml` (kube-apiserver's create path; see /work/shared/oracle/README.md).
# Usage: ORACLE=path/to/oracle ./regen.sh [CASE...]
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
[ $# -gt 0 ] || set -- */
for case in "$@"; do
    case=${case%/}
    "$ORACLE" validate "$case/crd.yaml" "$case/objects.yaml" > "$case/oracle.jsonl"
    echo "$case: $(wc -l < "$case/oracle.jsonl") object(s)"
done
