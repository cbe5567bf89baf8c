# needs: cluster
# exit: 1
kubectl crd-audit audit
