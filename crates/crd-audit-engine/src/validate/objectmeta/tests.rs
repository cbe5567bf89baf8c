//! Tests of ObjectMeta decoding and validation, against the conformance corpus and by case.

use super::decode::objectmeta_decode_error;
use super::meta::{go_to_lower, validate_embedded_meta};
use super::*;
use crate::cause::{Cause, Path};
use crate::k8s::names::*;
use serde_json::Value;
use serde_json::json;
use std::collections::BTreeMap;

pub(super) fn messages(causes: &[Cause]) -> Vec<String> {
    let mut v: Vec<String> = causes.iter().map(Cause::message).collect();
    v.sort();
    v
}

// --- the conformance corpus

fn corpus_dir() -> Option<std::path::PathBuf> {
    crate::testing::conformance_dir()
}

/// The documents of a corpus file; `None` (with a notice) when one does not load.
fn documents(path: &std::path::Path) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = Vec::new();
    for d in crate::load::parse_str(&path.display().to_string(), &text) {
        match d {
            Ok(d) => out.push(d.value),
            Err(e) => {
                eprintln!("skipped: {e}");
                return None;
            }
        }
    }
    Some(out)
}

/// The embedded resources of an object, found like upstream's `objectmeta.Validate` walks.
fn embedded<'a>(schema: &Value, obj: &'a Value, path: Path, out: &mut Vec<(Path, &'a Value)>) {
    match obj {
        Value::Object(m) => {
            if schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
                out.push((path.clone(), obj));
            }
            for (k, v) in m {
                if let Some(p) = schema.get("properties").and_then(|p| p.get(k)) {
                    embedded(p, v, path.child(k), out);
                } else if let Some(ap) =
                    schema.get("additionalProperties").filter(|a| a.is_object())
                {
                    embedded(ap, v, path.key(k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    embedded(s, v, path.index(i), out);
                }
            }
        }
        _ => {}
    }
}

type Key = (String, String, String);

fn key_of_expected(e: &Value) -> Key {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    (s("field"), s("type"), s("message"))
}

fn key_of(c: &Cause) -> Key {
    (
        c.field.to_string(),
        c.kind.reason().to_string(),
        c.message(),
    )
}

fn multiset(keys: impl IntoIterator<Item = Key>) -> BTreeMap<Key, usize> {
    let mut m = BTreeMap::new();
    for k in keys {
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

/// Errors of the CRD schema (not of ObjectMeta validation) on metadata fields.
fn schema_derived(e: &Key) -> bool {
    e.2.contains(" in body ") || (e.0 == "metadata.name" && e.1 == "FieldValueTooLong")
}

#[test]
fn corpus_metadata_errors_are_reproduced() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let mut cases: Vec<_> = std::fs::read_dir(dir.join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    let (mut top, mut emb, mut req, mut objects) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in cases {
        let (Some(crds), Some(objs)) = (
            documents(&case.join("crd.yaml")),
            documents(&case.join("objects.yaml")),
        ) else {
            continue;
        };
        let crd = crds.into_iter().next().unwrap_or(Value::Null);
        let expected: Vec<Value> = std::fs::read_to_string(case.join("expected.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        if objs.len() != expected.len() {
            eprintln!(
                "{id}: {} documents, {} expected lines: skipped",
                objs.len(),
                expected.len()
            );
            continue;
        }
        let namespaced = crd["spec"]["scope"] != "Cluster";
        for (i, (obj, exp)) in objs.iter().zip(&expected).enumerate() {
            objects += 1;
            let version = obj["apiVersion"]
                .as_str()
                .unwrap_or("")
                .rsplit('/')
                .next()
                .unwrap_or("");
            let versions = crd["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let schema = versions
                .iter()
                .find(|v| v["name"] == version)
                .or(versions.first())
                .map(|v| v["schema"]["openAPIV3Schema"].clone())
                .unwrap_or(Value::Null);
            let mut obj = obj.clone();
            if exp["statusDropped"] == true
                && let Some(m) = obj.as_object_mut()
            {
                m.remove("status");
            }
            let mut found = Vec::new();
            embedded(&schema, &obj, Path::root(), &mut found);
            let code = exp["code"].as_i64().unwrap_or(0);
            let where_ = format!("{id} doc {i}");
            if code == 400 || code == 404 {
                let re = exp["requestError"].as_str().unwrap_or("");
                if re.starts_with("json: ") || re.starts_with("parsing time ") {
                    if request_error(&obj).as_deref() == Some(re) {
                        req += 1;
                    } else {
                        failures.push(format!(
                            "{where_}: request error {:?} != {re:?}",
                            request_error(&obj)
                        ));
                    }
                } else if re.contains(": Invalid value: ") {
                    let mine: Vec<String> = found
                        .iter()
                        .filter_map(|(p, o)| embedded_request_error(o, p))
                        .collect();
                    if mine.iter().any(|m| m == re) {
                        req += 1;
                    } else {
                        failures.push(format!(
                            "{where_}: embedded request errors {mine:?} lack {re:?}"
                        ));
                    }
                }
                continue;
            }
            if let Some(e) = request_error(&obj) {
                failures.push(format!("{where_}: unexpected request error {e}"));
            }
            for (p, o) in &found {
                if let Some(e) = embedded_request_error(o, p) {
                    failures.push(format!("{where_}: unexpected embedded request error {e}"));
                }
            }
            let errors = exp["errors"].as_array().cloned().unwrap_or_default();
            // top-level metadata
            let want: Vec<Key> = errors
                .iter()
                .map(key_of_expected)
                .filter(|k| {
                    (k.0 == "metadata" || k.0.starts_with("metadata.")) && !schema_derived(k)
                })
                .collect();
            let got = validate_object_meta(obj.get("metadata").unwrap_or(&Value::Null), namespaced);
            if multiset(want.clone()) == multiset(got.iter().map(key_of)) {
                top += want.len();
            } else {
                failures.push(format!(
                    "{where_}: metadata errors {:?} != {want:?}",
                    messages(&got)
                ));
            }
            // embedded resources
            let prefixes: Vec<String> = found.iter().map(|(p, _)| format!("{p}.")).collect();
            let want: Vec<Key> = errors
                .iter()
                .map(key_of_expected)
                .filter(|k| {
                    !schema_derived(k)
                        && prefixes.iter().any(|p| {
                            k.0.strip_prefix(p.as_str()).is_some_and(|rest| {
                                rest == "apiVersion"
                                    || rest == "kind"
                                    || rest == "metadata"
                                    || rest.starts_with("metadata.")
                            })
                        })
                })
                .collect();
            let got: Vec<Cause> = found
                .iter()
                .flat_map(|(p, o)| validate_embedded_resource(o, p))
                .collect();
            if multiset(want.clone()) == multiset(got.iter().map(key_of)) {
                emb += want.len();
            } else {
                failures.push(format!(
                    "{where_}: embedded errors {:?} != {want:?}",
                    messages(&got)
                ));
            }
        }
    }
    eprintln!(
        "objectmeta corpus: {objects} objects; reproduced {top} top-level metadata causes, {emb} embedded-resource causes, {req} request errors"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        top >= 25 && emb >= 10 && req >= 5,
        "too few corpus messages compared"
    );
}

#[test]
fn annotation_size_limit_counts_keys_and_values() {
    let at_limit = json!({"name": "x", "annotations": {"a": "x".repeat(262_143)}});
    assert!(validate_object_meta(&at_limit, true).is_empty());
    let over = json!({"name": "x", "annotations": {"ab": "x".repeat(262_143)}});
    assert_eq!(
        messages(&validate_object_meta(&over, true)),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
}

#[test]
fn names_are_generated_and_namespaces_defaulted() {
    // generateName without name: the name is the (truncated) base plus a 5-char suffix.
    let meta = json!({"generateName": "b".repeat(70)});
    assert!(validate_object_meta(&meta, true).is_empty());
    let meta = json!({"generateName": "Ab-"});
    assert_eq!(
        messages(&validate_object_meta(&meta, false)),
        [
            format!("metadata.generateName: Invalid value: \"Ab-\": {DNS1123_SUBDOMAIN_MSG}"),
            format!("metadata.name: Invalid value: \"Ab-x7k2q\": {DNS1123_SUBDOMAIN_MSG}"),
        ]
    );
    // A cluster-scoped object's namespace is cleared, a namespaced one defaults to "default".
    let meta = json!({"name": "a", "namespace": "Bad NS"});
    assert!(validate_object_meta(&meta, false).is_empty());
    assert!(validate_object_meta(&json!({"name": "a"}), true).is_empty());
    assert_eq!(
        messages(&validate_object_meta(&Value::Null, true)),
        ["metadata.name: Required value: name or generateName is required"]
    );
}

#[test]
fn label_key_and_value_rules() {
    assert!(label_key_errors("example.com/My_Name-1.x").is_empty());
    assert!(label_key_errors(&"k".repeat(63)).is_empty());
    assert_eq!(
        label_key_errors(&format!("{}/a", "p".repeat(254))),
        ["prefix part must be no more than 253 bytes"]
    );
    assert_eq!(label_key_errors("a//b"), [LABEL_KEY_SLASHES_MSG]);
    assert!(label_value_errors("").is_empty());
    assert_eq!(
        label_value_errors(&"-".repeat(64)),
        ["must be no more than 63 bytes", LABEL_VALUE_MSG]
    );
    // Annotation keys are lowercased the way Go does (U+0130 and the Kelvin sign become ASCII).
    assert_eq!(go_to_lower("\u{130}\u{212a}X"), "ikx");
}

#[test]
fn valid_metadata_does_not_allocate_errors() {
    let meta = json!({
        "name": "a.b-c", "namespace": "ns", "generateName": "a-",
        "labels": {"app.kubernetes.io/name": "x", "e": ""},
        "annotations": {"Example.COM/Key": "anything at all"},
        "finalizers": ["example.com/f"],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "D", "name": "n", "uid": "u", "controller": true}],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1", "time": "2020-01-01T00:00:00Z"}],
    });
    assert_eq!(objectmeta_decode_error(&meta), None);
    assert!(validate_object_meta(&meta, true).is_empty());
    assert!(validate_embedded_meta(&meta, &Path::new("t").child("metadata")).is_empty());
}
