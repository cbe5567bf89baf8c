//! Go's `fmt` package (`src/fmt/print.go`): `%v` and `%T` of the values the API server holds
//! after decoding JSON (`%q` is [`super::strconv::quote`]).

use serde_json::Value;

use super::json::decoded_int;
use super::strconv::format_float_g;

/// `fmt.Sprintf("%v", f)` for a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`).
pub fn float_v(f: f64) -> String {
    format_float_g(f)
}

/// Go's `%v` of a number as the API server holds it (`int64` or `float64`).
pub fn number_v(n: &serde_json::Number) -> String {
    match decoded_int(n) {
        Some(i) => i.to_string(),
        None => float_v(n.as_f64().unwrap_or(0.0)),
    }
}

/// Go's `%v` of a decoded JSON value.
pub fn value_v(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_v(n)),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                value_v(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("map[");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                value_v(item, out);
            }
            out.push(']');
        }
    }
}

/// Go's `%#v` (and `%+#v`) of a value as go-yaml v2 decodes YAML into an `interface{}`:
/// `<nil>`, `true`, `1`, `0x...` for a uint64, `1.5`, `"text"` (Go-quoted),
/// `[]interface {}{...}` and `map[interface {}]interface {}{"k":v, ...}` (keys sorted; a
/// nested nil is `interface {}(nil)`). The keys of nested maps are strings here: YAML keys of
/// other types have become strings by then.
pub fn sharp_v(v: &Value) -> String {
    fn nested(v: &Value, out: &mut String) {
        match v {
            Value::Null => out.push_str("interface {}(nil)"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => out.push_str(&i.to_string()),
                (None, Some(u)) => out.push_str(&format!("{u:#x}")),
                _ => out.push_str(&format_float_g(n.as_f64().unwrap_or(0.0))),
            },
            Value::String(s) => out.push_str(&super::strconv::quote(s)),
            Value::Array(items) => {
                out.push_str("[]interface {}{");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    nested(item, out);
                }
                out.push('}');
            }
            Value::Object(m) => {
                out.push_str("map[interface {}]interface {}{");
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&super::strconv::quote(k));
                    out.push(':');
                    nested(&m[k.as_str()], out);
                }
                out.push('}');
            }
        }
    }
    if v.is_null() {
        return "<nil>".to_string();
    }
    let mut out = String::new();
    nested(v, &mut out);
    out
}

/// The Go type name of a decoded JSON value, as `%T` would print it.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if decoded_int(n).is_some() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go_v() {
        assert_eq!(float_v(10.0), "10");
        assert_eq!(float_v(0.5), "0.5");
        assert_eq!(float_v(1e6), "1e+06");
        assert_eq!(float_v(123456.0), "123456");
        assert_eq!(float_v(1234567.0), "1.234567e+06");
        assert_eq!(float_v(0.0001), "0.0001");
        assert_eq!(float_v(0.00001), "1e-05");
        assert_eq!(float_v(-2.5), "-2.5");
        assert_eq!(float_v(9007199254740993.0), "9.007199254740992e+15");
    }
}
