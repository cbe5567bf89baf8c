#!/bin/sh
# Regenerates the oracle outputs of every case directory here (see README.md): `oracle update`
# (kube-apiserver's custom-resource UPDATE path with validation ratcheting; see
# shared/oracle/README.md) over crd.yaml, old.yaml and each new-S.yaml:
#   oracle.noop.jsonl         oracle update crd.yaml old.yaml           (no NEW: no-op update)
#   oracle.S.jsonl            oracle update crd.yaml old.yaml new-S.yaml
# and, when the case has a `status` file (its CRD has the status subresource), PUT .../status:
#   oracle.noop.status.jsonl  oracle update --status crd.yaml old.yaml
#   oracle.S.status.jsonl     oracle update --status crd.yaml old.yaml new-S.yaml, for each
#                             scenario S listed (one per line) in that `status` file.
# It does not rerun generate.py. Stops on an oracle error, a CRD the server would reject or any
# other unexpected stderr output.
# Usage: ORACLE=path/to/oracle ./regen.sh [CASE...]
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
[ $# -gt 0 ] || set -- */
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run() { # OUT ARGS...
    out=$1; shift
    "$ORACLE" update "$@" > "$out" 2> "$err" || { cat "$err" >&2; exit 1; }
    # klog's "Found duplicate validation error" notes (metadata errors are reported by both
    # validateCommonFields and the strategy) are expected; anything else on stderr is not.
    if grep -v 'Found duplicate validation error' "$err" | grep -q .; then cat "$err" >&2; exit 1; fi
}
for case in "$@"; do
    c=${case%/}
    rm -f "$c"/oracle.*.jsonl
    run "$c/oracle.noop.jsonl" "$c/crd.yaml" "$c/old.yaml"
    [ ! -f "$c/status" ] || run "$c/oracle.noop.status.jsonl" --status "$c/crd.yaml" "$c/old.yaml"
    for new in "$c"/new-*.yaml; do
        [ -f "$new" ] || continue
        s=${new#"$c"/new-}; s=${s%.yaml}
        run "$c/oracle.$s.jsonl" "$c/crd.yaml" "$c/old.yaml" "$new"
        if [ -f "$c/status" ] && grep -qx "$s" "$c/status"; then
            run "$c/oracle.$s.status.jsonl" --status "$c/crd.yaml" "$c/old.yaml" "$new"
        fi
    done
    objs=$(grep -c '^{' "$c/old.yaml" | tr -d ' ')
    files=$(ls "$c"/oracle.*.jsonl | wc -l | tr -d ' ')
    lines=$(cat "$c"/oracle.*.jsonl | wc -l | tr -d ' ')
    codes=
    for code in 200 422 400 404; do
        codes="$codes $code=$(cat "$c"/oracle.*.jsonl | grep -c "\"code\":$code," || true)"
    done
    warned=$(cat "$c"/oracle.*.jsonl | grep -c '"warnings":\["' || true)
    echo "$c: $objs stored object(s), $files file(s), $lines judgement(s):$codes, $warned with warnings"
done
