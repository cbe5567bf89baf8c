# exit: 1
crd-audit diff -o json examples/crds/widgets.yaml examples/revisions/widgets-v2.yaml
