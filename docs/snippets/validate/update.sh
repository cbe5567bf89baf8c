# exit: 1
crd-audit validate --update examples/stored --crd examples/crds docs/snippets/data/widgets-labelled.yaml
