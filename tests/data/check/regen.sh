#!/bin/sh
# Regenerates NAME.oracle.json for every NAME.yaml here: `oracle structural NAME.yaml` (CRD
# create validation and the NonStructuralSchema condition; see
# ../shared/oracle/README.md).
# Usage: ORACLE=path/to/oracle ./regen.sh
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
for f in *.yaml; do
    "$ORACLE" structural "$f" > "${f%.yaml}.oracle.json"
done
