#!/usr/bin/env bash
# Checks that a release tag names the version the repository declares: Cargo.toml's package
# version, and charts/crd-audit/Chart.yaml's version and appVersion (the chart's default image
# tag is its appVersion: ghcr.io/crd-audit/crd-audit:<appVersion>). Prints the version.
#   scripts/check-release-version.sh [TAG [ROOT]]
# TAG is vMAJOR.MINOR.PATCH (with an optional -PRERELEASE); without it only the three
# declarations are compared with each other. ROOT is the repository (default: this one).
# The release workflow runs it on the pushed tag; .ci/run runs it here and on test inputs.
set -euo pipefail
tag=${1:-}
root=${2:-$(cd "$(dirname "$0")/.." && pwd)}

# The version of Cargo.toml's [package] table.
cargo=$(awk '
    /^\[/ { in_package = ($0 == "[package]") }
    in_package && /^version *= *"/ { sub(/^version *= *"/, ""); sub(/".*$/, ""); print; exit }
' "$root/Cargo.toml")
# A top-level key of Chart.yaml, without quotes or a trailing comment.
chart_key() {
    sed -n "s/^$1:[[:space:]]*//p" "$root/charts/crd-audit/Chart.yaml" | head -1 |
        sed -e 's/[[:space:]]#.*$//' -e 's/[[:space:]]*$//' -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'\$/\1/"
}
chart=$(chart_key version)
app=$(chart_key appVersion)

fail=0
for pair in "Cargo.toml version:$cargo" "Chart.yaml version:$chart" "Chart.yaml appVersion:$app"; do
    if [ -z "${pair#*:}" ]; then
        echo "error: no ${pair%%:*} found under $root" >&2
        fail=1
    fi
done
[ "$fail" = 0 ] || exit 1
if [ "$cargo" != "$chart" ] || [ "$cargo" != "$app" ]; then
    echo "error: the versions differ: Cargo.toml $cargo, Chart.yaml version $chart, appVersion $app" >&2
    exit 1
fi
if [ -n "$tag" ]; then
    if ! [[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
        echo "error: tag $tag is not vMAJOR.MINOR.PATCH[-PRERELEASE]" >&2
        exit 1
    fi
    if [ "${tag#v}" != "$cargo" ]; then
        echo "error: tag $tag does not name the version $cargo of Cargo.toml and Chart.yaml" >&2
        exit 1
    fi
fi
echo "$cargo"
