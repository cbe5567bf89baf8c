#!/usr/bin/env bash
# Runs the scripts the release workflow (.github/workflows/release.yml) shares with CI on test
# inputs, so that CI proves the steps it cannot run itself:
#   scripts/check-release-version.sh  on this repository and on altered copies of its files,
#   scripts/krew-archive.sh           on a stand-in binary, for each supported platform,
#   scripts/krew-manifest.sh          on those archives (and on missing, extra and bad ones).
# Needs no network and no build. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/release-scripts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
checks=0
ok() { checks=$((checks + 1)); }
fail() { echo "error: $*" >&2; exit 1; }
# Runs a command that must fail; its error message is kept in $tmp/err.
must_fail() {
    if "$@" >"$tmp/out" 2>"$tmp/err"; then fail "succeeded, should have failed: $*"; fi
    ok
}

# --- scripts/check-release-version.sh
version=$(bash scripts/check-release-version.sh)
[ "$(bash scripts/check-release-version.sh "v$version")" = "$version" ] || fail "v$version not accepted"
ok
tag=v$version
must_fail bash scripts/check-release-version.sh "$version"          # no v
must_fail bash scripts/check-release-version.sh "v$version.1"       # another version
must_fail bash scripts/check-release-version.sh "v9$version"
grep -q "does not name the version" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
# Copies of the three declarations, each altered in turn.
fixture() {
    rm -rf "$tmp/repo"
    mkdir -p "$tmp/repo/charts/crd-audit"
    cp Cargo.toml "$tmp/repo/"
    cp charts/crd-audit/Chart.yaml "$tmp/repo/charts/crd-audit/"
}
fixture
[ "$(bash scripts/check-release-version.sh "$tag" "$tmp/repo")" = "$version" ] || fail "the copy is not $version"
ok
sed -i "s/^appVersion:.*/appVersion: \"$version-other\"/" "$tmp/repo/charts/crd-audit/Chart.yaml"
must_fail bash scripts/check-release-version.sh "" "$tmp/repo"
grep -q "appVersion $version-other" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
fixture
sed -i "s/^version:.*/version: $version-other/" "$tmp/repo/charts/crd-audit/Chart.yaml"
must_fail bash scripts/check-release-version.sh "$tag" "$tmp/repo"
fixture
sed -i "0,/^version = .*/s//version = \"$version-other\"/" "$tmp/repo/Cargo.toml"
must_fail bash scripts/check-release-version.sh "$tag" "$tmp/repo"
# Only [package]'s version counts, wherever the table is.
fixture
{ echo '[workspace.package]'; echo 'version = "0.0.0-not-this"'; cat Cargo.toml; } >"$tmp/repo/Cargo.toml.new"
mv "$tmp/repo/Cargo.toml.new" "$tmp/repo/Cargo.toml"
[ "$(bash scripts/check-release-version.sh "$tag" "$tmp/repo")" = "$version" ] || fail "[package] version not found"
ok
echo "ok: check-release-version.sh"

# --- scripts/krew-archive.sh, one archive per platform of scripts/build-static.sh
mapfile -t platforms < <(bash scripts/build-static.sh --list-targets | cut -d' ' -f2)
[ "${#platforms[@]}" -ge 2 ] || fail "build-static.sh --list-targets lists ${#platforms[@]} platforms"
for platform in "${platforms[@]}"; do
    # A stand-in binary of its own per platform: a digest swapped between platforms shows.
    printf '#!/bin/sh\necho "stand-in for crd-audit on %s"\n' "$platform" >"$tmp/bin"
    chmod +x "$tmp/bin"
    archive=$(bash scripts/krew-archive.sh "$tmp/bin" "$platform" "$tag" "$tmp/dist")
    [ "$archive" = "$tmp/dist/kubectl-crd_audit-$tag-${platform/\//-}.tar.gz" ] || fail "archive named $archive"
    [ "$(tar -tzf "$archive" | sort | tr '\n' ' ')" = "LICENSE kubectl-crd_audit " ] || fail "$archive holds $(tar -tzf "$archive")"
    [[ $(tar -tvzf "$archive" kubectl-crd_audit) == "-rwxr-xr-x 0/0 "* ]] || fail "binary mode or owner: $(tar -tvzf "$archive")"
    tar -xzOf "$archive" LICENSE | cmp -s - LICENSE || fail "$archive: LICENSE differs"
    # The same inputs give the same bytes.
    again=$(bash scripts/krew-archive.sh "$tmp/bin" "$platform" "$tag" "$tmp/again")
    cmp -s "$archive" "$again" || fail "$archive is not reproducible"
    ok
done
must_fail bash scripts/krew-archive.sh "$tmp/missing" linux/amd64 "$tag" "$tmp/x"
must_fail bash scripts/krew-archive.sh "$tmp/bin" amd64 "$tag" "$tmp/x"
echo "ok: krew-archive.sh (${platforms[*]})"

# --- scripts/krew-manifest.sh on those archives
base=https://example.invalid/releases/download
KREW_BASE_URL=$base bash scripts/krew-manifest.sh "$tag" "$tmp/dist" >"$tmp/manifest.yaml"
grep -q "^  version: $tag\$" "$tmp/manifest.yaml" || fail "spec.version is not $tag"
! grep -q '0000000000000000' "$tmp/manifest.yaml" || fail "a zero digest is left"
for platform in "${platforms[@]}"; do
    name="kubectl-crd_audit-$tag-${platform/\//-}.tar.gz"
    sum=$(sha256sum "$tmp/dist/$name" | cut -d' ' -f1)
    # The platform's entry: its arch label, then its uri and sha256.
    entry=$(awk -v arch="${platform#*/}" '/- selector:/ { p = 0 } $1 == "arch:" && $2 == arch { p = 1 } p' "$tmp/manifest.yaml")
    grep -qx "      uri: $base/$tag/$name" <<<"$entry" || fail "$platform: uri: $entry"
    grep -qx "      sha256: \"$sum\"" <<<"$entry" || fail "$platform: sha256: $entry"
    ok
done
# Nothing else changes: only spec.version and each platform's uri and sha256 lines.
diff plugins/krew/crd-audit.yaml "$tmp/manifest.yaml" >"$tmp/diff" || true
if grep '^[<>]' "$tmp/diff" | grep -vqE '^[<>] +(version|uri|sha256): '; then
    fail "other lines changed: $(cat "$tmp/diff")"
fi
[ "$(grep -c '^> *sha256: ' "$tmp/diff")" = "${#platforms[@]}" ] || fail "not every sha256 filled: $(cat "$tmp/diff")"
ok
# The version of another tag is written too.
mkdir "$tmp/other"
for f in "$tmp/dist/"*.tar.gz; do cp "$f" "$tmp/other/${f##*/}"; done
(cd "$tmp/other" && for f in *; do mv "$f" "${f/-$tag-/-v99.0.0-}"; done)
bash scripts/krew-manifest.sh v99.0.0 "$tmp/other" | grep -q '^  version: v99.0.0$' || fail "spec.version not set"
ok
# A platform without its archive.
mkdir "$tmp/short"
cp "$tmp/dist/kubectl-crd_audit-$tag-${platforms[0]/\//-}.tar.gz" "$tmp/short/"
must_fail bash scripts/krew-manifest.sh "$tag" "$tmp/short"
grep -q "no archive for platform ${platforms[1]}" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
# An archive of a platform the manifest lacks.
cp "$tmp/dist/"*.tar.gz "$tmp/short/"
cp "$tmp/dist/kubectl-crd_audit-$tag-${platforms[0]/\//-}.tar.gz" "$tmp/short/kubectl-crd_audit-$tag-linux-s390x.tar.gz"
must_fail bash scripts/krew-manifest.sh "$tag" "$tmp/short"
grep -q "is no platform of" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
# An archive without the binary.
rm "$tmp/short/kubectl-crd_audit-$tag-linux-s390x.tar.gz"
tar -C "$(dirname "$0")/.." -czf "$tmp/short/kubectl-crd_audit-$tag-${platforms[0]/\//-}.tar.gz" LICENSE
must_fail bash scripts/krew-manifest.sh "$tag" "$tmp/short"
grep -q "holds no kubectl-crd_audit" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
# Archives of another tag only.
must_fail bash scripts/krew-manifest.sh "v$version.9" "$tmp/dist"
echo "ok: krew-manifest.sh"
echo "release scripts: $checks checks ok"
