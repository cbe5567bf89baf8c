#!/usr/bin/env bash
# node-down.sh RUN_DIR|KUBECONFIG - stop the node node-up.sh started and remove everything it
# made: its processes (the recorded ones, then every process left in its network namespace
# or in its pods' cgroup), its containers, the mounts under the run directory, its cgroups,
# its network namespace (and with it the bridge, the veths and every iptables rule of
# kubelet and kube-proxy), the pods' log directories under /var/log, and the run directory;
# then, once no other node is registered, it writes back the host's sysctls that node-up.sh
# recorded before setting what kubelet requires (node-host.sh), and reaps any registered node
# whose processes are all gone.
# A recorded PID is signalled only while /proc/<pid> shows the same start time and
# executable. KUBE_TESTENV_KEEP=1 keeps the run directory (logs, certificates).
#
#   node-down.sh --entry FILE   the node a registry entry ($CACHE/nodes/<n>) names, whether or
#                               not its run directory is still there (what node-host.sh's
#                               reaping of a node killed before node-down.sh ran calls).
set -euo pipefail
log() { echo "[node] $*" >&2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE="${KUBE_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-testenv}"
# shellcheck source=tests/testenv/node-host.sh
. "$HERE/node-host.sh"
RUN_GONE=0
if [ "${1:-}" = --entry ]; then
  ENTRY=${2:?--entry needs a file}
  [ -f "$ENTRY" ] || { log "no registry entry $ENTRY"; exit 1; }
  RUN=$(entry_value "$ENTRY" RUN)
  NETNS=$(entry_value "$ENTRY" NETNS)
  CGROUP_ROOT=$(entry_value "$ENTRY" CGROUP_ROOT)
  [ -n "$RUN" ] || { log "$ENTRY names no run directory"; exit 1; }
  if [ -f "$RUN/.node" ]; then RUN=$(cd "$RUN" && pwd -P); else RUN_GONE=1; fi
else
  ARG="${1:-}"
  [ -n "$ARG" ] || { echo "usage: node-down.sh RUN_DIR|KUBECONFIG | --entry FILE" >&2; exit 2; }
  [ -f "$ARG" ] && ARG=$(dirname "$ARG")
  [ -d "$ARG" ] || { log "no run dir: $ARG"; exit 1; }
  RUN=$(cd "$ARG" && pwd -P)
  [ -f "$RUN/.node" ] || { log "$RUN was not made by node-up.sh"; exit 1; }
  NETNS=$(cat "$RUN/netns" 2>/dev/null || true)
  CGROUP_ROOT=$(cat "$RUN/cgroup-root" 2>/dev/null || true)
  ENTRY="$NODES/$(printf '%s' "$RUN" | cksum | cut -d' ' -f1)"
fi

stop() {  # stop NAME: SIGTERM, SIGKILL after 10 s
  local f="$RUN/pids/$1" pid st exe i
  [ -f "$f" ] || return 0
  read -r pid st exe < "$f"
  if same_proc "$pid" "$st" "$exe"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do same_proc "$pid" "$st" "$exe" || break; sleep 0.1; done
    if same_proc "$pid" "$st" "$exe"; then log "$1 still alive after 10s, SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$f"
}

# The pods' processes and the shims: every process in the node's network namespace or in the
# pods' cgroup.
leftovers() {
  local ns_inode="" p
  [ -n "$NETNS" ] && [ -e "/run/netns/$NETNS" ] && ns_inode=$(stat -L -c %i "/run/netns/$NETNS" 2>/dev/null || true)
  {
    if [ -n "$ns_inode" ]; then
      for p in /proc/[0-9]*; do
        [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null || true)" = "$ns_inode" ] && echo "${p#/proc/}"
      done
    fi
    if [ -n "$CGROUP_ROOT" ]; then
      find /sys/fs/cgroup/*/"${CGROUP_ROOT#/}" -name cgroup.procs -exec cat {} + 2>/dev/null || true
    fi
  } | sort -un | grep -vx "$$" || true
}

stop dns-sync
stop dnsmasq
stop kubelet
stop kube-proxy
stop kube-scheduler
stop kube-controller-manager
SOCK="$RUN/containerd/containerd.sock"
if [ -S "$SOCK" ]; then
  CTR=(ctr --address "$SOCK" --namespace k8s.io --timeout 10s)
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null || true); do
    "${CTR[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
  done
  for t in $("${CTR[@]}" tasks ls -q 2>/dev/null || true); do
    for i in $(seq 1 20); do "${CTR[@]}" tasks delete "$t" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  for c in $("${CTR[@]}" containers ls -q 2>/dev/null || true); do
    "${CTR[@]}" containers delete "$c" >/dev/null 2>&1 || true
  done
fi
stop containerd
stop forward-host
stop forward-inside
stop kube-apiserver
stop etcd
for round in $(seq 1 50); do
  pids=$(leftovers)
  [ -z "$pids" ] && break
  [ "$round" = 1 ] && log "killing what is left in the node: $(echo $pids)"
  kill -KILL $pids 2>/dev/null || true
  sleep 0.2
done
[ -z "$(leftovers)" ] || log "WARNING: processes left: $(leftovers)"

# Mounts under the run directory (volumes, container root filesystems, the pods' network
# namespaces, shm), the deepest first.
for round in 1 2 3; do
  mapfile -t mounts < <(awk -v run="$RUN" '{ gsub(/\\040/, " ", $5) } index($5, run "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  [ ${#mounts[@]} = 0 ] && break
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
done

if [ -n "$CGROUP_ROOT" ]; then
  for d in /sys/fs/cgroup/*/"${CGROUP_ROOT#/}"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
fi
if [ -n "$NETNS" ] && [ -e "/run/netns/$NETNS" ]; then ip netns delete "$NETNS" || log "WARNING: ip netns delete $NETNS failed"; fi

# The pods' logs (kubelet 1.20 writes them under /var/log/pods, with links in
# /var/log/containers): those of this node's pods, by their UIDs.
if [ "$RUN_GONE" = 0 ] && [ -d "$RUN/kubelet/pods" ]; then
  for uid in $(ls "$RUN/kubelet/pods"); do
    for d in /var/log/pods/*_"$uid"; do [ -d "$d" ] && rm -rf "$d"; done
  done
fi
for l in /var/log/containers/*.log; do
  [ -L "$l" ] && [ ! -e "$l" ] && case "$(readlink "$l")" in /var/log/pods/*) rm -f "$l" ;; esac
done
# Shim sockets of this run that no process listens on any more.
if [ -d /run/containerd/s ]; then
  for s in /run/containerd/s/*; do
    [ -S "$s" ] && { [ "$RUN_GONE" = 1 ] || [ "$s" -nt "$RUN/.node" ]; } && ! grep -q " $s\$" /proc/net/unix && rm -f "$s"
  done
fi

# Host paths the first node made (node-up.sh notes them in the cache), once no node uses them.
HOST_STATE="$CACHE/host-paths"
if [ -d "$HOST_STATE" ]; then
  if [ -e "$HOST_STATE/var-lib-kubelet" ] && ! grep -q ' /var/lib/kubelet/' /proc/net/unix; then
    rm -rf /var/lib/kubelet/device-plugins
    rmdir /var/lib/kubelet 2>/dev/null && rm -f "$HOST_STATE/var-lib-kubelet"
  fi
  for d in /var/log/pods /var/log/containers; do
    f="$HOST_STATE/$(echo "${d#/}" | tr / -)"
    [ -e "$f" ] && rmdir "$d" 2>/dev/null && rm -f "$f"
  done
  if [ -e "$HOST_STATE/run-containerd" ] && [ -z "$(ls -A /run/containerd/s 2>/dev/null)" ]; then
    rmdir /run/containerd/s 2>/dev/null || true
    rmdir /run/containerd 2>/dev/null && rm -f "$HOST_STATE/run-containerd"
  fi
  if [ -e "$HOST_STATE/run-netns-mount" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    umount /run/netns 2>/dev/null && rm -f "$HOST_STATE/run-netns-mount"
    rmdir /run/netns 2>/dev/null || true
  fi
fi

if [ "$RUN_GONE" = 1 ]; then :
elif [ "${KUBE_TESTENV_KEEP:-0}" = 1 ]; then log "kept $RUN"
elif [ "$(cat "$RUN/.node" 2>/dev/null)" = owned ]; then rm -rf "$RUN"; log "removed $RUN"
else
  (cd "$RUN" && rm -rf pki logs pids etcd-data apiserver-certs containerd cni kubelet netns cgroup-root \
     ./*.kubeconfig kubeconfig env resolv.conf apiserver.sock .node)
  log "cleaned $RUN"
fi

# The registry: this node is gone. Nodes killed before their node-down.sh ran are reaped, and
# once no node is left the host's sysctls are written back as node-up.sh found them.
unregister() {
  rm -f "$ENTRY"
  [ "${KUBE_TESTENV_REAPING:-0}" = 1 ] || reap_dead_nodes
  restore_sysctls_if_last
}
with_host_lock unregister
