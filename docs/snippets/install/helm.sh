# needs: cluster
helm install crd-audit charts/crd-audit --namespace crd-audit --create-namespace
kubectl get schemaaudits
