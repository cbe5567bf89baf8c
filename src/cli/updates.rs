//! How `validate` judges an object: as a create, as stored data (with the no-op UPDATE that
//! tells a stuck object from a tolerated one), or as an UPDATE of a stored object given with
//! `--update`, under the rules of a Kubernetes release (`--kubernetes-version`).

use super::inputs;
use crate::audit::shown_verdict::ShownVerdict;
pub use crate::release::KubeVersion;
use crd_audit_engine::{CrdValidator, Mode, Subresource};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

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
    /// The same objects by group, kind and name alone, for cluster-scoped CRDs (whose
    /// objects have no namespace, whatever a file says): the key into `stored`.
    pub by_name: HashMap<(String, String, String), Identity>,
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
                        // The scope is not known yet: keyed as namespaced, and by name for
                        // the lookups of cluster-scoped objects.
                        let key = identity(&obj, true);
                        let name = (key.0.clone(), key.1.clone(), key.3.clone());
                        self.by_name.insert(name, key.clone());
                        self.stored.insert(key, obj);
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
        let (group, kind, _, name) = key;
        self.by_name
            .get(&(group, kind, name))
            .and_then(|k| self.stored.get(k))
    }

    /// Judges one object with its CRD's validator.
    pub fn judge(&self, v: &CrdValidator, obj: Value) -> ShownVerdict {
        if self.updating {
            return match self.stored_for(&obj, v) {
                Some(old) if self.release.ratchets() => {
                    v.validate_update(old.clone(), obj, self.to).into()
                }
                Some(_) => {
                    // Before ratcheting: the whole new object must be valid.
                    let mut verdict = ShownVerdict::from(v.validate(obj, Mode::Stored));
                    if verdict.code == 201 {
                        verdict.code = 200;
                    }
                    verdict.is_update = true;
                    verdict
                }
                None => v.validate(obj, self.mode).into(),
            };
        }
        if self.mode != Mode::Stored {
            return v.validate(obj, self.mode).into();
        }
        v.validate_stored(obj).into()
    }
}
