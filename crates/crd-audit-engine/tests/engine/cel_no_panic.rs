//! The CEL engine never panics: arbitrary text (multi-byte characters, unbalanced quotes,
//! escapes, deep nesting) is parsed, checked against a small schema, estimated and, when it
//! compiles, evaluated against an object with a cost limit.

use crd_audit_engine::cel::compile::compile;
use crd_audit_engine::cel::cost_estimate::estimate;
use crd_audit_engine::cel::eval::Interp;
use crd_audit_engine::cel::types::DeclTypes;
use crd_audit_engine::cel::value::Val;
use crd_audit_engine::schema::Props;
use proptest::prelude::*;
use serde_json::json;

/// Fragments rules are made of, including the awkward ones.
const PIECES: &[&str] = &[
    "self",
    "oldSelf",
    ".",
    "?",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ",",
    ":",
    "'",
    "\"",
    "'''",
    "\\",
    "\\u00e9",
    "\\x",
    "\\377",
    "r'",
    "b'",
    "é",
    "日本",
    "𝄞",
    "\u{0}",
    "\n",
    " ",
    "1",
    "-",
    "0x",
    "1.5",
    ".5",
    "1e",
    "u",
    "+",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "in",
    "a",
    "b",
    "name",
    "list",
    "map",
    "size(",
    "all(",
    "exists(",
    "map(",
    "filter(",
    "has(",
    "optional.of(",
    ".?",
    "[?",
    "format(",
    "'%s'",
    "'%d'",
    "'%.3f'",
    "'%e'",
    "'%x'",
    "matches(",
    "timestamp(",
    "duration(",
    "'1h'",
    "'2020-01-01T00:00:00Z'",
    "int(",
    "uint(",
    "double(",
    "string(",
    "bytes(",
    "dyn(",
    "type(",
    "quantity(",
    "'1Gi'",
    "ip(",
    "cidr(",
    "url(",
    "semver(",
    "'1.2.3'",
    "sets.contains(",
    "lists.range(",
    "sort()",
    "sortBy(",
    "flatten(",
    "getFullYear(",
    "'UTC'",
    "'+01:00'",
    "optMap(",
    "transformMap(",
    "cel.bind(",
    "true",
    "false",
    "null",
    "9223372036854775807",
    "18446744073709551615u",
];

fn rule() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|v| v.concat())
}

/// Well-formed expressions over the schema's fields, the operators and the library
/// functions, some parts hidden from the checker behind `dyn()` (so they reach run time).
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "self.a",
        "self.b",
        "self.name",
        "self.list",
        "self.map",
        "self",
        "1",
        "-1",
        "0",
        "9223372036854775807",
        "2u",
        "0u",
        "1.5",
        "-0.0",
        "'x'",
        "''",
        "'é日𝄞'",
        "b'\\xff'",
        "true",
        "null",
        "[]",
        "[1, 2]",
        "['a', 'b']",
        "{}",
        "{'k': 1}",
        "'1Gi'",
        "'10.0.0.0/8'",
        "'1.2.3'",
        "'https://a/b?c=d'",
        "'1h'",
        "'2020-01-01T00:00:00Z'",
        "'%s %d'",
        "'a.b'",
        "0.0 / 0.0",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(4, 48, 3, |inner| {
        let one = |f: &'static str| inner.clone().prop_map(move |a| f.replace('A', &a));
        let two = |f: &'static str| {
            (inner.clone(), inner.clone())
                .prop_map(move |(a, b)| f.replace('A', &a).replace('B', &b))
        };
        prop_oneof![
            one("dyn(A)"),
            one("size(A)"),
            one("string(A)"),
            one("int(A)"),
            one("double(A)"),
            one("!A"),
            one("-A"),
            one("A.lowerAscii()"),
            one("A.trim()"),
            one("quantity(A).asInteger()"),
            one("ip(A).family()"),
            one("cidr(A).masked()"),
            one("url(A).getQuery()"),
            one("semver(A).major()"),
            one("timestamp(A).getFullYear('Europe/Paris')"),
            one("duration(A).getMinutes()"),
            one("optional.of(A).orValue(1)"),
            one("A.sort()"),
            one("A.distinct()"),
            one("A.reverse()"),
            one("A.flatten()"),
            one("lists.range(A)"),
            one("A.sum()"),
            one("A.min()"),
            one("A.isSorted()"),
            one("A.all(x, x == x)"),
            one("A.map(x, dyn(x))"),
            one("A.filter(x, true)"),
            one("A.exists_one(x, x != 1)"),
            one("A.transformMap(k, v, v)"),
            one("A.?x.orValue(0)"),
            one("A[?0]"),
            one("strings.quote(A)"),
            one("format.named(A).hasValue()"),
            two("A + B"),
            two("A - B"),
            two("A * B"),
            two("A / B"),
            two("A % B"),
            two("A == B"),
            two("A < B"),
            two("A >= B"),
            two("A && B"),
            two("A || B"),
            two("A in B"),
            two("A[B]"),
            two("A.matches(B)"),
            two("A.contains(B)"),
            two("A.split(B)"),
            two("A.join(B)"),
            two("A.format([B])"),
            two("A.indexOf(B)"),
            two("A.substring(B)"),
            two("A.replace(B, 'z')"),
            two("A.find(B)"),
            two("A.slice(0, B)"),
            two("sets.contains(A, B)"),
            two("A.sortBy(x, B)"),
            two("quantity(A).add(B)"),
            two("cidr(A).containsIP(B)"),
            two("A ? B : B"),
            two("[A, B]"),
            two("{A: B}"),
        ]
    })
}

fn check_one(src: &str, types: &DeclTypes, obj: &serde_json::Value) {
    let node = types
        .node(types.root())
        .fields
        .get("spec")
        .copied()
        .unwrap_or(types.root());
    for want_string in [false, true] {
        if let Ok(p) = compile(src, types, node, false, want_string) {
            let _ = estimate(&p.typed, types, node);
            let this = Val::from_json(&obj["spec"], Some(node), types);
            let mut env = vec![("self", this.clone()), ("oldSelf", this)];
            let mut it = Interp::new(types, 100_000);
            let _ = it.eval(&p.expr, &mut env);
        }
    }
}

fn schema_and_object() -> (DeclTypes, serde_json::Value) {
    let schema = Props::from_value(
        "",
        &json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 10},
                "list": {"type": "array", "maxItems": 5, "items": {"type": "string"}},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "a": {"type": "integer"},
                "b": {"type": "number"}
            }}}
        }),
    )
    .unwrap();
    let obj =
        json!({"spec": {"name": "café", "list": ["x", "é"], "map": {"k": 1}, "a": 3, "b": 1.5}});
    (DeclTypes::new(&schema), obj)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn cel_never_panics(src in rule()) {
        let (types, obj) = schema_and_object();
        check_one(&src, &types, &obj);
    }

    #[test]
    fn cel_never_panics_on_expressions(src in expr()) {
        let (types, obj) = schema_and_object();
        check_one(&format!("({src}) == ({src})"), &types, &obj);
        check_one(&format!("string({src}) != ''"), &types, &obj);
    }

    #[test]
    fn cel_never_panics_on_any_text(src in "\\PC{0,40}") {
        let (types, obj) = schema_and_object();
        check_one(&src, &types, &obj);
    }
}
