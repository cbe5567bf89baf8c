#!/bin/sh
# Regenerates crds.yaml (generate.py) and expected-1.N.jsonl for N = 27..36: what CRD create
# validation of a 1.N server says of each CRD (scripts/cel-env-oracle, with the oracle's Go
# toolchain; see ../shared/oracle/env.sh).
# Usage: ./regen.sh   (from anywhere; builds the tool into a temporary directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$root/../shared/oracle/env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/cel-env-oracle" ./scripts/cel-env-oracle/)
cd "$here"
python3 generate.py
for n in 27 28 29 30 31 32 33 34 35 36; do
    "$tmp/cel-env-oracle" "1.$n" crds.yaml > "expected-1.$n.jsonl"
done
