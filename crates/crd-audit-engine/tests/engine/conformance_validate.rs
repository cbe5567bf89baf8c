//! Object validation against every `expected.jsonl` of the conformance corpus: the outputs
//! of the API server's own code for each object. Objects whose expected errors come from CEL
//! rules are counted apart, with the CEL issue's targets (verdict 100%, (field, type) 99%,
//! messages 97%); the others must agree completely.

use crate::common;

use crate::common::{request_error_text, status_code};
use crd_audit_engine::crd::Crd;
use crd_audit_engine::schema::Props;
use crd_audit_engine::structural::check::visit;
use crd_audit_engine::validate::object::CEL_NOT_CHECKED;
use crd_audit_engine::validate::{CrdValidator, Mode};
use serde_json::Value;
use std::collections::HashSet;

/// The CEL rules of a CRD (every version), for telling CEL-originated causes apart.
#[derive(Default)]
struct Rules {
    details: HashSet<String>,
    message_expressions: bool,
}

impl Rules {
    fn of(crd: &Crd) -> Rules {
        let mut r = Rules::default();
        for v in &crd.versions {
            if let Some(props) = v
                .schema
                .as_ref()
                .and_then(|s| Props::from_value("", s).ok())
            {
                visit(&props, &mut |p: &Props| {
                    for rule in &p.x_validations {
                        r.details.insert(format!("failed rule: {}", rule.rule));
                        if !rule.message.is_empty() {
                            r.details.insert(rule.message.clone());
                        }
                        r.message_expressions |= !rule.message_expression.is_empty();
                    }
                });
            }
        }
        r
    }

    /// Whether an expected cause comes from a CEL rule (its message, its `failed rule:`
    /// text, an evaluation error, the cost limits, or a messageExpression result, which is
    /// any Invalid/Forbidden/Required detail that value validation does not word so).
    fn is_cel_cause(&self, e: &Value) -> bool {
        let detail = e["detail"].as_str().unwrap_or("");
        let kind = e["type"].as_str().unwrap_or("");
        if detail == CEL_NOT_CHECKED {
            return false;
        }
        if self.details.contains(detail)
            || detail.contains(" evaluating rule: ")
            || detail.contains("cost budget")
            || detail.contains("cost limit exceeded")
        {
            return true;
        }
        let value_validation = detail.contains(" in body ")
            || detail.contains("must validate")
            || detail.contains("must not validate")
            || detail.starts_with("supported values")
            || detail.contains("must be of type")
            || detail.contains("MultipleOf")
            || detail.contains("accessor error")
            || detail.contains("non-negative integer")
            || e["field"].as_str().unwrap_or("").contains("metadata");
        self.message_expressions
            && matches!(
                kind,
                "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired"
            )
            && !detail.is_empty()
            && !value_validation
    }
}

#[derive(Default)]
struct Tally {
    objects: usize,
    cel_objects: usize,
    verdict_ok: usize,
    field_type_ok: usize,
    message_ok: usize,
    pruned_ok: usize,
    request_ok: usize,
    requests: usize,
    status_message_ok: usize,
}

/// Compares the causes of one object as multisets: (field, type) and exact messages; counts
/// agreement in the tally and lists the differences.
fn compare_causes(
    want_errors: &[&Value],
    got: &[crd_audit_engine::cause::Cause],
    tally: &mut Tally,
    problems: &mut Vec<String>,
) {
    let want: Vec<common::Key> = want_errors.iter().map(|e| common::key_of(e)).collect();
    let have: Vec<common::Key> = got.iter().map(|c| common::key_of(&c.to_json())).collect();
    let ft = |k: &[common::Key]| {
        let mut v: Vec<(String, String)> =
            k.iter().map(|(f, ty, _)| (f.clone(), ty.clone())).collect();
        v.sort();
        v
    };
    if ft(&want) == ft(&have) {
        tally.field_type_ok += 1;
    }
    let (missing, extra) = common::multiset_diff(&want, &have);
    if missing.is_empty() && extra.is_empty() {
        tally.message_ok += 1;
    }
    problems.extend(missing.iter().map(|m| format!("MISSING {}", m.2)));
    problems.extend(extra.iter().map(|e| format!("EXTRA   {}", e.2)));
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

#[test]
fn objects_are_judged_as_the_api_server_judges_them() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    // Deep values are walked recursively: give the test the CLI's stack.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(&dir))
        .unwrap()
        .join()
        .unwrap();
}

fn run(dir: &std::path::Path) {
    let mut t = Tally::default();
    let mut c = Tally::default();
    let mut differing: Vec<String> = Vec::new();
    let mut cel_differing: Vec<String> = Vec::new();
    for case in common::cases(dir) {
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        let crd_text = std::fs::read_to_string(case.join("crd.yaml")).unwrap();
        let crd_doc = crd_audit_engine::load::parse_str("crd.yaml", &crd_text)
            .remove(0)
            .unwrap();
        let crd = Crd::from_value(&crd_doc.value).unwrap();
        let validator = CrdValidator::new(&crd).expect("compiles");
        let rules = Rules::of(&crd);
        let objects = std::fs::read_to_string(case.join("objects.yaml")).unwrap_or_default();
        let expected: Vec<Value> = std::fs::read_to_string(case.join("expected.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let docs = crd_audit_engine::load::parse_str("objects.yaml", &objects);
        assert_eq!(docs.len(), expected.len(), "{id}: document count");
        for (i, (doc, exp)) in docs.into_iter().zip(&expected).enumerate() {
            let obj = doc.unwrap().value;
            let got = validator.validate(obj, Mode::Create);
            let got_code = status_code(&got.outcome, false);
            let code = exp["code"].as_u64().unwrap_or(0) as u16;
            let want_errors: Vec<&Value> = exp["errors"]
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            let has_cel = want_errors.iter().any(|e| rules.is_cel_cause(e));
            let label = format!("{id}[{i}] {}", exp["name"].as_str().unwrap_or(""));
            if has_cel {
                t.cel_objects += 1;
                let mut problems = Vec::new();
                if got_code == code {
                    c.verdict_ok += 1;
                } else {
                    problems.push(format!("code {} (expected {code})", got_code));
                }
                compare_causes(&want_errors, got.causes(), &mut c, &mut problems);
                if !problems.is_empty() {
                    cel_differing.push(format!("{label}:\n    {}", problems.join("\n    ")));
                }
                continue;
            }
            t.objects += 1;
            let mut problems = Vec::new();
            if got_code == code {
                t.verdict_ok += 1;
            } else {
                problems.push(format!("code {} (expected {code})", got_code));
            }
            if code == 400 || code == 404 {
                t.requests += 1;
                if request_error_text(&got.outcome) == exp["requestError"].as_str() {
                    t.request_ok += 1;
                } else {
                    problems.push(format!(
                        "requestError {:?} (expected {:?})",
                        request_error_text(&got.outcome),
                        exp["requestError"]
                    ));
                }
            }
            compare_causes(&want_errors, got.causes(), &mut t, &mut problems);
            let mut want_pruned: Vec<&str> = exp["pruned"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            want_pruned.sort();
            if want_pruned == got.pruned {
                t.pruned_ok += 1;
            } else {
                problems.push(format!(
                    "pruned {:?} (expected {want_pruned:?})",
                    got.pruned
                ));
            }
            let qualified = format!("{}.{}", crd.kind, crd.group);
            let want_sm = exp["statusMessage"].as_str();
            let got_sm = got.status_message(&qualified);
            if same_status_message(want_sm, got_sm.as_deref()) {
                t.status_message_ok += 1;
            } else {
                problems.push(format!("statusMessage {got_sm:?} (expected {want_sm:?})"));
            }
            if !problems.is_empty() {
                differing.push(format!("{label}:\n    {}", problems.join("\n    ")));
            }
        }
    }
    for d in differing.iter().chain(&cel_differing) {
        eprintln!("{d}");
    }
    eprintln!(
        "conformance validate, objects whose expected errors come from CEL rules: {}\n  \
         verdict {}/{} ({:.2}%), (field,type) {} ({:.2}%), messages {} ({:.2}%)",
        t.cel_objects,
        c.verdict_ok,
        t.cel_objects,
        pct(c.verdict_ok, t.cel_objects),
        c.field_type_ok,
        pct(c.field_type_ok, t.cel_objects),
        c.message_ok,
        pct(c.message_ok, t.cel_objects),
    );
    eprintln!(
        "conformance validate: {} objects without CEL causes ({} with CEL causes set aside)\n  \
         verdict {}/{} ({:.2}%), (field,type) {} ({:.2}%), messages {} ({:.2}%), pruned {} ({:.2}%), \
         request errors {}/{}, status messages {} ({:.2}%)",
        t.objects,
        t.cel_objects,
        t.verdict_ok,
        t.objects,
        pct(t.verdict_ok, t.objects),
        t.field_type_ok,
        pct(t.field_type_ok, t.objects),
        t.message_ok,
        pct(t.message_ok, t.objects),
        t.pruned_ok,
        pct(t.pruned_ok, t.objects),
        t.request_ok,
        t.requests,
        t.status_message_ok,
        pct(t.status_message_ok, t.objects),
    );
    // The figures README.md quotes: every object agrees, on everything compared.
    assert_eq!(
        (t.objects, t.cel_objects, t.requests),
        (2035, 117, 32),
        "corpus size changed: update README.md"
    );
    assert_eq!(
        c.verdict_ok, t.cel_objects,
        "verdicts of objects with CEL errors"
    );
    assert_eq!(
        c.field_type_ok, t.cel_objects,
        "(field, type) of objects with CEL errors"
    );
    assert_eq!(
        c.message_ok, t.cel_objects,
        "messages of objects with CEL errors"
    );
    assert_eq!(t.verdict_ok, t.objects, "verdicts");
    assert_eq!(t.field_type_ok, t.objects, "(field, type) multisets");
    assert_eq!(t.message_ok, t.objects, "exact messages");
    assert_eq!(t.status_message_ok, t.objects, "Status messages");
    assert_eq!(t.pruned_ok, t.objects, "pruned paths");
    assert_eq!(t.request_ok, t.requests, "request errors");
}

/// Status messages compare by prefix and, for several causes, as a multiset of the causes in
/// brackets (their order follows Go map iteration upstream).
fn same_status_message(want: Option<&str>, got: Option<&str>) -> bool {
    let (Some(w), Some(g)) = (want, got) else {
        return want.is_none() && got.is_none();
    };
    let split = |s: &str| -> Option<(String, Vec<String>)> {
        let (prefix, rest) = s.split_once(" is invalid: ")?;
        let mut items: Vec<String> = match rest.strip_prefix('[').and_then(|r| r.strip_suffix(']'))
        {
            Some(inner) => inner.split(", ").map(str::to_string).collect(),
            None => vec![rest.to_string()],
        };
        items.sort();
        Some((prefix.to_string(), items))
    };
    split(w) == split(g)
}
