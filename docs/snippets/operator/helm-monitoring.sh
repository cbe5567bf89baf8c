# needs: cluster
helm install crd-audit charts/crd-audit --namespace crd-audit --create-namespace \
  --set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true
kubectl get schemaaudits        # or its short name: kubectl get crdaudit
