#!/usr/bin/env python3
"""The README's Speed table, measured again: crd-audit against the upstream code (the oracle
of ../shared/oracle) on this machine, in alternating pairs, RUNS pairs per row (default 9).

    python3 benches/speed_table.py [RUNS]

In-process rows: `cargo bench -p crd-audit-engine --bench schema_validation` (schema only and
CEL only, objects prepared once) against `oracle bench CRD OBJECTS N` (its `schemaOnly` and
`celOnly` figures). Whole-process rows: `benches/whole_process.sh`'s input (4,000 objects) run
through `crd-audit validate --output json` and `oracle validate`, wall time of each process.
Each row prints the median objects/s of each side and the median of the pairs' ratios.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CRD_AUDIT_CONFORMANCE", ROOT.parent / "shared" / "conformance"))
ORACLE = Path(os.environ.get("ORACLE", Path.home() / ".cache/crd-audit-oracle/bin/oracle"))
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
CASES = {
    "HTTPRoute": ("gateway-api-standard-httproutes", 200),
    "Prometheus": ("prometheus-operator-prometheuses", 2000),
}


def ours_in_process():
    """One run of the engine's bench: {case id: {"schema": objects/s, "cel": objects/s}}."""
    env = dict(os.environ, CRD_AUDIT_CONFORMANCE=str(CORPUS))
    out = subprocess.run(
        ["cargo", "bench", "-q", "--locked", "-p", "crd-audit-engine", "--bench", "schema_validation"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        m = re.match(r"(\S+): .* ([0-9]+) objects/s .*, (schema only|CEL only)", line)
        if m:
            kind = "schema" if m.group(3) == "schema only" else "cel"
            figures.setdefault(m.group(1), {})[kind] = float(m.group(2))
    return figures


def oracle_in_process(case_id, passes):
    case = CORPUS / "cases" / case_id
    out = subprocess.run([str(ORACLE), "bench", str(case / "crd.yaml"), str(case / "objects.yaml"),
                          str(passes)], check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return {"schema": report["schemaOnly"]["objectsPerSec"], "cel": report["celOnly"]["objectsPerSec"]}


def whole_process_input(case_id, want, work):
    """The whole_process.sh input: the case's objects repeated to `want` documents."""
    text = (CORPUS / "cases" / case_id / "objects.yaml").read_text()
    docs = [d for d in re.split(r"(?m)^---\s*$", text) if re.search(r"(?m)^kind:", d)]
    out = []
    while len(out) < want:
        out.extend(docs[: want - len(out)])
    path = Path(work) / f"{case_id}.yaml"
    path.write_text("\n---\n".join(d.strip("\n") for d in out) + "\n")
    return path, len(out)


def wall(cmd):
    start = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def row(name, ours, theirs):
    ratios = [o / t for o, t in zip(ours, theirs)]
    print(f"| {name} | {statistics.median(ours):,.0f} objects/s | "
          f"{statistics.median(theirs):,.0f} objects/s | {statistics.median(ratios):.1f}x |",
          flush=True)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    if not ORACLE.exists():
        sys.exit(f"no oracle at {ORACLE} (build it with ../shared/oracle/build.sh)")
    subprocess.run(["cargo", "build", "-q", "--release", "--locked"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "bench", "-q", "--locked", "-p", "crd-audit-engine", "--bench",
                    "schema_validation", "--no-run"], cwd=ROOT, check=True)
    print(f"{time.strftime('%Y-%m-%d')}, {runs} pairs a row, {os.cpu_count()} cores", flush=True)

    pairs = {(name, kind): ([], []) for name in CASES for kind in ("schema", "cel")}
    for _ in range(runs):
        ours = ours_in_process()
        for name, (case_id, passes) in CASES.items():
            theirs = oracle_in_process(case_id, passes)
            for kind in ("schema", "cel"):
                if kind in ours.get(case_id, {}):
                    pairs[(name, kind)][0].append(ours[case_id][kind])
                    pairs[(name, kind)][1].append(theirs[kind])
    for (name, kind), (ours, theirs) in pairs.items():
        if ours:
            row(f"{'schema-only' if kind == 'schema' else 'CEL rules only'} validation, {name}",
                ours, theirs)

    binary = TARGET / "release" / "crd-audit"
    with tempfile.TemporaryDirectory() as work:
        for name, (case_id, _) in CASES.items():
            objects, count = whole_process_input(case_id, 4000, work)
            crd = CORPUS / "cases" / case_id / "crd.yaml"
            ours, theirs = [], []
            wall([str(binary), "validate", "--crd", str(crd), "--output", "json", str(objects)])
            for _ in range(runs):
                ours.append(count / wall([str(binary), "validate", "--crd", str(crd), "--output",
                                          "json", str(objects)]))
                theirs.append(count / wall([str(ORACLE), "validate", str(crd), str(objects)]))
            row(f"whole process, {count:,} {name} objects", ours, theirs)


if __name__ == "__main__":
    main()
