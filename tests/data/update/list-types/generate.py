# Writes crd.yaml, old.yaml and new-*.yaml of this case: x-kubernetes-list-type set / map (one and
# two keys) / atomic and plain lists, with duplicates and invalid items in the stored object. The
# set/map uniqueness check is skipped on update when the stored object already fails it anywhere
# (so new duplicates in another list pass: scenario new-invalid adds ["g", "g"] to spec.guardSet);
# items of map lists are correlated by key, items of other lists only as a whole list. Each list
# sits in spec.<list>, in spec.outer[name=o].<list> (a map-list item) and in spec.pl[0].<list> (a
# plain list item). Case-specific scenarios: reorder (the list reversed), append (a valid item
# appended), new-dup (the list's first item appended again).
# Run from this directory; then ../regen.sh list-types.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

I = lambda **kw: dict(type="integer", **kw)
S = lambda **kw: dict(type="string", **kw)
lists = {
  # name: (schema, appended valid item)
  "set": ({"type": "array", "x-kubernetes-list-type": "set", "items": S(maxLength=3)}, "z"),
  "setInt": ({"type": "array", "x-kubernetes-list-type": "set", "items": I(maximum=5)}, 0),
  "setObj": ({"type": "array", "x-kubernetes-list-type": "set",
              "items": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": I(maximum=5)}}}, {"a": 0}),
  "lm": ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "required": ["name"], "properties": {"name": S(), "v": I(maximum=5), "other": S()}}}, {"name": "z", "v": 0}),
  "lm2": ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
           "items": {"type": "object", "required": ["name", "port"], "properties": {"name": S(), "port": I(), "v": I(maximum=5)}}}, {"name": "z", "port": 1}),
  "lmSets": ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "required": ["name"], "properties": {"name": S(),
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": S()}}}}, {"name": "z"}),
  "plain": ({"type": "array", "items": {"type": "object", "properties": {"v": I(maximum=5), "other": S()}}}, {"v": 0}),
  "atomic": ({"type": "array", "x-kubernetes-list-type": "atomic", "items": I(maximum=5)}, 0),
}
# (list, stored value, another invalid value, a valid value)
catalog = [
  ("set", ["a", "b"], ["a", "a"], ["b", "c"]),
  ("set", ["a", "a"], ["b", "b"], ["a"]),
  ("set", ["a", "b", "a"], ["a", "b", "b"], ["a", "b"]),
  ("set", ["abcd"], ["abcde"], ["abc"]),
  ("set", ["abcd", "a"], ["abcd", "b"], ["a"]),
  ("set", ["abcd", "a", "a"], ["abcd", "a", "b", "b"], ["a", "b"]),
  ("setInt", [1, 2], [1, 1], [2, 3]),
  ("setInt", [1, 1], [2, 2], [1]),
  ("setInt", [9], [10], [5]),
  ("setInt", [1, 9], [1, 10], [1, 5]),
  ("setInt", [9, 9], [10, 10], [5]),
  ("setObj", [{"a": 1}, {"a": 2}], [{"a": 1}, {"a": 1}], [{"a": 2}]),
  ("setObj", [{"a": 1}, {"a": 1}], [{"a": 2}, {"a": 2}], [{"a": 1}]),
  ("setObj", [{"a": 9}], [{"a": 10}], [{"a": 5}]),
  ("lm", [{"name": "a", "v": 1}, {"name": "b", "v": 2}], [{"name": "a", "v": 1}, {"name": "a", "v": 2}], [{"name": "a", "v": 3}]),
  ("lm", [{"name": "a", "v": 1}, {"name": "a", "v": 2}], [{"name": "a", "v": 1}, {"name": "a", "v": 3}], [{"name": "a", "v": 1}, {"name": "b", "v": 2}]),
  ("lm", [{"name": "a", "v": 9}], [{"name": "a", "v": 10}], [{"name": "a", "v": 5}]),
  ("lm", [{"name": "a", "v": 1}, {"name": "b", "v": 9}], [{"name": "a", "v": 2}, {"name": "b", "v": 10}], [{"name": "a", "v": 1}, {"name": "b", "v": 5}]),
  ("lm", [{"name": "a", "v": 9}, {"name": "a", "v": 9}], [{"name": "a", "v": 10}, {"name": "a", "v": 10}], [{"name": "a", "v": 5}]),
  ("lm", [{"v": 1}], [{"v": 2}], [{"name": "a", "v": 1}]),
  ("lm2", [{"name": "a", "port": 80}, {"name": "a", "port": 81}], [{"name": "a", "port": 80}, {"name": "a", "port": 80}], [{"name": "a", "port": 82}]),
  ("lm2", [{"name": "a", "port": 80}, {"name": "a", "port": 80}], [{"name": "b", "port": 80}, {"name": "b", "port": 80}], [{"name": "a", "port": 80}]),
  ("lm2", [{"name": "a", "port": 80, "v": 9}, {"name": "b", "port": 80, "v": 1}], [{"name": "a", "port": 80, "v": 10}, {"name": "b", "port": 80, "v": 1}],
          [{"name": "a", "port": 80, "v": 5}, {"name": "b", "port": 80, "v": 1}]),
  ("lm2", [{"name": "a", "port": 80}, {"name": "a"}], [{"name": "a", "port": 80}, {"name": "b"}], [{"name": "a", "port": 80}]),
  ("lmSets", [{"name": "a", "tags": ["x", "y"]}], [{"name": "a", "tags": ["x", "x"]}], [{"name": "a", "tags": ["y"]}]),
  ("lmSets", [{"name": "a", "tags": ["x", "x"]}, {"name": "b", "tags": ["y"]}], [{"name": "a", "tags": ["x", "x", "x"]}, {"name": "b", "tags": ["y"]}],
             [{"name": "a", "tags": ["x"]}, {"name": "b", "tags": ["y"]}]),
  ("lmSets", [{"name": "a", "tags": ["x"]}, {"name": "a", "tags": ["x"]}], [{"name": "a", "tags": ["y"]}, {"name": "a", "tags": ["y"]}], [{"name": "a", "tags": ["x"]}]),
  ("plain", [{"v": 1}, {"v": 2}], [{"v": 9}], [{"v": 3}]),
  ("plain", [{"v": 1}, {"v": 9}], [{"v": 1}, {"v": 10}], [{"v": 1}, {"v": 5}]),
  ("plain", [{"v": 9}, {"v": 9}], [{"v": 10}, {"v": 9}], [{"v": 1}]),
  ("plain", [{"v": 1}, {"v": 1}], [{"v": 1}, {"v": 9}], [{"v": 1}, {"v": 2}]),
  ("atomic", [1, 2], [1, 9], [2, 3]),
  ("atomic", [1, 9], [1, 10], [1, 5]),
  ("atomic", [9, 9], [10], [1, 1]),
]
list_props = {k: v[0] for k, v in lists.items()}
container = {"type": "object", "properties": dict(other=S(), **copy.deepcopy(list_props))}
outer_item = copy.deepcopy(container)
outer_item["properties"]["name"] = S()
outer_item["required"] = ["name"]
spec_props = {"other": S(), "guard": I(maximum=10), "guardSet": {"type": "array", "x-kubernetes-list-type": "set", "items": S()},
              "outer": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": outer_item},
              "pl": {"type": "array", "items": container}}
spec_props.update(copy.deepcopy(list_props))
status = {"type": "object", "properties": {"observedGeneration": I(), "conditions": {"type": "array", "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["type"], "items": {"type": "object", "required": ["type"], "properties": {"type": S(), "status": S(enum=["True", "False", "Unknown"])}}}}}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": spec_props}, "status": status}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

# stored statuses: some with duplicate condition types (a list-map error in status)
statuses = [{"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]},
            {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]},
            {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "Maybe"}]}]
new_status = {"observedGeneration": 2, "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}]}
scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "sibling", "new-invalid", "reorder", "append", "new-dup"]
olds, news = [], {s: [] for s in scenarios}
i = 0
counts = {}
for where in ["s", "n", "p"]:
    for lname, val, inv, fix in catalog:
        counts[lname] = counts.get(lname, 0) + 1
        if where == "s":
            spec_v = {"other": "o", lname: copy.deepcopy(val)}
            get = lambda s: s
        elif where == "n":
            spec_v = {"other": "o", "outer": [{"name": "o", "other": "x", lname: copy.deepcopy(val)}, {"name": "q"}]}
            get = lambda s: s["outer"][0]
        else:
            spec_v = {"other": "o", "pl": [{"other": "x", lname: copy.deepcopy(val)}, {"other": "q"}]}
            get = lambda s: s["pl"][0]
        name = "%s-%s-%d" % (where, lname.lower(), counts[lname] - 1)
        old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": spec_v, "status": copy.deepcopy(statuses[i % 3])}
        olds.append(old)
        i += 1
        def variant(f):
            n = copy.deepcopy(old)
            f(n)
            return n
        news["metadata"].append(variant(touch_metadata))
        news["status"].append(variant(lambda n: n.__setitem__("status", copy.deepcopy(new_status))))
        news["invalid-to-invalid"].append(variant(lambda n: get(n["spec"]).__setitem__(lname, copy.deepcopy(inv))))
        news["invalid-to-valid"].append(variant(lambda n: get(n["spec"]).__setitem__(lname, copy.deepcopy(fix))))
        news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
        news["sibling"].append(variant(lambda n: get(n["spec"]).__setitem__("other", "x2")))
        news["new-invalid"].append(variant(lambda n: n["spec"].__setitem__("guardSet", ["g", "g"])))
        news["reorder"].append(variant(lambda n: get(n["spec"]).__setitem__(lname, list(reversed(val)))))
        news["append"].append(variant(lambda n: get(n["spec"]).__setitem__(lname, copy.deepcopy(val) + [copy.deepcopy(lists[lname][1])])))
        news["new-dup"].append(variant(lambda n: get(n["spec"]).__setitem__(lname, copy.deepcopy(val) + copy.deepcopy(val[:1]))))
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
