# Writes crd.yaml and objects.yaml of this case: objects of a namespaced CRD whose metadata
# carries tricky names, generateNames, labels, annotations and finalizers (one field varied
# per object). Run from this directory; then ../regen.sh object-metadata.
import json
names = ["a", "A", "a-b", "a.b", "a_b", "-a", "a-", ".a", "a.", "a..b", "0", "1a", "a" * 63, "a" * 64, "a" * 253, "a" * 254, ("a" * 63 + ".") * 3 + "a" * 61,
         "é", "a b", "a/b", "a%b", "..", ".", "a:b", "xn--a", "a" * 62 + ".b", "ab-" * 20 + "c"]
label_keys = ["a", "A", "a-b", "a_b", "a.b", "-a", "a-", "_a", "a_", "example.com/a", "Example.com/a", "example.com/", "/a", "a/b/c", "a" * 63, "a" * 64,
              "example.com/" + "a" * 64, "a" * 254 + "/a", "kubernetes.io/x", "é", "a b", "a@b"]
label_values = ["", "a", "A", "a-b", "a_b", "a.b", "-a", "a-", "_a", "a_", ".a", "a" * 63, "a" * 64, "é", "a b", "a/b", "a:b"]
annotation_keys = ["a", "example.com/a", "A/b", "a" * 64, "example.com/" + "a" * 63, "a b", "-a", "a/b/c", "x" * 253 + "/a"]
finalizers = ["a", "example.com/a", "a/b/c", "Example.com/a", "kubernetes", "kubernetes.io/a", "a" * 64, "example.com/" + "a" * 64, "a b", "/a", "example.com/"]
metas = []
for n in names:
    metas.append({"name": n})
# (generateName is left out: an invalid one gives an error naming the generated name, whose
# random suffix cannot be compared.)
for k in label_keys:
    metas.append({"name": "x", "labels": {k: "v"}})
for v in label_values:
    metas.append({"name": "x", "labels": {"k": v}})
for k in annotation_keys:
    metas.append({"name": "x", "annotations": {k: "v"}})
metas.append({"name": "x", "annotations": {"a": "x" * 262144}})
metas.append({"name": "x", "annotations": {"a": "x" * 262143}})
for f in finalizers:
    metas.append({"name": "x", "finalizers": [f]})
metas.append({"name": "x", "finalizers": ["example.com/a", "example.com/a"]})
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))
with open("objects.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for m in metas:
        fh.write(json.dumps({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": m}, ensure_ascii=False) + "\n---\n")
