//! The CEL suite: every function and overload of the Kubernetes 1.36 CEL environment, each
//! case a validation rule on a small CRD with objects. The expected outputs under
//! `tests/cel_suite/expected/` were produced by the upstream code (the oracle, see
//! `scripts/cel-suite-expect.sh`); this test runs our engine on the same CRDs and objects and
//! requires the same CRD create errors and the same object validation errors.
//!
//! Case files (`tests/cel_suite/cases/*.yaml`) hold a list of cases:
//!
//! ```yaml
//! - id: charAt-last            # unique within the file
//!   rule: "'abc'.charAt(2) == 'c'"
//!   messageExpression: "..."   # optional; also message, reason, fieldPath, optionalOldSelf
//!   show: "'abc'.charAt(2)"    # instead of rule: a string expression whose value the
//!                              # failure message shows (rule `(E) == '\x01'`, message E)
//!   schema: {type: string}     # the schema of `self` (default {type: integer})
//!   values: ["abc"]            # one object per value (default [0])
//!   at: root                   # the rules go on the root schema instead of `spec.v`
//!   rules: [...]               # instead of rule/show: several rules (objects with fields)
//! ```
//!
//! `CEL_SUITE_EMIT=DIR` writes every case's `crd.yaml` and `objects.yaml` under `DIR` and
//! `CEL_SUITE_ASSEMBLE=DIR` turns the oracle outputs written beside them into the expected
//! files (both used by the script only).

use crate::common;

use crd_audit_engine::check_crd;
use crd_audit_engine::crd::Crd;
use crd_audit_engine::validate::{CrdValidator, Mode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cel_suite")
}

struct Case {
    file: String,
    id: String,
    crd: Value,
    objects: Vec<Value>,
}

/// The rule objects of a case.
fn rules_of(c: &Value) -> Vec<Value> {
    if let Some(rules) = c.get("rules").and_then(Value::as_array) {
        return rules.clone();
    }
    let mut rule = serde_json::Map::new();
    if let Some(e) = c.get("show").and_then(Value::as_str) {
        rule.insert("rule".into(), json!(format!("({e}) == '\\x01'")));
        rule.insert("messageExpression".into(), json!(e));
    } else {
        let r = c
            .get("rule")
            .unwrap_or_else(|| panic!("case without rule: {c}"));
        rule.insert("rule".into(), r.clone());
    }
    for k in [
        "messageExpression",
        "message",
        "reason",
        "fieldPath",
        "optionalOldSelf",
    ] {
        if let Some(v) = c.get(k) {
            rule.insert(k.into(), v.clone());
        }
    }
    vec![Value::Object(rule)]
}

fn build_case(file: &str, c: &Value) -> Case {
    let id = c["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{file}: case without id: {c}"))
        .to_string();
    let mut schema = c
        .get("schema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "integer"}));
    let at_root = c.get("at").and_then(Value::as_str) == Some("root");
    if !at_root {
        schema["x-kubernetes-validations"] = Value::Array(rules_of(c));
    }
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "tests.suite.example.com"},
        "spec": {
            "group": "suite.example.com",
            "names": {"kind": "Test", "plural": "tests", "singular": "test", "listKind": "TestList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"v": schema}}}}}
            }]
        }
    });
    if at_root {
        let root = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        root["x-kubernetes-validations"] = Value::Array(rules_of(c));
    }
    let values = c
        .get("values")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| vec![json!(0)]);
    let objects = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            json!({"apiVersion": "suite.example.com/v1", "kind": "Test",
                "metadata": {"name": format!("o{i}")}, "spec": {"v": v}})
        })
        .collect();
    Case {
        file: file.to_string(),
        id,
        crd,
        objects,
    }
}

fn case_files() -> Vec<PathBuf> {
    let dir = suite_dir().join("cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    // CEL_SUITE_FILES=a,b: only these case files (by stem), for the expectation script.
    if let Ok(only) = std::env::var("CEL_SUITE_FILES")
        && !only.is_empty()
    {
        let only: Vec<&str> = only.split(',').collect();
        files.retain(|p| only.contains(&stem(p).as_str()));
    }
    assert!(!files.is_empty(), "no case files in {}", dir.display());
    files
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn load_cases(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = crd_audit_engine::load::parse_str("cases.yaml", &text)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{}: empty", path.display()))
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let list = doc
        .value
        .as_array()
        .unwrap_or_else(|| panic!("{}: not a list", path.display()))
        .clone();
    let file = stem(path);
    let cases: Vec<Case> = list.iter().map(|c| build_case(&file, c)).collect();
    let mut ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), cases.len(), "{file}: duplicate case ids");
    cases
}

/// Error lines as compared: (field, type, message), with the random part of the root type
/// name (`selfType<nanoseconds>`) removed.
use crd_audit_engine::testing::{Key, key_of_normalized as key_of};

fn keys(list: &Value) -> Vec<Key> {
    list.as_array()
        .map(|l| l.iter().map(key_of).collect())
        .unwrap_or_default()
}

/// What our engine gives for a case, in the stored form.
fn ours(case: &Case) -> Value {
    let crd = Crd::from_value(&case.crd).expect("a CRD");
    let report = check_crd(&crd, crd_audit_engine::Release::NEWEST);
    let validator = CrdValidator::new(&crd).expect("compiles");
    let objects: Vec<Value> = case
        .objects
        .iter()
        .map(|o| {
            let got = validator.validate(o.clone(), Mode::Create);
            let code = common::status_code(&got.outcome, false);
            json!({"code": code, "errors": got.causes().iter().map(|c| c.to_json()).collect::<Vec<_>>()})
        })
        .collect();
    json!({
        "structural": {
            "code": if report.crd_errors.is_empty() { 201 } else { 422 },
            "errors": report.crd_errors.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
        },
        "objects": objects,
    })
}

fn describe(keys: &[Key]) -> String {
    keys.iter()
        .map(|(f, t, m)| format!("      {f} {t}: {m}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Differences between an expected and an actual result, one line each.
fn compare(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut one = |what: String, w: &Value, g: &Value| {
        if w["code"] != g["code"] {
            out.push(format!(
                "{what}: code {} (expected {})",
                g["code"], w["code"]
            ));
        }
        let (missing, extra) = common::multiset_diff(&keys(&w["errors"]), &keys(&g["errors"]));
        if !missing.is_empty() {
            out.push(format!("{what}: missing\n{}", describe(&missing)));
        }
        if !extra.is_empty() {
            out.push(format!("{what}: extra\n{}", describe(&extra)));
        }
    };
    one("crd".into(), &want["structural"], &got["structural"]);
    let wo = want["objects"].as_array().cloned().unwrap_or_default();
    let go = got["objects"].as_array().cloned().unwrap_or_default();
    for (i, w) in wo.iter().enumerate() {
        one(format!("object {i}"), w, go.get(i).unwrap_or(&Value::Null));
    }
    out
}

fn expected_file(file: &str) -> PathBuf {
    suite_dir().join("expected").join(format!("{file}.jsonl"))
}

fn load_expected(file: &str) -> Vec<Value> {
    let p = expected_file(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run scripts/cel-suite-expect.sh to produce it)",
            p.display()
        )
    });
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn cel_suite_agrees_with_upstream() {
    if std::env::var_os("CEL_SUITE_EMIT").is_some()
        || std::env::var_os("CEL_SUITE_ASSEMBLE").is_some()
    {
        return;
    }
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(run_suite)
        .unwrap()
        .join()
        .unwrap();
}

fn run_suite() {
    let filter = std::env::var("CEL_SUITE_FILTER").unwrap_or_default();
    let (mut total, mut agree) = (0usize, 0usize);
    let mut report = Vec::new();
    for path in case_files() {
        let file = stem(&path);
        let cases = load_cases(&path);
        let expected = load_expected(&file);
        assert_eq!(
            expected.len(),
            cases.len(),
            "{file}: {} expectations for {} cases (regenerate them)",
            expected.len(),
            cases.len()
        );
        for (case, want) in cases.iter().zip(&expected) {
            assert_eq!(
                want["id"].as_str(),
                Some(case.id.as_str()),
                "{file}: expectations out of order (regenerate them)"
            );
            let name = format!("{file}/{}", case.id);
            if !name.contains(&filter) {
                continue;
            }
            total += 1;
            let got = ours(case);
            let diffs = compare(want, &got);
            if diffs.is_empty() {
                agree += 1;
            } else {
                report.push(format!("{name}:\n  {}", diffs.join("\n  ")));
            }
        }
    }
    for r in &report {
        eprintln!("{r}");
    }
    eprintln!(
        "CEL suite: {total} cases, {agree} agree with upstream, {} disagreements",
        total - agree
    );
    assert!(total > 0, "no cases ran");
    if filter.is_empty() {
        // The figure README.md quotes.
        assert_eq!(total, 2542, "CEL suite size changed: update README.md");
    }
    assert_eq!(
        total - agree,
        0,
        "CEL suite: our engine and upstream disagree on {} cases",
        total - agree
    );
}

/// Writes the inputs of every case for the oracle (`CEL_SUITE_EMIT=DIR`).
#[test]
fn emit_inputs() {
    let Some(dir) = std::env::var_os("CEL_SUITE_EMIT").map(PathBuf::from) else {
        return;
    };
    for path in case_files() {
        for (i, case) in load_cases(&path).iter().enumerate() {
            let d = dir.join(&case.file).join(format!("{i:04}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("id"), &case.id).unwrap();
            std::fs::write(d.join("crd.yaml"), case.crd.to_string()).unwrap();
            let objects: Vec<String> = case.objects.iter().map(Value::to_string).collect();
            std::fs::write(d.join("objects.yaml"), objects.join("\n---\n")).unwrap();
        }
    }
}

/// Turns the oracle outputs written beside the emitted inputs into the expected files
/// (`CEL_SUITE_ASSEMBLE=DIR`).
#[test]
fn assemble_expectations() {
    let Some(dir) = std::env::var_os("CEL_SUITE_ASSEMBLE").map(PathBuf::from) else {
        return;
    };
    let slim = |errors: &Value| -> Value {
        Value::Array(
            errors
                .as_array()
                .map(|l| {
                    l.iter()
                        .map(|e| json!({"field": e["field"], "type": e["type"], "message": e["message"]}))
                        .collect()
                })
                .unwrap_or_default(),
        )
    };
    std::fs::create_dir_all(suite_dir().join("expected")).unwrap();
    for path in case_files() {
        let file = stem(&path);
        let cases = load_cases(&path);
        let mut lines = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            let d = dir.join(&file).join(format!("{i:04}"));
            let read = |n: &str| {
                std::fs::read_to_string(d.join(n))
                    .unwrap_or_else(|e| panic!("{}: {e}", d.join(n).display()))
            };
            let s: Value = serde_json::from_str(&read("structural.json")).unwrap();
            let objects: Vec<Value> = read("validate.jsonl")
                .lines()
                .map(|l| {
                    let o: Value = serde_json::from_str(l).unwrap();
                    json!({"code": o["code"], "errors": slim(&o["errors"])})
                })
                .collect();
            assert_eq!(objects.len(), case.objects.len(), "{file}/{}", case.id);
            let line = json!({
                "id": case.id,
                "structural": {"code": s["code"], "errors": slim(&s["crdErrors"])},
                "objects": objects,
            });
            lines.push(line.to_string());
        }
        std::fs::write(expected_file(&file), lines.join("\n") + "\n").unwrap();
    }
}

/// Every overload of the environment is exercised by at least one case (except those a
/// CRD rule cannot reach).
#[test]
fn cases_cover_every_overload() {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(overload_coverage)
        .unwrap()
        .join()
        .unwrap();
}

fn overload_coverage() {
    use crd_audit_engine::cel::check::TKind;
    use crd_audit_engine::cel::types::DeclTypes;
    use crd_audit_engine::schema::Props;
    use std::collections::BTreeSet;
    // The authorizer library is declared for CRD rules but needs an `authorizer` variable.
    let unreachable = |id: &str| {
        id.starts_with("authorizer_")
            || id.starts_with("pathcheck_")
            || id.starts_with("groupcheck_")
            || id.starts_with("resourcecheck_")
            || id.starts_with("decision_")
    };
    let mut seen = BTreeSet::new();
    for path in case_files() {
        for case in load_cases(&path) {
            let root = &case.crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
            let Ok(props) = Props::from_value("", root) else {
                continue;
            };
            let types = DeclTypes::new(&props);
            let at_root = root.get("x-kubernetes-validations").is_some();
            let node = if at_root {
                Some(types.root())
            } else {
                types
                    .node(types.root())
                    .fields
                    .get("spec")
                    .and_then(|s| types.node(*s).fields.get("v").copied())
            };
            let Some(node) = node else { continue };
            let rules = if at_root {
                &root["x-kubernetes-validations"]
            } else {
                &root["properties"]["spec"]["properties"]["v"]["x-kubernetes-validations"]
            };
            for r in rules.as_array().into_iter().flatten() {
                for (k, want_string) in [("rule", false), ("messageExpression", true)] {
                    let Some(src) = r.get(k).and_then(Value::as_str) else {
                        continue;
                    };
                    let optional = r.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
                    let Ok(p) = crd_audit_engine::cel::compile::compile(
                        src,
                        &types,
                        node,
                        optional,
                        want_string,
                    ) else {
                        continue;
                    };
                    for n in &p.typed.nodes {
                        if let TKind::Call { overloads, .. } = &n.kind {
                            seen.extend(overloads.iter().copied());
                        }
                    }
                }
            }
        }
    }
    let missing: Vec<&str> = crd_audit_engine::cel::decls::functions()
        .values()
        .flatten()
        .map(|o| o.id)
        .filter(|id| !seen.contains(id) && !unreachable(id))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    eprintln!(
        "CEL suite: {} overloads exercised by compiling cases, {} not: {missing:?}",
        seen.len(),
        missing.len()
    );
    if std::env::var("CEL_SUITE_FILES").is_err() {
        assert!(missing.is_empty(), "overloads without a case: {missing:?}");
    }
}
