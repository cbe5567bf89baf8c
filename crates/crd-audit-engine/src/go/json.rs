//! Go's `encoding/json` package (`src/encoding/json/encode.go`, `decode.go`) as far as the
//! API server's messages show it: `json.Marshal` of a decoded value (`map[string]interface{}`
//! keys sorted, `int64`/`float64` numbers) and the kind words of decode errors.

use serde_json::Value;

use std::fmt::Write;

use super::strconv::{format_f, shortest_digits, shortest_integer, special_float};

/// Go's `encoding/json` rendering of a float64.
pub fn float_json(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let abs = f.abs();
    let (digits, exp) = shortest_digits(f);
    if !(1e-6..1e21).contains(&abs) {
        let mut out = String::new();
        if f < 0.0 {
            out.push('-');
        }
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{}", exp.unsigned_abs());
        out
    } else {
        format_f(f < 0.0, &digits, exp)
    }
}

/// Go's `encoding/json` string encoding (HTML-safe, as `json.Marshal` does).
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.Marshal` of a value decoded from JSON (`map[string]interface{}` keys sorted,
/// `int64`/`float64` numbers).
pub fn marshal(v: &Value) -> String {
    let mut out = String::new();
    json_into(v, &mut out);
    out
}

/// The byte length of `json.Marshal` of `v` ([`marshal`]), computed without writing it.
pub fn marshal_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_json(n).len(),
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(marshal_len).sum::<usize>()
        }
        Value::Object(map) => object_len(map.iter().map(|(k, v)| (k.as_str(), marshal_len(v)))),
    }
}

/// The byte length of [`json_string`] of `s`.
pub fn string_len(s: &str) -> usize {
    2 + s.chars().map(escaped_len).sum::<usize>()
}

/// How many bytes [`json_string`] writes for `c`.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\x08' | '\x0c' => 2,
        '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => 6,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The byte length of a JSON object (as [`marshal`] writes it) with these keys and these
/// lengths of their values.
pub fn object_len<'a>(members: impl Iterator<Item = (&'a str, usize)>) -> usize {
    let (mut n, mut count) = (2usize, 0usize);
    for (k, len) in members {
        n += string_len(k) + 1 + len;
        count += 1;
    }
    n + count.saturating_sub(1)
}

fn json_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_json(n)),
        Value::String(s) => json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // serde_json's default map is sorted by key, as Go's json.Marshal sorts them.
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(k, out);
                out.push(':');
                json_into(item, out);
            }
            out.push('}');
        }
    }
}

/// A JSON number as Go renders it after decoding into `int64` or `float64`.
pub fn number_json(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_json(n.as_f64().unwrap_or(0.0))
    }
}

/// The int64 the API server holds for a JSON number, if any: its decoder makes every number
/// whose JSON text is an integer an int64, and Go writes an integral float64 as its shortest
/// digits (`1e20` as `100000000000000000000`, too large for int64; `2^60` as
/// `1152921504606847000`).
pub fn decoded_int(n: &serde_json::Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    if !n.is_f64() {
        return None; // a u64 beyond i64: a float64 in Go
    }
    shortest_integer(n.as_f64()?).and_then(|i| i64::try_from(i).ok())
}

/// The JSON kind word Go's `encoding/json` uses in its decode errors
/// (`cannot unmarshal <kind> into ...`).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go_json() {
        assert_eq!(float_json(3.0), "3");
        assert_eq!(float_json(1e21), "1e+21");
        assert_eq!(float_json(1e20), "100000000000000000000");
        assert_eq!(float_json(0.0000001), "1e-7");
        assert_eq!(float_json(0.5), "0.5");
    }

    #[test]
    fn json_is_html_safe_and_sorted() {
        let v: Value = serde_json::from_str(r#"{"b":1,"a":"<x>&","c":[1.5,2.0]}"#).unwrap();
        assert_eq!(
            marshal(&v),
            r#"{"a":"\u003cx\u003e\u0026","b":1,"c":[1.5,2]}"#
        );
    }
}
