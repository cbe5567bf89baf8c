# exit: 1
crd-audit diff examples/crds/widgets.yaml examples/revisions/widgets-v2.yaml
