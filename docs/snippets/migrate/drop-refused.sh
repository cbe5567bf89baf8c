# needs: cluster
# exit: 1
kubectl apply -f docs/snippets/data/gizmos-without-v1alpha1.yaml
