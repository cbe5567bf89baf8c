# needs: cluster
kill %1; wait %1
printf 'gate: warn\ngateUrl: https://127.0.0.1:9443/validate-crd\n' > gate.yaml
crd-audit controller --config gate.yaml --webhook-addr 127.0.0.1:9443 --metrics-addr 127.0.0.1:8080 --namespace default 2>operator.log &
until kubectl get validatingwebhookconfiguration crd-audit >/dev/null 2>&1; do sleep 1; done
