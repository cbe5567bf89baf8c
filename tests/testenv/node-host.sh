# shellcheck shell=bash
# node-host.sh - sourced by node-up.sh and node-down.sh: what a node changes on the host
# outside its run directory and its network namespace, kept in the cache so that the last node
# to go can undo it, and so that a node killed before node-down.sh ran (SIGKILL, a crashed test
# run) is reaped by the next node-up.sh or node-down.sh.
#
#   $CACHE/nodes/<n>        one file a node: RUN, NETNS, CGROUP_ROOT, UP (node-up.sh's PID and
#                           start time while it runs). Written before anything of the node
#                           exists, removed by node-down.sh once nothing of it is left.
#   $CACHE/host-sysctls     the host's values of KUBELET_SYSCTLS before the first node set
#                           them; the last node to go writes them back and removes the file.
#   $CACHE/nodes.lock       flock for both (KUBE_TESTENV_HOST_LOCKED=1: the caller holds it).
#
# Expects CACHE and log() from the sourcing script.

NODES="$CACHE/nodes"
SYSCTL_ORIG="$CACHE/host-sysctls"
# What kubelet 1.20 requires of the kernel (pkg/kubelet/cm/container_manager_linux.go,
# setupKernelTunables). With protectKernelDefaults: true it refuses to start unless they hold,
# instead of writing them itself. None of them is per network namespace: they are the host's.
KUBELET_SYSCTLS=(vm.overcommit_memory=1 vm.panic_on_oom=0 kernel.panic=10 kernel.panic_on_oops=1
  kernel.keys.root_maxkeys=1000000 kernel.keys.root_maxbytes=25000000)

sysctl_path() { echo "/proc/sys/${1//.//}"; }

# with_host_lock COMMAND...: runs COMMAND holding $CACHE/nodes.lock (at once when held).
with_host_lock() {
  if [ "${KUBE_TESTENV_HOST_LOCKED:-0}" = 1 ]; then "$@"; return; fi
  mkdir -p "$NODES"
  (
    flock 9
    KUBE_TESTENV_HOST_LOCKED=1 "$@"
  ) 9>"$CACHE/nodes.lock"
}

# same_proc PID STARTTIME EXE: /proc/PID is still that process.
same_proc() {
  [ -r "/proc/$1/stat" ] || return 1
  [ "$(awk '{print $22}' "/proc/$1/stat" 2>/dev/null)" = "$2" ] || return 1
  [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$3" ] || return 1
}

entry_value() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -1; }

# node_alive ENTRY: its node-up.sh still runs, or a process it recorded does.
node_alive() {
  local run up f pid st exe
  up=$(entry_value "$1" UP)
  if [ -n "$up" ]; then
    read -r pid st exe <<<"$up"
    same_proc "$pid" "$st" "$exe" && return 0
  fi
  run=$(entry_value "$1" RUN)
  [ -n "$run" ] && [ -d "$run/pids" ] || return 1
  for f in "$run"/pids/*; do
    [ -f "$f" ] || continue
    read -r pid st exe < "$f"
    same_proc "$pid" "$st" "$exe" && return 0
  done
  return 1
}

# reap_dead_nodes: node-down.sh for every registered node none of whose processes lives.
reap_dead_nodes() {
  local e
  for e in "$NODES"/*; do
    [ -f "$e" ] || continue
    node_alive "$e" && continue
    log "reaping the node $(entry_value "$e" RUN) (its processes are gone; node-down.sh never ran)"
    KUBE_TESTENV_HOST_LOCKED=1 KUBE_TESTENV_REAPING=1 bash "$HERE/node-down.sh" --entry "$e" >&2 ||
      log "WARNING: reaping $e failed"
  done
}

# record_and_set_sysctls: the host's values noted (by the first node), then kubelet's set.
record_and_set_sysctls() {
  local kv key
  if [ ! -f "$SYSCTL_ORIG" ]; then
    for kv in "${KUBELET_SYSCTLS[@]}"; do
      key=${kv%%=*}
      printf '%s=%s\n' "$key" "$(cat "$(sysctl_path "$key")")"
    done > "$SYSCTL_ORIG.tmp"
    mv "$SYSCTL_ORIG.tmp" "$SYSCTL_ORIG"
  fi
  for kv in "${KUBELET_SYSCTLS[@]}"; do
    key=${kv%%=*}
    [ "$(cat "$(sysctl_path "$key")")" = "${kv#*=}" ] || echo "${kv#*=}" > "$(sysctl_path "$key")"
  done
}

# restore_sysctls_if_last: once no node is registered, the recorded values written back.
restore_sysctls_if_last() {
  local e key value line
  for e in "$NODES"/*; do [ -f "$e" ] && return 0; done
  [ -f "$SYSCTL_ORIG" ] || return 0
  while IFS= read -r line; do
    key=${line%%=*} value=${line#*=}
    [ -n "$key" ] || continue
    [ "$(cat "$(sysctl_path "$key")")" = "$value" ] || echo "$value" > "$(sysctl_path "$key")" ||
      { log "WARNING: could not restore $key=$value"; return 1; }
  done < "$SYSCTL_ORIG"
  rm -f "$SYSCTL_ORIG"
  log "restored the host's sysctls"
}
