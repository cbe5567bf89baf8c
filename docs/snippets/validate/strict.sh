# exit: 1
crd-audit validate --strict --crd examples/crds examples/objects
