//! ObjectMeta of custom resources, as kube-apiserver 1.36 checks it on CREATE.
//!
//! Three stages, in the order the API server runs them:
//!
//! 1. **Decoding (400).** The server turns `metadata` into a typed `ObjectMeta` with a
//!    case-sensitive `encoding/json` decoder (`sigs.k8s.io/json`) before anything is validated.
//!    A value of the wrong type makes the whole request fail with `400 Bad Request`.
//!    - [`request_error`]: the top-level object. `Some(text)` is the exact `requestError`.
//!    - [`embedded_request_error`]: one `x-kubernetes-embedded-resource` object (the schema
//!      coercer): `apiVersion`/`kind` that are not strings, or a `metadata` that does not
//!      decode. The text is a field error (`spec.t.kind: Invalid value: true: must be a string`).
//!    - [`objectmeta_decode_error`]: the bare decoder message for a `metadata` value.
//!
//!    The decoder reports the first type error in field order (maps are re-marshalled with
//!    sorted keys first), except that an error from a `metav1.Time` field (`creationTimestamp`,
//!    `deletionTimestamp`, `managedFields[].time`: Go's `time.Parse` with RFC 3339) stops the
//!    decoding at once and wins over any type error.
//!
//! 2. **Top-level ObjectMeta (422).** [`validate_object_meta`] is what the custom-resource
//!    strategy's `Validate` reports for `metadata` (`ValidateObjectMetaAccessor` with
//!    `NameIsDNSSubdomain`), after `rest.BeforeCreate`'s preparation: the namespace comes from
//!    the request (`default` when a namespaced object has none; cleared for cluster-scoped
//!    CRDs, so a namespace there is never an error), `generation` is reset to 1, and a missing
//!    name is generated from `generateName`. The later generic check with path-segment names
//!    cannot add anything once this one passed, so it is not repeated.
//!
//! 3. **Embedded resources (422).** [`validate_embedded_resource`] reproduces
//!    `validateEmbeddedResource` for one embedded object (`apiVersion`/`kind` required and
//!    checked, metadata validated by [`validate_embedded_meta`]: path-segment names rather than
//!    DNS names, a name that is empty counts as valid, namespace only checked when set,
//!    `generation` must not be negative). Walking the schema to find embedded objects is the
//!    caller's job.
//!
//! Every function expects values decoded like the API server decodes JSON (integers as `i64`,
//! other numbers as `f64`). The validation functions assume decoding succeeded (stage 1
//! returned `None`); values of a wrong type are then treated as absent.
//!
//! Not reproduced: the `origin` of causes (`format=k8s-label-key`, ...) that `Cause` does not
//! carry; the random suffix of generated names (`x7k2q` stands in for it, as in the conformance
//! corpus); Go's `unicode.IsPrint` is approximated for unassigned code points.
//!
//! The valid path allocates nothing: bytes are checked by hand and field paths are built only
//! when an error is reported.

use crate::cause::{BadValue, Cause, Path};
use crate::gofmt;
use serde_json::{Map, Value};
use std::borrow::Cow;

// ---------------------------------------------------------------------------------------------
// Messages (apimachinery `util/validation` and `api/validate/content`)

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const PREFIX_DNS1123_SUBDOMAIN_MSG: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const LABEL_KEY_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_KEY_SLASHES_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Total size of keys and values of `metadata.annotations` (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
/// Suffix standing in for the 5 random characters of a name generated from `generateName`.
pub const GENERATED_NAME_SUFFIX: &str = "x7k2q";
const MAX_GENERATED_BASE: usize = 58;

// ---------------------------------------------------------------------------------------------
// Byte-level format checks (no regexes, no allocation)

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn is_dns1123_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&f), Some(&l)) => {
            lower_alnum(f) && lower_alnum(l) && s.iter().all(|&b| lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// `^label(\.label)*$`
fn is_dns1123_subdomain(s: &[u8]) -> bool {
    !s.is_empty() && s.split(|&b| b == b'.').all(is_dns1123_label)
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
fn is_dns1035_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&f), Some(&l)) => {
            f.is_ascii_lowercase()
                && lower_alnum(l)
                && s.iter().all(|&b| lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn is_label_name(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&f), Some(&l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && s.iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `util/validation.IsDNS1123Subdomain` (length message in "characters").
fn dns1123_subdomain_errors(s: &[u8]) -> Vec<Cow<'static, str>> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(Cow::Borrowed("must be no more than 253 characters"));
    }
    if !is_dns1123_subdomain(s) {
        errs.push(Cow::Borrowed(DNS1123_SUBDOMAIN_MSG));
    }
    errs
}

/// `util/validation.IsDNS1123Label`.
fn dns1123_label_errors(s: &[u8]) -> Vec<Cow<'static, str>> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(Cow::Borrowed("must be no more than 63 characters"));
    }
    if !is_dns1123_label(s) {
        errs.push(Cow::Borrowed(if is_dns1123_subdomain(s) {
            "must not contain dots"
        } else {
            DNS1123_LABEL_MSG
        }));
    }
    errs
}

/// `util/validation.IsDNS1035Label`.
fn dns1035_label_errors(s: &[u8]) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters");
    }
    if !is_dns1035_label(s) {
        errs.push(DNS1035_LABEL_MSG);
    }
    errs
}

/// `NameIsDNSSubdomain(name, prefix)`: a prefix has a trailing dash masked first (Go drops the
/// last two bytes and appends `a`).
fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<Cow<'static, str>> {
    let b = name.as_bytes();
    if prefix && b.len() > 1 && b[b.len() - 1] == b'-' {
        let mut masked = b[..b.len() - 2].to_vec();
        masked.push(b'a');
        return dns1123_subdomain_errors(&masked);
    }
    dns1123_subdomain_errors(b)
}

/// `content.IsLabelKey` (a.k.a. `IsQualifiedName`).
fn label_key_errors(key: &str) -> Vec<Cow<'static, str>> {
    let b = key.as_bytes();
    let mut errs = Vec::new();
    let name = match b.iter().position(|&c| c == b'/') {
        None => b,
        Some(i) => {
            let (prefix, name) = (&b[..i], &b[i + 1..]);
            if name.contains(&b'/') {
                errs.push(Cow::Borrowed(LABEL_KEY_SLASHES_MSG));
                return errs;
            }
            if prefix.is_empty() {
                errs.push(Cow::Borrowed("prefix part must be non-empty"));
            } else {
                if prefix.len() > 253 {
                    errs.push(Cow::Borrowed("prefix part must be no more than 253 bytes"));
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(Cow::Borrowed(PREFIX_DNS1123_SUBDOMAIN_MSG));
                }
            }
            name
        }
    };
    if name.is_empty() {
        errs.push(Cow::Borrowed("name part must be non-empty"));
    } else if name.len() > 63 {
        errs.push(Cow::Borrowed("name part must be no more than 63 bytes"));
    }
    if !is_label_name(name) {
        errs.push(Cow::Borrowed(LABEL_KEY_NAME_MSG));
    }
    errs
}

/// `content.IsLabelValue`.
fn label_value_errors(v: &str) -> Vec<&'static str> {
    let b = v.as_bytes();
    let mut errs = Vec::new();
    if b.len() > 63 {
        errs.push("must be no more than 63 bytes");
    }
    if !b.is_empty() && !is_label_name(b) {
        errs.push(LABEL_VALUE_MSG);
    }
    errs
}

/// `content.IsPathSegmentName` / `IsPathSegmentPrefix`.
fn path_segment_errors(name: &str, prefix: bool) -> Vec<&'static str> {
    if !prefix {
        if name == "." {
            return vec!["may not be '.'"];
        }
        if name == ".." {
            return vec!["may not be '..'"];
        }
    }
    let mut errs = Vec::new();
    if name.contains('/') {
        errs.push("may not contain '/'");
    }
    if name.contains('%') {
        errs.push("may not contain '%'");
    }
    errs
}

/// Go's `strings.ToLower` (simple case mapping per rune), borrowed when nothing changes.
fn go_to_lower(s: &str) -> Cow<'_, str> {
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

/// Go's `unicode.IsPrint` (letters, marks, numbers, punctuation, symbols and ASCII space),
/// approximated for unassigned code points.
fn is_go_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F | 0xE000..=0xF8FF
        | 0xF0000..=0x10FFFF | 0xFDD0..=0xFDEF | 0xFFFE | 0xFFFF)
}

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

use crate::gofmt::json_kind;

/// `None` when a number decodes into an `int64`, else the literal as `encoding/json` wrote it.
fn int64_overflow_literal(n: &serde_json::Number) -> Option<String> {
    if n.is_i64() {
        return None;
    }
    if let Some(u) = n.as_u64() {
        return Some(u.to_string());
    }
    let lit = gofmt::float_json(n.as_f64().unwrap_or(0.0));
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
            Value::String(s) => out.fatal = rfc3339_error(s),
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

// --- Go's time.Parse(time.RFC3339, s) error texts

const RFC3339_LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// Go's `time` package quoting: non-ASCII and control bytes as `\xNN`.
fn time_quote(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &b in s {
        if !(b' '..0x80).contains(&b) {
            out.push_str("\\x");
            out.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
            out.push(char::from(b"0123456789abcdef"[(b & 15) as usize]));
        } else {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(char::from(b));
        }
    }
    out.push('"');
    out
}

fn cannot_parse(value: &[u8], value_elem: &[u8], layout_elem: &str) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        time_quote(value),
        time_quote(RFC3339_LAYOUT.as_bytes()),
        time_quote(value_elem),
        time_quote(layout_elem.as_bytes())
    )
}

fn out_of_range(value: &[u8], what: &str) -> String {
    format!("parsing time {}: {what} out of range", time_quote(value))
}

/// Two digits (or one when `fixed` is false), like Go's `getnum`.
fn getnum(s: &[u8], fixed: bool) -> Option<(u32, usize)> {
    let d0 = *s.first().filter(|b| b.is_ascii_digit())?;
    match s.get(1).filter(|b| b.is_ascii_digit()) {
        Some(&d1) => Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), 2)),
        None if fixed => None,
        None => Some((u32::from(d0 - b'0'), 1)),
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The error of Go's `time.Parse(time.RFC3339, value)`, `None` when it parses.
fn rfc3339_error(value: &str) -> Option<String> {
    let v = value.as_bytes();
    let mut pos = 0usize;
    let (mut year, mut month, mut day) = (0u32, 0u32, 0u32);
    // (literal prefix, layout element)
    const CHUNKS: [(u8, &str); 7] = [
        (0, "2006"),
        (b'-', "01"),
        (b'-', "02"),
        (b'T', "15"),
        (b':', "04"),
        (b':', "05"),
        (0, "Z07:00"),
    ];
    for (prefix, elem) in CHUNKS {
        if prefix != 0 {
            if v.get(pos) != Some(&prefix) {
                return Some(cannot_parse(
                    v,
                    &v[pos..],
                    std::str::from_utf8(&[prefix]).ok()?,
                ));
            }
            pos += 1;
        }
        let rest = &v[pos..];
        let bad = || Some(cannot_parse(v, rest, elem));
        match elem {
            "2006" => {
                if rest.len() < 4 || !rest[..4].iter().all(u8::is_ascii_digit) {
                    return bad();
                }
                year = rest[..4]
                    .iter()
                    .fold(0, |a, &b| a * 10 + u32::from(b - b'0'));
                pos += 4;
            }
            "01" | "02" | "04" | "05" | "15" => {
                let Some((n, used)) = getnum(rest, elem != "15") else {
                    return bad();
                };
                pos += used;
                let range = match elem {
                    "01" => {
                        month = n;
                        (n == 0 || n > 12).then_some("month")
                    }
                    "02" => {
                        day = n;
                        None
                    }
                    "15" => (n >= 24).then_some("hour"),
                    "04" => (n >= 60).then_some("minute"),
                    _ => (n >= 60).then_some("second"),
                };
                if let Some(what) = range {
                    return Some(out_of_range(v, what));
                }
                if elem == "05" {
                    // A fractional second is accepted although the layout has none.
                    let r = &v[pos..];
                    if r.len() >= 2 && matches!(r[0], b'.' | b',') && r[1].is_ascii_digit() {
                        pos += 2 + r[2..].iter().take_while(|b| b.is_ascii_digit()).count();
                    }
                }
            }
            _ => {
                // Z07:00
                if rest.first() == Some(&b'Z') {
                    pos += 1;
                    continue;
                }
                if rest.len() < 6 || rest[3] != b':' {
                    return bad();
                }
                let hh = getnum(&rest[1..3], true);
                let mm = hh.and_then(|_| getnum(&rest[4..6], true));
                let mut range = None;
                if let Some((h, _)) = hh
                    && h > 24
                {
                    range = Some("time zone offset hour");
                }
                if let Some((m, _)) = mm
                    && m > 60
                {
                    range = Some("time zone offset minute");
                }
                if let Some(what) = range {
                    return Some(out_of_range(v, what));
                }
                if hh.is_none() || mm.is_none() || !matches!(rest[0], b'+' | b'-') {
                    return bad();
                }
                pos += 6;
            }
        }
    }
    if pos < v.len() {
        return Some(format!(
            "parsing time {}: extra text: {}",
            time_quote(v),
            time_quote(&v[pos..])
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Some(out_of_range(v, "day"));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Stages 2 and 3: validation

/// Where the metadata is: the top-level `metadata` (path built only when needed) or a given
/// path.
#[derive(Clone, Copy)]
struct MetaPath<'a>(Option<&'a Path>);

impl MetaPath<'_> {
    fn child(&self, name: &str) -> Path {
        match self.0 {
            Some(p) => p.child(name),
            None => Path::new("metadata").child(name),
        }
    }
}

fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn as_map(meta: &Value) -> &Map<String, Value> {
    meta.as_object().unwrap_or_else(|| empty_map())
}

fn invalid_str(path: Path, v: &str, detail: impl Into<String>) -> Cause {
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
    if let Some(finalizers) = m.get("finalizers").and_then(Value::as_array) {
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

/// An owner reference as decoded into `metav1.OwnerReference`.
struct OwnerRef<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
    controller: Option<bool>,
    block_owner_deletion: Option<bool>,
}

impl<'a> OwnerRef<'a> {
    fn from_value(v: &'a Value) -> Self {
        let m = as_map(v);
        OwnerRef {
            api_version: str_of(m, "apiVersion"),
            kind: str_of(m, "kind"),
            name: str_of(m, "name"),
            uid: str_of(m, "uid"),
            controller: m.get("controller").and_then(Value::as_bool),
            block_owner_deletion: m.get("blockOwnerDeletion").and_then(Value::as_bool),
        }
    }

    /// `json.Marshal` of the Go struct (field order of the struct, pointers omitted when nil).
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"apiVersion\":");
        gofmt::json_string(self.api_version, out);
        out.push_str(",\"kind\":");
        gofmt::json_string(self.kind, out);
        out.push_str(",\"name\":");
        gofmt::json_string(self.name, out);
        out.push_str(",\"uid\":");
        gofmt::json_string(self.uid, out);
        if let Some(c) = self.controller {
            out.push_str(if c {
                ",\"controller\":true"
            } else {
                ",\"controller\":false"
            });
        }
        if let Some(b) = self.block_owner_deletion {
            out.push_str(if b {
                ",\"blockOwnerDeletion\":true"
            } else {
                ",\"blockOwnerDeletion\":false"
            });
        }
        out.push('}');
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("apiVersion".into(), self.api_version.into());
        m.insert("kind".into(), self.kind.into());
        m.insert("name".into(), self.name.into());
        m.insert("uid".into(), self.uid.into());
        if let Some(c) = self.controller {
            m.insert("controller".into(), c.into());
        }
        if let Some(b) = self.block_owner_deletion {
            m.insert("blockOwnerDeletion".into(), b.into());
        }
        Value::Object(m)
    }
}

/// `schema.ParseGroupVersion` then `FromAPIVersionAndKind`: the version part, empty when the
/// string does not parse.
fn group_version_version(api_version: &str) -> (&str, &str) {
    if api_version.is_empty() || api_version == "/" {
        return ("", "");
    }
    match api_version.bytes().filter(|&b| b == b'/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').unwrap_or(("", "")),
        _ => ("", ""),
    }
}

fn validate_owner_references(refs: &[Value], at: MetaPath<'_>, out: &mut Vec<Cause>) {
    let mut first_controller: Option<OwnerRef<'_>> = None;
    for v in refs {
        let r = OwnerRef::from_value(v);
        let (group, version) = group_version_version(r.api_version);
        if version.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("apiVersion"),
                r.api_version,
                "version must not be empty",
            ));
        }
        if r.kind.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("kind"),
                r.kind,
                "must not be empty",
            ));
        }
        if r.name.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("name"),
                r.name,
                "must not be empty",
            ));
        }
        if r.uid.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("uid"),
                r.uid,
                "must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && r.kind == "Event" {
            let mut json = String::new();
            r.write_json(&mut json);
            out.push(Cause::invalid(
                at.child("ownerReferences"),
                BadValue::Rendered {
                    json,
                    value: r.to_value(),
                },
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.controller == Some(true) {
            match &first_controller {
                Some(first) => {
                    let mut json = String::from("[");
                    let mut values = Vec::with_capacity(refs.len());
                    for (i, o) in refs.iter().enumerate() {
                        if i > 0 {
                            json.push(',');
                        }
                        let o = OwnerRef::from_value(o);
                        o.write_json(&mut json);
                        values.push(o.to_value());
                    }
                    json.push(']');
                    out.push(Cause::invalid(
                        at.child("ownerReferences"),
                        BadValue::Rendered {
                            json,
                            value: Value::Array(values),
                        },
                        format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {}/{} and {}/{}",
                            first.kind, first.name, r.kind, r.name
                        ),
                    ));
                }
                None => first_controller = Some(r),
            }
        }
    }
}

fn validate_managed_fields(entries: &[Value], at: MetaPath<'_>, out: &mut Vec<Cause>) {
    for (i, e) in entries.iter().enumerate() {
        let m = as_map(e);
        let entry = || at.child("managedFields").index(i);
        let operation = str_of(m, "operation");
        if operation != "Apply" && operation != "Update" {
            out.push(invalid_str(
                entry().child("operation"),
                operation,
                "must be `Apply` or `Update`",
            ));
        }
        let fields_type = str_of(m, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            out.push(invalid_str(
                entry().child("fieldsType"),
                fields_type,
                "must be `FieldsV1`",
            ));
        }
        let manager = str_of(m, "manager");
        if manager.len() > 128 {
            out.push(Cause::too_long(
                entry().child("manager"),
                BadValue::Str(manager.to_string()),
                128,
            ));
        }
        for (pos, c) in manager.char_indices() {
            if !is_go_print(c) {
                out.push(invalid_str(
                    entry().child("manager"),
                    manager,
                    format!("invalid character U+{:04X} (at position {pos})", c as u32),
                ));
            }
        }
        let subresource = str_of(m, "subresource");
        if subresource.len() > 256 {
            out.push(Cause::too_long(
                entry().child("subresource"),
                BadValue::Str(subresource.to_string()),
                256,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                let got =
                    validate_object_meta(obj.get("metadata").unwrap_or(&Value::Null), namespaced);
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
    fn rfc3339_accepts_what_go_accepts() {
        for ok in [
            "2020-01-01T00:00:00Z",
            "2020-02-29T23:59:59.999999999+14:00",
            "2020-01-01T0:00:00,5-01:30",
            "2020-01-01T00:00:00+24:60",
            "0000-01-01T00:00:00Z",
            "2020-01-01T00:00:00.1234567890123Z",
            "2020-01-01T7:00:00Z",
        ] {
            assert_eq!(rfc3339_error(ok), None, "{ok}");
        }
        assert_eq!(
            rfc3339_error("2020-01-01T00:00:00+01:00:00").as_deref(),
            Some(r#"parsing time "2020-01-01T00:00:00+01:00:00": extra text: ":00""#)
        );
        assert_eq!(
            rfc3339_error("2020-01-01T00:00:00-25:61").as_deref(),
            Some(
                r#"parsing time "2020-01-01T00:00:00-25:61": time zone offset minute out of range"#
            )
        );
        assert_eq!(
            rfc3339_error("2020-01-01T00:00:00+1:00").as_deref(),
            Some(
                r#"parsing time "2020-01-01T00:00:00+1:00" as "2006-01-02T15:04:05Z07:00": cannot parse "+1:00" as "Z07:00""#
            )
        );
        assert_eq!(
            rfc3339_error("1900-02-29T00:00:00Z").as_deref(),
            Some(r#"parsing time "1900-02-29T00:00:00Z": day out of range"#)
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
}
