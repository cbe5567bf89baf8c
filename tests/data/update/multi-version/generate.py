# Writes crd.yaml, old.yaml and new-*.yaml of this case: a CRD with a loose storage version v1, a
# tightened served version v2 (maximum, maxLength, a set instead of a plain list, a CEL rule,
# spec.other required, an enum on status.phase, no spec.extra) and an unserved v3; no status
# subresource (status is validated with the main resource). Most objects are stored at v1 (some
# with spec.extra, which v2 prunes: spec then never equals its old value), a few at v2. The
# server converts the stored object to the request's version (conversion strategy None: only
# apiVersion changes). Scenarios prefixed v1- send the object at v1, v2- at v2, v3- at v3.
# Run from this directory; then ../regen.sh multi-version.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

S = lambda **kw: dict(type="string", **kw)
I = lambda **kw: dict(type="integer", **kw)
v1 = {"type": "object", "properties": {
  "spec": {"type": "object", "properties": {"other": S(), "n": I(), "s": S(), "c": S(), "tags": {"type": "array", "items": S()}, "extra": S()}},
  "status": {"type": "object", "properties": {"phase": S()}}}}
v2 = {"type": "object", "properties": {
  "spec": {"type": "object", "required": ["other"], "properties": {
    "other": S(), "n": I(maximum=10), "s": S(maxLength=3),
    "c": S(maxLength=16, **{"x-kubernetes-validations": [{"rule": "self.startsWith('x')", "message": "c must start with x"}]}),
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": S()}}},
  "status": {"type": "object", "properties": {"phase": S(enum=["A", "B"])}}}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": v1}},
               {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": v2}},
               {"name": "v3", "served": False, "storage": False, "schema": {"openAPIV3Schema": v2}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

probes = {
  # spec field: (valid values under v2, invalid values under v2)
  "n": ([1, 10], [11, 50]),
  "s": (["ab", "abc"], ["abcd", "abcde"]),
  "c": (["x", "xy"], ["y", "z"]),
  "tags": ([["a"], ["a", "b"]], [["a", "a"], ["b", "b"]]),
  "other": (["o", "p"], [None, 5]),
}
statuses = {"ok": {"phase": "A"}, "bad": {"phase": "Bogus"}}

def at(n, version):
    n["apiVersion"] = "example.com/" + version

def set_field(n, f, v):
    if v is None:
        n["spec"].pop(f, None)
    else:
        n["spec"][f] = copy.deepcopy(v)

scenarios = ["v1-metadata", "v1-status", "v1-unrelated", "v2-noop", "v2-metadata", "v2-status", "v2-status-fix", "v2-invalid-to-invalid",
             "v2-invalid-to-valid", "v2-unrelated", "v3-noop"]
olds, news = [], {s: [] for s in scenarios}
i = 0
for stored in ("v1", "v1-extra", "v2"):
    for stname, st in statuses.items():
        if stored == "v2" and stname == "bad":
            continue
        for pname, (valid, invalid) in probes.items():
            for kind, vals in (("v", valid), ("i", invalid)):
                for j, val in enumerate(vals):
                    spec = {"other": "o"}
                    set_field({"spec": spec}, pname, val)
                    if stored == "v1-extra":
                        spec["extra"] = "e"
                    name = "%s-%s-status-%s-%s%d" % (pname, stored, stname, kind, j)
                    old = {"apiVersion": "example.com/" + stored[:2], "kind": "Thing", "metadata": meta(name, i), "spec": spec, "status": copy.deepcopy(st)}
                    olds.append(old)
                    i += 1
                    def variant(version, f=None):
                        n = copy.deepcopy(old)
                        at(n, version)
                        if f:
                            f(n)
                        return n
                    brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                    fix = valid[1] if val == valid[0] else valid[0]
                    unrelated, unrelated_v = ("s", "q") if pname != "s" else ("c", "xq")
                    news["v1-metadata"].append(variant("v1", touch_metadata))
                    news["v1-status"].append(variant("v1", lambda n: n.__setitem__("status", {"phase": "anything"})))
                    news["v1-unrelated"].append(variant("v1", lambda n: n["spec"].__setitem__(unrelated, unrelated_v)))
                    news["v2-noop"].append(variant("v2"))
                    news["v2-metadata"].append(variant("v2", touch_metadata))
                    news["v2-status"].append(variant("v2", lambda n: n.__setitem__("status", {"phase": "B"})))
                    news["v2-status-fix"].append(variant("v2", lambda n: n.__setitem__("status", {"phase": "A"})))
                    news["v2-invalid-to-invalid"].append(variant("v2", lambda n: set_field(n, pname, brk)))
                    news["v2-invalid-to-valid"].append(variant("v2", lambda n: set_field(n, pname, fix)))
                    news["v2-unrelated"].append(variant("v2", lambda n: n["spec"].__setitem__(unrelated, unrelated_v)))
                    news["v3-noop"].append(variant("v3"))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
