# needs: release
helm install crd-audit oci://ghcr.io/crd-audit/charts/crd-audit --version 0.1.0 \
  --namespace crd-audit --create-namespace
