# exit: 1
crd-audit validate --crd examples/crds -o sarif examples/objects > crd-audit.sarif
