//! `x-kubernetes-embedded-resource` objects inside a custom resource: the decode-time check
//! that refuses the request (400) when their `apiVersion`/`kind` are not strings or their
//! `metadata` cannot be decoded, and their validation (`apiVersion`/`kind` required, metadata
//! rules) after the schema's.

use crate::cause::{Cause, Path};
use crate::validate::objectmeta;
use crate::validate::schema_tree::{NodeId, Structure};
use serde_json::Value;

/// The first request error of an embedded resource, as the server's decoder reports it.
pub fn request_error(structure: &Structure, obj: &Value) -> Option<String> {
    let mut found = None;
    walk(
        structure,
        structure.root(),
        obj,
        &Path::root(),
        &mut |v, p| {
            if found.is_none() {
                found = objectmeta::embedded_request_error(v, p);
            }
            found.is_none()
        },
    );
    found
}

/// Validates every embedded resource of an object.
pub fn validate(structure: &Structure, obj: &Value, out: &mut Vec<Cause>) {
    walk(
        structure,
        structure.root(),
        obj,
        &Path::root(),
        &mut |v, p| {
            out.extend(objectmeta::validate_embedded_resource(v, p));
            true
        },
    );
}

/// For a value at `path` whose schema is `structure` (a default value), the first error of
/// the schema coercer for its embedded resources, the value itself included when
/// `resource_root` (upstream's `schemaobjectmeta.Coerce`).
pub fn request_cause_at(
    structure: &Structure,
    v: &Value,
    path: &Path,
    resource_root: bool,
) -> Option<crate::cause::Cause> {
    if resource_root && let Some(c) = objectmeta::embedded_request_cause(v, path) {
        return Some(c);
    }
    let mut found = None;
    walk(structure, structure.root(), v, path, &mut |v, p| {
        found = objectmeta::embedded_request_cause(v, p);
        found.is_none()
    });
    found
}

/// For a value at `path` whose schema is `structure` (a default value), the validation of
/// its embedded resources, the value itself included when `resource_root` (upstream's
/// `schemaobjectmeta.Validate`).
pub fn validate_at(
    structure: &Structure,
    v: &Value,
    path: &Path,
    resource_root: bool,
    out: &mut Vec<Cause>,
) {
    if resource_root {
        out.extend(objectmeta::validate_embedded_resource(v, path));
    }
    walk(structure, structure.root(), v, path, &mut |v, p| {
        out.extend(objectmeta::validate_embedded_resource(v, p));
        true
    });
}

/// Calls `f` on each embedded resource below the root (not on the root itself, which is the
/// resource) until it returns false. Map values are named with `[key]` as upstream does here.
fn walk(
    structure: &Structure,
    id: NodeId,
    v: &Value,
    path: &Path,
    f: &mut dyn FnMut(&Value, &Path) -> bool,
) -> bool {
    let n = structure.node(id);
    if n.embedded && id != structure.root() && !f(v, path) {
        return false;
    }
    if !n.embedded_below {
        return true;
    }
    match v {
        Value::Array(items) => {
            if let Some(it) = n.items {
                for (i, item) in items.iter().enumerate() {
                    if !walk(structure, it, item, &path.index(i), f) {
                        return false;
                    }
                }
            }
        }
        Value::Object(map) => {
            if let Some(a) = n.additional {
                for (k, val) in map {
                    if !walk(structure, a, val, &path.key(k), f) {
                        return false;
                    }
                }
            }
            for (k, val) in map {
                if let Some(c) = n.property(k)
                    && !walk(structure, c, val, &path.child(k), f)
                {
                    return false;
                }
            }
        }
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Props;
    use serde_json::json;

    fn structure() -> Structure {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "t": {"type": "object", "x-kubernetes-embedded-resource": true,
                  "x-kubernetes-preserve-unknown-fields": true},
            "ts": {"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true,
                  "x-kubernetes-preserve-unknown-fields": true}}}}}});
        Structure::new(&Props::from_value("", &schema).unwrap())
    }

    #[test]
    fn embedded_resources_are_found_in_lists_and_properties() {
        let obj = json!({"spec": {"t": {"kind": "Pod"}, "ts": [{"apiVersion": "v1", "kind": "Pod"}, {}]}});
        let mut out = Vec::new();
        validate(&structure(), &obj, &mut out);
        let msgs: Vec<String> = out.iter().map(Cause::message).collect();
        assert_eq!(
            msgs,
            vec![
                "spec.t.apiVersion: Required value",
                "spec.ts[1].apiVersion: Required value",
                "spec.ts[1].kind: Required value",
            ]
        );
    }

    #[test]
    fn request_errors_stop_at_the_first() {
        let obj = json!({"spec": {"t": {"apiVersion": 1, "kind": "Pod"}}});
        assert_eq!(
            request_error(&structure(), &obj).as_deref(),
            Some("spec.t.apiVersion: Invalid value: 1: must be a string")
        );
        assert_eq!(request_error(&structure(), &json!({"spec": {}})), None);
    }
}
