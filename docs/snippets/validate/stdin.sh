# exit: 1
crd-audit validate --crd examples/crds/widgets.yaml - < examples/objects/widgets.yaml
