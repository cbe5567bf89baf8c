# needs: cluster
# exit: 1
crd-audit plan examples/revisions/widgets-v2.yaml --cluster
