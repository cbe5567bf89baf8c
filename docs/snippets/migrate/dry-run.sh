# needs: cluster
# exit: 1
crd-audit migrate gizmos.example.com --dry-run
