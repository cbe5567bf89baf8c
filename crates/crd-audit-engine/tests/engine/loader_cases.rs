//! The loader against the oracle (`oracle tojson`: sigs.k8s.io/yaml as kubectl uses it):
//! scalars of every YAML 1.1 type and tag, and go-yaml's guard against alias bombs. The
//! expectations are stored beside the inputs in `crates/crd-audit-engine/tests/data/loader/` (see the `regen-*`
//! scripts there).

use crd_audit_engine::load::parse_str;
use serde_json::Value;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/loader")
        .join(name)
}

fn read_jsonl(name: &str) -> Vec<Value> {
    let path = data(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn scalars_resolve_as_go_yaml_resolves_them() {
    let cases = read_jsonl("scalars.oracle.jsonl");
    assert_eq!(cases.len(), 167, "README.md quotes the number of cases");
    let mut failures = Vec::new();
    for case in &cases {
        let input = case["input"].as_str().unwrap();
        let docs = parse_str("t.yaml", &format!("a: {input}\n"));
        assert_eq!(docs.len(), 1, "{input}");
        // Compared as Go writes the JSON (numbers included), read as the API server reads
        // it: the integer `-0` is int64 0, and `\ufffd` is the character U+FFFD, as our
        // values hold them.
        let want = case
            .get("json")
            .and_then(Value::as_str)
            .map(|j| j.replace(":-0}", ":0}").replace("\\ufffd", "\u{fffd}"));
        match (&docs[0], want, case.get("error")) {
            (Ok(doc), Some(want), None)
                if crd_audit_engine::go::json::marshal(&doc.value) == want => {}
            (Err(e), None, Some(want)) if e.message == want.as_str().unwrap() => {}
            (got, _, _) => failures.push(format!("{input:?}: got {got:?}, oracle {case}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The documents of `regen-alias-boundaries.py` (keep the two generators identical).
fn alias_doc(shape: &str, p: &Value, n: usize) -> String {
    let count = |k: &str| p[k].as_u64().unwrap() as usize;
    let list = |item: &str, n: usize| vec![item; n].join(",");
    let keys = |n: usize| {
        (0..n)
            .map(|i| format!("k{i}: v"))
            .collect::<Vec<_>>()
            .join(",")
    };
    match shape {
        "list" => format!(
            "b: &b [{}]\nr: [{}]\n",
            list("x", count("items")),
            list("*b", n)
        ),
        "map" => format!(
            "b: &b {{{}}}\nr: [{}]\n",
            keys(count("keys")),
            list("*b", n)
        ),
        "merge" => {
            let items: String = (0..n)
                .map(|i| format!("  - {{<<: *b, own: {i}}}\n"))
                .collect();
            format!("b: &b {{{}}}\nr:\n{items}", keys(count("keys")))
        }
        "nested" => format!(
            "a0: &a0 [{}]\na1: &a1 [{}]\nr: [{}]\n",
            list("x", 10),
            list("*a0", 10),
            list("*a1", n)
        ),
        "padded" => format!(
            "pad1: [{}]\nb: &b [{}]\nr: [{}]\npad2: [{}]\n",
            list("p", count("pad")),
            list("x", count("items")),
            list("*b", count("aliases")),
            list("p", n)
        ),
        other => panic!("unknown shape {other}"),
    }
}

#[test]
fn alias_expansion_is_refused_exactly_where_go_yaml_refuses_it() {
    let path = data("alias-boundaries.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 5);
    for case in &cases {
        let shape = case["shape"].as_str().unwrap();
        for (key, refused) in [("accepted", false), ("refused", true)] {
            let n = case[key].as_u64().unwrap() as usize;
            let docs = parse_str("t.yaml", &alias_doc(shape, &case["params"], n));
            let message = docs[0].as_ref().err().map(|e| e.message.as_str());
            if refused {
                assert_eq!(
                    message,
                    Some("yaml: document contains excessive aliasing"),
                    "{shape} with {n}"
                );
            } else {
                assert!(message.is_none(), "{shape} with {n}: {message:?}");
            }
        }
    }
}

#[test]
fn an_alias_bomb_is_refused_with_its_line() {
    // 11 levels of 10 aliases: 10^11 values if expanded.
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..11 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let docs = parse_str("bomb.yaml", &format!("ok: 1\n---\n{text}"));
    assert_eq!(docs[0].as_ref().unwrap().value["ok"], 1);
    let e = docs[1].as_ref().unwrap_err();
    assert_eq!(
        e.to_string(),
        "bomb.yaml#1 (line 6): yaml: document contains excessive aliasing"
    );
}
