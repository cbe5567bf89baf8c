#!/usr/bin/env bash
# Prints the path of a pre-commit executable (https://pre-commit.com), installing the PyPI
# package pre-commit==$PRE_COMMIT_VERSION into a virtualenv cached in ~/.cache/crd-audit-tools
# the first time (`python3 -m venv`, then pip; about 20 s). A `pre-commit` on PATH of that
# version is used as is. Used by the tests of the repository's pre-commit hooks
# (tests/ci_integrations/pre-commit.sh, run by tests/ci_integrations.rs).
set -euo pipefail
PRE_COMMIT_VERSION="${PRE_COMMIT_VERSION:-4.7.0}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-tools/pre-commit-$PRE_COMMIT_VERSION"
works() { "$1" --version 2>/dev/null | grep -qx "pre-commit $PRE_COMMIT_VERSION"; }
if [ -f "$CACHE/.installed" ] && works "$CACHE/bin/pre-commit"; then echo "$CACHE/bin/pre-commit"; exit 0; fi
if command -v pre-commit >/dev/null && works pre-commit; then command -v pre-commit; exit 0; fi
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "error: installing pre-commit needs Python 3 ($python)" >&2; exit 1; }
mkdir -p "$(dirname "$CACHE")"
# One installer at a time (a virtualenv cannot be built elsewhere and moved: its scripts name
# its own path).
exec 9>"$CACHE.lock"
if command -v flock >/dev/null; then flock 9; fi
if [ -f "$CACHE/.installed" ] && works "$CACHE/bin/pre-commit"; then echo "$CACHE/bin/pre-commit"; exit 0; fi
rm -rf "$CACHE"
trap 'rm -rf "$CACHE"' ERR
echo "installing pre-commit $PRE_COMMIT_VERSION from PyPI into $CACHE (once)" >&2
"$python" -m venv "$CACHE" >&2
"$CACHE/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    "pre-commit==$PRE_COMMIT_VERSION" >&2
works "$CACHE/bin/pre-commit" || { echo "error: $CACHE/bin/pre-commit does not run" >&2; rm -rf "$CACHE"; exit 1; }
touch "$CACHE/.installed"
echo "$CACHE/bin/pre-commit"
