#!/usr/bin/env bash
# build.sh - install what the harness needs from Debian's archive and build the Kubernetes
# 1.20.2 binaries from Debian's source package, once, into the cache. Used by up.sh (the API
# server alone) and node-up.sh (a whole node). See README.md.
#
#   build.sh [--node] [--check-sources]
#
# stdout: exactly one line, the directory of the cached binaries (kube-apiserver, kubectl,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy, pause, and with --node the
# pause image pause.oci.tar). --node also installs the node's packages (containerd, runc, the
# CNI plugins, iptables, conntrack, socat, buildah, dnsmasq). Every binary is built by one `go build` in
# one Go build cache, the first time any is missing.
#
# Concurrent runs take turns on a lock (flock on $CACHE/.lock): a second run waits for the
# first one's build and then finds the binaries in the cache.
set -euo pipefail

NODE=0
CHECK_SOURCES=0
while [ $# -gt 0 ]; do
  case "$1" in
    --node) NODE=1; shift ;;
    --check-sources) CHECK_SOURCES=1; shift ;;
    *) echo "build.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

K8S_DEB_VERSION="1.20.5+really1.20.2-1.1+deb12u1"
K8S_VERSION="v1.20.2"
GOVER="1.19"
SUITE="bookworm"
# The recipe revision: a new recipe gets a new directory, so an old binary is never reused.
# r3: every binary in one build; the schema validator's zero-value check mended for Go >= 1.16
# ("" was read as null: see README.md).
RECIPE="r3"
BUILD_ID="kube-${K8S_VERSION}-deb${K8S_DEB_VERSION//+/_}-go${GOVER}-${RECIPE}"
CACHE="${KUBE_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-testenv}"
JOBS="${KUBE_TESTENV_JOBS:-2}"
APT_DIR="${KUBE_TESTENV_APT_DIR:-/etc/apt}"   # where the existing apt configuration is read
DEFAULT_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PKGS=(golang-${GOVER}-go etcd-server openssl curl ca-certificates util-linux
      golang-github-modern-go-reflect2-dev)
NODE_PKGS=(containerd runc containernetworking-plugins iptables conntrack socat iproute2 buildah gcc libc6-dev dnsmasq-base)
BINARIES=(kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy)
# The pause image's tag: build/pause/Makefile of the source (TAG = 3.4), with the revision
# Kubernetes 1.20 ships (k8s.gcr.io/pause:3.4.1).
PAUSE_TAG="3.4.1"
PAUSE_IMAGE="localhost/crd-audit-testenv/pause:${PAUSE_TAG}"

log() { echo "[testenv] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
SUDO=""
if [ "$(id -u)" != 0 ]; then command -v sudo >/dev/null && SUDO="sudo" || true; fi

# ---------------------------------------------------------------- apt sources
# debian_archive APT_DIR: print "URI KEYRING" of the first enabled Debian 'deb' entry found in
# APT_DIR/sources.list.d/*.sources, APT_DIR/sources.list, APT_DIR/sources.list.d/*.list.
# An entry counts as Debian when one of its suites is a Debian release name (optionally
# -updates or -backports); -security entries use a different archive and are skipped.
debian_archive() {
  local dir="$1" f
  local suites='^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable)(-updates|-backports)?$'
  local files=()
  for f in "$dir"/sources.list.d/*.sources; do [ -f "$f" ] && files+=("$f"); done
  if [ ${#files[@]} -gt 0 ]; then
    awk -v re="$suites" '
      function flush() {
        if (!found && types ~ /(^| )deb( |$)/ && tolower(enabled) != "no" && uris != "") {
          n = split(suites_, s, " ")
          for (i = 1; i <= n; i++) if (s[i] ~ re) { split(uris, u, " "); print u[1], signed; found = 1; exit }
        }
        types = ""; uris = ""; suites_ = ""; signed = ""; enabled = ""
      }
      FNR == 1 && NR > 1 { flush() }          # a new file ends the previous stanza
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { next }                       # continuation lines (inline keys)
      { key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (key == "types") types = val; else if (key == "uris") uris = val
        else if (key == "suites") suites_ = val; else if (key == "enabled") enabled = val
        else if (key == "signed-by" && val ~ /^\//) signed = val }
      END { flush() }
    ' "${files[@]}" | head -n1 | grep . && return 0
  fi
  files=()
  [ -f "$dir/sources.list" ] && files+=("$dir/sources.list")
  for f in "$dir"/sources.list.d/*.list; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || return 1
  awk -v re="$suites" '
    { sub(/#.*/, "") }
    $1 == "deb" {
      i = 2; signed = ""
      if ($2 ~ /^\[/) {
        for (; i <= NF; i++) {
          o = $i; gsub(/[\[\]]/, "", o)
          if (o ~ /^signed-by=/) { sub(/^signed-by=/, "", o); signed = o }
          if ($i ~ /\]$/) break
        }
        i++
      }
      if ($(i+1) ~ re) { print $i, signed; exit }
    }
  ' "${files[@]}" | head -n1 | grep .
}

ARCHIVE_URI=""; ARCHIVE_KEYRING=""
derive_archive() {
  [ -n "$ARCHIVE_URI" ] && return 0
  local line
  line=$(debian_archive "$APT_DIR") ||
    die "no Debian archive URI found in $APT_DIR (sources.list.d/*.sources, sources.list, sources.list.d/*.list): add a 'deb' entry for a Debian suite first"
  ARCHIVE_URI=${line%% *}
  ARCHIVE_KEYRING=${line#* }
  [ "$ARCHIVE_KEYRING" = "$line" ] && ARCHIVE_KEYRING=""
  [ -n "$ARCHIVE_KEYRING" ] || ARCHIVE_KEYRING=$DEFAULT_KEYRING
  ARCHIVE_URI=${ARCHIVE_URI%/}
}
stanza() {  # stanza TYPE
  printf '%s\n' "Types: $1" "URIs: $ARCHIVE_URI" "Suites: $SUITE" 'Components: main' "Signed-By: $ARCHIVE_KEYRING"
}

if [ "$CHECK_SOURCES" = 1 ]; then
  derive_archive
  echo "archive URI: $ARCHIVE_URI"
  echo "keyring:     $ARCHIVE_KEYRING"
  echo "--- /etc/apt/sources.list.d/crd-audit-testenv-bin.sources (added only if golang-${GOVER}-go has no candidate)"
  stanza deb
  echo "--- /etc/apt/sources.list.d/crd-audit-testenv-src.sources (added only if source kubernetes=${K8S_DEB_VERSION} is unknown)"
  stanza deb-src
  exit 0
fi

# ---------------------------------------------------------------- one run at a time
mkdir -p "$CACHE"; CACHE=$(cd "$CACHE" && pwd)
command -v flock >/dev/null || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q util-linux >&2
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  log "another run is installing or building in $CACHE; waiting for it"
  flock 9
fi

# NB: no "cmd | grep -q" under pipefail (grep -q exits early -> SIGPIPE -> false negative)
pkg_installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == *"install ok installed"* ]]; }
have_src() { [[ $'\n'"$(apt-cache showsrc kubernetes 2>/dev/null || true)"$'\n' == *$'\n'"Version: ${K8S_DEB_VERSION}"$'\n'* ]]; }
have_bin() { [[ "$(apt-cache policy "golang-${GOVER}-go" 2>/dev/null || true)" =~ Candidate:\ [0-9] ]]; }
apt_updated=0
apt_update() { [ $apt_updated = 1 ] || { log "apt-get update"; $SUDO apt-get update -qq >&2; apt_updated=1; }; }
add_source() {  # add_source TYPE FILE
  [ -e "$2" ] && return 0
  derive_archive
  log "adding $SUITE $1 entry ($ARCHIVE_URI) as $2"
  stanza "$1" | $SUDO tee "$2" >/dev/null
}
ensure_bin_source() {
  have_bin && return 0
  add_source deb /etc/apt/sources.list.d/crd-audit-testenv-bin.sources
  apt_updated=0; apt_update
}
ensure_src_source() {
  have_src && return 0
  add_source deb-src /etc/apt/sources.list.d/crd-audit-testenv-src.sources
  apt_updated=0; apt_update
  have_src || die "source package kubernetes ${K8S_DEB_VERSION} not found in apt deb-src entries"
}

wanted=("${PKGS[@]}")
[ "$NODE" = 1 ] && wanted+=("${NODE_PKGS[@]}")
missing=()
for p in "${wanted[@]}"; do pkg_installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  ensure_bin_source
  log "installing: ${missing[*]}"
  install_pkgs() {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      -o DPkg::Lock::Timeout=600 "${missing[@]}" >&2
  }
  install_pkgs || { apt_update; install_pkgs; }
  # The packages enable (and on systemd hosts start) system services: a system etcd on :2379
  # and a system containerd. Not wanted here: the harness starts its own.
  for svc in etcd containerd; do
    case " ${missing[*]} " in *" $svc"*) ;; *) continue ;; esac
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
      $SUDO systemctl disable --now "$svc" >&2 2>&1 || true
    else
      $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
  done
fi
GO=/usr/lib/go-${GOVER}/bin/go
[ -x "$GO" ] || die "missing $GO"

# ---------------------------------------------------------------- build (cached)
BIN_DIR="$CACHE/bin/$BUILD_ID"
need=()
for b in "${BINARIES[@]}" pause; do [ -x "$BIN_DIR/$b" ] || need+=("$b"); done
if [ ${#need[@]} -gt 0 ]; then
  log "building ${need[*]} (cache $BIN_DIR)"
  ensure_src_source
  B="$CACHE/build"
  rm -rf "$B"; mkdir -p "$B/dl" "$B/gopath/src/k8s.io/kubernetes"
  log "downloading source package kubernetes=${K8S_DEB_VERSION}"
  (cd "$B/dl" && apt-get source --download-only -q "kubernetes=${K8S_DEB_VERSION}" >&2)
  ORIG=$(ls "$B"/dl/kubernetes_*.orig.tar.gz 2>/dev/null | head -1 || true)
  [ -f "$ORIG" ] || die "apt-get source did not produce kubernetes_*.orig.tar.gz"
  log "extracting $(basename "$ORIG")"
  tar -xzf "$ORIG" -C "$B/gopath/src/k8s.io/kubernetes" --strip-components=1
  # debian/patches only touch kubectl/cli-runtime printing code (not the servers); they are
  # not applied, so kubectl prints as upstream v1.20.2 does
  S="$B/gopath/src/k8s.io/kubernetes"
  # Vendored github.com/modern-go/reflect2 v1.0.1 segfaults with Go >= 1.18 (jsoniter map
  # iteration: YAML / pretty JSON responses); use Debian's reflect2 1.0.2 instead.
  R=/usr/share/gocode/src/github.com/modern-go/reflect2
  [ -f "$R/go_above_118.go" ] || die "$R/go_above_118.go missing"
  rm -f "$S"/vendor/github.com/modern-go/reflect2/*.go "$S"/vendor/github.com/modern-go/reflect2/*.s
  cp "$R"/*.go "$R"/*.s "$S/vendor/github.com/modern-go/reflect2/"
  # The OpenAPI type check treats a value as null when
  #   reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))
  # holds. That compares two reflect.Value headers: never equal before Go 1.16, but since Go
  # 1.16 reflect.Zero and an empty string share one zero buffer, so every "" in a custom
  # resource or a CRD default was refused as "must be of type string: \"null\"" (Kubernetes
  # issue 99804; kube-openapi 230 made the check `data == nil`, what Go 1.15 computed for the
  # values a JSON decoder produces). Built with go1.19, the check becomes `data == nil` here too.
  for f in vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go vendor/github.com/go-openapi/validate/type.go; do
    grep -q 'data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))' "$S/$f" ||
      die "$f: the zero-value check to mend is not there"
    sed -i 's/data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))/data == nil/' "$S/$f"
  done
  unset GOROOT GOBIN
  export PATH="/usr/lib/go-${GOVER}/bin:$PATH" GOPATH="$B/gopath" GOCACHE="$B/gocache" GOENV=off \
         GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0
  cd "$S"
  # Kubernetes 1.20 builds in GOPATH mode (as hack/lib/init.sh does). Module mode
  # (-mod=vendor) fails with go1.19: "updates to go.mod needed, disabled by -mod=vendor".
  # version stamping as in hack/lib/version.sh (both packages; /version is served from client-go's)
  LDF="-s -w"
  for V in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
    LDF+=" -X $V.gitVersion=${K8S_VERSION} -X $V.gitMajor=1 -X $V.gitMinor=20 -X $V.gitTreeState=clean"
    LDF+=" -X $V.gitCommit=faecb196815e248d3ecfb03c680a4507229c2a56 -X $V.buildDate=$(date -u -r go.mod +%Y-%m-%dT%H:%M:%SZ)"
  done
  log "building openapi-gen and generating pkg/generated/openapi (not in the tarball)"
  go build -p "$JOBS" -o "$B/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  kfind() { find -H . \( -not \( \( -path ./_\* -o -path ./.\* -o -path ./vendor \) -prune \) \) "$@" | sed 's|^./staging/src|vendor|'; }
  ALL_GO_DIRS=$(kfind -type f -name \*.go | sed 's|/[^/]*$||' | sed 's|^./||' | LC_ALL=C sort -u)
  TAGF=$(find $ALL_GO_DIRS -maxdepth 1 -type f -name \*.go | { xargs grep --color=never -l '^// *+k8s:' || true; } |
         grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/')
  DIRS=$({ grep --color=never -l '+k8s:openapi-gen=' $TAGF || true; } | xargs -n1 dirname | LC_ALL=C sort -u)
  [ "$(echo $DIRS | wc -w)" -gt 50 ] || die "openapi input discovery failed"   # 80 dirs for v1.20.2
  "$B/openapi-gen" --logtostderr \
    -i "$(printf 'k8s.io/kubernetes/%s\n' $DIRS | paste -sd,)" \
    -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
    -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt -r "$B/openapi-violations.report" 2>"$B/openapi-gen.log" ||
    { tail -20 "$B/openapi-gen.log" >&2; die "openapi-gen failed"; }
  [ -s pkg/generated/openapi/zz_generated.openapi.go ] || die "openapi generation failed"
  log "building ${BINARIES[*]} with go${GOVER} (-p ${JOBS}); takes about 15-25 min on 2 cores"
  t0=$(date +%s)
  mkdir -p "$B/out"
  go build -p "$JOBS" -trimpath -o "$B/out/" -ldflags "$LDF" $(printf './cmd/%s ' "${BINARIES[@]}")
  log "go build took $(( $(date +%s) - t0 ))s"
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    [[ "$("$B/out/$b" --version=raw)" == *'Major:"1", Minor:"20", GitVersion:"v1.20.2"'* ]] || die "$b: version stamping failed"
  done
  [[ "$("$B/out/kubelet" --version)" == "Kubernetes v1.20.2" ]] || die "kubelet: version stamping failed"
  [[ "$(KUBECONFIG=/dev/null "$B/out/kubectl" version --client)" == *'Major:"1", Minor:"20", GitVersion:"v1.20.2"'* ]] ||
    die "kubectl: version stamping failed"
  # The pod sandbox's process (build/pause), static like the upstream image's.
  command -v gcc >/dev/null || { NODE_PKGS=(gcc libc6-dev); missing=(gcc libc6-dev); install_pkgs; }
  gcc -Os -Wall -Werror -static -DVERSION="v${PAUSE_TAG}-crd-audit" -o "$B/out/pause" build/pause/linux/pause.c
  strip "$B/out/pause"
  mkdir -p "$BIN_DIR"
  for b in "${BINARIES[@]}" pause; do mv "$B/out/$b" "$BIN_DIR/$b.tmp"; mv "$BIN_DIR/$b.tmp" "$BIN_DIR/$b"; done
  cd /
  if [ "${KUBE_TESTENV_KEEP_BUILD:-0}" != 1 ]; then chmod -R u+w "$B" 2>/dev/null || true; rm -rf "$B"; fi
fi

# ---------------------------------------------------------------- the pause image (node)
# An OCI archive from scratch with buildah, in a storage of its own that is removed after.
if [ "$NODE" = 1 ] && [ ! -s "$BIN_DIR/pause.oci.tar" ]; then
  log "building the pause image $PAUSE_IMAGE"
  T=$(mktemp -d "$CACHE/pause-image.XXXXXX")
  bh() { buildah --root "$T/storage" --runroot "$T/run" --storage-driver vfs "$@"; }
  c=$(bh from --quiet scratch)
  bh copy --quiet "$c" "$BIN_DIR/pause" /pause >/dev/null
  bh config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  bh commit --quiet --format oci "$c" "$PAUSE_IMAGE" >/dev/null
  bh push --quiet "$PAUSE_IMAGE" "oci-archive:$T/pause.oci.tar:$PAUSE_IMAGE"
  mv "$T/pause.oci.tar" "$BIN_DIR/pause.oci.tar"
  bh rm --all >/dev/null 2>&1 || true
  bh rmi --all --force >/dev/null 2>&1 || true
  chmod -R u+w "$T" 2>/dev/null || true; rm -rf "$T"
  echo "$PAUSE_IMAGE" > "$BIN_DIR/pause.image"
fi

echo "$BIN_DIR"
