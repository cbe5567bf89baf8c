#!/usr/bin/env bash
# Storage version migration speed: `crd-audit migrate` of OBJECTS objects on the test
# kube-apiserver 1.20 (tests/testenv/up.sh), at each QPS given (0: no limit), several runs
# each, whole-process wall time and peak memory from /usr/bin/time.
#
#   benches/migrate.sh [OBJECTS] [RUNS] [QPS ...]      (defaults: 20000 3 0 20)
#
# Every run rewrites every object: before it, the CRD's storage version flips between
# v1alpha1 and v1 (the objects are then all stored at the other version), so a run is a full
# migration, preflight judging included. With MIGRATE_BENCH_KUBECONFIG the server and objects
# of an earlier call are reused (its setup is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
objects=${1:-20000}
runs=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(0 20)
group=bench.migrate.crd-audit.dev
crd=gizmos.$group

cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/crd-audit
command -v /usr/bin/time >/dev/null || apt-get install -y -q time >/dev/null

kc=${MIGRATE_BENCH_KUBECONFIG:-}
if [ -z "$kc" ]; then
  kc=$(bash tests/testenv/up.sh --authorization-mode AlwaysAllow)
  echo "server: $kc (stop it with tests/testenv/down.sh $kc)" >&2
fi
run_dir=$(dirname "$kc")
kubectl=$(sed -n 's/^KUBE_TESTENV_KUBECTL=//p' "$run_dir/env")
k() { "$kubectl" --kubeconfig "$kc" "$@"; }

crd_with_storage() {  # crd_with_storage VERSION
  local a=false b=true
  [ "$1" = v1alpha1 ] && { a=true; b=false; }
  cat <<EOF
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "$crd"},
 "spec": {"group": "$group", "scope": "Namespaced",
  "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
  "versions": [
   {"name": "v1alpha1", "served": true, "storage": $a, "schema": {"openAPIV3Schema": {"type": "object",
     "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}, "name": {"type": "string"}}}}}}},
   {"name": "v1", "served": true, "storage": $b, "schema": {"openAPIV3Schema": {"type": "object",
     "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer", "maximum": 1000000}, "name": {"type": "string", "maxLength": 64}}}}}}}]}}
EOF
}

if ! k get crd "$crd" >/dev/null 2>&1; then
  crd_with_storage v1alpha1 | k apply -f - >/dev/null
  k wait --for condition=Established "crd/$crd" >/dev/null
  echo "creating $objects objects" >&2
  batch=$(mktemp)
  for ((i = 1; i <= objects; i += 1000)); do
    {
      printf '{"apiVersion": "v1", "kind": "List", "items": ['
      for ((j = i; j < i + 1000 && j <= objects; j++)); do
        [ "$j" != "$i" ] && printf ','
        printf '{"apiVersion": "%s/v1alpha1", "kind": "Gizmo", "metadata": {"name": "g%06d", "namespace": "default"}, "spec": {"size": %d, "name": "gizmo number %d"}}' "$group" "$j" "$j" "$j"
      done
      printf ']}'
    } > "$batch"
    k create -f "$batch" >/dev/null
  done
  rm -f "$batch"
fi

storage=$(k get crd "$crd" -o 'jsonpath={.spec.versions[?(@.storage==true)].name}')
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for qps in "${rates[@]}"; do
  rates_seen=(); peaks=()
  for ((r = 1; r <= runs; r++)); do
    # Every object is stored at the current storage version: move it, then migrate to it.
    if [ "$storage" = v1 ]; then storage=v1alpha1; else storage=v1; fi
    crd_with_storage "$storage" | k apply -f - >/dev/null
    /usr/bin/time -o "$run_dir/migrate.time" -f '%e %M' "$bin" migrate "$crd" --kubeconfig "$kc" --qps "$qps" \
      --no-progress -o json > "$run_dir/migrate.jsonl" 2> "$run_dir/migrate.stderr" || true
    read -r wall kib < "$run_dir/migrate.time"
    summary=$(tail -1 "$run_dir/migrate.jsonl")
    rewritten=$(sed -n 's/.*"rewritten":\([0-9]*\).*/\1/p' <<< "$summary")
    rate=$(echo "scale=1; $rewritten / $wall" | bc -l)
    echo "qps=$qps run=$r: rewritten $rewritten in ${wall}s = $rate objects/s, peak RSS $((kib / 1024)) MiB; $summary"
    rates_seen+=("$rate"); peaks+=("$((kib / 1024))")
  done
  echo "qps=$qps: median $(printf '%s\n' "${rates_seen[@]}" | median) objects/s, median peak RSS $(printf '%s\n' "${peaks[@]}" | median) MiB over $runs runs of $objects objects"
done
