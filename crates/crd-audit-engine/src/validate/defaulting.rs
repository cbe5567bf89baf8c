//! Defaulting of a decoded object before it is validated: `default`s are applied to missing
//! fields and to `null`s of non-nullable fields, list items and map values, in their pruned
//! form. (The `null`s of non-nullable fields without a default were dropped by
//! [`super::prune`] just before.)

use crate::validate::schema_tree::{NodeId, Structure};
use serde_json::Value;

/// Applies the schema's defaults to a whole object.
pub fn apply(structure: &Structure, obj: &mut Value) {
    walk(structure, structure.root(), obj);
}

/// Whether a value is a `null` that the node's default replaces.
fn defaultable_null(structure: &Structure, id: NodeId, v: &Value) -> bool {
    let n = structure.node(id);
    v.is_null() && n.default.is_some() && !n.nullable
}

fn walk(structure: &Structure, id: NodeId, v: &mut Value) {
    let n = structure.node(id);
    if !n.defaults_below {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, c) in n.properties.iter() {
                let cn = structure.node(*c);
                let Some(d) = &cn.default else { continue };
                let missing = match map.get(k.as_ref()) {
                    None => true,
                    Some(Value::Null) => !cn.nullable,
                    Some(_) => false,
                };
                if missing {
                    map.insert(k.to_string(), d.clone());
                }
            }
            for (k, val) in map.iter_mut() {
                if let Some(c) = n.property(k) {
                    walk(structure, c, val);
                } else if let Some(a) = n.additional {
                    if defaultable_null(structure, a, val) {
                        *val = structure.node(a).default.clone().unwrap_or(Value::Null);
                        // The server walks the old (null) value: nothing below is defaulted.
                        continue;
                    }
                    walk(structure, a, val);
                }
            }
        }
        Value::Array(items) => {
            let Some(it) = n.items else { return };
            for item in items.iter_mut() {
                if defaultable_null(structure, it, item) {
                    *item = structure.node(it).default.clone().unwrap_or(Value::Null);
                    continue;
                }
                walk(structure, it, item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Props;
    use serde_json::json;

    /// Pruning (with its null dropping, when `drop_nulls`) then defaulting, as the server
    /// runs them.
    fn run(schema: Value, mut obj: Value, drop_nulls: bool) -> Value {
        let props = Props::from_value("", &schema).unwrap();
        let st = Structure::new(&props);
        crate::validate::prune::prune_object(&mut obj, Some(&st), drop_nulls);
        apply(&st, &mut obj);
        obj
    }

    #[test]
    fn missing_and_null_fields_get_defaults() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "a": {"type": "integer", "default": 3},
                "b": {"type": "string", "default": "x"},
                "c": {"type": "string", "nullable": true, "default": "y"},
                "d": {"type": "object", "default": {"e": 1},
                      "properties": {"e": {"type": "integer"}, "f": {"type": "integer", "default": 2}}}}}}});
        let got = run(schema, json!({"spec": {"b": null, "c": null}}), true);
        assert_eq!(
            got,
            json!({"spec": {"a": 3, "b": "x", "c": null, "d": {"e": 1, "f": 2}}})
        );
    }

    #[test]
    fn non_nullable_nulls_without_default_are_dropped_only_when_pruning() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}, "n": {"type": "string", "nullable": true},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "l": {"type": "array", "items": {"type": "string"}}}}}});
        let obj = json!({"spec": {"a": null, "n": null, "m": {"k": null}, "l": [null]}});
        assert_eq!(
            run(schema.clone(), obj.clone(), true),
            json!({"spec": {"n": null, "m": {}, "l": [null]}})
        );
        assert_eq!(run(schema, obj.clone(), false), obj);
    }

    #[test]
    fn list_items_and_map_values_that_are_null_take_the_default() {
        let schema = json!({"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "string", "default": "d"}},
            "m": {"type": "object", "additionalProperties": {"type": "integer", "default": 7}}}});
        assert_eq!(
            run(
                schema,
                json!({"l": ["a", null], "m": {"x": null, "y": 1}}),
                true
            ),
            json!({"l": ["a", "d"], "m": {"x": 7, "y": 1}})
        );
    }

    #[test]
    fn defaults_are_pruned_before_use() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "object",
            "default": {"known": 1, "unknown": 2}, "properties": {"known": {"type": "integer"}}}}});
        assert_eq!(run(schema, json!({}), true), json!({"s": {"known": 1}}));
    }
}
