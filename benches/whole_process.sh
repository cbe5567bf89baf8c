#!/usr/bin/env bash
# Whole-process throughput of `crd-audit validate --output json` against the upstream code
# (`oracle validate`, ../shared/oracle) on the same multi-document file, in one run on one
# machine. YAML parsing, CRD compilation and output are included on both sides.
#
#   benches/whole_process.sh [CASE-ID] [OBJECTS]
#
# CASE-ID is a conformance case (default gateway-api-standard-httproutes); its objects are
# repeated until the file holds OBJECTS documents (default 4000). ORACLE names the oracle
# binary (default: the one ../shared/oracle/build.sh leaves in ~/.cache/crd-audit-oracle).
set -euo pipefail
cd "$(dirname "$0")/.."
case_id=${1:-gateway-api-standard-httproutes}
want=${2:-4000}
corpus=${CRD_AUDIT_CONFORMANCE:-../shared/conformance}
case_dir="$corpus/cases/$case_id"
oracle=${ORACLE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-oracle/bin/oracle}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

per_copy=$(grep -c '^kind:' "$case_dir/objects.yaml")
copies=$(( (want + per_copy - 1) / per_copy ))
for _ in $(seq "$copies"); do
    cat "$case_dir/objects.yaml"
    printf '\n---\n'
done | awk -v max="$want" '/^---$/ { if (n >= max) exit } /^kind:/ { n++ } { print }' > "$work/objects.yaml"
count=$(grep -c '^kind:' "$work/objects.yaml")

cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/crd-audit

# Best of five runs each.
best() {
    local best_s=999999
    for _ in 1 2 3 4 5; do
        local start end s
        start=$EPOCHREALTIME
        "$@" > "$work/out.jsonl" || true
        end=$EPOCHREALTIME
        s=$(echo "$end - $start" | bc -l)
        if (( $(echo "$s < $best_s" | bc -l) )); then best_s=$s; fi
    done
    echo "$best_s"
}

ours=$(best "$bin" validate --crd "$case_dir/crd.yaml" --output json "$work/objects.yaml")
lines=$(wc -l < "$work/out.jsonl")
printf 'crd-audit validate: %d objects (%d lines) in %.3f s = %.0f objects/s\n' \
    "$count" "$lines" "$ours" "$(echo "$count / $ours" | bc -l)"
if [[ -x "$oracle" ]]; then
    theirs=$(best "$oracle" validate "$case_dir/crd.yaml" "$work/objects.yaml")
    printf 'oracle validate:    %d objects in %.3f s = %.0f objects/s\n' \
        "$count" "$theirs" "$(echo "$count / $theirs" | bc -l)"
    printf 'ratio: %.1fx\n' "$(echo "$theirs / $ours" | bc -l)"
else
    echo "oracle not found at $oracle (build it with ../shared/oracle/build.sh); no comparison"
fi
