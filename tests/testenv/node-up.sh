#!/usr/bin/env bash
# node-up.sh - start a throwaway single-node Kubernetes v1.20.2 cluster: etcd,
# kube-apiserver, kube-controller-manager (its default controllers), kube-scheduler, kubelet
# and kube-proxy, all built from Debian's kubernetes source package (build.sh), on Debian's
# containerd, runc and CNI plugins, with a pause image built from the same source.
#
#   node-up.sh
#
# Everything runs inside a network namespace of its own (interfaces: lo, the node's dummy
# interface with the node IP, and the pods' bridge), so nothing listens on or sends to an
# address outside it or the loopback range. From the host, the API server is reached at
# 127.0.0.1:<random port> through a Unix-socket forward (socat on both sides). The API server
# reaches Services (webhooks) through kube-proxy's iptables rules, which live in the
# namespace too.
#
# stdout: exactly one line, the path of an admin kubeconfig (contexts admin, admin-cert and
# user, as up.sh writes them), in the run directory. Stop it with node-down.sh RUN_DIR.
# Environment: KUBE_TESTENV_CACHE, KUBE_TESTENV_RUN_DIR, KUBE_TESTENV_TIMEOUT (see README.md).
set -euo pipefail

[ $# = 0 ] || { echo "usage: node-up.sh   (no arguments; see tests/testenv/README.md)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE="${KUBE_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-testenv}"
TIMEOUT="${KUBE_TESTENV_TIMEOUT:-180}"
log() { echo "[node] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "a node needs root (network namespaces, mounts, cgroups)"

BIN_DIR=$(bash "$HERE/build.sh" --node)
for f in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl pause.oci.tar pause.image; do
  [ -e "$BIN_DIR/$f" ] || die "missing $BIN_DIR/$f"
done
ETCD=/usr/bin/etcd
PAUSE_IMAGE=$(cat "$BIN_DIR/pause.image")

# Fixed addresses: they exist only inside the node's network namespace.
NODE_NAME=crd-audit-node
NODE_IP=10.1.0.1
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.0.0.0/24
API_PORT=6443

# What a node changes on the host beyond its run directory and network namespace (the
# registry of nodes, the host's sysctls kubelet needs): node-host.sh.
# shellcheck source=tests/testenv/node-host.sh
. "$HERE/node-host.sh"

RUN="${KUBE_TESTENV_RUN_DIR:-}"
if [ -z "$RUN" ]; then RUN=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-node.XXXXXX"); echo owned > "$RUN/.node"; fi
mkdir -p "$RUN"; RUN=$(cd "$RUN" && pwd -P)
# Names of this run: the network namespace and the cgroup that holds the pods.
SUFFIX=$(printf '%s' "$RUN" | cksum | cut -d' ' -f1)
NETNS="crd-audit-node-${SUFFIX}"
CGROUP_ROOT="/crd-audit-node-${SUFFIX}"
# Nodes killed before their node-down.sh ran (SIGKILL, a crashed test run) are reaped first:
# their leftover processes (found by their network namespace and cgroup, never by name),
# containers, mounts, cgroups, network namespace and the sysctls they set. Then this node is
# registered, with this script's PID and start time, so that a concurrent start does not take
# it for a dead one before its first process runs.
register() {
  reap_dead_nodes
  [ ! -e "$RUN/netns" ] || die "$RUN already holds a node (use node-down.sh first)"
  printf 'RUN=%s\nNETNS=%s\nCGROUP_ROOT=%s\nUP=%s %s %s\n' "$RUN" "$NETNS" "$CGROUP_ROOT" \
    "$$" "$(awk '{print $22}' /proc/$$/stat)" "$(readlink /proc/$$/exe)" > "$NODES/$SUFFIX"
}
with_host_lock register
[ -f "$RUN/.node" ] || echo shared > "$RUN/.node"
chmod 700 "$RUN"
echo "$NETNS" > "$RUN/netns"
echo "$CGROUP_ROOT" > "$RUN/cgroup-root"
mkdir -p "$RUN/pki" "$RUN/logs" "$RUN/pids"

STARTED=()
cleanup_on_error() {
  local rc=$?
  if [ $rc != 0 ]; then
    log "failed (rc=$rc); stopping what was started (logs: $RUN/logs)"
    KUBE_TESTENV_KEEP=1 bash "$HERE/node-down.sh" "$RUN" >&2 || true
  fi
}
trap cleanup_on_error EXIT

# ---------------------------------------------------------------- host paths
# What a node makes outside its run directory, where Kubernetes 1.20 fixes the path: the
# mount that `ip netns` keeps at /run/netns, kubelet's device-plugin socket under
# /var/lib/kubelet, the pods' logs under /var/log. The first node to make one notes it in the
# cache, and the last node-down.sh removes it once no node uses it.
HOST_STATE="$CACHE/host-paths"
mkdir -p "$HOST_STATE"
mountpoint -q /run/netns 2>/dev/null || touch "$HOST_STATE/run-netns-mount"
# containerd's shims put their sockets under /run/containerd/s whatever the configuration says.
for d in /var/lib/kubelet /var/log/pods /var/log/containers /run/containerd; do
  [ -e "$d" ] || touch "$HOST_STATE/$(echo "${d#/}" | tr / -)"
done

# ---------------------------------------------------------------- network namespace
log "network namespace $NETNS (node $NODE_IP, pods $POD_CIDR, services $SERVICE_CIDR)"
ip netns add "$NETNS"
IN=(nsenter "--net=/run/netns/$NETNS" --)
ip -n "$NETNS" link set lo up
# The node's address, on a bridge without ports (this kernel has no dummy interfaces): what is
# routed there goes nowhere. Service IPs resolve through kube-proxy's rules before that.
ip -n "$NETNS" link add node0 type bridge
ip -n "$NETNS" addr add "$NODE_IP/32" dev node0
ip -n "$NETNS" link set node0 up
ip -n "$NETNS" route add default dev node0 src "$NODE_IP"
"${IN[@]}" sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 >/dev/null
# Nothing leaves for an address outside loopback, the node, the pods and the Services: such a
# packet (a name server from the host's resolv.conf, say) is refused at once and counted by
# the chain's last rule, which the end-to-end tests read.
"${IN[@]}" iptables -w -N CRD-AUDIT-NODE-EGRESS
# (224.0.0.0/24 is link-local multicast, never routed off a link: the kernel's IGMP reports for
# the namespace's own bridges.)
for dst in 127.0.0.0/8 "$NODE_IP/32" "$POD_CIDR" "$SERVICE_CIDR" 224.0.0.0/24; do
  "${IN[@]}" iptables -w -A CRD-AUDIT-NODE-EGRESS -d "$dst" -j RETURN
done
# (xt_recent notes each refused destination in /proc/net/xt_recent/crd-audit-egress, read in
# the namespace: what sent it can then be found.)
"${IN[@]}" iptables -w -A CRD-AUDIT-NODE-EGRESS -m recent --name crd-audit-egress --rdest --set
"${IN[@]}" iptables -w -A CRD-AUDIT-NODE-EGRESS -j REJECT
"${IN[@]}" iptables -w -I OUTPUT 1 -j CRD-AUDIT-NODE-EGRESS
"${IN[@]}" iptables -w -I FORWARD 1 -j CRD-AUDIT-NODE-EGRESS

# ---------------------------------------------------------------- PKI
log "generating PKI in $RUN/pki"
(
  cd "$RUN/pki"; umask 077
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout ca.key -out ca.crt \
    -subj "/CN=crd-audit-node-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  cert() {  # cert NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
    openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=$3" > "$1.ext"
    [ -z "${4:-}" ] || echo "subjectAltName=$4" >> "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 3650 \
      -extfile "$1.ext" -out "$1.crt" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
  }
  cert apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:$NODE_IP,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin "/O=system:masters/CN=testenv-admin" clientAuth
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  cert controller-manager "/CN=system:kube-controller-manager" clientAuth
  cert scheduler "/CN=system:kube-scheduler" clientAuth
  cert kube-proxy "/CN=system:kube-proxy" clientAuth
  cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
  cert kubelet-serving "/CN=$NODE_NAME" serverAuth "IP:$NODE_IP,DNS:$NODE_NAME"
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ADMIN_TOKEN=$(openssl rand -hex 24); USER_TOKEN=$(openssl rand -hex 24)
  printf '%s,%s,%s,"%s"\n' "$ADMIN_TOKEN" testenv-admin testenv-admin system:masters > tokens.csv
  printf '%s,%s,%s\n' "$USER_TOKEN" testuser testuser >> tokens.csv
)
ADMIN_TOKEN=$(head -1 "$RUN/pki/tokens.csv" | cut -d, -f1)
USER_TOKEN=$(sed -n 2p "$RUN/pki/tokens.csv" | cut -d, -f1)
b64() { base64 -w0 < "$1"; }
kubeconfig_for() {  # kubeconfig_for FILE CERT_NAME SERVER: a client-certificate kubeconfig
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster: {server: "$3", certificate-authority: "$RUN/pki/ca.crt"}
users:
- name: u
  user: {client-certificate: "$RUN/pki/$2.crt", client-key: "$RUN/pki/$2.key"}
contexts:
- name: c
  context: {cluster: node, user: u}
current-context: c
EOF
  chmod 600 "$1"
}
INSIDE="https://127.0.0.1:$API_PORT"
for c in controller-manager scheduler kube-proxy kubelet; do
  kubeconfig_for "$RUN/$c.kubeconfig" "$c" "$INSIDE"
done

# ---------------------------------------------------------------- processes
start_time_of() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null | tail -1; }   # PID-reuse guard
# start NAME [--host] EXE ARGS...: in the node's network namespace (or the host's), in a
# session of its own; nsenter and setsid exec, so the recorded PID is the program's own.
start() {
  local name=$1; shift
  local where=("${IN[@]}")
  if [ "$1" = --host ]; then where=(); shift; fi
  setsid "${where[@]}" "$@" </dev/null >"$RUN/logs/$name.log" 2>&1 &
  local pid=$!
  echo "$pid $(start_time_of "$pid") $(readlink -f "$1")" > "$RUN/pids/$name"
  STARTED+=("$name")
}
alive() { local pid; read -r pid _ < "$RUN/pids/$1"; kill -0 "$pid" 2>/dev/null; }
wait_until() {  # wait_until WHAT PROCESS COMMAND...: polls for TIMEOUT seconds
  local what=$1 proc=$2 i; shift 2
  for i in $(seq 1 $((TIMEOUT * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    alive "$proc" || { tail -30 "$RUN/logs/$proc.log" >&2; die "$proc exited while waiting for $what"; }
    sleep 0.2
  done
  tail -30 "$RUN/logs/$proc.log" >&2
  die "$what: not after ${TIMEOUT}s"
}
t_start=$(date +%s%3N)

log "starting etcd"
start etcd "$ETCD" --name node --data-dir "$RUN/etcd-data" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster node=http://127.0.0.1:2380 --initial-cluster-state new \
  --listen-metrics-urls= --quota-backend-bytes=$((2*1024*1024*1024)) --logger=zap --log-level=warn
wait_until "etcd health" etcd "${IN[@]}" curl -sf http://127.0.0.1:2379/health

log "starting kube-apiserver ($NODE_IP:$API_PORT in the namespace)"
start kube-apiserver "$BIN_DIR/kube-apiserver" \
  --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=0.0.0.0 --advertise-address="$NODE_IP" --secure-port="$API_PORT" --insecure-port=0 \
  --tls-cert-file="$RUN/pki/apiserver.crt" --tls-private-key-file="$RUN/pki/apiserver.key" \
  --client-ca-file="$RUN/pki/ca.crt" --token-auth-file="$RUN/pki/tokens.csv" \
  --kubelet-client-certificate="$RUN/pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$RUN/pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$RUN/pki/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$RUN/pki/sa.pub" --service-account-signing-key-file="$RUN/pki/sa.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" --kubelet-preferred-address-types=InternalIP \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --allow-privileged=true --profiling=false --cert-dir="$RUN/apiserver-certs"
# (No "cmd | grep -q" under pipefail: grep exits early, the writer gets SIGPIPE, the test fails.)
ready_inside() { [ "$("${IN[@]}" curl -s --cacert "$RUN/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "$INSIDE/readyz")" = ok ]; }
wait_until "kube-apiserver /readyz" kube-apiserver ready_inside

# The host's way in: 127.0.0.1:<port> -> a Unix socket -> 127.0.0.1:6443 in the namespace.
port_used() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
EPHEMERAL_LOW=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if [ "${EPHEMERAL_LOW:-0}" -gt 12000 ]; then PORT_LOW=10000; PORT_SPAN=$(( EPHEMERAL_LOW - 10000 )); else PORT_LOW=20000; PORT_SPAN=40000; fi
HOST_PORT=""
for _ in $(seq 1 200); do
  p=$(( PORT_LOW + (RANDOM * 32768 + RANDOM) % PORT_SPAN ))
  port_used "$p" || { HOST_PORT=$p; break; }
done
[ -n "$HOST_PORT" ] || die "no free port found"
start forward-inside "$(command -v socat)" "UNIX-LISTEN:$RUN/apiserver.sock,fork,mode=600" "TCP:127.0.0.1:$API_PORT"
for _ in $(seq 1 50); do [ -S "$RUN/apiserver.sock" ] && break; sleep 0.1; done
start forward-host --host "$(command -v socat)" "TCP-LISTEN:$HOST_PORT,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$RUN/apiserver.sock"
SERVER="https://127.0.0.1:$HOST_PORT"
# The kubeconfig the caller gets (and this script uses from the host).
cat > "$RUN/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster:
    server: $SERVER
    certificate-authority-data: $(b64 "$RUN/pki/ca.crt")
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
- name: admin-cert
  user:
    client-certificate-data: $(b64 "$RUN/pki/admin.crt")
    client-key-data: $(b64 "$RUN/pki/admin.key")
- name: testuser
  user:
    token: $USER_TOKEN
contexts:
- name: admin
  context: {cluster: node, user: admin, namespace: default}
- name: admin-cert
  context: {cluster: node, user: admin-cert, namespace: default}
- name: user
  context: {cluster: node, user: testuser, namespace: default}
current-context: admin
EOF
chmod 600 "$RUN/kubeconfig"
ready_outside() { [ "$(curl -s --cacert "$RUN/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/readyz")" = ok ]; }
wait_until "the API server from the host ($SERVER)" forward-host ready_outside

log "starting kube-controller-manager and kube-scheduler"
start kube-controller-manager "$BIN_DIR/kube-controller-manager" \
  --kubeconfig="$RUN/controller-manager.kubeconfig" --use-service-account-credentials=true \
  --service-account-private-key-file="$RUN/pki/sa.key" --root-ca-file="$RUN/pki/ca.crt" \
  --cluster-signing-cert-file="$RUN/pki/ca.crt" --cluster-signing-key-file="$RUN/pki/ca.key" \
  --leader-elect=false --port=0 --secure-port=0 --profiling=false
start kube-scheduler "$BIN_DIR/kube-scheduler" \
  --kubeconfig="$RUN/scheduler.kubeconfig" --leader-elect=false --port=0 --secure-port=0 --profiling=false

# ---------------------------------------------------------------- containerd
log "starting containerd"
mkdir -p "$RUN/containerd" "$RUN/cni/net.d" "$RUN/cni/ipam"
cat > "$RUN/containerd/config.toml" <<EOF
version = 2
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$RUN/containerd/containerd.sock"
[ttrpc]
  address = "$RUN/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$RUN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # This machine's root lacks CAP_SYS_RESOURCE: a negative oom_score_adj is refused.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
EOF
# The pods' network: a bridge in the node's namespace, addresses from host-local.
cat > "$RUN/cni/net.d/10-crd-audit.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "crd-audit-node", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$RUN/cni/ipam",
            "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
start containerd "$(command -v containerd)" --config "$RUN/containerd/config.toml"
CTR=(ctr --address "$RUN/containerd/containerd.sock" --namespace k8s.io)
wait_until "containerd" containerd "${CTR[@]}" version
"${CTR[@]}" images import --no-unpack=false "$BIN_DIR/pause.oci.tar" >/dev/null 2>&1 ||
  "${CTR[@]}" images import "$BIN_DIR/pause.oci.tar" >/dev/null
[[ $'\n'"$("${CTR[@]}" images ls -q)"$'\n' == *$'\n'"$PAUSE_IMAGE"$'\n'* ]] || die "the pause image $PAUSE_IMAGE was not imported"

# ---------------------------------------------------------------- kubelet, kube-proxy
# The pods' cgroups live under a cgroup of this run (cgroup v1, the cgroupfs driver).
for d in /sys/fs/cgroup/*/; do
  c=$(basename "$d")
  [ "$c" = unified ] && continue
  mkdir -p "$d${CGROUP_ROOT#/}"
  if [ "$c" = cpuset ]; then
    cat "$d/cpuset.cpus" > "$d${CGROUP_ROOT#/}/cpuset.cpus"
    cat "$d/cpuset.mems" > "$d${CGROUP_ROOT#/}/cpuset.mems"
  fi
done
mkdir -p "$RUN/kubelet"
: > "$RUN/resolv.conf"   # pods get no name servers: nothing leaves the namespace
# kubelet runs with protectKernelDefaults: it checks the kernel tunables it needs
# (KUBELET_SYSCTLS: vm.overcommit_memory, vm.panic_on_oom, kernel.panic, kernel.panic_on_oops,
# kernel.keys.root_max*) and refuses to start unless they hold, instead of changing the host's.
# None of them is per namespace, so this script records the host's values (the first node
# does) and sets them; the last node-down.sh writes the recorded values back.
with_host_lock record_and_set_sysctls
cat > "$RUN/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $RUN/pki/kubelet-serving.crt
tlsPrivateKeyFile: $RUN/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $RUN/pki/ca.crt}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failSwapOn: false
# The disk is the host's, shared with everything else: no evictions, no image collection.
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: $RUN/resolv.conf
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
volumePluginDir: $RUN/kubelet/volume-plugins
serializeImagePulls: false
protectKernelDefaults: true
EOF
log "starting kubelet and kube-proxy"
# kubelet 1.20 links the in-tree image credential providers; the AWS one asks the EC2
# metadata endpoint (169.254.169.254) for credentials when it starts, unless told not to.
AWS_EC2_METADATA_DISABLED=true start kubelet "$BIN_DIR/kubelet" --config="$RUN/kubelet/config.yaml" \
  --kubeconfig="$RUN/kubelet.kubeconfig" --root-dir="$RUN/kubelet" --cert-dir="$RUN/kubelet/pki" \
  --container-runtime=remote --container-runtime-endpoint="unix://$RUN/containerd/containerd.sock" \
  --pod-infra-container-image="$PAUSE_IMAGE" --node-ip="$NODE_IP" --hostname-override="$NODE_NAME"
start kube-proxy "$BIN_DIR/kube-proxy" --kubeconfig="$RUN/kube-proxy.kubeconfig" \
  --hostname-override="$NODE_NAME" --bind-address="$NODE_IP" --proxy-mode=iptables --cluster-cidr="$POD_CIDR" \
  --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
  --oom-score-adj=0 --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256 \
  --nodeport-addresses="$NODE_IP/32" --profiling=false

KUBECTL=("$BIN_DIR/kubectl" --kubeconfig "$RUN/kubeconfig")
node_ready() {
  [ "$("${KUBECTL[@]}" get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_until "node $NODE_NAME Ready" kubelet node_ready
# Pods can be created once the default ServiceAccount has its token (the token controller).
default_token() {
  [ -n "$("${KUBECTL[@]}" -n default get serviceaccount default -o 'jsonpath={.secrets[0].name}')" ]
}
wait_until "the default ServiceAccount's token" kube-controller-manager default_token
# kube-proxy has written the kubernetes Service's rules.
proxy_rules() { [[ "$("${IN[@]}" iptables -t nat -S KUBE-SERVICES)" == *"-d 10.0.0.1/32"* ]]; }
wait_until "kube-proxy's rules" kube-proxy proxy_rules
# ---------------------------------------------------------------- cluster DNS
# The Services' names (<service>.<namespace>.svc.cluster.local), as a cluster's DNS serves
# them to pods (kubelet's clusterDNS: the node's address): dnsmasq in the node's namespace
# answers them from a hosts file, and nothing else (no upstream: a name outside
# cluster.local gets no address, and no query leaves the namespace). A loop keeps the file in
# step with the Services (every second; dnsmasq reads it again on SIGHUP).
log "starting the cluster DNS ($NODE_IP:53, cluster.local)"
mkdir -p "$RUN/dns"; : > "$RUN/dns/services"
start dnsmasq "$(command -v dnsmasq)" --keep-in-foreground --user=root --no-resolv --no-hosts \
  --listen-address="$NODE_IP" --bind-interfaces --port=53 --local=/cluster.local/ \
  --addn-hosts="$RUN/dns/services" --pid-file= --log-facility=-
start dns-sync --host "$(command -v bash)" -c '
  run=$1 kubectl=$2
  while :; do
    if "$kubectl" --kubeconfig "$run/kubeconfig" get services --all-namespaces -o \
      jsonpath="{range .items[*]}{.spec.clusterIP} {.metadata.name}.{.metadata.namespace}.svc.cluster.local{\"\n\"}{end}" \
      > "$run/dns/services.next" 2>/dev/null; then
      grep -v "^None " "$run/dns/services.next" > "$run/dns/services.new" || true
      if ! cmp -s "$run/dns/services.new" "$run/dns/services"; then
        mv "$run/dns/services.new" "$run/dns/services"
        read -r pid _ < "$run/pids/dnsmasq" && kill -HUP "$pid"
      fi
    fi
    sleep 1
  done' dns-sync "$RUN" "$BIN_DIR/kubectl"
dns_ready() { grep -q " kubernetes.default.svc.cluster.local\$" "$RUN/dns/services"; }
wait_until "the cluster DNS's names" dns-sync dns_ready
READY_MS=$(( $(date +%s%3N) - t_start ))

# ---------------------------------------------------------------- env file
{
  printf 'KUBECONFIG=%q\n' "$RUN/kubeconfig"
  printf 'KUBE_TESTENV_RUN_DIR=%q\n' "$RUN"
  printf 'KUBE_TESTENV_SERVER=%q\n' "$SERVER"
  printf 'KUBE_TESTENV_CA=%q\n' "$RUN/pki/ca.crt"
  printf 'KUBE_TESTENV_ADMIN_TOKEN=%q\n' "$ADMIN_TOKEN"
  printf 'KUBE_TESTENV_USER=%q\n' testuser
  printf 'KUBE_TESTENV_USER_TOKEN=%q\n' "$USER_TOKEN"
  printf 'KUBE_TESTENV_AUTHZ=%q\n' Node,RBAC
  printf 'KUBE_TESTENV_APISERVER_BIN=%q\n' "$BIN_DIR/kube-apiserver"
  printf 'KUBE_TESTENV_KUBECTL=%q\n' "$BIN_DIR/kubectl"
  printf 'KUBE_TESTENV_READY_MS=%q\n' "$READY_MS"
  printf 'KUBE_TESTENV_NETNS=%q\n' "$NETNS"
  printf 'KUBE_TESTENV_NODE_NAME=%q\n' "$NODE_NAME"
  printf 'KUBE_TESTENV_NODE_IP=%q\n' "$NODE_IP"
  printf 'KUBE_TESTENV_POD_CIDR=%q\n' "$POD_CIDR"
  printf 'KUBE_TESTENV_CONTAINERD=%q\n' "$RUN/containerd/containerd.sock"
  printf 'KUBE_TESTENV_CGROUP_ROOT=%q\n' "$CGROUP_ROOT"
} > "$RUN/env"
chmod 600 "$RUN/env"
trap - EXIT
log "node $NODE_NAME ready after ${READY_MS} ms ($SERVER; stop with node-down.sh $RUN)"
echo "$RUN/kubeconfig"
