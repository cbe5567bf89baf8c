//! Decoding `metadata` into a typed `metav1.ObjectMeta` as the API server does (case-sensitive
//! `encoding/json` via `sigs.k8s.io/json`, `metav1.Time.UnmarshalJSON` with Go's
//! `time.Parse(time.RFC3339, ...)`), and the 400 texts built from its errors: the top-level
//! request error and the schema coercer's errors for embedded resources
//! (`apiextensions-apiserver/pkg/apiserver/schema/objectmeta/coerce.go`).

use crate::cause::{BadValue, Cause, Path};
use crate::go;
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------------
// Stage 1: decoding into ObjectMeta

/// The Go types of the ObjectMeta fields, as the decoder names them in its messages.
#[derive(Clone, Copy)]
enum GoType {
    /// A string-kinded type, with its Go name (`string`, `types.UID`, ...).
    Str(&'static str),
    Int64,
    Bool,
    /// `metav1.Time`: decoded by its own `UnmarshalJSON`.
    Time,
    /// `map[string]string`.
    StrMap,
    /// `[]string`.
    StrList,
    /// `[]v1.OwnerReference`.
    OwnerRefs,
    /// `[]v1.ManagedFieldsEntry`.
    ManagedFields,
    /// `*v1.FieldsV1`: accepts any JSON.
    Any,
}

fn object_meta_field(k: &str) -> Option<GoType> {
    Some(match k {
        "name" | "generateName" | "namespace" | "selfLink" | "resourceVersion" => {
            GoType::Str("string")
        }
        "uid" => GoType::Str("types.UID"),
        "generation" | "deletionGracePeriodSeconds" => GoType::Int64,
        "creationTimestamp" | "deletionTimestamp" => GoType::Time,
        "labels" | "annotations" => GoType::StrMap,
        "ownerReferences" => GoType::OwnerRefs,
        "finalizers" => GoType::StrList,
        "managedFields" => GoType::ManagedFields,
        _ => return None,
    })
}

fn owner_reference_field(k: &str) -> Option<GoType> {
    Some(match k {
        "apiVersion" | "kind" | "name" => GoType::Str("string"),
        "uid" => GoType::Str("types.UID"),
        "controller" | "blockOwnerDeletion" => GoType::Bool,
        _ => return None,
    })
}

fn managed_fields_entry_field(k: &str) -> Option<GoType> {
    Some(match k {
        "manager" | "apiVersion" | "fieldsType" | "subresource" => GoType::Str("string"),
        "operation" => GoType::Str("v1.ManagedFieldsOperationType"),
        "time" => GoType::Time,
        "fieldsV1" => GoType::Any,
        _ => return None,
    })
}

/// Where the decoder is: the innermost struct and the JSON field names leading to the value.
#[derive(Clone, Copy)]
struct DecodeCtx<'a> {
    strukt: &'static str,
    outer: Option<&'a str>,
    field: &'a str,
}

impl DecodeCtx<'_> {
    fn type_error(&self, what: &str, ty: &str) -> String {
        match self.outer {
            Some(o) => format!(
                "json: cannot unmarshal {what} into Go struct field {}.{o}.{} of type {ty}",
                self.strukt, self.field
            ),
            None => format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {ty}",
                self.strukt, self.field
            ),
        }
    }
}

/// The errors met while decoding a subtree: the first one that stops the decoder (`fatal`,
/// from `metav1.Time`) and the first type error, which the decoder only records.
#[derive(Default)]
struct Decoded {
    fatal: Option<String>,
    saved: Option<String>,
}

impl Decoded {
    fn is_clean(&self) -> bool {
        self.fatal.is_none() && self.saved.is_none()
    }
}

use crate::go::json::json_kind;

/// `None` when a number decodes into an `int64`, else the literal as `encoding/json` wrote it.
fn int64_overflow_literal(n: &serde_json::Number) -> Option<String> {
    if n.is_i64() {
        return None;
    }
    if let Some(u) = n.as_u64() {
        return Some(u.to_string());
    }
    let lit = go::json::float_json(n.as_f64().unwrap_or(0.0));
    if lit.parse::<i64>().is_ok() {
        None
    } else {
        Some(lit)
    }
}

fn decode_value(v: &Value, ty: GoType, ctx: DecodeCtx<'_>) -> Decoded {
    let mut out = Decoded::default();
    if v.is_null() {
        return out;
    }
    let kind = json_kind(v);
    match ty {
        GoType::Any => {}
        GoType::Str(name) => {
            if !v.is_string() {
                out.saved = Some(ctx.type_error(kind, name));
            }
        }
        GoType::Bool => {
            if !v.is_boolean() {
                out.saved = Some(ctx.type_error(kind, "bool"));
            }
        }
        GoType::Int64 => match v {
            Value::Number(n) => {
                if let Some(lit) = int64_overflow_literal(n) {
                    out.saved = Some(ctx.type_error(&format!("number {lit}"), "int64"));
                }
            }
            _ => out.saved = Some(ctx.type_error(kind, "int64")),
        },
        GoType::Time => match v {
            Value::String(s) => out.fatal = crate::go::time::rfc3339_parse_error(s),
            // metav1.Time decodes a string first; its error gets the field context.
            _ => out.fatal = Some(ctx.type_error(kind, "string")),
        },
        GoType::StrMap => match v {
            Value::Object(m) => {
                // The first bad value in key order.
                let first = m
                    .iter()
                    .filter(|(_, val)| !val.is_null() && !val.is_string())
                    .min_by(|a, b| a.0.cmp(b.0));
                if let Some((_, val)) = first {
                    out.saved = Some(ctx.type_error(json_kind(val), "string"));
                }
            }
            _ => out.saved = Some(ctx.type_error(kind, "map[string]string")),
        },
        GoType::StrList => match v {
            Value::Array(items) => {
                if let Some(val) = items.iter().find(|i| !i.is_null() && !i.is_string()) {
                    out.saved = Some(ctx.type_error(json_kind(val), "string"));
                }
            }
            _ => out.saved = Some(ctx.type_error(kind, "[]string")),
        },
        GoType::OwnerRefs | GoType::ManagedFields => {
            let (list_ty, elem_ty, strukt, fields): (_, _, _, fn(&str) -> Option<GoType>) =
                if matches!(ty, GoType::OwnerRefs) {
                    (
                        "[]v1.OwnerReference",
                        "v1.OwnerReference",
                        "OwnerReference",
                        owner_reference_field,
                    )
                } else {
                    (
                        "[]v1.ManagedFieldsEntry",
                        "v1.ManagedFieldsEntry",
                        "ManagedFieldsEntry",
                        managed_fields_entry_field,
                    )
                };
            let Value::Array(items) = v else {
                out.saved = Some(ctx.type_error(kind, list_ty));
                return out;
            };
            for item in items {
                let d = match item {
                    Value::Null => continue,
                    Value::Object(m) => decode_struct(m, strukt, Some(ctx.field), fields),
                    other => Decoded {
                        fatal: None,
                        saved: Some(ctx.type_error(json_kind(other), elem_ty)),
                    },
                };
                if d.fatal.is_some() {
                    out.fatal = d.fatal;
                    return out;
                }
                if out.saved.is_none() {
                    out.saved = d.saved;
                }
            }
        }
    }
    out
}

/// Decodes the fields of a struct in key order (what the decoder sees after re-marshalling).
fn decode_struct(
    m: &Map<String, Value>,
    strukt: &'static str,
    outer: Option<&str>,
    fields: fn(&str) -> Option<GoType>,
) -> Decoded {
    let mut fatal: Option<(&str, String)> = None;
    let mut saved: Option<(&str, String)> = None;
    for (k, v) in m {
        let Some(ty) = fields(k) else { continue };
        let ctx = DecodeCtx {
            strukt,
            outer,
            field: k,
        };
        let d = decode_value(v, ty, ctx);
        if d.is_clean() {
            continue;
        }
        if let Some(e) = d.fatal
            && fatal.as_ref().is_none_or(|(fk, _)| k.as_str() < *fk)
        {
            fatal = Some((k, e));
        }
        if let Some(e) = d.saved
            && saved.as_ref().is_none_or(|(sk, _)| k.as_str() < *sk)
        {
            saved = Some((k, e));
        }
    }
    Decoded {
        fatal: fatal.map(|(_, e)| e),
        saved: saved.map(|(_, e)| e),
    }
}

/// The error text of decoding `metadata` into `metav1.ObjectMeta`, `None` when it decodes.
pub fn objectmeta_decode_error(meta: &Value) -> Option<String> {
    match meta {
        Value::Null => None,
        Value::Object(m) => {
            let d = decode_struct(m, "ObjectMeta", None, object_meta_field);
            d.fatal.or(d.saved)
        }
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            json_kind(other)
        )),
    }
}

/// The 400 text the server returns for the top-level object when its `metadata` cannot be
/// decoded into `ObjectMeta` (`json: cannot unmarshal array into Go struct field
/// ObjectMeta.labels of type map[string]string`, `parsing time ...`). `None` when it decodes
/// (or is absent). Type and version checks of `apiVersion`/`kind` are not done here.
pub fn request_error(obj: &Value) -> Option<String> {
    obj.get("metadata").and_then(objectmeta_decode_error)
}

/// The 400 text of the schema coercer for one `x-kubernetes-embedded-resource` object at
/// `path`: `apiVersion` or `kind` not a string (`spec.t.apiVersion: Invalid value: 1: must be
/// a string`), or a `metadata` that does not decode (`spec.t.metadata: Invalid value: {...}:
/// json: cannot unmarshal ...`). Upstream checks the keys in map order, so with several
/// problems any one may be reported; this checks `apiVersion`, `kind`, then `metadata`.
/// `None` for non-objects and valid objects.
pub fn embedded_request_error(obj: &Value, path: &Path) -> Option<String> {
    embedded_request_cause(obj, path).map(|c| c.message())
}

/// [`embedded_request_error`] as the cause the coercer returns.
pub fn embedded_request_cause(obj: &Value, path: &Path) -> Option<Cause> {
    let m = obj.as_object()?;
    for k in ["apiVersion", "kind"] {
        if let Some(v) = m.get(k)
            && !v.is_string()
        {
            return Some(Cause::invalid(
                path.child(k),
                BadValue::from_value(v),
                "must be a string",
            ));
        }
    }
    let v = m.get("metadata")?;
    let err = objectmeta_decode_error(v)?;
    Some(Cause::invalid(
        path.child("metadata"),
        BadValue::from_value(v),
        err,
    ))
}
