//! CRD create validation outside the schemas (apiextensions-apiserver
//! `pkg/apis/apiextensions/validation/validation.go`: the CRD's name in
//! `ValidateCustomResourceDefinition`, `validateCustomResourceDefinitionSpec`'s group, scope,
//! version names and required names, `ValidateCustomResourceDefinitionNames`,
//! `validateDeprecationWarning` and `validateAPIApproval`).
//!
//! Not covered yet (the server refuses such CRDs; `check` does not say so): storage and
//! unique-version counts, subresource paths, printer columns, selectable fields and conversion
//! settings.

use crate::cause::{BadValue, Cause, Path};
use crate::crd::Crd;
use crate::k8s::names::{dns1035_label_errors, dns1123_subdomain_errors, name_is_dns_subdomain};

const APPROVAL_ANNOTATION: &str = "api-approved.kubernetes.io";

fn invalid(path: Path, value: &str, detail: impl Into<String>) -> Cause {
    Cause::invalid(path, BadValue::Str(value.to_string()), detail)
}

/// A DNS-1035 label's errors joined as upstream joins them, if any.
fn dns1035(value: &str) -> Option<String> {
    let errs = dns1035_label_errors(value.as_bytes());
    (!errs.is_empty()).then(|| errs.join(","))
}

/// The CRD's errors outside its schemas, in upstream's order within each part: the name
/// first (with the rest of `metadata`), then the spec, then the API approval of protected
/// groups. (`out` receives them; the schema checks add theirs between the spec and the end.)
pub fn check_name(crd: &Crd, out: &mut Vec<Cause>) {
    let path = Path::new("metadata").child("name");
    if crd.name.is_empty() {
        out.push(Cause::required(path, "name or generateName is required"));
        return;
    }
    for msg in name_is_dns_subdomain(&crd.name, false) {
        out.push(invalid(path.clone(), &crd.name, msg));
    }
    if crd.name != format!("{}.{}", crd.plural, crd.group) {
        out.push(invalid(
            path,
            &crd.name,
            r#"must be spec.names.plural+"."+spec.group"#,
        ));
    }
}

/// `validateCustomResourceDefinitionSpec`'s checks of the group, scope, version names and
/// names.
pub fn check_spec(crd: &Crd, out: &mut Vec<Cause>) {
    let spec = Path::new("spec");
    let facts = &crd.spec_facts;
    let group = spec.child("group");
    if crd.group.is_empty() {
        out.push(Cause::required(group, ""));
    } else {
        let errs = dns1123_subdomain_errors(crd.group.as_bytes());
        if !errs.is_empty() {
            out.push(invalid(group, &crd.group, errs.join(",")));
        } else if !crd.group.contains('.') {
            out.push(invalid(
                group,
                &crd.group,
                "should be a domain with at least one dot",
            ));
        }
    }
    let scope = spec.child("scope");
    match facts.scope.as_str() {
        "" => out.push(Cause::required(scope, "")),
        "Cluster" | "Namespaced" => {}
        other => out.push(Cause::not_supported(
            scope,
            BadValue::Str(other.to_string()),
            &["Cluster", "Namespaced"],
        )),
    }
    for (i, v) in crd.versions.iter().enumerate() {
        let at = spec.child("versions").index(i);
        if let Some(e) = dns1035(&v.name) {
            out.push(invalid(at.child("name"), &v.name, e));
        }
        let warning = facts.deprecation_warnings.get(i).cloned().flatten();
        for e in deprecation_warning_errors(v.deprecated, warning.as_deref()) {
            out.push(invalid(
                at.child("deprecationWarning"),
                warning.as_deref().unwrap_or(""),
                e,
            ));
        }
    }
    // The internal `spec.version`: the first version's name (a v1beta1 CRD may set its own).
    let version = facts
        .legacy_version
        .clone()
        .or_else(|| crd.versions.first().map(|v| v.name.clone()))
        .unwrap_or_default();
    if !version.is_empty() {
        if let Some(e) = dns1035(&version) {
            out.push(invalid(spec.child("version"), &version, e));
        }
        if crd.versions.first().is_some_and(|v| v.name != version) {
            out.push(invalid(
                spec.child("version"),
                &version,
                "must match the first version in spec.versions",
            ));
        }
    }
    let names = spec.child("names");
    for (field, value) in [
        ("plural", &crd.plural),
        ("singular", &crd.singular),
        ("kind", &crd.kind),
        ("listKind", &crd.list_kind),
    ] {
        if value.is_empty() {
            out.push(Cause::required(names.child(field), ""));
        }
    }
    for (field, value) in [("plural", &crd.plural), ("singular", &crd.singular)] {
        if let Some(e) = dns1035(value).filter(|_| !value.is_empty()) {
            out.push(invalid(names.child(field), value, e));
        }
    }
    for (field, value) in [("kind", &crd.kind), ("listKind", &crd.list_kind)] {
        if let Some(e) = dns1035(&value.to_lowercase()).filter(|_| !value.is_empty()) {
            out.push(invalid(
                names.child(field),
                value,
                format!("may have mixed case, but should otherwise match: {e}"),
            ));
        }
    }
    for (i, short) in facts.short_names.iter().enumerate() {
        if let Some(e) = dns1035(short) {
            out.push(invalid(names.child("shortNames").index(i), short, e));
        }
    }
    if !crd.kind.is_empty() && crd.kind == crd.list_kind {
        out.push(invalid(
            names.child("listKind"),
            &crd.list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in facts.categories.iter().enumerate() {
        if let Some(e) = dns1035(category) {
            out.push(invalid(names.child("categories").index(i), category, e));
        }
    }
}

/// `validateDeprecationWarning`.
fn deprecation_warning_errors(deprecated: bool, warning: Option<&str>) -> Vec<String> {
    let Some(w) = warning else {
        return Vec::new();
    };
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_string()];
    }
    let mut errs = Vec::new();
    if w.len() > 256 {
        errs.push("must be <= 256 characters long".to_string());
    }
    if w.is_empty() {
        errs.push("must not be an empty string".to_string());
    }
    for (i, c) in w.char_indices() {
        if !crate::go::strconv::is_print(c) && c != ' ' {
            errs.push(format!(
                "must only contain printable UTF-8 characters; non-printable character found at index {i}"
            ));
            break;
        }
    }
    errs
}

/// `validateAPIApproval` on create: a group under `k8s.io` or `kubernetes.io` needs the
/// approval annotation, a URL or a reason starting with `unapproved`.
pub fn check_api_approval(crd: &Crd, out: &mut Vec<Cause>) {
    let g = crd.group.as_str();
    let protected = g == "k8s.io"
        || g.ends_with(".k8s.io")
        || g == "kubernetes.io"
        || g.ends_with(".kubernetes.io");
    if !protected {
        return;
    }
    let path = Path::new("metadata")
        .child("annotations")
        .key(APPROVAL_ANNOTATION);
    let value = crd.spec_facts.api_approval.as_deref().unwrap_or("");
    if value.is_empty() {
        out.push(Cause::required(
            path,
            format!(
                "protected groups must have approval annotation {}, see https://github.com/kubernetes/enhancements/pull/1111",
                crate::go::strconv::quote(APPROVAL_ANNOTATION)
            ),
        ));
        return;
    }
    if value.starts_with("unapproved") || is_request_uri_with_host(value) {
        return;
    }
    out.push(invalid(
        path,
        value,
        format!(
            "protected groups must have approval annotation {} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111",
            crate::go::strconv::quote(APPROVAL_ANNOTATION)
        ),
    ));
}

/// `url.ParseRequestURI` succeeds with a scheme and a host.
fn is_request_uri_with_host(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && !host.is_empty()
        && !s.contains(' ')
}
