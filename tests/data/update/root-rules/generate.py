# Writes crd.yaml, old.yaml and new-*.yaml of this case: rules at the root of the schema, which
# declares apiVersion, kind and metadata (metadata.name with a maxLength): root required,
# root CEL rules (on metadata.name, on spec and status together, with messageExpression and
# reason), a root transition rule (spec.mode immutable), and for contrast spec-level ones. The
# root object always differs from its old value for ratcheting (metadata has keys no schema
# declares), so root errors are never tolerated, not even on a no-op update.
# Run from this directory; then ../regen.sh root-rules.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

R = lambda rule, **kw: dict(rule=rule, **kw)
root = {"type": "object", "required": ["spec"],
  "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
    "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 24}}},
    "spec": {"type": "object", "required": ["mode"],
             "properties": {"mode": {"type": "string", "maxLength": 16}, "n": {"type": "integer"}, "other": {"type": "string"}},
             "x-kubernetes-validations": [R("!has(self.n) || self.n <= 10", message="spec rule: n at most 10")]},
    "status": {"type": "object", "properties": {"phase": {"type": "string", "maxLength": 16}, "n": {"type": "integer"}}}},
  "x-kubernetes-validations": [
    R("self.metadata.name.size() <= 20", messageExpression="'name ' + self.metadata.name + ' is longer than 20'"),
    R("!has(self.status) || !has(self.status.n) || !has(self.spec.n) || self.status.n <= self.spec.n", message="status.n above spec.n",
      reason="FieldValueForbidden", fieldPath=".status.n"),
    R("self.spec.mode == oldSelf.spec.mode", message="spec.mode is immutable"),
    R("self.spec.mode != 'legacy'", message="mode legacy is no longer allowed", reason="FieldValueInvalid", fieldPath=".spec.mode"),
  ]}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}, "schema": {"openAPIV3Schema": root}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

# (label, name (None: label-0 / label-1), spec, status)
stored = [
  ("ok", None, {"mode": "a", "n": 5}, {"phase": "x", "n": 3}),
  ("no-status", None, {"mode": "a", "n": 5}, None),
  ("name-21", "n" * 21, {"mode": "a"}, None),
  ("name-25", "n" * 25, {"mode": "a"}, None),
  ("status-above", None, {"mode": "a", "n": 2}, {"n": 3}),
  ("legacy", None, {"mode": "legacy"}, None),
  ("spec-rule", None, {"mode": "a", "n": 11}, None),
  ("spec-rule-status", None, {"mode": "a", "n": 11}, {"n": 11}),
  ("no-mode", None, {"n": 1}, None),
  ("no-spec", None, None, None),
  ("mode-too-long", None, {"mode": "m" * 20}, None),
]
scenarios = {
  "metadata": touch_metadata,
  "status": lambda n: n.__setitem__("status", {"phase": "y"}),
  "status-n-up": lambda n: n.__setitem__("status", {"n": 50}),
  "unrelated": lambda n: n.setdefault("spec", {}).__setitem__("other", "o2"),
  "mode-change": lambda n: n.setdefault("spec", {}).__setitem__("mode", "b"),
  "fix": lambda n: (n.setdefault("spec", {}).update({"mode": n["spec"].get("mode", "a") if n["spec"].get("mode") not in ("legacy", None, "m" * 20) else "a", "n": 1}),
                    n.pop("status", None)),
  "spec-removed": lambda n: n.pop("spec", None),
}
olds, news = [], {s: [] for s in scenarios}
i = 0
for label, name, spec, st in stored:
    for k in range(2):
        # two objects per row; the long names keep their length
        nm = "%s-%d" % (label, k) if name is None else name[:-1] + str(k)
        old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(nm, i)}
        if spec is not None:
            old["spec"] = copy.deepcopy(spec)
        if st is not None:
            old["status"] = copy.deepcopy(st)
        olds.append(old)
        i += 1
        for s, f in scenarios.items():
            n = copy.deepcopy(old)
            f(n)
            news[s].append(n)
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
open("status", "w").write("".join(s + "\n" for s in ["metadata", "status", "status-n-up", "fix"]))
