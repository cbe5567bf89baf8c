# exit: 1
crd-audit plan examples/revisions/widgets-v2.yaml --current examples/crds/widgets.yaml --objects examples/objects examples/stored
