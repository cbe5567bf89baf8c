# exit: 1
crd-audit validate --stored --crd examples/crds examples/stored
