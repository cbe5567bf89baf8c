//! The restriction on the root of a schema under a status subresource
//! (`validateCustomResourceDefinitionValidation`): the status schema is cut out of the root
//! as `properties[status]`, so only keywords that keep their meaning after the cut may stand
//! at the root, and its type may only be `object`.
//!
//! Upstream walks the fields of its internal `JSONSchemaProps` in declaration order, skips
//! those holding Go's zero value, and stops at the first that is not allowed; the error's
//! value is the whole internal schema, which the message prints as JSON with Go's field
//! names ([`internal_schema_json`]).

use crate::cause::{BadValue, Cause, Path};
use serde_json::Value;

/// How a field of the internal `JSONSchemaProps` is held, which decides its zero value and
/// its JSON rendering.
#[derive(Clone, Copy)]
enum Go {
    Str,
    Bool,
    /// `*string`, `*bool`, `*int64`, `*float64`: nil when absent or null.
    Ptr(Scalar),
    /// `JSON` (an `interface{}` holding what `json.Unmarshal` makes of the value).
    Json,
    /// `[]JSON`.
    JsonList,
    /// `[]string`.
    Strings,
    /// `*JSONSchemaPropsOrArray`.
    PropsOrArray,
    /// `[]JSONSchemaProps`.
    PropsList,
    /// `*JSONSchemaProps`.
    PropsPtr,
    /// `map[string]JSONSchemaProps`.
    PropsMap,
    /// `*JSONSchemaPropsOrBool`.
    PropsOrBool,
    /// `map[string]JSONSchemaPropsOrStringArray`.
    Dependencies,
    /// `*ExternalDocumentation`.
    ExternalDocs,
    /// `ValidationRules`.
    Rules,
}

#[derive(Clone, Copy)]
enum Scalar {
    Str,
    Bool,
    Int,
    Float,
}

/// The fields of the internal `JSONSchemaProps`, in declaration order: Go name, JSON key
/// (of the v1 type), representation.
const FIELDS: [(&str, &str, Go); 44] = [
    ("ID", "id", Go::Str),
    ("Schema", "$schema", Go::Str),
    ("Ref", "$ref", Go::Ptr(Scalar::Str)),
    ("Description", "description", Go::Str),
    ("Type", "type", Go::Str),
    ("Nullable", "nullable", Go::Bool),
    ("Format", "format", Go::Str),
    ("Title", "title", Go::Str),
    ("Default", "default", Go::Json),
    ("Maximum", "maximum", Go::Ptr(Scalar::Float)),
    ("ExclusiveMaximum", "exclusiveMaximum", Go::Bool),
    ("Minimum", "minimum", Go::Ptr(Scalar::Float)),
    ("ExclusiveMinimum", "exclusiveMinimum", Go::Bool),
    ("MaxLength", "maxLength", Go::Ptr(Scalar::Int)),
    ("MinLength", "minLength", Go::Ptr(Scalar::Int)),
    ("Pattern", "pattern", Go::Str),
    ("MaxItems", "maxItems", Go::Ptr(Scalar::Int)),
    ("MinItems", "minItems", Go::Ptr(Scalar::Int)),
    ("UniqueItems", "uniqueItems", Go::Bool),
    ("MultipleOf", "multipleOf", Go::Ptr(Scalar::Float)),
    ("Enum", "enum", Go::JsonList),
    ("MaxProperties", "maxProperties", Go::Ptr(Scalar::Int)),
    ("MinProperties", "minProperties", Go::Ptr(Scalar::Int)),
    ("Required", "required", Go::Strings),
    ("Items", "items", Go::PropsOrArray),
    ("AllOf", "allOf", Go::PropsList),
    ("OneOf", "oneOf", Go::PropsList),
    ("AnyOf", "anyOf", Go::PropsList),
    ("Not", "not", Go::PropsPtr),
    ("Properties", "properties", Go::PropsMap),
    (
        "AdditionalProperties",
        "additionalProperties",
        Go::PropsOrBool,
    ),
    ("PatternProperties", "patternProperties", Go::PropsMap),
    ("Dependencies", "dependencies", Go::Dependencies),
    ("AdditionalItems", "additionalItems", Go::PropsOrBool),
    ("Definitions", "definitions", Go::PropsMap),
    ("ExternalDocs", "externalDocs", Go::ExternalDocs),
    ("Example", "example", Go::Json),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
        Go::Ptr(Scalar::Bool),
    ),
    (
        "XEmbeddedResource",
        "x-kubernetes-embedded-resource",
        Go::Bool,
    ),
    ("XIntOrString", "x-kubernetes-int-or-string", Go::Bool),
    ("XListMapKeys", "x-kubernetes-list-map-keys", Go::Strings),
    ("XListType", "x-kubernetes-list-type", Go::Ptr(Scalar::Str)),
    ("XMapType", "x-kubernetes-map-type", Go::Ptr(Scalar::Str)),
    ("XValidations", "x-kubernetes-validations", Go::Rules),
];

/// The fields allowed at the root under a status subresource, in upstream's order (the
/// message lists them).
const ALLOWED_AT_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];

/// Whether a raw field holds Go's zero value once decoded (absent and `null` are zero; an
/// empty list or map is not, as Go decodes it into a non-nil one).
fn is_zero(v: Option<&Value>, go: Go) -> bool {
    match (v, go) {
        (None | Some(Value::Null), _) => true,
        (Some(Value::String(s)), Go::Str) => s.is_empty(),
        (Some(Value::Bool(b)), Go::Bool) => !b,
        _ => false,
    }
}

/// Checks the root of the schema at `path` (`...openAPIV3Schema`) whose raw JSON is `raw`,
/// when the status subresource is enabled.
pub fn check(raw: &Value, path: &Path, out: &mut Vec<Cause>) {
    for (name, key, go) in FIELDS {
        let v = raw.get(key);
        if is_zero(v, go) {
            continue;
        }
        if name == "Type" {
            let ty = v.and_then(Value::as_str).unwrap_or("");
            if ty != "object" {
                out.push(Cause::invalid(
                    Path::from_rendered(format!("{path}.type")),
                    BadValue::Str(ty.to_string()),
                    r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                ));
                return;
            }
            continue;
        }
        if !ALLOWED_AT_ROOT.contains(&name) {
            let json = internal_schema_json(raw);
            let value = serde_json::from_str(&json).unwrap_or(Value::Null);
            out.push(Cause::invalid(
                path.clone(),
                BadValue::Rendered { json, value },
                format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ALLOWED_AT_ROOT.join(" ")
                ),
            ));
            return;
        }
    }
}

/// A raw schema as the internal `JSONSchemaProps` it decodes into, written by
/// `json.Marshal` (which knows no JSON names for the internal type: Go's field names, in
/// declaration order; map keys sorted; numbers held as `float64` where Go holds them so).
pub fn internal_schema_json(raw: &Value) -> String {
    let mut out = String::new();
    props_json(raw, &mut out);
    out
}

fn props_json(raw: &Value, out: &mut String) {
    out.push('{');
    for (i, (name, key, go)) in FIELDS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::go::json::json_string(name, out);
        out.push(':');
        field_json(raw.get(*key), *go, out);
    }
    out.push('}');
}

fn float_json(v: &Value, out: &mut String) {
    out.push_str(&crate::go::json::float_json(v.as_f64().unwrap_or(0.0)));
}

/// A value as an `interface{}` filled by `json.Unmarshal` is written back: numbers are
/// `float64`s.
fn interface_json(v: &Value, out: &mut String) {
    match v {
        Value::Number(_) => float_json(v, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                interface_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                crate::go::json::json_string(k, out);
                out.push(':');
                interface_json(v, out);
            }
            out.push('}');
        }
        other => out.push_str(&crate::go::json::marshal(other)),
    }
}

fn list_json<T>(items: &[T], out: &mut String, mut each: impl FnMut(&T, &mut String)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(item, out);
    }
    out.push(']');
}

fn map_json(
    map: &serde_json::Map<String, Value>,
    out: &mut String,
    mut each: impl FnMut(&Value, &mut String),
) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::go::json::json_string(k, out);
        out.push(':');
        each(&map[k], out);
    }
    out.push('}');
}

fn field_json(v: Option<&Value>, go: Go, out: &mut String) {
    let v = match v {
        None | Some(Value::Null) => {
            out.push_str(match go {
                Go::Str => "\"\"",
                Go::Bool => "false",
                _ => "null",
            });
            return;
        }
        Some(v) => v,
    };
    match go {
        Go::Str | Go::Bool | Go::Ptr(Scalar::Str | Scalar::Bool | Scalar::Int) => {
            out.push_str(&crate::go::json::marshal(v));
        }
        Go::Ptr(Scalar::Float) => float_json(v, out),
        Go::Json => interface_json(v, out),
        Go::JsonList => match v {
            Value::Array(items) => list_json(items, out, interface_json),
            other => interface_json(other, out),
        },
        Go::Strings => out.push_str(&crate::go::json::marshal(v)),
        Go::PropsOrArray => {
            out.push_str("{\"Schema\":");
            match v {
                Value::Array(items) => {
                    out.push_str("null,\"JSONSchemas\":");
                    list_json(items, out, props_json);
                }
                schema => {
                    props_json(schema, out);
                    out.push_str(",\"JSONSchemas\":null");
                }
            }
            out.push('}');
        }
        Go::PropsList => match v {
            Value::Array(items) => list_json(items, out, props_json),
            _ => out.push_str("null"),
        },
        Go::PropsPtr => props_json(v, out),
        Go::PropsMap => match v {
            Value::Object(map) => map_json(map, out, props_json),
            _ => out.push_str("null"),
        },
        Go::PropsOrBool => match v {
            Value::Bool(b) => out.push_str(&format!("{{\"Allows\":{b},\"Schema\":null}}")),
            schema => {
                out.push_str("{\"Allows\":true,\"Schema\":");
                props_json(schema, out);
                out.push('}');
            }
        },
        Go::Dependencies => match v {
            Value::Object(map) => map_json(map, out, |d, out| {
                out.push_str("{\"Schema\":");
                match d {
                    Value::Array(names) => {
                        out.push_str("null,\"Property\":");
                        out.push_str(&crate::go::json::marshal(&Value::Array(names.clone())));
                    }
                    schema => {
                        props_json(schema, out);
                        out.push_str(",\"Property\":null");
                    }
                }
                out.push('}');
            }),
            _ => out.push_str("null"),
        },
        Go::ExternalDocs => {
            let text = |k: &str| v.get(k).cloned().unwrap_or(Value::String(String::new()));
            out.push_str("{\"Description\":");
            out.push_str(&crate::go::json::marshal(&text("description")));
            out.push_str(",\"URL\":");
            out.push_str(&crate::go::json::marshal(&text("url")));
            out.push('}');
        }
        Go::Rules => match v {
            Value::Array(rules) => list_json(rules, out, |r, out| {
                let text = |k: &str| match r.get(k) {
                    Some(Value::String(s)) => crate::go::json::marshal(&Value::String(s.clone())),
                    _ => "\"\"".to_string(),
                };
                let ptr = |k: &str| match r.get(k) {
                    None | Some(Value::Null) => "null".to_string(),
                    Some(v) => crate::go::json::marshal(v),
                };
                out.push_str(&format!(
                    "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
                    text("rule"),
                    text("message"),
                    text("messageExpression"),
                    ptr("reason"),
                    text("fieldPath"),
                    ptr("optionalOldSelf")
                ));
            }),
            _ => out.push_str("null"),
        },
    }
}
