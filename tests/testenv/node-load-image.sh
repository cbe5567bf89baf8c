#!/usr/bin/env bash
# node-load-image.sh KUBECONFIG ARCHIVE - import an OCI archive (scripts/build-image.sh) into
# the containerd of the node node-up.sh started, where kubelet finds it (namespace k8s.io),
# and print the image reference (repository:tag) to give a pod with imagePullPolicy: Never.
set -euo pipefail
log() { echo "[node] $*" >&2; }
[ $# = 2 ] || { echo "usage: node-load-image.sh KUBECONFIG ARCHIVE" >&2; exit 2; }
KC=$1 ARCHIVE=$2
[ -f "$KC" ] || { log "no kubeconfig: $KC"; exit 1; }
[ -f "$ARCHIVE" ] || { log "no archive: $ARCHIVE"; exit 1; }
RUN=$(cd "$(dirname "$KC")" && pwd -P)
[ -f "$RUN/.node" ] && [ -f "$RUN/env" ] || { log "$KC is not the kubeconfig of a node-up.sh node"; exit 1; }
SOCK=$(sed -n 's/^KUBE_TESTENV_CONTAINERD=//p' "$RUN/env")
[ -S "$SOCK" ] || { log "the node's containerd socket $SOCK is missing (is the node up?)"; exit 1; }
# The reference the archive names (buildah push oci-archive:FILE:REF writes it in index.json).
REF=$(tar -xOf "$ARCHIVE" index.json | python3 -c '
import json, sys
refs = [m.get("annotations", {}).get("org.opencontainers.image.ref.name", "") for m in json.load(sys.stdin)["manifests"]]
refs = [r for r in refs if r]
print(refs[0] if refs else "")')
[ -n "$REF" ] || { log "$ARCHIVE names no image (index.json has no org.opencontainers.image.ref.name)"; exit 1; }
CTR=(ctr --address "$SOCK" --namespace k8s.io)
"${CTR[@]}" images import "$ARCHIVE" >&2
[[ $'\n'"$("${CTR[@]}" images ls -q)"$'\n' == *$'\n'"$REF"$'\n'* ]] || { log "containerd does not list $REF after the import"; exit 1; }
log "imported $REF"
echo "$REF"
