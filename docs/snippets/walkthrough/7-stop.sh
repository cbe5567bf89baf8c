# needs: cluster
kill %1
bash tests/testenv/down.sh "$KUBECONFIG"
