# needs: release
curl -fsSLO https://github.com/crd-audit/crd-audit/releases/download/v0.1.0/kubectl-crd_audit-v0.1.0-linux-amd64.tar.gz
tar -xzf kubectl-crd_audit-v0.1.0-linux-amd64.tar.gz kubectl-crd_audit
install -m 0755 kubectl-crd_audit ~/.local/bin/crd-audit
