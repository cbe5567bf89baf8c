//! The schema checks of CRD create validation (`ValidateCustomResourceDefinitionOpenAPISchema`):
//! forbidden keywords, property types, list and map types, list-map keys. These are the
//! `crdErrors` that are not structural violations, defaults or CEL.

use crate::cause::{BadValue, Cause, Path};
use crate::schema::{Dependency, Items, Props, SchemaOrBool};
use serde_json::Value;

const PROPERTY_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const META_FIELDS: [&str; 3] = ["metadata", "kind", "apiVersion"];

/// What the keyword checker knows about where it is (upstream's `specStandardValidator`).
#[derive(Clone, Copy, Default)]
struct Context<'a> {
    /// Set when defaults are forbidden here, with the reason.
    forbidden_defaults: Option<&'a str>,
    inside_resource_meta: bool,
}

/// Checks one schema (a version's `openAPIV3Schema`) at `path`: [`check_root`] and
/// [`check_schema`].
#[cfg(test)]
pub fn check(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    check_root(s, path, out);
    check_schema(s, path, out);
}

/// What only the root may not be (`nullable`).
pub fn check_root(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    if s.nullable {
        out.push(Cause::forbidden(
            path.child("nullable"),
            "nullable cannot be true at the root",
        ));
    }
}

/// The keyword checks of every node of the schema (upstream's `SchemaErrors` of
/// `ValidateCustomResourceDefinitionOpenAPISchema`, without those of the rules).
pub fn check_schema(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    schema(s, path, Context::default(), true, out);
}

fn keywords(s: &Props, path: &Path, ctx: Context<'_>, out: &mut Vec<Cause>) {
    if !s.type_.is_empty() && !PROPERTY_TYPES.contains(&s.type_.as_str()) {
        out.push(Cause::not_supported(
            path.child("type"),
            BadValue::Str(s.type_.clone()),
            &PROPERTY_TYPES,
        ));
    }
    let forbid = |out: &mut Vec<Cause>, key: &str, detail: &str| {
        out.push(Cause::forbidden(path.child(key), detail));
    };
    if !s.id.is_empty() {
        forbid(out, "id", "id is not supported");
    }
    if s.additional_items.is_some() {
        forbid(out, "additionalItems", "additionalItems is not supported");
    }
    if !s.pattern_properties.is_empty() {
        forbid(
            out,
            "patternProperties",
            "patternProperties is not supported",
        );
    }
    if !s.definitions.is_empty() {
        forbid(out, "definitions", "definitions is not supported");
    }
    if !s.dependencies.is_empty() {
        forbid(out, "dependencies", "dependencies is not supported");
    }
    if s.reference.is_some() {
        forbid(out, "$ref", "$ref is not supported");
    }
    if s.type_ == "null" {
        forbid(
            out,
            "type",
            "type cannot be set to null, use nullable as an alternative",
        );
    }
    if matches!(s.items, Some(Items::Array(_))) {
        forbid(
            out,
            "items",
            "items must be a schema object and not an array",
        );
    }
    if let (Some(reason), Some(_)) = (ctx.forbidden_defaults, &s.default) {
        forbid(out, "default", reason);
    }
    if ctx.inside_resource_meta && s.x_embedded_resource {
        forbid(
            out,
            "x-kubernetes-embedded-resource",
            "must not be used inside of resource meta",
        );
    }
}

fn schema(s: &Props, path: &Path, ctx: Context<'_>, is_root: bool, out: &mut Vec<Cause>) {
    keywords(s, path, ctx, out);

    if s.unique_items {
        out.push(Cause::forbidden(
            path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(ap) = &s.additional_properties {
        if !s.properties.is_empty() && (!ap.allows() || ap.schema().is_some()) {
            out.push(Cause::forbidden(
                path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let SchemaOrBool::Schema(ap) = ap {
            schema(ap, &path.child("additionalProperties"), ctx, false, out);
        }
    }
    for (name, prop) in &s.properties {
        let mut sub = ctx;
        if (is_root || s.x_embedded_resource) && META_FIELDS.contains(&name.as_str()) {
            sub.inside_resource_meta = true;
            if is_root {
                sub.forbidden_defaults = Some(match name.as_str() {
                    "metadata" => "must not be set in top-level metadata",
                    "kind" => "must not be set in top-level kind",
                    _ => "must not be set in top-level apiVersion",
                });
            }
        }
        schema(prop, &path.child("properties").key(name), sub, false, out);
    }
    for (name, prop) in &s.pattern_properties {
        schema(
            prop,
            &path.child("patternProperties").key(name),
            ctx,
            false,
            out,
        );
    }
    if let Some(SchemaOrBool::Schema(ai)) = &s.additional_items {
        schema(ai, &path.child("additionalItems"), ctx, false, out);
    }
    if let Some(not) = &s.not {
        schema(not, &path.child("not"), ctx, false, out);
    }
    for (name, list) in [
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
        ("anyOf", &s.any_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            schema(sub, &path.child(name).index(i), ctx, false, out);
        }
    }
    for (name, def) in &s.definitions {
        schema(def, &path.child("definitions").key(name), ctx, false, out);
    }
    match &s.items {
        Some(Items::Schema(item)) => schema(item, &path.child("items"), ctx, false, out),
        Some(Items::Array(list)) => {
            for (i, item) in list.iter().enumerate() {
                schema(item, &path.child("items").index(i), ctx, false, out);
            }
        }
        None => {}
    }
    for (name, dep) in &s.dependencies {
        if let Dependency::Schema(d) = dep {
            schema(d, &path.child("dependencies").key(name), ctx, false, out);
        }
    }

    if s.x_preserve_unknown_fields == Some(false) {
        out.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            BadValue::Bool(false),
            "must be true or undefined",
        ));
    }
    list_and_map_types(s, path, out);
}

fn list_and_map_types(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    if let Some(map_type) = &s.x_map_type {
        if s.type_ != "object" {
            let detail = "must be object if x-kubernetes-map-type is specified";
            out.push(if s.type_.is_empty() {
                Cause::required(path.child("type"), detail)
            } else {
                Cause::invalid(path.child("type"), BadValue::Str(s.type_.clone()), detail)
            });
        }
        if map_type != "atomic" && map_type != "granular" {
            out.push(Cause::not_supported(
                path.child("x-kubernetes-map-type"),
                BadValue::Str(map_type.clone()),
                &["atomic", "granular"],
            ));
        }
    }

    let list_type = s.x_list_type.as_deref();
    let item = s.items_schema();
    if list_type.is_some() && s.type_ != "array" {
        let detail = "must be array if x-kubernetes-list-type is specified";
        out.push(if s.type_.is_empty() {
            Cause::required(path.child("type"), detail)
        } else {
            Cause::invalid(path.child("type"), BadValue::Str(s.type_.clone()), detail)
        });
    } else if list_type == Some("set")
        && let Some(item) = item
    {
        let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match item.type_.as_str() {
            "array" if item.x_list_type.as_deref().is_some_and(|t| t != "atomic") => {
                out.push(Cause::invalid(
                    path.child("items").child("x-kubernetes-list-type"),
                    BadValue::Str(item.x_list_type.clone().unwrap_or_default()),
                    detail,
                ));
            }
            "object" if item.x_map_type.as_deref() != Some("atomic") => {
                // Upstream reports the item's list type here (usually unset: null).
                let bad = match &item.x_list_type {
                    Some(t) => BadValue::Str(t.clone()),
                    None => BadValue::Json(Value::Null),
                };
                out.push(Cause::invalid(
                    path.child("items").child("x-kubernetes-map-type"),
                    bad,
                    detail,
                ));
            }
            _ => {}
        }
    }
    if let Some(t) = list_type
        && !matches!(t, "atomic" | "set" | "map")
    {
        out.push(Cause::not_supported(
            path.child("x-kubernetes-list-type"),
            BadValue::Str(t.to_string()),
            &["atomic", "set", "map"],
        ));
    }
    if !s.x_list_map_keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => out.push(Cause::required(
                path.child("x-kubernetes-list-type"),
                detail,
            )),
            Some("map") => {}
            Some(t) => out.push(Cause::invalid(
                path.child("x-kubernetes-list-type"),
                BadValue::Str(t.to_string()),
                detail,
            )),
        }
    }
    let keys_value = || {
        BadValue::Json(Value::Array(
            s.x_list_map_keys
                .iter()
                .cloned()
                .map(Value::String)
                .collect(),
        ))
    };
    if list_type == Some("map") {
        if s.x_list_map_keys.is_empty() {
            out.push(Cause::required(
                path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match &s.items {
            None => out.push(Cause::required(
                path.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(Items::Array(_)) => out.push(Cause::invalid(
                path.child("items"),
                BadValue::Omit,
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(Items::Schema(item)) if item.type_ != "object" => out.push(Cause::invalid(
                path.child("items").child("type"),
                BadValue::Str(item.type_.clone()),
                "must be object if parent array's x-kubernetes-list-type is map",
            )),
            Some(Items::Schema(item)) => {
                let mut seen: Vec<&str> = Vec::new();
                for k in &s.x_list_map_keys {
                    match item.properties.get(k) {
                        Some(p) => {
                            if p.type_ == "array" || p.type_ == "object" {
                                out.push(Cause::invalid(
                                    path.child("items").child("properties").key(k).child("type"),
                                    BadValue::Str(item.type_.clone()),
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => {
                            out.push(Cause::invalid(
                                path.child("x-kubernetes-list-map-keys"),
                                keys_value(),
                                "entries must all be names of item properties",
                            ));
                            break;
                        }
                    }
                    if seen.contains(&k.as_str()) {
                        out.push(Cause::invalid(
                            path.child("x-kubernetes-list-map-keys"),
                            keys_value(),
                            "must not contain duplicate entries",
                        ));
                        break;
                    }
                    seen.push(k);
                }
            }
        }
    }
    map_list_keys_and_sets(s, path, out);
}

/// Items of sets and maps cannot be nullable; list-map keys must be required or defaulted.
fn map_list_keys_and_sets(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    let (Some(item), Some(list_type)) = (s.items_schema(), s.x_list_type.as_deref()) else {
        return;
    };
    if list_type != "set" && list_type != "map" {
        return;
    }
    if item.nullable {
        out.push(Cause::forbidden(
            path.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        for k in &s.x_list_map_keys {
            let Some(p) = item.properties.get(k) else {
                continue;
            };
            let key_path = path.child("items").child("properties").key(k);
            if !item.required.contains(k) && p.default.is_none() {
                out.push(Cause::required(
                    key_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if p.nullable {
                out.push(Cause::forbidden(
                    key_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(v: Value) -> Vec<String> {
        let mut out = Vec::new();
        check(
            &Props::from_value("s", &v).unwrap(),
            &Path::new("s"),
            &mut out,
        );
        out.iter().map(|c| c.message()).collect()
    }

    #[test]
    fn forbidden_keywords() {
        let m = messages(json!({"type": "object", "properties": {
            "u": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
            "t": {"type": "null"}}}));
        assert!(m.contains(&"s.properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic".to_string()), "{m:?}");
        assert!(m.contains(&"s.properties[t].type: Forbidden: type cannot be set to null, use nullable as an alternative".to_string()), "{m:?}");
        assert_eq!(m.len(), 3, "{m:?}");
    }

    #[test]
    fn list_map_keys_must_be_properties() {
        let m = messages(
            json!({"type": "object", "properties": {"l": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "missing"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}),
        );
        assert_eq!(
            m,
            vec![
                r#"s.properties[l].x-kubernetes-list-map-keys: Invalid value: ["name","missing"]: entries must all be names of item properties"#
            ]
        );
    }

    #[test]
    fn defaults_in_top_level_metadata_are_forbidden() {
        let m = messages(
            json!({"type": "object", "properties": {"metadata": {"type": "object",
            "properties": {"name": {"type": "string", "default": "x"}}}}}),
        );
        assert_eq!(
            m,
            vec![
                "s.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"
            ]
        );
    }
}
