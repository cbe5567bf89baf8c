# needs: release
kubectl krew install --manifest-url=https://github.com/crd-audit/crd-audit/releases/download/v0.1.0/crd-audit.yaml
