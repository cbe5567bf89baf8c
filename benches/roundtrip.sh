#!/usr/bin/env bash
# Conversion round trip speed: `crd-audit roundtrip` of OBJECTS objects on the test
# kube-apiserver 1.20 (tests/testenv/up.sh), through a local conversion webhook (the example
# `conversion_webhook`, a sound one: nothing is lost), RUNS runs at --qps 0. Per run: wall
# time and objects a second, crd-audit's CPU and peak memory (/usr/bin/time), and the CPU
# the webhook and the API server (with etcd) spent meanwhile (/proc), so that each one's share
# shows. It fails when crd-audit finds anything (the webhook is sound), when a run does not
# see every object, or when a goal is missed: at least 50 objects a second, at most 64 MiB.
#
#   benches/roundtrip.sh [OBJECTS] [RUNS]      (defaults: 10000 3)
set -euo pipefail
cd "$(dirname "$0")/.."
objects=${1:-10000}
runs=${2:-3}
group=bench.roundtrip.crd-audit.dev
crd=crontabs.$group

cargo build --release --quiet --bin crd-audit --example conversion_webhook
target=${CARGO_TARGET_DIR:-target}
bin=$target/release/crd-audit
command -v /usr/bin/time >/dev/null || apt-get install -y -q time >/dev/null
command -v bc >/dev/null || apt-get install -y -q bc >/dev/null

kc=$(bash tests/testenv/up.sh --authorization-mode AlwaysAllow)
run_dir=$(dirname "$kc")
kubectl=$(sed -n 's/^KUBE_TESTENV_KUBECTL=//p' "$run_dir/env")
k() { "$kubectl" --kubeconfig "$kc" "$@"; }

# The webhook, serving until its standard input closes.
exec 3> >("$target/release/examples/conversion_webhook" "$group" "$run_dir/crd.json" > "$run_dir/webhook.url" 2> "$run_dir/webhook.log")
cleanup() { exec 3>&-; bash tests/testenv/down.sh "$kc" >/dev/null 2>&1 || true; }
trap cleanup EXIT
for _ in $(seq 50); do [ -s "$run_dir/webhook.url" ] && break; sleep 0.1; done
webhook_pid=$(pgrep -f "examples/conversion_webhook $group")
k apply -f "$run_dir/crd.json" >/dev/null
k wait --for condition=Established "crd/$crd" >/dev/null

echo "creating $objects objects" >&2
batch=$(mktemp)
for ((i = 1; i <= objects; i += 1000)); do
  {
    printf '{"apiVersion": "v1", "kind": "List", "items": ['
    for ((j = i; j < i + 1000 && j <= objects; j++)); do
      [ "$j" != "$i" ] && printf ','
      printf '{"apiVersion": "%s/v2", "kind": "CronTab", "metadata": {"name": "c%06d", "namespace": "default"}, "spec": {"schedule": "*/%d * * * *", "priority": %d, "color": "Blue", "tags": ["a", "b"], "ports": [{"name": "http", "port": %d}]}}' \
        "$group" "$j" $((j % 59 + 1)) "$j" $((j % 60000 + 1))
    done
    printf ']}'
  } > "$batch"
  k create -f "$batch" >/dev/null
done
rm -f "$batch"

# CPU seconds (user + system) a process and its threads spent so far.
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{ s += $14 + $15 } END { printf "%.2f", s / t }' "${@/#//proc/}" 2>/dev/null; }
server_pids() { pgrep -f "$run_dir" | grep -v "^$webhook_pid\$" | sed 's|$|/stat|'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rates=(); peaks=(); shares=()
for ((r = 1; r <= runs; r++)); do
  mapfile -t servers < <(server_pids)
  hook0=$(cpu_of "$webhook_pid/stat"); server0=$(cpu_of "${servers[@]}")
  /usr/bin/time -o "$run_dir/roundtrip.time" -f '%e %M %U %S' "$bin" roundtrip "$crd" --kubeconfig "$kc" \
    --qps 0 --no-progress -o json > "$run_dir/roundtrip.jsonl" 2> "$run_dir/roundtrip.stderr" \
    || { cat "$run_dir/roundtrip.stderr" >&2; head -5 "$run_dir/roundtrip.jsonl" >&2; exit 1; }
  hook1=$(cpu_of "$webhook_pid/stat"); server1=$(cpu_of "${servers[@]}")
  read -r wall kib user sys < "$run_dir/roundtrip.time"
  summary=$(tail -1 "$run_dir/roundtrip.jsonl")
  seen=$(sed -n 's/.*"objects":\([0-9]*\).*/\1/p' <<< "$summary")
  [ "$seen" = "$objects" ] || { echo "run $r saw $seen objects: $summary" >&2; exit 1; }
  rate=$(echo "scale=1; $objects / $wall" | bc -l)
  own=$(echo "$user + $sys" | bc -l)
  hook=$(echo "$hook1 - $hook0" | bc -l)
  server=$(echo "$server1 - $server0" | bc -l)
  share=$(echo "scale=1; 100 * $hook / ($own + $hook + $server)" | bc -l)
  echo "run $r: $objects objects in ${wall}s = $rate objects/s; crd-audit ${own}s CPU, peak RSS $((kib / 1024)) MiB; webhook ${hook}s CPU; API server and etcd ${server}s CPU (webhook: $share % of the CPU)"
  rates+=("$rate"); peaks+=("$((kib / 1024))"); shares+=("$share")
done
rate=$(printf '%s\n' "${rates[@]}" | median)
peak=$(printf '%s\n' "${peaks[@]}" | median)
echo "median over $runs runs of $objects objects: $rate objects/s, peak RSS $peak MiB, webhook $(printf '%s\n' "${shares[@]}" | median) % of the CPU"
ok=0
(( $(echo "$rate >= 50" | bc -l) )) || { echo "goal missed: at least 50 objects/s" >&2; ok=1; }
(( peak <= 64 )) || { echo "goal missed: at most 64 MiB" >&2; ok=1; }
exit $ok
