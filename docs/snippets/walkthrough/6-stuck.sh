# needs: cluster
# exit: 1
kubectl get schemaaudit widgets.example.crd-audit.dev -o jsonpath='{range .status.invalidObjects[*]}{.namespace}/{.name} stuck={.updatesBlocked}: {.errors}{"\n"}{end}'
kubectl label widget good team=a
