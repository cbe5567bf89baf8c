# needs: cluster
kubectl apply -k manifests/
