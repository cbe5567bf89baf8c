# needs: cluster
kubectl get crd gizmos.example.com -o jsonpath='{.status.storedVersions}'
