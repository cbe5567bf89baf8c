#!/usr/bin/env python3
"""Helpers of scripts/ci/crd-changes.sh and the pre-commit hooks (Python 3 standard library
only: no PyYAML, which CI runners and developers' machines may lack).

  crd_docs.py split FILE OUTDIR
      The documents of FILE that may hold a CRD, one line each, tab-separated:
        INDEX  CLASS  LINE  CHUNK  NAME
      CLASS is `crd` (a top-level `kind: CustomResourceDefinition`), `list` (a `List` that
      names CustomResourceDefinition), `maybe` (names it otherwise: flow style, a comment),
      or `json` (a CRD read from a JSON file, NAME its metadata.name; otherwise NAME is empty:
      ask `crd-audit check -o json CHUNK` for it). LINE is the document's first line.
      CHUNK is `=` when the document is the only one of FILE that is not empty (use FILE as
      it is), else a file in OUTDIR holding that document alone: FILE with every other line
      blank, so that line numbers stay those of FILE. YAML documents are split at their
      markers (`---`, `...` at the start of a line), which YAML forbids inside any content.
      A last line `other N` counts the documents that are no CRD and not empty.
  crd_docs.py crds FILE OUTDIR CRD-AUDIT
      The CRDs of FILE, as scripts/ci/lib.sh's crd_lib_crds says them: `split`, then each
      document that may hold a CRD named by `CRD-AUDIT check -o json` (one process for a
      file: Python's start is the slow part).
  crd_docs.py counts DIFF-JSON PLAN-JSON
      `tightening loosening neutral` of `crd-audit diff -o json` lines, then
      `newly_invalid stuck already_invalid objects` of `crd-audit plan -o json` lines (PLAN-JSON
      `-`: none): newly invalid objects are invalid under the new revision and were valid (or
      not judged) before; stuck ones are those of them the server would refuse every write
      to.
  crd_docs.py rewrite FILE [FROM TO]...
      Replaces each FROM path by TO in FILE: as text, or in a SARIF log (`*.sarif`) in its
      strings and artifact locations (a `file:` URI of FROM becomes TO relative to
      %SRCROOT%, the repository's root).
  crd_docs.py sarif-merge OUT [PART...]
      One SARIF log with one run per command (automationDetails id `crd-audit-<command>/`):
      the results of every part, rules merged by id (ruleIndex renumbered), at most 25,000
      results a run (GitHub's limit; the rest counted in a notification). Parts that are no
      SARIF log are named on stderr and left out (exit 1).
"""

import json
import os
import re
import subprocess
import sys
import urllib.parse

MARKER = re.compile(r"^(---|\.\.\.)(?=\s|$)")
TOP_KIND_CRD = re.compile(r"""^kind:\s*(["']?)CustomResourceDefinition\1\s*(#.*)?$""")
TOP_KIND_LIST = re.compile(r"""^kind:\s*(["']?)(List|CustomResourceDefinitionList)\1\s*(#.*)?$""")
NAMES_CRD = re.compile(r"\bCustomResourceDefinition\b")
MAX_RESULTS = 25_000


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.splitlines(keepends=True)


def line_end(line):
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return end
    return ""


def is_blank(line):
    """A line that holds no content of a document: blank, a comment, a directive."""
    s = line.strip()
    return not s or s.startswith("#") or line.startswith("%")


def yaml_documents(lines):
    """(first, end) line ranges of the documents: each but the first starts at its marker."""
    starts = [0] + [i for i in range(1, len(lines)) if MARKER.match(lines[i])]
    bounds = starts + [len(lines)]
    return [(bounds[k], bounds[k + 1]) for k in range(len(starts))]


def has_content(lines, first, end):
    for i in range(first, end):
        line = lines[i]
        if MARKER.match(line):
            rest = line[3:].split("#", 1)[0].strip()
            if rest:
                return True
            continue
        if not is_blank(line):
            return True
    return False


def write_chunk(lines, first, end, out, keep_marker):
    with open(out, "wb") as f:
        for i, line in enumerate(lines):
            inside = first <= i < end
            if inside and i == first and MARKER.match(line) and not keep_marker:
                inside = False
            if line.startswith("%"):
                inside = False  # a directive belongs to the document after it
            text = line if inside else line_end(line) or ""
            f.write(text.encode("utf-8", errors="surrogateescape"))


def json_values(text):
    """The values of a JSON file (one, or a stream), or None when it is no JSON."""
    decoder = json.JSONDecoder()
    values, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            return values
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError:
            return None
        values.append(value)


def is_crd(v):
    return isinstance(v, dict) and v.get("kind") == "CustomResourceDefinition"


def split_docs(path, outdir):
    """The documents of `path` that may hold a CRD: (index, class, line, chunk, name) each,
    and the count of the others."""
    os.makedirs(outdir, exist_ok=True)
    ext = os.path.splitext(path)[1] or ".yaml"
    lines = read_lines(path)
    out = []
    other = 0
    if ext.lower() == ".json":
        values = json_values("".join(lines))
        if values is not None:
            crds = []
            for v in values:
                if is_crd(v):
                    crds.append(v)
                elif isinstance(v, dict) and isinstance(v.get("items"), list):
                    items = [item for item in v["items"] if is_crd(item)]
                    crds.extend(items)
                    other += len(v["items"]) - len(items)
                elif v is not None:
                    other += 1
            whole = len(values) == 1 and is_crd(values[0])
            for k, crd in enumerate(crds):
                name = str((crd.get("metadata") or {}).get("name", ""))
                if whole:
                    chunk = "="
                else:
                    chunk = os.path.join(outdir, f"doc-{k}{ext}")
                    with open(chunk, "w", encoding="utf-8") as f:
                        json.dump(crd, f, indent=2)
                        f.write("\n")
                out.append((k, "json", 1, chunk, name))
            return out, other
    docs = [(a, b) for a, b in yaml_documents(lines) if has_content(lines, a, b)]
    for k, (first, end) in enumerate(docs):
        body = lines[first:end]
        if any(TOP_KIND_CRD.match(l) for l in body):
            cls = "crd"
        elif any(TOP_KIND_LIST.match(l) for l in body) and any(NAMES_CRD.search(l) for l in body):
            cls = "list"
        elif any(NAMES_CRD.search(l) for l in body):
            cls = "maybe"
        else:
            other += 1
            continue
        if len(docs) == 1:
            chunk = "="
        else:
            chunk = os.path.join(outdir, f"doc-{k}{ext}")
            # A marker line holding content (`--- {a: b}`, `--- !tag`) is kept.
            keep = MARKER.match(lines[first]) and lines[first][3:].split("#", 1)[0].strip()
            write_chunk(lines, first, end, chunk, bool(keep))
        out.append((k, cls, first + 1, chunk, ""))
    return out, other


def split(path, outdir):
    docs, other = split_docs(path, outdir)
    for rec in docs:
        print("\t".join(str(x) for x in rec))
    print(f"other {other}")
    return 0


def crd_names(text):
    out = []
    for v in json_lines(text.splitlines()):
        if isinstance(v, dict) and isinstance(v.get("crd"), str) and "source" in v:
            out.append(v["crd"])
    return out


def crds(path, outdir, crd_audit):
    """The CRDs of `path` (see scripts/ci/lib.sh, crd_lib_crds), named by `crd-audit check
    -o json` of each document that may hold one."""
    docs, _ = split_docs(path, outdir)
    for idx, cls, line, chunk, name in docs:
        where = path if chunk == "=" else chunk
        if cls == "json" and name:
            print(f"ok\t{name}\t{where}\t{line}")
            continue
        run = subprocess.run([crd_audit, "check", "-o", "json", "--", where],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        names = crd_names(run.stdout.decode("utf-8", errors="replace"))
        if len(names) == 1:
            print(f"ok\t{names[0]}\t{where}\t{line}")
        elif len(names) > 1:
            for name in names:
                print(f"list\t{name}\t{where}\t{line}")
        elif cls != "maybe" and "{{" in open(where, encoding="utf-8", errors="replace").read():
            # A template (Helm's templates/, say) that is no YAML until rendered.
            print(f"template\t-\t-\t{line}")
        elif cls != "maybe":
            # A document of kind CustomResourceDefinition (or a List naming it) that holds
            # no CRD crd-audit can read; `maybe` documents only name the kind (a comment, a
            # ClusterRole's rule) and are no CRDs.
            errors = os.path.join(outdir, f"check-{idx}.err")
            text = run.stderr.decode("utf-8", errors="replace").replace(where, path)
            if run.returncode > 2 or run.returncode < 0:
                text += f"(crd-audit check exited with {run.returncode})\n"
            with open(errors, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"unreadable\t-\t{errors}\t{line}")
    return 0


def json_lines(stream):
    for line in stream:
        line = line.strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except ValueError:
            continue


def counts(diff_json, plan_json):
    """`tightening loosening neutral` of a diff, then `newly stuck already objects` of a plan
    (0 0 0 0 when PLAN-JSON is `-`)."""
    with open(diff_json, encoding="utf-8") as f:
        diff = diff_counts(f)
    if plan_json == "-":
        plan = (0, 0, 0, 0)
    else:
        with open(plan_json, encoding="utf-8") as f:
            plan = plan_counts(f)
    print(*diff, *plan)
    return 0


def diff_counts(stream):
    counts = {"tightening": 0, "loosening": 0, "neutral": 0}
    for v in json_lines(stream):
        if isinstance(v, dict) and v.get("class") in counts:
            counts[v["class"]] += 1
    return counts["tightening"], counts["loosening"], counts["neutral"]


def plan_counts(stream):
    newly = stuck = already = objects = 0
    for v in json_lines(stream):
        if not isinstance(v, dict) or "valid" not in v:
            continue
        objects += 1
        if v.get("valid") is not False:
            continue
        if v.get("validBefore") is False:
            already += 1
            continue
        newly += 1
        update = v.get("update")
        if isinstance(update, dict) and update.get("allowed") is False:
            stuck += 1
    return newly, stuck, already, objects


def quote_path(path):
    return urllib.parse.quote(path.replace("\\", "/"), safe="/-._~")


def fingerprint(parts):
    """crd-audit's SARIF fingerprint: FNV-1a (64 bits) of the parts, each ended by a NUL."""
    h = 0xCBF29CE484222325
    for part in parts:
        for b in part.encode("utf-8", errors="surrogateescape") + b"\0":
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def rewrite_sarif(path, pairs):
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    uris = {}
    for old, new in pairs:
        uris["file://" + quote_path(os.path.abspath(old))] = new
        uris[quote_path(old)] = new

    def text(v):
        if isinstance(v, dict):
            return {k: text(x) for k, x in v.items()}
        if isinstance(v, list):
            return [text(x) for x in v]
        if isinstance(v, str):
            for old, new in pairs:
                v = v.replace(old, new)
        return v

    for run in log.get("runs") or []:
        for result in run.get("results") or []:
            moved = None
            for k, loc in enumerate(result.get("locations") or []):
                art = (loc.get("physicalLocation") or {}).get("artifactLocation") or {}
                new = uris.get(art.get("uri"))
                if new is not None:
                    art["uri"] = quote_path(new)
                    art["uriBaseId"] = "%SRCROOT%"
                    if k == 0:
                        moved = new
            prints = result.get("partialFingerprints")
            if moved is not None and isinstance(prints, dict):
                # The finding's identity names its file: that of the repository, not the
                # temporary copy crd-audit read, so that alerts match across runs.
                props = result.get("properties") or {}
                h = fingerprint([str(result.get("ruleId", "")), moved,
                                 str(props.get("object", "")), str(props.get("field", ""))])
                n = str(prints.get("primaryLocationLineHash", ":1")).rsplit(":", 1)[-1]
                prints["primaryLocationLineHash"] = f"{h:016x}:{n}"
                if "crdAuditFinding/v1" in prints:
                    prints["crdAuditFinding/v1"] = f"{h:016x}"
    log = text(log)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(log, f)
        f.write("\n")
    return 0


def rewrite(path, pairs):
    if path.endswith(".sarif"):
        return rewrite_sarif(path, pairs)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    for old, new in pairs:
        text = text.replace(old, new)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    return 0


def sarif_merge(out, parts):
    runs = {}  # automation id -> merged run
    order = []
    failed = 0
    for part in parts:
        try:
            with open(part, encoding="utf-8") as f:
                log = json.load(f)
            part_runs = log["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"error: {part}: no SARIF log ({e})", file=sys.stderr)
            failed = 1
            continue
        for run in part_runs:
            key = (run.get("automationDetails") or {}).get("id") or "crd-audit/"
            driver = run.get("tool", {}).get("driver", {})
            rules = driver.get("rules") or []
            if key not in runs:
                skip = ("results", "invocations", "properties")
                merged = {k: v for k, v in run.items() if k not in skip}
                merged["tool"] = {"driver": {k: v for k, v in driver.items() if k != "rules"}}
                merged["tool"]["driver"]["rules"] = []
                merged["results"] = []
                merged["invocations"] = []
                merged["_rule_index"] = {}
                merged["_omitted"] = 0
                runs[key] = merged
                order.append(key)
            m = runs[key]
            index = m["_rule_index"]
            for rule in rules:
                if rule.get("id") not in index:
                    index[rule.get("id")] = len(m["tool"]["driver"]["rules"])
                    m["tool"]["driver"]["rules"].append(rule)
            for result in run.get("results") or []:
                rule_id = result.get("ruleId")
                if rule_id is None and isinstance(result.get("ruleIndex"), int):
                    if 0 <= result["ruleIndex"] < len(rules):
                        rule_id = rules[result["ruleIndex"]].get("id")
                        result["ruleId"] = rule_id
                if rule_id in index:
                    result["ruleIndex"] = index[rule_id]
                else:
                    result.pop("ruleIndex", None)
                if len(m["results"]) < MAX_RESULTS:
                    m["results"].append(result)
                else:
                    m["_omitted"] += 1
            m["invocations"].extend(run.get("invocations") or [])
            omitted = (run.get("properties") or {}).get("resultsOmitted")
            if isinstance(omitted, int):
                m["_omitted"] += omitted
    if not runs:
        runs["crd-audit-diff/"] = {
            "tool": {"driver": {"name": "crd-audit", "informationUri":
                                "https://github.com/crd-audit/crd-audit", "rules": []}},
            "automationDetails": {"id": "crd-audit-diff/"},
            "invocations": [{"executionSuccessful": True}],
            "results": [],
        }
        order.append("crd-audit-diff/")
    out_runs = []
    for key in order:
        m = runs[key]
        m.pop("_rule_index", None)
        omitted = m.pop("_omitted", 0)
        if omitted:
            m["properties"] = {"resultsTruncated": True, "resultsOmitted": omitted,
                               "resultsLimit": MAX_RESULTS}
            m["invocations"].append({
                "executionSuccessful": True,
                "toolExecutionNotifications": [{
                    "level": "warning",
                    "descriptor": {"id": "ResultsTruncated"},
                    "message": {"text": f"{omitted} result(s) left out: a run holds at most "
                                        f"{MAX_RESULTS} results (GitHub code scanning refuses more)"},
                }],
            })
        if not m["invocations"]:
            m["invocations"] = [{"executionSuccessful": True}]
        out_runs.append(m)
    log = {
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": out_runs,
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(log, f)
        f.write("\n")
    return failed


def main(argv):
    if len(argv) >= 3 and argv[0] == "split":
        return split(argv[1], argv[2])
    if len(argv) == 4 and argv[0] == "crds":
        return crds(argv[1], argv[2], argv[3])
    if len(argv) == 3 and argv[0] == "counts":
        return counts(argv[1], argv[2])
    if len(argv) >= 2 and argv[0] == "rewrite" and len(argv) % 2 == 0:
        return rewrite(argv[1], list(zip(argv[2::2], argv[3::2])))
    if len(argv) >= 2 and argv[0] == "sarif-merge":
        return sarif_merge(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
