//! The Kubernetes format library: named formats (`format.dns1123Label()`,
//! `format.named(name)`) and their `validate(string)`, with the messages of
//! `k8s.io/apimachinery/pkg/util/validation` (shared with ObjectMeta validation in
//! [`crate::k8s::names`]) and kube-openapi's `strfmt`.

use super::{ext, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use crate::go::url::parse_request_uri;
use crate::k8s::names;
use std::rc::Rc;

// =============================================================================================
// Format library (library/format.go)
// =============================================================================================

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

/// Messages of an apimachinery name check as CEL strings.
fn owned_messages(errs: Vec<&'static str>) -> Vec<String> {
    errs.into_iter().map(String::from).collect()
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
        "dns1123Label" => owned_messages(names::dns1123_label_errors(s.as_bytes())),
        "dns1123LabelPrefix" => owned_messages(names::dns1123_label_errors(
            &names::mask_trailing_dash(s.as_bytes()),
        )),
        "dns1123Subdomain" => owned_messages(names::dns1123_subdomain_errors(s.as_bytes())),
        "dns1123SubdomainPrefix" => owned_messages(names::dns1123_subdomain_errors(
            &names::mask_trailing_dash(s.as_bytes()),
        )),
        "dns1035Label" => owned_messages(names::dns1035_label_errors(s.as_bytes())),
        "dns1035LabelPrefix" => owned_messages(names::dns1035_label_errors(
            &names::mask_trailing_dash(s.as_bytes()),
        )),
        "qualifiedName" => owned_messages(names::label_key_errors(s)),
        "labelValue" => owned_messages(names::label_value_errors(s)),
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
    use crate::k8s::names::{DNS1035_LABEL_MSG, DNS1123_LABEL_MSG, LABEL_KEY_SLASHES_MSG};

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
            Some(vec![LABEL_KEY_SLASHES_MSG.to_string()])
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
