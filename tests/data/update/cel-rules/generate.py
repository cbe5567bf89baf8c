# Writes crd.yaml, old.yaml and new-*.yaml of this case: x-kubernetes-validations rules on scalar
# fields, objects, map values and whole maps, plain-list items, set items, list-map items and whole
# lists, at spec and at the root (not in allOf branches: a CRD may not have them); messageExpression, reason, fieldPath;
# transition rules (oldSelf), optionalOldSelf, a hand-ratcheted rule, a rule failing at runtime
# (no such key); Kubernetes CEL libraries (quantity, url, ip, cidr, semver, regex, lists, format,
# duration). Rules that fail on an unchanged value without oldSelf are ratcheted into warnings.
# Each probe sits in spec.g.<probe>, and a subset also in spec.lm[name=p], spec.pl[0] (a plain
# list item: oldSelf rules are not allowed there) and spec.mv.p. Extra scenario `blocking`: spec.guardLen made too
# long (a blocking schema error: CEL is skipped). new-invalid: spec.guard fails its rule.
# transition-added: the spec.g / lm / mv item gets mono and oo (rules with oldSelf) where the
# stored object has none, or increases them (plain-list and spec-level objects: sent unchanged).
# Run from this directory; then ../regen.sh cel-rules.
import copy, json
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import meta, touch_metadata, write_docs  # noqa: E402

def R(rule, **kw):
    return dict(rule=rule, **kw)

def S(*rules, **kw):
    s = dict(type="string", maxLength=64)
    s.update(kw)
    if rules:
        s["x-kubernetes-validations"] = list(rules)
    return s

def I(*rules, **kw):
    s = dict(type="integer", **kw)
    if rules:
        s["x-kubernetes-validations"] = list(rules)
    return s

def O(props, *rules, **kw):
    s = dict(type="object", **kw)
    if props is not None:
        s["properties"] = props
    if rules:
        s["x-kubernetes-validations"] = list(rules)
    return s

def A(items, *rules, **kw):
    s = dict(type="array", maxItems=10, items=items, **kw)
    if rules:
        s["x-kubernetes-validations"] = list(rules)
    return s

probes = {
  # name: (schema, valid stored values, invalid stored values, fix(old) or None, break(old) or None)
  # defaults: fix = another valid value, break = another invalid value (the first invalid one for a valid stored value)
  "n": (I(R("self <= 10", message="must be at most 10")), [1, 10], [11, 50, 99]),
  "me": (S(R("self.startsWith('x')", messageExpression="'must start with x, got ' + self")), ["x1", "xyz"], ["a", "b", ""]),
  "rs": (I(R("self >= 0", reason="FieldValueForbidden", message="negative")), [0, 3], [-1, -2]),
  "rq": (S(R("self.size() > 1", reason="FieldValueRequired", message="must have two characters or more")), ["ab", "abc"], ["", "a"]),
  "fp": (O({"x": I(), "y": I()}, R("self.x <= self.y", fieldPath=".x", message="x above y")), [{"x": 1, "y": 2}, {"x": 2, "y": 2}],
         [{"x": 3, "y": 2}, {"x": 4, "y": 2}, {"x": 5, "y": 1}]),
  "ob": (O({"a": I(), "b": S(), "c": S()}, R("has(self.a) || has(self.b)", message="a or b")), [{"a": 1}, {"b": "x"}], [{}, {"c": "x"}, {"c": "y"}]),
  "imm": (S(R("self == oldSelf", message="immutable")), ["a", "b"], [], lambda v: v, lambda v: v + "-changed"),
  "mono": (I(R("self >= oldSelf", message="may not decrease")), [5, 7], [], lambda v: v + 1, lambda v: v - 1),
  # trc and oo use oldSelf, so they are not checked on create: trc's "invalid" stored values pass a
  # create (the rule is skipped there), oo's stored 50 fails one (oldSelf is none on create) but
  # is reachable through updates
  "trc": (S(R("self.size() <= 3 || self == oldSelf", message="at most 3 characters unless unchanged")), ["abc", "a"], ["abcd", "abcde"],
          lambda v: "ab", lambda v: v + "f" if len(v) > 3 else "abcdef"),
  "oo": (I(R("oldSelf.hasValue() ? self >= oldSelf.value() : self <= 10", optionalOldSelf=True, message="above 10 on create or decreased")),
         [5, 50], [], lambda v: v + 1, lambda v: v - 1),
  "mix": (S(R("self.startsWith('a')"), maxLength=5), ["abc", "a"], ["bbbbbb", "bb", "abcdefg"]),
  "mapv": (O(None, additionalProperties=I(R("self <= 5"))), [{"a": 1}, {"a": 5, "b": 0}], [{"a": 9}, {"a": 1, "b": 9}, {"a": 2, "b": 9}]),
  "mapw": (O(None, R("self.size() <= 2"), additionalProperties=S(), maxProperties=10), [{"a": "1"}, {}],
           [{"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2", "c": "4"}]),
  "mapAtomicV": (O(None, additionalProperties=I(R("self <= 5")), **{"x-kubernetes-map-type": "atomic"}), [{"a": 1}, {}],
                 [{"a": 9}, {"a": 1, "b": 9}, {"a": 2, "b": 9}]),
  "li": (A(I(R("self <= 5"))), [[1, 5], []], [[9], [1, 9], [2, 9]]),
  "si": (A(I(R("self <= 5")), **{"x-kubernetes-list-type": "set"}), [[1, 5], []], [[9], [1, 9], [2, 9]]),
  "lmi": (A(O({"name": S(), "v": I()}, R("self.v <= 5", message="v above 5"), required=["name"]), **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
          [[{"name": "a", "v": 1}], []], [[{"name": "a", "v": 9}], [{"name": "a", "v": 1}, {"name": "b", "v": 9}], [{"name": "a", "v": 2}, {"name": "b", "v": 9}]]),
  "lw": (A(S(), R("self.all(x, x.size() <= 3)", message="items at most 3 long")), [["a", "abc"], []], [["abcd"], ["abcde"], ["a", "abcd"]]),
  # (x-kubernetes-validations inside allOf are not allowed in a CRD: "must be empty to be structural")
  "rt": (O({"m": O(None, additionalProperties=S(), maxProperties=5)}, R("self.m['k'] == 'v'", message="m.k must be v")),
         [{"m": {"k": "v"}}, {"m": {"k": "v", "j": "w"}}], [{"m": {"k": "w"}}, {"m": {}}, {"m": {"j": "v"}}]),
  "q": (S(R("isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0", message="a quantity up to 1Gi")), ["1Gi", "500Mi"], ["2Gi", "1Ti", "abc"]),
  "u": (S(R("isURL(self) && url(self).getScheme() == 'https'", message="an https URL")), ["https://example.com", "https://a.b/c"],
        ["http://example.com", "not a url", "ftp://x"]),
  "ip": (S(R("isIP(self) && ip(self).family() == 4", message="an IPv4 address")), ["10.0.0.1", "192.168.0.1"], ["::1", "300.1.1.1", "x"]),
  "cidr": (S(R("isCIDR(self) && cidr(self).prefixLength() >= 8", message="a CIDR of /8 or longer")), ["10.0.0.0/8", "10.0.0.0/16"], ["10.0.0.0/4", "0.0.0.0/0", "x"]),
  "sv": (S(R("isSemver(self) && semver(self).isGreaterThan(semver('1.0.0'))", message="a semver above 1.0.0")), ["1.2.3", "2.0.0"], ["0.9.0", "1.0.0", "v1"]),
  "rx": (S(R("self.matches('^[a-z0-9]+$') && self.find('[0-9]+') == ''", message="lowercase letters only")), ["abc", "z"], ["ab1", "ABC", ""]),
  "ls": (A(I(), R("self.isSorted() && self.sum() <= 10", message="sorted, sum at most 10")), [[1, 2, 3], []], [[3, 1], [5, 6], [1, 20]]),
  "fm": (S(R("!format.dns1123Label().validate(self).hasValue()", messageExpression="'not a DNS label: ' + self")),
         ["abc", "a-b"], ["A", "a_b", "-a"]),
  "du": (S(R("duration(self) <= duration('1h')", message="at most 1h")), ["30m", "1h"], ["2h", "90m"]),
}
oldself_probes = ["imm", "mono", "trc", "oo"]
subset = ["n", "me", "fp", "ob", "imm", "mono", "trc", "oo", "mix", "mapv", "li", "lmi", "rt", "q"]
item_props = {"other": S()}
item_props.update({k: v[0] for k, v in probes.items()})
item = O(item_props)
# oldSelf may not be used under a plain list (the CRD would be rejected): the plain-list item has no transition rules
pl_item = copy.deepcopy(item)
for k in oldself_probes:
    del pl_item["properties"][k]
lm_item = copy.deepcopy(item)
lm_item["properties"]["name"] = S()
lm_item["required"] = ["name"]
spec = O({"other": S(), "guard": S(R("self != 'bad'", message="guard must not be bad")), "guardLen": S(maxLength=3),
          "rootProbe": S(), "specProbe": S(),
          "g": item,
          "lm": A(lm_item, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
          "pl": A(pl_item), "mv": O(None, additionalProperties=item, maxProperties=5)},
         R("!has(self.specProbe) || !self.specProbe.startsWith('bad')", messageExpression="'spec-level rule: specProbe is ' + self.specProbe"))
status = O({"observedGeneration": I(), "phase": S()})
root = O({"spec": spec, "status": status}, R("!has(self.spec.rootProbe) || !self.spec.rootProbe.startsWith('bad')", message="root rule: rootProbe must not start with bad"))
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}, "schema": {"openAPIV3Schema": root}}]}}
open("crd.yaml", "w").write(json.dumps(crd))

def place(where, probe):
    if where == "g":
        return {"other": "o", "g": probe}, lambda s: s["g"]
    if where == "lm":
        return {"other": "o", "lm": [dict(name="p", **probe), {"name": "q", "other": "q"}]}, lambda s: s["lm"][0]
    if where == "pl":
        return {"other": "o", "pl": [probe, {"other": "q"}]}, lambda s: s["pl"][0]
    if where == "mv":
        return {"other": "o", "mv": {"p": probe, "q": {"other": "q"}}}, lambda s: s["mv"]["p"]

scenarios = ["metadata", "status", "invalid-to-invalid", "invalid-to-valid", "unrelated", "sibling", "new-invalid", "blocking", "transition-added"]
olds, news = [], {s: [] for s in scenarios}

def add_transition_fields(c):
    """fields with transition rules that the stored object lacks (no old value): mono (plain transition
    rule: skipped) and oo (optionalOldSelf: evaluated with oldSelf none, so self <= 10 applies);
    present ones are increased (allowed). Not applied to plain-list items (no such fields there)
    nor to the spec-level probes: those objects are sent unchanged."""
    for k, added in (("mono", 3), ("oo", 50)):
        c[k] = c[k] + 100 if isinstance(c.get(k), int) else added
i = 0
def add(name, spec_v, get, fname, fix, brk, trans):
    global i
    old = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta(name, i), "spec": spec_v, "status": {"observedGeneration": 1}}
    olds.append(old)
    i += 1
    def variant(f):
        n = copy.deepcopy(old)
        f(n)
        return n
    news["metadata"].append(variant(touch_metadata))
    news["status"].append(variant(lambda n: n.__setitem__("status", {"observedGeneration": 2, "phase": "Ready"})))
    news["invalid-to-invalid"].append(variant(lambda n: get(n["spec"]).__setitem__(fname, brk)))
    news["invalid-to-valid"].append(variant(lambda n: get(n["spec"]).__setitem__(fname, fix)))
    news["unrelated"].append(variant(lambda n: n["spec"].__setitem__("other", "o2")))
    news["sibling"].append(variant(lambda n: get(n["spec"]).__setitem__("other", "x2")))
    news["new-invalid"].append(variant(lambda n: n["spec"].__setitem__("guard", "bad")))
    news["blocking"].append(variant(lambda n: n["spec"].__setitem__("guardLen", "toolong")))
    news["transition-added"].append(variant(lambda n: trans and add_transition_fields(get(n["spec"]))))

for where in ["g", "lm", "pl", "mv"]:
    for pname, p in probes.items():
        if where != "g" and pname not in subset or where == "pl" and pname in oldself_probes:
            continue
        schema, valid, invalid = p[:3]
        for kind, vals in (("v", valid if where == "g" else valid[:1]), ("i", invalid)):
            for j, val in enumerate(vals):
                if len(p) > 3:
                    fix, brk = p[3](val), p[4](val)
                else:
                    brk = invalid[(j + 1) % len(invalid)] if kind == "i" else invalid[0]
                    fix = valid[1] if val == valid[0] else valid[0]
                spec_v, get = place(where, {"other": "x", pname: copy.deepcopy(val)})
                add("%s-%s-%s%d" % (where, pname.lower(), kind, j), spec_v, get, pname, copy.deepcopy(fix), copy.deepcopy(brk), where != "pl")
# the root rule and the spec-level rule (both on fields of spec)
for pname in ["rootProbe", "specProbe"]:
    for kind, vals in (("v", ["ok", "fine"]), ("i", ["bad", "bad2"])):
        for j, val in enumerate(vals):
            brk = "bad3" if kind == "i" else "bad"
            fix = "ok2"
            add("spec-%s-%s%d" % (pname.lower(), kind, j), {"other": "o", pname: val}, lambda s: s, pname, fix, brk, False)
write_docs("old.yaml", olds)
for s in scenarios:
    write_docs("new-%s.yaml" % s, news[s])
