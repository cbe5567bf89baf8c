# needs: cluster
kubectl get schemaaudits
