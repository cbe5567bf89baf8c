# needs: cluster
# exit: 1
crd-audit audit -o json --exclude-group '*.k8s.io'
