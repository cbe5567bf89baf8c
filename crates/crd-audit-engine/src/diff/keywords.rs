//! The per-keyword comparisons of two schemas (and, recursively, of their properties, items
//! and additionalProperties).

use super::{Class, Differ, at, child, num, show};
use crate::schema::{Props, SchemaOrBool};
use serde_json::Value;

/// A bound that tightens when it appears or rises (`min`) or appears or falls (`max`).
#[allow(clippy::too_many_arguments)]
fn bound(
    d: &mut Differ,
    path: &str,
    name: &str,
    old: Option<f64>,
    new: Option<f64>,
    is_min: bool,
    kinds: [&'static str; 4],
) {
    let p = at(path, name);
    let [added, removed, up, down] = kinds;
    match (old, new) {
        (None, Some(n)) => d.push(
            &p,
            added,
            Class::Tightening,
            format!("{name} {} added", num(n)),
        ),
        (Some(o), None) => d.push(
            &p,
            removed,
            Class::Loosening,
            format!("{name} {} removed", num(o)),
        ),
        (Some(o), Some(n)) if n > o => d.push(
            &p,
            up,
            if is_min {
                Class::Tightening
            } else {
                Class::Loosening
            },
            format!("{name} raised from {} to {}", num(o), num(n)),
        ),
        (Some(o), Some(n)) if n < o => d.push(
            &p,
            down,
            if is_min {
                Class::Loosening
            } else {
                Class::Tightening
            },
            format!("{name} lowered from {} to {}", num(o), num(n)),
        ),
        _ => {}
    }
}

fn flag(
    d: &mut Differ,
    path: &str,
    name: &str,
    old: bool,
    new: bool,
    set_tightens: bool,
    kinds: [&'static str; 2],
) {
    if old == new {
        return;
    }
    let tight = new == set_tightens;
    d.push(
        &at(path, name),
        if new { kinds[0] } else { kinds[1] },
        if tight {
            Class::Tightening
        } else {
            Class::Loosening
        },
        format!("{name} {}", if new { "set" } else { "unset" }),
    );
}

pub(super) fn schema(d: &mut Differ, o: &Props, n: &Props, path: &str) {
    if o.type_ != n.type_ {
        d.push(
            &at(path, "type"),
            "typeChanged",
            Class::Tightening,
            format!("type changed from {:?} to {:?}", o.type_, n.type_),
        );
    }
    flag(
        d,
        path,
        "nullable",
        o.nullable,
        n.nullable,
        false,
        ["nullableAdded", "nullableRemoved"],
    );
    flag(
        d,
        path,
        "x-kubernetes-int-or-string",
        o.x_int_or_string,
        n.x_int_or_string,
        false,
        ["intOrStringAdded", "intOrStringRemoved"],
    );
    flag(
        d,
        path,
        "x-kubernetes-preserve-unknown-fields",
        o.x_preserve_unknown_fields == Some(true),
        n.x_preserve_unknown_fields == Some(true),
        false,
        ["preserveUnknownFieldsAdded", "preserveUnknownFieldsRemoved"],
    );
    if o.x_embedded_resource != n.x_embedded_resource {
        d.push(
            &at(path, "x-kubernetes-embedded-resource"),
            "embeddedResourceChanged",
            Class::Tightening,
            "x-kubernetes-embedded-resource changed".into(),
        );
    }
    flag(
        d,
        path,
        "uniqueItems",
        o.unique_items,
        n.unique_items,
        true,
        ["uniqueItemsAdded", "uniqueItemsRemoved"],
    );
    flag(
        d,
        path,
        "exclusiveMinimum",
        o.exclusive_minimum,
        n.exclusive_minimum,
        true,
        ["exclusiveMinimumSet", "exclusiveMinimumUnset"],
    );
    flag(
        d,
        path,
        "exclusiveMaximum",
        o.exclusive_maximum,
        n.exclusive_maximum,
        true,
        ["exclusiveMaximumSet", "exclusiveMaximumUnset"],
    );
    bound(
        d,
        path,
        "minimum",
        o.minimum,
        n.minimum,
        true,
        [
            "minimumAdded",
            "minimumRemoved",
            "minimumRaised",
            "minimumLowered",
        ],
    );
    bound(
        d,
        path,
        "maximum",
        o.maximum,
        n.maximum,
        false,
        [
            "maximumAdded",
            "maximumRemoved",
            "maximumRaised",
            "maximumLowered",
        ],
    );
    let f = |v: Option<i64>| v.map(|x| x as f64);
    bound(
        d,
        path,
        "minLength",
        f(o.min_length),
        f(n.min_length),
        true,
        [
            "minLengthAdded",
            "minLengthRemoved",
            "minLengthRaised",
            "minLengthLowered",
        ],
    );
    bound(
        d,
        path,
        "maxLength",
        f(o.max_length),
        f(n.max_length),
        false,
        [
            "maxLengthAdded",
            "maxLengthRemoved",
            "maxLengthRaised",
            "maxLengthLowered",
        ],
    );
    bound(
        d,
        path,
        "minItems",
        f(o.min_items),
        f(n.min_items),
        true,
        [
            "minItemsAdded",
            "minItemsRemoved",
            "minItemsRaised",
            "minItemsLowered",
        ],
    );
    bound(
        d,
        path,
        "maxItems",
        f(o.max_items),
        f(n.max_items),
        false,
        [
            "maxItemsAdded",
            "maxItemsRemoved",
            "maxItemsRaised",
            "maxItemsLowered",
        ],
    );
    bound(
        d,
        path,
        "minProperties",
        f(o.min_properties),
        f(n.min_properties),
        true,
        [
            "minPropertiesAdded",
            "minPropertiesRemoved",
            "minPropertiesRaised",
            "minPropertiesLowered",
        ],
    );
    bound(
        d,
        path,
        "maxProperties",
        f(o.max_properties),
        f(n.max_properties),
        false,
        [
            "maxPropertiesAdded",
            "maxPropertiesRemoved",
            "maxPropertiesRaised",
            "maxPropertiesLowered",
        ],
    );
    match (o.multiple_of, n.multiple_of) {
        (None, Some(m)) => d.push(
            &at(path, "multipleOf"),
            "multipleOfAdded",
            Class::Tightening,
            format!("multipleOf {} added", num(m)),
        ),
        (Some(m), None) => d.push(
            &at(path, "multipleOf"),
            "multipleOfRemoved",
            Class::Loosening,
            format!("multipleOf {} removed", num(m)),
        ),
        (Some(a), Some(b)) if a != b => d.push(
            &at(path, "multipleOf"),
            "multipleOfChanged",
            Class::Tightening,
            format!("multipleOf changed from {} to {}", num(a), num(b)),
        ),
        _ => {}
    }
    text_keyword(
        d,
        path,
        "pattern",
        &o.pattern,
        &n.pattern,
        ["patternAdded", "patternRemoved", "patternChanged"],
    );
    text_keyword(
        d,
        path,
        "format",
        &o.format,
        &n.format,
        ["formatAdded", "formatRemoved", "formatChanged"],
    );
    enums(d, path, &o.enum_, &n.enum_);
    if o.default != n.default {
        d.push(
            &at(path, "default"),
            "defaultChanged",
            Class::Tightening,
            format!(
                "default changed from {} to {} (affects new objects only)",
                o.default.as_ref().map_or("none".into(), show),
                n.default.as_ref().map_or("none".into(), show)
            ),
        );
    }
    if o.description != n.description || o.title != n.title || o.example != n.example {
        d.push(
            &at(path, "description"),
            "descriptionChanged",
            Class::Neutral,
            "description, title or example changed".into(),
        );
    }
    // List and map semantics.
    if o.x_list_type != n.x_list_type {
        let uniq = |t: &Option<String>| matches!(t.as_deref(), Some("set" | "map"));
        let class = if uniq(&n.x_list_type) && !uniq(&o.x_list_type)
            || (uniq(&o.x_list_type) && uniq(&n.x_list_type))
        {
            Class::Tightening
        } else {
            Class::Loosening
        };
        d.push(
            &at(path, "x-kubernetes-list-type"),
            "listTypeChanged",
            class,
            format!(
                "x-kubernetes-list-type changed from {} to {}",
                o.x_list_type.as_deref().unwrap_or("none"),
                n.x_list_type.as_deref().unwrap_or("none")
            ),
        );
    }
    if o.x_list_map_keys != n.x_list_map_keys {
        d.push(
            &at(path, "x-kubernetes-list-map-keys"),
            "listMapKeysChanged",
            Class::Tightening,
            format!(
                "x-kubernetes-list-map-keys changed from {:?} to {:?}",
                o.x_list_map_keys, n.x_list_map_keys
            ),
        );
    }
    if o.x_map_type != n.x_map_type {
        d.push(
            &at(path, "x-kubernetes-map-type"),
            "mapTypeChanged",
            Class::Neutral,
            "x-kubernetes-map-type changed (merge semantics only)".into(),
        );
    }
    // Junctors cannot be ordered.
    let junctors = |p: &Props| {
        (
            p.all_of.clone(),
            p.any_of.clone(),
            p.one_of.clone(),
            p.not.clone(),
        )
    };
    if junctors(o) != junctors(n) {
        d.push(
            &at(path, "allOf/anyOf/oneOf/not"),
            "junctorsChanged",
            Class::Tightening,
            "allOf/anyOf/oneOf/not changed".into(),
        );
    }
    rules(d, path, o, n);
    // required
    for r in &n.required {
        if !o.required.contains(r) {
            let kind = if o.properties.contains_key(r) || !n.properties.contains_key(r) {
                "fieldRequired"
            } else {
                "requiredFieldAdded"
            };
            d.push(
                &child(path, r),
                kind,
                Class::Tightening,
                format!("{r} is now required"),
            );
        }
    }
    for r in &o.required {
        if !n.required.contains(r) {
            d.push(
                &child(path, r),
                "fieldOptional",
                Class::Loosening,
                format!("{r} is no longer required"),
            );
        }
    }
    // properties
    for (k, op) in &o.properties {
        match n.properties.get(k) {
            Some(np) => schema(d, op, np, &child(path, k)),
            None => {
                let kept = n.x_preserve_unknown_fields == Some(true)
                    || matches!(
                        n.additional_properties,
                        Some(SchemaOrBool::Schema(_)) | Some(SchemaOrBool::Bool(true))
                    );
                if kept {
                    d.push(
                        &child(path, k),
                        "fieldRemoved",
                        Class::Neutral,
                        format!("{k} is no longer declared but unknown fields are kept here"),
                    );
                } else {
                    d.push(
                        &child(path, k),
                        "fieldRemoved",
                        Class::Tightening,
                        format!("{k} is removed: its data will be pruned on the next write"),
                    );
                }
            }
        }
    }
    for k in n.properties.keys() {
        if !o.properties.contains_key(k) && !n.required.contains(k) {
            d.push(
                &child(path, k),
                "fieldAdded",
                Class::Neutral,
                format!("optional field {k} is added"),
            );
        }
    }
    // additionalProperties and items
    match (&o.additional_properties, &n.additional_properties) {
        (Some(SchemaOrBool::Schema(a)), Some(SchemaOrBool::Schema(b))) => {
            schema(d, a, b, &at(path, "additionalProperties"))
        }
        (a, b) => {
            let allows = |x: &Option<SchemaOrBool>| match x {
                None | Some(SchemaOrBool::Bool(true)) => 2,
                Some(SchemaOrBool::Schema(_)) => 1,
                Some(SchemaOrBool::Bool(false)) => 0,
            };
            let (x, y) = (allows(a), allows(b));
            if x > y {
                d.push(
                    &at(path, "additionalProperties"),
                    "additionalPropertiesNarrowed",
                    Class::Tightening,
                    "additionalProperties narrowed".into(),
                );
            } else if x < y {
                d.push(
                    &at(path, "additionalProperties"),
                    "additionalPropertiesWidened",
                    Class::Loosening,
                    "additionalProperties widened".into(),
                );
            }
        }
    }
    match (o.items_schema(), n.items_schema()) {
        (Some(a), Some(b)) => schema(d, a, b, &at(path, "items")),
        (None, Some(_)) => d.push(
            &at(path, "items"),
            "itemsAdded",
            Class::Tightening,
            "items schema added".into(),
        ),
        (Some(_), None) => d.push(
            &at(path, "items"),
            "itemsRemoved",
            Class::Loosening,
            "items schema removed".into(),
        ),
        (None, None) => {}
    }
}

fn text_keyword(
    d: &mut Differ,
    path: &str,
    name: &str,
    old: &str,
    new: &str,
    kinds: [&'static str; 3],
) {
    let p = at(path, name);
    match (old.is_empty(), new.is_empty()) {
        (true, false) => d.push(
            &p,
            kinds[0],
            Class::Tightening,
            format!("{name} {} added", crate::go::strconv::quote(new)),
        ),
        (false, true) => d.push(
            &p,
            kinds[1],
            Class::Loosening,
            format!("{name} {} removed", crate::go::strconv::quote(old)),
        ),
        (false, false) if old != new => d.push(
            &p,
            kinds[2],
            Class::Tightening,
            format!(
                "{name} changed from {} to {} (a changed {name} cannot be ordered)",
                crate::go::strconv::quote(old),
                crate::go::strconv::quote(new)
            ),
        ),
        _ => {}
    }
}

/// The most enum values a reason names; the rest are counted.
const LISTED_VALUES: usize = 20;

fn listed(values: &[&Value]) -> String {
    let mut shown: Vec<String> = values.iter().take(LISTED_VALUES).map(|v| show(v)).collect();
    if values.len() > LISTED_VALUES {
        shown.push(format!("and {} more", values.len() - LISTED_VALUES));
    }
    shown.join(", ")
}

fn enums(d: &mut Differ, path: &str, old: &[Value], new: &[Value]) {
    let p = at(path, "enum");
    match (old.is_empty(), new.is_empty()) {
        (true, false) => d.push(
            &p,
            "enumAdded",
            Class::Tightening,
            format!(
                "enum {} added where there was none",
                show(&Value::Array(new.to_vec()))
            ),
        ),
        (false, true) => d.push(&p, "enumRemoved", Class::Loosening, "enum removed".into()),
        (false, false) => {
            // Linear in the number of values: enums of CRDs can hold many thousands.
            let keys = |vs: &[Value]| -> std::collections::HashSet<String> {
                vs.iter().map(Value::to_string).collect()
            };
            let (old_keys, new_keys) = (keys(old), keys(new));
            let removed: Vec<&Value> = old
                .iter()
                .filter(|v| !new_keys.contains(&v.to_string()))
                .collect();
            let added: Vec<&Value> = new
                .iter()
                .filter(|v| !old_keys.contains(&v.to_string()))
                .collect();
            if !removed.is_empty() {
                d.push(
                    &p,
                    "enumValueRemoved",
                    Class::Tightening,
                    format!("enum values removed: {}", listed(&removed)),
                );
            }
            if !added.is_empty() {
                d.push(
                    &p,
                    "enumValueAdded",
                    Class::Loosening,
                    format!("enum values added: {}", listed(&added)),
                );
            }
        }
        (true, true) => {}
    }
}

fn rules(d: &mut Differ, path: &str, o: &Props, n: &Props) {
    let p = at(path, "x-kubernetes-validations");
    for r in &n.x_validations {
        match o.x_validations.iter().find(|x| x.rule == r.rule) {
            None => d.push(
                &p,
                "validationRuleAdded",
                Class::Tightening,
                format!(
                    "CEL rule {} added (a new or changed rule cannot be ordered)",
                    crate::go::strconv::quote(&r.rule)
                ),
            ),
            Some(x) if x != r => d.push(
                &p,
                "validationRuleMessageChanged",
                Class::Neutral,
                format!(
                    "message, reason or fieldPath of CEL rule {} changed",
                    crate::go::strconv::quote(&r.rule)
                ),
            ),
            _ => {}
        }
    }
    for r in &o.x_validations {
        if !n.x_validations.iter().any(|x| x.rule == r.rule) {
            d.push(
                &p,
                "validationRuleRemoved",
                Class::Loosening,
                format!("CEL rule {} removed", crate::go::strconv::quote(&r.rule)),
            );
        }
    }
}
