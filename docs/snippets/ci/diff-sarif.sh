# exit: 1
crd-audit diff -o sarif examples/crds/widgets.yaml examples/revisions/widgets-v2.yaml > crd-diff.sarif
