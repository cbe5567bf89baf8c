"""Runs the steps of action.yml as a GitHub runner would, for tests/ci_integrations/: each
`run:` step with bash (`bash --noprofile --norc -eo pipefail`), its `env` evaluated, its
$GITHUB_OUTPUT read into `steps.<id>.outputs`; `uses:` steps are not run (said on stderr).
Expressions: `${{ inputs.X }}`, `${{ steps.ID.outputs.X }}`, `${{ github.action_path }}`,
`${{ github.event.before }}`, `${{ runner.temp }}`, and `if:` conditions of the form
`A == 'v' && B != ''` over those; anything else fails the test.

    run_action.py ACTION-DIR WORK-DIR RUNNER-TEMP [INPUT=VALUE]...

Prints the action's outputs (`name=value` lines) and exits with the status of the first step
that failed (0 when none did). Needs PyYAML (pre-commit's, in the tests).
"""

import os
import re
import subprocess
import sys

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def main(argv):
    action_dir, work, temp = argv[0], argv[1], argv[2]
    given = dict(a.split("=", 1) for a in argv[3:])
    action = yaml.safe_load(open(os.path.join(action_dir, "action.yml")))
    inputs = {k: str((v or {}).get("default", "")) for k, v in action["inputs"].items()}
    for k, v in given.items():
        if k not in inputs:
            raise SystemExit(f"no input {k}")
        inputs[k] = v
    steps = {}
    context = {
        "github.action_path": action_dir,
        "github.event.before": "",
        "runner.temp": temp,
    }

    def value(name):
        name = name.strip()
        if name.startswith("inputs."):
            return inputs[name[len("inputs."):]]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", name)
        if m:
            return steps.get(m.group(1), {}).get(m.group(2), "")
        m = re.fullmatch(r"'(.*)'", name)
        if m:
            return m.group(1)
        if name in context:
            return context[name]
        raise SystemExit(f"an expression this stand-in cannot evaluate: {name}")

    def condition(expr):
        ok = True
        for part in expr.split("&&"):
            m = re.fullmatch(r"\s*(.+?)\s*(==|!=)\s*(.+?)\s*", part)
            if not m:
                raise SystemExit(f"a condition this stand-in cannot evaluate: {expr}")
            a, b = value(m.group(1)), value(m.group(3))
            ok = ok and ((a == b) if m.group(2) == "==" else (a != b))
        return ok

    def substitute(text):
        return EXPR.sub(lambda m: value(m.group(1)), str(text))

    status = 0
    for k, step in enumerate(action["runs"]["steps"]):
        if status != 0:
            break
        cond = step.get("if")
        if cond is not None:
            m = EXPR.fullmatch(str(cond).strip())
            if not condition(m.group(1) if m else str(cond)):
                print(f"step {k} skipped: {cond}", file=sys.stderr)
                continue
        if "uses" in step:
            print(f"step {k} not run: uses {step['uses']}", file=sys.stderr)
            continue
        out = os.path.join(temp, f"output-{k}")
        open(out, "w").close()
        env = dict(os.environ, GITHUB_OUTPUT=out,
                   GITHUB_STEP_SUMMARY=os.path.join(temp, "step-summary"),
                   GITHUB_ACTION_PATH=action_dir, RUNNER_TEMP=temp)
        for name, v in (step.get("env") or {}).items():
            env[name] = substitute(v)
        if "${{" in step["run"]:
            raise SystemExit(f"step {k}: an expression in its script")
        script = os.path.join(temp, f"step-{k}.sh")
        with open(script, "w") as f:
            f.write(step["run"])
        run = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                             cwd=work, env=env)
        outputs, lines, i = {}, open(out).read().split("\n"), 0
        while i < len(lines):
            line = lines[i]
            if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
                name, delim = line.split("<<", 1)
                i += 1
                buf = []
                while lines[i] != delim:
                    buf.append(lines[i])
                    i += 1
                outputs[name] = "\n".join(buf)
            elif "=" in line:
                name, v = line.split("=", 1)
                outputs[name] = v
            i += 1
        if step.get("id"):
            steps[step["id"]] = outputs
        status = run.returncode
        print(f"step {k} ({step.get('name', '')}): exit {status}", file=sys.stderr)
    for name, spec in action.get("outputs", {}).items():
        print(f"{name}={substitute(spec['value'])}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
