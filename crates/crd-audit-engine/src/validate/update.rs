//! The UPDATE of a custom resource, as kube-apiserver 1.36 judges it (validation ratcheting
//! locked on since 1.33): the request checks and decoding of both objects, `rest.BeforeUpdate`
//! with the custom resource strategy (`PUT` of the object) or its status strategy
//! (`PUT .../status`), ObjectMeta update rules, and the strategy's `ValidateUpdate`: the schema
//! with ratcheting, the scale subresource, embedded resources, list-set/map uniqueness unless
//! the stored object already broke it, and the CEL rules with `oldSelf` and CEL ratcheting.
//! Mirrors apiextensions-apiserver's `pkg/registry/customresource` (`strategy.go`,
//! `status_strategy.go`, `validator.go`) and apiserver's `pkg/registry/rest/update.go`.

use crate::cause::{BadValue, Cause, Path};
use crate::validate::object::{CEL_NOT_CHECKED, blocks_cel, text_at};
use crate::validate::ratchet::{Correlated, RatchetScope};
use crate::validate::verdict::{Outcome, RequestErrorReason, UpdateVerdict, Verdict};
use crate::validate::{CrdValidator, Mode, embedded, list_type, objectmeta, scale};
use serde_json::{Map, Value};

/// Where an UPDATE is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Subresource {
    /// `PUT` of the object itself (the custom resource strategy).
    #[default]
    Main,
    /// `PUT .../status` (the status strategy): only `status` (and `managedFields`) of the new
    /// object are taken, the rest comes from the stored object.
    Status,
}

impl CrdValidator {
    /// Judges `new` as an UPDATE of the stored object `old` (both as read or sent, before
    /// decoding): admitted, refused with the causes the server returns, or a request error.
    /// On a release that ratchets ([`crate::Release::ratchets`]), errors in values the update
    /// leaves unchanged are tolerated (CEL ones come back as [`UpdateVerdict::warnings`]).
    /// Sending `old` itself as `new` asks whether the stored object can still be written at
    /// all.
    ///
    /// A panic while judging (a bug in crd-audit) is caught: the outcome is then
    /// [`Outcome::InternalError`], as [`CrdValidator::validate`] says.
    pub fn validate_update(&self, old: Value, new: Value, to: Subresource) -> UpdateVerdict {
        let identity = self.update_identity(&new);
        match crate::guard::catch(|| self.validate_update_unguarded(old, new, to)) {
            Ok(v) => v,
            Err(message) => UpdateVerdict {
                outcome: Outcome::internal_error(&message),
                ..identity
            },
        }
    }

    fn update_identity(&self, new: &Value) -> UpdateVerdict {
        let v = self.identity(new);
        UpdateVerdict {
            api_version: v.api_version,
            kind: v.kind,
            namespace: v.namespace,
            name: v.name,
            outcome: Outcome::Admitted,
            pruned: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// [`CrdValidator::validate_update`], with no panic guard.
    pub(crate) fn validate_update_unguarded(
        &self,
        mut old: Value,
        mut new: Value,
        to: Subresource,
    ) -> UpdateVerdict {
        let mut verdict = self.update_identity(&new);
        crate::guard::fault_point("validate", &verdict.name);
        let resolved = self.resolve(&new, &verdict.api_version, &verdict.kind);
        let (version, schema, structure) = match resolved {
            Ok(resolved) => resolved,
            Err(outcome) => return UpdateVerdict { outcome, ..verdict },
        };
        match self.decode(&mut new, structure) {
            Ok(pruned) => verdict.pruned = pruned,
            Err(e) => return refuse(verdict, RequestErrorReason::BadRequest, e),
        }
        // The stored object, read back at its own version, then converted (strategy None).
        if let Err(e) = self.decode_stored(&mut old) {
            return refuse(verdict, RequestErrorReason::BadRequest, e);
        }
        if to == Subresource::Status && !version.status_subresource {
            let msg = "the server could not find the requested resource (no status subresource)";
            return refuse(verdict, RequestErrorReason::NotFound, msg.to_string());
        }
        let (Value::Object(n), Value::Object(o)) = (&mut new, &mut old) else {
            let msg = "the object is not a JSON object".to_string();
            return refuse(verdict, RequestErrorReason::BadRequest, msg);
        };
        o.insert(
            "apiVersion".into(),
            Value::String(verdict.api_version.clone()),
        );
        let meta = |m: &mut Map<String, Value>| -> Map<String, Value> {
            match m.remove("metadata") {
                Some(Value::Object(meta)) => meta,
                _ => Map::new(),
            }
        };
        let (mut new_meta, mut old_meta) = (meta(n), meta(o));
        if self.namespaced {
            if text(&new_meta, "namespace").is_empty() {
                new_meta.insert("namespace".into(), Value::String(verdict.namespace.clone()));
            }
        } else {
            new_meta.remove("namespace");
            old_meta.remove("namespace");
        }
        if text(&new_meta, "resourceVersion").is_empty() {
            set_text(
                &mut new_meta,
                "resourceVersion",
                text(&old_meta, "resourceVersion"),
            );
        }

        // rest.BeforeUpdate: the generation is the stored one's, then the strategy's
        // preparation, then the fields an update can never change.
        match old_meta.get("generation") {
            Some(g) if g.as_i64().unwrap_or(0) != 0 => {
                new_meta.insert("generation".into(), g.clone())
            }
            _ => new_meta.remove("generation"),
        };
        match to {
            Subresource::Main => {
                if version.status_subresource {
                    match o.get("status") {
                        Some(s) => {
                            n.insert("status".into(), s.clone());
                        }
                        None => {
                            n.remove("status");
                        }
                    }
                }
                if n != o {
                    let g = old_meta
                        .get("generation")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    new_meta.insert("generation".into(), Value::from(g.saturating_add(1)));
                }
            }
            Subresource::Status => {
                let status = n.remove("status");
                let managed = new_meta.remove("managedFields");
                *n = o.clone();
                new_meta = old_meta.clone();
                match managed {
                    Some(m) => new_meta.insert("managedFields".into(), m),
                    None => new_meta.remove("managedFields"),
                };
                match status {
                    Some(s) => n.insert("status".into(), s),
                    None => n.remove("status"),
                };
            }
        }
        objectmeta::prepare_for_update(&mut new_meta, &old_meta);
        n.insert("metadata".into(), Value::Object(new_meta));
        o.insert("metadata".into(), Value::Object(old_meta));

        // Validation: the common fields of rest.BeforeUpdate, then the strategy's.
        let (new, old) = (&new, &old);
        let (nm, om) = (&new["metadata"], &old["metadata"]);
        let mut errs = objectmeta::validate_object_meta_accessor(nm, self.namespaced);
        errs.extend(objectmeta::validate_object_meta_update(nm, om));
        let mut strategy = objectmeta::validate_object_meta_update(nm, om);
        let correlated = structure.map(|st| Correlated::root(st, new, old));
        match to {
            Subresource::Main => {
                if let Some(s) = schema {
                    s.validator
                        .validate_update_at(new, correlated, &Path::root(), &mut strategy);
                }
                if let Some(sc) = &version.scale {
                    scale::validate(sc, new, &mut strategy);
                }
            }
            Subresource::Status => {
                if let (Some(s), Some(status)) = (schema, new.get("status")) {
                    let c = correlated.and_then(|c| c.key("status"));
                    let at = Path::new("status");
                    s.validator.validate_property_update_at(
                        "status",
                        status,
                        c,
                        &at,
                        &mut strategy,
                    );
                }
                if let Some(sc) = &version.scale {
                    scale::validate_status(sc, new, &mut strategy);
                }
            }
        }
        if let Some(st) = structure {
            if to == Subresource::Main {
                embedded::validate(st, new, &mut strategy);
            }
            let mut was = Vec::new();
            list_type::validate(st, old, &mut was);
            if was.is_empty() {
                list_type::validate(st, new, &mut strategy);
            }
        }
        if let Some(cel) = schema.and_then(|s| s.cel.as_ref()) {
            if strategy.iter().any(|c| blocks_cel(c.kind)) {
                strategy.push(Cause::invalid(
                    Path::root(),
                    BadValue::Json(Value::Null),
                    CEL_NOT_CHECKED,
                ));
            } else {
                let scope = correlated.map(RatchetScope::root).unwrap_or_default();
                let outcome = cel.validate_update(new, old, scope);
                strategy.extend(outcome.causes);
                verdict.warnings = outcome.warnings;
            }
        }
        errs.extend(strategy);
        if errs.is_empty() && to == Subresource::Main {
            verdict
                .warnings
                .extend(objectmeta::finalizer_warnings(nm, Some(om)));
        }
        verdict.outcome = Outcome::from_causes(errs);
        verdict
    }

    /// Judges a stored object as stored data ([`Mode::Stored`]) and, when the server refuses
    /// it, also the no-op update of it ([`Verdict::update`]): admitted means its invalid
    /// values are tolerated, refused means it is stuck ([`Verdict::is_stuck`]: every write to
    /// it is refused). On a release that does not ratchet (before 1.30,
    /// [`crate::Release::ratchets`]) the no-op update is refused with the same causes. An
    /// object without `resourceVersion` (or, for a namespaced CRD, without namespace) is
    /// judged as the server holds it, with both.
    pub fn validate_stored(&self, obj: Value) -> Verdict {
        let stored = self.release.ratchets().then(|| self.as_stored(&obj));
        let mut verdict = self.validate(obj, Mode::Stored);
        if !matches!(
            verdict.outcome,
            Outcome::Refused { .. } | Outcome::InternalError { .. }
        ) {
            return verdict;
        }
        let update = match stored {
            Some(stored) => self.validate_update(stored.clone(), stored, Subresource::Main),
            // Before ratcheting the unchanged update is judged as the stored data: the same
            // object, the same answer.
            None => UpdateVerdict {
                api_version: verdict.api_version.clone(),
                kind: verdict.kind.clone(),
                namespace: verdict.namespace.clone(),
                name: verdict.name.clone(),
                outcome: verdict.outcome.clone(),
                pruned: Vec::new(),
                warnings: Vec::new(),
            },
        };
        verdict.update = Some(Box::new(update));
        verdict
    }

    fn as_stored(&self, obj: &Value) -> Value {
        let mut obj = obj.clone();
        if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
            if text(meta, "resourceVersion").is_empty() {
                meta.insert("resourceVersion".into(), Value::String("1".into()));
            }
            if self.namespaced && text(meta, "namespace").is_empty() {
                meta.insert("namespace".into(), Value::String("default".into()));
            }
        }
        obj
    }

    /// Reads a stored object back as the server does: at its own version (which need not be
    /// served), pruned and defaulted.
    fn decode_stored(&self, old: &mut Value) -> Result<(), String> {
        let api_version = text_at(old, &["apiVersion"]);
        let version = api_version
            .split_once('/')
            .filter(|(g, _)| *g == self.group)
            .and_then(|(_, ver)| self.versions.iter().find(|v| v.name == ver))
            .ok_or_else(|| format!("{api_version} is not a version of CRD {}", self.crd_name))?;
        if let Some(e) = objectmeta::request_error(old) {
            return Err(e);
        }
        let structure = match &version.schema {
            Ok(Some(s)) => s.structure.as_ref(),
            _ => None,
        };
        self.decode(old, structure).map(|_| ())
    }
}

fn refuse(verdict: UpdateVerdict, reason: RequestErrorReason, message: String) -> UpdateVerdict {
    UpdateVerdict {
        outcome: Outcome::request_error(reason, message),
        ..verdict
    }
}

fn text<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("")
}

fn set_text(m: &mut Map<String, Value>, key: &str, value: &str) {
    if value.is_empty() {
        m.remove(key);
    } else {
        m.insert(key.into(), Value::String(value.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use crate::crd::Crd;
    use crate::release::Release;
    use crate::validate::{CrdValidator, Mode, ValidatorOptions};

    /// `CrdValidator::options()` builds what it names: the release, CEL on or off.
    #[test]
    fn validator_options_build_what_they_name() {
        let crd = Crd::from_value(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                "names": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.metadata.name != 'no'"}]}}}]}}))
        .unwrap();
        let obj = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "no"}});
        let build = |o: ValidatorOptions| o.build(&crd).unwrap();
        let default = build(CrdValidator::options());
        assert_eq!(default.release(), Release::NEWEST);
        assert!(!default.validate(obj.clone(), Mode::Create).is_admitted());
        let without = build(CrdValidator::options().cel(false));
        assert!(without.validate(obj.clone(), Mode::Create).is_admitted());
        let old = build(CrdValidator::options().release(Release::new(28)));
        assert_eq!(old.release(), Release::new(28));
        assert!(!old.validate(obj.clone(), Mode::Create).is_admitted());

        // A budget smaller than the rule's cost stops it with the server's cause; a large one
        // changes nothing.
        let fine = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "yes"}});
        let tight = build(CrdValidator::options().cel_cost_budget(1));
        let causes: Vec<String> = tight
            .validate(fine.clone(), Mode::Create)
            .causes()
            .iter()
            .map(|c| c.message())
            .collect();
        assert_eq!(
            causes,
            [
                "<nil>: Invalid value: \"object\": validation failed due to running out of cost budget, no further validation rules will be run"
            ]
        );
        let ample = build(CrdValidator::options().cel_cost_budget(u64::MAX));
        assert!(ample.validate(fine.clone(), Mode::Create).is_admitted());
        assert!(!ample.validate(obj, Mode::Create).is_admitted());
    }

    /// The release decides whether a stored invalid object's no-op update is ratcheted:
    /// tolerated by a 1.30+ validator, stuck before.
    #[test]
    fn the_release_decides_ratcheting() {
        assert!(!Release::new(29).ratchets());
        assert!(Release::new(30).ratchets() && Release::NEWEST.ratchets());
        let crd = Crd::from_value(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "n": {"type": "integer", "maximum": 3}}}}}}}]}}))
        .unwrap();
        let stored = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"},
            "spec": {"n": 9}});
        let updatable = |minor| {
            let v = CrdValidator::for_release(&crd, Release::new(minor)).unwrap();
            assert_eq!(v.release(), Release::new(minor));
            let verdict = v.validate_stored(stored.clone());
            assert!(!verdict.is_admitted());
            verdict.update.unwrap().is_admitted()
        };
        assert!(updatable(30) && updatable(36));
        assert!(!updatable(29) && !updatable(27));
        // The refused update names the object, whichever the release: its 422 message is the
        // server's (`Thing.example.com "a" is invalid: ...`).
        for minor in [29, 36] {
            let v = CrdValidator::for_release(&crd, Release::new(minor)).unwrap();
            let stuck = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Thing",
                "metadata": {"name": "a", "namespace": "ns"}, "spec": {"n": 9, "x": []}});
            let update = v.validate_stored(stuck).update.unwrap();
            assert_eq!(
                (update.namespace.as_str(), update.name.as_str()),
                ("ns", "a"),
                "1.{minor}"
            );
            if !update.is_admitted() {
                assert!(
                    update
                        .status_message("Thing.example.com")
                        .unwrap()
                        .starts_with("Thing.example.com \"a\" is invalid: "),
                    "1.{minor}: {update:?}"
                );
            }
        }
    }
}
