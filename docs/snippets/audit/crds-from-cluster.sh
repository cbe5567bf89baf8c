# needs: cluster
# exit: 1
crd-audit validate --crds-from-cluster examples/objects
