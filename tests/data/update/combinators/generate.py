# Writes crd.yaml, old.yaml and new-*.yaml of this case: allOf / anyOf / oneOf / not, declared on
# objects (errors raised by the object node, e.g. a maximum of a property inside an allOf branch)
# and on scalar fields, and an allOf declared on spec that constrains spec.top.a. Schema
# ratcheting compares the node where the combinator is declared, so a change anywhere in that
# node (the `sibling` scenario: <node>.other changed) keeps the branch errors. Each probe sits in
# spec.<probe> and in spec.lm[name=p].<probe> (a list-type map item).
# Run from this directory; then ../regen.sh combinators.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

def obj(**extra):
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "string"}, "other": {"type": "string"},
                                          "n": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}}}}
    s.update(extra)
    return s

def with_prop(name, **validation):
    s = obj()
    s["properties"][name].update(validation)
    return s

probes = {
  # name: (schema, valid values, invalid values)
  "all": (obj(allOf=[{"properties": {"a": {"maximum": 10}}}, {"required": ["b"]}, {"properties": {"n": {"properties": {"x": {"minimum": 0}}}}}]),
          [{"a": 1, "b": "x"}, {"a": 10, "b": "y", "n": {"x": 0}}],
          [{"a": 11, "b": "x"}, {"a": 1}, {"a": 12, "b": "x"}, {"b": "x", "n": {"x": -1}}, {"a": 20}]),
  "any": (obj(anyOf=[{"required": ["a"]}, {"required": ["b"]}]), [{"a": 1}, {"b": "x"}], [{}, {"c": "x"}, {"c": "y"}]),
  "one": (obj(oneOf=[{"required": ["a"]}, {"required": ["b"]}]), [{"a": 1}, {"b": "x"}], [{}, {"a": 1, "b": "x"}, {"a": 2, "b": "x"}, {"c": "x"}]),
  "not": (obj(**{"not": {"required": ["c"]}}), [{}, {"a": 1}], [{"c": "x"}, {"c": "y"}, {"a": 1, "c": "x"}]),
  "nestedAll": (obj(allOf=[{"properties": {"n": {"required": ["x"], "properties": {"y": {"maxLength": 2}}}}}]),
                [{"n": {"x": 1}}, {"n": {"x": 1, "y": "ab"}}], [{"n": {}}, {"n": {"y": "a"}}, {"n": {"x": 1, "y": "abc"}}, {"n": {"x": 2, "y": "abc"}}]),
  "anyVal": (with_prop("a", anyOf=[{"maximum": 3}, {"minimum": 100}]), [{"a": 1}, {"a": 100}], [{"a": 50}, {"a": 51}, {"a": 4}]),
  "oneVal": (with_prop("a", oneOf=[{"multipleOf": 2}, {"multipleOf": 3}]), [{"a": 2}, {"a": 3}], [{"a": 6}, {"a": 1}, {"a": 12}]),
  "notVal": (with_prop("b", **{"not": {"pattern": "^x"}}), [{"b": "y"}, {"b": ""}], [{"b": "x"}, {"b": "xx"}]),
  "allVal": (with_prop("b", allOf=[{"maxLength": 3}, {"pattern": "^[a-z]*$"}]), [{"b": "abc"}, {"b": ""}], [{"b": "abcd"}, {"b": "ABC"}, {"b": "ABCD"}]),
}
item_props = {"other": {"type": "string"}}
item_props.update({k: v[0] for k, v in probes.items()})
lm_item = {"type": "object", "required": ["name"], "properties": dict(name={"type": "string"}, **copy.deepcopy(item_props))}
spec_props = {"other": {"type": "string"}, "guard": {"type": "integer", "maximum": 10},
              "top": {"type": "object", "properties": {"a": {"type": "integer"}, "other": {"type": "string"}}},
              "lm": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": lm_item}}
spec_props.update({k: v[0] for k, v in probes.items()})
spec = {"type": "object", "properties": spec_props, "allOf": [{"properties": {"top": {"properties": {"a": {"maximum": 10}}}}}]}
status = {"type": "object", "properties": {"observedGeneration": {"type": "integer"}, "phase": {"type": "string"}}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec, "status": status}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

probes["top"] = (None, [{"a": 1}, {"a": 10}], [{"a": 11}, {"a": 12}, {"a": 99}])
scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "sibling", "new-invalid"]
olds, news = [], {s: [] for s in scenarios}
i = 0
for where in ["g", "lm"]:
    for pname, (schema, valid, invalid) in probes.items():
        if where == "lm" and pname == "top":
            continue
        for kind, vals in (("v", valid), ("i", invalid)):
            for j, val in enumerate(vals):
                v = dict(other="x", **copy.deepcopy(val))
                if where == "g":
                    spec_v = {"other": "o", pname: v}
                    get = lambda s, p=pname: s[p]
                else:
                    spec_v = {"other": "o", "lm": [{"name": "p", "other": "x", pname: v}, {"name": "q"}]}
                    get = lambda s, p=pname: s["lm"][0][p]
                name = "%s-%s-%s%d" % (where, pname.lower(), kind, j)
                old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": spec_v, "status": {"observedGeneration": 1}}
                olds.append(old)
                i += 1
                def variant(f):
                    n = copy.deepcopy(old)
                    f(n)
                    return n
                other_invalid = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                other_valid = valid[1] if val == valid[0] else valid[0]
                news["metadata"].append(variant(touch_metadata))
                news["status"].append(variant(lambda n: n.__setitem__("status", {"observedGeneration": 2, "phase": "Ready"})))
                news["invalid-to-invalid"].append(variant(lambda n: get(n["spec"]).clear() or get(n["spec"]).update(dict(other="x", **copy.deepcopy(other_invalid)))))
                news["invalid-to-valid"].append(variant(lambda n: get(n["spec"]).clear() or get(n["spec"]).update(dict(other="x", **copy.deepcopy(other_valid)))))
                news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
                news["sibling"].append(variant(lambda n: get(n["spec"]).__setitem__("other", "x2")))
                news["new-invalid"].append(variant(lambda n: n["spec"].__setitem__("guard", 99)))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
