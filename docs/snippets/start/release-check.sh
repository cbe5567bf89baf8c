# needs: release
bash scripts/check-release-version.sh v0.1.0
git tag v0.1.0 && git push origin v0.1.0
