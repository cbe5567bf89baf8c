//! Schema change analysis between two revisions of one CRD: every change per version (matched
//! by name), with its schema path, a change kind, its class and a one-line reason. A change
//! is *tightening* when objects valid before may be invalid (or lose data) after it,
//! *loosening* when the reverse holds, and *neutral* when validation does not change.

use crate::crd::{Crd, Scope};
use crate::schema::Props;
use serde_json::{Value, json};

mod keywords;

use keywords::schema;

/// How a change affects the objects the CRD accepts.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Class {
    /// Objects valid before may be invalid (or lose data) after the change.
    Tightening,
    /// Objects invalid before may be valid after the change.
    Loosening,
    /// Validation does not change.
    Neutral,
}

impl Class {
    /// The name used in reports: `tightening`, `loosening` or `neutral`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Tightening => "tightening",
            Class::Loosening => "loosening",
            Class::Neutral => "neutral",
        }
    }
}

/// One change.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The version (empty for changes of the whole CRD).
    pub version: String,
    /// The schema path (`spec.properties[replicas].maximum`), or the CRD field.
    pub path: String,
    /// The change kind, in camelCase (`maximumAdded`, `versionRemoved`).
    pub kind: &'static str,
    /// Whether the change tightens, loosens or keeps validation.
    pub class: Class,
    /// A one-line explanation.
    pub reason: String,
}

impl Change {
    /// The JSON form: `version`, `path`, `kind`, `class` (as [`Class::as_str`]) and `reason`.
    pub fn to_json(&self) -> Value {
        json!({"version": self.version, "path": self.path, "kind": self.kind,
            "class": self.class.as_str(), "reason": self.reason})
    }
}

struct Differ<'a> {
    version: &'a str,
    out: Vec<Change>,
}

impl Differ<'_> {
    fn push(&mut self, path: &str, kind: &'static str, class: Class, reason: String) {
        self.out.push(Change {
            version: self.version.to_string(),
            path: path.to_string(),
            kind,
            class,
            reason,
        });
    }
}

/// Every change from `old` to `new`, sorted by version and path.
pub fn diff(old: &Crd, new: &Crd) -> Vec<Change> {
    let mut d = Differ {
        version: "",
        out: Vec::new(),
    };
    if old.scope != new.scope {
        let name = |s: Scope| match s {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        };
        d.push(
            "spec.scope",
            "scopeChanged",
            Class::Tightening,
            format!(
                "scope changed from {} to {}: existing objects cannot be served at the new scope",
                name(old.scope),
                name(new.scope)
            ),
        );
    }
    let old_storage = old.storage_version().map(|v| v.name.clone());
    let new_storage = new.storage_version().map(|v| v.name.clone());
    if old_storage != new_storage
        && let (Some(o), Some(n)) = (&old_storage, &new_storage)
    {
        d.push(
            "spec.versions",
            "storageVersionChanged",
            Class::Tightening,
            format!("storage version moved from {o} to {n}: objects stored at {o} must be rewritten at {n} before {o} can be removed (crd-audit migrate)"),
        );
    }
    let stored: Vec<&String> = old
        .stored_versions
        .iter()
        .chain(&new.stored_versions)
        .collect();
    for ov in &old.versions {
        let version = ov.name.as_str();
        d.version = version;
        let Some(nv) = new.version(version) else {
            if stored.iter().any(|s| s.as_str() == version) {
                d.push(
                    "",
                    "versionRemovedWhileStored",
                    Class::Tightening,
                    format!("version {version} is removed but listed in status.storedVersions: objects stored at it can no longer be read"),
                );
            } else {
                d.push(
                    "",
                    "versionRemoved",
                    Class::Tightening,
                    format!("version {version} is removed: clients using it will fail"),
                );
            }
            continue;
        };
        if ov.served && !nv.served {
            d.push(
                "",
                "versionNoLongerServed",
                Class::Tightening,
                format!("version {version} is no longer served"),
            );
        } else if !ov.served && nv.served {
            d.push(
                "",
                "versionServed",
                Class::Loosening,
                format!("version {version} is now served"),
            );
        }
        if ov.status_subresource != nv.status_subresource {
            d.push(
                "subresources.status",
                "statusSubresourceChanged",
                Class::Neutral,
                format!(
                    "status subresource {}",
                    if nv.status_subresource {
                        "enabled"
                    } else {
                        "disabled"
                    }
                ),
            );
        }
        let decode = |v: &Option<Value>| {
            v.as_ref()
                .and_then(|s| Props::from_value("", s).ok())
                .unwrap_or_default()
        };
        let (os, ns) = (decode(&ov.schema), decode(&nv.schema));
        schema(&mut d, &os, &ns, "");
    }
    for nv in &new.versions {
        if old.version(&nv.name).is_none() {
            d.version = &nv.name;
            d.push(
                "",
                "versionAdded",
                Class::Neutral,
                format!("version {} is added", nv.name),
            );
        }
    }
    let mut out = d.out;
    out.sort_by(|a, b| {
        (a.version.as_str(), a.path.as_str(), a.kind).cmp(&(
            b.version.as_str(),
            b.path.as_str(),
            b.kind,
        ))
    });
    out
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.properties[{name}]")
    }
}

fn at(path: &str, keyword: &str) -> String {
    if path.is_empty() {
        keyword.to_string()
    } else {
        format!("{path}.{keyword}")
    }
}

fn show(v: &Value) -> String {
    crate::go::json::marshal(v)
}

fn num(f: f64) -> String {
    crate::go::fmt::float_v(f)
}

#[cfg(test)]
mod tests;
