#!/bin/sh
# Regenerates scalars.oracle.jsonl: for each line of scalars.txt, the document `a: LINE`
# converted by the oracle (`oracle tojson`, sigs.k8s.io/yaml as kubectl uses it): `json`, the
# JSON text as Go writes it, or `error`, the message.
# Usage: ORACLE=path/to/oracle ./regen-scalars.sh
set -eu
cd "$(dirname "$0")"
: "${ORACLE:?set ORACLE to the oracle binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > scalars.oracle.jsonl
while IFS= read -r line; do
    printf 'a: %s\n' "$line" > "$tmp/doc.yaml"
    if out=$("$ORACLE" tojson "$tmp/doc.yaml" 2>"$tmp/err"); then
        python3 -c 'import json,sys; print(json.dumps({"input": sys.argv[1], "json": sys.argv[2]}, ensure_ascii=False))' "$line" "$out" >> scalars.oracle.jsonl
    else
        python3 -c 'import json,sys; print(json.dumps({"input": sys.argv[1], "error": sys.argv[2].strip().removeprefix("oracle: ")}, ensure_ascii=False))' "$line" "$(cat "$tmp/err")" >> scalars.oracle.jsonl
    fi
done < scalars.txt
