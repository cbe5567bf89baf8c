#!/usr/bin/env bash
# Installs promtool (Debian's `prometheus` package) when it is not on PATH, for the alert rule
# tests (tests/alert_rules.rs). The package's service is not started in containers without
# systemd; where it is, it is stopped and disabled (only promtool is wanted).
set -euo pipefail
if command -v promtool >/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 || {
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
command -v promtool >/dev/null || { echo "error: promtool still missing after installing prometheus" >&2; exit 1; }
