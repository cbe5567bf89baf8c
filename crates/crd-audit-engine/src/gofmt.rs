//! Go's renderings of values, so that messages match kube-apiserver byte for byte:
//! `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`), `%q` of a string
//! (`strconv.Quote`) and `encoding/json.Marshal` of a decoded JSON value.

use serde_json::Value;
use std::fmt::Write;

/// The shortest decimal digits of `f` (no sign, no dot) and the decimal exponent of the
/// first digit, e.g. 1234.5 -> ("12345", 3). `f` must be finite and non-zero.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-trip representation, like Go's.
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

fn push_exponent(out: &mut String, exp: i32) {
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    let _ = write!(out, "{e}");
}

/// `%e` with the shortest precision: `d.ddde±XX`.
fn format_e(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    push_exponent(&mut out, exp);
    out
}

/// `%f` with the shortest precision.
fn format_f(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..(-point) {
            out.push('0');
        }
        out.push_str(digits);
    } else if point as usize >= digits.len() {
        out.push_str(digits);
        for _ in 0..(point as usize - digits.len()) {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

fn special_float(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else if f == 0.0 {
        Some(if f.is_sign_negative() { "-0" } else { "0" }.into())
    } else {
        None
    }
}

/// Go's `fmt.Sprintf("%v", f)` for a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`).
pub fn float_v(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let (digits, exp) = shortest_digits(f);
    // strconv 'g' with the shortest precision decides with a precision of 6.
    if !(-4..6).contains(&exp) {
        format_e(f < 0.0, &digits, exp)
    } else {
        format_f(f < 0.0, &digits, exp)
    }
}

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

/// Whether Go's `strconv.IsPrint` holds for `c` (approximated with Rust's classification).
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    // Format characters (Cf), private use, and noncharacters are not printable in Go.
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF | 0xFFFE | 0xFFFF | 0xE0001 | 0xE0020..=0xE007F)
}

/// Go's `strconv.Quote` (what `%q` prints for a string).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
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

/// Go's `json.Marshal` of a value decoded from JSON (`map[string]interface{}` keys sorted,
/// `int64`/`float64` numbers).
pub fn json(v: &Value) -> String {
    let mut out = String::new();
    json_into(v, &mut out);
    out
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

/// The integer that the shortest decimal rendering of an integral float spells (Go's
/// `strconv.FormatFloat(f, 'f', -1, 64)`), if it is integral and below 10^40.
pub fn shortest_integer(f: f64) -> Option<i128> {
    if f.fract() != 0.0 || !f.is_finite() {
        return None;
    }
    if f.abs() < 9_007_199_254_740_992.0 {
        return Some(f as i128);
    }
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let zeros = exp - (digits.len() as i32 - 1);
    if !(0..=20).contains(&zeros) {
        return None;
    }
    let mut v: i128 = digits.parse().ok()?;
    for _ in 0..zeros {
        v *= 10;
    }
    Some(if f < 0.0 { -v } else { v })
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

    #[test]
    fn floats_print_like_go_json() {
        assert_eq!(float_json(3.0), "3");
        assert_eq!(float_json(1e21), "1e+21");
        assert_eq!(float_json(1e20), "100000000000000000000");
        assert_eq!(float_json(0.0000001), "1e-7");
        assert_eq!(float_json(0.5), "0.5");
    }

    #[test]
    fn quote_matches_strconv() {
        assert_eq!(quote("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(quote("\u{1}"), r#""\x01""#);
        assert_eq!(quote("é"), "\"é\"");
        assert_eq!(quote("\u{200b}"), r#""\u200b""#);
    }

    #[test]
    fn json_is_html_safe_and_sorted() {
        let v: Value = serde_json::from_str(r#"{"b":1,"a":"<x>&","c":[1.5,2.0]}"#).unwrap();
        assert_eq!(json(&v), r#"{"a":"\u003cx\u003e\u0026","b":1,"c":[1.5,2]}"#);
    }
}
