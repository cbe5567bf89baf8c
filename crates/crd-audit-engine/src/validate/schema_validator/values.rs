//! Go value semantics the validator relies on: numbers as the API server's decoder holds them
//! (`int64` or `float64`), Go conversions, go-openapi/swag's `IsFloat64AJSONInteger`, and
//! `reflect.DeepEqual` of decoded JSON values.

use super::*;

// ---------------------------------------------------------------------------------------------
// Go value helpers

/// A JSON number as the API server's decoder holds it: `int64` when it is integral and fits,
/// else `float64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    I(i64),
    F(f64),
}

impl Num {
    pub(super) fn of(n: &Number) -> Num {
        match go::json::decoded_int(n) {
            Some(i) => Num::I(i),
            None => Num::F(n.as_f64().unwrap_or(0.0)),
        }
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    pub(super) fn bad_value(self) -> BadValue {
        match self {
            Num::I(i) => BadValue::Int(i),
            Num::F(f) => BadValue::Float(f),
        }
    }

    pub(super) fn v(self) -> String {
        match self {
            Num::I(i) => i.to_string(),
            Num::F(f) => go::fmt::float_v(f),
        }
    }
}

/// Go's conversion of a float64 to int64 (amd64: out of range and NaN give the minimum).
pub(super) fn go_f64_to_i64(f: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-TWO_63..TWO_63).contains(&f) {
        i64::MIN
    } else {
        f.trunc() as i64
    }
}

/// Go's `string(rune(i))` for an int64 converted to a string.
pub(super) fn go_int_to_string(i: i64) -> String {
    u32::try_from(i)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
        .to_string()
}

/// `IsFloat64AJSONInteger` of go-openapi/swag (integers within ±(2^53-1), with a relative
/// tolerance of 1e-9).
pub(super) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if f.is_nan() || f.is_infinite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    let diff = (f - rounded).abs();
    diff == 0.0 || diff < 1e-9 * rounded.abs()
}

/// A value with its numbers normalized the way the API server decodes them.
pub(super) fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => match Num::of(n) {
            Num::I(i) => Value::from(i),
            Num::F(f) => Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
        },
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        other => other.clone(),
    }
}

/// `reflect.DeepEqual` of two decoded JSON values (int64 and float64 never equal).
pub(super) fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match (Num::of(x), Num::of(y)) {
            (Num::I(i), Num::I(j)) => i == j,
            (Num::F(f), Num::F(g)) => f == g,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => false,
    }
}

pub(super) fn bad_value_of(v: &Value) -> BadValue {
    match v {
        Value::Number(n) => Num::of(n).bad_value(),
        Value::Null => BadValue::Json(Value::Null),
        other => BadValue::from_value(other),
    }
}
