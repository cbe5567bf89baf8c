# Writes crd.yaml, old.yaml and new-*.yaml of this case: a cluster-scoped CRD with the status
# subresource; stored objects without a namespace (a few with a stray namespace, which the server
# drops for a cluster-scoped resource), valid and invalid specs (schema and CEL), unusual names.
# Scenario namespace-set sends the object with metadata.namespace "default".
# Run from this directory; then ../regen.sh cluster-scoped.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import touch_metadata, write_docs  # noqa: E402

def meta(name, i):
    m = {"name": name, "resourceVersion": "1", "uid": "00000000-0000-4000-8000-%012d" % i,
         "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z"}
    if i % 3 == 0:
        m["finalizers"] = ["example.com/keep"]
    return m

spec = {"type": "object", "properties": {
  "other": {"type": "string"},
  "n": {"type": "integer", "minimum": 0, "maximum": 10},
  "host": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "isURL('https://' + self)", "message": "host must be usable in a URL"}]},
  "size": {"type": "string", "maxLength": 16, "x-kubernetes-validations": [{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('10Gi'))",
                                                                            "messageExpression": "'size ' + self + ' is not below 10Gi'"}]},
  "items": {"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key"],
            "items": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}, "value": {"type": "integer", "maximum": 5}}}}}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "globals.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Global", "plural": "globals"}, "scope": "Cluster",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec,
                           "status": {"type": "object", "properties": {"observedGeneration": {"type": "integer", "maximum": 100}}}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

probes = {
  "n": ([0, 10], [11, -1, 100]),
  "host": (["example.com", "a.b"], ["bad host", "a b"]),
  "size": (["1Gi", "500Mi"], ["10Gi", "1Ti", "x"]),
  "items": ([[{"key": "a", "value": 1}], []], [[{"key": "a", "value": 9}], [{"key": "a"}, {"key": "a"}], [{"value": 1}]]),
}
scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "namespace-set", "name-change"]
olds, news = [], {s: [] for s in scenarios}
i = 0
for stray in (False, True):
    for pname, (valid, invalid) in probes.items():
        for kind, vals in (("v", valid), ("i", invalid)):
            for j, val in enumerate(vals):
                name = "%s-%s%d%s" % (pname, kind, j, "-stray-ns" if stray else "")
                m = meta(name, i)
                if stray:
                    m["namespace"] = "default"
                old = {"apiVersion": "example.com/v1", "kind": "Global", "metadata": m, "spec": {"other": "o", pname: copy.deepcopy(val)},
                       "status": {"observedGeneration": 1 if i % 4 else 500}}
                olds.append(old)
                i += 1
                def variant(f):
                    n = copy.deepcopy(old)
                    f(n)
                    return n
                brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                fix = valid[1] if val == valid[0] else valid[0]
                news["metadata"].append(variant(touch_metadata))
                news["status"].append(variant(lambda n: n.__setitem__("status", {"observedGeneration": 2})))
                news["invalid-to-invalid"].append(variant(lambda n: n["spec"].__setitem__(pname, copy.deepcopy(brk))))
                news["invalid-to-valid"].append(variant(lambda n: n["spec"].__setitem__(pname, copy.deepcopy(fix))))
                news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
                news["namespace-set"].append(variant(lambda n: n["metadata"].__setitem__("namespace", "default")))
                news["name-change"].append(variant(lambda n: n["metadata"].__setitem__("name", name + "-renamed")))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
