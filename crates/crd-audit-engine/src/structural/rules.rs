//! The structural-schema rules (`ValidateStructural`): what the `NonStructuralSchema`
//! condition lists for a schema that could be converted (see [`super::convert`]).
//!
//! A schema node is judged in one of two roles: as part of the structure (types, properties,
//! items, additionalProperties and extensions), or as a value validation under
//! `allOf`/`anyOf`/`oneOf`/`not`, where everything structural is forbidden.

use crate::cause::{BadValue, Cause, Path};
use crate::go::regexp;
use crate::schema::{Props, SchemaOrBool};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every structural violation of the schema at `path`, sorted by message as upstream sorts
/// them.
pub fn violations(path: &Path, s: &Props) -> Vec<Cause> {
    let mut out = Vec::new();
    invariants(s, Level::Root, path, &mut out);
    completeness_of_value_validation(s, s, path, path, &mut out);
    sort_by_message(&mut out);
    out
}

/// Sorts causes by their rendered message (upstream's order for structural errors).
pub fn sort_by_message(causes: &mut [Cause]) {
    causes.sort_by_cached_key(|c| c.message());
}

fn invariants(s: &Props, lvl: Level, path: &Path, out: &mut Vec<Cause>) {
    if s.type_ == "array" && s.items_schema().is_none() {
        out.push(Cause::required(path.child("items"), "must be specified"));
    }
    if let Some(items) = s.items_schema() {
        invariants(items, Level::Item, &path.child("items"), out);
    }
    for (k, prop) in &s.properties {
        invariants(prop, Level::Field, &path.child("properties").key(k), out);
    }
    if let Some(ap) = &s.additional_properties {
        if lvl == Level::Root {
            out.push(Cause::forbidden(
                path.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let SchemaOrBool::Schema(ap) = ap {
            invariants(ap, Level::Field, &path.child("additionalProperties"), out);
        }
    }

    let preserve = s.x_preserve_unknown_fields == Some(true);
    if s.x_int_or_string && preserve {
        out.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            BadValue::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if s.x_int_or_string && s.x_embedded_resource {
        out.push(Cause::invalid(
            path.child("x-kubernetes-embedded-resource"),
            BadValue::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_pair(&s.any_of);
    let skip_first_all_of_any_of = s
        .all_of
        .first()
        .is_some_and(|first| is_int_or_string_pair(&first.any_of));
    value_validation(s, skip_any_of, skip_first_all_of_any_of, path, out);

    let check_metadata = lvl == Level::Root || s.x_embedded_resource;
    if s.x_embedded_resource && s.type_ != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        out.push(if s.type_.is_empty() {
            Cause::required(path.child("type"), detail)
        } else {
            Cause::invalid(path.child("type"), BadValue::Str(s.type_.clone()), detail)
        });
    } else if s.type_.is_empty() && !s.x_int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(Cause::required(path.child("type"), detail));
    }
    if s.x_embedded_resource && s.additional_properties.is_some() {
        out.push(Cause::forbidden(
            path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !s.type_.is_empty() && s.type_ != "object" {
        out.push(Cause::invalid(
            path.child("type"),
            BadValue::Str(s.type_.clone()),
            "must be object at the root",
        ));
    }
    if check_metadata {
        for key in ["kind", "apiVersion"] {
            if let Some(p) = s.properties.get(key)
                && p.type_ != "string"
            {
                out.push(Cause::invalid(
                    path.child("properties").key(key).child("type"),
                    BadValue::Str(p.type_.clone()),
                    "must be string",
                ));
            }
        }
    }
    if let Some(meta) = s.properties.get("metadata") {
        metadata_invariants(
            meta,
            check_metadata,
            lvl,
            &path.child("properties").key("metadata"),
            out,
        );
    }
    if s.x_embedded_resource && !preserve && s.properties.is_empty() {
        out.push(Cause::required(
            path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `anyOf: [{type: integer}, {type: string}]` exactly: the int-or-string idiom.
fn is_int_or_string_pair(any_of: &[Props]) -> bool {
    let only_type = |p: &Props, t: &str| {
        p.type_ == t
            && *p
                == Props {
                    type_: t.to_string(),
                    ..Props::default()
                }
    };
    any_of.len() == 2 && only_type(&any_of[0], "integer") && only_type(&any_of[1], "string")
}

fn metadata_invariants(
    s: &Props,
    check_metadata: bool,
    lvl: Level,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    if check_metadata && s.type_ != "object" {
        out.push(Cause::invalid(
            path.child("type"),
            BadValue::Str(s.type_.clone()),
            "must be object",
        ));
    }
    if lvl != Level::Root {
        return;
    }
    // Only `name` and `generateName` may be restricted; type and default are ignored here.
    let has_name = s.properties.contains_key("name");
    let has_generate_name = s.properties.contains_key("generateName");
    let only_names = (has_name && has_generate_name && s.properties.len() == 2)
        || ((has_name || has_generate_name) && s.properties.len() == 1);
    let rest = Props {
        type_: String::new(),
        default: None,
        properties: if only_names {
            Default::default()
        } else {
            s.properties.clone()
        },
        ..s.clone()
    };
    if !is_empty_structural(&rest) {
        out.push(Cause::forbidden(
            path.clone(),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// Whether the structural form of a schema holds nothing (the fields kept by the structural
/// conversion: externalDocs and example are not).
fn is_empty_structural(s: &Props) -> bool {
    s.properties.is_empty()
        && s.items.is_none()
        && s.additional_properties.is_none()
        && s.description.is_empty()
        && s.title.is_empty()
        && !s.nullable
        && s.default.is_none()
        && s.x_preserve_unknown_fields != Some(true)
        && !s.x_embedded_resource
        && !s.x_int_or_string
        && s.x_list_map_keys.is_empty()
        && s.x_list_type.is_none()
        && s.x_map_type.is_none()
        && s.x_validations.is_empty()
        && s.format.is_empty()
        && s.maximum.is_none()
        && !s.exclusive_maximum
        && s.minimum.is_none()
        && !s.exclusive_minimum
        && s.max_length.is_none()
        && s.min_length.is_none()
        && s.pattern.is_empty()
        && s.max_items.is_none()
        && s.min_items.is_none()
        && !s.unique_items
        && s.multiple_of.is_none()
        && s.enum_.is_empty()
        && s.max_properties.is_none()
        && s.min_properties.is_none()
        && s.required.is_empty()
        && s.all_of.is_empty()
        && s.any_of.is_empty()
        && s.one_of.is_empty()
        && s.not.is_none()
}

/// The value-validation part of a node: its junctors and its pattern.
fn value_validation(
    v: &Props,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &Path,
    out: &mut Vec<Cause>,
) {
    if !skip_any_of {
        for (i, n) in v.any_of.iter().enumerate() {
            nested(n, false, &path.child("anyOf").index(i), out);
        }
    }
    for (i, n) in v.all_of.iter().enumerate() {
        nested(
            n,
            skip_first_all_of_any_of && i == 0,
            &path.child("allOf").index(i),
            out,
        );
    }
    for (i, n) in v.one_of.iter().enumerate() {
        nested(n, false, &path.child("oneOf").index(i), out);
    }
    if let Some(n) = &v.not {
        nested(n, false, &path.child("not"), out);
    }
    if !v.pattern.is_empty()
        && let Err(e) = regexp::compile(&v.pattern)
    {
        out.push(Cause::invalid(
            path.child("pattern"),
            BadValue::Str(v.pattern.clone()),
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
}

/// A schema under a junctor: only value validations are allowed.
fn nested(v: &Props, skip_any_of: bool, path: &Path, out: &mut Vec<Cause>) {
    value_validation(v, skip_any_of, false, path, out);
    if let Some(items) = v.items_schema() {
        nested(items, false, &path.child("items"), out);
    }
    for (k, p) in &v.properties {
        nested(p, false, &path.child("properties").key(k), out);
    }
    let forbid = |out: &mut Vec<Cause>, key: &str, detail: &str| {
        out.push(Cause::forbidden(path.child(key), detail));
    };
    if !v.type_.is_empty() {
        forbid(out, "type", "must be empty to be structural");
    }
    if v.additional_properties.is_some() {
        forbid(
            out,
            "additionalProperties",
            "must be undefined to be structural",
        );
    }
    if v.default.is_some() {
        forbid(out, "default", "must be undefined to be structural");
    }
    if !v.title.is_empty() {
        forbid(out, "title", "must be empty to be structural");
    }
    if !v.description.is_empty() {
        forbid(out, "description", "must be empty to be structural");
    }
    if v.nullable {
        forbid(out, "nullable", "must be false to be structural");
    }
    if v.external_docs.is_some() {
        forbid(out, "externalDocs", "must be undefined to be structural");
    }
    if v.x_preserve_unknown_fields == Some(true) {
        forbid(
            out,
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        );
    }
    if v.x_embedded_resource {
        forbid(
            out,
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        );
    }
    if v.x_int_or_string {
        forbid(
            out,
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        );
    }
    if !v.x_list_map_keys.is_empty() {
        forbid(
            out,
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        );
    }
    if v.x_list_type.is_some() {
        forbid(
            out,
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        );
    }
    if v.x_map_type.is_some() {
        forbid(
            out,
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        );
    }
    if !v.x_validations.is_empty() {
        forbid(
            out,
            "x-kubernetes-validations",
            "must be empty to be structural",
        );
    }
    if v.properties.contains_key("metadata") {
        out.push(Cause::forbidden(
            path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// Completeness: every property or items named in a junctor of `v` must exist in the
/// structure `s`. Only the junctors of the root (and junctors nested in them) are checked.
fn completeness_of_value_validation(
    v: &Props,
    s: &Props,
    s_path: &Path,
    v_path: &Path,
    out: &mut Vec<Cause>,
) {
    if let Some(n) = &v.not {
        nested_completeness(n, Some(s), s_path, &v_path.child("not"), out);
    }
    for (name, list) in [
        ("allOf", &v.all_of),
        ("anyOf", &v.any_of),
        ("oneOf", &v.one_of),
    ] {
        for (i, n) in list.iter().enumerate() {
            nested_completeness(n, Some(s), s_path, &v_path.child(name).index(i), out);
        }
    }
}

fn nested_completeness(
    v: &Props,
    s: Option<&Props>,
    s_path: &Path,
    v_path: &Path,
    out: &mut Vec<Cause>,
) {
    let Some(s) = s else {
        out.push(Cause::required(
            s_path.clone(),
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    completeness_of_value_validation(v, s, s_path, v_path, out);
    if let Some(items) = v.items_schema() {
        nested_completeness(
            items,
            s.items_schema(),
            &s_path.child("items"),
            &v_path.child("items"),
            out,
        );
    }
    for (k, p) in &v.properties {
        match s.properties.get(k) {
            Some(sp) => nested_completeness(
                p,
                Some(sp),
                &s_path.child("properties").key(k),
                &v_path.child("properties").key(k),
                out,
            ),
            None => out.push(Cause::required(
                s_path.child("properties").key(k),
                format!(
                    "because it is defined in {}",
                    v_path.child("properties").key(k)
                ),
            )),
        }
    }
}
