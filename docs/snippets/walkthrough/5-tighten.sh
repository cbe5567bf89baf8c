# needs: cluster
kubectl apply --validate=false -f examples/revisions/widgets-v2.yaml
kubectl wait --for condition=SchemaTightened schemaaudit/widgets.example.crd-audit.dev
kubectl get schemaaudits
