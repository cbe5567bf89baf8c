# needs: cluster
kubectl apply -f docs/snippets/data/gizmos-without-v1alpha1.yaml
