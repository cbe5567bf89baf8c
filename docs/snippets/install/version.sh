crd-audit --version
