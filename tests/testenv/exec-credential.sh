#!/usr/bin/env bash
# A kubeconfig exec credential plugin for the end-to-end tests: prints an ExecCredential whose
# token is $E2E_TOKEN (set through the kubeconfig's `env`), and counts its calls in
# $E2E_EXEC_LOG when that is set.
set -euo pipefail
[ -n "${E2E_EXEC_LOG:-}" ] && echo "called" >> "$E2E_EXEC_LOG"
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s"}}\n' "${E2E_TOKEN:?E2E_TOKEN is not set}"
