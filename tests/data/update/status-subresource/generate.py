# Writes crd.yaml, old.yaml and new-*.yaml of this case: the status subresource. Stored objects
# with an invalid status (enum, maximum/minimum, type, maxLength, a list-type map of conditions
# with duplicates, invalid items and a CEL rule per item, a status-level CEL rule, a transition
# rule on observedGeneration), combined with a valid spec, a schema-invalid spec and a
# CEL-invalid spec. Every scenario is sent both to the main resource (which keeps the stored
# status) and to PUT .../status (which keeps everything but status).
# Run from this directory; then ../regen.sh status-subresource.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

S = lambda **kw: dict(type="string", **kw)
I = lambda **kw: dict(type="integer", **kw)
cond = {"type": "object", "required": ["type", "status"],
        "properties": {"type": S(maxLength=32), "status": S(enum=["True", "False", "Unknown"]), "reason": S(maxLength=32, pattern="^[A-Z][A-Za-z]*$"),
                       "lastTransitionTime": S(format="date-time")},
        "x-kubernetes-validations": [{"rule": "self.status != 'Unknown' || has(self.reason)", "message": "an Unknown condition needs a reason"}]}
status = {"type": "object",
          "properties": {"observedGeneration": I(minimum=0, **{"x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "observedGeneration must not decrease"}]}),
                         "phase": S(enum=["Pending", "Running", "Done"]), "replicas": I(minimum=0, maximum=10), "message": S(maxLength=10), "note": S(),
                         "conditions": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], "items": cond}},
          "x-kubernetes-validations": [{"rule": "!(has(self.phase) && self.phase == 'Done') || (has(self.replicas) && self.replicas == 0)",
                                        "message": "a Done object has no replicas", "fieldPath": ".replicas"}]}
spec = {"type": "object", "properties": {"other": S(), "n": I(maximum=10, **{"x-kubernetes-validations": [{"rule": "self != 7", "message": "n must not be 7"}]})}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec, "status": status}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

C = lambda t, s, **kw: dict(type=t, status=s, **kw)
probes = {
  # status field: (valid values, invalid values)
  "phase": (["Pending", "Running"], ["Bogus", "pending"]),
  "replicas": ([0, 10], [11, -1, "3"]),
  "message": (["ok", ""], ["this is too long", "also far too long"]),
  "conditions": ([[C("Ready", "True")], [C("Ready", "Unknown", reason="Starting"), C("Synced", "False")]],
                 [[C("Ready", "Maybe")], [C("Ready", "True"), C("Ready", "False")], [C("Ready", "Unknown")], [C("Ready", "True", reason="bad reason")],
                  [C("Ready", "True", lastTransitionTime="yesterday")], [C("Ready", "True"), C("Synced", "Unknown")], [C("Synced", "True"), {"status": "True"}]]),
  "done": ([{"phase": "Done", "replicas": 0}, {"phase": "Running", "replicas": 3}], [{"phase": "Done", "replicas": 3}, {"phase": "Done"}]),
}
specs = {"ok": {"other": "o", "n": 1}, "schema": {"other": "o", "n": 99}, "cel": {"other": "o", "n": 7}}
scenarios = ["metadata", "status-to-invalid", "status-to-valid", "status-unrelated", "status-clear", "og-decrease", "og-increase", "spec", "spec-fix"]
olds, news = [], {s: [] for s in scenarios}
i = 0

def set_probe(st, pname, val):
    st = copy.deepcopy(st)
    if pname == "done":
        st.update(copy.deepcopy(val))
    else:
        st[pname] = copy.deepcopy(val)
    return st

for sname, spec_v in specs.items():
    for pname, (valid, invalid) in probes.items():
        for kind, vals in (("v", valid), ("i", invalid)):
            if sname != "ok" and kind == "v" and pname != "phase":
                continue
            for j, val in enumerate(vals):
                st = set_probe({"observedGeneration": 1, "phase": "Pending", "note": "n"}, pname, val)
                name = "%s-spec-%s-%s%d" % (pname, sname, kind, j)
                old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": copy.deepcopy(spec_v), "status": st}
                olds.append(old)
                i += 1
                def variant(f):
                    n = copy.deepcopy(old)
                    f(n)
                    return n
                brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                fix = valid[1] if val == valid[0] else valid[0]
                news["metadata"].append(variant(touch_metadata))
                news["status-to-invalid"].append(variant(lambda n: n.__setitem__("status", set_probe(n["status"], pname, brk))))
                news["status-to-valid"].append(variant(lambda n: n.__setitem__("status", set_probe(n["status"], pname, fix))))
                news["status-unrelated"].append(variant(lambda n: n["status"].__setitem__("note", "n2")))
                news["status-clear"].append(variant(lambda n: n.pop("status")))
                news["og-decrease"].append(variant(lambda n: n["status"].__setitem__("observedGeneration", 0)))
                news["og-increase"].append(variant(lambda n: n["status"].__setitem__("observedGeneration", 2)))
                news["spec"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
                news["spec-fix"].append(variant(lambda n: n["spec"].__setitem__("n", 2)))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
open("status", "w").write("".join(s + "\n" for s in scenarios))
