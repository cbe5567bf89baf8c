//! The scale subresource's own checks of a custom resource: the values at
//! `specReplicasPath` and `statusReplicasPath` must be non-negative int32s, the value at
//! `labelSelectorPath` a string. Fields are named by the configured paths (`.spec.replicas`).

use crate::cause::{BadValue, Cause, Path};
use crate::crd::Scale;
use serde_json::Value;

/// Appends the scale subresource's errors for `obj` (`ValidateScaleSpec` and
/// `ValidateScaleStatus`).
pub fn validate(scale: &Scale, obj: &Value, out: &mut Vec<Cause>) {
    replicas(&scale.spec_replicas_path, obj, out);
    validate_status(scale, obj, out);
}

/// `ValidateScaleStatus` alone, as a status update runs it.
pub fn validate_status(scale: &Scale, obj: &Value, out: &mut Vec<Cause>) {
    replicas(&scale.status_replicas_path, obj, out);
    if let Some(selector) = &scale.label_selector_path
        && let Err(e) = nested(obj, selector, "string", Value::is_string)
    {
        out.push(Cause::invalid(
            Path::from_rendered(selector.as_str()),
            BadValue::Str(String::new()),
            e,
        ));
    }
}

fn replicas(json_path: &str, obj: &Value, out: &mut Vec<Cause>) {
    let field = || Path::from_rendered(json_path);
    let value = match nested(obj, json_path, "int64", |v| {
        v.as_number()
            .and_then(crate::go::json::decoded_int)
            .is_some()
    }) {
        Err(e) => {
            out.push(Cause::invalid(field(), BadValue::Int(0), e));
            return;
        }
        Ok(None) => return,
        Ok(Some(v)) => v
            .as_number()
            .and_then(crate::go::json::decoded_int)
            .unwrap_or(0),
    };
    if value < 0 {
        out.push(Cause::invalid(
            field(),
            BadValue::Int(value),
            "should be a non-negative integer",
        ));
    } else if value > i64::from(i32::MAX) {
        out.push(Cause::invalid(
            field(),
            BadValue::Int(value),
            format!("should be less than or equal to {}", i32::MAX),
        ));
    }
}

/// `unstructured.NestedFieldNoCopy` followed by a type assertion: the value at a dotted
/// path (`.spec.replicas`), `None` when a step is missing, or the accessor error.
fn nested<'a>(
    obj: &'a Value,
    json_path: &str,
    want: &str,
    is_want: fn(&Value) -> bool,
) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = json_path
        .strip_prefix('.')
        .unwrap_or(json_path)
        .split('.')
        .collect();
    let mut cur = obj;
    for (i, f) in fields.iter().enumerate() {
        match cur {
            Value::Null => return Ok(None),
            Value::Object(m) => match m.get(*f) {
                Some(v) => cur = v,
                None => return Ok(None),
            },
            other => {
                return Err(accessor_error(
                    &fields[..=i],
                    other,
                    "map[string]interface{}",
                ));
            }
        }
    }
    if is_want(cur) {
        Ok(Some(cur))
    } else {
        Err(accessor_error(&fields, cur, want))
    }
}

fn accessor_error(fields: &[&str], v: &Value, want: &str) -> String {
    let mut shown = String::new();
    crate::go::fmt::value_v(v, &mut shown);
    format!(
        ".{} accessor error: {shown} is of the type {}, expected {want}",
        fields.join("."),
        crate::go::fmt::type_name(v)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(obj: Value) -> Vec<String> {
        let scale = Scale {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        };
        let mut out = Vec::new();
        validate(&scale, &obj, &mut out);
        out.iter().map(Cause::message).collect()
    }

    #[test]
    fn replicas_must_be_non_negative_int32() {
        assert!(messages(json!({"spec": {"replicas": 3}, "status": {"replicas": 0}})).is_empty());
        assert!(messages(json!({})).is_empty());
        assert_eq!(
            messages(json!({"spec": {"replicas": -1}})),
            vec![".spec.replicas: Invalid value: -1: should be a non-negative integer"]
        );
        assert_eq!(
            messages(json!({"status": {"replicas": 2147483648_i64}})),
            vec![
                ".status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
            ]
        );
    }

    #[test]
    fn accessor_errors_name_the_go_types() {
        assert_eq!(
            messages(json!({"spec": {"replicas": "3"}})),
            vec![
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64"
            ]
        );
        assert_eq!(
            messages(json!({"spec": {"replicas": 1.5}})),
            vec![
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
            ]
        );
        assert_eq!(
            messages(json!({"spec": "x", "status": {"selector": 1}})),
            vec![
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected map[string]interface{}",
                ".status.selector: Invalid value: \"\": .status.selector accessor error: 1 is of the type int64, expected string"
            ]
        );
    }
}
