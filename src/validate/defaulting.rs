//! What the API server does to a decoded object before validating it: `null`s of
//! non-nullable fields without a default are dropped (silently: they are not reported as
//! pruned), then `default`s are applied to missing fields and to `null`s of non-nullable
//! fields, list items and map values. Defaults are applied in their pruned form.

use crate::validate::structure::{NodeId, Structure};
use serde_json::Value;

/// Applies null dropping (when `drop_nulls`: the server does it only for CRDs that prune)
/// and defaulting to a whole object.
pub fn apply(structure: &Structure, obj: &mut Value, drop_nulls: bool) {
    walk(structure, structure.root(), obj, drop_nulls);
}

/// Whether a value is a `null` that the node's default replaces.
fn defaultable_null(structure: &Structure, id: NodeId, v: &Value) -> bool {
    let n = structure.node(id);
    v.is_null() && n.default.is_some() && !n.nullable
}

fn walk(structure: &Structure, id: NodeId, v: &mut Value, drop_nulls: bool) {
    let n = structure.node(id);
    if !drop_nulls && !n.defaults_below {
        return;
    }
    match v {
        Value::Object(map) => {
            if drop_nulls {
                map.retain(|k, val| {
                    if !val.is_null() {
                        return true;
                    }
                    let child = n.property(k).or(if n.properties.is_empty() {
                        n.additional
                    } else {
                        None
                    });
                    child.is_none_or(|c| {
                        let c = structure.node(c);
                        c.nullable || c.default.is_some()
                    })
                });
            }
            // Defaults of missing properties; their content is not null-pruned (the server
            // prunes nulls before it defaults).
            let mut defaulted: Vec<&str> = Vec::new();
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
                    defaulted.push(k);
                }
            }
            for (k, val) in map.iter_mut() {
                if let Some(c) = n.property(k) {
                    let fresh = defaulted.contains(&k.as_str());
                    walk(structure, c, val, drop_nulls && !fresh);
                } else if let Some(a) = n.additional {
                    if defaultable_null(structure, a, val) {
                        *val = structure.node(a).default.clone().unwrap_or(Value::Null);
                        // The server walks the old (null) value: nothing below is defaulted.
                        continue;
                    }
                    walk(structure, a, val, drop_nulls);
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
                walk(structure, it, item, drop_nulls);
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

    fn run(schema: Value, mut obj: Value, drop_nulls: bool) -> Value {
        let props = Props::from_value("", &schema).unwrap();
        apply(&Structure::new(&props), &mut obj, drop_nulls);
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
