//! Uniqueness of `x-kubernetes-list-type: set` items and of `map` item keys, as the custom
//! resource strategy checks them after schema validation. Each value that occurs more than
//! once is reported once, at its second occurrence. Scalars compare as the decoded Go values
//! do (`1` and `1.0` differ), objects and lists by their JSON encoding.

use crate::cause::{BadValue, Cause, Path};
use crate::validate::schema_tree::{ListType, NodeId, Structure};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Checks every set and map list of an object.
pub fn validate(structure: &Structure, obj: &Value, out: &mut Vec<Cause>) {
    if let Value::Object(map) = obj {
        object(structure, structure.root(), map, &Path::root(), out);
    }
}

fn object(
    structure: &Structure,
    id: NodeId,
    map: &Map<String, Value>,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    let n = structure.node(id);
    if !n.lists_below {
        return;
    }
    if let Some(a) = n.additional {
        for (k, v) in map {
            value(structure, a, v, &path.key(k), out);
        }
    }
    for (k, v) in map {
        if let Some(c) = n.property(k) {
            value(structure, c, v, &path.child(k), out);
        }
    }
}

fn value(structure: &Structure, id: NodeId, v: &Value, path: &Path, out: &mut Vec<Cause>) {
    match v {
        Value::Object(map) => object(structure, id, map, path, out),
        Value::Array(items) => array(structure, id, items, path, out),
        _ => {}
    }
}

fn array(structure: &Structure, id: NodeId, items: &[Value], path: &Path, out: &mut Vec<Cause>) {
    let n = structure.node(id);
    if !n.lists_below {
        return;
    }
    match &n.list_type {
        ListType::Set => {
            for i in second_occurrences(items.iter().map(Key::of)) {
                out.push(Cause::duplicate(
                    path.index(i),
                    BadValue::from_value(&items[i]),
                ));
            }
        }
        ListType::Map(keys) => map_list(items, keys, path, out),
        ListType::None => {}
    }
    if let Some(it) = n.items {
        for (i, item) in items.iter().enumerate() {
            value(structure, it, item, &path.index(i), out);
        }
    }
}

fn map_list(items: &[Value], keys: &[Box<str>], path: &Path, out: &mut Vec<Cause>) {
    if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        out.push(Cause::invalid(
            path.index(i),
            BadValue::from_value(&items[i]),
            "must be an object for an array of list-type map",
        ));
        return;
    }
    if items.len() <= 1 {
        return;
    }
    if let [key] = keys {
        // One key: its value compares like a set item; a missing key is a value of its own.
        let values: Vec<Option<&Value>> = items.iter().map(|x| x.get(key.as_ref())).collect();
        let dups = second_occurrences(values.iter().map(|v| match v {
            Some(v) => Key::of(v),
            None => Key::Unspecified,
        }));
        for i in dups {
            let mut shown = Map::new();
            if let Some(v) = values[i] {
                shown.insert(key.to_string(), v.clone());
            }
            out.push(Cause::duplicate(
                path.index(i),
                BadValue::from_value(&Value::Object(shown)),
            ));
        }
        return;
    }
    // Several keys: the object of the present key fields, compared as JSON.
    let key_objects: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for k in keys {
                if let Some(v) = x.get(k.as_ref()) {
                    m.insert(k.to_string(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in second_occurrences(key_objects.iter().map(Key::of)) {
        out.push(Cause::duplicate(
            path.index(i),
            BadValue::from_value(&key_objects[i]),
        ));
    }
}

/// A list item as Go compares it in the uniqueness check.
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    /// A map key field that is absent.
    Unspecified,
    Null,
    Bool(bool),
    Int(i64),
    /// The bits of a float64.
    Float(u64),
    Str(&'a str),
    /// JSON encoding of an object or list.
    Compound(String),
}

impl<'a> Key<'a> {
    fn of(v: &'a Value) -> Key<'a> {
        match v {
            Value::Null => Key::Null,
            Value::Bool(b) => Key::Bool(*b),
            Value::Number(n) => match crate::go::json::decoded_int(n) {
                Some(i) => Key::Int(i),
                // +0 and -0 are equal in Go.
                None => Key::Float((n.as_f64().unwrap_or(0.0) + 0.0).to_bits()),
            },
            Value::String(s) => Key::Str(s),
            Value::Array(_) | Value::Object(_) => Key::Compound(crate::go::json::marshal(v)),
        }
    }
}

/// The indices at which a value is seen for the second time.
fn second_occurrences<'a>(keys: impl Iterator<Item = Key<'a>>) -> Vec<usize> {
    let mut seen: HashMap<Key<'a>, u32> = HashMap::new();
    let mut out = Vec::new();
    for (i, k) in keys.enumerate() {
        let count = seen.entry(k).or_insert(0);
        *count += 1;
        if *count == 2 {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Props;
    use serde_json::json;

    fn messages(schema: Value, obj: Value) -> Vec<String> {
        let props = Props::from_value("", &schema).unwrap();
        let mut out = Vec::new();
        validate(&Structure::new(&props), &obj, &mut out);
        out.iter().map(Cause::message).collect()
    }

    fn spec(list: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"l": list}}}})
    }

    #[test]
    fn set_reports_each_duplicated_value_once() {
        let schema = spec(json!({"type": "array", "x-kubernetes-list-type": "set", "items": {}}));
        assert_eq!(
            messages(
                schema.clone(),
                json!({"spec": {"l": ["a", "b", "a", "a", "b"]}})
            ),
            vec![
                "spec.l[2]: Duplicate value: \"a\"",
                "spec.l[4]: Duplicate value: \"b\""
            ]
        );
        // Scalars of different Go types differ; objects compare by their JSON.
        assert!(
            messages(
                schema.clone(),
                json!({"spec": {"l": [1, "1", true, "true", 1.5, null]}})
            )
            .is_empty()
        );
        assert_eq!(
            messages(
                schema,
                json!({"spec": {"l": [{"a": 1}, {"a": 1.0}, null, null]}})
            ),
            vec![
                "spec.l[1]: Duplicate value: {\"a\":1}",
                "spec.l[3]: Duplicate value: null"
            ]
        );
    }

    #[test]
    fn map_lists_compare_keys() {
        let one = spec(json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}}));
        assert_eq!(
            messages(
                one.clone(),
                json!({"spec": {"l": [{"name": "a", "x": 1}, {"name": "a", "x": 2}, {}, {}]}})
            ),
            vec![
                "spec.l[1]: Duplicate value: {\"name\":\"a\"}",
                "spec.l[3]: Duplicate value: {}"
            ]
        );
        assert_eq!(
            messages(one, json!({"spec": {"l": [{"name": "a"}, 3]}})),
            vec!["spec.l[1]: Invalid value: 3: must be an object for an array of list-type map"]
        );
        let two = spec(json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port", "protocol"], "items": {"type": "object"}}));
        assert_eq!(
            messages(
                two,
                json!({"spec": {"l": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
                    {"protocol": "TCP", "port": 80}]}})
            ),
            vec!["spec.l[2]: Duplicate value: {\"port\":80,\"protocol\":\"TCP\"}"]
        );
    }

    #[test]
    fn nested_lists_and_maps_are_followed() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "string"}}}}});
        assert_eq!(
            messages(schema, json!({"spec": {"k.x": ["a", "a"]}})),
            vec!["spec[k.x][1]: Duplicate value: \"a\""]
        );
    }
}
