#!/usr/bin/env bash
# apiext-down.sh RUN_DIR - stop the processes apiext-up.sh started and remove RUN_DIR.
set -uo pipefail
RUN=${1:?usage: apiext-down.sh RUN_DIR}
[ -f "$RUN/kubeconfig" ] || { echo "[apiext] not a run dir: $RUN" >&2; exit 1; }
for p in apiserver etcd; do
  pid=$(cat "$RUN/$p.pid" 2>/dev/null) || continue
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$RUN"
