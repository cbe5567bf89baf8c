# needs: cluster
helm uninstall crd-audit --namespace crd-audit
kubectl delete crd schemaaudits.crd-audit.dev
