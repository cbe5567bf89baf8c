# needs: cluster
kubectl delete validatingwebhookconfiguration crd-audit
