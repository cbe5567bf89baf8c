# needs: cluster
helm upgrade crd-audit charts/crd-audit --namespace crd-audit --reuse-values --set gate.mode=deny
