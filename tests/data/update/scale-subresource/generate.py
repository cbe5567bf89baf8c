# Writes crd.yaml, old.yaml and new-*.yaml of this case: the scale subresource. The replica
# counts at specReplicasPath / statusReplicasPath (negative, above int32, not an integer) and a
# label selector that is not a string are checked by the strategy outside the schema, without
# ratcheting (spec replicas on the main resource only, status replicas and selector on both);
# spec.replicas also has a schema maximum (ratcheted). Every scenario is also sent to .../status.
# Run from this directory; then ../regen.sh scale-subresource.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".status.selector"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                  "spec": {"type": "object", "properties": {"other": {"type": "string"}, "replicas": {"type": "integer", "maximum": 100}}},
                  "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}, "note": {"type": "string"}}}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

probes = {
  # (where, field): (valid values, invalid values)
  ("spec", "replicas"): ([0, 3], [-1, 2147483648, 200, 1.5, "3"]),
  ("status", "replicas"): ([1, 0], [-2, 4294967296, "1"]),
  ("status", "selector"): (["app=x", ""], [5, True]),
}
scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated"]
olds, news = [], {s: [] for s in scenarios}
i = 0
for (where, fname), (valid, invalid) in probes.items():
    for kind, vals in (("v", valid), ("i", invalid)):
        for j, val in enumerate(vals):
            name = "%s-%s-%s%d" % (where, fname, kind, j)
            old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": {"other": "o", "replicas": 1},
                   "status": {"replicas": 1, "selector": "app=x", "note": "n"}}
            old[where][fname] = copy.deepcopy(val)
            olds.append(old)
            i += 1
            def variant(f):
                n = copy.deepcopy(old)
                f(n)
                return n
            brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
            fix = valid[1] if val == valid[0] else valid[0]
            news["metadata"].append(variant(touch_metadata))
            news["status"].append(variant(lambda n: n["status"].__setitem__("note", "n2")))
            news["invalid-to-invalid"].append(variant(lambda n: n[where].__setitem__(fname, copy.deepcopy(brk))))
            news["invalid-to-valid"].append(variant(lambda n: n[where].__setitem__(fname, copy.deepcopy(fix))))
            news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
open("status", "w").write("".join(s + "\n" for s in scenarios))
