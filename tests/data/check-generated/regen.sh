#!/bin/sh
# Regenerates DIR/oracle.jsonl (DIR: this directory, or ../check-spec): `oracle structural` on
# each CRD of DIR/crds.yaml in turn (the oracle reads the first CRD of a file), one line a CRD.
# Usage: ORACLE=path/to/oracle ./regen.sh [DIR]
set -eu
cd "${1:-$(dirname "$0")}"
: "${ORACLE:?set ORACLE to the oracle binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" 'BEGIN{n=0} /^---$/ {n++; next} /^#/ {next} {print > (dir "/" sprintf("%04d", n) ".yaml")}' crds.yaml
: > oracle.jsonl
for f in "$work"/*.yaml; do
    "$ORACLE" structural "$f" | tr -d '\n' >> oracle.jsonl
    echo >> oracle.jsonl
done
echo "oracle.jsonl: $(wc -l < oracle.jsonl) CRD(s)"
