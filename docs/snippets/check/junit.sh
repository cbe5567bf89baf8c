# exit: 1
crd-audit check -o junit examples/crds > crd-check.xml
