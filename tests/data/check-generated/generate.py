# Writes crds.yaml: 275 synthetic CRDs (schema fragments alone, as a property and as list
# items, random pairs merged, root-schema variants with and without a status subresource),
# one document each; then regen.sh asks the oracle about each (oracle.jsonl, one line a CRD,
# in order). Kept with a fixed seed: the stored files are what the test compares.
import json, random, copy
random.seed(5)
frags = [
  {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "array", "items": {"type": "string"}},
  {"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object", "additionalProperties": {"type": "string"}},
  {"type": "array"}, {"type": "object"}, {}, {"nullable": True}, {"type": "string", "nullable": True, "default": None},
  {"x-kubernetes-int-or-string": True}, {"x-kubernetes-int-or-string": True, "type": "string"},
  {"x-kubernetes-preserve-unknown-fields": True}, {"x-kubernetes-preserve-unknown-fields": False, "type": "object"},
  {"x-kubernetes-embedded-resource": True, "type": "object"}, {"x-kubernetes-embedded-resource": True, "type": "object", "x-kubernetes-preserve-unknown-fields": True},
  {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
  {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}}},
  {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}, {"type": "array", "x-kubernetes-list-type": "bogus", "items": {"type": "string"}},
  {"type": "object", "x-kubernetes-map-type": "granular"}, {"type": "string", "x-kubernetes-map-type": "atomic"},
  {"type": "string", "enum": ["a", 1, None]}, {"type": "integer", "default": "x"}, {"type": "string", "default": "abc", "maxLength": 2},
  {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
  {"type": "object", "additionalProperties": False}, {"type": "array", "items": [{"type": "string"}]},
  {"allOf": [{"type": "string"}]}, {"anyOf": [{"properties": {"a": {"type": "string"}}}]}, {"oneOf": [{"required": ["a"]}]},
  {"not": {"description": "x"}}, {"type": "string", "allOf": [{"default": "x"}]}, {"type": "string", "anyOf": [{"nullable": True}]},
  {"type": "string", "pattern": "["}, {"type": "string", "format": "bogus"}, {"type": "integer", "format": "float"},
  {"type": "string", "uniqueItems": True}, {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
  {"type": "string", "$ref": "#/x"}, {"type": "string", "id": "x"}, {"type": "string", "additionalItems": True}, {"type": "string", "patternProperties": {"a": {}}},
  {"type": "string", "dependencies": {"a": ["b"]}}, {"type": "string", "definitions": {"a": {}}}, {"type": "string", "$schema": "x"},
  {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() > 0"}]}, {"type": "string", "x-kubernetes-validations": [{"rule": ""}]},
  {"type": "string", "x-kubernetes-validations": [{"rule": "self > 1"}]}, {"type": "string", "x-kubernetes-validations": [{"rule": "true", "reason": "Bogus"}]},
  {"type": "string", "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".x"}]}, {"type": "object", "properties": {"x": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".x"}]},
  {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "optionalOldSelf": True}]}, {"type": "string", "x-kubernetes-validations": [{"rule": "true", "messageExpression": "1"}]},
  {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
  {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [{"rule": "self.all(x, x.matches('a+'))"}]},
  {"type": "string", "minLength": 5, "maxLength": 2}, {"type": "integer", "minimum": 5, "maximum": 2}, {"type": "number", "multipleOf": -1},
  {"type": "object", "required": ["missing"]}, {"type": "object", "properties": {"metadata": {"type": "object"}}},
  {"type": "object", "description": "x", "title": "y", "example": {"a": 1}, "externalDocs": {"url": "http://x"}},
]
def crd(spec_schema, root_extra=None, version_extra=None, pres=None):
    root = {"type": "object", "properties": {"spec": spec_schema}}
    if root_extra: root.update(root_extra)
    v = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": root}}
    if version_extra: v.update(version_extra)
    c = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
         "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced", "versions": [v]}}
    if pres is not None: c["spec"]["preserveUnknownFields"] = pres
    return c
cases = []
for f in frags:
    cases.append(crd(f))
    cases.append(crd({"type": "object", "properties": {"x": f}}))
    cases.append(crd({"type": "array", "items": f}))
for _ in range(60):
    a, b = random.sample(frags, 2)
    m = copy.deepcopy(a); m.update(copy.deepcopy(b))
    cases.append(crd({"type": "object", "properties": {"x": m}}))
root_extras = [{"nullable": True}, {"x-kubernetes-preserve-unknown-fields": True}, {"default": {}}, {"properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}}},
               {"properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}, {"required": ["spec"]}, {"type": "string"}, {"x-kubernetes-validations": [{"rule": "self.metadata.name == 'a'"}]},
               {"properties": {"apiVersion": {"type": "integer"}}}, {"properties": {"status": {"type": "object"}}}, {"additionalProperties": {"type": "string"}}]
for r in root_extras:
    cases.append(crd({"type": "object"}, root_extra=r))
    cases.append(crd({"type": "object"}, root_extra=r, version_extra={"subresources": {"status": {}}}))
cases.append(crd({"type": "object", "default": {"a": 1}}, pres=True))
with open("crds.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for i, c in enumerate(cases):
        c["metadata"]["name"] = "things%d.example.com" % i
        c["spec"]["names"] = {"kind": "Thing%d" % i, "plural": "things%d" % i}
        fh.write(json.dumps(c) + "\n---\n")
