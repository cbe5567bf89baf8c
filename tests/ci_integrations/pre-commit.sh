#!/usr/bin/env bash
# The pre-commit hooks (.pre-commit-hooks.yaml) run by pre-commit itself
# (scripts/install-pre-commit.sh installs the pinned PyPI package): `pre-commit try-repo
# HOOKS-REPO HOOK --files ...` in a scratch repository, with crd-audit on PATH. The hooks'
# repository is a scratch copy of this one's hook files, committed (try-repo clones a
# repository; this one's hook files may not be committed yet).
#   crd-audit-diff: a staged tightening fails naming the change; a loosening passes; a CRD
#     taken out of a multi-document file fails; a new file passes; a renamed file is
#     compared with its source.
#   crd-audit-check: a non-structural CRD fails naming the file; a good one passes, also
#     beside documents that are no CRDs; files without CRDs, and Helm templates, pass.
#   Without crd-audit both fail, saying how to install it.
# shellcheck disable=SC2317 # functions called through checks
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/ci_integrations/common.sh
. "$here/common.sh"

command -v python3 >/dev/null || missing_tool "python3 is not installed" skip
if ! PRE_COMMIT=$(bash "$ROOT/scripts/install-pre-commit.sh" 2>"$SCRATCH/install.err"); then
    missing_tool "pre-commit could not be installed (scripts/install-pre-commit.sh): $(cat "$SCRATCH/install.err")" skip
fi
export PRE_COMMIT_HOME=$SCRATCH/pre-commit-home PRE_COMMIT_COLOR=never

# The hooks' repository.
hooks=$SCRATCH/hooks
scratch_repo "$hooks"
mkdir -p "$hooks/scripts"
cp "$ROOT/.pre-commit-hooks.yaml" "$hooks/"
cp -R "$ROOT/scripts/ci" "$hooks/scripts/ci"
commit_all "$hooks" hooks

# crd-audit on PATH, as a user has it (and not through CRD_AUDIT).
mkdir -p "$SCRATCH/bin"
ln -s "$CRD_AUDIT" "$SCRATCH/bin/crd-audit"
BINARY=$CRD_AUDIT
unset CRD_AUDIT
export PATH="$SCRATCH/bin:$PATH"

try() { # HOOK FILE...
    local hook=$1
    shift
    "$PRE_COMMIT" try-repo "$hooks" "$hook" --files "$@"
}

gizmos() { # MAXIMUM [REQUIRED]
    cat <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.ci.example.com
spec:
  group: ci.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            ${2:+required: [$2]}
            properties:
              replicas: {type: integer, minimum: 0, maximum: $1}
              owner: {type: string}
EOF
}

widgets_and_namespace() {
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: ci}\n---\n'
    cat "$ROOT/examples/crds/widgets.yaml"
}

user=$SCRATCH/user
scratch_repo "$user"
cd "$user"
mkdir -p crds
gizmos 10 >crds/gizmos.yaml
widgets_and_namespace >crds/bundle.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: a}\n' >config.yaml
commit_all "$user" base

# ---- crd-audit-diff
gizmos 5 owner >crds/gizmos.yaml
git add crds/gizmos.yaml
expect_status 1 "crd-audit-diff: a staged tightening fails" try crd-audit-diff crds/gizmos.yaml
has "$SCRATCH/last.out" 'crd-audit-diff: crds/gizmos\.yaml: gizmos\.ci\.example\.com tightens' "crd-audit-diff: names the file and the CRD"
has "$SCRATCH/last.out" 'maximum lowered from 10 to 5' "crd-audit-diff: names the change"
has "$SCRATCH/last.out" 'SKIP=crd-audit-diff' "crd-audit-diff: says how to commit it on purpose"
lacks "$SCRATCH/last.out" 'crd-audit-diff\.[A-Za-z0-9]{6}' "crd-audit-diff: no temporary path"
git reset -q --hard

gizmos 20 >crds/gizmos.yaml
git add crds/gizmos.yaml
expect_status 0 "crd-audit-diff: a staged loosening passes" try crd-audit-diff crds/gizmos.yaml
git reset -q --hard

# The widgets CRD of a file with a Namespace: its bundled next revision tightens it.
{
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: ci}\n---\n'
    cat "$ROOT/examples/revisions/widgets-v2.yaml"
} >crds/bundle.yaml
git add crds/bundle.yaml
expect_status 1 "crd-audit-diff: a tightening in a multi-document file fails" try crd-audit-diff crds/bundle.yaml
has "$SCRATCH/last.out" 'crds/bundle\.yaml: widgets\.example\.crd-audit\.dev tightens' "crd-audit-diff: names the CRD of the multi-document file"
git reset -q --hard

printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: ci}\n' >crds/bundle.yaml
git add crds/bundle.yaml
expect_status 1 "crd-audit-diff: a CRD taken out of its file fails" try crd-audit-diff crds/bundle.yaml
has "$SCRATCH/last.out" 'the CRD widgets\.example\.crd-audit\.dev of HEAD.s crds/bundle\.yaml is gone' "crd-audit-diff: says the CRD is gone"
git reset -q --hard

mkdir -p deploy
git mv crds/gizmos.yaml deploy/gizmos.yaml
gizmos 3 >deploy/gizmos.yaml
git add deploy/gizmos.yaml
expect_status 1 "crd-audit-diff: a renamed file is compared with its source" try crd-audit-diff deploy/gizmos.yaml
has "$SCRATCH/last.out" 'deploy/gizmos\.yaml: gizmos\.ci\.example\.com tightens' "crd-audit-diff: the renamed file's change"
git reset -q --hard

gizmos 3 >crds/new.yaml
sed -i 's/gizmos/newgizmos/g; s/Gizmo/NewGizmo/g; s/gizmo/newgizmo/g' crds/new.yaml
git add crds/new.yaml
expect_status 0 "crd-audit-diff: a new file passes" try crd-audit-diff crds/new.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: b}\n' >config.yaml
git add config.yaml
expect_status 0 "crd-audit-diff: a file without CRDs passes" try crd-audit-diff config.yaml
git reset -q --hard
git clean -q -fd

# ---- crd-audit-check
cp "$ROOT/examples/crds/gadgets-legacy.yaml" crds/legacy.yaml
git add crds/legacy.yaml
expect_status 1 "crd-audit-check: a CRD with findings fails" try crd-audit-check crds/legacy.yaml
has "$SCRATCH/last.out" 'crds/legacy\.yaml' "crd-audit-check: names the file"
git reset -q --hard
git clean -q -fd

cat >"crds/non structural.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: brokens.ci.example.com}
spec:
  group: ci.example.com
  scope: Namespaced
  names: {plural: brokens, singular: broken, kind: Broken, listKind: BrokenList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              notype: {description: a property without a type}
EOF
git add "crds/non structural.yaml"
expect_status 1 "crd-audit-check: a non-structural CRD fails" try crd-audit-check "crds/non structural.yaml"
has "$SCRATCH/last.out" 'crds/non structural\.yaml' "crd-audit-check: names the file (a path with a space)"
has "$SCRATCH/last.out" '[Tt]ype: Required value' "crd-audit-check: says what is missing"
git reset -q --hard
git clean -q -fd

gizmos 3 >crds/good.yaml
sed -i 's/gizmos/goods/g; s/Gizmo/Good/g; s/gizmo/good/g' crds/good.yaml
git add crds/good.yaml
expect_status 0 "crd-audit-check: a good CRD passes" try crd-audit-check crds/good.yaml
expect_status 0 "crd-audit-check: a good CRD beside a Namespace passes" try crd-audit-check crds/bundle.yaml
expect_status 0 "crd-audit-check: a file without CRDs passes" try crd-audit-check config.yaml
mkdir -p chart/templates
{ echo '{{- if .Values.crds }}'; gizmos 3; echo '{{- end }}'; } >chart/templates/crds.yaml
git add chart/templates/crds.yaml
expect_status 0 "crd-audit-check: a Helm template of a CRD is passed over" try crd-audit-check chart/templates/crds.yaml
{
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: ci}\n---\n'
    cat "$ROOT/examples/crds/gadgets-legacy.yaml"
} >crds/mixed.yaml
git add crds/mixed.yaml
expect_status 1 "crd-audit-check: findings in a multi-document file fail" try crd-audit-check crds/mixed.yaml
has "$SCRATCH/last.out" 'crds/mixed\.yaml' "crd-audit-check: names the multi-document file"
lacks "$SCRATCH/last.out" 'crd-audit-check\.[A-Za-z0-9]{6}|/doc-[0-9]' "crd-audit-check: no temporary path"
git reset -q --hard
git clean -q -fd

# ---- Without crd-audit.
rm "$SCRATCH/bin/crd-audit"
gizmos 5 >crds/gizmos.yaml
git add crds/gizmos.yaml
expect_status 1 "crd-audit-diff without crd-audit fails" try crd-audit-diff crds/gizmos.yaml
has "$SCRATCH/last.out" 'crd-audit is not installed.*releases' "crd-audit-diff without crd-audit: says how to install it"
expect_status 1 "crd-audit-check without crd-audit fails" try crd-audit-check crds/gizmos.yaml
has "$SCRATCH/last.out" 'crd-audit is not installed' "crd-audit-check without crd-audit: says so"
CRD_AUDIT=$BINARY expect_status 1 "crd-audit-diff with CRD_AUDIT naming the binary" try crd-audit-diff crds/gizmos.yaml
has "$SCRATCH/last.out" 'gizmos\.ci\.example\.com tightens' "crd-audit-diff with CRD_AUDIT: runs it"
git reset -q --hard

finish
