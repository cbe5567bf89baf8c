# exit: 1
crd-audit validate --stored --kubernetes-version 1.29 --crd examples/crds examples/stored
