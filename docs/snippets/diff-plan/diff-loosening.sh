# exit: 1
crd-audit diff examples/revisions/widgets-v2.yaml examples/crds/widgets.yaml
