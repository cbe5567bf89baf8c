# needs: cluster
kubectl annotate crd widgets.example.crd-audit.dev crd-audit.dev/gate=off
