//! ObjectMeta validation: `apimachinery/pkg/api/validation/objectmeta.go`
//! (`ValidateObjectMetaAccessor`: name, generateName, namespace, labels, annotations,
//! finalizers, generation), the preparation of `rest.BeforeCreate` and the custom-resource
//! strategy, and `validateEmbeddedResource` of
//! `apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go`.

use super::decode::objectmeta_decode_error;
use super::managed_fields::validate_managed_fields;
use super::owner_references::validate_owner_references;
use super::{GENERATED_NAME_SUFFIX, MAX_GENERATED_BASE, TOTAL_ANNOTATION_SIZE_LIMIT};
use crate::cause::{BadValue, Cause, Path};
use crate::k8s::names::{
    dns1035_label_errors, dns1123_label_errors, label_key_errors, label_value_errors,
    name_is_dns_subdomain, path_segment_errors,
};
use serde_json::{Map, Value};
use std::borrow::Cow;

// ---------------------------------------------------------------------------------------------
// Stages 2 and 3: validation

/// Where the metadata is: the top-level `metadata` (path built only when needed) or a given
/// path.
#[derive(Clone, Copy)]
pub(super) struct MetaPath<'a>(pub(super) Option<&'a Path>);

impl MetaPath<'_> {
    pub(super) fn child(&self, name: &str) -> Path {
        match self.0 {
            Some(p) => p.child(name),
            None => Path::new("metadata").child(name),
        }
    }
}

pub(super) fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

pub(super) fn as_map(meta: &Value) -> &Map<String, Value> {
    meta.as_object().unwrap_or_else(|| empty_map())
}

pub(super) fn invalid_str(path: Path, v: &str, detail: impl Into<String>) -> Cause {
    Cause::invalid(path, BadValue::Str(v.to_string()), detail)
}

/// Validates the top-level `metadata` of a custom resource on CREATE, as the custom-resource
/// strategy does (after `rest.BeforeCreate`'s preparation): `name` (DNS subdomain; generated
/// from `generateName` when empty), `generateName`, `namespace` (DNS label; the request's
/// `default` when a namespaced object has none; ignored for cluster-scoped CRDs, whose
/// namespace the server clears), `labels`, `annotations`, `ownerReferences`, `finalizers` and
/// `managedFields`. `meta` is the `metadata` value (`Null` when absent) that decoded without a
/// [`request_error`]. Causes use `metadata.*` paths.
pub fn validate_object_meta(meta: &Value, namespaced: bool) -> Vec<Cause> {
    let m = as_map(meta);
    let at = MetaPath(None);
    let mut out = Vec::new();

    let generate_name = str_of(m, "generateName");
    if !generate_name.is_empty() {
        for msg in name_is_dns_subdomain(generate_name, true) {
            out.push(invalid_str(at.child("generateName"), generate_name, msg));
        }
    }
    let name = str_of(m, "name");
    let generated;
    let name = if name.is_empty() && !generate_name.is_empty() {
        let b = generate_name.as_bytes();
        let base = &b[..b.len().min(MAX_GENERATED_BASE)];
        generated = format!("{}{GENERATED_NAME_SUFFIX}", String::from_utf8_lossy(base));
        generated.as_str()
    } else {
        name
    };
    if name.is_empty() {
        out.push(Cause::required(
            at.child("name"),
            "name or generateName is required",
        ));
    } else {
        for msg in name_is_dns_subdomain(name, false) {
            out.push(invalid_str(at.child("name"), name, msg));
        }
    }

    if namespaced {
        let ns = match str_of(m, "namespace") {
            "" => "default",
            ns => ns,
        };
        for msg in dns1123_label_errors(ns.as_bytes()) {
            out.push(invalid_str(at.child("namespace"), ns, msg));
        }
    }
    // `generation` is reset to 1 by the strategy's PrepareForCreate.

    validate_meta_common(m, at, &mut out);
    out
}

/// The creation time the schema validator sees in place of the server's clock.
pub const CREATION_TIMESTAMP: &str = "2006-01-02T15:04:05Z";
/// The uid the schema validator sees in place of the one the server generates.
pub const CREATION_UID: &str = "00000000-0000-0000-0000-000000000000";

/// Rewrites a top-level `metadata` (one that decoded without a [`request_error`]) into the
/// form the schema validator sees on CREATE: decoded into `ObjectMeta` and encoded again
/// (unknown fields and empty optional ones gone), then prepared as `rest.BeforeCreate` and
/// the custom-resource strategy do (name generated from `generateName`, the request's
/// namespace, a creation timestamp and uid, `generation` 1, no deletion fields). Only a schema
/// that describes `metadata` (legacy CRDs) can tell.
pub fn prepare_for_create(meta: &mut Value, namespace: Option<&str>) {
    let mut m = match std::mem::take(meta) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    m.retain(|k, v| {
        crate::validate::prune::OBJECT_META_FIELDS.contains(&k.as_str())
            && !matches!(
                k.as_str(),
                "deletionTimestamp" | "deletionGracePeriodSeconds"
            )
            && !match v {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::Bool(b) => !*b,
            }
    });
    let generate_name = str_of(&m, "generateName").to_string();
    if !m.contains_key("name") && !generate_name.is_empty() {
        let b = generate_name.as_bytes();
        let base = String::from_utf8_lossy(&b[..b.len().min(MAX_GENERATED_BASE)]);
        m.insert(
            "name".into(),
            Value::String(format!("{base}{GENERATED_NAME_SUFFIX}")),
        );
    }
    match namespace {
        Some(ns) => m.insert("namespace".into(), Value::String(ns.to_string())),
        None => m.remove("namespace"),
    };
    m.insert(
        "creationTimestamp".into(),
        Value::String(CREATION_TIMESTAMP.into()),
    );
    m.entry("uid")
        .or_insert_with(|| Value::String(CREATION_UID.into()));
    m.insert("generation".into(), Value::from(1));
    *meta = Value::Object(m);
}

/// Validates one `x-kubernetes-embedded-resource` object at `path` (`spec.template`), as
/// `validateEmbeddedResource` does: `apiVersion` and `kind` are required (`Required` at
/// `path.apiVersion` / `path.kind`), must be non-empty strings, `apiVersion` must parse as a
/// group/version and `kind` must be a DNS-1035 label in any case; `metadata`, when present, is
/// checked by [`validate_embedded_meta`]. Non-objects give nothing.
pub fn validate_embedded_resource(obj: &Value, path: &Path) -> Vec<Cause> {
    let Some(m) = obj.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match m.get("apiVersion") {
        None => out.push(Cause::required(path.child("apiVersion"), "")),
        Some(Value::String(s)) if s.is_empty() => {
            out.push(invalid_str(
                path.child("apiVersion"),
                s,
                "must not be empty",
            ));
        }
        Some(Value::String(s)) => {
            if s != "/" && s.bytes().filter(|&b| b == b'/').count() > 1 {
                out.push(invalid_str(
                    path.child("apiVersion"),
                    s,
                    format!("unexpected GroupVersion string: {s}"),
                ));
            }
        }
        Some(v) => out.push(Cause::invalid(
            path.child("apiVersion"),
            BadValue::from_value(v),
            "must be a string",
        )),
    }
    match m.get("kind") {
        None => out.push(Cause::required(path.child("kind"), "")),
        Some(Value::String(s)) if s.is_empty() => {
            out.push(invalid_str(path.child("kind"), s, "must not be empty"));
        }
        Some(Value::String(s)) => {
            let errs = dns1035_label_errors(go_to_lower(s).as_bytes());
            if !errs.is_empty() {
                out.push(invalid_str(
                    path.child("kind"),
                    s,
                    format!(
                        "may have mixed case, but should otherwise match: {}",
                        errs.join(",")
                    ),
                ));
            }
        }
        Some(v) => out.push(Cause::invalid(
            path.child("kind"),
            BadValue::from_value(v),
            "must be a string",
        )),
    }
    if let Some(meta) = m.get("metadata") {
        let meta_path = path.child("metadata");
        match objectmeta_decode_error(meta) {
            Some(err) => out.push(Cause::invalid(meta_path, BadValue::from_value(meta), err)),
            None => out.extend(validate_embedded_meta(meta, &meta_path)),
        }
    }
    out
}

/// Validates the `metadata` of an embedded resource; `path` is the path of that metadata
/// (`spec.template.metadata`). Upstream runs `ValidateObjectMeta` with path-segment names:
/// `name` (`fakename` when empty, so never required) may not be `.`/`..` nor contain `/`/`%`,
/// `generateName` may not contain them, `namespace` is a DNS label when set, `generation` must
/// not be negative; labels, annotations, owner references, finalizers and managed fields as at
/// the top level.
pub fn validate_embedded_meta(meta: &Value, path: &Path) -> Vec<Cause> {
    let m = as_map(meta);
    let at = MetaPath(Some(path));
    let mut out = Vec::new();
    let generate_name = str_of(m, "generateName");
    if !generate_name.is_empty() {
        for msg in path_segment_errors(generate_name, true) {
            out.push(invalid_str(at.child("generateName"), generate_name, msg));
        }
    }
    let name = str_of(m, "name");
    if !name.is_empty() {
        for msg in path_segment_errors(name, false) {
            out.push(invalid_str(at.child("name"), name, msg));
        }
    }
    let ns = str_of(m, "namespace");
    if !ns.is_empty() {
        for msg in dns1123_label_errors(ns.as_bytes()) {
            out.push(invalid_str(at.child("namespace"), ns, msg));
        }
    }
    if let Some(g) = m.get("generation").and_then(Value::as_i64)
        && g < 0
    {
        out.push(Cause::invalid(
            at.child("generation"),
            BadValue::Int(g),
            "must be greater than or equal to 0",
        ));
    }
    validate_meta_common(m, at, &mut out);
    out
}

/// Labels, annotations, owner references, finalizers and managed fields.
fn validate_meta_common(m: &Map<String, Value>, at: MetaPath<'_>, out: &mut Vec<Cause>) {
    validate_meta_parts(m, at, true, out);
}

/// Labels, annotations, owner references, finalizers (when `finalizers`) and managed fields,
/// in that order.
pub(super) fn validate_meta_parts(
    m: &Map<String, Value>,
    at: MetaPath<'_>,
    finalizers: bool,
    out: &mut Vec<Cause>,
) {
    if let Some(labels) = m.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            for msg in label_key_errors(k) {
                out.push(invalid_str(at.child("labels"), k, msg));
            }
            let v = v.as_str().unwrap_or("");
            for msg in label_value_errors(v) {
                out.push(invalid_str(at.child("labels"), v, msg));
            }
        }
    }
    if let Some(annotations) = m.get("annotations").and_then(Value::as_object) {
        let mut total = 0usize;
        for (k, v) in annotations {
            for msg in label_key_errors(&go_to_lower(k)) {
                out.push(invalid_str(at.child("annotations"), k, msg));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            out.push(Cause::too_long(
                at.child("annotations"),
                BadValue::Str(String::new()),
                TOTAL_ANNOTATION_SIZE_LIMIT as i64,
            ));
        }
    }
    if let Some(refs) = m.get("ownerReferences").and_then(Value::as_array) {
        validate_owner_references(refs, at, out);
    }
    if let Some(finalizers) = m
        .get("finalizers")
        .and_then(Value::as_array)
        .filter(|_| finalizers)
    {
        let (mut orphan, mut foreground) = (false, false);
        for f in finalizers {
            let f = f.as_str().unwrap_or("");
            for msg in label_key_errors(f) {
                out.push(invalid_str(at.child("finalizers"), f, msg));
            }
            orphan |= f == "orphan";
            foreground |= f == "foregroundDeletion";
        }
        if orphan && foreground {
            let list = finalizers
                .iter()
                .map(|f| Value::String(f.as_str().unwrap_or("").to_string()))
                .collect();
            out.push(Cause::invalid(
                at.child("finalizers"),
                BadValue::Json(Value::Array(list)),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
    }
    if let Some(entries) = m.get("managedFields").and_then(Value::as_array) {
        validate_managed_fields(entries, at, out);
    }
}

/// Go's `strings.ToLower` (simple case mapping per rune), borrowed when nothing changes.
pub fn go_to_lower(s: &str) -> Cow<'_, str> {
    if !s.bytes().any(|b| b.is_ascii_uppercase() || b >= 0x80) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c == '\u{130}' {
            // The only rune whose full lowercase mapping has two runes; Go maps it to 'i'.
            out.push('i');
        } else {
            out.extend(c.to_lowercase());
        }
    }
    Cow::Owned(out)
}
