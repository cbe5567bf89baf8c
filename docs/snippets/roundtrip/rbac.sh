# needs: cluster
kubectl create serviceaccount roundtrip --namespace default
kubectl apply -f docs/snippets/roundtrip/rbac.yaml
