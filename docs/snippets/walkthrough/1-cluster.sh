# needs: cluster
export KUBECONFIG=$(bash tests/testenv/up.sh)
PATH=$(dirname "$(sed -n 's/^KUBE_TESTENV_KUBECTL=//p' "$(dirname "$KUBECONFIG")/env")"):$PATH
