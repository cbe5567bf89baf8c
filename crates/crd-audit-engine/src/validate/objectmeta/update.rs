//! ObjectMeta on UPDATE: `rest.BeforeUpdate`'s preparation of the new object's metadata from
//! the stored one's, `ValidateObjectMetaAccessor` with path-segment names and
//! `ValidateObjectMetaAccessorUpdate` (`apimachinery/pkg/api/validation/objectmeta.go`), and the
//! finalizer warnings of the custom resource strategy's `WarningsOnUpdate`.

use super::meta::{MetaPath, as_map, invalid_str, str_of, validate_meta_parts};
use crate::cause::{BadValue, Cause, Path};
use crate::k8s::names::{dns1123_label_errors, label_key_errors, path_segment_errors};
use serde_json::{Map, Value};

fn path(name: &str) -> Path {
    Path::new("metadata").child(name)
}

/// `rest.BeforeUpdate` on the new object's metadata after the strategy's preparation: `uid`,
/// `creationTimestamp`, `deletionTimestamp` and `deletionGracePeriodSeconds` come from the
/// stored object when it has them (the uid only when the new object names none).
pub fn prepare_for_update(new: &mut Map<String, Value>, old: &Map<String, Value>) {
    if str_of(new, "uid").is_empty()
        && let Some(uid) = old.get("uid").filter(|u| !is_zero(u))
    {
        new.insert("uid".into(), uid.clone());
    }
    for key in ["creationTimestamp", "deletionTimestamp"] {
        if let Some(t) = old.get(key).filter(|t| !is_zero(t)) {
            new.insert(key.into(), t.clone());
        }
    }
    if let Some(g) = old
        .get("deletionGracePeriodSeconds")
        .filter(|g| !g.is_null())
        && new
            .get("deletionGracePeriodSeconds")
            .is_none_or(Value::is_null)
    {
        new.insert("deletionGracePeriodSeconds".into(), g.clone());
    }
}

/// Whether a metadata value is Go's zero value (absent once encoded).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// `ValidateObjectMetaAccessor` with `ValidatePathSegmentName`, as `rest.BeforeUpdate`'s
/// common-field check runs it on the new object (`namespace` is the one already resolved:
/// the request's for a namespaced CRD, none otherwise).
pub fn validate_object_meta_accessor(meta: &Value, namespaced: bool) -> Vec<Cause> {
    let m = as_map(meta);
    let at = MetaPath(None);
    let mut out = Vec::new();
    let generate_name = str_of(m, "generateName");
    if !generate_name.is_empty() {
        for msg in path_segment_errors(generate_name, true) {
            out.push(invalid_str(path("generateName"), generate_name, msg));
        }
    }
    let name = str_of(m, "name");
    if name.is_empty() {
        out.push(Cause::required(
            path("name"),
            "name or generateName is required",
        ));
    } else {
        for msg in path_segment_errors(name, false) {
            out.push(invalid_str(path("name"), name, msg));
        }
    }
    let ns = str_of(m, "namespace");
    if namespaced {
        if ns.is_empty() {
            out.push(Cause::required(path("namespace"), ""));
        } else {
            for msg in dns1123_label_errors(ns.as_bytes()) {
                out.push(invalid_str(path("namespace"), ns, msg));
            }
        }
    } else if !ns.is_empty() {
        out.push(Cause::forbidden(
            path("namespace"),
            "not allowed on this type",
        ));
    }
    if let Some(g) = m.get("generation").and_then(Value::as_i64)
        && g < 0
    {
        out.push(Cause::invalid(
            path("generation"),
            BadValue::Int(g),
            "must be greater than or equal to 0",
        ));
    }
    validate_meta_parts(m, at, true, &mut out);
    out
}

/// `ValidateObjectMetaAccessorUpdate`: no new finalizers on an object being deleted, a
/// `resourceVersion`, no decremented `generation`, the immutable fields (name, namespace, uid,
/// creation and deletion times, grace period), then labels, annotations, owner references and
/// managed fields of the new object.
pub fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<Cause> {
    let (n, o) = (as_map(new), as_map(old));
    let mut out = Vec::new();
    if o.get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        let old_set = finalizers(o);
        let mut extra: Vec<&str> = finalizers(n)
            .into_iter()
            .filter(|f| !old_set.contains(f))
            .collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            let list: Vec<String> = extra.iter().map(|f| crate::go::strconv::quote(f)).collect();
            out.push(Cause::forbidden(
                path("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    list.join(", ")
                ),
            ));
        }
    }
    let rv = str_of(n, "resourceVersion");
    if rv.is_empty() {
        out.push(invalid_str(
            path("resourceVersion"),
            rv,
            "must be specified for an update",
        ));
    }
    let generation =
        |m: &Map<String, Value>| m.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if generation(n) < generation(o) {
        out.push(Cause::invalid(
            path("generation"),
            BadValue::Int(generation(n)),
            "must not be decremented",
        ));
    }
    for key in ["name", "namespace", "uid"] {
        let (a, b) = (str_of(n, key), str_of(o, key));
        if a != b {
            out.push(invalid_str(path(key), a, IMMUTABLE));
        }
    }
    for key in ["creationTimestamp", "deletionTimestamp"] {
        let (a, b) = (time_of(n, key), time_of(o, key));
        if a != b {
            let value = a.map_or(Value::Null, |t| Value::String(t.to_string()));
            out.push(Cause::invalid(path(key), BadValue::Json(value), IMMUTABLE));
        }
    }
    let grace =
        |m: &Map<String, Value>| m.get("deletionGracePeriodSeconds").and_then(Value::as_i64);
    if grace(n) != grace(o) {
        let value = grace(n).map_or(BadValue::Json(Value::Null), BadValue::Int);
        out.push(Cause::invalid(
            path("deletionGracePeriodSeconds"),
            value,
            IMMUTABLE,
        ));
    }
    validate_meta_parts(n, MetaPath(None), false, &mut out);
    out
}

const IMMUTABLE: &str = "field is immutable";

fn finalizers(m: &Map<String, Value>) -> Vec<&str> {
    m.get("finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|f| f.as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

fn time_of<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The custom resource strategy's finalizer warnings (`generateWarningsFromObj`): for each
/// finalizer the update adds (sorted, each once), the qualified-name problems and the advice
/// to prefer a domain-qualified name.
pub fn finalizer_warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    let (n, o) = (as_map(new), old.map(as_map));
    let before = o.map(finalizers).unwrap_or_default();
    let mut added: Vec<&str> = finalizers(n)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    added.sort_unstable();
    added.dedup();
    let mut out = Vec::new();
    let at = "metadata.finalizers";
    for f in added {
        let quoted = crate::go::strconv::quote(f);
        for msg in label_key_errors(f) {
            out.push(format!("{at}: {quoted}: {msg}"));
        }
        if !f.contains('/') && !matches!(f, "orphan" | "foregroundDeletion" | "kubernetes") {
            let advice = if f.contains('.') {
                "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
            } else {
                "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            };
            out.push(format!("{at}: {quoted}: {advice}"));
        }
    }
    out
}
