#!/usr/bin/env bash
# Runs the engine crate's examples on the bundled data and checks what they print (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "error: $1" >&2; printf '%s\n' "$2" >&2; exit 1; }

# validate_objects: one stored Widget tolerated, one stuck; exit status 1 (invalid objects).
set +e
out=$(cargo run -q --locked -p crd-audit-engine --example validate_objects -- \
    examples/crds/widgets.yaml examples/stored/widgets.yaml)
rc=$?
set -e
[ "$rc" = 1 ] || fail "validate_objects exited $rc, expected 1" "$out"
grep -qx 'examples/stored/widgets.yaml#0 (line 3) Widget/tolerated: invalid, tolerated' <<<"$out" \
    || fail "validate_objects: the tolerated Widget" "$out"
grep -qx 'examples/stored/widgets.yaml#1 (line 10) Widget/stuck: stuck' <<<"$out" \
    || fail "validate_objects: the stuck Widget" "$out"
echo "validate_objects: ok"

# admission_review: the ratcheted update allowed, the changed value and the bad create denied.
out=$(cargo run -q --locked -p crd-audit-engine --features k8s-openapi --example admission_review -- \
    examples/crds/widgets.yaml examples/admission/reviews.yaml)
[ "$(wc -l <<<"$out")" = 3 ] || fail "admission_review: 3 responses expected" "$out"
grep -q '"uid":"7b1f0e2a-0001-4d7e-9a55-3c1b5f0e0001","allowed":true' <<<"$out" \
    || fail "admission_review: the ratcheted update is allowed" "$out"
grep -q '"uid":"7b1f0e2a-0002-4d7e-9a55-3c1b5f0e0002","allowed":false,"status":{"code":422,"message":"Widget.example.crd-audit.dev \\"tolerated\\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"' <<<"$out" \
    || fail "admission_review: the changed value is refused" "$out"
grep -q '"uid":"7b1f0e2a-0003-4d7e-9a55-3c1b5f0e0003","allowed":false,"status":{"code":422,"message":"Widget.example.crd-audit.dev \\"huge\\" is invalid: spec.size: Unsupported value: \\"huge\\"' <<<"$out" \
    || fail "admission_review: the create is refused" "$out"
echo "admission_review: ok"
