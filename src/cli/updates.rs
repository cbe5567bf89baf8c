//! How `validate` judges an object: as a create, as stored data (with the no-op UPDATE that
//! tells a stuck object from a tolerated one), or as an UPDATE of a stored object given with
//! `--update`, under the rules of a Kubernetes release (`--kubernetes-version`).

use super::inputs;
use crd_audit_engine::{CrdValidator, Mode, Subresource, Verdict};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

/// The newest Kubernetes minor release whose rules the engine models.
pub const NEWEST_MINOR: u32 = 36;
/// The first minor release that validates updates with ratcheting (beta, on by default).
pub const RATCHETING_SINCE: u32 = 30;

/// A Kubernetes release, `1.X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KubeVersion {
    pub minor: u32,
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion {
            minor: NEWEST_MINOR,
        }
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = String;

    /// `1.30`, `v1.30` or `1.30.2` (the patch release does not matter).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad =
            || format!("invalid Kubernetes version {s:?}: expected 1.X, such as 1.{NEWEST_MINOR}");
        let t = s.trim().strip_prefix('v').unwrap_or(s.trim());
        let mut parts = t.split('.');
        let (Some("1"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(bad());
        };
        if parts.next().is_some_and(|p| p.parse::<u32>().is_err()) || parts.next().is_some() {
            return Err(bad());
        }
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        if minor > NEWEST_MINOR {
            return Err(format!(
                "Kubernetes 1.{minor} is newer than the newest release crd-audit models (1.{NEWEST_MINOR})"
            ));
        }
        Ok(KubeVersion { minor })
    }
}

impl KubeVersion {
    /// Whether the release validates updates with ratcheting.
    pub fn ratchets(self) -> bool {
        self.minor >= RATCHETING_SINCE
    }
}

/// Which object an update replaces: group, kind, namespace, name.
type Identity = (String, String, String, String);

fn identity(obj: &Value, namespaced: bool) -> Identity {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let api_version = text(obj.get("apiVersion"));
    let group = api_version
        .rsplit_once('/')
        .map_or(String::new(), |(g, _)| g.to_string());
    let meta = obj.get("metadata");
    let mut namespace = text(meta.and_then(|m| m.get("namespace")));
    if !namespaced {
        namespace.clear();
    } else if namespace.is_empty() {
        namespace = "default".to_string();
    }
    (
        group,
        text(obj.get("kind")),
        namespace,
        text(meta.and_then(|m| m.get("name"))),
    )
}

/// How the objects of one run are judged.
#[derive(Default)]
pub struct Judging {
    pub mode: Mode,
    pub release: KubeVersion,
    /// `--update`: the stored objects by identity (namespace as given; a missing one reads as
    /// `default`, which a cluster-scoped CRD's objects never have).
    pub stored: HashMap<Identity, Value>,
    pub updating: bool,
    pub to: Subresource,
}

impl Judging {
    /// Reads the stored objects of `--update` (files, directories, `-`), `List`s unpacked.
    pub fn read_stored(&mut self, paths: &[PathBuf]) -> Result<(), String> {
        self.updating = true;
        for path in inputs::expand(paths)? {
            for doc in inputs::read_file(&path) {
                let doc = doc.map_err(|e| e.to_string())?;
                for item in inputs::try_unpack_lists(doc).map_err(|(e, _)| e.to_string())? {
                    let obj = item.doc.value;
                    if obj.is_object() {
                        // Scope is not known yet: keyed as namespaced; cluster-scoped
                        // lookups fall back below.
                        self.stored.insert(identity(&obj, true), obj);
                    }
                }
            }
        }
        Ok(())
    }

    /// The stored object a new one replaces, if `--update` gave one.
    fn stored_for(&self, obj: &Value, v: &CrdValidator) -> Option<&Value> {
        let key = identity(obj, v.namespaced());
        if v.namespaced() {
            return self.stored.get(&key);
        }
        self.stored
            .iter()
            .find(|((g, k, _, n), _)| (g, k, n) == (&key.0, &key.1, &key.3))
            .map(|(_, o)| o)
    }

    /// Judges one object with its CRD's validator.
    pub fn judge(&self, v: &CrdValidator, obj: Value) -> Verdict {
        if self.updating {
            return match self.stored_for(&obj, v) {
                Some(old) if self.release.ratchets() => {
                    v.validate_update_guarded(old.clone(), obj, self.to)
                }
                Some(old) => {
                    // Before ratcheting: the whole new object must be valid.
                    let _ = old;
                    let mut verdict = v.validate_guarded(obj, Mode::Stored);
                    if verdict.code == 201 {
                        verdict.code = 200;
                    }
                    verdict.is_update = true;
                    verdict
                }
                None => v.validate_guarded(obj, self.mode),
            };
        }
        if self.mode != Mode::Stored {
            return v.validate_guarded(obj, self.mode);
        }
        let stored = as_stored(&obj, v.namespaced());
        let mut verdict = v.validate_guarded(obj, Mode::Stored);
        if !verdict.valid() && verdict.request_error.is_none() {
            let update = if self.release.ratchets() {
                v.validate_update_guarded(stored.clone(), stored, Subresource::Main)
            } else {
                // No ratcheting: a write must make the whole object valid.
                Verdict {
                    code: 422,
                    errors: verdict.errors.clone(),
                    is_update: true,
                    ..Verdict::default()
                }
            };
            verdict.update = Some(Box::new(update));
        }
        verdict
    }
}

/// An object as the server holds it: a stored object always has a `resourceVersion` and, for
/// a namespaced CRD, a namespace (`default` when a file leaves it out).
fn as_stored(obj: &Value, namespaced: bool) -> Value {
    let mut obj = obj.clone();
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        if meta
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            meta.insert("resourceVersion".into(), Value::String("1".into()));
        }
        if namespaced
            && meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
        {
            meta.insert("namespace".into(), Value::String("default".into()));
        }
    }
    obj
}

/// The text line that says what an invalid stored object's no-op update gets.
pub fn stuck_or_tolerated(update: &Verdict) -> String {
    if update.valid() {
        "tolerated: the API server accepts updates that leave the invalid values unchanged (validation ratcheting)".to_string()
    } else {
        "error: stuck: the API server refuses every update of this object, even one that changes nothing (a label, a finalizer removal)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_versions_parse_as_releases() {
        for (text, minor) in [("1.30", 30), ("v1.33", 33), ("1.29.4", 29), ("1.36", 36)] {
            assert_eq!(
                text.parse::<KubeVersion>(),
                Ok(KubeVersion { minor }),
                "{text}"
            );
        }
        for bad in ["2.1", "1", "1.x", "1.30.x", "1.30.1.2", ""] {
            assert!(bad.parse::<KubeVersion>().is_err(), "{bad}");
        }
        assert!("1.37".parse::<KubeVersion>().unwrap_err().contains("newer"));
        assert!(!"1.29".parse::<KubeVersion>().unwrap().ratchets());
        assert!("1.30".parse::<KubeVersion>().unwrap().ratchets());
    }
}
