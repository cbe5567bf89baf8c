# needs: cluster
kubectl apply -f manifests/schemaaudit-crd.yaml
crd-audit controller --metrics-addr 127.0.0.1:8080
