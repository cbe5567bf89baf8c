//! CRD create validation outside the schemas (apiextensions-apiserver
//! `pkg/apis/apiextensions/validation/validation.go`: the CRD's name in
//! `ValidateCustomResourceDefinition`, `validateCustomResourceDefinitionSpec`'s group, scope,
//! version names and required names, `ValidateCustomResourceDefinitionNames`,
//! `validateDeprecationWarning` and `validateAPIApproval`).
//!
//! Also `ValidateCustomResourceDefinitionSubresources` (scale paths),
//! `ValidateCustomResourceColumnDefinition` and `validateCustomResourceConversion` (strategy,
//! webhook presence, review versions), each at the place the internal form gives it: settings
//! equal in every version are the CRD's own (`spec.subresources`,
//! `spec.additionalPrinterColumns[i]`), others stay with their version.
//!
//! The storage and unique-version counts quote the versions as Go structs: they are checked
//! when every per-version setting is shared (the structs then hold none of them).
//!
//! Not covered yet (the server refuses such CRDs; `check` does not say so): those counts when
//! versions differ in schema, subresources, columns or selectable fields; selectable fields;
//! the webhook URL, service and CA bundle checks.

use crate::cause::{BadValue, Cause, Path};
use crate::crd::Crd;
use crate::k8s::names::{dns1035_label_errors, dns1123_subdomain_errors, name_is_dns_subdomain};
use serde_json::Value;

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
        if !crate::go::strconv::is_print(c) {
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
    let approved_in = crate::go::url::parse_request_uri(value)
        .is_ok_and(|u| !u.host().is_empty() && !u.scheme().is_empty());
    if value.starts_with("unapproved") || approved_in {
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

/// Where the internal form puts a per-version setting: `None` for the CRD itself (the same
/// in every version, or a v1beta1 CRD's top-level one), else each version keeps its own.
fn placed<'a>(
    per_version: &'a [Option<Value>],
    shared: &'a Option<Value>,
) -> Vec<(Option<usize>, &'a Value)> {
    if let Some(v) = shared {
        return vec![(None, v)];
    }
    if per_version.is_empty() {
        return Vec::new();
    }
    if per_version.iter().all(|v| *v == per_version[0]) {
        return per_version[0].iter().map(|v| (None, v)).collect();
    }
    per_version
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.as_ref().map(|v| (Some(i), v)))
        .collect()
}

fn place(at: Option<usize>, field: &str) -> Path {
    match at {
        None => Path::new("spec").child(field),
        Some(i) => Path::new("spec").child("versions").index(i).child(field),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `validateSimpleJSONPath`.
fn simple_json_path(s: &str, path: &Path, out: &mut Vec<Cause>) -> bool {
    if s.is_empty() {
        out.push(invalid(path.clone(), s, "must not be empty"));
        return false;
    }
    if !s.starts_with('.') {
        out.push(invalid(
            path.clone(),
            s,
            "must be a simple json path starting with .",
        ));
        return false;
    }
    true
}

/// Scale subresource paths and printer columns, where the internal form has them.
pub fn check_subresources_and_columns(crd: &Crd, out: &mut Vec<Cause>) {
    let facts = &crd.spec_facts;
    for (at, sub) in placed(&facts.version_subresources, &facts.shared_subresources) {
        let Some(scale) = sub.get("scale").filter(|s| !s.is_null()) else {
            continue;
        };
        let base = place(at, "subresources");
        for (key, prefix) in [
            ("specReplicasPath", ".spec."),
            ("statusReplicasPath", ".status."),
        ] {
            let path = base.child(&format!("scale.{key}"));
            let value = text(scale, key);
            if value.is_empty() {
                out.push(Cause::required(path, ""));
            } else if simple_json_path(value, &path, out) && !value.starts_with(prefix) {
                let under = prefix.trim_end_matches('.');
                out.push(invalid(
                    path,
                    value,
                    format!("should be a json path under {under}"),
                ));
            }
        }
        let selector = text(scale, "labelSelectorPath");
        if !selector.is_empty() {
            let path = base.child("scale.labelSelectorPath");
            if simple_json_path(selector, &path, out)
                && !selector.starts_with(".spec.")
                && !selector.starts_with(".status.")
            {
                out.push(invalid(
                    path,
                    selector,
                    "should be a json path under either .spec or .status",
                ));
            }
        }
    }
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: [&str; 8] = [
        "byte",
        "date",
        "date-time",
        "double",
        "float",
        "int32",
        "int64",
        "password",
    ];
    for (at, columns) in placed(&facts.version_columns, &facts.shared_columns) {
        let Some(columns) = columns.as_array() else {
            continue;
        };
        for (i, col) in columns.iter().enumerate() {
            let base = place(at, "additionalPrinterColumns").index(i);
            if text(col, "name").is_empty() {
                out.push(Cause::required(base.child("name"), ""));
            }
            let ty = text(col, "type");
            if ty.is_empty() {
                out.push(Cause::required(
                    base.child("type"),
                    format!("must be one of {TYPES}"),
                ));
            } else if !TYPES.split(',').any(|t| t == ty) {
                out.push(invalid(
                    base.child("type"),
                    ty,
                    format!("must be one of {TYPES}"),
                ));
            }
            let format = text(col, "format");
            if !format.is_empty() && !FORMATS.contains(&format) {
                out.push(invalid(
                    base.child("format"),
                    format,
                    format!("must be one of {}", FORMATS.join(",")),
                ));
            }
            let json_path = text(col, "jsonPath");
            let path = base.child("JSONPath");
            if json_path.is_empty() {
                out.push(Cause::required(path, ""));
            } else {
                simple_json_path(json_path, &path, out);
            }
        }
    }
}

/// `validateCustomResourceConversion` (without the webhook URL, service and CA bundle
/// checks) and the preserveUnknownFields rule before it.
pub fn check_conversion(crd: &Crd, out: &mut Vec<Cause>) {
    let Some(conversion) = &crd.spec_facts.conversion else {
        return;
    };
    let base = Path::new("spec").child("conversion");
    let strategy = text(conversion, "strategy");
    if strategy != "None" && crd.preserve_unknown_fields {
        out.push(invalid(
            base.child("strategy"),
            strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    match strategy {
        "" => out.push(Cause::required(base.child("strategy"), "")),
        "None" | "Webhook" => {}
        other => out.push(Cause::not_supported(
            base.child("strategy"),
            BadValue::Str(other.to_string()),
            &["None", "Webhook"],
        )),
    }
    let client = conversion
        .get("webhookClientConfig")
        .filter(|c| !c.is_null());
    let reviews: Vec<&str> = conversion
        .get("conversionReviewVersions")
        .and_then(Value::as_array)
        .map(|l| l.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    if strategy != "Webhook" {
        if client.is_some() {
            out.push(Cause::forbidden(
                base.child("webhookClientConfig"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !reviews.is_empty() {
            out.push(Cause::forbidden(
                base.child("conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return;
    }
    match client {
        None => out.push(Cause::required(
            base.child("webhookClientConfig"),
            "required when strategy is set to Webhook",
        )),
        Some(cc) => {
            let url = cc.get("url").filter(|u| !u.is_null());
            let service = cc.get("service").filter(|s| !s.is_null());
            if url.is_some() == service.is_some() {
                out.push(Cause::required(
                    base.child("webhookClientConfig"),
                    "exactly one of url or service is required",
                ));
            }
        }
    }
    let path = base.child("conversionReviewVersions");
    if reviews.is_empty() {
        out.push(Cause::required(path, ""));
        return;
    }
    let mut seen = std::collections::HashSet::new();
    let mut accepted = false;
    for (i, v) in reviews.iter().enumerate() {
        if !seen.insert(*v) {
            out.push(invalid(path.index(i), v, "duplicate version"));
            continue;
        }
        for e in dns1035_label_errors(v.as_bytes()) {
            out.push(invalid(path.index(i), v, e));
        }
        accepted |= *v == "v1" || *v == "v1beta1";
    }
    if !accepted {
        out.push(Cause::invalid(
            path,
            BadValue::Json(Value::from(reviews)),
            "must include at least one of v1, v1beta1",
        ));
    }
}

/// Every version holds the same value (or there is at most one version).
fn all_same(per_version: &[Option<Value>]) -> bool {
    per_version.windows(2).all(|w| w[0] == w[1])
}

/// The storage and unique-version counts of `validateCustomResourceDefinitionSpec` and
/// `ValidateCustomResourceDefinitionStoredVersions` on create (the stored versions then are
/// the first storage version's name). `schemas_shared`: every version has the same schema.
pub fn check_versions(crd: &Crd, schemas_shared: bool, out: &mut Vec<Cause>) {
    let facts = &crd.spec_facts;
    let versions_path = Path::new("spec").child("versions");
    let storage = crd.versions.iter().filter(|v| v.storage).count();
    let mut names = std::collections::HashSet::new();
    let unique = crd.versions.iter().all(|v| names.insert(v.name.as_str()));
    let hoisted = schemas_shared
        && all_same(&facts.version_subresources)
        && all_same(&facts.version_columns)
        && all_same(&facts.version_selectable_fields);
    if hoisted && (!unique || storage != 1) {
        let rendered: Vec<String> = crd
            .versions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let warning = facts
                    .deprecation_warnings
                    .get(i)
                    .cloned()
                    .flatten()
                    .map_or("null".to_string(), |w| crate::go::json::marshal(&Value::from(w)));
                format!(
                    r#"{{"Name":{},"Served":{},"Storage":{},"Deprecated":{},"DeprecationWarning":{warning},"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}}"#,
                    crate::go::json::marshal(&Value::from(v.name.as_str())),
                    v.served,
                    v.storage,
                    v.deprecated
                )
            })
            .collect();
        let json = format!("[{}]", rendered.join(","));
        let value = BadValue::Rendered {
            value: serde_json::from_str(&json).unwrap_or(Value::Null),
            json,
        };
        if !unique {
            out.push(Cause::invalid(
                versions_path.clone(),
                value.clone(),
                "must contain unique version names",
            ));
        }
        if storage != 1 {
            out.push(Cause::invalid(
                versions_path,
                value,
                "must have exactly one version marked as storage version",
            ));
        }
    }
    // On create the stored versions are the first storage version.
    let stored: Vec<&str> = crd
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| vec![v.name.as_str()])
        .unwrap_or_default();
    let path = Path::new("status").child("storedVersions");
    if stored.is_empty() {
        out.push(Cause::invalid(
            path,
            BadValue::Json(Value::Null),
            "must have at least one stored version",
        ));
        return;
    }
    let mut left: Vec<&str> = stored.clone();
    for v in &crd.versions {
        let found = left.iter().position(|s| *s == v.name);
        if v.storage && found.is_none() {
            out.push(Cause::invalid(
                path.clone(),
                BadValue::Json(Value::from(stored.clone())),
                format!("must have the storage version {}", v.name),
            ));
        }
        if let Some(i) = found {
            left.remove(i);
        }
    }
}
