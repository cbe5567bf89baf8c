# Writes crd.yaml, old.yaml and new-*.yaml of this case: ObjectMeta on update. Stored objects with
# odd metadata (no resourceVersion / uid / generation / creationTimestamp, invalid labels,
# annotations, owner references, names valid only as path segments, unqualified and invalid
# finalizers, a deletionTimestamp), each once with a valid and once with an invalid spec
# (spec.n above its maximum, tolerated by ratcheting). Scenarios change one piece of metadata
# each (immutable name / namespace / uid, ignored generation / creationTimestamp, finalizers
# added on a deleting object, kind / apiVersion changed, ...); see README.md.
# Run from this directory; then ../regen.sh metadata.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import touch_metadata, write_docs  # noqa: E402

crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                  "spec": {"type": "object", "properties": {"other": {"type": "string"}, "n": {"type": "integer", "maximum": 10}}},
                  "status": {"type": "object", "properties": {"observedGeneration": {"type": "integer"}}}}}}},
               {"name": "v2", "served": False, "storage": False,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

def base(name, uid):
    return {"name": name, "namespace": "default", "resourceVersion": "1", "uid": "00000000-0000-4000-8000-%012d" % uid,
            "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z"}

def drop(k):
    return lambda m: m.pop(k)

def put(**kw):
    return lambda m: m.update(kw)

metas = [
  ("plain", lambda m: None),
  ("no-rv", drop("resourceVersion")),
  ("no-uid", drop("uid")),
  ("no-generation", drop("generation")),
  ("generation-5", put(generation=5)),
  ("no-creation", drop("creationTimestamp")),
  ("labels", put(labels={"app": "x", "example.com/tier": "db"})),
  ("labels-bad-key", put(labels={"-a": "b"})),
  ("labels-bad-value", put(labels={"a": "-x-"})),
  ("annotations", put(annotations={"example.com/a": "b"})),
  ("annotations-bad", put(annotations={"A/b/c": "x"})),
  ("owner-ok", put(ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "11111111-0000-4000-8000-000000000000"}])),
  ("owner-bad", put(ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}])),
  ("finalizer-qualified", put(finalizers=["example.com/keep"])),
  ("finalizer-unqualified", put(finalizers=["cleanup"])),
  ("finalizer-dotted", put(finalizers=["example.com"])),
  ("finalizer-invalid", put(finalizers=["a/b/c"])),
  ("finalizer-standard", put(finalizers=["kubernetes", "orphan"])),
  ("deleting", put(deletionTimestamp="2024-06-01T00:00:00Z", deletionGracePeriodSeconds=0, finalizers=["example.com/keep"])),
  ("deleting-no-finalizers", put(deletionTimestamp="2024-06-01T00:00:00Z", deletionGracePeriodSeconds=0)),
  ("name-upper", put(name="Upper-Case")),
  ("name-dots", put(name="a..b")),
  ("name-percent", put(name="a%b")),
  ("name-dotdot", put(name="..")),
  ("name-long", put(name="a" * 300)),
  ("generate-name", put(generateName="gen-")),
  ("other-namespace", put(namespace="other")),
  ("managed-fields", put(managedFields=[{"manager": "kubectl", "operation": "Update", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
                                         "fieldsV1": {"f:spec": {"f:n": {}}}, "time": "2024-01-01T00:00:00Z"}])),
  ("managed-fields-bad", put(managedFields=[{"manager": "kubectl", "operation": "Bogus", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1"}])),
]

def set_meta(**kw):
    return lambda n: n["metadata"].update(kw)

def del_meta(k):
    return lambda n: n["metadata"].pop(k, None)

def add_finalizer(f):
    return lambda n: n["metadata"].__setitem__("finalizers", n["metadata"].get("finalizers", []) + [f])

def clean_meta(n):
    for k in ("labels", "annotations", "ownerReferences", "managedFields"):
        n["metadata"].pop(k, None)

scenarios = {
  "metadata": touch_metadata,
  "status": lambda n: n.__setitem__("status", {"observedGeneration": 2}),
  "spec": lambda n: n["spec"].__setitem__("other", "changed"),
  "name-change": lambda n: n["metadata"].__setitem__("name", n["metadata"]["name"][:40] + "-renamed"),
  "namespace-change": set_meta(namespace="elsewhere"),
  "namespace-empty": del_meta("namespace"),
  "uid-change": set_meta(uid="22222222-0000-4000-8000-000000000000"),
  "uid-empty": del_meta("uid"),
  "rv-empty": del_meta("resourceVersion"),
  "generation-change": set_meta(generation=42),
  "generation-zero": set_meta(generation=0),
  "creation-change": set_meta(creationTimestamp="2030-01-01T00:00:00Z"),
  "creation-empty": del_meta("creationTimestamp"),
  "deletion-set": set_meta(deletionTimestamp="2030-01-01T00:00:00Z"),
  "deletion-empty": del_meta("deletionTimestamp"),
  "grace-change": set_meta(deletionGracePeriodSeconds=30),
  "labels-invalid": lambda n: n["metadata"].setdefault("labels", {}).__setitem__("bad key", "v"),
  "meta-clean": clean_meta,
  "finalizer-add": add_finalizer("example.com/extra"),
  "finalizer-add-unqualified": add_finalizer("extra"),
  "finalizer-add-invalid": add_finalizer("a/b/c"),
  "finalizers-clear": del_meta("finalizers"),
  "owner-add-bad": set_meta(ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": True},
                                             {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "v", "controller": True}]),
  "kind-change": lambda n: n.__setitem__("kind", "Other"),
  "apiversion-unserved": lambda n: n.__setitem__("apiVersion", "example.com/v2"),
  "apiversion-unknown": lambda n: n.__setitem__("apiVersion", "example.com/v9"),
  "apiversion-other-group": lambda n: n.__setitem__("apiVersion", "other.example.com/v1"),
  "spec-fix": lambda n: n["spec"].__setitem__("n", 1),
}
olds, news = [], {s: [] for s in scenarios}
i = 0
for n_val in (1, 99):
    for label, f in metas:
        m = base("%s-%s" % (label, "valid" if n_val == 1 else "invalid"), i)
        f(m)
        if label.startswith("name-"):
            m["name"] = m["name"] + ("" if n_val == 1 else "-2") if label != "name-dotdot" else (".." if n_val == 1 else "...")
        old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": m, "spec": {"other": "o", "n": n_val}, "status": {"observedGeneration": 1}}
        olds.append(old)
        i += 1
        for s, g in scenarios.items():
            n = copy.deepcopy(old)
            g(n)
            news[s].append(n)
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
