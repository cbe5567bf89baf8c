#!/bin/sh
# Regenerates the expected outputs of the CEL suite (crates/crd-audit-engine/tests/cel_suite/expected/*.jsonl) with
# the oracle (the upstream Kubernetes 1.36 code, see ../shared/oracle/README.md).
#
#   scripts/cel-suite-expect.sh            all case files
#   scripts/cel-suite-expect.sh 05-format  only these case files (by name, without .yaml)
#   ORACLE=/path/to/oracle scripts/cel-suite-expect.sh
#
# The test binary writes each case's CRD and objects (CEL_SUITE_EMIT), the oracle judges
# them (`oracle structural`, `oracle validate`), and the test binary collects the outputs
# into the expected files (CEL_SUITE_ASSEMBLE).
set -eu
cd "$(dirname "$0")/.."
ORACLE=${ORACLE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-oracle/bin/oracle}
[ -x "$ORACLE" ] || { echo "oracle not found at $ORACLE (set ORACLE)" >&2; exit 2; }
CEL_SUITE_FILES=$(echo "$@" | tr ' ' ',')
export CEL_SUITE_FILES
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CRD_AUDIT_E2E=off CEL_SUITE_EMIT="$work" cargo test -q -p crd-audit-engine --test engine -- --exact cel_suite::emit_inputs >/dev/null
n=0
for d in "$work"/*/*/; do
  if ! "$ORACLE" structural "$d/crd.yaml" > "$d/structural.json" 2>"$d/err" ||
     ! "$ORACLE" validate "$d/crd.yaml" "$d/objects.yaml" > "$d/validate.jsonl" 2>"$d/err"; then
    echo "cel-suite-expect: the oracle failed on case $(basename "$(dirname "$d")")/$(cat "$d/id"):" >&2
    head -n 5 "$d/err" >&2
    exit 1
  fi
  # Upstream iterates Go maps in random order: a case whose outcome depends on it cannot
  # have one expectation
  "$ORACLE" validate "$d/crd.yaml" "$d/objects.yaml" > "$d/again.jsonl" 2>/dev/null
  # (object type names carry a random number: selfType<N>)
  if [ "$(sed 's/selfType[0-9]*/selfType/g' "$d/validate.jsonl")" != \
       "$(sed 's/selfType[0-9]*/selfType/g' "$d/again.jsonl")" ]; then
    echo "cel-suite-expect: case $(basename "$(dirname "$d")")/$(cat "$d/id") is not deterministic upstream" >&2
    exit 1
  fi
  n=$((n + 1))
done
CRD_AUDIT_E2E=off CEL_SUITE_ASSEMBLE="$work" cargo test -q -p crd-audit-engine --test engine -- --exact cel_suite::assemble_expectations >/dev/null
echo "cel-suite-expect: $n cases judged by $ORACLE" >&2
