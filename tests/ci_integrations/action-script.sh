#!/usr/bin/env bash
# scripts/ci/crd-changes.sh (the logic of action.yml) on a scratch git repository: a base
# commit on main and branches that change its CRDs. The main branch's change tightens a CRD
# (a lower maximum, a new required field) whose example objects then become invalid, loosens
# a CRD that shares its file with another CRD and a Namespace, adds a CRD in a directory
# whose name has a space, deletes one, renames a file, and changes a ConfigMap. Checked: the
# summary (its table, crd-audit's Markdown sections, its bound), $GITHUB_OUTPUT,
# $GITHUB_STEP_SUMMARY, the SARIF logs (JSON, one run per command, paths of the repository,
# line numbers of the real file for a CRD split out of a multi-document file), annotations,
# and the exit status for each fail-on; other branches: a loosening alone (and a JSON CRD), a
# removal alone, a CRD taken out of its file, a new non-structural CRD, an unreadable CRD, a
# Helm template of a CRD, no CRD change; a pull request's shallow merge-commit checkout; the
# steps of action.yml run as a runner would (tests/ci_integrations/run_action.py).
# shellcheck disable=SC2016,SC2317 # backquotes are Markdown; functions are called through checks
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/ci_integrations/common.sh
. "$here/common.sh"

command -v python3 >/dev/null || missing_tool "python3 is not installed" skip
SCRIPT=$ROOT/scripts/ci/crd-changes.sh

# A CRD of group ci.example.com: crd PLURAL KIND PROPERTIES [REQUIRED]; PROPERTIES are the
# lines of spec's properties (indented by 14 spaces).
crd() {
    local plural=$1 kind=$2 props=$3 required=${4:-}
    cat <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $plural.ci.example.com
spec:
  group: ci.example.com
  scope: Namespaced
  names: {plural: $plural, singular: ${plural%s}, kind: $kind, listKind: ${kind}List}
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
EOF
    if [ -n "$required" ]; then echo "            required: [$required]"; fi
    echo "            properties:"
    printf '%s\n' "$props"
}

namespace() {
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ci\n  labels: {team: %s}\n' "$1"
}

repo=$SCRATCH/repo
scratch_repo "$repo"
cd "$repo"
mkdir -p crds "crds/old stuff" app samples crds/json
crd gizmos Gizmo "              replicas: {type: integer, minimum: 0, maximum: 10}
              owner: {type: string}" >crds/gizmos.yaml
{
    namespace blue
    echo "---"
    crd doohickeys Doohickey "              color: {type: string, enum: [red, blue]}"
    echo "---"
    crd thingamajigs Thingamajig "              size: {type: integer}"
} >crds/bundle.yaml
crd retireds Retired "              x: {type: string}" >"crds/old stuff/retired.yaml"
crd movers Mover "              speed: {type: integer}" >crds/movers.yaml
printf '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "jsons.ci.example.com"},
 "spec": {"group": "ci.example.com", "scope": "Cluster",
  "names": {"plural": "jsons", "singular": "json", "kind": "Json", "listKind": "JsonList"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
    "properties": {"level": {"type": "integer", "maximum": %s}}}}}}}]}}\n' 3 >crds/json/jsons.json
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: a}\n' >app/config.yaml
cat >samples/gizmos.yaml <<'EOF'
apiVersion: ci.example.com/v1
kind: Gizmo
metadata: {name: small, namespace: ci}
spec: {replicas: 2, owner: ann}
---
apiVersion: ci.example.com/v1
kind: Gizmo
metadata: {name: large, namespace: ci}
spec: {replicas: 8, owner: bob}
---
apiVersion: ci.example.com/v1
kind: Gizmo
metadata: {name: ownerless, namespace: ci}
spec: {replicas: 1}
EOF
cat >samples/doohickeys.yaml <<'EOF'
apiVersion: ci.example.com/v1
kind: Doohickey
metadata: {name: red-one, namespace: ci}
spec: {color: red}
EOF
commit_all "$repo" base

# ---- The main change.
git checkout -q -b change
crd gizmos Gizmo "              replicas: {type: integer, minimum: 0, maximum: 5}
              owner: {type: string}" owner >crds/gizmos.yaml
{
    namespace green
    echo "---"
    crd doohickeys Doohickey "              color: {type: string, enum: [red, blue, green]}"
    echo "---"
    crd thingamajigs Thingamajig "              size: {type: integer}"
} >crds/bundle.yaml
git rm -q -r "crds/old stuff"
mkdir -p crds/renamed "crds/new crds"
git mv crds/movers.yaml crds/renamed/movers.yaml
crd sprockets Sprocket "              teeth: {type: integer, minimum: 3}" >"crds/new crds/sprockets.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: b}\n' >app/config.yaml
commit_all "$repo" change

out=$SCRATCH/out
run() { # FAIL-ON [more options]: the script on this repository against main
    local fail_on=$1
    shift
    : >"$SCRATCH/github-output"
    : >"$SCRATCH/step-summary"
    GITHUB_OUTPUT=$SCRATCH/github-output GITHUB_STEP_SUMMARY=$SCRATCH/step-summary \
        bash "$SCRIPT" --base main --output-dir "$out" --fail-on "$fail_on" "$@"
}
output() { # NAME: a value of $GITHUB_OUTPUT (either form)
    python3 - "$SCRATCH/github-output" "$1" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
name, i = sys.argv[2], 0
while i < len(lines):
    line = lines[i]
    if line.startswith(name + "="):
        print(line[len(name) + 1:]); break
    if line.startswith(name + "<<"):
        delim, value = line[len(name) + 2:], []
        i += 1
        while lines[i] != delim:
            value.append(lines[i]); i += 1
        print("\n".join(value)); break
    i += 1
PY
}
is_output() { # NAME VALUE
    local got
    got=$(output "$1")
    if [ "$got" = "$2" ]; then pass "output $1=$2"; else fail "output $1 is '$got', expected '$2'"; fi
}

expect_status 1 "fail-on tightening, a tightening change with objects made invalid" \
    run tightening --objects samples
cp "$SCRATCH/last.out" "$SCRATCH/main-run.out"
summary=$out/summary.md
is_output tightened true
is_output stranded 2
is_output changed 2
is_output added 1
is_output removed 1
is_output errors 0
is_output summary-file "$summary"
is_output sarif-dir "$out/sarif"
is_output sarif-file "$out/sarif/crd-audit.sarif"
stuck=$(output stuck)
check "output stuck is a count of at most 2 ($stuck)" test "${stuck:-none}" -le 2
check "\$GITHUB_STEP_SUMMARY holds the summary" cmp -s "$summary" "$SCRATCH/step-summary"

has "$summary" '^## crd-audit: CRD changes' "summary: its heading"
has "$summary" '^\| `gizmos\.ci\.example\.com` \| `crds/gizmos\.yaml` \| modified \| \*\*[0-9]+ tightening\*\*.*\*\*2 of 3 objects become invalid\*\*' \
    "summary: gizmos tightens, 2 of its 3 objects become invalid"
has "$summary" '^\| `doohickeys\.ci\.example\.com` \| `crds/bundle\.yaml` \| modified \| 0 tightening, [1-9][0-9]* loosening.*no object becomes invalid \(1 judged\)' \
    "summary: doohickeys (split out of a file with another CRD and a Namespace) loosens"
lacks "$summary" 'thingamajigs' "summary: the unchanged CRD of that file is not listed"
has "$summary" '^\| `sprockets\.ci\.example\.com` \| `crds/new crds/sprockets\.yaml` \| added \| checked: no findings' \
    "summary: the new CRD (a path with a space) is checked"
has "$summary" '^\| `retireds\.ci\.example\.com` \| `crds/old stuff/retired\.yaml` \| \*\*removed\*\* \| `crds/old stuff/retired\.yaml` deleted' \
    "summary: the deleted CRD file is said"
has "$summary" '^\| `movers\.ci\.example\.com` \| `crds/renamed/movers\.yaml` \(moved from `crds/movers\.yaml`\) \| moved \| unchanged' \
    "summary: the renamed file"
lacks "$summary" 'app/config\.yaml|ConfigMap' "summary: the ConfigMap change is no CRD change"
lacks "$summary" 'crd-changes\.[A-Za-z0-9]{6}|/docs/doc-[0-9]' "summary: no temporary path"
if has_markdown; then
    has "$summary" '^#{1,6} .*gizmos\.ci\.example\.com' "summary: crd-audit's Markdown section (a heading) for gizmos"
    has "$summary" '\blarge\b' "summary: names the object 'large'"
    has "$summary" '\bownerless\b' "summary: names the object 'ownerless'"
    has "$summary" '^#{1,6} .*doohickeys\.ci\.example\.com' "summary: crd-audit's Markdown section for doohickeys"
else
    echo "NOTICE: $CRD_AUDIT has no -o markdown yet: the summary holds its text output"
    has "$summary" '^### `gizmos\.ci\.example\.com`: schema changes' "summary: gizmos' changes (text)"
    has "$summary" '\blarge\b' "summary: names the object 'large'"
    has "$summary" '\bownerless\b' "summary: names the object 'ownerless'"
fi
has "$SCRATCH/main-run.out" '^gizmos\.ci\.example\.com \(crds/gizmos\.yaml\): [0-9]+ tightening' "the log says each CRD"
has "$SCRATCH/main-run.out" 'the change fails \(fail-on: tightening\)' "the log says why the change fails"

# The SARIF log and its parts.
rc=0
python3 - "$out" "$repo" >"$SCRATCH/sarif.out" 2>&1 <<'PY' || rc=$?
import glob, json, os, sys
out, repo = sys.argv[1], sys.argv[2]
problems = []
log = json.load(open(os.path.join(out, "sarif", "crd-audit.sarif")))
assert log["version"] == "2.1.0", "version"
ids = [r.get("automationDetails", {}).get("id") for r in log["runs"]]
if sorted(ids) != ["crd-audit-check/", "crd-audit-diff/", "crd-audit-plan/"]:
    problems.append(f"runs: {ids}")
if len(set(ids)) != len(ids):
    problems.append("two runs of one category")
parts = sorted(glob.glob(os.path.join(out, "sarif-parts", "*.sarif")))
kinds = sorted(os.path.basename(p).split("-", 1)[1] for p in parts)
if kinds != ["check.sarif", "diff.sarif", "diff.sarif", "plan.sarif", "plan.sarif"]:
    problems.append(f"parts: {kinds}")
for p in parts:
    json.load(open(p))
uris = set()
for run in log["runs"]:
    rules = run["tool"]["driver"]["rules"]
    for res in run["results"]:
        if "ruleIndex" in res and rules[res["ruleIndex"]]["id"] != res["ruleId"]:
            problems.append(f"ruleIndex of {res['ruleId']} names {rules[res['ruleIndex']]['id']}")
        for loc in res.get("locations", []):
            art = loc.get("physicalLocation", {}).get("artifactLocation", {})
            if "uri" in art:
                uris.add(art["uri"])
diff = next(r for r in log["runs"] if r["automationDetails"]["id"] == "crd-audit-diff/")
plan = next(r for r in log["runs"] if r["automationDetails"]["id"] == "crd-audit-plan/")
diff_uris = {l["physicalLocation"]["artifactLocation"]["uri"] for r in diff["results"] for l in r["locations"]}
if diff_uris != {"crds/gizmos.yaml", "crds/bundle.yaml"}:
    problems.append(f"diff result files: {diff_uris}")
plan_uris = {l["physicalLocation"]["artifactLocation"]["uri"] for r in plan["results"] for l in r["locations"] if "physicalLocation" in l}
if plan_uris != {"samples/gizmos.yaml"}:
    problems.append(f"plan result files: {plan_uris}")
for u in uris:
    if u.startswith("file:") or "crd-changes." in u:
        problems.append(f"a temporary or absolute path: {u}")
# The doohickeys CRD, split out of crds/bundle.yaml, stands at its own lines of that file.
lines = open(os.path.join(repo, "crds", "bundle.yaml")).read().split("\n")
start = next(i for i, l in enumerate(lines) if "name: doohickeys." in l) + 1
end = next(i for i, l in enumerate(lines) if "name: thingamajigs." in l) + 1
for r in diff["results"]:
    loc = r["locations"][0]["physicalLocation"]
    if loc["artifactLocation"]["uri"] == "crds/bundle.yaml":
        line = loc.get("region", {}).get("startLine", 0)
        if not start <= line < end:
            problems.append(f"a doohickeys change at line {line}, not within its document ({start}..{end})")
        print("doohickeys change at line", line, lines[line - 1].strip())
# Fingerprints of a split CRD name the repository's file, not the temporary copy.
for r in diff["results"]:
    fp = r.get("partialFingerprints", {}).get("primaryLocationLineHash", "")
    if not fp or ":" not in fp:
        problems.append(f"fingerprint {fp!r}")
print("\n".join(problems) if problems else "sarif ok")
sys.exit(1 if problems else 0)
PY
if [ "$rc" = 0 ]; then pass "the SARIF log: one run per command, repository paths, lines of the real file"; else fail "the SARIF log:"; sed 's/^/    /' "$SCRATCH/sarif.out"; fi

# Stable fingerprints: a second run (another temporary directory) writes the same ones.
fingerprints() {
    python3 -c 'import json,sys; print(sorted(r.get("partialFingerprints",{}).get("primaryLocationLineHash") for run in json.load(open(sys.argv[1]))["runs"] for r in run["results"]))' "$out/sarif/crd-audit.sarif"
}
first=$(fingerprints)
expect_status 1 "fail-on invalid: objects become invalid" run invalid --objects samples
check "fingerprints are the same in another run" [ "$first" = "$(fingerprints)" ]
expect_status 0 "fail-on never" run never --objects samples
is_output tightened true

# Before 1.30 there is no validation ratcheting: every object made invalid is stuck.
expect_status 1 "--kubernetes-version 1.29" run tightening --objects samples --kubernetes-version 1.29
is_output stuck 2
has "$summary" '^\| `gizmos\.ci\.example\.com` .*\*\*2 of 3 objects become invalid\*\* \(2 stuck\)' "the summary counts the stuck objects"
if has_markdown; then
    has "$summary" '^\|.*\blarge\b.*\|' "summary: a table row of crd-audit's Markdown names the stuck object 'large'"
    has "$summary" '^\|.*\bownerless\b.*\|' "summary: a table row names the stuck object 'ownerless'"
fi

# The worst first: the table's rows and the sections.
expect_status 1 "fail-on tightening again" run tightening --objects samples
check "the tightened CRD comes first in the table" \
    test "$(grep -m1 -n 'gizmos' "$summary" | cut -d: -f1)" -lt "$(grep -m1 -n 'doohickeys' "$summary" | cut -d: -f1)"
check "its section comes first" \
    test "$(grep -m1 -n '^#.*gizmos' "$summary" | cut -d: -f1)" -lt "$(grep -m1 -n '^#.*doohickeys' "$summary" | cut -d: -f1)"

# Annotations in a GitHub Actions run.
GITHUB_ACTIONS=true expect_status 1 "annotations" run tightening --objects samples
has "$SCRATCH/last.out" '^::warning file=crds/gizmos\.yaml,title=crd-audit::gizmos\.ci\.example\.com tightens' "an annotation on the tightened CRD's file"
has "$SCRATCH/last.out" '^::error file=crds/gizmos\.yaml,title=crd-audit::gizmos\.ci\.example\.com: 2 of 3 example objects become invalid' "an annotation on the objects made invalid"

# Without objects nothing becomes invalid: `invalid` passes; the tightening still fails.
expect_status 0 "fail-on invalid without objects" run invalid
is_output stranded 0
expect_status 1 "fail-on tightening without objects" run tightening

# Only some paths.
expect_status 1 "--crd-paths" run tightening --crd-paths 'crds/gizmos*'
lacks "$summary" 'doohickeys|sprockets|retireds' "--crd-paths: only the CRDs of the files it names"
expect_status 0 "--crd-paths with a directory" run tightening --crd-paths 'crds/new crds/'
has "$summary" 'sprockets' "--crd-paths with a directory: its CRDs"
lacks "$summary" 'gizmos' "--crd-paths with a directory: no other"

# The environment variables the action sets, and a base given as a commit.
: >"$SCRATCH/github-output"
CRD_CHANGES_BASE=$(git rev-parse main) CRD_CHANGES_OBJECTS=$'samples/*.yaml\n# a comment\n' \
    CRD_CHANGES_OUTPUT_DIR=$out CRD_CHANGES_FAIL_ON=never GITHUB_OUTPUT=$SCRATCH/github-output \
    expect_status 0 "inputs from the environment" bash "$SCRIPT"
is_output stranded 2

# A bounded summary: sections that do not fit are left out, with a note. The bound: one
# byte less than the whole summary.
expect_status 1 "the whole summary" run tightening --objects samples
bound=$(($(wc -c <"$summary") - 1))
CRD_CHANGES_SUMMARY_LIMIT=$bound expect_status 1 "a summary bound of $bound bytes" run tightening --objects samples
size=$(wc -c <"$summary")
check "the summary holds at most $bound bytes ($size)" [ "$size" -le "$bound" ]
has "$summary" 'section\(s\) left out' "the summary says sections were left out"
check "every section stays in the output directory" [ "$(find "$out/sections" -name '*.md' | wc -l)" -ge 2 ]

# ---- A loosening alone (and a JSON CRD): nothing fails.
git checkout -q -b loosen main
{
    namespace blue
    echo "---"
    crd doohickeys Doohickey "              color: {type: string, enum: [red, blue, green]}"
    echo "---"
    crd thingamajigs Thingamajig "              size: {type: integer}"
} >crds/bundle.yaml
sed -i 's/"maximum": 3/"maximum": 30/' crds/json/jsons.json
commit_all "$repo" loosen
expect_status 0 "fail-on tightening, a loosening alone" run tightening --objects samples
is_output tightened false
is_output changed 2
has "$summary" '^\| `jsons\.ci\.example\.com` \| `crds/json/jsons\.json` \| modified \| 0 tightening, [1-9]' "a JSON CRD"

# ---- A removal alone: a tightening, no object invalid.
git checkout -q -b removal main
git rm -q "crds/old stuff/retired.yaml"
commit_all "$repo" removal
expect_status 1 "fail-on tightening, a CRD removed" run tightening
is_output tightened true
expect_status 0 "fail-on invalid, a CRD removed" run invalid

# ---- A CRD taken out of a multi-document file.
git checkout -q -b takeout main
{
    namespace blue
    echo "---"
    crd thingamajigs Thingamajig "              size: {type: integer}"
} >crds/bundle.yaml
commit_all "$repo" takeout
expect_status 1 "a CRD taken out of its file" run tightening
has "$summary" '^\| `doohickeys\.ci\.example\.com` \| `crds/bundle\.yaml` \| \*\*removed\*\* \| removed from `crds/bundle\.yaml`' "the summary says so"

# ---- A new CRD that is not structural: check findings fail `invalid` too.
git checkout -q -b nonstructural main
cat >crds/broken.yaml <<'EOF'
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
commit_all "$repo" nonstructural
expect_status 1 "fail-on invalid, a new non-structural CRD" run invalid
has "$summary" '^\| `brokens\.ci\.example\.com` \| `crds/broken\.yaml` \| added \| \*\*check findings\*\*' "the summary says the new CRD has findings"
has "$summary" 'crds/broken\.yaml' "the findings name the file"
expect_status 0 "fail-on never, a new non-structural CRD" run never

# ---- A document of kind CustomResourceDefinition crd-audit cannot read: an error.
git checkout -q -b unreadable main
printf 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bad.ci.example.com}\nspec: 5\n' >crds/bad.yaml
commit_all "$repo" unreadable
expect_status 2 "an unreadable CRD is an error, even with fail-on never" run never
has "$summary" 'crds/bad\.yaml.*cannot read' "the summary names the unreadable file"
is_output errors 1

# ---- Usage errors.
git checkout -q change
expect_status 2 "a base that does not exist" run tightening --base no-such-branch
expect_status 2 "a wrong fail-on" run sometimes
CRD_AUDIT=$SCRATCH/no-such-binary expect_status 2 "no crd-audit" run tightening
has "$SCRATCH/last.out" 'CRD_AUDIT=.* is not an executable crd-audit' "no crd-audit: said"
expect_status 2 "no base at all" env -u GITHUB_BASE_REF -u CRD_CHANGES_BASE -u CRD_CHANGES_EVENT_BEFORE \
    bash "$SCRIPT" --output-dir "$out"
has "$SCRATCH/last.out" 'no base revision' "no base: said"

# ---- A pull request as actions/checkout checks it out: its merge commit alone (depth 1),
# the base named by GITHUB_BASE_REF and fetched by the script (--fetch, as the action runs it).
git checkout -q -b pr-merge main
git merge -q --no-ff change -m "Merge change into main"
git clone -q --depth 1 --branch pr-merge "file://$repo" "$SCRATCH/shallow"
git checkout -q change
: >"$SCRATCH/github-output"
(cd "$SCRATCH/shallow" && GITHUB_BASE_REF=main GITHUB_OUTPUT=$SCRATCH/github-output \
    bash "$SCRIPT" --fetch --objects samples --output-dir "$out") >"$SCRATCH/shallow.out" 2>&1 && rc=0 || rc=$?
check "a shallow pull request checkout: exit 1 ($rc)" test "$rc" = 1
is_output stranded 2
is_output changed 2
lacks "$SCRATCH/shallow.out" 'no merge base' "the merge commit's first parent is the base: no notice"
check "the clone is still shallow" test "$(git -C "$SCRATCH/shallow" rev-parse --is-shallow-repository)" = true
# A base given by a name origin has (not a remote-tracking ref): fetched too.
git clone -q --depth 1 --branch pr-merge "file://$repo" "$SCRATCH/shallow2"
(cd "$SCRATCH/shallow2" && bash "$SCRIPT" --fetch --base main --output-dir "$out") >"$SCRATCH/shallow.out" 2>&1 && rc=0 || rc=$?
check "a shallow checkout, --base main fetched from origin: exit 1 ($rc)" test "$rc" = 1

# ---- action.yml's steps, as a runner runs them (tests/ci_integrations/run_action.py; the
# upload step, a `uses:`, is reached but not run).
if yaml_python; then
    runner=$SCRATCH/runner
    mkdir -p "$runner"
    action() { "$YAML_PYTHON" "$here/run_action.py" "$ROOT" "$repo" "$runner" binary="$CRD_AUDIT" base-ref=main "$@"; }
    expect_status 1 "the action's steps, fail-on tightening" action objects=samples
    has "$SCRATCH/last.out" '^tightened=true$' "the action's output tightened"
    has "$SCRATCH/last.out" '^stranded=2$' "the action's output stranded"
    has "$SCRATCH/last.out" "^summary-file=$runner/crd-audit-changes/summary\.md\$" "the action's output summary-file"
    has "$SCRATCH/last.out" "^sarif-file=$runner/crd-audit-changes/sarif/crd-audit\.sarif\$" "the action's output sarif-file"
    has "$SCRATCH/last.out" '^step 2 not run: uses github/codeql-action/upload-sarif@' "the SARIF upload comes before the verdict"
    has "$SCRATCH/last.out" 'the CRD changes fail \(fail-on: tightening\)' "the verdict says why"
    has "$runner/step-summary" '^## crd-audit: CRD changes' "the job summary"
    expect_status 0 "the action's steps, fail-on never" action objects=samples fail-on=never
    has "$SCRATCH/last.out" '^step 2 not run: uses' "fail-on never: the upload step is reached"
    expect_status 0 "the action's steps, upload-sarif false" action fail-on=never upload-sarif=false
    has "$SCRATCH/last.out" '^step 2 skipped' "upload-sarif false: no upload"
    expect_status 2 "the action's steps, a binary that does not exist" action binary=no-such-crd-audit
    has "$SCRATCH/last.out" "binary 'no-such-crd-audit' not found" "the install step says so"
    expect_status 2 "the action's steps, an error" action base-ref=no-such-branch
    has "$SCRATCH/last.out" 'could not judge the CRD changes \(status 2\)' "the verdict says the error"
else
    missing_tool "no Python with PyYAML to read action.yml ($(cat "$SCRATCH/yaml-python.err" 2>/dev/null))"
fi

# ---- No CRD changed.
git checkout -q -b nothing main
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: c}\n' >app/config.yaml
mkdir -p chart/templates
{
    echo '{{- if .Values.crds.install }}'
    crd templated Templated "              x: {type: string}"
    echo '{{- end }}'
} >chart/templates/crd.yaml
commit_all "$repo" nothing
expect_status 0 "no CRD changed (a Helm template of a CRD is left out)" run tightening --objects samples
has "$summary" '^No CRD changed\.' "the summary says no CRD changed"
has "$summary" '`chart/templates/crd\.yaml` \(line 1\): a CustomResourceDefinition with template directives' "the summary says the template is left out"
check "the SARIF log of no change is JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/sarif/crd-audit.sarif"

finish
