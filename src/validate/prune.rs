//! Structural pruning: the fields the API server drops because the schema does not specify
//! them (and the paths it reports for them with `fieldValidation=Warn`).
//!
//! `apiVersion`, `kind` and `metadata` of a resource (the root, or an
//! `x-kubernetes-embedded-resource` object) are left alone here; unknown fields inside such a
//! `metadata` are dropped by ObjectMeta decoding, which [`prune`] also reports.

use crate::schema::{Props, SchemaOrBool};
use serde_json::{Map, Value};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The fields of `ObjectMeta` as JSON knows them; anything else in a resource's metadata is
/// dropped when the server decodes it.
pub const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Prunes a whole object against its version's schema (`None`: no schema, everything but
/// the resource fields goes). Returns the dropped paths, sorted.
pub fn prune_object(obj: &mut Value, schema: Option<&Props>) -> Vec<String> {
    let mut pr = Pruner {
        path: String::new(),
        dropped: Vec::new(),
        depth: 0,
    };
    pr.node(obj, schema, true);
    pr.dropped.sort();
    pr.dropped
}

/// Prunes a value (a CRD `default`) that lives under `schema`; `is_resource` when the value
/// is itself a resource (an embedded resource's default).
pub fn prune_value(v: &mut Value, schema: &Props, is_resource: bool) -> Vec<String> {
    let mut pr = Pruner {
        path: String::new(),
        dropped: Vec::new(),
        depth: 0,
    };
    pr.node(v, Some(schema), is_resource);
    pr.dropped.sort();
    pr.dropped
}

struct Pruner {
    /// The current path, rendered (`spec.items[0].name`); truncated on the way back up.
    path: String,
    dropped: Vec<String>,
    /// Nesting of the value being visited; deeper than [`crate::load::MAX_DEPTH`] (which no
    /// loaded document reaches) is left as it is rather than risking the stack.
    depth: usize,
}

impl Pruner {
    fn record(&mut self, key: &str) {
        if self.path.is_empty() {
            self.dropped.push(key.to_string());
        } else {
            self.dropped.push(format!("{}.{key}", self.path));
        }
    }

    fn push_key(&mut self, key: &str) -> usize {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        len
    }

    fn push_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        self.path.push('[');
        use std::fmt::Write;
        let _ = write!(self.path, "{i}");
        self.path.push(']');
        len
    }

    /// One value under schema `s`. `resource`: the value is a resource (root or embedded).
    fn node(&mut self, x: &mut Value, s: Option<&Props>, resource: bool) {
        if self.depth >= crate::load::MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.node_inner(x, s, resource);
        self.depth -= 1;
    }

    fn node_inner(&mut self, x: &mut Value, s: Option<&Props>, resource: bool) {
        let preserve = s.is_some_and(|s| s.x_preserve_unknown_fields == Some(true));
        let embedded = resource || s.is_some_and(|s| s.x_embedded_resource);
        if embedded && let Value::Object(map) = x {
            self.metadata(map);
        }
        if preserve {
            self.skip(x, s, embedded);
            return;
        }
        match x {
            Value::Object(map) => {
                let Some(s) = s else {
                    for k in map.keys() {
                        self.record(k);
                    }
                    map.clear();
                    return;
                };
                let mut unknown: Vec<String> = Vec::new();
                for (k, v) in map.iter_mut() {
                    if embedded && META_FIELDS.contains(&k.as_str()) {
                        continue;
                    }
                    if !self.specified_child(k, v, s) {
                        if !META_FIELDS.contains(&k.as_str()) || !self.path.is_empty() {
                            self.record(k);
                        }
                        unknown.push(k.clone());
                    }
                }
                for k in unknown {
                    map.remove(&k);
                }
            }
            Value::Array(items) => {
                let item_schema = s.and_then(Props::items_schema);
                for (i, v) in items.iter_mut().enumerate() {
                    let mark = self.push_index(i);
                    self.node(v, item_schema, false);
                    self.path.truncate(mark);
                }
            }
            _ => {}
        }
    }

    /// Under `x-kubernetes-preserve-unknown-fields`: keep unknown fields, but prune inside
    /// the specified ones.
    fn skip(&mut self, x: &mut Value, s: Option<&Props>, embedded: bool) {
        let Some(s) = s else { return };
        if self.depth >= crate::load::MAX_DEPTH {
            return;
        }
        match x {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if embedded && META_FIELDS.contains(&k.as_str()) {
                        continue;
                    }
                    self.specified_child(k, v, s);
                }
            }
            Value::Array(items) => {
                let item_schema = s.items_schema();
                for (i, v) in items.iter_mut().enumerate() {
                    let mark = self.push_index(i);
                    let embedded_item = item_schema.is_some_and(|p| p.x_embedded_resource);
                    self.skip(v, item_schema, embedded_item);
                    self.path.truncate(mark);
                }
            }
            _ => {}
        }
    }

    /// Prunes inside the field `k` when the schema specifies it (a property, or any key under
    /// `additionalProperties`); returns whether it does.
    fn specified_child(&mut self, k: &str, v: &mut Value, s: &Props) -> bool {
        let child = match (s.properties.get(k), &s.additional_properties) {
            (Some(prop), _) => Some(prop),
            (None, Some(ap)) => additional(ap),
            (None, None) => return false,
        };
        let mark = self.push_key(k);
        self.node(v, child, false);
        self.path.truncate(mark);
        true
    }

    /// Unknown fields of a resource's `metadata` object are dropped by ObjectMeta decoding.
    fn metadata(&mut self, map: &mut Map<String, Value>) {
        let Some(Value::Object(meta)) = map.get_mut("metadata") else {
            return;
        };
        let unknown: Vec<String> = meta
            .keys()
            .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        if unknown.is_empty() {
            return;
        }
        let mark = self.push_key("metadata");
        for k in unknown {
            self.record(&k);
            meta.remove(&k);
        }
        self.path.truncate(mark);
    }
}

fn additional(ap: &SchemaOrBool) -> Option<&Props> {
    match ap {
        SchemaOrBool::Schema(s) => Some(s),
        SchemaOrBool::Bool(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Props {
        Props::from_value("s", &v).unwrap()
    }

    #[test]
    fn drops_unknown_fields_and_reports_paths() {
        let s = schema(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "env": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"sub": {"type": "object", "properties": {}}}}}}}}));
        let mut obj = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "bogus": 1},
            "extraTop": 1,
            "spec": {"ports": [{"name": "a", "x": 1}], "env": {"A": {"v": "1", "y": 2}},
                "free": {"anything": 1, "sub": {"y": 1}}}});
        let dropped = prune_object(&mut obj, Some(&s));
        assert_eq!(
            dropped,
            vec![
                "extraTop",
                "metadata.bogus",
                "spec.env.A.y",
                "spec.free.sub.y",
                "spec.ports[0].x"
            ]
        );
        assert_eq!(obj["spec"]["free"]["anything"], 1);
        assert!(obj["metadata"].get("bogus").is_none());
    }

    #[test]
    fn values_deeper_than_any_loaded_document_do_not_overflow() {
        let s = schema(json!({"type": "object", "properties": {"spec": {"type": "array"}}}));
        let mut deep = json!({"x": 1});
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let mut obj = json!({"spec": [1], "extra": 1});
        obj["spec"] = deep;
        let dropped = prune_object(&mut obj, Some(&s));
        assert_eq!(dropped, vec!["extra"]);
        crate::load::drop_value(obj);
    }

    #[test]
    fn embedded_resources_keep_their_type_meta() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object"}}}}}}}),
        );
        let mut obj = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"a": "b"}, "bogus": true}, "spec": {"x": 1}, "other": 1}}});
        let dropped = prune_object(&mut obj, Some(&s));
        assert_eq!(
            dropped,
            vec![
                "spec.template.metadata.bogus",
                "spec.template.other",
                "spec.template.spec.x"
            ]
        );
        assert_eq!(obj["spec"]["template"]["kind"], "Pod");
    }
}
