# exit: 1
crd-audit check --kubernetes-version 1.30 examples/crds
