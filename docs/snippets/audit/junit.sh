# needs: cluster
# exit: 1
crd-audit audit -o junit --context admin > audit.xml
