# Writes crd.yaml and objects.yaml of this case: numeric keywords (multipleOf, minimum and
# maximum, exclusive or not, formats) against integers and floats at the edges of float64 and
# int64, written as YAML scalars. Run from this directory; then ../regen.sh numeric-keywords.
import json
schemas = [
    {"type": "number", "multipleOf": 0.1}, {"type": "number", "multipleOf": 0.01}, {"type": "number", "multipleOf": 3},
    {"type": "integer", "multipleOf": 7}, {"type": "number", "multipleOf": 1e-9}, {"type": "number", "multipleOf": 1e300},
    {"type": "number", "maximum": 1.5, "exclusiveMaximum": True}, {"type": "number", "maximum": 1.5},
    {"type": "integer", "minimum": -3}, {"type": "integer", "minimum": -3, "exclusiveMinimum": True},
    {"type": "number", "maximum": 1e21}, {"type": "number", "minimum": 1e-7, "exclusiveMinimum": True},
    {"type": "integer", "format": "int32"}, {"type": "number", "format": "float"}, {"type": "integer", "maximum": 9007199254740993},
    {"type": "number", "minimum": 0.30000000000000004}, {"type": "integer", "maximum": 0}, {"type": "number", "multipleOf": 2.5, "maximum": 10},
    {"x-kubernetes-int-or-string": True, "maximum": 5}, {"type": "number", "enum": [1, 2.5, 1e21]},
]
values = ["0", "-0.0", "0.3", "0.30000000000000004", "1.1", "1.5", "1.4999999999999999", "2", "3", "21", "1e21", "1.0e+22", "9007199254740993",
          "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1.0e-7", "1.0000001e-7", "123.456", "0.1", "1.0e+300",
          "1.0e-300", "4.35", "2147483648", "'1'", "-3", "-4", "7.0", "14", "1.5e+21", "0.000001", "0.0000001", "12345678901234567890.0",
          "2.5", "10", "12.5", "-1.0e+300", "0x10", "0o17", ".5", "-.5", "1_000"]
props = {("n%d" % i): s for i, s in enumerate(schemas)}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))
n = 0
with open("objects.yaml", "w") as fh:
    for i in range(len(schemas)):
        for v in values:
            fh.write("apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: o%d}\nspec:\n  n%d: %s\n---\n" % (n, i, v))
            n += 1
