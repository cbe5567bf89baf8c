# exit: 1
crd-audit check examples/crds
