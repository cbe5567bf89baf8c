# exit: 1
crd-audit validate --crd examples/crds examples/objects
