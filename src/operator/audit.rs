//! The audit of one CRD: what its objects look like under their schemas. Only what is
//! needed to report and to detect transitions is kept: counts per version, and for invalid
//! objects (or objects with unknown fields) their key, version and first errors. Valid
//! objects leave nothing behind.

use crate::cause::{BadValue, Cause};
use crate::crd::Crd;
use crate::validate::{CrdValidator, Mode};
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
}

/// What an object's annotation write needs: its path and identity.
#[derive(Clone, Debug)]
pub struct Target {
    pub path: String,
    pub api_version: String,
    pub kind: String,
    pub key: Key,
    pub version: String,
}

/// The annotation that marks an invalid object.
pub const ANNOTATION: &str = "crd-audit.dev/violations";

impl Target {
    pub fn of(crd: &Crd, obj: &Value) -> Option<Target> {
        let api_version = obj.get("apiVersion")?.as_str()?.to_string();
        let version = api_version.rsplit('/').next()?.to_string();
        let name = obj.get("metadata")?.get("name")?.as_str()?.to_string();
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let path = if ns.is_empty() {
            format!("/apis/{}/{version}/{}/{name}", crd.group, crd.plural)
        } else {
            format!(
                "/apis/{}/{version}/namespaces/{ns}/{}/{name}",
                crd.group, crd.plural
            )
        };
        Some(Target {
            path,
            api_version,
            kind: obj["kind"].as_str().unwrap_or("").to_string(),
            key: (ns, name),
            version,
        })
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
    let shown = c.bad_value.render();
    let placeholder = match &c.bad_value {
        BadValue::Omit => return c.message(),
        BadValue::Str(s) => format!("<string, {} chars>", s.chars().count()),
        BadValue::Int(_) | BadValue::Float(_) => "<number>".to_string(),
        BadValue::Bool(_) => "<bool>".to_string(),
        BadValue::Json(Value::Null) => return c.message(),
        BadValue::Json(v) | BadValue::Rendered { value: v, .. } => {
            format!("<{}>", crate::gofmt::json_kind(v))
        }
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
    copy.message()
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
    BecameValid,
    ChangedErrors,
}

impl Audit {
    /// Judges an object (as stored data) and records the outcome.
    pub fn observe(&mut self, v: &CrdValidator, obj: Value, redact: bool) -> Transition {
        let meta = |k: &str| {
            obj.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (meta("namespace"), meta("name"));
        let uid = meta("uid");
        let verdict = v.validate(obj, Mode::Stored);
        self.validations += 1;
        let version = verdict
            .api_version
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string();
        let unknown = self.unknown_fields.entry(version.clone()).or_default();
        if verdict.pruned.is_empty() {
            unknown.remove(&key);
        } else {
            unknown.insert(key.clone());
        }
        if verdict.valid() {
            for set in self.unwritable.values_mut() {
                set.remove(&key);
            }
            return match self.invalid.remove(&key) {
                Some(_) => Transition::BecameValid,
                None => Transition::None,
            };
        }
        let mut messages: Vec<String> = verdict
            .errors
            .iter()
            .map(|c| if redact { redacted(c) } else { c.message() })
            .collect();
        if let Some(e) = &verdict.request_error {
            messages.push(e.clone());
        }
        let entry = Invalid {
            version,
            uid,
            digest: digest(&messages),
            error_count: messages.len(),
            errors: messages.into_iter().take(3).collect(),
        };
        match self.invalid.insert(key, entry.clone()) {
            None => Transition::BecameInvalid,
            Some(old) if old.digest != entry.digest => Transition::ChangedErrors,
            Some(_) => Transition::None,
        }
    }

    /// An object was deleted.
    pub fn forget(&mut self, obj: &Value) {
        let meta = |k: &str| {
            obj.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (meta("namespace"), meta("name"));
        self.invalid.remove(&key);
        for set in self
            .unknown_fields
            .values_mut()
            .chain(self.unwritable.values_mut())
        {
            set.remove(&key);
        }
        let version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|a| a.rsplit('/').next())
            .unwrap_or("");
        if let Some(n) = self.objects.get_mut(version) {
            *n = n.saturating_sub(1);
        }
    }

    pub fn count(&mut self, obj: &Value) {
        let version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|a| a.rsplit('/').next())
            .unwrap_or("")
            .to_string();
        *self.objects.entry(version).or_default() += 1;
    }

    pub fn invalid_count(&self) -> usize {
        self.invalid.len()
    }
}

/// The URL path of a CRD's objects at a version (all namespaces).
pub fn objects_path(crd: &Crd, version: &str) -> String {
    format!("/apis/{}/{version}/{}", crd.group, crd.plural)
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
        let v = CrdValidator::new(&crd());
        let mut a = Audit::default();
        assert_eq!(a.observe(&v, obj("abc", "Ready"), true), Transition::None);
        // Stored data: the status is judged too.
        assert_eq!(
            a.observe(&v, obj("abc", "Broken"), true),
            Transition::BecameInvalid
        );
        assert_eq!(
            a.observe(&v, obj("Hunter2", "Broken"), true),
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
            a.observe(&v, obj("abc", "Ready"), true),
            Transition::BecameValid
        );
        assert!(a.invalid.is_empty());
    }
}
