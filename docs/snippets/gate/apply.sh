# needs: cluster
kubectl apply --validate=false -f examples/revisions/widgets-v2.yaml
