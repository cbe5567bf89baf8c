//! The audit of one CRD: what its objects look like under their schemas. Only what is
//! needed to report and to detect transitions is kept: counts per version, and for invalid
//! objects (or objects with unknown fields) their key, version and first errors. Valid
//! objects leave nothing behind.

use crate::audit::shown_verdict::ShownVerdict;
use crd_audit_engine::Crd;
use crd_audit_engine::CrdValidator;
use crd_audit_engine::{BadValue, Cause};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// An invalid object as the report lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    pub version: String,
    pub uid: String,
    /// The first three messages (values redacted when configured).
    pub errors: Vec<String>,
    /// All the object's messages, for telling a changed judgement from an unchanged one.
    pub digest: u64,
    pub error_count: usize,
    /// The judgement panicked (an InternalError, not a schema violation).
    pub internal: bool,
    /// The server refuses every update of the object, even one that changes nothing: it is
    /// stuck (without validation ratcheting, every invalid object is).
    pub updates_blocked: bool,
}

/// `(namespace, name)`.
pub type Key = (String, String);

#[derive(Debug, Default)]
pub struct Audit {
    pub objects: BTreeMap<String, usize>,
    pub invalid: BTreeMap<Key, Invalid>,
    pub unknown_fields: BTreeMap<String, BTreeSet<Key>>,
    /// Invalid objects whose annotation the server refused (it refuses every write to an
    /// object that fails the current schema, without validation ratcheting).
    pub unwritable: BTreeMap<String, BTreeSet<Key>>,
    pub validations: u64,
    /// A 64-bit hash of every object's key: the count stays right when a watch says "this
    /// object is now like this" without saying whether it is new (8 bytes an object).
    seen: std::collections::HashSet<u64>,
}

fn key_hash(key: &Key) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// An object the operator may annotate or report an Event about.
#[derive(Clone, Debug)]
pub struct Target {
    pub api_version: String,
    pub kind: String,
    pub key: Key,
    pub version: String,
}

/// The annotation that marks an invalid object.
pub const ANNOTATION: &str = "crd-audit.dev/violations";

impl Target {
    pub fn new(crd: &Crd, key: Key, version: &str) -> Target {
        Target {
            api_version: format!("{}/{version}", crd.group),
            kind: crd.kind.clone(),
            key,
            version: version.to_string(),
        }
    }

    /// The metadata-only apply body: with the annotation, or without it (which removes the
    /// one this manager set).
    pub fn body(&self, annotation: Option<&str>) -> Value {
        let mut meta = serde_json::json!({"name": self.key.1});
        if !self.key.0.is_empty() {
            meta["namespace"] = Value::String(self.key.0.clone());
        }
        if let Some(a) = annotation {
            meta["annotations"] = serde_json::json!({ ANNOTATION: a });
        }
        serde_json::json!({"apiVersion": self.api_version, "kind": self.kind, "metadata": meta})
    }
}

/// The annotation text: the count and the first message, at most 1 KiB.
pub fn annotation_text(i: &Invalid) -> String {
    let first = i.errors.first().map(String::as_str).unwrap_or("");
    let mut s = format!("{} violation(s): {first}", i.error_count);
    if s.len() > 1024 {
        let mut cut = 1021;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// A message with its bad value replaced by its type and length (`<string, 12 chars>`), in
/// the message and wherever the detail repeats it.
pub fn redacted(c: &Cause) -> String {
    redacted_cause(c).message()
}

/// The cause with its bad value replaced by its type and length (see [`redacted`]).
pub fn redacted_cause(c: &Cause) -> Cause {
    let shown = c.bad_value.render();
    let placeholder = match &c.bad_value {
        BadValue::Omit => return c.clone(),
        BadValue::Str(s) => format!("<string, {} chars>", s.chars().count()),
        BadValue::Int(_) | BadValue::Float(_) => "<number>".to_string(),
        BadValue::Bool(_) => "<bool>".to_string(),
        BadValue::Json(Value::Null) => return c.clone(),
        BadValue::Json(v) | BadValue::Rendered { value: v, .. } => {
            format!("<{}>", crd_audit_engine::render::json_kind(v))
        }
        _ => "<value>".to_string(),
    };
    let mut copy = c.clone();
    copy.bad_value = BadValue::Rendered {
        json: placeholder.clone(),
        value: Value::String(placeholder.clone()),
    };
    if let Some(s) = shown
        && s.len() > 2
    {
        copy.detail = copy.detail.replace(&s, &placeholder);
        if let BadValue::Str(raw) = &c.bad_value
            && !raw.is_empty()
        {
            copy.detail = copy.detail.replace(raw.as_str(), &placeholder);
        }
    }
    copy
}

/// A verdict with the bad values of its causes, and of those of its no-op update, replaced
/// by their type and length (see [`redacted`]): what is said about the object then holds
/// none of its values, whatever part of the verdict a writer shows.
pub fn redact_verdict(v: &mut ShownVerdict) {
    for c in &mut v.errors {
        *c = redacted_cause(c);
    }
    if let Some(u) = &mut v.update {
        redact_verdict(u);
    }
}

fn digest(messages: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    messages.hash(&mut h);
    h.finish()
}

/// What judging one object changed.
#[derive(Debug, PartialEq)]
pub enum Transition {
    None,
    BecameInvalid,
    /// An invalid object whose updates were accepted can no longer be updated at all.
    BecameBlocked,
    BecameValid,
    ChangedErrors,
}

/// The judgement of one object, made on a blocking worker; the object itself is gone.
#[derive(Debug)]
pub struct Judgement {
    pub key: Key,
    pub uid: String,
    pub version: String,
    /// Messages (values redacted when configured), the request error last.
    pub messages: Vec<String>,
    pub unknown_fields: bool,
    /// The judgement panicked (reported as an InternalError message).
    pub internal_error: bool,
    /// An invalid object that the server would refuse to update at all.
    pub updates_blocked: bool,
    /// Why: the first error of its refused unchanged update (redacted when configured).
    pub refusal: Option<String>,
}

/// The longest message a report, event or annotation carries (a bad value can be huge: an
/// enum of 12,000 values is listed in its message).
pub const MAX_MESSAGE_BYTES: usize = 512;

/// Cuts a message to `max` bytes at a character boundary, saying so.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut cut = max.saturating_sub(3);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// Judges an object as stored data, and an invalid one also as a no-op update (is it stuck?),
/// with validation ratcheting when the validator's release has it. A panic inside the engine
/// becomes an InternalError message for this object; the caller goes on with the others.
pub fn judge(v: &CrdValidator, obj: Value, redact: bool) -> Judgement {
    let meta = |k: &str| {
        obj.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let key = (meta("namespace"), meta("name"));
    let uid = meta("uid");
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let version = api_version.rsplit('/').next().unwrap_or("").to_string();
    // A panic inside the engine becomes an InternalError cause for this object.
    let verdict = ShownVerdict::from(v.validate_stored(obj));
    let updates_blocked = verdict.update.as_ref().is_some_and(|u| !u.valid());
    let refusal = verdict
        .update
        .as_ref()
        .filter(|_| updates_blocked)
        .and_then(|u| u.errors.first())
        .map(|c| {
            let m = if redact { redacted(c) } else { c.message() };
            bounded(&m, MAX_MESSAGE_BYTES)
        });
    let mut messages: Vec<String> = verdict
        .errors
        .iter()
        .map(|c| {
            let m = if redact { redacted(c) } else { c.message() };
            bounded(&m, MAX_MESSAGE_BYTES)
        })
        .collect();
    if let Some(e) = &verdict.request_error {
        messages.push(bounded(e, MAX_MESSAGE_BYTES));
    }
    Judgement {
        key,
        uid,
        version,
        messages,
        unknown_fields: !verdict.pruned.is_empty(),
        internal_error: verdict.internal_error,
        updates_blocked,
        refusal,
    }
}

impl Audit {
    /// Records a judgement: counts, invalid entries, and what changed for this object.
    pub fn record(&mut self, j: Judgement) -> Transition {
        self.validations += 1;
        if self.seen.insert(key_hash(&j.key)) {
            *self.objects.entry(j.version.clone()).or_default() += 1;
        }
        let key = j.key;
        let unknown = self.unknown_fields.entry(j.version.clone()).or_default();
        if j.unknown_fields {
            unknown.insert(key.clone());
        } else {
            unknown.remove(&key);
        }
        if j.messages.is_empty() {
            for set in self.unwritable.values_mut() {
                set.remove(&key);
            }
            return match self.invalid.remove(&key) {
                Some(_) => Transition::BecameValid,
                None => Transition::None,
            };
        }
        let entry = Invalid {
            version: j.version,
            uid: j.uid,
            digest: digest(&j.messages) ^ u64::from(j.updates_blocked),
            error_count: j.messages.len(),
            errors: j.messages.into_iter().take(3).collect(),
            internal: j.internal_error,
            updates_blocked: j.updates_blocked,
        };
        match self.invalid.insert(key, entry.clone()) {
            None => Transition::BecameInvalid,
            Some(old) if !old.updates_blocked && entry.updates_blocked => Transition::BecameBlocked,
            Some(old) if old.digest != entry.digest => Transition::ChangedErrors,
            Some(_) => Transition::None,
        }
    }

    /// An object was deleted.
    pub fn forget(&mut self, key: &Key, version: &str) {
        if !self.seen.remove(&key_hash(key)) {
            return;
        }
        self.invalid.remove(key);
        for set in self
            .unknown_fields
            .values_mut()
            .chain(self.unwritable.values_mut())
        {
            set.remove(key);
        }
        if let Some(n) = self.objects.get_mut(version) {
            *n = n.saturating_sub(1);
        }
    }

    pub fn internal_errors(&self) -> usize {
        self.invalid.values().filter(|i| i.internal).count()
    }

    pub fn invalid_count(&self) -> usize {
        self.invalid.len()
    }

    /// Invalid objects the server would refuse to update at all.
    pub fn blocked_count(&self) -> usize {
        self.invalid.values().filter(|i| i.updates_blocked).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Crd {
        Crd::from_value(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"secret": {"type": "string", "pattern": "^[a-z]+$"}}},
                        "status": {"type": "object", "properties": {"phase": {"type": "string", "enum": ["Ready"]}}}}}}}]}}))
        .unwrap()
    }

    fn obj(secret: &str, phase: &str) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u1"},
            "spec": {"secret": secret}, "status": {"phase": phase}})
    }

    #[test]
    fn transitions_and_redaction() {
        let v = CrdValidator::new(&crd()).expect("compiles");
        // The same CRD judged by a release before ratcheting (1.29): every invalid object stuck.
        let before_ratcheting =
            CrdValidator::for_release(&crd(), crd_audit_engine::Release::new(29))
                .expect("compiles");
        let mut a = Audit::default();
        let observe = |a: &mut Audit, o| a.record(judge(&v, o, true));
        assert_eq!(observe(&mut a, obj("abc", "Ready")), Transition::None);
        // Stored data: the status is judged too.
        assert_eq!(
            observe(&mut a, obj("abc", "Broken")),
            Transition::BecameInvalid
        );
        assert_eq!(
            observe(&mut a, obj("Hunter2", "Broken")),
            Transition::ChangedErrors
        );
        let e = &a.invalid[&("ns".to_string(), "a".to_string())];
        assert!(
            e.errors
                .iter()
                .all(|m| !m.contains("Hunter2") && !m.contains("Broken")),
            "{e:?}"
        );
        assert!(
            e.errors.iter().any(|m| m.contains("<string, 7 chars>")),
            "{e:?}"
        );
        assert_eq!(
            observe(&mut a, obj("abc", "Ready")),
            Transition::BecameValid
        );
        assert!(a.invalid.is_empty());
        // Without ratcheting an invalid object is stuck; an object that was tolerated and is
        // then judged stuck is a transition of its own.
        let stored = |phase| {
            let mut o = obj("abc", phase);
            o["metadata"]["resourceVersion"] = json!("3");
            o
        };
        assert_eq!(
            a.record(judge(&v, stored("Broken"), true)),
            Transition::BecameInvalid
        );
        assert!(!a.invalid[&("ns".to_string(), "a".to_string())].updates_blocked);
        assert_eq!(
            a.record(judge(&before_ratcheting, stored("Broken"), true)),
            Transition::BecameBlocked
        );
        assert_eq!(a.blocked_count(), 1);
        assert_eq!(a.validations, 6);
    }
}
