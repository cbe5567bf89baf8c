# Writes crd.yaml and objects.yaml of this case: CEL results whose text or place depends on
# details of the upstream code. Run from this directory; then ../regen.sh cel-messages.
#
# * the runtime cost budget (10,000,000 per object): spec's own rules spend a chosen amount
#   (through the `coarse`, `bits` and `pad` values), then the rules of one list (of 1 or 16
#   items; strings, objects, lists of lists, a map of lists) spend the rest: the budget is
#   one unit short of, exactly, or one unit more than the cost up to a chosen rule
#   evaluation ("+0 around evaluation 3": what is left after spec's rules is exactly the
#   cost of the list's first four evaluations). What follows may be a node whose only rule
#   costs nothing (`false`) or is skipped (a transition rule on create), a second rule of
#   the same node, or a messageExpression (errors at the rule's fieldPath).
# * fieldPath: rules with fieldPaths into properties, map keys and nested maps, on nodes
#   below lists and maps (keys with dots, slashes, quotes, brackets, backslashes, empty).
# * durations in messages: string(), '%s'.format of a duration and of a list, timestamp
#   differences, from values of format duration and date-time (negative, sub-second, the
#   extremes of int64 nanoseconds).
import json

BUDGET = 10_000_000
S = {"type": "string"}
INT = {"type": "integer", "minimum": 0}

def rule(r, **kw):
    d = {"rule": r}
    d.update(kw)
    return d

# Rule costs (cel-go's runtime cost, as the oracle charges it): matching a string costs a
# unit per 10 characters, making a list with lists.range a unit per element.
S1000 = {"type": "string", "maxLength": 1000}
R = "self.matches('^a*$')"                        # 2 + length/10
def cost_r(s): return 2 + len(s) // 10
RS = "self.s.matches('^a*$')"                     # 3 + length/10
def cost_rs(s): return 3 + len(s) // 10
MSG = "!self.s.matches('^a*$')"                   # 4 + length/10, false
def cost_msg(s): return 4 + len(s) // 10
MSG_EXPR = "self.s.size() > 5 ? 's is long' : 's is short'"  # 4
COST_MSG_EXPR = 4
SIZE = "self.size() >= 0"                         # 3
COST_SIZE = 3
# spec's rules: `coarse` of the 12 big ones run (800018 each; 5 each when not), every bit of
# `bits` (20 of them) set adds 13 + 2^k to its rule's 10, and `pad` costs 5 + its length/10.
COARSE, BITS = 12, 20
def coarse_rule(j):
    return rule("!has(self.coarse) || self.coarse <= %d || lists.range(800000).size() >= 0" % j)
def bit_rule(k):
    return rule("!has(self.bits) || self.bits.size() <= %d || self.bits[%d] == 0 || lists.range(%d).size() >= 0" % (k, k, 1 << k))
PAD = rule("!has(self.pad) || self.pad.matches('^a*$')")

def spec_burn(total):
    """coarse, bits and pad values that make spec's own rules cost exactly `total`."""
    for g in range(COARSE, -1, -1):
        rest = total - g * 800018 - (COARSE - g) * 5 - BITS * 10 - 5
        if rest < 0:
            continue
        for pad in range(0, 1001):
            for p in range(0, BITS + 1):
                v = rest - pad - 13 * p
                if 0 <= v < (1 << BITS) and bin(v).count("1") == p:
                    return {"coarse": g, "bits": [(v >> k) & 1 for k in range(BITS)], "pad": "a" * (10 * pad)}
        break
    raise ValueError("cannot burn %d" % total)

item_obj = lambda extra: {"type": "object", "required": ["s"], "properties": dict({"s": S1000}, **extra)}
lists = {
    # every item: R
    "strs": {"type": "array", "maxItems": 64, "items": dict(S1000, **{"x-kubernetes-validations": [rule(R)]})},
    # every item: RS, then its property f with one rule that costs nothing
    "free": {"type": "array", "maxItems": 64, "items": dict(item_obj({"f": dict(S, **{"x-kubernetes-validations": [rule("false", message="free rule")]})}),
                                                            **{"x-kubernetes-validations": [rule(RS)]})},
    # every item: RS, then its property t with only a transition rule (skipped on create)
    # (a map list: transition rules need items that pair with old ones)
    "trans": {"type": "array", "maxItems": 64, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
              "items": dict(item_obj({"k": INT, "t": dict(S, maxLength=8, **{"x-kubernetes-validations": [rule("self == oldSelf", message="transition rule")]})}),
                            required=["k", "s"], **{"x-kubernetes-validations": [rule(RS)]})},
    # every item: R, then a second rule of the same node that costs nothing
    "second": {"type": "array", "maxItems": 64, "items": dict(S1000, **{"x-kubernetes-validations": [rule(R), rule("false", message="second rule")]})},
    # every item: a failing rule, then its messageExpression (errors at the fieldPath)
    "msg": {"type": "array", "maxItems": 64, "items": dict(item_obj({}), **{"x-kubernetes-validations": [rule(MSG, messageExpression=MSG_EXPR, fieldPath=".s")]})},
    # a list of lists, rules at both list levels and on the items
    "nested": {"type": "array", "maxItems": 8, "x-kubernetes-validations": [rule(SIZE)],
               "items": {"type": "array", "maxItems": 8, "x-kubernetes-validations": [rule(SIZE)],
                         "items": dict(S1000, **{"x-kubernetes-validations": [rule(R)]})}},
    # a map (one key per object) of lists
    "mapped": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "array", "maxItems": 16, "x-kubernetes-validations": [rule(SIZE)],
                                                                            "items": dict(S1000, **{"x-kubernetes-validations": [rule(R)]})}},
}

def trace(kind, value):
    """The costs of the rule evaluations of one list value, in upstream's order."""
    out = []
    if kind in ("strs", "second"):
        for s in value:
            out.append(cost_r(s))
            if kind == "second":
                out.append(0)
    elif kind in ("free", "trans"):
        for it in value:
            out += [cost_rs(it["s"]), 0]
    elif kind == "msg":
        for it in value:
            out += [cost_msg(it["s"]), COST_MSG_EXPR]
    elif kind == "nested":
        out.append(COST_SIZE)
        for inner in value:
            out.append(COST_SIZE)
            out += [cost_r(s) for s in inner]
    elif kind == "mapped":
        for inner in value.values():
            out.append(COST_SIZE)
            out += [cost_r(s) for s in inner]
    return out

def items(kind, k, seed):
    ss = ["a" * ((seed * 71 + i * 137) % 120) for i in range(k)]
    if kind in ("strs", "second"):
        return ss
    if kind == "free":
        return [{"s": s, "f": "x"} for s in ss]
    if kind == "trans":
        return [{"k": i, "s": s, "t": "x"} for i, s in enumerate(ss)]
    if kind == "msg":
        return [{"s": s} for s in ss]
    if kind == "nested":
        return [ss[i:i + 3] for i in range(0, k, 3)]
    if kind == "mapped":
        return {{1: "a.b/c", 16: "it's [x]"}.get(k, ""): ss}

objects = []
def obj(spec, note):
    objects.append({"apiVersion": "example.com/v1", "kind": "Thing",
                    "metadata": {"name": "o%d" % len(objects), "annotations": {"note": note}}, "spec": spec})

# --- budget ---
for kind in lists:
    for k in (1, 16):
        value = items(kind, k, k)
        costs = trace(kind, value)
        sums = [sum(costs[:i + 1]) for i in range(len(costs))]
        # run out before anything, after the first or second evaluation, or one of the last two
        n = len(costs)
        for t in sorted({-1, 0, 1, n - 2, n - 1} & set(range(-1, n))):
            left = 0 if t < 0 else sums[t]
            for delta in (-1, 0, 1):
                if left + delta < 0:
                    continue
                spec = spec_burn(BUDGET - (left + delta))
                spec[kind] = value
                obj(spec, "%s: %d items, %+d around evaluation %d" % (kind, k, delta, t))
# spec's own rules run out
obj({"coarse": 12, "bits": [1] * BITS}, "spec rules over budget")
obj(dict(spec_burn(BUDGET), strs=["a"]), "spec rules spend exactly the budget")
obj(dict(spec_burn(BUDGET - 1), strs=["a"]), "spec rules leave 1")

# --- fieldPath ---
KEYS = ["k", "a.b", "a/b", "", "\u00fc", "x y", "[", "]", "'", "a\\b", "k.1"]
S8 = {"type": "string", "maxLength": 8}
fp_item = {"type": "object", "properties": {"b": S8, "m": {"type": "object", "maxProperties": 8, "additionalProperties": S8}},
           "x-kubernetes-validations": [
               rule("!has(self.b) || self.b != 'bad'", message="b is bad", fieldPath=".b"),
               rule("!has(self.b) || self.b != 'bad'", message="b is bad (quoted)", fieldPath="['b']"),
               rule("!has(self.m) || !('bad' in self.m)", message="m has bad", fieldPath=".m['bad']"),
               rule("!has(self.m) || !('k.1' in self.m)", message="m has k.1", fieldPath="['m']['k.1']"),
               rule("!has(self.m) || !('a/b' in self.m)", messageExpression="'m has ' + 'a/b'", fieldPath=".m.a/b"),
               rule("!has(self.m) || !(\"it's\" in self.m)", message="m has it's", fieldPath=".m['it\\'s']", reason="FieldValueForbidden"),
               rule("!has(self.m) || !('' in self.m)", message="m has empty key", fieldPath=".m['']", reason="FieldValueRequired"),
           ]}
fp_map = {"type": "object", "maxProperties": 8, "additionalProperties": S8, "x-kubernetes-validations": [
    rule("!('bad' in self)", message="inner bad", fieldPath=".bad"),
    rule("!('a.b' in self)", message="inner a.b", fieldPath="['a.b']"),
    rule("!('x]' in self)", message="inner x]", fieldPath="['x]']"),
]}
fp = {"type": "object", "properties": {
    "l": {"type": "array", "maxItems": 4, "items": fp_item},
    "mp": {"type": "object", "maxProperties": 4, "additionalProperties": fp_item},
    "mm": {"type": "object", "maxProperties": 4, "additionalProperties": fp_map},
    "o": fp_item,
}, "x-kubernetes-validations": [
    rule("!has(self.o) || !has(self.o.b) || self.o.b != 'outer'", message="o.b is outer", fieldPath=".o.b"),
    rule("!has(self.mm) || !('q' in self.mm) || !('z' in self.mm['q'])", message="mm q z", fieldPath=".mm['q'].z"),
    rule("!has(self.mp) || !('k' in self.mp) || self.mp['k'].m.size() < 3", message="mp k m", fieldPath=".mp.k['m']"),
]}
ITEM_VALUES = [{"b": "bad"}, {"b": "ok"}, {"b": "outer"}, {"m": {"bad": "1", "k.1": "2"}}, {"m": {"a/b": "", "it's": "", "": ""}},
               {"b": "bad", "m": {"bad": "", "k.1": "", "a/b": "", "it's": "", "": ""}}]
for i, iv in enumerate(ITEM_VALUES):
    obj({"fp": {"l": [{"b": "ok"}, iv]}}, "fieldPath below a list item")
    obj({"fp": {"o": iv}}, "fieldPath below a property")
    for key in KEYS:
        obj({"fp": {"mp": {key: iv}}}, "fieldPath below a map value")
for key in KEYS:
    obj({"fp": {"mm": {key: {"bad": "", "a.b": "", "x]": "", "z": ""}}}}, "fieldPath below a map of maps")
obj({"fp": {"mm": {"q": {"z": ""}}, "mp": {"k": {"m": {"1": "", "2": "", "3": ""}}}}}, "fieldPaths from the parent")

# --- durations ---
DURATIONS = ["0s", "1ns", "-1ns", "1.5s", "-1.5s", "0.5s", "-0.999999999s", "1h2m3.004005006s", "-662774400.001s",
             "662774400.001s", "123456789.012345678s", "-123456789.012345678s", "2562047h47m16.854775807s",
             "-2562047h47m16.854775808s", "1.0000000001s", "0.000000001s", "87600h", "-87600h0m0.000000001s",
             "1us", "1\u00b5s", "1ms", "24h0m0.000000001s", "315576000.001s", "9007199254.740993s", "-4503599627.3704995s"]
TIMESTAMPS = [("1970-01-01T00:00:00.001Z", "1949-01-01T00:00:00Z"), ("1949-01-01T00:00:00Z", "1970-01-01T00:00:00.001Z"),
              ("2000-01-01T00:00:00.123456789Z", "2100-01-01T00:00:00Z"), ("2020-02-29T12:00:00Z", "2020-02-29T12:00:00.000000001Z"),
              ("1700-01-01T00:00:00Z", "1990-06-15T08:30:00.5+02:00"), ("2262-04-11T23:47:16.854775807Z", "1970-01-01T00:00:00Z")]
for d in DURATIONS:
    obj({"dur": d}, "duration in messages")
for a, b in TIMESTAMPS:
    obj({"span": {"from": a, "to": b}}, "timestamp difference in messages")

spec_props = {"coarse": dict(INT, maximum=COARSE), "bits": {"type": "array", "maxItems": BITS, "items": INT}, "pad": dict(S, maxLength=10000), "fp": fp,
              "dur": {"type": "string", "format": "duration", "maxLength": 64, "x-kubernetes-validations": [
                  rule("self == duration('0s')", messageExpression="string(self)"),
                  rule("self == duration('1s')", messageExpression="'%s'.format([self])"),
                  rule("self == duration('2s')", messageExpression="'%s'.format([[self]])"),
              ]},
              "span": {"type": "object", "required": ["from", "to"], "properties": {
                  "from": {"type": "string", "format": "date-time", "maxLength": 64},
                  "to": {"type": "string", "format": "date-time", "maxLength": 64}},
                  "x-kubernetes-validations": [rule("self.from == self.to", messageExpression="string(self.to - self.from)")]}}
spec_props.update(lists)
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
       "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": spec_props,
                                                              "x-kubernetes-validations": [coarse_rule(j) for j in range(COARSE)] + [bit_rule(k) for k in range(BITS)] + [PAD]}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd) + "\n")
with open("objects.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for o in objects:
        fh.write(json.dumps(o) + "\n---\n")
print(len(objects), "objects")
