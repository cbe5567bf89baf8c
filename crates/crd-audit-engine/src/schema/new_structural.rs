//! The conversion of a schema into the API server's structural form (`NewStructural`), which
//! fails on keywords a structural schema cannot hold. Such a failure hides every other
//! structural check of that version.

use super::{Items, Props, SchemaOrBool};

/// The first reason the schema cannot be converted, in the order the upstream conversion
/// visits the schema (the node's own keywords, its junctors, additionalProperties, items,
/// properties).
pub fn conversion_error(s: &Props) -> Option<String> {
    unsupported_keyword(s)
        .or_else(|| junctors_error(s))
        .or_else(|| generics_error(s))
        .or_else(|| extensions_error(s))
        .or_else(|| match &s.items {
            Some(Items::Array(_)) => {
                Some("OpenAPIV3Schema 'items' must be a schema, but is an array".to_string())
            }
            Some(Items::Schema(item)) => conversion_error(item),
            None => None,
        })
        .or_else(|| s.properties.values().find_map(|p| conversion_error(p)))
}

fn unsupported_keyword(s: &Props) -> Option<String> {
    let name = if !s.id.is_empty() {
        "id"
    } else if !s.schema.is_empty() {
        "schema"
    } else if s.reference.as_deref().is_some_and(|r| !r.is_empty()) {
        "$ref"
    } else if !s.pattern_properties.is_empty() {
        "patternProperties"
    } else if !s.dependencies.is_empty() {
        "dependencies"
    } else if s.additional_items.is_some() {
        "additionalItems"
    } else if !s.definitions.is_empty() {
        "definitions"
    } else {
        return None;
    };
    Some(format!("OpenAPIV3Schema '{name}' is not supported"))
}

fn junctors_error(s: &Props) -> Option<String> {
    // Schemas under junctors are converted with the same checks as structural nodes.
    s.not
        .as_deref()
        .and_then(conversion_error)
        .or_else(|| s.all_of.iter().find_map(conversion_error))
        .or_else(|| s.any_of.iter().find_map(conversion_error))
        .or_else(|| s.one_of.iter().find_map(conversion_error))
}

fn generics_error(s: &Props) -> Option<String> {
    match &s.additional_properties {
        Some(SchemaOrBool::Schema(ap)) => conversion_error(ap),
        _ => None,
    }
}

fn extensions_error(s: &Props) -> Option<String> {
    (s.x_preserve_unknown_fields == Some(false)).then(|| {
        "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: serde_json::Value) -> Option<String> {
        conversion_error(&Props::from_value("s", &v).unwrap())
    }

    #[test]
    fn unsupported_keywords_fail_conversion() {
        assert_eq!(err(json!({"type": "object"})), None);
        assert_eq!(
            err(json!({"properties": {"a": {"$ref": "#/x"}}})).as_deref(),
            Some("OpenAPIV3Schema '$ref' is not supported")
        );
        assert_eq!(
            err(json!({"allOf": [{"items": [{"type": "string"}]}]})).as_deref(),
            Some("OpenAPIV3Schema 'items' must be a schema, but is an array")
        );
        assert!(
            err(json!({"properties": {"a": {"x-kubernetes-preserve-unknown-fields": false}}}))
                .unwrap()
                .contains("must be true or undefined")
        );
    }
}
