# exit: 1
crd-audit check -o json examples/crds
