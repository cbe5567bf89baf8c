# needs: cluster
# exit: 1
crd-audit audit
