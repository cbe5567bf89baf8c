//! The whole judgement of one custom object against its CRD, in the order kube-apiserver's
//! CREATE path runs it: request checks (version served, kind, decodable metadata), structural
//! pruning, dropping of non-nullable nulls, embedded-resource decoding, defaulting, dropping
//! of `status` under a status subresource, then validation: ObjectMeta, the schema, the scale
//! subresource, embedded resources, list-type uniqueness and the CEL gate.
//!
//! A [`CrdValidator`] is compiled once per CRD (every version's schema, patterns, defaults)
//! and then judges any number of objects.

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::crd::{Crd, Scale, Scope};
use crate::release::Release;
use crate::schema::Props;
use crate::schema::new_structural;
use crate::validate::cel_validation::CelValidator;
use crate::validate::schema_tree::Structure;
use crate::validate::schema_validator::SchemaValidator;
use crate::validate::verdict::{Outcome, RequestErrorReason, Verdict};
use crate::validate::{defaulting, embedded, list_type, objectmeta, prune, scale};
use serde_json::Value;

/// How an object is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// As a `kubectl create` of it would be: `status` is dropped when the version has the
    /// status subresource, so its content is not validated.
    #[default]
    Create,
    /// As stored data that every write must carry through validation (on a server without
    /// validation ratcheting): the whole object, `status` included.
    Stored,
}

/// The detail of the root cause the server adds when CEL rules were skipped.
pub const CEL_NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// One version, compiled.
#[derive(Debug)]
pub(super) struct VersionValidator {
    pub(super) name: String,
    pub(super) served: bool,
    pub(super) status_subresource: bool,
    pub(super) scale: Option<Scale>,
    pub(super) schema: Result<Option<CompiledSchema>, String>,
}

#[derive(Debug)]
pub(super) struct CompiledSchema {
    pub(super) validator: SchemaValidator,
    /// `None` when the schema is not structural (only tolerated with
    /// `preserveUnknownFields`): no pruning, defaulting, list-type or CEL then.
    pub(super) structure: Option<Structure>,
    /// The `x-kubernetes-validations` rules of the structural schema, compiled.
    pub(super) cel: Option<CelValidator>,
}

/// A CRD compiled for judging its objects.
#[derive(Debug)]
pub struct CrdValidator {
    pub(super) group: String,
    pub(super) kind: String,
    pub(super) crd_name: String,
    pub(super) namespaced: bool,
    pub(super) preserve_unknown_fields: bool,
    pub(super) versions: Vec<VersionValidator>,
    /// The release judged by: its CEL environment, and whether it ratchets updates.
    pub(super) release: Release,
}

/// How [`CrdValidator::options`] compiles a CRD: the release judged by ([`Release::NEWEST`]
/// unless set), whether `x-kubernetes-validations` rules run (they do unless turned off; off,
/// objects are judged without them, as with the operator's `celEnabled: false`), and the CEL
/// cost budget of one object (the API server's `RuntimeCELCostBudget`, 10,000,000, unless
/// set).
///
/// ```
/// # use crd_audit_engine::{Crd, CrdValidator, Release};
/// # let crd = Crd::from_value(&serde_json::json!({
/// #     "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
/// #     "metadata": {"name": "things.example.com"},
/// #     "spec": {"group": "example.com", "scope": "Cluster",
/// #         "names": {"kind": "Thing", "plural": "things"},
/// #         "versions": [{"name": "v1", "served": true, "storage": true,
/// #             "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))?;
/// let validator = CrdValidator::options()
///     .release(Release::new(29)) // no validation ratcheting yet
///     .cel_cost_budget(1_000_000)
///     .build(&crd)?;
/// assert!(!validator.release().ratchets());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidatorOptions {
    release: Release,
    cel: bool,
    cel_cost_budget: Option<u64>,
}

impl Default for ValidatorOptions {
    fn default() -> Self {
        ValidatorOptions {
            release: Release::NEWEST,
            cel: true,
            cel_cost_budget: None,
        }
    }
}

impl ValidatorOptions {
    /// Judge as a kube-apiserver of `release` does (see [`CrdValidator::for_release`]).
    pub fn release(self, release: Release) -> ValidatorOptions {
        ValidatorOptions { release, ..self }
    }

    /// Whether CEL rules are evaluated.
    pub fn cel(self, cel: bool) -> ValidatorOptions {
        ValidatorOptions { cel, ..self }
    }

    /// The CEL cost budget of all rules on one object: when the rules evaluated so far have
    /// cost more, the rest are not run and the object is refused with the server's "running
    /// out of cost budget" cause. Each rule's own limit (1,000,000) stays. The API server's
    /// budget, 10,000,000, is the default; values above `i64::MAX` count as `i64::MAX`.
    pub fn cel_cost_budget(self, budget: u64) -> ValidatorOptions {
        ValidatorOptions {
            cel_cost_budget: Some(budget),
            ..self
        }
    }

    /// Compiles `crd` with these options.
    pub fn build(self, crd: &Crd) -> Result<CrdValidator, CompileError> {
        let mut v = CrdValidator::for_release(crd, self.release)?;
        if !self.cel {
            return Ok(v.without_cel());
        }
        if let Some(budget) = self.cel_cost_budget {
            let budget = i64::try_from(budget).unwrap_or(i64::MAX);
            for version in &mut v.versions {
                if let Ok(Some(s)) = &mut version.schema
                    && let Some(cel) = &mut s.cel
                {
                    cel.budget = budget;
                }
            }
        }
        Ok(v)
    }
}

/// Compiling a CRD's validator hit a bug in crd-audit (a panic, caught): its message and
/// location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    message: String,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

impl CrdValidator {
    /// Compiles the CRD's schemas and rules to judge objects as the newest release modelled
    /// ([`Release::NEWEST`], 1.36) does. See [`CrdValidator::for_release`].
    pub fn new(crd: &Crd) -> Result<CrdValidator, CompileError> {
        CrdValidator::for_release(crd, Release::NEWEST)
    }

    /// Compiles the CRD's schemas and rules to judge objects as a kube-apiserver of `release`
    /// does: its CEL rules compile in that release's environment of stored expressions
    /// (every library it has, whatever release the CRD was written on; a rule using one it
    /// lacks fails to compile, and objects then get that error), and a rule's
    /// `optionalOldSelf` is dropped before 1.30, as the server drops it from the CRDs it is
    /// given; [`CrdValidator::validate_stored`] ratchets the no-op update exactly when the
    /// release does ([`Release::ratchets`]). See [`Release`].
    ///
    /// Problems of the CRD itself (a schema that cannot be served, a rule that does not
    /// compile) are not errors here: objects get them as the server would answer them. The
    /// only error is a panic while compiling (a bug in crd-audit), caught.
    pub fn for_release(crd: &Crd, release: Release) -> Result<CrdValidator, CompileError> {
        crate::guard::catch(|| CrdValidator::compile(crd, release)).map_err(|m| CompileError {
            message: format!("internal error compiling CRD {}: {m}", crd.name),
        })
    }

    /// [`CrdValidator::for_release`], with no panic guard.
    pub(crate) fn compile(crd: &Crd, release: Release) -> CrdValidator {
        crate::guard::fault_point("compile", &crd.name);
        let env = release.stored_expressions();
        let versions = crd
            .versions
            .iter()
            .map(|v| VersionValidator {
                name: v.name.clone(),
                served: v.served,
                status_subresource: v.status_subresource,
                scale: v.scale.clone(),
                schema: match &v.schema {
                    None => Ok(None),
                    Some(raw) => Props::from_value("", raw)
                        .map(|mut props| {
                            release.prepare_schema(&mut props);
                            let structure = new_structural::conversion_error(&props)
                                .is_none()
                                .then(|| Structure::new(&props));
                            Some(CompiledSchema {
                                validator: SchemaValidator::new(&props),
                                cel: if structure.is_some() {
                                    CelValidator::new_in(&props, env)
                                } else {
                                    None
                                },
                                structure,
                            })
                        })
                        .map_err(|e| e.to_string()),
                },
            })
            .collect();
        CrdValidator {
            group: crd.group.clone(),
            kind: crd.kind.clone(),
            crd_name: crd.name.clone(),
            namespaced: crd.scope == Scope::Namespaced,
            preserve_unknown_fields: crd.preserve_unknown_fields,
            versions,
            release,
        }
    }

    /// The release this validator judges by ([`CrdValidator::for_release`]).
    pub fn release(&self) -> Release {
        self.release
    }

    /// Options to compile a validator with: the release judged by, whether CEL rules run.
    /// `CrdValidator::options().release(r).cel(false).build(&crd)`.
    pub fn options() -> ValidatorOptions {
        ValidatorOptions::default()
    }

    /// The same validator without its CEL rules (what `.cel(false)` builds): objects are
    /// judged without `x-kubernetes-validations`.
    pub fn without_cel(mut self) -> CrdValidator {
        for v in &mut self.versions {
            if let Ok(Some(s)) = &mut v.schema {
                s.cel = None;
            }
        }
        self
    }

    /// `Kind.group`, as Status messages name the resource.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// Whether an object's `apiVersion` group and `kind` are this CRD's (whatever the
    /// version).
    pub fn is_kind(&self, obj: &Value) -> bool {
        let text = |k: &str| obj.get(k).and_then(Value::as_str);
        let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
            return false;
        };
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        group == self.group && kind == self.kind
    }

    /// Whether the CRD's objects live in namespaces.
    pub fn namespaced(&self) -> bool {
        self.namespaced
    }

    /// The CRD's API group (`spec.group`).
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The CRD's kind (`spec.names.kind`).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Judges one object as the API server would on create ([`Mode::Create`]) or as stored
    /// data ([`Mode::Stored`]). The object is consumed: it is pruned and defaulted on the way.
    ///
    /// A panic while judging (a bug in crd-audit) is caught: the object then gets the
    /// outcome [`Outcome::InternalError`] with the panic's message.
    pub fn validate(&self, obj: Value, mode: Mode) -> Verdict {
        let mut identity = self.identity(&obj);
        match crate::guard::catch(|| self.validate_unguarded(obj, mode)) {
            Ok(v) => v,
            Err(message) => {
                identity.outcome = Outcome::internal_error(&message);
                identity
            }
        }
    }

    /// The name, namespace (the request's), apiVersion and kind of an object sent, with no
    /// outcome yet.
    pub(super) fn identity(&self, obj: &Value) -> Verdict {
        let mut namespace = text_at(obj, &["metadata", "namespace"]);
        if !self.namespaced {
            namespace.clear();
        } else if namespace.is_empty() {
            namespace = "default".to_string();
        }
        Verdict::new(
            text_at(obj, &["apiVersion"]),
            text_at(obj, &["kind"]),
            namespace,
            text_at(obj, &["metadata", "name"]),
        )
    }

    /// The request checks before anything is decoded: the version is this CRD's and served
    /// (404), the kind is this CRD's (400), `metadata` decodes (400), and the version's
    /// schema can be served (422/500). `Err` with the outcome when it is already given.
    pub(super) fn resolve<'s>(
        &'s self,
        obj: &Value,
        api_version: &str,
        kind: &str,
    ) -> Result<
        (
            &'s VersionValidator,
            Option<&'s CompiledSchema>,
            Option<&'s Structure>,
        ),
        Outcome,
    > {
        let version = api_version
            .split_once('/')
            .filter(|(g, _)| *g == self.group)
            .and_then(|(_, ver)| self.versions.iter().find(|v| v.name == ver))
            .filter(|v| v.served);
        let Some(version) = version else {
            let msg = format!(
                "the server could not find the requested resource ({} is not served by CRD {})",
                api_version, self.crd_name
            );
            return Err(Outcome::request_error(RequestErrorReason::NotFound, msg));
        };
        if kind != self.kind {
            let msg = format!(
                "the API version in the data ({}, Kind={}) does not match the expected API version / kind {}/{}, Kind={}",
                api_version, kind, self.group, version.name, self.kind
            );
            return Err(Outcome::request_error(RequestErrorReason::BadRequest, msg));
        }
        if let Some(e) = objectmeta::request_error(obj) {
            return Err(Outcome::request_error(RequestErrorReason::BadRequest, e));
        }
        let schema = match &version.schema {
            Ok(s) => s.as_ref(),
            Err(e) => {
                return Err(Outcome::Refused {
                    causes: vec![Cause::internal(
                        Path::root(),
                        format!("the schema of version {} cannot be read: {e}", version.name),
                    )],
                });
            }
        };
        let structure = schema.and_then(|s| s.structure.as_ref());
        if schema.is_some() && structure.is_none() && !self.preserve_unknown_fields {
            // The server cannot serve a CRD whose schema is not structural unless it keeps
            // unknown fields (such a CRD can only be stored, never created, this way).
            return Err(Outcome::request_error(
                RequestErrorReason::SchemaNotServable,
                "the server could not properly serve the CR schema".to_string(),
            ));
        }
        Ok((version, schema, structure))
    }

    /// What the API server does to an object of one of this CRD's versions (the object's
    /// `apiVersion` names which, served or not) when it decodes it, or has converted another
    /// version to it: pruning of unknown fields and of `null`s that are neither nullable nor
    /// defaulted, at the version's schema, and the checks of embedded resources; with
    /// `defaults`, the version's defaults too (applied when an object is decoded, never right
    /// after a conversion). Returns the pruned fields, or the error the server answers.
    pub fn coerce(&self, obj: &mut Value, defaults: bool) -> Result<Vec<String>, String> {
        let api_version = text_at(obj, &["apiVersion"]);
        let version = api_version
            .split_once('/')
            .filter(|(g, _)| *g == self.group)
            .and_then(|(_, ver)| self.versions.iter().find(|v| v.name == ver))
            .ok_or_else(|| {
                format!(
                    "{api_version} is not a version of the CRD {}",
                    self.crd_name
                )
            })?;
        let structure = match &version.schema {
            Ok(s) => s.as_ref().and_then(|s| s.structure.as_ref()),
            Err(e) => {
                return Err(format!(
                    "the schema of version {} cannot be read: {e}",
                    version.name
                ));
            }
        };
        let pruned = if self.preserve_unknown_fields {
            prune::prune_metadata(obj, structure)
        } else {
            prune::prune_object(obj, structure, true)
        };
        if let Some(st) = structure {
            if let Some(e) = embedded::request_error(st, obj) {
                return Err(e);
            }
            if defaults {
                defaulting::apply(st, obj);
            }
        }
        Ok(pruned)
    }

    /// Decoding as the server does it (pruning, nulls, embedded resources), then defaulting.
    /// Returns the pruned fields, or the request error of an embedded resource.
    pub(super) fn decode(
        &self,
        obj: &mut Value,
        structure: Option<&Structure>,
    ) -> Result<Vec<String>, String> {
        let pruned = if self.preserve_unknown_fields {
            prune::prune_metadata(obj, structure)
        } else {
            prune::prune_object(obj, structure, true)
        };
        if let Some(st) = structure {
            if let Some(e) = embedded::request_error(st, obj) {
                return Err(e);
            }
            defaulting::apply(st, obj);
        }
        Ok(pruned)
    }

    /// [`CrdValidator::validate`], with no panic guard (fuzz targets want the panic).
    pub(crate) fn validate_unguarded(&self, mut obj: Value, mode: Mode) -> Verdict {
        let mut verdict = self.identity(&obj);
        crate::guard::fault_point("validate", &verdict.name);
        let (version, schema, structure) =
            match self.resolve(&obj, &verdict.api_version, &verdict.kind) {
                Ok(resolved) => resolved,
                Err(outcome) => {
                    verdict.outcome = outcome;
                    return verdict;
                }
            };

        match self.decode(&mut obj, structure) {
            Ok(pruned) => verdict.pruned = pruned,
            Err(e) => {
                verdict.outcome = Outcome::request_error(RequestErrorReason::BadRequest, e);
                return verdict;
            }
        }
        if mode == Mode::Create
            && version.status_subresource
            && let Value::Object(m) = &mut obj
        {
            verdict.status_dropped = m.remove("status").is_some();
        }

        // Validation.
        let mut causes = Vec::new();
        let errs = &mut causes;
        errs.extend(objectmeta::validate_object_meta(
            obj.get("metadata").unwrap_or(&Value::Null),
            self.namespaced,
        ));
        if mode == Mode::Create
            && let Value::Object(m) = &mut obj
        {
            let namespace = self.namespaced.then_some(verdict.namespace.as_str());
            let meta = m.entry("metadata").or_insert(Value::Null);
            objectmeta::prepare_for_create(meta, namespace);
        }
        if let Some(s) = schema {
            s.validator.validate(&obj, errs);
        }
        if let Some(sc) = &version.scale {
            scale::validate(sc, &obj, errs);
        }
        if let Some(st) = structure {
            embedded::validate(st, &obj, errs);
            list_type::validate(st, &obj, errs);
        }
        if let Some(cel) = schema.and_then(|s| s.cel.as_ref()) {
            if errs.iter().any(|c| blocks_cel(c.kind)) {
                errs.push(Cause::invalid(
                    Path::root(),
                    BadValue::Json(Value::Null),
                    CEL_NOT_CHECKED,
                ));
            } else {
                let outcome = cel.validate(&obj);
                errs.extend(outcome.causes);
                verdict.rules_not_evaluated = outcome.not_evaluated;
            }
        }
        verdict.outcome = Outcome::from_causes(causes);
        crate::load::drop_value(obj);
        verdict
    }
}

/// The string at a path of an object, or "".
pub(super) fn text_at(obj: &Value, path: &[&str]) -> String {
    let mut v = obj;
    for k in path {
        match v.get(k) {
            Some(x) => v = x,
            None => return String::new(),
        }
    }
    v.as_str().unwrap_or("").to_string()
}

/// Error types after which the server does not evaluate CEL rules.
pub(super) fn blocks_cel(kind: ErrorType) -> bool {
    matches!(
        kind,
        ErrorType::NotSupported
            | ErrorType::Required
            | ErrorType::TooLong
            | ErrorType::TooMany
            | ErrorType::TypeInvalid
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Crd {
        Crd::from_value(&json!({
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
        .unwrap()
    }

    fn thing(name: &str) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": name}})
    }

    #[test]
    fn a_panic_while_judging_becomes_an_internal_error_verdict() {
        crate::guard::install_quiet_hook();
        let v = CrdValidator::new(&crd()).unwrap();
        crate::guard::inject_on_this_thread("validate", "boom");
        assert!(v.validate(thing("fine"), Mode::Create).is_admitted());
        let verdict = v.validate(thing("boom"), Mode::Create);
        assert_eq!(
            (verdict.name.as_str(), verdict.namespace.as_str()),
            ("boom", "default")
        );
        let Outcome::InternalError { message } = &verdict.outcome else {
            panic!("{:?}", verdict.outcome);
        };
        assert!(
            message.starts_with(&format!("crd-audit failed while judging this object (a bug): injected panic at validate for boom (at {}:", file!().replace("validate/object.rs", "guard.rs"))),
            "{message}"
        );
    }

    #[test]
    fn a_panic_while_compiling_is_an_error() {
        crate::guard::inject_on_this_thread("compile", "things.example.com");
        let e = CrdValidator::new(&crd()).unwrap_err().to_string();
        assert!(
            e.starts_with("internal error compiling CRD things.example.com: injected panic"),
            "{e}"
        );
    }
}
