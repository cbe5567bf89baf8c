# needs: cluster
# exit: 1
crd-audit roundtrip crontabs.stable.example.com
