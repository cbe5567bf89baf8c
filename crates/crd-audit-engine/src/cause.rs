//! Field errors shaped like the API server's `StatusCause`: upstream field paths, cause types
//! and the exact message text of `field.Error.Error()`.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// A field path built the way apimachinery's `field.Path` builds it: `.child`, `[index]`,
/// `[key]`. The empty path renders as `<nil>`.
#[derive(serde::Serialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[serde(transparent)]
pub struct Path(String);

impl Path {
    /// The root (empty) path.
    pub fn root() -> Self {
        Path(String::new())
    }

    /// A path starting with one named element.
    pub fn new(name: &str) -> Self {
        Path(name.to_string())
    }

    /// A path from an already rendered string (`spec.x[0]`).
    pub fn from_rendered(s: impl Into<String>) -> Self {
        Path(s.into())
    }

    /// A named element; an empty name renders as `[]`, as upstream renders an element with
    /// neither name nor index.
    pub fn child(&self, name: &str) -> Self {
        if name.is_empty() {
            self.key("")
        } else if self.0.is_empty() {
            Path(name.to_string())
        } else {
            let mut s = String::with_capacity(self.0.len() + 1 + name.len());
            s.push_str(&self.0);
            s.push('.');
            s.push_str(name);
            Path(s)
        }
    }

    /// An indexed element, rendered `[i]` (`field.Path.Index`).
    pub fn index(&self, i: usize) -> Self {
        Path(format!("{}[{}]", self.0, i))
    }

    /// A keyed element, rendered `[k]` with the key unquoted (`field.Path.Key`).
    pub fn key(&self, k: &str) -> Self {
        Path(format!("{}[{}]", self.0, k))
    }

    /// Whether this is the root (empty) path.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The rendered path; empty for the root, which `Display` prints as `<nil>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("<nil>")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// The cause types of `k8s.io/apimachinery/pkg/util/validation/field`.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorType {
    /// `field.ErrorTypeNotFound`; message prefix "Not found".
    NotFound,
    /// `field.ErrorTypeRequired`; message prefix "Required value", bad value not printed.
    Required,
    /// `field.ErrorTypeDuplicate`; message prefix "Duplicate value".
    Duplicate,
    /// `field.ErrorTypeInvalid`; message prefix "Invalid value".
    Invalid,
    /// `field.ErrorTypeNotSupported`; message prefix "Unsupported value".
    NotSupported,
    /// `field.ErrorTypeForbidden`; message prefix "Forbidden", bad value not printed.
    Forbidden,
    /// `field.ErrorTypeTooLong`; message prefix "Too long", bad value not printed.
    TooLong,
    /// `field.ErrorTypeTooMany`; message prefix "Too many".
    TooMany,
    /// `field.ErrorTypeInternal`; message prefix "Internal error", bad value not printed.
    Internal,
    /// `field.ErrorTypeTypeInvalid`; message prefix "Invalid value", as for `Invalid`.
    TypeInvalid,
}

impl ErrorType {
    /// The `StatusCause.reason` string.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// Parses a `StatusCause.reason` string.
    pub fn from_reason(s: &str) -> Option<Self> {
        Some(match s {
            "FieldValueNotFound" => ErrorType::NotFound,
            "FieldValueRequired" => ErrorType::Required,
            "FieldValueDuplicate" => ErrorType::Duplicate,
            "FieldValueInvalid" => ErrorType::Invalid,
            "FieldValueNotSupported" => ErrorType::NotSupported,
            "FieldValueForbidden" => ErrorType::Forbidden,
            "FieldValueTooLong" => ErrorType::TooLong,
            "FieldValueTooMany" => ErrorType::TooMany,
            "InternalError" => ErrorType::Internal,
            "FieldValueTypeInvalid" => ErrorType::TypeInvalid,
            _ => return None,
        })
    }

    /// The human text of the type (`ErrorType.String()`).
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// A bad value as the Go code holds it, which decides how the message prints it.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BadValue {
    /// `field.OmitValueType`: not printed.
    Omit,
    /// A Go `int`/`int64`: printed with `%v`.
    Int(i64),
    /// A Go `float64`: printed with `%v`.
    Float(f64),
    /// A Go `bool`: printed with `%v`.
    Bool(bool),
    /// A Go `string`: printed with `%q`.
    Str(String),
    /// Any other value: printed as `json.Marshal` prints it (`null` for nil).
    Json(Value),
    /// A value whose JSON rendering is already known (a Go struct, say).
    Rendered {
        /// The JSON text printed in messages.
        json: String,
        /// The value given as `badValue` in JSON output.
        value: Value,
    },
}

impl BadValue {
    /// The bad value as a decoded JSON value would be held by Go code
    /// (`interface{}` holding `int64`, `float64`, `string`, `bool`, maps or slices).
    pub fn from_value(v: &Value) -> Self {
        match v {
            Value::Bool(b) => BadValue::Bool(*b),
            Value::String(s) => BadValue::Str(s.clone()),
            Value::Number(n) => match crate::go::json::decoded_int(n) {
                Some(i) => BadValue::Int(i),
                None => BadValue::Float(n.as_f64().unwrap_or(0.0)),
            },
            other => BadValue::Json(other.clone()),
        }
    }

    /// The rendering used inside messages.
    pub fn render(&self) -> Option<String> {
        Some(match self {
            BadValue::Omit => return None,
            BadValue::Int(i) => i.to_string(),
            BadValue::Float(f) => crate::go::fmt::float_v(*f),
            BadValue::Bool(b) => b.to_string(),
            BadValue::Str(s) => crate::go::strconv::quote(s),
            BadValue::Json(v) => crate::go::json::marshal(v),
            BadValue::Rendered { json, .. } => json.clone(),
        })
    }

    /// The value as JSON (for `badValue` in JSON output).
    pub fn to_json(&self) -> Value {
        match self {
            BadValue::Omit => Value::Null,
            BadValue::Int(i) => Value::from(*i),
            BadValue::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            BadValue::Bool(b) => Value::Bool(*b),
            BadValue::Str(s) => Value::String(s.clone()),
            BadValue::Json(v) => v.clone(),
            BadValue::Rendered { value, .. } => value.clone(),
        }
    }
}

/// One field error.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Cause {
    /// The field path as the API server prints it (`StatusCause.field`).
    pub field: Path,
    /// The cause type, which gives `StatusCause.reason` and the message prefix.
    pub kind: ErrorType,
    /// The offending value, printed after the prefix unless the type omits it.
    pub bad_value: BadValue,
    /// The detail appended to the message; empty for none.
    pub detail: String,
}

impl Cause {
    /// A cause of any type; the arguments follow the fields of `field.Error`.
    pub fn new(
        kind: ErrorType,
        field: Path,
        bad_value: BadValue,
        detail: impl Into<String>,
    ) -> Self {
        Cause {
            field,
            kind,
            bad_value,
            detail: detail.into(),
        }
    }

    /// `field.Required`: the bad value is `""`, which the message does not print.
    pub fn required(field: Path, detail: impl Into<String>) -> Self {
        Cause::new(
            ErrorType::Required,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// `field.Forbidden`: the bad value is `""`, which the message does not print.
    pub fn forbidden(field: Path, detail: impl Into<String>) -> Self {
        Cause::new(
            ErrorType::Forbidden,
            field,
            BadValue::Str(String::new()),
            detail,
        )
    }

    /// `field.Invalid`.
    pub fn invalid(field: Path, value: BadValue, detail: impl Into<String>) -> Self {
        Cause::new(ErrorType::Invalid, field, value, detail)
    }

    /// `field.TypeInvalid`: printed as "Invalid value", with reason `FieldValueTypeInvalid`.
    pub fn type_invalid(field: Path, value: BadValue, detail: impl Into<String>) -> Self {
        Cause::new(ErrorType::TypeInvalid, field, value, detail)
    }

    /// `field.InternalError`: no bad value, the error's text as detail.
    pub fn internal(field: Path, detail: impl Into<String>) -> Self {
        Cause::new(ErrorType::Internal, field, BadValue::Omit, detail)
    }

    /// `field.Duplicate`: no detail.
    pub fn duplicate(field: Path, value: BadValue) -> Self {
        Cause::new(ErrorType::Duplicate, field, value, "")
    }

    /// `field.NotSupported`: the detail lists the quoted supported values.
    pub fn not_supported<S: AsRef<str>>(field: Path, value: BadValue, supported: &[S]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported
                .iter()
                .map(|s| crate::go::strconv::quote(s.as_ref()))
                .collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Cause::new(ErrorType::NotSupported, field, value, detail)
    }

    /// `field.TooLong` (also what `TooLongMaxLength` produces).
    pub fn too_long(field: Path, value: BadValue, max_length: i64) -> Self {
        let detail = if max_length >= 0 {
            let unit = if max_length == 1 { "byte" } else { "bytes" };
            format!("may not be more than {max_length} {unit}")
        } else {
            "value is too long".to_string()
        };
        Cause::new(ErrorType::TooLong, field, value, detail)
    }

    /// `field.TooMany`.
    pub fn too_many(field: Path, actual: i64, max: i64) -> Self {
        let detail = if max >= 0 {
            let unit = if max == 1 { "item" } else { "items" };
            format!("must have at most {max} {unit}")
        } else {
            "has too many items".to_string()
        };
        let value = if actual >= 0 {
            BadValue::Int(actual)
        } else {
            BadValue::Omit
        };
        Cause::new(ErrorType::TooMany, field, value, detail)
    }

    /// `ErrorBody()`: the message without the field.
    pub fn body(&self) -> String {
        let mut s = String::from(self.kind.text());
        let prints_value = !matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        );
        if prints_value && let Some(v) = self.bad_value.render() {
            s.push_str(": ");
            s.push_str(&v);
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// `Error()`: `field: body`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    /// The JSON shape of docs/reference/json-output.md (a `StatusCause` plus detail and
    /// badValue).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "field": self.field.to_string(),
            "type": self.kind.reason(),
            "detail": self.detail,
            "badValue": self.bad_value.to_json(),
            "message": self.message(),
        })
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl Serialize for Cause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_field_path() {
        let p = Path::new("spec").child("versions").index(0).child("schema");
        assert_eq!(p.to_string(), "spec.versions[0].schema");
        assert_eq!(
            p.child("properties").key("a.b").to_string(),
            "spec.versions[0].schema.properties[a.b]"
        );
        assert_eq!(Path::root().to_string(), "<nil>");
        assert_eq!(Path::root().child("x").to_string(), "x");
        assert_eq!(
            Path::new("spec").child("").child("a").to_string(),
            "spec[].a"
        );
        assert_eq!(Path::root().child("").to_string(), "[]");
        assert_eq!(Path::new("m").child("[k].c").to_string(), "m.[k].c");
    }

    #[test]
    fn messages_match_upstream_text() {
        let c = Cause::invalid(
            Path::new("spec").child("x"),
            BadValue::Str("ab".into()),
            "bad",
        );
        assert_eq!(c.message(), r#"spec.x: Invalid value: "ab": bad"#);
        let c = Cause::required(Path::new("spec"), "");
        assert_eq!(c.message(), "spec: Required value");
        let c = Cause::not_supported(
            Path::new("t"),
            BadValue::Str("bag".into()),
            &["atomic", "set"],
        );
        assert_eq!(
            c.message(),
            r#"t: Unsupported value: "bag": supported values: "atomic", "set""#
        );
        let c = Cause::too_many(Path::new("l"), 3, 1);
        assert_eq!(c.message(), "l: Too many: 3: must have at most 1 item");
        let c = Cause::too_long(Path::new("s"), BadValue::Str("abc".into()), 2);
        assert_eq!(c.message(), "s: Too long: may not be more than 2 bytes");
        let c = Cause::invalid(Path::root(), BadValue::Json(Value::Null), "x");
        assert_eq!(c.message(), "<nil>: Invalid value: null: x");
    }
}
