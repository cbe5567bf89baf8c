//! Tests of ObjectMeta decoding and validation, against the conformance corpus and by case.

use super::decode::objectmeta_decode_error;
use super::meta::{go_to_lower, validate_embedded_meta};
use super::*;
use crate::cause::{Cause, Path};
use crate::k8s::names::*;
use serde_json::Value;
use serde_json::json;
use std::collections::BTreeMap;

fn messages(causes: &[Cause]) -> Vec<String> {
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

/// Probes run through the reference oracle (k8s.io/* 0.36.4): (where, input, expected).
const ORACLE_PROBES: &[(&str, &str, &str)] = &[
    (
        "top",
        r#""x""#,
        r#"{"requestError": "json: cannot unmarshal string into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"5"#,
        r#"{"requestError": "json: cannot unmarshal number into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"[]"#,
        r#"{"requestError": "json: cannot unmarshal array into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"true"#,
        r#"{"requestError": "json: cannot unmarshal bool into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "top",
        r#"null"#,
        r#"{"errors": ["metadata.name: Required value: name or generateName is required"]}"#,
    ),
    (
        "top",
        r#"{}"#,
        r#"{"errors": ["metadata.name: Required value: name or generateName is required"]}"#,
    ),
    (
        "top",
        r#"{"name":"a","labels":{"a":5}}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","labels":{"a":null}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"a","annotations":[1]}"#,
        r#"{"requestError": "json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1.5}"#,
        r#"{"requestError": "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":"1"}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1e+21}"#,
        r#"{"requestError": "json: cannot unmarshal number 1e+21 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","generation":1e+19}"#,
        r#"{"requestError": "json: cannot unmarshal number 10000000000000000000 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","deletionGracePeriodSeconds":true}"#,
        r#"{"requestError": "json: cannot unmarshal bool into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":{}}"#,
        r#"{"requestError": "json: cannot unmarshal object into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-13-01T00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-13-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-02-30T00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-02-30T00:00:00Z\": day out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T24:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T24:00:00Z\": hour out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00Zx"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00Zx\": extra text: \"x\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01 00:00:00Z"}"#,
        r#"{"requestError": "parsing time \"2020-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"2020-01-01T00:00:00.123+25:00"}"#,
        r#"{"requestError": "parsing time \"2020-01-01T00:00:00.123+25:00\": time zone offset hour out of range"}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":"\u00e4\u0001\"x"}"#,
        r#"{"requestError": "parsing time \"\\xc3\\xa4\\x01\\\"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\\xc3\\xa4\\x01\\\"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","creationTimestamp":""}"#,
        r#"{"requestError": "parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","deletionTimestamp":"x","annotations":5}"#,
        r#"{"requestError": "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","annotations":5,"labels":6}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[5]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":{}}"#,
        r#"{"requestError": "json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[{"name":5}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","ownerReferences":[{"controller":"yes"}]}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"}"#,
    ),
    (
        "top",
        r#"{"name":"a","finalizers":"x"}"#,
        r#"{"requestError": "json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","finalizers":[1]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"time":"bad"}]}"#,
        r#"{"requestError": "parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"fieldsV1":5,"operation":3}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType"}"#,
    ),
    (
        "top",
        r#"{"name":"a","uid":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID"}"#,
    ),
    (
        "top",
        r#"{"name":"a","managedFields":[{"manager":"a\u0007b\u00adc","operation":"Apply","fieldsType":"X","subresource":"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"}]}"#,
        r#"{"errors": ["metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`", "metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+0007 (at position 1)", "metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+00AD (at position 3)", "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes"]}"#,
    ),
    ("top", r#"{"name":"a","Name":5}"#, r#"{"errors": []}"#),
    (
        "top",
        r#"{"name":"a","generation":-5}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":"x"}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: \"x\": json: cannot unmarshal string into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":5}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: 5: json: cannot unmarshal number into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":[]}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: []: json: cannot unmarshal array into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":true}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: true: json: cannot unmarshal bool into Go value of type v1.ObjectMeta"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{"a":5}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"labels\":{\"a\":5},\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{"a":null}}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","annotations":[1]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":[1],\"name\":\"a\"}: json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1.5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":1.5,\"name\":\"a\"}: json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":"1"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":\"1\",\"name\":\"a\"}: json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1e+21}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":1e+21,\"name\":\"a\"}: json: cannot unmarshal number 1e+21 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1e+19}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"generation\":10000000000000000000,\"name\":\"a\"}: json: cannot unmarshal number 10000000000000000000 into Go struct field ObjectMeta.generation of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","deletionGracePeriodSeconds":true}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"deletionGracePeriodSeconds\":true,\"name\":\"a\"}: json: cannot unmarshal bool into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":5,\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":{}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":{},\"name\":\"a\"}: json: cannot unmarshal object into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-13-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-13-01T00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-13-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-02-30T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-02-30T00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-02-30T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T24:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T24:00:00Z\",\"name\":\"a\"}: parsing time \"2020-01-01T24:00:00Z\": hour out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00Zx"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00Zx\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00Zx\": extra text: \"x\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01 00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01 00:00:00Z\",\"name\":\"a\"}: parsing time \"2020-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"2020-01-01T00:00:00.123+25:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00.123+25:00\",\"name\":\"a\"}: parsing time \"2020-01-01T00:00:00.123+25:00\": time zone offset hour out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":"\u00e4\u0001\"x"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"\u00e4\\u0001\\\"x\",\"name\":\"a\"}: parsing time \"\\xc3\\xa4\\x01\\\"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\\xc3\\xa4\\x01\\\"x\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","creationTimestamp":""}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"\",\"name\":\"a\"}: parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","deletionTimestamp":"x","annotations":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":5,\"deletionTimestamp\":\"x\",\"name\":\"a\"}: parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","annotations":5,"labels":6}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"annotations\":5,\"labels\":6,\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[5]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[5]}: json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":{}}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":{}}: json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[{"name":5}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[{\"name\":5}]}: json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","ownerReferences":[{"controller":"yes"}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"ownerReferences\":[{\"controller\":\"yes\"}]}: json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","finalizers":"x"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"finalizers\":\"x\",\"name\":\"a\"}: json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","finalizers":[1]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"finalizers\":[1],\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"time":"bad"}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"managedFields\":[{\"time\":\"bad\"}],\"name\":\"a\"}: parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"fieldsV1":5,"operation":3}]}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"managedFields\":[{\"fieldsV1\":5,\"operation\":3}],\"name\":\"a\"}: json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","uid":5}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"name\":\"a\",\"uid\":5}: json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"manager":"a\u0007b\u00adc","operation":"Apply","fieldsType":"X","subresource":"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"}]}}"#,
        r#"{"errors": ["spec.t.metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`", "spec.t.metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+0007 (at position 1)", "spec.t.metadata.managedFields[0].manager: Invalid value: \"a\\ab\\u00adc\": invalid character U+00AD (at position 3)", "spec.t.metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","Name":5}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":-5}}"#,
        r#"{"errors": ["spec.t.metadata.generation: Invalid value: -5: must be greater than or equal to 0"]}"#,
    ),
    (
        "top",
        r#"{"generateName":"a_","name":"x"}"#,
        r#"{"errors": ["metadata.generateName: Invalid value: \"a_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"/a":"","a/":"","A.b/c":"","pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/x":"","UP.io/x":"","":"","a/b":"-x"}}"#,
        r#"{"errors": ["metadata.labels: Invalid value: \"\": name part must be non-empty", "metadata.labels: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')", "metadata.labels: Invalid value: \"/a\": prefix part must be non-empty", "metadata.labels: Invalid value: \"A.b/c\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.labels: Invalid value: \"UP.io/x\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.labels: Invalid value: \"a/\": name part must be non-empty", "metadata.labels: Invalid value: \"a/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.labels: Invalid value: \"pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/x\": prefix part must be no more than 253 bytes"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":{"\u0130":"","\u212a":"","UP.io/x":"","a\u00e4":"","A/B/C":"","/":""}}"#,
        r#"{"errors": ["metadata.annotations: Invalid value: \"/\": name part must be non-empty", "metadata.annotations: Invalid value: \"/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.annotations: Invalid value: \"/\": prefix part must be non-empty", "metadata.annotations: Invalid value: \"A/B/C\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "metadata.annotations: Invalid value: \"a\u00e4\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"n","uid":"u"},{"apiVersion":"a/b/c","kind":"","name":"n","uid":"u","blockOwnerDeletion":true,"controller":false},{"apiVersion":"v1/","kind":"K","name":"<&>","uid":"u","controller":true}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty", "metadata.ownerReferences.apiVersion: Invalid value: \"v1/\": version must not be empty", "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty", "metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"n\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"/","kind":"K","name":"a","uid":"u","controller":true},{"apiVersion":"/v1","kind":"K","name":"b","uid":"u","controller":true},{"apiVersion":"g/v","kind":"K","name":"c","uid":"u","controller":true}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"/\": version must not be empty", "metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"/\",\"kind\":\"K\",\"name\":\"a\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"/v1\",\"kind\":\"K\",\"name\":\"b\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"g/v\",\"kind\":\"K\",\"name\":\"c\",\"uid\":\"u\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for K/a and K/b", "metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"/\",\"kind\":\"K\",\"name\":\"a\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"/v1\",\"kind\":\"K\",\"name\":\"b\",\"uid\":\"u\",\"controller\":true},{\"apiVersion\":\"g/v\",\"kind\":\"K\",\"name\":\"c\",\"uid\":\"u\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for K/a and K/c"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","finalizers":["orphan","foregroundDeletion","kubernetes.io/x","x/y/z","Ab_"]}"#,
        r#"{"errors": ["metadata.finalizers: Invalid value: \"Ab_\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", "metadata.finalizers: Invalid value: \"x/y/z\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\",\"kubernetes.io/x\",\"x/y/z\",\"Ab_\"]: finalizer orphan and foregroundDeletion cannot be both set"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"a.b"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"a.b\": must not contain dots"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": must be no more than 63 characters"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","namespace":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
        r#"{"errors": ["metadata.namespace: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')", "metadata.namespace: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": must be no more than 63 characters"]}"#,
    ),
    (
        "top",
        r#"{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
        r#"{"errors": ["metadata.name: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "metadata.name: Invalid value: \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\": must be no more than 253 characters"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"","kind":""}"#,
        r#"{"errors": ["spec.t.apiVersion: Invalid value: \"\": must not be empty", "spec.t.kind: Invalid value: \"\": must not be empty"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"a/b/c","kind":"foo.bar"}"#,
        r#"{"errors": ["spec.t.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c", "spec.t.kind: Invalid value: \"foo.bar\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK"}"#,
        r#"{"errors": ["spec.t.kind: Invalid value: \"KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK\": may have mixed case, but should otherwise match: must be no more than 63 characters"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"1abc"}"#,
        r#"{"errors": ["spec.t.kind: Invalid value: \"1abc\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":".","generateName":"a/%"}}"#,
        r#"{"errors": ["spec.t.metadata.generateName: Invalid value: \"a/%\": may not contain '%'", "spec.t.metadata.generateName: Invalid value: \"a/%\": may not contain '/'", "spec.t.metadata.name: Invalid value: \".\": may not be '.'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"..."}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"a/%"}}"#,
        r#"{"errors": ["spec.t.metadata.name: Invalid value: \"a/%\": may not contain '%'", "spec.t.metadata.name: Invalid value: \"a/%\": may not contain '/'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"name":".."}}"#,
        r#"{"errors": ["spec.t.metadata.name: Invalid value: \"..\": may not be '..'"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"generateName":"-"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"namespace":"a.b","finalizers":["orphan","foregroundDeletion"]}}"#,
        r#"{"errors": ["spec.t.metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set", "spec.t.metadata.namespace: Invalid value: \"a.b\": must not contain dots"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Event"}]}}"#,
        r#"{"errors": ["spec.t.metadata.ownerReferences.name: Invalid value: \"\": must not be empty", "spec.t.metadata.ownerReferences.uid: Invalid value: \"\": must not be empty", "spec.t.metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"\",\"uid\":\"\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00Z","labels":{}}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":null}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-1-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-1-01T00:00:00Z\"}: parsing time \"2020-1-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"1-01T00:00:00Z\" as \"01\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T0:00:00Z"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00,5-01:30"}}"#,
        r#"{"errors": []}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+0130"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+0130\"}: parsing time \"2020-01-01T00:00:00+0130\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+0130\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00 01:30"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00 01:30\"}: parsing time \"2020-01-01T00:00:00 01:30\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 01:30\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:60Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:60Z\"}: parsing time \"2020-01-01T00:00:60Z\": second out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:61:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:61:00Z\"}: parsing time \"2020-01-01T00:61:00Z\": minute out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"20a0-01-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"20a0-01-01T00:00:00Z\"}: parsing time \"20a0-01-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"20a0-01-01T00:00:00Z\" as \"2006\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-00-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-00-01T00:00:00Z\"}: parsing time \"2020-00-01T00:00:00Z\": month out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-00T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-00T00:00:00Z\"}: parsing time \"2020-01-00T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+01:61"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+01:61\"}: parsing time \"2020-01-01T00:00:00+01:61\": time zone offset minute out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00+0a:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00+0a:00\"}: parsing time \"2020-01-01T00:00:00+0a:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+0a:00\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00*01:00"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00*01:00\"}: parsing time \"2020-01-01T00:00:00*01:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"*01:00\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01t00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01t00:00:00Z\"}: parsing time \"2020-01-01t00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"t00:00:00Z\" as \"T\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00.Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00.Z\"}: parsing time \"2020-01-01T00:00:00.Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \".Z\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2021-02-29T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2021-02-29T00:00:00Z\"}: parsing time \"2021-02-29T00:00:00Z\": day out of range"}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"2020-01-01T00:00:00z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"2020-01-01T00:00:00z\"}: parsing time \"2020-01-01T00:00:00z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"z\" as \"Z07:00\""}"#,
    ),
    (
        "emb",
        r#"{"apiVersion":"v1","kind":"X","metadata":{"creationTimestamp":"+020-01-01T00:00:00Z"}}"#,
        r#"{"requestError": "spec.t.metadata: Invalid value: {\"creationTimestamp\":\"+020-01-01T00:00:00Z\"}: parsing time \"+020-01-01T00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+020-01-01T00:00:00Z\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":5,"creationTimestamp":5}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","managedFields":[{"time":5}]}"#,
        r#"{"requestError": "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.time of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","annotations":5,"managedFields":[{"operation":3,"time":"x"}]}"#,
        r#"{"requestError": "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[null,{"apiVersion":"v1","kind":"K","name":"n","uid":"u"}]}"#,
        r#"{"errors": ["metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty", "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty", "metadata.ownerReferences.name: Invalid value: \"\": must not be empty", "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","finalizers":[null,"a"]}"#,
        r#"{"errors": ["metadata.finalizers: Invalid value: \"\": name part must be non-empty", "metadata.finalizers: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"a":{}},"annotations":{"b":[]}}"#,
        r#"{"requestError": "json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type string"}"#,
    ),
    (
        "top",
        r#"{"name":"x","generation":3.0,"deletionGracePeriodSeconds":-1}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":null}],"managedFields":null,"labels":null}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","generateName":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        r#"{"errors": []}"#,
    ),
    (
        "top",
        r#"{"name":"x","labels":{"a":"x<y"}}"#,
        r#"{"errors": ["metadata.labels: Invalid value: \"x<y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]}"#,
    ),
    (
        "top",
        r#"{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"<&>\u2028","uid":"u"}]}"#,
        r#"{"errors": ["metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"\\u003c\\u0026\\u003e\\u2028\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"]}"#,
    ),
];

#[test]
fn oracle_probes_are_reproduced() {
    let path = Path::new("spec").child("t");
    for (where_, input, expected) in ORACLE_PROBES {
        let input: Value = serde_json::from_str(input).unwrap();
        let expected: Value = serde_json::from_str(expected).unwrap();
        let (req, got) = if *where_ == "top" {
            let obj = json!({ "metadata": input });
            (
                request_error(&obj),
                validate_object_meta(obj.get("metadata").unwrap(), true),
            )
        } else {
            (
                embedded_request_error(&input, &path),
                validate_embedded_resource(&input, &path),
            )
        };
        match expected.get("requestError").and_then(Value::as_str) {
            Some(want) => assert_eq!(req.as_deref(), Some(want), "{input}"),
            None => {
                assert_eq!(req, None, "{input}");
                let want: Vec<String> = expected["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(messages(&got), want, "{input}");
            }
        }
    }
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
