//! Name validation of apimachinery: `k8s.io/apimachinery/pkg/util/validation` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`), its
//! `api/validate/content` twins (`IsLabelKey`, `IsLabelValue`), `pkg/api/validation`
//! (`NameIsDNSSubdomain`, `maskTrailingDash`) and `pkg/api/validation/path`
//! (`IsValidPathSegmentName`/`Prefix`), with their exact messages.
//!
//! Used by ObjectMeta validation ([`crate::validate::objectmeta`]) and by the Kubernetes CEL
//! format library ([`crate::cel::lib`]). Bytes are checked by hand: no regexes, and nothing is
//! allocated for a valid name.

use std::borrow::Cow;

// ---------------------------------------------------------------------------------------------
// Messages (apimachinery `util/validation` and `api/validate/content`)

pub const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
pub const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub const PREFIX_DNS1123_SUBDOMAIN_MSG: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
pub const LABEL_KEY_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
pub const LABEL_KEY_SLASHES_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
pub const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

// ---------------------------------------------------------------------------------------------
// Byte-level format checks (no regexes, no allocation)

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
pub fn is_dns1123_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&f), Some(&l)) => {
            lower_alnum(f) && lower_alnum(l) && s.iter().all(|&b| lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// `^label(\.label)*$`
pub fn is_dns1123_subdomain(s: &[u8]) -> bool {
    !s.is_empty() && s.split(|&b| b == b'.').all(is_dns1123_label)
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
pub fn is_dns1035_label(s: &[u8]) -> bool {
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
pub fn is_label_name(s: &[u8]) -> bool {
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
pub fn dns1123_subdomain_errors(s: &[u8]) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters");
    }
    if !is_dns1123_subdomain(s) {
        errs.push(DNS1123_SUBDOMAIN_MSG);
    }
    errs
}

/// `util/validation.IsDNS1123Label`.
pub fn dns1123_label_errors(s: &[u8]) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters");
    }
    if !is_dns1123_label(s) {
        errs.push(if is_dns1123_subdomain(s) {
            "must not contain dots"
        } else {
            DNS1123_LABEL_MSG
        });
    }
    errs
}

/// `util/validation.IsDNS1035Label`.
pub fn dns1035_label_errors(s: &[u8]) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters");
    }
    if !is_dns1035_label(s) {
        errs.push(DNS1035_LABEL_MSG);
    }
    errs
}

/// `maskTrailingDash`: a `generateName` prefix may end in a dash, so a trailing dash is masked
/// before a prefix is checked (Go drops the last two bytes and appends `a`).
pub fn mask_trailing_dash(s: &[u8]) -> Cow<'_, [u8]> {
    if s.len() > 1 && s[s.len() - 1] == b'-' {
        let mut masked = s[..s.len() - 2].to_vec();
        masked.push(b'a');
        return Cow::Owned(masked);
    }
    Cow::Borrowed(s)
}

/// `NameIsDNSSubdomain(name, prefix)`: a prefix has a trailing dash masked first.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<&'static str> {
    if prefix {
        return dns1123_subdomain_errors(&mask_trailing_dash(name.as_bytes()));
    }
    dns1123_subdomain_errors(name.as_bytes())
}

/// `content.IsLabelKey` (`util/validation.IsQualifiedName`).
pub fn label_key_errors(key: &str) -> Vec<&'static str> {
    let b = key.as_bytes();
    let mut errs = Vec::new();
    let name = match b.iter().position(|&c| c == b'/') {
        None => b,
        Some(i) => {
            let (prefix, name) = (&b[..i], &b[i + 1..]);
            if name.contains(&b'/') {
                errs.push(LABEL_KEY_SLASHES_MSG);
                return errs;
            }
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty");
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 bytes");
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(PREFIX_DNS1123_SUBDOMAIN_MSG);
                }
            }
            name
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty");
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes");
    }
    if !is_label_name(name) {
        errs.push(LABEL_KEY_NAME_MSG);
    }
    errs
}

/// `content.IsLabelValue`.
pub fn label_value_errors(v: &str) -> Vec<&'static str> {
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
pub fn path_segment_errors(name: &str, prefix: bool) -> Vec<&'static str> {
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
