# needs: cluster
crd-audit manifests --rbac-for-cluster
