//! YAML scalar resolution as go-yaml v2 does it (YAML 1.1 types, tags, timestamps), and
//! mapping keys as `sigs.k8s.io/yaml` turns them into JSON object keys.

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

/// The type go-yaml v2 resolves a scalar to (its short tag, as error messages name it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolved {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

impl Resolved {
    fn tag(self) -> &'static str {
        match self {
            Resolved::Null => "!!null",
            Resolved::Bool => "!!bool",
            Resolved::Int => "!!int",
            Resolved::Float => "!!float",
            Resolved::Str => "!!str",
        }
    }
}

/// go-yaml v2's resolution of an untagged plain scalar: its type, and its JSON value after
/// the JSON round trip of `sigs.k8s.io/yaml` (an error for infinities and NaN, which
/// `json.Marshal` refuses). Timestamps resolve as strings: go-yaml v2 decodes them into an
/// `interface{}` as their text.
fn resolve(s: &str) -> (Resolved, Result<Value, String>) {
    let unsupported = |v: &str| Err(format!("json: unsupported value: {v}"));
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return (Resolved::Null, Ok(Value::Null)),
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return (Resolved::Bool, Ok(Value::Bool(true)));
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return (Resolved::Bool, Ok(Value::Bool(false)));
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return (Resolved::Float, unsupported("+Inf"));
        }
        "-.inf" | "-.Inf" | "-.INF" => return (Resolved::Float, unsupported("-Inf")),
        ".nan" | ".NaN" | ".NAN" => return (Resolved::Float, unsupported("NaN")),
        _ => {}
    }
    // A number beyond float64 is refused by Go's ParseFloat (Rust's gives infinity): the
    // scalar then stays a string.
    let float = |text: &str| {
        text.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| (Resolved::Float, Ok(float_after_json_round_trip(f))))
    };
    match s.as_bytes()[0] {
        // `strconv.ParseFloat` of the text itself, which allows `_` between digits.
        b'.' => {
            let plain: String = s.chars().filter(|c| *c != '_').collect();
            if is_yaml_float(&plain)
                && underscores_between_digits(s)
                && let Some(r) = float(&plain)
            {
                return r;
            }
        }
        // Without any `_`: `ParseInt(s, 0, 64)`, `ParseUint`, then a YAML-syntax float.
        b'+' | b'-' | b'0'..=b'9' => {
            let plain: String = s.chars().filter(|c| *c != '_').collect();
            if let Some(v) = parse_go_int(&plain) {
                return (Resolved::Int, Ok(v));
            }
            if is_yaml_float(&plain)
                && let Some(r) = float(&plain)
            {
                return r;
            }
        }
        _ => {}
    }
    (Resolved::Str, Ok(Value::String(s.to_string())))
}

/// Whether every `_` of a number stands between two digits (Go's `underscoreOK` for a
/// decimal number).
fn underscores_between_digits(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).all(|i| {
        b[i] != b'_'
            || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    })
}

/// go-yaml v2's resolution of a plain scalar into a JSON value (after the JSON round trip of
/// `sigs.k8s.io/yaml`).
pub fn resolve_plain(s: &str) -> Result<Value, String> {
    resolve(s).1
}

/// A float64 after `json.Marshal` and the API server's number decoding: an integral value
/// whose shortest digits fit int64 becomes that int64 (Go's shortest formatting).
pub fn float_after_json_round_trip(f: f64) -> Value {
    if let Some(i) = crate::go::strconv::shortest_integer(f).and_then(|i| i64::try_from(i).ok()) {
        return Value::from(i);
    }
    Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `strconv.ParseInt(s, 0, 64)` then `ParseUint`: decimal, `0x`, `0o`, `0b`, and legacy
/// octal with a leading `0`.
fn parse_go_int(s: &str) -> Option<Value> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    let (radix, digits) = if let Some(r) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, r)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        if magnitude <= i64::MAX as u128 + 1 {
            return Some(Value::from((magnitude as i128).wrapping_neg() as i64));
        }
        return None;
    }
    if magnitude <= i64::MAX as u128 {
        Some(Value::from(magnitude as i64))
    } else if magnitude <= u64::MAX as u128 {
        // go-yaml keeps it as uint64; JSON keeps its digits exactly.
        Some(Value::from(magnitude as u64))
    } else {
        None
    }
}

/// go-yaml v2's float syntax: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2's resolution of a tagged scalar (plain or quoted): the standard tags `!!str`,
/// `!!null`, `!!bool`, `!!int`, `!!float` and `!!timestamp` must fit the text (an `!!int`
/// is accepted as a `!!float`), `!!binary` is decoded from base64, and any other tag keeps
/// the text as a string.
pub(super) fn resolve_tagged(tag: &Tag, s: &str) -> Result<Value, String> {
    let standard = tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!";
    let wanted = match tag.suffix.as_str() {
        _ if !standard => return Ok(Value::String(s.to_string())),
        "str" => return Ok(Value::String(s.to_string())),
        "binary" => return decode_binary(s).map(Value::String),
        "timestamp" if is_go_yaml_timestamp(s) => return Ok(Value::String(s.to_string())),
        "timestamp" => "!!timestamp",
        "null" => Resolved::Null.tag(),
        "bool" => Resolved::Bool.tag(),
        "int" => Resolved::Int.tag(),
        "float" => Resolved::Float.tag(),
        _ => return Ok(Value::String(s.to_string())),
    };
    let (kind, value) = resolve(s);
    if kind.tag() == wanted || (wanted == "!!float" && kind == Resolved::Int) {
        value
    } else {
        Err(format!(
            "yaml: cannot decode {} `{s}` as a {wanted}",
            kind.tag()
        ))
    }
}

/// `!!binary`: the text is standard base64 (line breaks ignored); the bytes become a JSON
/// string as `json.Marshal` writes one, each byte that is not part of valid UTF-8 replaced
/// by U+FFFD.
fn decode_binary(s: &str) -> Result<String, String> {
    let invalid = || "yaml: !!binary value contains invalid base64 data".to_string();
    let bytes = crate::go::base64::decode(crate::go::base64::Alphabet::Standard, s.as_bytes())
        .map_err(|_| invalid())?;
    let mut out = String::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push('\u{fffd}');
                rest = &after[1..];
            }
        }
    }
    Ok(out)
}

/// go-yaml v2's `parseTimestamp`: `YYYY-M-D`, optionally followed by `T`, `t` or a space and
/// `h:m:s` with an optional fraction, and (after `T` or `t`) a zone `Z` or `±hh:mm`.
fn is_go_yaml_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    // 1 or 2 digits (Go's unpadded layout fields), or exactly `n` when `n` > 2.
    let number = |i: &mut usize, min: usize, max: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i - start < min {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let expect = |i: &mut usize, c: u8| -> bool {
        if b.get(*i) == Some(&c) {
            *i += 1;
            true
        } else {
            false
        }
    };
    let Some(year) = number(&mut i, 4, 4) else {
        return false;
    };
    if !expect(&mut i, b'-') {
        return false;
    }
    let Some(month) = number(&mut i, 1, 2).filter(|m| (1..=12).contains(m)) else {
        return false;
    };
    if !expect(&mut i, b'-') {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if number(&mut i, 1, 2).is_none_or(|d| d < 1 || d > days) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    if number(&mut i, 1, 2).is_none_or(|h| h > 23)
        || !expect(&mut i, b':')
        || number(&mut i, 1, 2).is_none_or(|m| m > 59)
        || !expect(&mut i, b':')
        || number(&mut i, 1, 2).is_none_or(|s| s > 59)
    {
        return false;
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i += 1;
            number(&mut i, 2, 2).is_some_and(|h| h <= 24)
                && expect(&mut i, b':')
                && number(&mut i, 2, 2).is_some_and(|m| m <= 59)
                && i == b.len()
        }
        _ => false,
    }
}

/// A YAML mapping key as `sigs.k8s.io/yaml` converts go-yaml's value of it into a JSON
/// object key: strings as they are, ints in decimal, bools as `true`/`false`, floats as
/// `strconv.FormatFloat(f, 'g', -1, 32)` (infinities `.inf`/`-.inf`, NaN `.nan`); a null or
/// a uint64 key is refused with its Go type and `%#v`.
pub(super) enum GoKey {
    Text(String),
    Unsupported(&'static str, String),
}

fn float_key(f: f64) -> GoKey {
    let s = crate::go::strconv::format_float32_g(f as f32);
    GoKey::Text(match s.as_str() {
        "+Inf" => ".inf".to_string(),
        "-Inf" => "-.inf".to_string(),
        "NaN" => ".nan".to_string(),
        _ => s,
    })
}

/// The key a decoded value makes (an alias used as a key); maps and lists are refused as
/// go-yaml refuses them.
pub(super) fn go_key_of_value(v: &Value) -> Result<GoKey, String> {
    Ok(match v {
        Value::String(s) => GoKey::Text(s.clone()),
        Value::Bool(b) => GoKey::Text(b.to_string()),
        Value::Null => GoKey::Unsupported("%!s(<nil>)", "<nil>".to_string()),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => GoKey::Text(i.to_string()),
            (None, Some(u)) => GoKey::Unsupported("uint64", format!("{u:#x}")),
            _ => float_key(n.as_f64().unwrap_or(0.0)),
        },
        Value::Array(_) | Value::Object(_) => {
            return Err(format!(
                "yaml: invalid map key: {}",
                crate::go::fmt::sharp_v(v)
            ));
        }
    })
}

/// The key a scalar makes: resolved as go-yaml resolves it (a float key keeps its float64,
/// infinities and NaN included, before the JSON round trip a value goes through).
pub(super) fn go_key_of_scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<GoKey, String> {
    if tag.is_none() && style != ScalarStyle::Plain {
        return Ok(GoKey::Text(text.to_string()));
    }
    let (resolved, value) = resolve(text);
    let kind = match tag {
        None => resolved,
        Some(t)
            if (t.handle == "tag:yaml.org,2002:" || t.handle == "!!")
                && matches!(t.suffix.as_str(), "null" | "bool" | "int" | "float") =>
        {
            let wanted = format!("!!{}", t.suffix);
            if resolved.tag() == wanted {
                resolved
            } else if t.suffix == "float" && resolved == Resolved::Int {
                Resolved::Float
            } else {
                return Err(format!(
                    "yaml: cannot decode {} `{text}` as a {wanted}",
                    resolved.tag()
                ));
            }
        }
        // `!!str`, `!!binary`, `!!timestamp`, other tags: a string.
        Some(t) => return go_key_of_value(&resolve_tagged(t, text)?),
    };
    Ok(match kind {
        Resolved::Null => GoKey::Unsupported("%!s(<nil>)", "<nil>".to_string()),
        Resolved::Str => match value {
            Ok(Value::String(s)) => GoKey::Text(s),
            _ => GoKey::Text(text.to_string()),
        },
        Resolved::Float => float_key(match (&value, text) {
            (Ok(Value::Number(n)), _) if resolved == Resolved::Int => n.as_f64().unwrap_or(0.0),
            (_, ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF") => f64::INFINITY,
            (_, "-.inf" | "-.Inf" | "-.INF") => f64::NEG_INFINITY,
            (_, ".nan" | ".NaN" | ".NAN") => f64::NAN,
            _ => text.replace('_', "").parse().unwrap_or(0.0),
        }),
        Resolved::Int | Resolved::Bool => go_key_of_value(&value?)?,
    })
}
