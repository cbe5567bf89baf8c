//! The CustomResourceDefinition model: `apiextensions.k8s.io/v1`, and legacy `v1beta1`
//! converted to the v1 shape the way the API server converts it.

use crate::cause::Path;
use serde_json::Value;

/// Resource scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `Namespaced`: objects live in a namespace.
    Namespaced,
    /// `Cluster`: objects are cluster-scoped.
    Cluster,
}

/// The scale subresource's paths.
#[derive(Clone, Debug, PartialEq, Default)]
#[non_exhaustive]
pub struct Scale {
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`, when set.
    pub label_selector_path: Option<String>,
}

/// One entry of `spec.versions`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Version {
    /// `name`.
    pub name: String,
    /// `served`.
    pub served: bool,
    /// `storage`: the version objects are stored at.
    pub storage: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// The raw `schema.openAPIV3Schema`, if any.
    pub schema: Option<Value>,
    /// `subresources.status` is set.
    pub status_subresource: bool,
    /// `subresources.scale`, when set.
    pub scale: Option<Scale>,
}

/// A CRD, in the v1 shape.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Crd {
    /// `metadata.name` (`<plural>.<group>` in a valid CRD).
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.singular`, defaulted to the lowercased kind as the server defaults it.
    pub singular: String,
    /// `spec.names.listKind`, defaulted to the kind followed by `List`.
    pub list_kind: String,
    /// `spec.scope`; anything but `Cluster` reads as `Namespaced`.
    pub scope: Scope,
    /// `spec.versions`, in order (for v1beta1, with the top-level `version`, `validation` and
    /// `subresources` folded in).
    pub versions: Vec<Version>,
    /// `spec.preserveUnknownFields` (true by default in v1beta1).
    pub preserve_unknown_fields: bool,
    /// `status.storedVersions`.
    pub stored_versions: Vec<String>,
    /// `spec.conversion.strategy` (`None` or `Webhook`).
    pub conversion_strategy: String,
    /// `metadata.generation` (0 when absent).
    pub generation: i64,
    /// `metadata.uid`.
    pub uid: String,
    /// The apiVersion the CRD document was written in.
    pub source_api_version: String,
    /// `status.conditions` as the server wrote them.
    pub conditions: Vec<Value>,
    /// What CRD validation reads beyond the model, as written (after the server's defaults).
    pub spec_facts: SpecFacts,
}

/// Fields of a CRD that only its create validation reads.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SpecFacts {
    /// `spec.scope` as written (`Namespaced` when a v1beta1 CRD leaves it out).
    pub scope: String,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
    /// `metadata.annotations["api-approved.kubernetes.io"]`.
    pub api_approval: Option<String>,
    /// Per version: `deprecationWarning`, when set.
    pub deprecation_warnings: Vec<Option<String>>,
    /// A v1beta1 CRD's `spec.version`, when set.
    pub legacy_version: Option<String>,
    /// Per version: `subresources` as written.
    pub version_subresources: Vec<Option<Value>>,
    /// Per version: `additionalPrinterColumns` as written.
    pub version_columns: Vec<Option<Value>>,
    /// Per version: `selectableFields` as written.
    pub version_selectable_fields: Vec<Option<Value>>,
    /// A v1beta1 CRD's top-level `subresources`.
    pub shared_subresources: Option<Value>,
    /// A v1beta1 CRD's top-level `additionalPrinterColumns`.
    pub shared_columns: Option<Value>,
    /// `spec.conversion` as written, in the internal shape (`webhookClientConfig` and
    /// `conversionReviewVersions` beside `strategy`), `None` when absent.
    pub conversion: Option<Value>,
}

/// Why a document is not a usable CRD.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
#[non_exhaustive]
pub struct CrdError {
    /// Where in the document the problem is (`spec`, `spec.versions[0]`, `<root>`).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// A CRD as kube-rs users hold it (feature `k8s-openapi`): the same as [`Crd::from_value`]
/// of its JSON.
#[cfg(feature = "k8s-openapi")]
impl TryFrom<&k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>
    for Crd
{
    type Error = CrdError;

    fn try_from(
        crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    ) -> Result<Crd, CrdError> {
        let value = serde_json::to_value(crd).map_err(|e| err("<root>", e.to_string()))?;
        Crd::from_value(&value)
    }
}

fn err(path: &str, message: impl Into<String>) -> CrdError {
    CrdError {
        path: path.to_string(),
        message: message.into(),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn bool_at(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

fn parse_scale(v: Option<&Value>) -> Option<Scale> {
    let s = v?;
    if !s.is_object() {
        return None;
    }
    Some(Scale {
        spec_replicas_path: str_at(s, "specReplicasPath").to_string(),
        status_replicas_path: str_at(s, "statusReplicasPath").to_string(),
        label_selector_path: s
            .get("labelSelectorPath")
            .and_then(Value::as_str)
            .map(String::from),
    })
}

impl Crd {
    /// Whether a document looks like a CRD (`kind: CustomResourceDefinition` in the
    /// `apiextensions.k8s.io` group).
    pub fn is_crd(doc: &Value) -> bool {
        str_at(doc, "kind") == "CustomResourceDefinition"
            && str_at(doc, "apiVersion").starts_with("apiextensions.k8s.io/")
    }

    /// Reads a CRD from its JSON form (v1 or v1beta1).
    pub fn from_value(doc: &Value) -> Result<Crd, CrdError> {
        if !doc.is_object() {
            return Err(err("<root>", "not an object"));
        }
        let api_version = str_at(doc, "apiVersion");
        if !Crd::is_crd(doc) {
            return Err(err(
                "kind",
                format!(
                    "not a CustomResourceDefinition (apiVersion {:?}, kind {:?})",
                    api_version,
                    str_at(doc, "kind")
                ),
            ));
        }
        let legacy = match api_version {
            "apiextensions.k8s.io/v1" => false,
            "apiextensions.k8s.io/v1beta1" => true,
            other => {
                return Err(err(
                    "apiVersion",
                    format!("unsupported apiVersion {other:?}"),
                ));
            }
        };
        let empty = Value::Null;
        let meta = doc.get("metadata").unwrap_or(&empty);
        let spec = doc
            .get("spec")
            .filter(|s| s.is_object())
            .ok_or_else(|| err("spec", "must be an object"))?;
        let names = spec.get("names").unwrap_or(&empty);
        let scope = match str_at(spec, "scope") {
            "Cluster" => Scope::Cluster,
            _ => Scope::Namespaced,
        };
        let mut versions = Vec::new();
        let shared_schema = spec
            .get("validation")
            .and_then(|v| v.get("openAPIV3Schema"))
            .cloned();
        let shared_sub = spec.get("subresources");
        if let Some(list) = spec.get("versions").and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                if !v.is_object() {
                    return Err(err(&format!("spec.versions[{i}]"), "must be an object"));
                }
                let schema = v
                    .get("schema")
                    .and_then(|s| s.get("openAPIV3Schema"))
                    .cloned()
                    .or_else(|| if legacy { shared_schema.clone() } else { None });
                let sub = v
                    .get("subresources")
                    .or(if legacy { shared_sub } else { None });
                versions.push(Version {
                    name: str_at(v, "name").to_string(),
                    served: bool_at(v, "served").unwrap_or(false),
                    storage: bool_at(v, "storage").unwrap_or(false),
                    deprecated: bool_at(v, "deprecated").unwrap_or(false),
                    schema,
                    status_subresource: sub
                        .and_then(|s| s.get("status"))
                        .is_some_and(|s| !s.is_null()),
                    scale: parse_scale(sub.and_then(|s| s.get("scale"))),
                });
            }
        }
        if versions.is_empty() && legacy {
            let name = str_at(spec, "version");
            if !name.is_empty() {
                versions.push(Version {
                    name: name.to_string(),
                    served: true,
                    storage: true,
                    deprecated: false,
                    schema: shared_schema.clone(),
                    status_subresource: shared_sub
                        .and_then(|s| s.get("status"))
                        .is_some_and(|s| !s.is_null()),
                    scale: parse_scale(shared_sub.and_then(|s| s.get("scale"))),
                });
            }
        }
        let status = doc.get("status").unwrap_or(&empty);
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let per_version = |key: &str| -> Vec<Option<Value>> {
            spec.get("versions")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .map(|v| v.get(key).filter(|x| !x.is_null()).cloned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let spec_facts = SpecFacts {
            scope: match str_at(spec, "scope") {
                "" if legacy => "Namespaced".to_string(),
                s => s.to_string(),
            },
            short_names: strings(names.get("shortNames")),
            categories: strings(names.get("categories")),
            api_approval: meta
                .get("annotations")
                .and_then(|a| a.get("api-approved.kubernetes.io"))
                .and_then(Value::as_str)
                .map(String::from),
            deprecation_warnings: spec
                .get("versions")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .map(|v| {
                            v.get("deprecationWarning")
                                .and_then(Value::as_str)
                                .map(String::from)
                        })
                        .collect()
                })
                .unwrap_or_default(),
            legacy_version: legacy
                .then(|| str_at(spec, "version"))
                .filter(|v| !v.is_empty())
                .map(String::from),
            version_subresources: per_version("subresources"),
            version_columns: per_version("additionalPrinterColumns"),
            version_selectable_fields: per_version("selectableFields"),
            shared_subresources: legacy.then(|| spec.get("subresources").cloned()).flatten(),
            shared_columns: legacy
                .then(|| spec.get("additionalPrinterColumns").cloned())
                .flatten(),
            conversion: spec.get("conversion").filter(|c| !c.is_null()).map(|c| {
                if legacy {
                    return c.clone();
                }
                // v1 nests the webhook settings under `webhook`.
                let mut internal = serde_json::Map::new();
                if let Some(st) = c.get("strategy") {
                    internal.insert("strategy".into(), st.clone());
                }
                if let Some(w) = c.get("webhook").filter(|w| !w.is_null()) {
                    if let Some(cc) = w.get("clientConfig").filter(|x| !x.is_null()) {
                        internal.insert("webhookClientConfig".into(), cc.clone());
                    }
                    if let Some(v) = w.get("conversionReviewVersions") {
                        internal.insert("conversionReviewVersions".into(), v.clone());
                    }
                }
                Value::Object(internal)
            }),
        };
        // The server's defaults: singular from kind, listKind as kind + "List".
        let kind = str_at(names, "kind");
        let singular = match str_at(names, "singular") {
            "" => kind.to_lowercase(),
            s => s.to_string(),
        };
        let list_kind = match str_at(names, "listKind") {
            "" if !kind.is_empty() => format!("{kind}List"),
            s => s.to_string(),
        };
        Ok(Crd {
            name: str_at(meta, "name").to_string(),
            group: str_at(spec, "group").to_string(),
            kind: kind.to_string(),
            plural: str_at(names, "plural").to_string(),
            singular,
            list_kind,
            scope,
            versions,
            // v1beta1 defaults preserveUnknownFields to true.
            preserve_unknown_fields: bool_at(spec, "preserveUnknownFields").unwrap_or(legacy),
            stored_versions: status
                .get("storedVersions")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            conversion_strategy: spec
                .get("conversion")
                .map(|c| str_at(c, "strategy"))
                .filter(|s| !s.is_empty())
                .unwrap_or("None")
                .to_string(),
            generation: meta.get("generation").and_then(Value::as_i64).unwrap_or(0),
            uid: str_at(meta, "uid").to_string(),
            source_api_version: api_version.to_string(),
            conditions: status
                .get("conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            spec_facts,
        })
    }

    /// [`Crd::from_value`], taking the document: the schemas are moved into the model rather
    /// than copied (a CRD's schemas are most of it).
    pub fn from_owned(mut doc: Value) -> Result<Crd, CrdError> {
        let spec = doc.get_mut("spec");
        let mut own: Vec<Option<Value>> = Vec::new();
        let mut shared = None;
        if let Some(spec) = spec.filter(|s| s.is_object()) {
            shared = spec
                .get_mut("validation")
                .and_then(Value::as_object_mut)
                .and_then(|v| v.remove("openAPIV3Schema"));
            if let Some(list) = spec.get_mut("versions").and_then(Value::as_array_mut) {
                own = list
                    .iter_mut()
                    .map(|v| {
                        v.get_mut("schema")
                            .and_then(Value::as_object_mut)
                            .and_then(|s| s.remove("openAPIV3Schema"))
                    })
                    .collect();
            }
        }
        let mut crd = Crd::from_value(&doc)?;
        let legacy = crd.source_api_version == "apiextensions.k8s.io/v1beta1";
        let with_versions = !own.is_empty();
        let mut own = own.into_iter();
        for v in &mut crd.versions {
            // As `from_value` does: a version's own schema, or the shared one (v1beta1).
            let mine = if with_versions {
                own.next().flatten()
            } else {
                None
            };
            v.schema = mine.or_else(|| if legacy { shared.clone() } else { None });
        }
        crate::load::drop_value(doc);
        Ok(crd)
    }

    /// Whether every version has the same schema; the API server's internal CRD type then
    /// holds it once, as `spec.validation`, and CRD validation errors use that path.
    pub fn schemas_shared(&self) -> bool {
        match self.versions.split_first() {
            None => false,
            Some((first, rest)) => rest.iter().all(|v| v.schema == first.schema),
        }
    }

    /// The path of version `i`'s schema in the v1 object.
    pub fn version_schema_path(i: usize) -> Path {
        Path::new("spec")
            .child("versions")
            .index(i)
            .child("schema")
            .child("openAPIV3Schema")
    }

    /// The path CRD validation uses for version `i`'s schema.
    pub fn validation_schema_path(&self, i: usize) -> Path {
        if self.schemas_shared() {
            Path::new("spec")
                .child("validation")
                .child("openAPIV3Schema")
        } else {
            Crd::version_schema_path(i)
        }
    }

    /// The version stored in etcd.
    pub fn storage_version(&self) -> Option<&Version> {
        self.versions.iter().find(|v| v.storage)
    }

    /// The entry of `spec.versions` named `name`, if any.
    pub fn version(&self, name: &str) -> Option<&Version> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The index of the version an object with this `apiVersion` (`group/version`) is read
    /// at, if it names this CRD's group and one of its versions.
    pub fn version_index_for(&self, api_version: &str) -> Option<usize> {
        let (group, version) = api_version.split_once('/')?;
        if group != self.group {
            return None;
        }
        self.versions.iter().position(|v| v.name == version)
    }

    /// Versions listed in `status.storedVersions` that are missing from `spec.versions` or
    /// no longer served.
    pub fn stored_versions_not_served(&self) -> Vec<String> {
        self.stored_versions
            .iter()
            .filter(|s| !self.version(s).is_some_and(|v| v.served))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// k8s-openapi's CustomResourceDefinition (what kube-rs users hold) becomes the same
    /// `Crd` as its JSON.
    #[cfg(feature = "k8s-openapi")]
    #[test]
    fn a_typed_crd_is_the_crd_of_its_json() {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let doc = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
                    "subresources": {"status": {}}}]}});
        let typed: CustomResourceDefinition = serde_json::from_value(doc.clone()).unwrap();
        let from_typed = Crd::try_from(&typed).unwrap();
        let from_json = Crd::from_value(&doc).unwrap();
        assert_eq!(format!("{from_typed:?}"), format!("{from_json:?}"));
        assert_eq!(from_typed.plural, "widgets");
        assert!(from_typed.versions[0].status_subresource);
    }

    #[test]
    fn v1beta1_is_converted() {
        let doc = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "version": "v1", "names": {"kind": "Foo", "plural": "foos"},
                "validation": {"openAPIV3Schema": {"type": "object"}}, "subresources": {"status": {}}},
            "status": {"storedVersions": ["v1", "v0"]}});
        let crd = Crd::from_value(&doc).unwrap();
        assert!(crd.preserve_unknown_fields);
        assert_eq!(crd.versions.len(), 1);
        assert_eq!(crd.versions[0].schema, Some(json!({"type": "object"})));
        assert!(crd.versions[0].status_subresource);
        assert_eq!(crd.stored_versions_not_served(), vec!["v0".to_string()]);
        assert!(crd.schemas_shared());
        assert_eq!(crd.version_index_for("example.com/v1"), Some(0));
        assert_eq!(crd.version_index_for("other.com/v1"), None);
        assert_eq!(crd.version_index_for("v1"), None);
    }

    #[test]
    fn taking_the_document_reads_the_same_crd() {
        let crd = |api: &str, spec: Value| {
            json!({"apiVersion": api, "kind": "CustomResourceDefinition",
                "metadata": {"name": "foos.example.com"}, "spec": spec})
        };
        let names = json!({"kind": "Foo", "plural": "foos"});
        let s = |t: &str| json!({"openAPIV3Schema": {"type": t}});
        let v1 = "apiextensions.k8s.io/v1";
        let v1beta1 = "apiextensions.k8s.io/v1beta1";
        let mut docs = vec![
            crd(
                v1,
                json!({"group": "example.com", "names": names, "versions": [
                {"name": "v1", "schema": s("object")}, {"name": "v2"},
                {"name": "v3", "schema": {"openAPIV3Schema": null}}, {"name": "v4", "schema": 5}]}),
            ),
            crd(
                v1beta1,
                json!({"group": "example.com", "names": names, "validation": s("object"),
                "versions": [{"name": "v1"}, {"name": "v2", "schema": s("string")}]}),
            ),
            crd(
                v1beta1,
                json!({"group": "example.com", "names": names, "version": "v1",
                "validation": s("object")}),
            ),
            crd(
                v1,
                json!({"group": "example.com", "names": names, "validation": s("object"),
                "versions": [{"name": "v1"}]}),
            ),
            crd(v1, json!(5)),
            crd(v1, json!({"versions": [5]})),
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        ];
        for f in [
            "examples/crds/widgets.yaml",
            "examples/crds/gadgets-legacy.yaml",
        ] {
            let path = crate::testing::workspace_root().join(f);
            let text = std::fs::read_to_string(&path).unwrap();
            docs.extend(
                crate::load::parse_str(f, &text)
                    .into_iter()
                    .map(|d| d.unwrap().value),
            );
        }
        for doc in docs {
            assert_eq!(Crd::from_owned(doc.clone()), Crd::from_value(&doc), "{doc}");
        }
    }

    #[test]
    fn non_crds_are_refused() {
        let e = Crd::from_value(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).unwrap_err();
        assert!(e.message.contains("not a CustomResourceDefinition"));
    }
}
