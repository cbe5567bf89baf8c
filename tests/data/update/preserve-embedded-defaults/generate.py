# Writes crd.yaml, old.yaml and new-*.yaml of this case: x-kubernetes-preserve-unknown-fields
# objects (an unknown key cannot be correlated, so the object never compares equal to its old
# value: its own required / maxProperties / CEL errors are not ratcheted, those of known
# properties are), x-kubernetes-embedded-resource objects (their ObjectMeta / apiVersion / kind
# checks are not ratcheted), x-kubernetes-int-or-string with a CEL rule, defaults (also in the
# keys of a list-type map, where defaulting creates duplicates), and maps (granular and atomic)
# of objects with required fields and of sets. Each probe sits in spec.<probe> and in
# spec.lm[name=p].<probe>. Run from this directory; then ../regen.sh preserve-embedded-defaults.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

PUF = "x-kubernetes-preserve-unknown-fields"
EMB = "x-kubernetes-embedded-resource"
I = lambda **kw: dict(type="integer", **kw)
S = lambda **kw: dict(type="string", **kw)
req_obj = {"type": "object", "required": ["x"], "properties": {"x": S(), "y": S()}}
cm = lambda **kw: dict(apiVersion="v1", kind="ConfigMap", **kw)
probes = {
  # name: (schema, valid stored values, invalid stored values)
  "presReq": ({"type": "object", PUF: True, "required": ["known"], "properties": {"known": I(maximum=5)}},
              [{"known": 1}, {"known": 1, "unk": "x"}], [{}, {"unk": "x"}, {"unk": "y"}, {"known": 9}, {"known": 9, "unk": "x"}]),
  "presCel": ({"type": "object", PUF: True, "properties": {"known": I()}, "x-kubernetes-validations": [{"rule": "!has(self.known) || self.known <= 5", "message": "known at most 5"}]},
              [{"known": 1}, {"unk": 1}], [{"known": 9}, {"known": 9, "unk": "x"}, {"known": 10, "unk": "x"}]),
  "presMaxp": ({"type": "object", PUF: True, "maxProperties": 2}, [{"a": 1}, {}], [{"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 4}]),
  "presNested": ({"type": "object", PUF: True, "properties": {"inner": {"type": "object", "required": ["x"], "properties": {"x": I(maximum=5)}}}},
                 [{"inner": {"x": 1}, "unk": 1}, {"inner": {"x": 2}}], [{"inner": {"x": 9}, "unk": 1}, {"inner": {}, "unk": 1}, {"inner": {"x": 10}}]),
  # (an embedded name or generateName is not checked as a DNS name: "C_1" and "A-" are valid)
  "emb": ({"type": "object", EMB: True, PUF: True}, [cm(metadata={"name": "c"}), cm(), cm(metadata={"name": "C_1"}), cm(metadata={"generateName": "A-"})],
          [cm(metadata={"name": "c", "labels": {"-a": "b"}}), {"apiVersion": "v1"}, {"kind": "ConfigMap"}, cm(metadata={"name": "c", "namespace": "N"})]),
  "embTyped": ({"type": "object", EMB: True, "properties": {"spec": {"type": "object", "properties": {"replicas": I(maximum=5)}}}},
               [{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}}, {"apiVersion": "apps/v1", "kind": "Deployment"}],
               [{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 9}}, {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 10}},
                {"apiVersion": "apps/v1", "spec": {"replicas": 1}}]),
  "embCel": ({"type": "object", EMB: True, PUF: True, "x-kubernetes-validations": [{"rule": "self.kind != 'Secret'", "message": "no Secrets"}]},
             [cm(), cm(data={"a": "b"})], [{"apiVersion": "v1", "kind": "Secret"}, {"apiVersion": "v1", "kind": "Secret", "data": {}}]),
  "iosCel": ({"x-kubernetes-int-or-string": True, "x-kubernetes-validations": [{"rule": "type(self) == string ? self.endsWith('%') : self <= 10"}], "maxLength": 8},
             [5, "50%"], [11, "50", 12]),
  "def": ({"type": "object", "properties": {"a": S(enum=["x", "y"], default="x"), "b": I(maximum=5, default=3)}}, [{}, {"a": "y"}], [{"b": 9}, {"a": "z"}, {"b": 10}]),
  "defList": ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
               "items": {"type": "object", "required": ["name"], "properties": {"name": S(), "port": I(default=80), "v": I(maximum=5)}}},
              [[{"name": "a"}, {"name": "a", "port": 81}], []], [[{"name": "a"}, {"name": "a", "port": 80}], [{"name": "b"}, {"name": "b"}], [{"name": "a", "v": 9}]]),
  "mapReq": ({"type": "object", "additionalProperties": req_obj}, [{"a": {"x": "1"}}, {}], [{"a": {}}, {"a": {"y": "1"}}, {"a": {"x": "1"}, "b": {}}]),
  "mapReqAtomic": ({"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": req_obj}, [{"a": {"x": "1"}}, {}],
                   [{"a": {}}, {"a": {"y": "1"}}, {"a": {"x": "1"}, "b": {}}]),
  "mapOfSets": ({"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set", "items": S()}},
                [{"a": ["x"]}, {}], [{"a": ["x", "x"]}, {"a": ["y", "y"]}, {"a": ["x"], "b": ["z", "z"]}]),
}
item_props = {"other": S()}
item_props.update({k: v[0] for k, v in probes.items()})
lm_item = {"type": "object", "required": ["name"], "properties": dict(name=S(), **copy.deepcopy(item_props))}
spec_props = {"other": S(), "guard": I(maximum=10), "lm": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": lm_item}}
spec_props.update(copy.deepcopy(item_props))
status = {"type": "object", "properties": {"observedGeneration": I(), "phase": S()}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": spec_props}, "status": status}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "sibling", "new-invalid"]
olds, news = [], {s: [] for s in scenarios}
i = 0
for where in ["s", "lm"]:
    for pname, (schema, valid, invalid) in probes.items():
        for kind, vals in (("v", valid), ("i", invalid)):
            for j, val in enumerate(vals):
                if where == "s":
                    spec_v = {"other": "o", pname: copy.deepcopy(val)}
                    get = lambda s: s
                else:
                    spec_v = {"other": "o", "lm": [{"name": "p", "other": "x", pname: copy.deepcopy(val)}, {"name": "q"}]}
                    get = lambda s: s["lm"][0]
                name = "%s-%s-%s%d" % (where, pname.lower(), kind, j)
                old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": spec_v, "status": {"observedGeneration": 1}}
                olds.append(old)
                i += 1
                def variant(f):
                    n = copy.deepcopy(old)
                    f(n)
                    return n
                brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                fix = valid[1] if val == valid[0] else valid[0]
                news["metadata"].append(variant(touch_metadata))
                news["status"].append(variant(lambda n: n.__setitem__("status", {"observedGeneration": 2, "phase": "Ready"})))
                news["invalid-to-invalid"].append(variant(lambda n: get(n["spec"]).__setitem__(pname, copy.deepcopy(brk))))
                news["invalid-to-valid"].append(variant(lambda n: get(n["spec"]).__setitem__(pname, copy.deepcopy(fix))))
                news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
                news["sibling"].append(variant(lambda n: get(n["spec"]).__setitem__("other", "x2")))
                news["new-invalid"].append(variant(lambda n: n["spec"].__setitem__("guard", 99)))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
