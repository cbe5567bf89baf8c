//! The CRD check entry point ([`check_crd`]) and the [`CheckReport`] it
//! returns. Mirrors what apiextensions-apiserver does with a CRD on CREATE
//! (`ValidateCustomResourceDefinition` in `pkg/apis/apiextensions/validation`, the
//! `NonStructuralSchema` condition of `pkg/controller/nonstructuralschema`).
//!
//! Everything `crd-audit check` reports for one CRD: the `NonStructuralSchema` violations
//! (and the condition the API server would set), the CRD create-validation errors of its
//! schemas, create warnings, and stored versions that are no longer served.

use super::{cel_compilation, crd_schema, defaults, rules, status_root};
use crate::cause::{BadValue, Cause, Path};
use crate::crd::Crd;
use crate::k8s::formats;
use crate::release::Release;
use crate::schema::new_structural as convert;
use crate::schema::{Items, Props, SchemaOrBool};

/// The `NonStructuralSchema` condition as the API server computes it.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `True` (violations) or `Unknown` (a schema could not be converted).
    pub status: &'static str,
    /// `Violations`, or `StructuralError` when a schema could not be converted.
    pub reason: &'static str,
    /// The violations joined as `utilerrors.NewAggregate` joins them, or why a schema could
    /// not be converted.
    pub message: String,
}

/// A create warning of the API server, with the field it is about.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// The warning's text, as the server returns it.
    pub message: String,
    /// The field it is about: the `format` of a schema, as a path in the CRD as written
    /// (`spec.versions[i].schema.openAPIV3Schema...`).
    pub field: Path,
}

impl Warning {
    /// A warning about `field`.
    pub fn new(message: impl Into<String>, field: Path) -> Warning {
        Warning {
            message: message.into(),
            field,
        }
    }
}

/// The result of checking one CRD.
#[derive(serde::Serialize, Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// The `NonStructuralSchema` violations, one cause each.
    pub non_structural: Vec<Cause>,
    /// The `NonStructuralSchema` condition the server would set; `None` when every schema is
    /// structural.
    pub condition: Option<Condition>,
    /// The causes of the 422 a create of the CRD would get
    /// (`ValidateCustomResourceDefinition`); empty when it would be accepted.
    pub crd_errors: Vec<Cause>,
    /// The create warnings (`WarningsOnCreate`): none when the CRD would be refused, as the
    /// server warns only about a CRD it creates.
    pub warnings: Vec<Warning>,
    /// Versions in `status.storedVersions` that `spec.versions` no longer lists or serves.
    pub stored_versions_not_served: Vec<String>,
    /// Schemas that cannot even be decoded (the server refuses such a request outright).
    pub decode_errors: Vec<String>,
    /// Checking the CRD hit a bug in crd-audit (a panic, caught by [`check_crd`]):
    /// the panic's message and location; nothing else of the report is filled in then.
    pub internal_error: Option<String>,
}

impl CheckReport {
    /// Whether anything was found.
    pub fn has_findings(&self) -> bool {
        !self.non_structural.is_empty()
            || !self.crd_errors.is_empty()
            || !self.stored_versions_not_served.is_empty()
            || !self.decode_errors.is_empty()
            || self.internal_error.is_some()
    }
}

/// Joins messages the way `utilerrors.NewAggregate(...).Error()` does.
pub fn aggregate(messages: &[String]) -> String {
    let mut unique: Vec<&String> = Vec::new();
    for m in messages {
        if !unique.contains(&m) {
            unique.push(m);
        }
    }
    match unique.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn internal(crd: &str, message: String) -> CheckReport {
    CheckReport {
        crd: crd.to_string(),
        internal_error: Some(format!(
            "crd-audit failed while checking this CRD (a bug): {message}"
        )),
        ..CheckReport::default()
    }
}

/// What the checks need of the schemas' JSON form, taken before they are decoded.
struct RawFacts {
    /// Every version has the same schema (validation paths are then `spec.validation`).
    shared: bool,
    has_schema: Vec<bool>,
    /// Per version: the errors of the root under a status subresource.
    status_root: Vec<Vec<Cause>>,
}

fn raw_facts(crd: &Crd) -> RawFacts {
    let shared = crd.schemas_shared();
    let any_status = crd.versions.iter().any(|v| v.status_subresource);
    let status_root = crd
        .versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut errors = Vec::new();
            // Under a status subresource (of this version, or of any for a shared schema).
            let status = if shared {
                any_status
            } else {
                v.status_subresource
            };
            if status && let Some(raw) = &v.schema {
                status_root::check(raw, &schema_path(shared, i), &mut errors);
            }
            errors
        })
        .collect();
    RawFacts {
        shared,
        has_schema: crd.versions.iter().map(|v| v.schema.is_some()).collect(),
        status_root,
    }
}

/// The path CRD validation uses for version `i`'s schema.
fn schema_path(shared: bool, i: usize) -> Path {
    if shared {
        Path::new("spec")
            .child("validation")
            .child("openAPIV3Schema")
    } else {
        Crd::version_schema_path(i)
    }
}

/// Checks every version of a CRD as a kube-apiserver of `release` would on create
/// ([`Release::NEWEST`] for the newest modelled): its CEL rules compile in the environment of
/// new expressions of that release (the libraries of its compatibility version, one release
/// back), and a rule's `optionalOldSelf` is dropped before 1.30. See [`Release`].
///
/// Pass the CRD by reference to keep it, or by value to let each schema's JSON form be
/// freed as it is decoded (a large CRD is then checked in less memory).
///
/// A panic while checking (a bug in crd-audit) is caught: the report then holds only the
/// CRD's name and [`CheckReport::internal_error`].
///
/// ```
/// use crd_audit_engine::{Crd, Release, check_crd};
/// use serde_json::json;
///
/// let crd = Crd::from_value(&json!({
///     "apiVersion": "apiextensions.k8s.io/v1",
///     "kind": "CustomResourceDefinition",
///     "metadata": {"name": "widgets.example.com"},
///     "spec": {
///         "group": "example.com",
///         "names": {"kind": "Widget", "plural": "widgets"},
///         "scope": "Namespaced",
///         "versions": [{
///             "name": "v1", "served": true, "storage": true,
///             "schema": {"openAPIV3Schema": {
///                 "type": "object",
///                 "properties": {"spec": {"properties": {"size": {"type": "string"}}}},
///             }},
///         }],
///     },
/// }))?;
/// let report = check_crd(&crd, Release::NEWEST);
/// assert_eq!(
///     report.non_structural[0].to_string(),
///     "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
/// );
/// # Ok::<(), crd_audit_engine::CrdError>(())
/// ```
pub fn check_crd<'a>(crd: impl Into<CheckInput<'a>>, release: Release) -> CheckReport {
    let crd = crd.into();
    let name = match &crd {
        CheckInput::Borrowed(crd) => crd.name.clone(),
        CheckInput::Owned(crd) => crd.name.clone(),
    };
    crate::guard::catch(move || match crd {
        CheckInput::Borrowed(crd) => check_borrowed(crd, release),
        CheckInput::Owned(crd) => check_owned(*crd, release),
    })
    .unwrap_or_else(|message| internal(&name, message))
}

/// The CRD given to [`check_crd`]: borrowed (`&Crd`), or owned (`Crd`: each schema's JSON
/// form is then freed as it is decoded).
#[derive(Debug)]
pub enum CheckInput<'a> {
    /// The caller keeps the CRD.
    Borrowed(&'a Crd),
    /// The check takes the CRD.
    Owned(Box<Crd>),
}

impl<'a> From<&'a Crd> for CheckInput<'a> {
    fn from(crd: &'a Crd) -> Self {
        CheckInput::Borrowed(crd)
    }
}

impl From<Crd> for CheckInput<'_> {
    fn from(crd: Crd) -> Self {
        CheckInput::Owned(Box::new(crd))
    }
}

/// [`check_crd`] of a borrowed CRD, with no panic guard (fuzz targets want the panic).
pub(crate) fn check_borrowed(crd: &Crd, release: Release) -> CheckReport {
    crate::guard::fault_point("check", &crd.name);
    let facts = raw_facts(crd);
    let mut decode_errors = Vec::new();
    let schemas = crd
        .versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let raw = v.schema.as_ref()?;
            decode(
                Props::from_value(&Crd::version_schema_path(i).to_string(), raw),
                &mut decode_errors,
            )
        })
        .collect();
    finish(crd, &facts, schemas, decode_errors, release)
}

/// [`check_crd`] of an owned CRD, with no panic guard.
pub(crate) fn check_owned(mut crd: Crd, release: Release) -> CheckReport {
    crate::guard::fault_point("check", &crd.name);
    let facts = raw_facts(&crd);
    let mut decode_errors = Vec::new();
    let schemas = crd
        .versions
        .iter_mut()
        .enumerate()
        .map(|(i, v)| {
            let raw = v.schema.take()?;
            decode(
                Props::from_owned(&Crd::version_schema_path(i).to_string(), raw),
                &mut decode_errors,
            )
        })
        .collect();
    finish(&crd, &facts, schemas, decode_errors, release)
}

/// A decoded schema, or its error recorded.
fn decode(
    decoded: Result<Props, crate::schema::DecodeError>,
    errors: &mut Vec<String>,
) -> Option<Props> {
    decoded.map_err(|e| errors.push(e.to_string())).ok()
}

fn finish(
    crd: &Crd,
    facts: &RawFacts,
    mut schemas: Vec<Option<Props>>,
    decode_errors: Vec<String>,
    release: Release,
) -> CheckReport {
    schemas
        .iter_mut()
        .flatten()
        .for_each(|s| release.prepare_schema(s));
    let mut report = CheckReport {
        crd: crd.name.clone(),
        stored_versions_not_served: crd.stored_versions_not_served(),
        decode_errors,
        ..CheckReport::default()
    };
    non_structural(crd, &schemas, &mut report);
    crd_errors(crd, facts, &schemas, release, &mut report);
    // The server warns only about a CRD it creates (`rest.BeforeCreate` asks the strategy for
    // warnings after validation passed).
    let refused = !report.crd_errors.is_empty() || !report.decode_errors.is_empty();
    for (i, s) in schemas.iter().enumerate() {
        let Some(s) = s.as_ref().filter(|_| !refused) else {
            continue;
        };
        collect_warnings(s, &Crd::version_schema_path(i), &mut report.warnings);
        if facts.shared {
            break;
        }
    }
    report
}

fn non_structural(crd: &Crd, schemas: &[Option<Props>], report: &mut CheckReport) {
    let mut errors = Vec::new();
    if crd.preserve_unknown_fields {
        errors.push(Cause::invalid(
            Path::new("spec").child("preserveUnknownFields"),
            BadValue::Bool(true),
            "must be false",
        ));
    }
    for (i, s) in schemas.iter().enumerate() {
        let Some(s) = s else { continue };
        let path = Crd::version_schema_path(i);
        if let Some(e) = convert::conversion_error(s) {
            // Upstream stops at the first schema it cannot convert.
            report.condition = Some(Condition {
                status: "Unknown",
                reason: "StructuralError",
                message: format!(
                    "failed to check validation schema for version {}: {e}",
                    crd.versions[i].name
                ),
            });
            errors.push(Cause::internal(path, e));
            report.non_structural = errors;
            return;
        }
        errors.extend(rules::violations(&path, s));
    }
    if !errors.is_empty() {
        let messages: Vec<String> = errors.iter().map(Cause::message).collect();
        report.condition = Some(Condition {
            status: "True",
            reason: "Violations",
            message: aggregate(&messages),
        });
    }
    report.non_structural = errors;
}

fn crd_errors(
    crd: &Crd,
    facts: &RawFacts,
    schemas: &[Option<Props>],
    release: Release,
    report: &mut CheckReport,
) {
    super::crd_spec::check_name(crd, &mut report.crd_errors);
    super::crd_spec::check_spec(crd, &mut report.crd_errors);
    super::crd_spec::check_subresources_and_columns(crd, &mut report.crd_errors);
    super::crd_spec::check_conversion(crd, &mut report.crd_errors);
    super::crd_spec::check_versions(crd, facts.shared, &mut report.crd_errors);
    if crd.preserve_unknown_fields {
        report.crd_errors.push(Cause::invalid(
            Path::new("spec").child("preserveUnknownFields"),
            BadValue::Bool(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    if crd.preserve_unknown_fields
        && schemas
            .iter()
            .flatten()
            .any(|s| any_schema(s, &|p| p.default.is_some()))
    {
        report.crd_errors.push(Cause::invalid(
            Path::new("spec").child("preserveUnknownFields"),
            BadValue::Bool(true),
            "must be false in order to use defaults in the schema",
        ));
    }
    // apiextensions.k8s.io/v1 requires a schema for every version.
    for (i, has) in facts.has_schema.iter().enumerate() {
        if !has {
            report
                .crd_errors
                .push(Cause::required(Crd::version_schema_path(i), ""));
        }
    }
    let shared = facts.shared;
    for (i, s) in schemas.iter().enumerate() {
        let Some(s) = s else { continue };
        let path = schema_path(shared, i);
        let conversion = convert::conversion_error(s);
        // Upstream's order: the root under a status subresource, nullable at the root, the
        // structural rules, the defaults, the keyword checks (with the rules' fields), then
        // the rules' compilation.
        let before = report.crd_errors.len();
        report
            .crd_errors
            .extend(facts.status_root[i].iter().cloned());
        crd_schema::check_root(s, &path, &mut report.crd_errors);
        let mut schema_errors = Vec::new();
        crd_schema::check_schema(s, &path, &mut schema_errors);
        cel_compilation::check_rule_fields(s, &path, &mut schema_errors);
        if conversion.is_none() {
            let violations = rules::violations(&path, s);
            if violations.is_empty() {
                let before_defaults = report.crd_errors.len();
                defaults::check(
                    s,
                    &path,
                    release.stored_expressions(),
                    &mut report.crd_errors,
                );
                // Rules are compiled only once the defaults are valid.
                if report.crd_errors.len() == before_defaults {
                    cel_compilation::check_rules(
                        s,
                        &path,
                        &schema_errors,
                        release.new_expressions(),
                        &mut report.crd_errors,
                    );
                }
            }
            report.crd_errors.extend(violations);
        }
        report.crd_errors.extend(schema_errors);
        // A schema that cannot be converted and shows no other problem is still refused.
        if let Some(e) = conversion
            && report.crd_errors.len() == before
        {
            report.crd_errors.push(Cause::invalid(
                path.clone(),
                BadValue::Str(String::new()),
                e,
            ));
        }
        if shared {
            break;
        }
    }
    super::crd_spec::check_api_approval(crd, &mut report.crd_errors);
}

/// Whether `pred` holds for a schema or any schema inside it (upstream's `SchemaHas`: every
/// nested schema, those of unsupported keywords included).
pub fn any_schema(s: &Props, pred: &impl Fn(&Props) -> bool) -> bool {
    if pred(s) {
        return true;
    }
    let items: &[Props] = match &s.items {
        Some(Items::Schema(item)) => std::slice::from_ref(&**item),
        Some(Items::Array(list)) => list,
        None => &[],
    };
    let or_bool = |x: &Option<SchemaOrBool>| match x {
        Some(SchemaOrBool::Schema(p)) => any_schema(p, pred),
        _ => false,
    };
    items.iter().any(|p| any_schema(p, pred))
        || s.all_of
            .iter()
            .chain(&s.any_of)
            .chain(&s.one_of)
            .any(|p| any_schema(p, pred))
        || s.not.as_ref().is_some_and(|p| any_schema(p, pred))
        || s.properties.values().any(|p| any_schema(p, pred))
        || or_bool(&s.additional_properties)
        || s.pattern_properties.values().any(|p| any_schema(p, pred))
        || or_bool(&s.additional_items)
        || s.definitions.values().any(|p| any_schema(p, pred))
        || s.dependencies.values().any(|d| match d {
            crate::schema::Dependency::Schema(p) => any_schema(p, pred),
            crate::schema::Dependency::Names(_) => false,
        })
}

/// Create warnings: formats the API server does not recognise, each with its field (`path`
/// is the schema's), for every schema node (structure and junctors).
fn collect_warnings(s: &Props, path: &Path, out: &mut Vec<Warning>) {
    if let Some(w) = formats::format_warning(&s.type_, &s.format) {
        out.push(Warning::new(w, path.child("format")));
    }
    for (k, p) in &s.properties {
        collect_warnings(p, &path.child("properties").key(k), out);
    }
    match &s.items {
        Some(Items::Schema(item)) => collect_warnings(item, &path.child("items"), out),
        Some(Items::Array(list)) => {
            for (i, item) in list.iter().enumerate() {
                collect_warnings(item, &path.child("items").index(i), out);
            }
        }
        None => {}
    }
    if let Some(SchemaOrBool::Schema(ap)) = &s.additional_properties {
        collect_warnings(ap, &path.child("additionalProperties"), out);
    }
    for (name, list) in [
        ("allOf", &s.all_of),
        ("anyOf", &s.any_of),
        ("oneOf", &s.one_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            collect_warnings(sub, &path.child(name).index(i), out);
        }
    }
    if let Some(n) = &s.not {
        collect_warnings(n, &path.child("not"), out);
    }
}

/// Calls `f` on every schema node (structure and junctors), in the order of the warnings.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn visit(s: &Props, f: &mut impl FnMut(&Props)) {
    f(s);
    for p in s.properties.values() {
        visit(p, f);
    }
    match &s.items {
        Some(Items::Schema(item)) => visit(item, f),
        Some(Items::Array(list)) => list.iter().for_each(|i| visit(i, f)),
        None => {}
    }
    if let Some(SchemaOrBool::Schema(ap)) = &s.additional_properties {
        visit(ap, f);
    }
    for sub in s.all_of.iter().chain(&s.any_of).chain(&s.one_of) {
        visit(sub, f);
    }
    if let Some(n) = &s.not {
        visit(n, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_name_the_format_they_are_about() {
        let crd = Crd::from_value(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [
                    {"name": "v1", "served": true, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "a": {"type": "string", "format": "nope"},
                         "b": {"type": "array", "items": {"type": "string", "format": "other"}},
                         "c": {"type": "string", "anyOf": [{"format": "uuid"}, {"format": "x"}]}}}}},
                    {"name": "v2", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "d": {"type": "object", "additionalProperties": {"type": "string", "format": "y"}}}}}}
                ]
            }
        }))
        .unwrap();
        let r = check_crd(&crd, Release::NEWEST);
        let fields: Vec<&str> = r.warnings.iter().map(|w| w.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[a].format",
                "spec.versions[0].schema.openAPIV3Schema.properties[b].items.format",
                "spec.versions[0].schema.openAPIV3Schema.properties[c].anyOf[1].format",
                "spec.versions[1].schema.openAPIV3Schema.properties[d].additionalProperties.format",
            ]
        );
        assert_eq!(r.warnings[0].message, "unrecognized format \"nope\"");
    }

    #[test]
    fn a_panic_while_checking_becomes_the_reports_internal_error() {
        let crd = Crd::from_value(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        }))
        .unwrap();
        assert!(!check_crd(&crd, Release::NEWEST).has_findings());
        crate::guard::inject_on_this_thread("check", "things.example.com");
        let r = check_crd(&crd, Release::NEWEST);
        assert!(r.has_findings());
        assert_eq!(r.crd, "things.example.com");
        let e = r.internal_error.unwrap();
        assert!(
            e.starts_with("crd-audit failed while checking this CRD (a bug): injected panic at check for things.example.com"),
            "{e}"
        );
    }
}
