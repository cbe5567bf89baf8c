# Writes crd.yaml and objects.yaml of this case: list types (set, map with one or two keys,
# atomic), nullable, defaults (including inside list items and under preserve-unknown-fields),
# int-or-string, embedded resources and required fields, against values that hit their edges.
# Run from this directory; then ../regen.sh list-types-defaults-nullable.
import json
props = {
  "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
  "setInts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
  "setNums": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}},
  "map1": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
           "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}}},
  "map2": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "p"],
           "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "p": {"type": "integer", "default": 80}, "v": {"type": "string"}}}},
  "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
  "nullableStr": {"type": "string", "nullable": True},
  "str": {"type": "string"},
  "nullableObj": {"type": "object", "nullable": True, "properties": {"a": {"type": "string", "default": "d"}}},
  "defaulted": {"type": "object", "default": {"a": "x"}, "properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 3}}},
  "items": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string", "default": "dx"}}}},
  "ios": {"x-kubernetes-int-or-string": True},
  "iosRange": {"x-kubernetes-int-or-string": True, "maximum": 10, "maxLength": 3, "pattern": "^[0-9]+%$"},
  "embedded": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
  "req": {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "string", "nullable": True}}},
  "pres": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"known": {"type": "integer", "default": 1}}},
  "mapOfLists": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}},
}
values = {
  "set": [[], ["a"], ["a", "a"], ["a", "b", "a", "b"], ["a", None], [None, None], "a"],
  "setInts": [[1, 1], [1, 1.0], [1, 2], [1.5]],
  "setNums": [[1, 1.0], [1.5, 1.5], [0, -0.0], [1e300, 1e300]],
  "map1": [[{"k": "a"}, {"k": "a"}], [{"k": "a", "v": 1}, {"k": "b"}], [{"v": 1}], [{"k": None}], [{"k": "a"}, {"k": "a"}, {"k": "a"}], [{"k": 1}]],
  "map2": [[{"k": "a"}, {"k": "a"}], [{"k": "a"}, {"k": "a", "p": 80}], [{"k": "a", "p": 1}, {"k": "a", "p": 2}], [{"k": "a", "p": None}]],
  "atomic": [["a", "a"], [None]],
  "nullableStr": [None, "x", 1],
  "str": [None, 1, True, {}, []],
  "nullableObj": [None, {}, {"a": None}],
  "defaulted": [None, {}, {"a": None}, {"b": None}],
  "items": [[{}], [None], [{"x": None}], []],
  "ios": [1, "1", 1.5, True, None, "", 9223372036854775807],
  "iosRange": [11, "11", "5%", "100%", 5, "1000%"],
  "embedded": [{}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "A"}}, {"kind": "Pod"}, {"apiVersion": "v1"},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"-a": "b"}}}, {"apiVersion": 1, "kind": "Pod"},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"unknown": 1, "name": "p"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": "x"}],
  "req": [{}, {"a": "x"}, {"a": "x", "b": None}, {"a": None, "b": "y"}],
  "pres": [{}, {"known": None}, {"other": {"x": 1}}, {"known": "s"}],
  "mapOfLists": [{"a": ["x", "x"]}, {"a": None}, {"a": [], "b": ["y", "z", "y"]}],
}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))
n = 0
with open("objects.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for k, vs in values.items():
        for v in vs:
            fh.write(json.dumps({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "o%d" % n}, "spec": {k: v}}) + "\n---\n")
            n += 1
