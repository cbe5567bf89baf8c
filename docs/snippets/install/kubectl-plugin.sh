# needs: cargo
bash scripts/install-kubectl-plugin.sh
