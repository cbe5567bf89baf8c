# exit: 1
crd-audit validate --crd examples/crds -o json examples/objects
