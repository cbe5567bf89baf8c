# Writes crds.yaml: one CRD per CEL rule, each rule using one library, macro, syntax or
# behaviour of the Kubernetes CEL environment, with the release that brought it into the
# environment of new expressions (the base environment's IntroducedVersion; a 1.N server
# compiles new rules at compatibility version 1.(N-1)). regen.sh then asks the upstream code
# about every CRD at every release from 1.27 to 1.36 (expected-1.N.jsonl).
import json

# (name, rule, extra fields of the rule). Names are the CRDs' plurals.
CASES = [
    # Present in every release: the standard library, the Kubernetes URL, regex and list
    # libraries, the strings extension (version 0), homogeneous aggregate literals.
    ("base-std", "self.s.startsWith('a') && self.i + 1 > 0 && size(self.l) < 9", {}),
    ("base-macros", "self.l.all(x, x != '') && self.m.exists(k, k == 'a') && self.l.exists_one(x, x == 'a') && self.li.map(x, x * 2).size() >= 0 && self.l.filter(x, x != '').size() >= 0", {}),
    ("base-url", "isURL(self.s) && url(self.s).getHost() != ''", {}),
    ("base-regex", "self.s.find('[a-z]+') != '' && self.s.findAll('a').size() > 0", {}),
    ("base-k8s-lists", "self.li.isSorted() && self.li.sum() > 0 && self.li.min() >= 0 && self.l.indexOf('a') >= 0", {}),
    ("base-strings", "self.s.lowerAscii().upperAscii().trim().replace('a', 'b').substring(0).charAt(0) != '' && self.s.split(',').size() > 0 && self.s.indexOf('a') >= 0", {}),
    ("base-strings-join", "self.l.join(',') != '' && ['a', 'b'].join() == 'ab'", {}),
    ("base-homogeneous-list", "[1, 'a'].size() == 2", {}),
    ("base-homogeneous-map", "{'a': 1, 'b': 'c'}.size() == 2", {}),
    ("base-dyn-list", "[1, dyn('a')].size() == 2", {}),
    ("base-escaped-keyword-field", "self.__namespace__ == 'a'", {}),
    ("base-undeclared", "frobnicate(self.s)", {}),
    ("base-exists-one-two-args", "self.l.existsOne(x, x == 'a')", {}),
    # 1.27: the authorizer library (its functions over a dyn receiver).
    ("authz", "dyn(self.s).allowed()", {}),
    # 1.28: cross-type numeric comparisons, optional types and syntax, quantities.
    ("cross-type-int-double", "self.i < 2.5", {}),
    ("cross-type-double-int", "self.n >= 1", {}),
    ("cross-type-uint-int", "1u > self.i", {}),
    ("same-type-compare", "self.i < 3 && self.n < 2.5", {}),
    ("optional-select", "self.?s.orValue('') == ''", {}),
    ("optional-index", "self.m[?'a'].hasValue() && self.l[?0].hasValue()", {}),
    ("optional-list-entry", "[?optional.none(), 1].size() == 1", {}),
    ("optional-map-entry", "{?'a': optional.of(1)}.size() == 1", {}),
    ("optional-functions", "optional.of(self.s).hasValue() && optional.ofNonZeroValue(self.i).or(optional.none()).orValue(1) > 0", {}),
    ("optional-macros", "self.?s.optMap(v, v + 'x').optFlatMap(v, optional.of(v)).hasValue()", {}),
    ("optional-opt-map", "optional.of(self.s).optMap(v, v.size()).orValue(0) >= 0", {}),
    ("optional-type-ident", "type(self.s) != optional_type", {}),
    ("optional-first-last", "self.l.first().hasValue() && self.l.last().hasValue()", {}),
    ("optional-unwrap", "optional.unwrap([optional.of(1)]).size() == 1 && [optional.none()].unwrapOpt().size() == 0", {}),
    ("optional-old-self", "!oldSelf.hasValue() || oldSelf.value().s == self.s", {"optionalOldSelf": True}),
    ("optional-old-self-plain", "oldSelf == null || self.s != ''", {"optionalOldSelf": True}),
    ("optional-old-self-unused", "self.s != ''", {"optionalOldSelf": True}),
    ("quantity", "quantity(self.s).isInteger() && isQuantity(self.s) && quantity('1').add(2).compareTo(quantity('3')) == 0", {}),
    # 1.29: literal validators, the strings extension's version 2 (format, quote), sets.
    ("literal-duration", "duration('1x') > duration('1s')", {}),
    ("literal-timestamp", "timestamp('yesterday') < timestamp('2020-01-01T00:00:00Z')", {}),
    ("literal-regex", "self.s.matches('[')", {}),
    ("literal-valid", "duration('1s') > duration('0s') && self.s.matches('^a')", {}),
    ("strings-format", "'%s-%d'.format([self.s, self.i]) != ''", {}),
    ("strings-format-bad", "'%d'.format(['a']) != ''", {}),
    ("strings-quote", "strings.quote(self.s) != ''", {}),
    ("strings-message-expression", "self.s != ''", {"messageExpression": "'bad: %s'.format([self.s])"}),
    ("sets", "sets.contains(self.l, ['a']) && sets.intersects(self.l, ['b']) && !sets.equivalent(self.l, [])", {}),
    # 1.30: IP and CIDR.
    ("ip", "isIP(self.s) && ip(self.s).family() == 4 && ip.isCanonical(self.s)", {}),
    ("cidr", "isCIDR(self.s) && cidr(self.s).containsIP('10.0.0.1') && cidr(self.s).prefixLength() > 8", {}),
    ("ip-type-ident", "type(self.s) != net.IP && type(self.s) != net.CIDR", {}),
    # 1.31: named formats, keywords as field names, the authorizer's selectors.
    ("format", "format.dns1123Label().validate(self.s).hasValue() || format.named('uuid').hasValue()", {}),
    ("keyword-field", "self.namespace == 'a'", {}),
    ("authz-selectors", "dyn(self.s).fieldSelector('a') != null", {}),
    # 1.32: two-variable comprehensions.
    ("two-var-all", "self.l.all(i, v, i >= 0 && v != '')", {}),
    ("two-var-exists", "self.m.exists(k, v, k == v)", {}),
    ("two-var-exists-one", "self.l.existsOne(i, v, v == 'a') || self.l.exists_one(i, v, i == 0)", {}),
    ("two-var-transform-list", "self.l.transformList(i, v, v + 'x').size() >= 0", {}),
    ("two-var-transform-map", "self.m.transformMap(k, v, v + k).size() >= 0", {}),
    ("two-var-transform-map-entry", "self.m.transformMapEntry(k, v, {v: k}).size() >= 0", {}),
    # 1.33: semantic versions.
    ("semver", "isSemver(self.s) && semver(self.s).major() >= 1 && isSemver(self.s, true)", {}),
    # 1.34: the lists extension (version 3).
    ("lists-slice", "self.l.slice(0, 1).size() == 1", {}),
    ("lists-flatten", "[[1], [2]].flatten().size() == 2", {}),
    ("lists-range", "lists.range(3).size() == 3", {}),
    ("lists-reverse-distinct", "self.l.reverse().distinct().size() >= 0", {}),
    ("lists-sort", "self.l.sort().size() >= 0", {}),
    ("lists-sort-by", "self.l.sortBy(e, e.size()).size() >= 0", {}),
]

SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string", "maxLength": 64},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "l": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 16}},
        "li": {"type": "array", "maxItems": 8, "items": {"type": "integer"}},
        "m": {"type": "object", "maxProperties": 8, "additionalProperties": {"type": "string", "maxLength": 16}},
        "namespace": {"type": "string", "maxLength": 16},
    },
}


def crd(name, rule, extra):
    spec = json.loads(json.dumps(SCHEMA))
    spec["x-kubernetes-validations"] = [dict({"rule": rule}, **extra)]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": name},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
            }],
        },
    }


names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
with open("crds.yaml", "w") as out:
    out.write("# Written by generate.py (YAML documents in JSON form).\n")
    for i, (name, rule, extra) in enumerate(CASES):
        if i:
            out.write("---\n")
        out.write(json.dumps(crd(name, rule, extra)) + "\n")
print(f"{len(CASES)} CRDs")
