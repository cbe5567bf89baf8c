#!/usr/bin/env bash
# apiext-up.sh - start a throwaway standalone k8s.io/apiextensions-apiserver 1.36 + etcd on
# loopback (the binaries ../shared/oracle/build.sh builds with WITH_SERVER=1): a modern CRD
# server where CEL rules survive, for end-to-end checks kube-apiserver 1.20 cannot do.
# It serves only apiextensions.k8s.io and custom resources (no core/v1, no Events, no
# Leases). stdout: the kubeconfig path (a client-certificate user in system:masters,
# insecure-skip-tls-verify); RUN_DIR/env names the etcd (KUBE_TESTENV_ETCD) for tests that
# read what is stored. Stop with: apiext-down.sh RUN_DIR.
# Env: ORACLE_CACHE (default ~/.cache/crd-audit-oracle).
set -euo pipefail
C="${ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-oracle}"
SERVER=$C/bin/apiextensions-apiserver; ETCD=$C/root/usr/bin/etcd
log() { echo "[apiext] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
for f in "$SERVER" "$ETCD"; do [ -x "$f" ] || die "missing $f (run ../shared/oracle/build.sh with WITH_SERVER=1)"; done
command -v openssl >/dev/null || die "openssl not found"
RUN=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-apiext.XXXXXX")
port_used() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Ports below the kernel's ephemeral range: a port inside it can be the local end of any
# outgoing connection, which port_used does not see, and binding it then fails.
EPHEMERAL_LOW=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if [ "${EPHEMERAL_LOW:-0}" -gt 12000 ]; then PORT_LOW=10000; PORT_SPAN=$(( EPHEMERAL_LOW - 10000 )); else PORT_LOW=20000; PORT_SPAN=40000; fi
pick() { local p; while :; do p=$(( PORT_LOW + (RANDOM * 32768 + RANDOM) % PORT_SPAN )); port_used "$p" || { echo "$p"; return; }; done; }
ETCD_PORT=$(pick); PEER_PORT=$(pick); API_PORT=$(pick)
[ "$ETCD_PORT" != "$PEER_PORT" ] && [ "$API_PORT" != "$ETCD_PORT" ] && [ "$API_PORT" != "$PEER_PORT" ] || die "port clash; run again"
URL=https://127.0.0.1:$API_PORT
(
  cd "$RUN"; umask 077
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=crd-audit-e2e-ca" -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=e2e-admin" -keyout admin.key -out admin.csr 2>/dev/null
  # An X.509 v3 client certificate (rustls, like most TLS stacks, refuses v1 certificates).
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > admin.ext
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile admin.ext -out admin.crt 2>/dev/null
)
cat > "$RUN/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: apiext
  cluster: {server: "$URL", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {client-certificate: "$RUN/admin.crt", client-key: "$RUN/admin.key"}
contexts:
- name: apiext
  context: {cluster: apiext, user: admin}
current-context: apiext
KC
"$ETCD" --name e2e --data-dir "$RUN/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
  --initial-cluster "e2e=http://127.0.0.1:$PEER_PORT" --log-level warn </dev/null >"$RUN/etcd.log" 2>&1 &
echo $! > "$RUN/etcd.pid"
# The server's own kubeconfig points at itself: it serves no core/v1, so the admission
# plugins that need it are off.
"$SERVER" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$API_PORT" --cert-dir "$RUN/serving-certs" \
  --client-ca-file "$RUN/ca.crt" --authentication-skip-lookup \
  --kubeconfig "$RUN/kubeconfig" \
  --authentication-kubeconfig "$RUN/kubeconfig" --authorization-kubeconfig "$RUN/kubeconfig" \
  --disable-admission-plugins NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy \
  </dev/null >"$RUN/apiserver.log" 2>&1 &
echo $! > "$RUN/apiserver.pid"
for _ in $(seq 1 120); do
  code=$(curl -sk --max-time 5 --cert "$RUN/admin.crt" --key "$RUN/admin.key" -o /dev/null -w '%{http_code}' "$URL/readyz?exclude=informer-sync" || true)
  if [ "$code" = 200 ]; then
    printf 'KUBECONFIG=%q\nKUBE_TESTENV_ETCD=%q\nKUBE_TESTENV_SERVER=%q\n' \
      "$RUN/kubeconfig" "http://127.0.0.1:$ETCD_PORT" "$URL" > "$RUN/env"
    log "apiextensions-apiserver on $URL ($RUN)"; echo "$RUN/kubeconfig"; exit 0
  fi
  kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null || { tail -30 "$RUN/apiserver.log" >&2; break; }
  sleep 1
done
for p in apiserver etcd; do kill "$(cat "$RUN/$p.pid")" 2>/dev/null || true; done
die "apiextensions-apiserver not ready (logs in $RUN)"
