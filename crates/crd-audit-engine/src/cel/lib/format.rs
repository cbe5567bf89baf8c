//! The Kubernetes format library: named formats (`format.dns1123Label()`,
//! `format.named(name)`) and their `validate(string)`, with the messages of
//! `k8s.io/apimachinery/pkg/util/validation` and kube-openapi's `strfmt`.

use super::{ext, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use crate::go::url::parse_request_uri;
use std::rc::Rc;

// =============================================================================================
// Format library (library/format.go)
// =============================================================================================

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_NAME_SLASHES_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const FORMAT_NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The `MaxRegexSize` of a named format (for the cost of `validate`).
pub fn format_max_regex_size(name: &str) -> u64 {
    match name {
        "dns1123Label" | "dns1035Label" | "dns1123LabelPrefix" | "dns1035LabelPrefix" => 30,
        "dns1123Subdomain" | "qualifiedName" | "dns1123SubdomainPrefix" => 60,
        "labelValue" => 40,
        "uri" => 1103,
        // len(strfmt.UUIDPattern)
        "uuid" => 70,
        "byte" => 84,
        // len(strfmt.DateTimePattern)
        "date" | "datetime" => 71,
        _ => 0,
    }
}

/// Names accepted by `format.named(name)` (each also exists as `format.<name>()`).
pub fn format_names() -> &'static [&'static str] {
    FORMAT_NAMES
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if lower_alnum(f) && lower_alnum(l))
        && s.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn is_dns1123_subdomain(s: &[u8]) -> bool {
    !s.is_empty() && s.split(|&c| c == b'.').all(is_dns1123_label)
}

fn is_dns1035_label(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if f.is_ascii_lowercase() && lower_alnum(l))
        && s.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn is_qualified_name_part(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric())
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn dns1123_label_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(s) {
        errs.push(
            if is_dns1123_subdomain(s) {
                "must not contain dots"
            } else {
                DNS1123_LABEL_MSG
            }
            .to_string(),
        );
    }
    errs
}

fn dns1123_subdomain_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !is_dns1123_subdomain(s) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

fn dns1035_label_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1035_label(s) {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// `apimachinery/pkg/api/validation.maskTrailingDash` for the `...Prefix` formats.
fn mask_trailing_dash(s: &str, prefix: bool) -> Vec<u8> {
    let b = s.as_bytes();
    if prefix && b.len() > 1 && b[b.len() - 1] == b'-' {
        let mut m = b[..b.len() - 2].to_vec();
        m.push(b'a');
        return m;
    }
    b.to_vec()
}

fn qualified_name_errors(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut errs = Vec::new();
    let parts: Vec<&[u8]> = b.split(|&c| c == b'/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {DNS1123_SUBDOMAIN_MSG}"));
                }
            }
            *name
        }
        _ => return vec![QUALIFIED_NAME_SLASHES_MSG.to_string()],
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(QUALIFIED_NAME_PART_MSG.to_string());
    }
    errs
}

fn label_value_errors(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut errs = Vec::new();
    if b.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !b.is_empty() && !is_qualified_name_part(b) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

fn strfmt_errors(format: &str, s: &str, msg: &str) -> Vec<String> {
    if crate::k8s::formats::is_valid(format, s) {
        Vec::new()
    } else {
        vec![msg.to_string()]
    }
}

/// `format.named(name).validate(s)`: `None` when `s` is valid (or `name` is unknown; use
/// [`format_names`] to tell), else the error messages.
pub fn format_validate(name: &str, s: &str) -> Option<Vec<String>> {
    let errs = match name {
        "dns1123Label" => dns1123_label_errors(s.as_bytes()),
        "dns1123LabelPrefix" => dns1123_label_errors(&mask_trailing_dash(s, true)),
        "dns1123Subdomain" => dns1123_subdomain_errors(s.as_bytes()),
        "dns1123SubdomainPrefix" => dns1123_subdomain_errors(&mask_trailing_dash(s, true)),
        "dns1035Label" => dns1035_label_errors(s.as_bytes()),
        "dns1035LabelPrefix" => dns1035_label_errors(&mask_trailing_dash(s, true)),
        "qualifiedName" => qualified_name_errors(s),
        "labelValue" => label_value_errors(s),
        "uri" => match parse_request_uri(s) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        },
        "uuid" => strfmt_errors("uuid", s, "does not match the UUID format"),
        "byte" => strfmt_errors("byte", s, "invalid base64"),
        "date" => strfmt_errors("date", s, "invalid date"),
        "datetime" => strfmt_errors("datetime", s, "invalid datetime"),
        _ => Vec::new(),
    };
    if errs.is_empty() { None } else { Some(errs) }
}

/// The format overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    Some(match id {
        "format-named" => {
            let name = text(a, 0)?;
            Ok(if format_names().contains(&name) {
                Val::Optional(Some(Rc::new(ext(Ext::Format(name.to_string())))))
            } else {
                Val::Optional(None)
            })
        }
        "format-validate" => {
            let Some(Ext::Format(name)) = lib_ext(a, 0) else {
                return None;
            };
            Ok(match format_validate(name, text(a, 1)?) {
                None => Val::Optional(None),
                Some(errs) => Val::Optional(Some(Rc::new(Val::List(Rc::new(
                    errs.into_iter().map(owned).collect(),
                ))))),
            })
        }
        name if name.starts_with("format.") => {
            let n = &name["format.".len()..];
            if !format_names().contains(&n) {
                return None;
            }
            Ok(ext(Ext::Format(n.to_string())))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_library() {
        assert_eq!(format_names().len(), 13);
        assert_eq!(format_validate("dns1123Label", "my-label-name"), None);
        assert_eq!(
            format_validate("dns1123Label", "contains a space"),
            Some(vec![DNS1123_LABEL_MSG.to_string()])
        );
        assert_eq!(
            format_validate("dns1123Label", "a.b"),
            Some(vec!["must not contain dots".to_string()])
        );
        assert_eq!(
            format_validate("dns1123Subdomain", "apiextensions.k8s.io"),
            None
        );
        assert_eq!(format_validate("dns1035Label", "my-label-name"), None);
        assert_eq!(
            format_validate("dns1035Label", "1abc"),
            Some(vec![DNS1035_LABEL_MSG.to_string()])
        );
        assert_eq!(
            format_validate("qualifiedName", "apiextensions.k8s.io/v1beta1"),
            None
        );
        assert_eq!(
            format_validate("qualifiedName", "a/b/c"),
            Some(vec![QUALIFIED_NAME_SLASHES_MSG.to_string()])
        );
        assert_eq!(
            format_validate("dns1123LabelPrefix", "my-label-prefix-"),
            None
        );
        assert_eq!(
            format_validate("dns1123SubdomainPrefix", "mysubdomain.prefix.-"),
            None
        );
        assert_eq!(
            format_validate("dns1035LabelPrefix", "my-label-prefix-"),
            None
        );
        assert_eq!(format_validate("labelValue", ""), None);
        assert_eq!(
            format_validate("labelValue", &"a".repeat(64)),
            Some(vec!["must be no more than 63 bytes".to_string()])
        );
        assert_eq!(format_validate("uri", "http://example.com"), None);
        assert_eq!(
            format_validate("uri", "example"),
            Some(vec![
                r#"parse "example": invalid URI for request"#.to_string()
            ])
        );
        assert_eq!(
            format_validate("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            None
        );
        assert_eq!(
            format_validate("uuid", "123"),
            Some(vec!["does not match the UUID format".to_string()])
        );
        assert_eq!(format_validate("byte", "aGVsbG8="), None);
        assert_eq!(
            format_validate("byte", "aGVsbG8"),
            Some(vec!["invalid base64".to_string()])
        );
        assert_eq!(format_validate("date", "2021-01-01"), None);
        assert_eq!(
            format_validate("date", "2021-13-01"),
            Some(vec!["invalid date".to_string()])
        );
        assert_eq!(format_validate("datetime", "2021-01-01T00:00:00Z"), None);
        assert_eq!(
            format_validate("datetime", "2021-01-01"),
            Some(vec!["invalid datetime".to_string()])
        );
    }
}
