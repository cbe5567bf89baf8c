# needs: cluster
crd-audit uninstall-cleanup --dry-run
