//! What kube-apiserver checks and restores in an object a conversion webhook returned
//! (apiextensions-apiserver's `webhook_converter.go`: `validateConvertedObject` and
//! `restoreObjectMeta`), so that a caller that sends a `ConversionReview` itself gets the
//! object, or the error, the API server would have.
//!
//! The webhook may change an object's labels and annotations, which are then validated when
//! they changed; every other field of `metadata` is the original's again, whatever the webhook
//! returned. Its name, namespace and uid must be the original's.

use crate::cause::{BadValue, Cause, Path};
use crate::k8s::names::{label_key_errors, label_value_errors};
use crate::validate::objectmeta::{TOTAL_ANNOTATION_SIZE_LIMIT, go_to_lower};
use serde_json::{Map, Value};

/// The name, namespace and uid of `converted` are those of `original`
/// (`validateConvertedObject`); else the API server's detail, e.g.
/// `must have the same name: a != b`.
pub fn validate_converted(original: &Value, converted: &Value) -> Result<(), String> {
    let meta = |v: &Value, k: &str| {
        v.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let kind = |v: &Value| {
        v.get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if kind(original) != kind(converted) {
        return Err(format!(
            "must have the same kind: {} != {}",
            kind(original),
            kind(converted)
        ));
    }
    for (field, name) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (a, b) = (meta(original, field), meta(converted, field));
        if a != b {
            return Err(format!("must have the same {name}: {a} != {b}"));
        }
    }
    Ok(())
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Puts `original`'s metadata back into `converted`, keeping only the labels and annotations
/// the webhook returned (`restoreObjectMeta`): an absent or `null` map removes the field, a
/// changed map is validated (labels as `metadata.labels`, annotations as
/// `metadata.annotation`, as upstream names it). Else the API server's detail, e.g.
/// `missing metadata in converted object`.
pub fn restore_object_meta(original: &Value, converted: &mut Value) -> Result<(), String> {
    let Some(conv_meta) = converted.get("metadata") else {
        return Err("missing metadata in converted object".into());
    };
    let Some(conv_meta) = conv_meta.as_object() else {
        return Err(format!(
            "invalid metadata of type {} in converted object",
            go_type(conv_meta)
        ));
    };
    let orig_meta = match original.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ));
        }
    };
    let mut restored = orig_meta.clone();
    for field in ["labels", "annotations"] {
        let returned = conv_meta.get(field).filter(|v| !v.is_null());
        let Some(returned) = returned else {
            restored.remove(field);
            continue;
        };
        let Some(map) = returned.as_object() else {
            return Err(format!(
                "invalid metadata.{field} of type {} in converted object",
                go_type(returned)
            ));
        };
        let original_map = match orig_meta.get(field) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ));
            }
        };
        for (k, v) in map {
            if !v.is_string() {
                return Err(format!(
                    "metadata.{field}[{k}] must be a string, but is {} in converted object",
                    go_type(v)
                ));
            }
        }
        let changed = map.len() != original_map.len()
            || map.iter().any(|(k, v)| original_map.get(k) != Some(v));
        if changed {
            let causes = if field == "labels" {
                label_causes(map)
            } else {
                annotation_causes(map)
            };
            if !causes.is_empty() {
                return Err(aggregate(&causes));
            }
        }
        restored.insert(field.to_string(), Value::Object(map.clone()));
    }
    converted["metadata"] = Value::Object(restored);
    Ok(())
}

/// `ValidateLabels` at `metadata.labels`.
fn label_causes(labels: &Map<String, Value>) -> Vec<Cause> {
    let path = Path::new("metadata").child("labels");
    let mut out = Vec::new();
    for (k, v) in labels {
        for msg in label_key_errors(k) {
            out.push(Cause::invalid(path.clone(), BadValue::Str(k.clone()), msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in label_value_errors(v) {
            out.push(Cause::invalid(path.clone(), BadValue::Str(v.into()), msg));
        }
    }
    out
}

/// `ValidateAnnotations` at `metadata.annotation` (the path upstream's conversion gives it).
fn annotation_causes(annotations: &Map<String, Value>) -> Vec<Cause> {
    let path = Path::new("metadata").child("annotation");
    let mut out = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        for msg in label_key_errors(&go_to_lower(k)) {
            out.push(Cause::invalid(path.clone(), BadValue::Str(k.clone()), msg));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        out.push(Cause::too_long(
            path,
            BadValue::Str(String::new()),
            TOTAL_ANNOTATION_SIZE_LIMIT as i64,
        ));
    }
    out
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one message as it is, several as
/// `[a, b]` with duplicates removed.
fn aggregate(causes: &[Cause]) -> String {
    let mut seen = Vec::new();
    for c in causes {
        let m = c.message();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    if seen.len() == 1 {
        seen.remove(0)
    } else {
        format!("[{}]", seen.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(meta: Value) -> Value {
        json!({"apiVersion": "stable.example.com/v2", "kind": "CronTab", "metadata": meta,
            "spec": {"schedule": "* * * * *"}})
    }

    fn original() -> Value {
        object(
            json!({"name": "a", "namespace": "ns1", "uid": "u1", "generation": 3,
            "labels": {"app": "x"}, "annotations": {"note": "n"},
            "finalizers": ["f"], "creationTimestamp": "2026-01-01T00:00:00Z"}),
        )
    }

    #[test]
    fn name_namespace_and_uid_must_stay() {
        let o = original();
        assert_eq!(validate_converted(&o, &o), Ok(()));
        for (field, to, want) in [
            ("name", "b", "must have the same name: a != b"),
            (
                "namespace",
                "ns2",
                "must have the same namespace: ns1 != ns2",
            ),
            ("uid", "u2", "must have the same UID: u1 != u2"),
        ] {
            let mut c = o.clone();
            c["metadata"][field] = json!(to);
            assert_eq!(validate_converted(&o, &c), Err(want.to_string()), "{field}");
        }
    }

    /// Everything but labels and annotations comes back from the original; the webhook's
    /// labels and annotations stay (absent: removed).
    #[test]
    fn metadata_is_the_originals_but_labels_and_annotations() {
        let o = original();
        let mut c = object(
            json!({"name": "a", "namespace": "ns1", "uid": "u1", "generation": 9,
            "labels": {"app": "x", "conv": "yes"}, "finalizers": [], "foo": "bar"}),
        );
        restore_object_meta(&o, &mut c).unwrap();
        let m = &c["metadata"];
        assert_eq!(m["generation"], 3);
        assert_eq!(m["finalizers"], json!(["f"]));
        assert_eq!(m["creationTimestamp"], "2026-01-01T00:00:00Z");
        assert!(m.get("foo").is_none());
        assert_eq!(m["labels"], json!({"app": "x", "conv": "yes"}));
        assert!(
            m.get("annotations").is_none(),
            "dropped by the webhook: gone"
        );
        assert_eq!(c["spec"]["schedule"], "* * * * *");
    }

    #[test]
    fn bad_metadata_is_refused_with_the_servers_words() {
        let o = original();
        let cases = [
            (
                json!({"apiVersion": "x/v1", "kind": "K"}),
                "missing metadata in converted object",
            ),
            (
                json!({"metadata": []}),
                "invalid metadata of type []interface {} in converted object",
            ),
            (
                json!({"metadata": {"labels": "x"}}),
                "invalid metadata.labels of type string in converted object",
            ),
            (
                json!({"metadata": {"labels": {"a": 1}}}),
                "metadata.labels[a] must be a string, but is int64 in converted object",
            ),
            (
                json!({"metadata": {"annotations": {"a": null}}}),
                "metadata.annotations[a] must be a string, but is <nil> in converted object",
            ),
        ];
        for (mut c, want) in cases {
            assert_eq!(
                restore_object_meta(&o, &mut c),
                Err(want.to_string()),
                "{c}"
            );
        }
    }

    /// Changed labels and annotations are validated; unchanged ones never are, even when the
    /// original's were invalid already.
    #[test]
    fn changed_labels_and_annotations_are_validated() {
        let mut o = original();
        o["metadata"]["labels"] = json!({"bad key!": "x"});
        let mut same = o.clone();
        assert_eq!(restore_object_meta(&o, &mut same), Ok(()));
        let mut c = o.clone();
        c["metadata"]["labels"] = json!({"some/non-qualified/label": "x"});
        let e = restore_object_meta(&o, &mut c).unwrap_err();
        assert!(
            e.starts_with("metadata.labels: Invalid value: \"some/non-qualified/label\": "),
            "{e}"
        );
        let mut c = original();
        c["metadata"]["labels"] = json!({"app": "x".repeat(64)});
        let e = restore_object_meta(&original(), &mut c).unwrap_err();
        assert!(e.contains("must be no more than 63"), "{e}");
        let mut c = original();
        c["metadata"]["annotations"] = json!({"big": "y".repeat(262_145)});
        let e = restore_object_meta(&original(), &mut c).unwrap_err();
        assert!(e.starts_with("metadata.annotation: Too long: "), "{e}");
        // Several errors: Go's aggregate.
        let mut c = original();
        c["metadata"]["labels"] = json!({"a/b/c": "x", "ok": "y".repeat(64)});
        let e = restore_object_meta(&original(), &mut c).unwrap_err();
        assert!(
            e.starts_with('[') && e.ends_with(']') && e.contains(", "),
            "{e}"
        );
    }
}
