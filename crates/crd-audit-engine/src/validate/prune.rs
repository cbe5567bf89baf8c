//! Structural pruning: the fields the API server drops because the schema does not specify
//! them (and the paths it reports for them with `fieldValidation=Warn`).
//!
//! `apiVersion`, `kind` and `metadata` of a resource (the root, or an
//! `x-kubernetes-embedded-resource` object) are left alone here; unknown fields inside such a
//! `metadata` are dropped by ObjectMeta decoding, which [`prune`] also reports.

use crate::validate::schema_tree::{NodeId, Structure};
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

/// The fields of an `OwnerReference` and of a `ManagedFieldsEntry`, which ObjectMeta
/// decoding also drops (and reports) unknown fields of.
const OWNER_REFERENCE_FIELDS: [&str; 6] = [
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];
const MANAGED_FIELDS_ENTRY_FIELDS: [&str; 7] = [
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// Prunes a whole object against its version's compiled schema (`None`: no schema,
/// everything but the resource fields goes). With `drop_nulls`, `null`s of non-nullable
/// fields without a default go too, silently, as the server drops them right after pruning.
/// Returns the pruned paths, sorted.
pub fn prune_object(obj: &mut Value, schema: Option<&Structure>, drop_nulls: bool) -> Vec<String> {
    let mut pr = Pruner {
        structure: schema,
        dropped: Vec::new(),
        depth: 0,
        drop_nulls,
        metadata_only: false,
    };
    pr.node(obj, schema.map(Structure::root), true, &Seg::Root);
    pr.dropped.sort();
    pr.dropped
}

/// What the server still drops from an object of a CRD that preserves unknown fields
/// (`preserveUnknownFields: true`): the unknown fields of the `metadata` of the object and
/// of its embedded resources, which ObjectMeta decoding drops. Returns their paths, sorted.
pub fn prune_metadata(obj: &mut Value, schema: Option<&Structure>) -> Vec<String> {
    let mut pr = Pruner {
        structure: schema,
        dropped: Vec::new(),
        depth: 0,
        drop_nulls: false,
        metadata_only: true,
    };
    pr.node(obj, schema.map(Structure::root), true, &Seg::Root);
    pr.dropped.sort();
    pr.dropped
}

/// Prunes a value (a CRD `default`) that lives under node `at` of `schema`; `is_resource`
/// when the value is itself a resource (an embedded resource's default).
pub fn prune_value(
    v: &mut Value,
    schema: &Structure,
    at: NodeId,
    is_resource: bool,
) -> Vec<String> {
    let mut pr = Pruner {
        structure: Some(schema),
        dropped: Vec::new(),
        depth: 0,
        drop_nulls: false,
        metadata_only: false,
    };
    pr.node(v, Some(at), is_resource, &Seg::Root);
    pr.dropped.sort();
    pr.dropped
}

/// The path to the value being visited, rendered only when a field is dropped.
enum Seg<'a> {
    Root,
    Key(&'a Seg<'a>, &'a str),
    Index(&'a Seg<'a>, usize),
}

impl Seg<'_> {
    fn render(&self, out: &mut String) {
        match self {
            Seg::Root => {}
            Seg::Key(parent, k) => {
                parent.render(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(parent, i) => {
                parent.render(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }

    fn is_root(&self) -> bool {
        matches!(self, Seg::Root)
    }
}

struct Pruner<'s> {
    structure: Option<&'s Structure>,
    dropped: Vec<String>,
    /// Nesting of the value being visited; deeper than [`crate::load::MAX_DEPTH`] (which no
    /// loaded document reaches) is left as it is rather than risking the stack.
    depth: usize,
    drop_nulls: bool,
    /// Only the metadata of resources is pruned (see [`prune_metadata`]).
    metadata_only: bool,
}

impl Pruner<'_> {
    fn record(&mut self, at: &Seg, key: &str) {
        let mut s = String::new();
        Seg::Key(at, key).render(&mut s);
        self.dropped.push(s);
    }

    fn preserves(&self, s: Option<NodeId>) -> bool {
        match (s, self.structure) {
            (Some(id), Some(st)) => st.node(id).preserve_unknown,
            _ => false,
        }
    }

    fn embedded(&self, s: Option<NodeId>) -> bool {
        match (s, self.structure) {
            (Some(id), Some(st)) => st.node(id).embedded,
            _ => false,
        }
    }

    /// One value under schema node `s`. `resource`: the value is a resource (root or
    /// embedded).
    fn node(&mut self, x: &mut Value, s: Option<NodeId>, resource: bool, at: &Seg) {
        if self.depth >= crate::load::MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.node_inner(x, s, resource, at);
        self.depth -= 1;
    }

    fn node_inner(&mut self, x: &mut Value, s: Option<NodeId>, resource: bool, at: &Seg) {
        let embedded = resource || self.embedded(s);
        if embedded && let Value::Object(map) = x {
            self.metadata(map, at);
        }
        if self.preserves(s) || self.metadata_only {
            self.skip(x, s, embedded, at);
            return;
        }
        match x {
            Value::Object(map) => {
                let Some(s) = s else {
                    for k in map.keys() {
                        self.record(at, k);
                    }
                    map.clear();
                    return;
                };
                let mut unknown: Vec<String> = Vec::new();
                for (k, v) in map.iter_mut() {
                    if embedded && META_FIELDS.contains(&k.as_str()) {
                        continue;
                    }
                    if !self.specified_child(k, v, s, at) {
                        if !META_FIELDS.contains(&k.as_str()) || !at.is_root() {
                            self.record(at, k);
                        }
                        unknown.push(k.clone());
                    }
                }
                for k in unknown {
                    map.remove(&k);
                }
                self.drop_nulls(map, s);
            }
            Value::Array(items) => {
                let item_schema = s.and_then(|s| self.structure?.node(s).items);
                for (i, v) in items.iter_mut().enumerate() {
                    self.node(v, item_schema, false, &Seg::Index(at, i));
                }
            }
            _ => {}
        }
    }

    /// Under `x-kubernetes-preserve-unknown-fields`: keep unknown fields, but prune inside
    /// the specified ones.
    fn skip(&mut self, x: &mut Value, s: Option<NodeId>, embedded: bool, at: &Seg) {
        // An embedded resource's metadata is decoded (and pruned) wherever it is.
        if embedded && let Value::Object(map) = x {
            self.metadata(map, at);
        }
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
                    self.specified_child(k, v, s, at);
                }
                self.drop_nulls(map, s);
            }
            Value::Array(items) => {
                let item_schema = self.structure.and_then(|st| st.node(s).items);
                let embedded_item = self.embedded(item_schema);
                for (i, v) in items.iter_mut().enumerate() {
                    self.skip(v, item_schema, embedded_item, &Seg::Index(at, i));
                }
            }
            _ => {}
        }
    }

    /// Prunes inside the field `k` when the schema specifies it (a property, or any key under
    /// `additionalProperties`); returns whether it does.
    fn specified_child(&mut self, k: &str, v: &mut Value, s: NodeId, at: &Seg) -> bool {
        let Some(st) = self.structure else {
            return false;
        };
        let n = st.node(s);
        let child = match (n.property(k), n.additional) {
            (Some(prop), _) => Some(prop),
            (None, Some(ap)) => Some(ap),
            (None, None) if n.additional_bool => None,
            (None, None) => return false,
        };
        self.node(v, child, false, &Seg::Key(at, k));
        true
    }

    /// `PruneNonNullableNullsWithoutDefaults` at one object: `null` values of specified,
    /// non-nullable fields without a default are removed.
    fn drop_nulls(&mut self, map: &mut Map<String, Value>, s: NodeId) {
        let Some(st) = self.structure else { return };
        if !self.drop_nulls || !map.values().any(Value::is_null) {
            return;
        }
        let n = st.node(s);
        map.retain(|k, v| {
            if !v.is_null() {
                return true;
            }
            let child = n.property(k).or(if n.properties.is_empty() {
                n.additional
            } else {
                None
            });
            child.is_none_or(|c| {
                let c = st.node(c);
                c.nullable || c.default.is_some()
            })
        });
    }

    /// Unknown fields of a resource's `metadata` object are dropped by ObjectMeta decoding.
    fn metadata(&mut self, map: &mut Map<String, Value>, at: &Seg) {
        let Some(Value::Object(meta)) = map.get_mut("metadata") else {
            return;
        };
        let unknown: Vec<String> = meta
            .keys()
            .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        let meta_at = Seg::Key(at, "metadata");
        for k in unknown {
            self.record(&meta_at, &k);
            meta.remove(&k);
        }
        for (list, known) in [
            ("ownerReferences", &OWNER_REFERENCE_FIELDS[..]),
            ("managedFields", &MANAGED_FIELDS_ENTRY_FIELDS[..]),
        ] {
            let Some(Value::Array(items)) = meta.get_mut(list) else {
                continue;
            };
            let list_at = Seg::Key(&meta_at, list);
            for (i, item) in items.iter_mut().enumerate() {
                let Value::Object(fields) = item else {
                    continue;
                };
                let unknown: Vec<String> = fields
                    .keys()
                    .filter(|k| !known.contains(&k.as_str()))
                    .cloned()
                    .collect();
                let item_at = Seg::Index(&list_at, i);
                for k in unknown {
                    self.record(&item_at, &k);
                    fields.remove(&k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Structure {
        Structure::new(&crate::schema::Props::from_value("s", &v).unwrap())
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
        let dropped = prune_object(&mut obj, Some(&s), false);
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
        let dropped = prune_object(&mut obj, Some(&s), false);
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
        let dropped = prune_object(&mut obj, Some(&s), false);
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
