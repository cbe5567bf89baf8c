//! What a round trip changed in an object: each field `lost` (there before, gone after),
//! `changed` (another value) or `added`, at the API server's path notation (`spec.ports[1]`,
//! `metadata.labels[app]`). The metadata the server sets (resourceVersion, generation,
//! managedFields, timestamps, selfLink) is not compared. No I/O.
//!
//! A value compared whole is one field: a list whose items moved is one change of the list
//! (`spec.items changed`), not one per item; a map is compared key by key. `null` and an
//! absent field differ, and so do an empty list and an absent one: what a client reads back
//! differs (upstream's own round-trip tests compare with a semantic equality that hides it).

use serde::Serialize;
use serde_json::{Map, Value};

/// What happened to a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    Lost,
    Changed,
    Added,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Lost => "lost",
            Change::Changed => "changed",
            Change::Added => "added",
        }
    }
}

/// A field a round trip changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub change: Change,
}

/// The metadata fields the API server sets, not compared.
const SERVER_SET: [&str; 7] = [
    "resourceVersion",
    "generation",
    "managedFields",
    "creationTimestamp",
    "deletionTimestamp",
    "selfLink",
    "deletionGracePeriodSeconds",
];

/// The most fields a finding names (the rest are counted).
pub const MAX_FIELDS: usize = 20;

/// The fields of `before` that `after` lost, changed or added, in path order; at most
/// [`MAX_FIELDS`], and how many there were in all.
pub fn changes(before: &Value, after: &Value) -> (Vec<FieldChange>, usize) {
    let mut out = Vec::new();
    let mut total = 0;
    let mut note = |path: String, change: Change| {
        total += 1;
        if out.len() < MAX_FIELDS {
            out.push(FieldChange { path, change });
        }
    };
    let (empty_a, empty_b) = (Map::new(), Map::new());
    let a = before.as_object().unwrap_or(&empty_a);
    let b = after.as_object().unwrap_or(&empty_b);
    for key in union(a, b) {
        if key == "metadata" {
            let ma = a.get(key).and_then(Value::as_object).unwrap_or(&empty_a);
            let mb = b.get(key).and_then(Value::as_object).unwrap_or(&empty_b);
            for mk in union(ma, mb) {
                if SERVER_SET.contains(&mk) {
                    continue;
                }
                let path = format!("metadata.{mk}");
                if matches!(mk, "labels" | "annotations") {
                    keyed(ma.get(mk), mb.get(mk), &path, &mut note);
                } else {
                    walk(ma.get(mk), mb.get(mk), path, &mut note);
                }
            }
            continue;
        }
        walk(a.get(key), b.get(key), key.to_string(), &mut note);
    }
    (out, total)
}

/// The keys of two maps, sorted, each once.
fn union<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> Vec<&'a str> {
    let mut keys: Vec<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Labels and annotations, key by key: `metadata.labels[app]`.
fn keyed(a: Option<&Value>, b: Option<&Value>, path: &str, note: &mut impl FnMut(String, Change)) {
    let empty = Map::new();
    let ma = a.and_then(Value::as_object).unwrap_or(&empty);
    let mb = b.and_then(Value::as_object).unwrap_or(&empty);
    for k in union(ma, mb) {
        walk(ma.get(k), mb.get(k), format!("{path}[{k}]"), note);
    }
}

/// A field's path below `parent`: `parent.key`, or `parent[key]` when the key is no plain
/// name.
fn child(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{key}]")
    }
}

fn walk(a: Option<&Value>, b: Option<&Value>, path: String, note: &mut impl FnMut(String, Change)) {
    match (a, b) {
        (None, None) => {}
        (Some(_), None) => note(path, Change::Lost),
        (None, Some(_)) => note(path, Change::Added),
        (Some(Value::Object(ma)), Some(Value::Object(mb))) => {
            for k in union(ma, mb) {
                walk(ma.get(k), mb.get(k), child(&path, k), note);
            }
        }
        (Some(Value::Array(la)), Some(Value::Array(lb))) if la.len() == lb.len() => {
            // Item by item while the items keep their places; a list reordered is one change.
            // (Looked for in lists of a bounded length: the test is quadratic.)
            let reordered = la.len() <= 1000 && la != lb && la.iter().all(|x| lb.contains(x));
            if reordered {
                note(path, Change::Changed);
                return;
            }
            for (i, (x, y)) in la.iter().zip(lb).enumerate() {
                walk(Some(x), Some(y), format!("{path}[{i}]"), note);
            }
        }
        (Some(x), Some(y)) => {
            if !same(x, y) {
                note(path, Change::Changed);
            }
        }
    }
}

/// Equal values, numbers by value (`1` and `1.0` are one number to the API server's JSON).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(changes: &[FieldChange]) -> Vec<(String, &'static str)> {
        changes
            .iter()
            .map(|c| (c.path.clone(), c.change.as_str()))
            .collect()
    }

    #[test]
    fn fields_lost_changed_and_added_are_named() {
        let before = json!({"apiVersion": "g/v1", "kind": "K",
            "metadata": {"name": "a", "resourceVersion": "7", "generation": 2,
                "labels": {"app": "x"}, "managedFields": [{"manager": "m"}]},
            "spec": {"priority": 3, "color": "Red", "tags": null, "ports": [{"name": "a", "port": 1}],
                "weird.key": 1}});
        let after = json!({"apiVersion": "g/v1", "kind": "K",
            "metadata": {"name": "a", "resourceVersion": "9", "generation": 5,
                "labels": {"app": "x", "conv": "yes"}},
            "spec": {"color": "red", "tags": [], "ports": [{"name": "a", "port": 1.0}],
                "weird.key": 1}});
        let (found, total) = changes(&before, &after);
        assert_eq!(
            names(&found),
            [
                ("metadata.labels[conv]".to_string(), "added"),
                ("spec.color".to_string(), "changed"),
                ("spec.priority".to_string(), "lost"),
                ("spec.tags".to_string(), "changed"),
            ]
        );
        assert_eq!(total, 4);
        assert_eq!(changes(&before, &before).1, 0);
    }

    #[test]
    fn a_reordered_list_is_one_change_and_an_item_changed_is_named() {
        let a = json!({"spec": {"items": ["x", "y", "z"], "ports": [{"p": 1}, {"p": 2}]}});
        let b = json!({"spec": {"items": ["z", "x", "y"], "ports": [{"p": 1}, {"p": 3}]}});
        assert_eq!(
            names(&changes(&a, &b).0),
            [
                ("spec.items".to_string(), "changed"),
                ("spec.ports[1].p".to_string(), "changed"),
            ]
        );
        // A list that grew is changed whole.
        let c = json!({"spec": {"items": ["x", "y", "z", "w"], "ports": [{"p": 1}, {"p": 2}]}});
        assert_eq!(
            names(&changes(&a, &c).0),
            [("spec.items".to_string(), "changed")]
        );
    }

    #[test]
    fn the_fields_named_are_bounded() {
        let many: Map<String, Value> = (0..100).map(|i| (format!("f{i:03}"), json!(i))).collect();
        let (found, total) = changes(&json!({"spec": many}), &json!({"spec": {}}));
        assert_eq!((found.len(), total), (MAX_FIELDS, 100));
        assert_eq!(found[0].path, "spec.f000");
    }
}
