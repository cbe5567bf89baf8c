# exit: 1
crd-audit validate --crd examples/crds -o junit examples/objects > crd-audit.xml
