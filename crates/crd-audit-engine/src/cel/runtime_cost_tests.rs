//! The runtime cost of single rules, against what cel-go's cost tracker charges for them in
//! kube-apiserver 1.36 (cel-go 0.32, `interpreter/runtimecost.go` with the Kubernetes
//! `library.CostEstimator`). The expected figures were measured with the oracle's upstream
//! libraries: `cel.NewValidator` of apiextensions-apiserver (no per-call limit) run on the
//! value with a huge budget, the cost being what the validation took from it
//! (`scripts/cel-cost-oracle`, one rule at a time).

use super::compile::compile;
use super::eval::Interp;
use super::types::DeclTypes;
use super::value::Val;
use crate::schema::Props;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "l": {"type": "array", "items": {"type": "string"}},
        "e": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "o": {"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "object", "properties": {"c": {"type": "string"}}}}},
        "lo": {"type": "array", "items": {"type": "object", "properties": {
            "a": {"type": "string"}}}}}})
}

fn value() -> Value {
    json!({"s": "abc", "i": 1, "l": ["a", "b", "c"], "e": [], "m": {"k": "v"},
        "o": {"a": "x", "b": {"c": "y"}}, "lo": [{"a": "p"}, {"a": "q"}]})
}

/// `value()` where some items of `lo` lack `a` (`x.a` is an error).
fn value_with_errors() -> Value {
    json!({"s": "abc", "i": 1, "l": ["a", "b", "c"], "e": [], "m": {"k": "v"},
        "o": {"a": "x", "b": {"c": "y"}}, "lo": [{}, {"a": "p"}, {"a": "q"}, {}]})
}

/// The runtime cost of `rule` on `obj` (no limit).
fn cost(rule: &str, obj: &Value) -> u64 {
    let p = Props::from_value("", &schema()).unwrap();
    let types = DeclTypes::new(&p);
    let prog = compile(rule, &types, types.root(), false, false)
        .unwrap_or_else(|e| panic!("{rule}: {e:?}"));
    let mut it = Interp::new(&types, u64::MAX);
    it.single_overloads = &prog.single_overloads;
    let mut env = vec![("self", Val::from_json(obj, Some(types.root()), &types))];
    let _ = it.eval(&prog.expr, &mut env);
    it.cost
}

fn check(obj: &Value, cases: &[(&str, u64)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(rule, want)| {
            let got = cost(rule, obj);
            (got != want).then(|| format!("{rule}: cost {got}, upstream {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn macros() {
    check(
        &value(),
        &[
            // split: ceil(size * 0.2)
            ("self.s.split('').size() > 0", 5),
            // filter: the predicate, then accu + [d] (13) or the accumulator (a
            // conditional's branch: nothing)
            ("self.l.filter(d, true).size() > 0", 44),
            ("self.l.filter(d, false).size() >= 0", 5),
            ("self.l.filter(d, d == 'a').size() > 0", 24),
            ("self.l.map(d, d).size() > 0", 44),
            ("self.l.map(d, d == 'a', d).size() > 0", 24),
            ("self.l.exists_one(d, d == 'a')", 12),
            ("self.l.exists_one(d, false)", 4),
            // all/exists: no loop condition after the last element
            ("self.l.all(d, d == 'c')", 10),
            ("self.l.all(d, d != 'c')", 18),
            ("self.l.exists(d, d == 'b')", 18),
            ("self.l.exists(d, d == 'c')", 21),
            ("self.e.all(d, true)", 3),
            ("self.l.all(c, self.l.filter(d, d == c).size() > 0)", 93),
            (
                "self.s.split('').all(c, self.s.split('').filter(d, d == c).size() > 0)",
                97,
            ),
            // two-variable comprehensions: cel.@mapInsert(accu, k, t) is a call
            ("self.m.transformMap(k, v, v).size() > 0", 9),
            ("self.l.transformMap(i, v, i > 0, v).size() > 0", 19),
            ("self.l.transformList(i, v, i > 0, v).size() > 0", 37),
            ("self.l.all(i, v, self.l[i] == v)", 27),
            // sortBy: a binding of the list, its map of keys, @sortByAssociatedKeys
            ("self.l.sortBy(x, x) == ['a', 'b', 'c']", 74),
            ("self.e.sortBy(x, x).size() == 0", 18),
        ],
    );
}

#[test]
fn attributes() {
    check(
        &value(),
        &[
            // a conditional's branches are parts of its attribute: their variables are
            // not observed, their qualifications are
            ("(self.s.size() > 0 ? self.s : self.s) == 'abc'", 6),
            ("(self.i > 0 ? self.o : self.o).b.c == 'y'", 7),
            ("(self.i > 0 ? self.l[0] : self.s) == 'a'", 6),
            (
                "(self.i > 0 ? (self.i > 1 ? self.s : self.l[0]) : self.s) == 'a'",
                9,
            ),
            ("(self.i > 0 ? self.l.map(x, x) : self.l).size() > 0", 47),
            ("(self.i > 0 ? self.?s : optional.none()).hasValue()", 5),
            ("(self.i > 0 ? has(self.o.a) : false)", 5),
            // an index by an attribute, by another expression
            ("self.l[self.i] == 'b'", 5),
            ("self.l[self.i + 0] == 'b'", 7),
            ("self.m.all(k, self.m[k] == 'v')", 10),
            // selections and indexes on values that are not attributes
            ("self.s.split('')[0] == 'a'", 6),
            ("[1, 2][0] == 1", 3),
            ("[self.o][0].b.c == 'y'", 17),
            ("self.lo.map(x, x)[1].a == 'q'", 33),
            ("self.lo.map(x, x)[?0].hasValue()", 32),
            // presence tests
            ("has(self.o.b.c)", 3),
            ("has(self.lo.map(x, x)[0].a)", 31),
            // type names are constants
            ("type(self.i) == int", 4),
            ("type(duration('1s')) == google.protobuf.Duration", 1),
            // an optional qualification is charged only when it finds a value
            ("self.m.?zz.hasValue()", 3),
            ("self.m[?'k'].hasValue()", 4),
            ("self.m[?'zz'].orValue('') == ''", 2),
        ],
    );
}

#[test]
fn optionals_and_membership() {
    check(
        &value(),
        &[
            // `x in [constants]` is a set lookup, `x in []` the constant false
            ("self.s in ['a', 'abc']", 2),
            ("self.s in []", 0),
            ("self.s in [self.s]", 15),
            // string(string) is not a traversal
            ("string(self.s + self.s + self.s + self.s) != ''", 13),
            // or/orValue are not calls, and evaluate their argument only when needed
            ("self.?s.orValue('') == 'abc'", 3),
            ("self.?s.or(optional.of('')).hasValue()", 3),
            ("optional.none().orValue(self.s) == 'abc'", 4),
            // optMap/optFlatMap: bindings over the constant [], value() on first use
            ("self.?s.optMap(x, x + 'a').orValue('') == 'abca'", 10),
            ("self.?s.optMap(x, 'q').hasValue()", 6),
            ("[self.?s].all(o, o.optMap(x, x).hasValue())", 23),
            (
                "[self.?s].all(o, o.optFlatMap(x, optional.of(x)).hasValue())",
                23,
            ),
        ],
    );
}

#[test]
fn errors() {
    check(
        &value_with_errors(),
        &[
            // the fold goes on with an erroneous accumulator
            ("self.lo.filter(x, x.a == 'p').size() > 0", 15),
            ("self.lo.map(x, x.a).size() > 0", 21),
            ("self.lo.exists_one(x, x.a == 'p')", 14),
            ("self.lo.all(x, x.a == 'p')", 22),
            ("self.lo.exists(x, x.a == 'z')", 29),
            ("self.lo.map(x, x.a == 'p', x).size() > 0", 15),
            ("self.lo.transformMap(i, x, i > 1, x.a).size() > 0", 22),
            ("self.lo.transformMapEntry(i, x, {x.a: i}).size() > 0", 41),
            // a panic of @sortByAssociatedKeys's cost tracker ends the evaluation
            ("self.lo.sortBy(x, x.a).size() > 0", 22),
            ("self.lo.sortBy(x, x.a).size() > 0 || true", 22),
            // a call whose last argument is an error is charged, not one that stops
            // before its last argument
            ("size(self.lo[0].a) > 0", 5),
            ("'x' + self.lo[0].a == 'y'", 5),
            ("self.lo.filter(x, x.a == 'p') == []", 14),
        ],
    );
}

#[test]
fn call_costs() {
    check(
        &value(),
        &[
            // the sets extension's trackers: 1 + m * n (twice for equivalent)
            ("sets.contains(self.l, ['a', 'b'])", 9),
            ("sets.equivalent(self.l, ['a', 'b'])", 15),
            // the lists extension's trackers are bound to the overloads the checker
            // resolved, whatever the values
            ("dyn(1).flatten() == []", 12),
            ("dyn('a').reverse() == []", 12),
            ("[dyn(2), dyn(1.0)].sort().size() == 2", 2),
            (
                "[1, 2].sortBy(x, x == 1 ? dyn('a') : dyn(1)).size() == 2",
                33,
            ),
            ("dyn(1).sortBy(x, x) == []", 3),
            // kube-apiserver's traversal cost over a list of the object
            ("self.l.isSorted()", 2),
            // a failed call's cost is computed with the error as its result
            ("dyn([1, 2]).join(',') == '1,2'", 1),
        ],
    );
}

/// The rule of a reported discrepancy on strings of 300 characters.
#[test]
fn split_filter_all_on_long_strings() {
    let rule = "self.s.split('').all(c, self.s.split('').filter(d, d == c).size() > 0)";
    let cycle: String = (0..300).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let abc: String = (0..300).map(|i| b"aaabbc"[i % 6] as char).collect();
    assert_eq!(cost(rule, &json!({"s": cycle})), 335_547);
    assert_eq!(cost(rule, &json!({"s": abc})), 745_463);
}

/// Against the oracle's verdicts (`tests/data/validate/cel-runtime-cost` of the workspace, see
/// its `generate.py`; the command line's oracle cases judge the same objects end to end):
/// where the per-object budget (10,000,000) runs out over a list whose items run the rule
/// above, after spec's own rule, including budgets left exactly at, and one unit short of,
/// the cost of the items. The budget is spent as kube-apiserver spends it (a rule that costs
/// more than what is left stops the validation at its node); that part is the validator's,
/// the costs are what is checked here.
#[test]
fn budget_runs_out_as_upstream() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/validate/cel-runtime-cost");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    // The files hold JSON documents, one a line.
    let crd: Value = serde_json::from_str(&read("crd.yaml")).unwrap();
    let objects: Vec<Value> = read("objects.yaml")
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts: Vec<Value> = read("oracle.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), verdicts.len());

    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let types = DeclTypes::new(&Props::from_value("", schema).unwrap());
    let spec = types.node(types.root()).fields["spec"];
    let item = types.node(types.node(spec).fields["items"]).elem.unwrap();
    let rule = |s: &Value| {
        s["x-kubernetes-validations"][0]["rule"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let spec_rule = compile(
        &rule(&schema["properties"]["spec"]),
        &types,
        spec,
        false,
        false,
    )
    .unwrap();
    let item_rule = compile(
        &rule(&schema["properties"]["spec"]["properties"]["items"]["items"]),
        &types,
        item,
        false,
        false,
    )
    .unwrap();
    let run = |prog: &super::compile::Program, t, v: &Value| {
        let mut it = Interp::new(&types, u64::MAX);
        it.single_overloads = &prog.single_overloads;
        let mut env = vec![("self", Val::from_json(v, Some(t), &types))];
        let _ = it.eval(&prog.expr, &mut env);
        it.cost
    };

    for (obj, verdict) in objects.iter().zip(&verdicts) {
        let name = verdict["name"].as_str().unwrap();
        let mut left = 10_000_000u64;
        let mut ran_out = None;
        left -= run(&spec_rule, spec, &obj["spec"]);
        for (i, x) in obj["spec"]["items"].as_array().unwrap().iter().enumerate() {
            let c = run(&item_rule, item, x);
            if c > left {
                ran_out = Some(format!("spec.items[{i}]"));
                break;
            }
            left -= c;
        }
        let errors = verdict["errors"].as_array().unwrap();
        assert!(errors.len() <= 1, "{name}");
        let upstream = errors.first().map(|e| {
            let detail = e["detail"].as_str().unwrap();
            assert!(
                detail.contains("running out of cost budget"),
                "{name}: {detail}"
            );
            e["field"].as_str().unwrap().to_string()
        });
        assert_eq!(ran_out, upstream, "{name}");
    }
}
