# Writes crd.yaml, old.yaml and new-*.yaml of this case: one field per stored object, for every
# OpenAPI keyword a CRD can carry (type, enum, minimum/maximum/exclusive*, multipleOf, min/maxLength,
# pattern, formats, nullable, required (direct and nested), min/maxProperties, min/maxItems, invalid
# items of plain and atomic lists, invalid values of granular and atomic maps, int-or-string), with
# valid and invalid stored values. Each probe object sits in four places: spec.g (an object),
# spec.lm[name=p] (a list-type map item), spec.pl[0] (a plain list item) and spec.mv.p (a map
# value). Run from this directory; then ../regen.sh schema-keywords.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

S = lambda **kw: dict(type="string", **kw)
fields = {
  # name: (schema, valid values, invalid values)
  "int": ({"type": "integer", "minimum": 0, "maximum": 10}, [0, 5, 10], [-1, 11, 1000, 5.5, "5"]),
  "excl": ({"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 10, "exclusiveMaximum": True}, [0.5, 5, 9.5], [0, 10, -3, 10.5]),
  "mult": ({"type": "integer", "multipleOf": 3}, [0, 3, -6], [1, 4, 10]),
  # (an integer value against a fractional multipleOf fails: kube-openapi truncates the factor to 0)
  "multf": ({"type": "number", "multipleOf": 0.5}, [1.5, 2.5], [0.3, 1.25, 2]),
  "len": (S(minLength=2, maxLength=5), ["ab", "abcde"], ["a", "abcdef", "", "ééééééé"]),
  "pat": (S(pattern="^[a-z]+$"), ["abc", "z"], ["ABC", "a1", ""]),
  "enum": (S(enum=["a", "b", "c"]), ["a", "c"], ["d", "A", ""]),
  "enumInt": ({"type": "integer", "enum": [1, 2, 3]}, [1, 3], [0, 4]),
  "dateTime": (S(format="date-time"), ["2024-01-01T00:00:00Z", "2024-02-29T23:59:59+01:00"], ["2024-01-01", "yesterday", "2024-13-01T00:00:00Z"]),
  "date": (S(format="date"), ["2024-02-29", "1999-12-31"], ["2023-02-29", "2024-01-01T00:00:00Z"]),
  "duration": (S(format="duration"), ["1h", "30s"], ["1 fortnight", "h1"]),
  "ipv4": (S(format="ipv4"), ["10.0.0.1", "192.168.1.1"], ["10.0.0.256", "::1"]),
  "cidr": (S(format="cidr"), ["10.0.0.0/8", "fd00::/8"], ["10.0.0.0/33", "10.0.0.1"]),
  "uuid": (S(format="uuid"), ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"], ["not-a-uuid", "123e4567"]),
  "hostname": (S(format="hostname"), ["example.com", "a"], ["-bad-.com", "a..b"]),
  "shortName": (S(format="k8s-short-name"), ["abc-1", "a"], ["Abc", "a.b"]),
  "byte": (S(format="byte"), ["aGVsbG8=", "YQ=="], ["!!", "aGVsbG8", ""]),
  "email": (S(format="email"), ["a@example.com", "b@c.d"], ["not an email", "@"]),
  "tInt": ({"type": "integer"}, [1, -2], ["1", 1.5, True, {}]),
  "tNum": ({"type": "number"}, [1.5, 2], ["1.5", False]),
  "tStr": (S(), ["x", ""], [1, True]),
  "tBool": ({"type": "boolean"}, [True, False], ["true", 0]),
  "tObj": ({"type": "object", "properties": {"x": S()}}, [{"x": "y"}, {}], ["str", [1]]),
  "tArr": ({"type": "array", "items": S()}, [["x"], []], ["x", {"a": 1}, [1]]),
  "nulStr": (S(nullable=True), [None, "x"], [1, []]),
  "str": (S(), ["x", None], [1, {}]),
  "nulObj": ({"type": "object", "nullable": True, "properties": {"x": S()}}, [None, {"x": "y"}], ["x", {"x": 1}]),
  "req": ({"type": "object", "required": ["a", "b"], "properties": {"a": S(), "b": S(), "c": S()}},
          [{"a": "1", "b": "2"}, {"a": "1", "b": "2", "c": "3"}], [{}, {"a": "1"}, {"a": "2"}, {"a": "1", "b": None}, {"b": "1", "c": "3"}]),
  "nestedReq": ({"type": "object", "properties": {"inner": {"type": "object", "required": ["x"], "properties": {"x": S(), "y": S()}}, "z": S()}},
                [{"inner": {"x": "1"}}, {"inner": {"x": "1"}, "z": "2"}], [{"inner": {}}, {"inner": {"y": "1"}}, {"inner": {"y": "2"}}, {"inner": {"y": "1"}, "z": "1"}]),
  "maxp": ({"type": "object", "maxProperties": 2, "additionalProperties": S()},
           [{"a": "1"}, {"a": "1", "b": "2"}], [{"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2", "c": "4"}, {"a": "1", "b": "2", "c": "3", "d": "4"}]),
  "minp": ({"type": "object", "minProperties": 2, "additionalProperties": S()},
           [{"a": "1", "b": "2"}, {"a": "1", "c": "2"}], [{}, {"a": "1"}, {"a": "2"}]),
  "maxi": ({"type": "array", "maxItems": 2, "items": S()}, [[], ["a", "b"]], [["a", "b", "c"], ["a", "b", "d"], ["a", "b", "c", "d"]]),
  "mini": ({"type": "array", "minItems": 2, "items": S()}, [["a", "b"], ["a", "c", "d"]], [[], ["a"], ["b"]]),
  "plainItems": ({"type": "array", "items": {"type": "integer", "maximum": 5}}, [[1, 5], []], [[1, 9], [9, 9], [9, 1], [1, 2, 9]]),
  "atomicItems": ({"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "integer", "maximum": 5}}, [[1, 5], []], [[1, 9], [9, 9], [9, 1]]),
  "granMap": ({"type": "object", "additionalProperties": {"type": "integer", "maximum": 5}}, [{"a": 1}, {}], [{"a": 9}, {"a": 1, "b": 9}, {"a": 2, "b": 9}]),
  "atomicMap": ({"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "integer", "maximum": 5}},
                [{"a": 1}, {}], [{"a": 9}, {"a": 1, "b": 9}, {"a": 2, "b": 9}]),
  "ios": ({"x-kubernetes-int-or-string": True, "maximum": 10, "maxLength": 3, "pattern": "^[0-9]+%$"}, [5, "50%"], [11, "1000%", "abc", 1.5]),
}
item_props = {"other": S()}
item_props.update({k: v[0] for k, v in fields.items()})
item = {"type": "object", "properties": item_props}
lm_item = copy.deepcopy(item)
lm_item["properties"]["name"] = S()
lm_item["required"] = ["name"]
spec = {"type": "object", "properties": {
  "other": S(), "guard": {"type": "integer", "maximum": 10},
  "g": item,
  "lm": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": lm_item},
  "pl": {"type": "array", "items": item},
  "mv": {"type": "object", "additionalProperties": item},
}}
status = {"type": "object", "properties": {"observedGeneration": {"type": "integer"}, "phase": S(enum=["Pending", "Ready"])}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec, "status": status}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

def place(where, probe):
    """spec for a probe item placed in `where`, plus a function returning the probe item inside a spec"""
    if where == "g":
        return {"other": "o", "g": probe}, lambda s: s["g"]
    if where == "lm":
        p = dict(name="p", **probe)
        return {"other": "o", "lm": [p, {"name": "q", "other": "q"}]}, lambda s: s["lm"][0]
    if where == "pl":
        return {"other": "o", "pl": [probe, {"other": "q"}]}, lambda s: s["pl"][0]
    if where == "mv":
        return {"other": "o", "mv": {"p": probe, "q": {"other": "q"}}}, lambda s: s["mv"]["p"]

def respell(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return float(v)
    if isinstance(v, list):
        return [respell(x) for x in v]
    if isinstance(v, dict):
        return {k: respell(x) for k, x in v.items()}
    return v

olds, news = [], {}
scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "sibling", "new-invalid", "respell"]
for s in scenarios:
    news[s] = []
i = 0
subset = ["int", "len", "enum", "dateTime", "tInt", "str", "req", "nestedReq", "maxp", "minp", "maxi", "plainItems", "granMap", "atomicMap", "ios"]
for where in ["g", "lm", "pl", "mv"]:
    for fname, (schema, valid, invalid) in fields.items():
        if where != "g" and fname not in subset:
            continue
        for kind, vals in (("v", valid if where == "g" else valid[:1]), ("i", invalid)):
            for j, val in enumerate(vals):
                spec_v, get = place(where, {"other": "x", fname: copy.deepcopy(val)})
                name = "%s-%s-%s%d" % (where, fname.lower(), kind, j)
                old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": spec_v,
                       "status": {"observedGeneration": 1, "phase": "Pending"}}
                olds.append(old)
                i += 1
                def variant(f):
                    n = copy.deepcopy(old)
                    f(n)
                    return n
                other_invalid = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                other_valid = valid[1] if val == valid[0] and type(val) == type(valid[0]) else valid[0]
                news["metadata"].append(variant(touch_metadata))
                news["status"].append(variant(lambda n: n.__setitem__("status", {"observedGeneration": 2, "phase": "Ready"})))
                news["invalid-to-invalid"].append(variant(lambda n: get(n["spec"]).__setitem__(fname, copy.deepcopy(other_invalid))))
                news["invalid-to-valid"].append(variant(lambda n: get(n["spec"]).__setitem__(fname, copy.deepcopy(other_valid))))
                news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
                news["sibling"].append(variant(lambda n: get(n["spec"]).__setitem__("other", "x2")))
                news["new-invalid"].append(variant(lambda n: n["spec"].__setitem__("guard", 99)))
                news["respell"].append(variant(lambda n: get(n["spec"]).__setitem__(fname, respell(val))))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
