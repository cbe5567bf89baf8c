# needs: cluster
crd-audit manifests | kubectl apply --server-side --field-manager crd-audit --force-conflicts -f -
