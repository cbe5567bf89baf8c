# Writes crd.yaml and objects.yaml of this case: the runtime cost of a rule whose cost is
# mostly that of the standard macros over strings, run on every item of a list until the
# per-object budget (10,000,000) runs out. Run from this directory, then write the oracle's
# verdicts (the upstream code, see ../shared/oracle/README.md) beside them:
#   python3 generate.py && "$ORACLE" validate crd.yaml objects.yaml > oracle.jsonl
# (the tests: tests/cli/oracle_cases.rs, and crd-audit-engine's
# cel::runtime_cost_tests::budget_runs_out_as_upstream).
#
# The items' rule, self.s.split('').all(c, self.s.split('').filter(d, d == c).size() > 0),
# costs (cel-go's runtime cost, as the oracle charges it) for a string s of n one-byte
# characters:
#   self.s.split('')     2 + ceil(n * 0.2)   (the selection, the split)
#   all, per element     the loop condition @not_strictly_false(accu) 2, the accumulator 1,
#                        then the predicate:
#     filter             per element d == c 3; when true accu + [d] 13; when false nothing
#                        (the accumulator as the conditional's branch is not observed);
#                        its result 1
#     .size() > 0        2
#   all's result         1
# Each list has 29 or 40 items; spec's own rule spends a chosen amount first (lists.range
# over `n` and a match over `pad`), so that what is left is exactly, or one unit short of,
# the cost of the list's 29 items.
import json
from collections import Counter

BUDGET = 10_000_000
RULE = "self.s.split('').all(c, self.s.split('').filter(d, d == c).size() > 0)"
PAD_RULE = "!has(self.n) || lists.range(self.n).all(i, true) && self.pad.matches('^a*$')"


def ceil_div(a, b):
    return -(-a // b)


def item_cost(s):
    n = len(s)
    split = 2 + ceil_div(n, 5)
    pred = split + 3 * n + 1 + 2
    matches = sum(k * k for k in Counter(s).values())
    return split + n * (2 + 1 + pred) + 13 * matches + 1


def pad_cost(n, pad):
    # !has(self.n) 2; lists.range(self.n).all(i, true) 2 + (n + 11) + 3n + 1;
    # self.pad.matches('^a*$') 2 + ceil((len + 1) / 10)
    return 2 + 4 * n + 14 + 2 + ceil_div(len(pad) + 1, 10)


def padding(target):
    """n and pad whose pad_cost is target."""
    for extra in range(1, 5):
        n, r = divmod(target - 18 - extra, 4)
        if r == 0 and n >= 0:
            return n, "a" * (10 * extra - 5)
    raise ValueError(target)


CYCLE26 = "".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(300))
ABC = "".join("aaabbc"[i % 6] for i in range(300))

crd = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.cost.example.com"},
    "spec": {
        "group": "cost.example.com",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                  "listKind": "WidgetList"},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": PAD_RULE}],
                "properties": {
                    "n": {"type": "integer", "minimum": 0},
                    "pad": {"type": "string"},
                    "items": {"type": "array", "maxItems": 40, "items": {
                        "type": "object",
                        "x-kubernetes-validations": [{"rule": RULE}],
                        "properties": {"s": {"type": "string", "maxLength": 300}},
                    }},
                },
            }}}},
        }],
    },
}


def obj(name, s, count, spend=None):
    spec = {"items": [{"s": s} for _ in range(count)]}
    if spend is not None:
        spec["n"], spec["pad"] = padding(spend)
        assert pad_cost(spec["n"], spec["pad"]) == spend
    return {"apiVersion": "cost.example.com/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": spec}


C26 = item_cost(CYCLE26)
assert C26 == 335_547
assert item_cost(ABC) == 745_463
objects = [
    # the budget runs out at item 29 (10,000,000 // 335,547)
    obj("cycle26-40-items", CYCLE26, 40),
    # ... and at item 13 (10,000,000 // 745,463)
    obj("abc-40-items", ABC, 40),
    # what is left for the list is exactly the cost of its 29 items: all of them run
    obj("cycle26-29-items-exact-budget", CYCLE26, 29, BUDGET - 29 * C26),
    # one unit short: the budget runs out at the last item (28)
    obj("cycle26-29-items-one-short", CYCLE26, 29, BUDGET - 29 * C26 + 1),
]

with open("crd.yaml", "w") as f:
    f.write(json.dumps(crd) + "\n")
with open("objects.yaml", "w") as f:
    f.write("# Written by generate.py (YAML documents in JSON form).\n")
    for o in objects:
        f.write(json.dumps(o) + "\n---\n")
