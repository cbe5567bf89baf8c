//! Owner references: `ValidateOwnerReferences` / `validateOwnerReference` of
//! `apimachinery/pkg/api/validation/objectmeta.go`.

use super::meta::{MetaPath, as_map, invalid_str, str_of};
use crate::cause::{BadValue, Cause};
use crate::go;
use serde_json::{Map, Value};

/// An owner reference as decoded into `metav1.OwnerReference`.
struct OwnerRef<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
    controller: Option<bool>,
    block_owner_deletion: Option<bool>,
}

impl<'a> OwnerRef<'a> {
    fn from_value(v: &'a Value) -> Self {
        let m = as_map(v);
        OwnerRef {
            api_version: str_of(m, "apiVersion"),
            kind: str_of(m, "kind"),
            name: str_of(m, "name"),
            uid: str_of(m, "uid"),
            controller: m.get("controller").and_then(Value::as_bool),
            block_owner_deletion: m.get("blockOwnerDeletion").and_then(Value::as_bool),
        }
    }

    /// `json.Marshal` of the Go struct (field order of the struct, pointers omitted when nil).
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"apiVersion\":");
        go::json::json_string(self.api_version, out);
        out.push_str(",\"kind\":");
        go::json::json_string(self.kind, out);
        out.push_str(",\"name\":");
        go::json::json_string(self.name, out);
        out.push_str(",\"uid\":");
        go::json::json_string(self.uid, out);
        if let Some(c) = self.controller {
            out.push_str(if c {
                ",\"controller\":true"
            } else {
                ",\"controller\":false"
            });
        }
        if let Some(b) = self.block_owner_deletion {
            out.push_str(if b {
                ",\"blockOwnerDeletion\":true"
            } else {
                ",\"blockOwnerDeletion\":false"
            });
        }
        out.push('}');
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("apiVersion".into(), self.api_version.into());
        m.insert("kind".into(), self.kind.into());
        m.insert("name".into(), self.name.into());
        m.insert("uid".into(), self.uid.into());
        if let Some(c) = self.controller {
            m.insert("controller".into(), c.into());
        }
        if let Some(b) = self.block_owner_deletion {
            m.insert("blockOwnerDeletion".into(), b.into());
        }
        Value::Object(m)
    }
}

/// `schema.ParseGroupVersion` then `FromAPIVersionAndKind`: the version part, empty when the
/// string does not parse.
fn group_version_version(api_version: &str) -> (&str, &str) {
    if api_version.is_empty() || api_version == "/" {
        return ("", "");
    }
    match api_version.bytes().filter(|&b| b == b'/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').unwrap_or(("", "")),
        _ => ("", ""),
    }
}

pub(super) fn validate_owner_references(refs: &[Value], at: MetaPath<'_>, out: &mut Vec<Cause>) {
    let mut first_controller: Option<OwnerRef<'_>> = None;
    for v in refs {
        let r = OwnerRef::from_value(v);
        let (group, version) = group_version_version(r.api_version);
        if version.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("apiVersion"),
                r.api_version,
                "version must not be empty",
            ));
        }
        if r.kind.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("kind"),
                r.kind,
                "must not be empty",
            ));
        }
        if r.name.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("name"),
                r.name,
                "must not be empty",
            ));
        }
        if r.uid.is_empty() {
            out.push(invalid_str(
                at.child("ownerReferences").child("uid"),
                r.uid,
                "must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && r.kind == "Event" {
            let mut json = String::new();
            r.write_json(&mut json);
            out.push(Cause::invalid(
                at.child("ownerReferences"),
                BadValue::Rendered {
                    json,
                    value: r.to_value(),
                },
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.controller == Some(true) {
            match &first_controller {
                Some(first) => {
                    let mut json = String::from("[");
                    let mut values = Vec::with_capacity(refs.len());
                    for (i, o) in refs.iter().enumerate() {
                        if i > 0 {
                            json.push(',');
                        }
                        let o = OwnerRef::from_value(o);
                        o.write_json(&mut json);
                        values.push(o.to_value());
                    }
                    json.push(']');
                    out.push(Cause::invalid(
                        at.child("ownerReferences"),
                        BadValue::Rendered {
                            json,
                            value: Value::Array(values),
                        },
                        format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {}/{} and {}/{}",
                            first.kind, first.name, r.kind, r.name
                        ),
                    ));
                }
                None => first_controller = Some(r),
            }
        }
    }
}
