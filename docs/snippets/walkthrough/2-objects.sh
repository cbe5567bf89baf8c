# needs: cluster
# exit: 1
kubectl apply -f examples/crds/widgets.yaml
kubectl wait --for condition=established crd/widgets.example.crd-audit.dev
kubectl apply -f examples/objects/widgets.yaml
