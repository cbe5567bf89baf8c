#!/bin/sh
# Regenerates oracle-errors.txt: for each items-*.yaml here, the error the oracle (kube's
# unstructured list decoding, as kubectl's) gives for it: `FILE: MESSAGE`.
# Usage: ORACLE=path/to/oracle ./regen.sh
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
: > oracle-errors.txt
for f in items-*.yaml; do
    if "$ORACLE" validate crd.yaml "$f" > /dev/null 2> err.tmp; then
        echo "$f: accepted by the oracle" >&2
        exit 1
    fi
    # "oracle: FILE: document 0: MESSAGE"
    sed -n "s/^oracle: $f: document 0: /$f: /p" err.tmp >> oracle-errors.txt
done
rm -f err.tmp
