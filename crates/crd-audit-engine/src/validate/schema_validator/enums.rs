//! The `enum` keyword (with `nullable` handled by the type check): the enum part of
//! kube-openapi's `basicCommonValidator` (`validate/validator.go`), which converts the value
//! to each enum value's Go type before `reflect.DeepEqual`.

use super::*;

/// Whether `data` matches one enum value the way kube-openapi's common validator compares:
/// the data converted to the enum value's Go type, then `reflect.DeepEqual`.
pub(super) fn enum_value_matches(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (_, Value::Null) => false,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(n), _) => {
            let d = Num::of(n);
            match e {
                Value::Number(m) => match (d, Num::of(m)) {
                    (Num::I(i), Num::I(j)) => i == j,
                    (Num::I(i), Num::F(g)) => i as f64 == g,
                    (Num::F(f), Num::I(j)) => go_f64_to_i64(f) == j,
                    (Num::F(f), Num::F(g)) => f == g,
                },
                Value::String(s) => match d {
                    Num::I(i) => go_int_to_string(i) == *s,
                    Num::F(_) => false,
                },
                _ => false,
            }
        }
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            deep_equal(data, e)
        }
        _ => false,
    }
}

pub(super) fn enum_error(name: String, v: &Value, values: &[Value]) -> OErr {
    let mut listed = String::from("[");
    for (i, e) in values.iter().enumerate() {
        if i > 0 {
            listed.push(' ');
        }
        go::fmt::value_v(e, &mut listed);
    }
    listed.push(']');
    let msg = format!("{name} in body should be one of {listed}");
    let supported = values
        .iter()
        .map(|e| match e {
            Value::String(s) => s.clone(),
            other => go::json::marshal(other),
        })
        .collect();
    OErr {
        name,
        msg,
        conv: Conv::NotSupported(bad_value_of(v), supported),
    }
}
