#!/usr/bin/env bash
# The files GitHub and pre-commit read, as they read them: action.yml (a composite action:
# its inputs, outputs, steps; actions pinned to commits; no expression inside a `run:`
# script, inputs reach them through `env`) and .pre-commit-hooks.yaml (the two hooks, their
# executable entries, the files they take), parsed with PyYAML (pre-commit's own, from the
# virtualenv scripts/install-pre-commit.sh makes, when python3 lacks it); actionlint on a
# workflow that uses the action with every input (it reads the action's metadata: an
# unknown input fails); shellcheck on the scripts and on the action's `run:` scripts.
# shellcheck disable=SC2016,SC2317 # scripts in single quotes; functions called through checks
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/ci_integrations/common.sh
. "$here/common.sh"

command -v python3 >/dev/null || missing_tool "python3 is not installed" skip
check "the Python helpers parse" python3 -c 'import ast, sys; [ast.parse(open(p).read()) for p in sys.argv[1:]]' "$ROOT/scripts/ci/crd_docs.py" "$ROOT/tests/ci_integrations/run_action.py"

if ! yaml_python; then
    missing_tool "no Python with PyYAML to read action.yml ($(cat "$SCRATCH/yaml-python.err" 2>/dev/null))"
else
    mkdir -p "$SCRATCH/runs"
    rc=0
    "$YAML_PYTHON" - "$ROOT" "$SCRATCH/runs" >"$SCRATCH/yaml.out" 2>&1 <<'PY' || rc=$?
import os, re, sys
import yaml
root, runs_dir = sys.argv[1], sys.argv[2]
problems = []
text = open(os.path.join(root, "action.yml")).read()
a = yaml.safe_load(text)
for key in ("name", "description", "branding", "inputs", "outputs", "runs"):
    if not a.get(key):
        problems.append(f"action.yml: no {key}")
b = a.get("branding") or {}
if not b.get("icon") or b.get("color") not in ("white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"):
    problems.append(f"action.yml: branding {b}")
inputs = a.get("inputs") or {}
for name in ("crd-paths", "objects", "base-ref", "fail-on", "version", "binary", "upload-sarif"):
    if name not in inputs:
        problems.append(f"action.yml: no input {name}")
for name, spec in inputs.items():
    if not (spec or {}).get("description"):
        problems.append(f"action.yml: input {name} has no description")
    if not isinstance((spec or {}).get("default", ""), str):
        problems.append(f"action.yml: input {name}'s default is no string")
if (inputs.get("fail-on") or {}).get("default") != "tightening":
    problems.append("action.yml: fail-on's default is not tightening")
if (inputs.get("upload-sarif") or {}).get("default") != "true":
    problems.append("action.yml: upload-sarif's default is not 'true'")
runs = a.get("runs") or {}
if runs.get("using") != "composite":
    problems.append("action.yml: not a composite action")
steps = runs.get("steps") or []
ids = {s.get("id") for s in steps if s.get("id")}
written = {"tightened", "stranded", "stuck", "changed", "added", "removed", "errors",
           "summary-file", "sarif-dir", "sarif-file", "status", "path"}
for k, s in enumerate(steps):
    if "run" in s:
        if s.get("shell") != "bash":
            problems.append(f"action.yml: step {k} runs without shell: bash")
        if "${{" in s["run"]:
            problems.append(f"action.yml: step {k}'s script holds an expression (pass it through env)")
        for script in re.findall(r'\$ACTION_PATH/([\w/.-]+)', s["run"]):
            if not os.path.isfile(os.path.join(root, script)):
                problems.append(f"action.yml: step {k} runs {script}, which does not exist")
        with open(os.path.join(runs_dir, f"step-{k}.sh"), "w") as f:
            f.write("#!/usr/bin/env bash\n" + s["run"])
    elif "uses" in s:
        if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", s["uses"]):
            problems.append(f"action.yml: {s['uses']} is not pinned to a commit")
    else:
        problems.append(f"action.yml: step {k} neither runs nor uses")
upload = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
if len(upload) != 1 or upload[0].get("continue-on-error") is not True:
    problems.append("action.yml: one upload-sarif step, with continue-on-error: true")
elif "inputs.upload-sarif" not in str(upload[0].get("if", "")):
    problems.append("action.yml: the upload-sarif step does not depend on the input upload-sarif")
for expr in re.findall(r"\$\{\{(.*?)\}\}", text):
    for name in re.findall(r"\binputs\.([\w-]+)", expr):
        if name not in inputs:
            problems.append(f"action.yml: ${{{{{expr}}}}} names no input")
    for step, out in re.findall(r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)", expr):
        if step not in ids:
            problems.append(f"action.yml: ${{{{{expr}}}}} names no step")
        if out not in written:
            problems.append(f"action.yml: ${{{{{expr}}}}} names an output no step writes")
for name, spec in (a.get("outputs") or {}).items():
    if not spec.get("description") or "steps.changes.outputs." + name not in spec.get("value", ""):
        problems.append(f"action.yml: output {name}")

hooks = yaml.safe_load(open(os.path.join(root, ".pre-commit-hooks.yaml")))
if sorted(h.get("id") for h in hooks) != ["crd-audit-check", "crd-audit-diff"]:
    problems.append(f".pre-commit-hooks.yaml: hooks {[h.get('id') for h in hooks]}")
for h in hooks:
    entry = os.path.join(root, h.get("entry", ""))
    if h.get("language") != "script":
        problems.append(f".pre-commit-hooks.yaml: {h.get('id')} is not language: script")
    if not (os.path.isfile(entry) and os.access(entry, os.X_OK)):
        problems.append(f".pre-commit-hooks.yaml: {h.get('id')}'s entry {h.get('entry')} is no executable file")
    files = re.compile(h.get("files", ""))
    for name, want in (("a/b.yaml", True), ("b.yml", True), ("c.json", True), ("d.txt", False), ("e.yaml.bak", False)):
        if bool(files.search(name)) != want:
            problems.append(f".pre-commit-hooks.yaml: {h.get('id')} files {'misses' if want else 'takes'} {name}")
    if not h.get("name") or not h.get("description"):
        problems.append(f".pre-commit-hooks.yaml: {h.get('id')} lacks a name or description")
print("\n".join(problems) if problems else "ok")
sys.exit(1 if problems else 0)
PY
    if [ "$rc" = 0 ]; then
        pass "action.yml and .pre-commit-hooks.yaml, as YAML"
    else
        fail "action.yml and .pre-commit-hooks.yaml:"
        sed 's/^/    /' "$SCRATCH/yaml.out"
    fi
fi

# The shell scripts, with shellcheck.
if command -v shellcheck >/dev/null; then
    # From the repository's root: `# shellcheck source=` names paths from there.
    check "shellcheck: the scripts" bash -c 'cd "$1" && shellcheck -x scripts/ci/*.sh scripts/install-pre-commit.sh tests/ci_integrations/*.sh' _ "$ROOT"
    shopt -s nullglob
    runs=("$SCRATCH"/runs/*.sh)
    shopt -u nullglob
    if [ ${#runs[@]} -gt 0 ]; then
        check "shellcheck: the action's run: scripts" shellcheck -s bash "${runs[@]}"
    fi
else
    missing_tool "shellcheck is not installed (Debian's shellcheck; scripts/install-actionlint.sh installs it as root)"
fi

# actionlint, on a workflow that uses the action.
if actionlint=$(bash "$ROOT/scripts/install-actionlint.sh" 2>"$SCRATCH/actionlint.err"); then
    wf=$SCRATCH/workflow
    scratch_repo "$wf"
    cp "$ROOT/action.yml" "$wf/"
    mkdir -p "$wf/.github/workflows"
    cat >"$wf/.github/workflows/crds.yml" <<'EOF'
name: crds
on: [pull_request, push]
permissions:
  contents: read
  security-events: write
jobs:
  crds:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          fetch-depth: 0
          persist-credentials: false
      - id: audit
        uses: ./
        with:
          crd-paths: |
            config/crd/**
            charts/*/crds/
          objects: config/samples
          base-ref: ""
          fail-on: invalid
          version: v0.1.0
          binary: ""
          kubernetes-version: "1.33"
          upload-sarif: "false"
      - if: always()
        env:
          TIGHTENED: ${{ steps.audit.outputs.tightened }}
          STRANDED: ${{ steps.audit.outputs.stranded }}
          STUCK: ${{ steps.audit.outputs.stuck }}
          SUMMARY: ${{ steps.audit.outputs.summary-file }}
          SARIF: ${{ steps.audit.outputs.sarif-dir }}
          SARIF_FILE: ${{ steps.audit.outputs.sarif-file }}
        run: echo "$TIGHTENED $STRANDED $STUCK $SUMMARY $SARIF $SARIF_FILE"
EOF
    commit_all "$wf" workflow
    if (cd "$wf" && "$actionlint" -no-color .github/workflows/crds.yml) >"$SCRATCH/actionlint.out" 2>&1; then
        pass "actionlint: a workflow using the action with every input"
    else
        fail "actionlint: a workflow using the action"
        sed 's/^/    /' "$SCRATCH/actionlint.out"
    fi
    # It did read the action: an input the action lacks fails.
    sed -i 's/^          fail-on: invalid$/          fail-when: invalid/' "$wf/.github/workflows/crds.yml"
    if (cd "$wf" && "$actionlint" -no-color .github/workflows/crds.yml) >"$SCRATCH/actionlint.out" 2>&1; then
        fail "actionlint: an input the action lacks passes"
    else
        has "$SCRATCH/actionlint.out" 'fail-when' "actionlint reads the action's inputs (an unknown one fails)"
    fi
else
    missing_tool "actionlint could not be installed (scripts/install-actionlint.sh): $(tail -n 3 "$SCRATCH/actionlint.err")"
fi

finish
