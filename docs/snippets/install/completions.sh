source <(crd-audit completions bash)
