crd-audit validate --update examples/stored --subresource status --crd examples/crds docs/snippets/data/widgets-labelled.yaml
