# needs: cluster
crd-audit migrate gizmos.example.com
