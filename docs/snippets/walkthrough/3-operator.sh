# needs: cluster
kubectl apply -f manifests/schemaaudit-crd.yaml
kubectl wait --for condition=established crd/schemaaudits.crd-audit.dev
crd-audit controller --metrics-addr 127.0.0.1:8080 2>operator.log &
until kubectl get schemaaudit widgets.example.crd-audit.dev >/dev/null 2>&1; do sleep 1; done
