//! Documents from YAML or JSON text, decoded the way kubectl and the API server decode them
//! (`sigs.k8s.io/yaml`: YAML 1.1 scalars through go-yaml v2, then JSON into `int64`/`float64`).
//!
//! Every document carries its index in the stream and its first line, so that errors and
//! findings can name `file#doc` and a line.

use saphyr_parser::{Event, Input, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;

pub mod list;
pub mod positions;
pub mod stream;

/// Deepest nesting of mappings and sequences accepted in one document.
pub const MAX_DEPTH: usize = 1000;
/// Most values one document may expand to (guards against alias bombs).
pub const MAX_NODES: usize = 20_000_000;

/// One decoded document.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// Index of the document in its stream, counting from 0 (empty documents included).
    pub index: usize,
    /// 1-based line where the document's content starts.
    pub line: usize,
    /// The decoded document.
    pub value: Value,
}

impl Document {
    /// Document `index` of its stream, starting at `line`, holding `value`.
    pub fn new(index: usize, line: usize, value: Value) -> Document {
        Document { index, line, value }
    }
}

/// Why a document could not be read; `doc`/`line` locate it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.render())]
#[non_exhaustive]
pub struct LoadError {
    /// The name the caller gave the input (a file path, say).
    pub source_name: String,
    /// Index of the document in its stream, counting from 0, when the error is about one.
    pub doc: Option<usize>,
    /// 1-based line of the error, when known.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl LoadError {
    /// A load error of `source_name`, located at document `doc` and `line` when known.
    pub fn new(
        source_name: impl Into<String>,
        doc: Option<usize>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> LoadError {
        LoadError {
            source_name: source_name.into(),
            doc,
            line,
            message: message.into(),
        }
    }

    fn render(&self) -> String {
        let mut s = self.source_name.clone();
        if let Some(d) = self.doc {
            s.push_str(&format!("#{d}"));
        }
        if let Some(l) = self.line {
            s.push_str(&format!(" (line {l})"));
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

/// Drops a value without recursion (a deep `serde_json::Value` would otherwise overflow the
/// stack when dropped).
pub fn drop_value(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Nesting depth of a value, computed without recursion.
pub fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    max
}

/// Whether the text is JSON rather than YAML (what kubectl's YAMLOrJSON decoder checks: the
/// first non-space character is `{` or `[`).
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .starts_with(['{', '['])
}

/// Reads every document of a text (YAML, or a stream of JSON values).
pub fn parse_str(source_name: &str, text: &str) -> Vec<Result<Document, LoadError>> {
    parse_str_at(source_name, text, 0)
}

/// [`parse_str`] for a piece of a larger stream that starts after `line_offset` lines.
pub fn parse_str_at(
    source_name: &str,
    text: &str,
    line_offset: usize,
) -> Vec<Result<Document, LoadError>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if looks_like_json(text) {
        parse_json_pieces(source_name, text, line_offset)
    } else {
        YamlDocuments::new(source_name, Parser::new_from_str(text))
            .with_line_offset(line_offset)
            .collect()
    }
}

fn json_max_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_str {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A stream of JSON values that starts after `line_offset` lines.
pub(crate) fn parse_json_pieces(
    source_name: &str,
    text: &str,
    line_offset: usize,
) -> Vec<Result<Document, LoadError>> {
    let mut docs = parse_json_stream(source_name, text);
    for d in &mut docs {
        match d {
            Ok(doc) => doc.line += line_offset,
            Err(e) => e.line = e.line.map(|l| l + line_offset),
        }
    }
    docs
}

/// A stream of JSON documents (one or more concatenated values).
fn parse_json_stream(source_name: &str, text: &str) -> Vec<Result<Document, LoadError>> {
    let fail = |doc, line, message: String| LoadError {
        source_name: source_name.to_string(),
        doc: Some(doc),
        line: Some(line),
        message,
    };
    if json_max_depth(text) > MAX_DEPTH {
        return vec![Err(fail(
            0,
            1,
            format!("document nested deeper than {MAX_DEPTH} levels"),
        ))];
    }
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut stream = de.into_iter::<Value>();
    let mut index = 0;
    loop {
        let start = stream.byte_offset();
        let start = start
            + text[start..]
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(text.len() - start);
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                out.push(Ok(Document {
                    index,
                    line: line_of(text, start),
                    value: normalize_json_numbers(v),
                }));
            }
            Some(Err(e)) => {
                // The position is given by `line`; serde's own is relative to this text.
                let text = e.to_string();
                let text = match text.rfind(" at line ") {
                    Some(i) => &text[..i],
                    None => &text,
                };
                out.push(Err(fail(index, e.line(), format!("invalid JSON: {text}"))));
                break;
            }
        }
        index += 1;
    }
    out
}

/// JSON numbers as the API server's decoder holds them: integers that fit `int64` stay
/// integers, everything else is a float64.
fn normalize_json_numbers(v: Value) -> Value {
    v
}

/// Iterates the documents of a YAML stream.
pub struct YamlDocuments<'a, T: Input> {
    parser: Parser<'a, T>,
    source_name: String,
    index: usize,
    done: bool,
    /// Lines before the parsed text (when it is a piece of a larger stream).
    line_offset: usize,
}

impl<'a, T: Input> YamlDocuments<'a, T> {
    /// Reads the documents of `parser`, naming `source_name` in errors.
    pub fn new(source_name: &str, parser: Parser<'a, T>) -> Self {
        YamlDocuments {
            parser,
            source_name: source_name.to_string(),
            index: 0,
            done: false,
            line_offset: 0,
        }
    }

    /// Numbers lines as if the text started after `lines` other lines.
    pub fn with_line_offset(mut self, lines: usize) -> Self {
        self.line_offset = lines;
        self
    }

    fn error(&self, span: Option<Span>, message: String) -> LoadError {
        LoadError {
            source_name: self.source_name.clone(),
            doc: Some(self.index),
            line: span.map(|s| s.start.line() + self.line_offset),
            message,
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        /// The document's decode count before this node (see [`AliasBudget`]).
        start: usize,
        /// Whether this node was counted itself (not when it is a merge value's list).
        counted: bool,
    },
    Map {
        map: Map<String, Value>,
        key: Option<String>,
        /// The key being read cannot be a JSON object key (`null`, a uint64): its Go type
        /// and `%#v`, for the error once its value is read.
        bad_key: Option<(&'static str, String)>,
        /// Whether `key` is the merge key `<<` (plain, or tagged `!!merge`).
        merging: bool,
        anchor: usize,
        start: usize,
    },
}

/// go-yaml v2's guard against alias bombs ("excessive aliasing"), which kubectl's YAML
/// decoding goes through: the decoder counts every node it decodes (the document, each
/// mapping, sequence, scalar, key and alias node, and again every node reached through an
/// alias) and, separately, the nodes reached through an alias. Once there are more than 100
/// of the latter and more than 1000 in all, their share may not exceed 99% up to 400,000
/// decodes, 10% from 4,000,000, and a share falling linearly in between.
///
/// The share only grows while an alias is expanded and the allowed share only falls as
/// decodes grow, so checking after each plain node and after each whole alias expansion
/// (counted from the anchor's size, before the value is copied) refuses exactly the
/// documents go-yaml refuses.
#[derive(Debug, Default)]
struct AliasBudget {
    decodes: usize,
    aliased: usize,
}

impl AliasBudget {
    const RANGE_LOW: usize = 400_000;
    const RANGE_HIGH: usize = 4_000_000;

    /// The largest share of aliased decodes allowed after `decodes` decodes.
    fn allowed_share(decodes: usize) -> f64 {
        if decodes <= Self::RANGE_LOW {
            0.99
        } else if decodes >= Self::RANGE_HIGH {
            0.10
        } else {
            let span = (Self::RANGE_HIGH - Self::RANGE_LOW) as f64;
            0.99 - 0.89 * ((decodes - Self::RANGE_LOW) as f64 / span)
        }
    }

    /// Counts `plain` nodes decoded directly and `aliased` reached through an alias;
    /// `false` when the document now holds too much aliasing.
    fn add(&mut self, plain: usize, aliased: usize) -> bool {
        self.decodes += plain + aliased;
        self.aliased += aliased;
        !(self.aliased > 100
            && self.decodes > 1000
            && self.aliased as f64 / self.decodes as f64 > Self::allowed_share(self.decodes))
    }
}

/// go-yaml's message for a document refused by its alias budget.
pub const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

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
fn resolve_tagged(tag: &Tag, s: &str) -> Result<Value, String> {
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
enum GoKey {
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
fn go_key_of_value(v: &Value) -> Result<GoKey, String> {
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
fn go_key_of_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<GoKey, String> {
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

impl<'a, T: Input> Iterator for YamlDocuments<'a, T> {
    type Item = Result<Document, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // Find the start of the next document.
        let doc_span = loop {
            match self.parser.next_event() {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => {
                    self.done = true;
                    let line = e.marker().line() + self.line_offset;
                    return Some(Err(self.error(
                        Some(Span::new(*e.marker(), *e.marker())),
                        format!("invalid YAML at line {line}: {}", e.info()),
                    )))
                    .map(|r: Result<Document, LoadError>| {
                        r.map_err(|mut l| {
                            l.line = Some(line);
                            l
                        })
                    });
                }
                Some(Ok((Event::DocumentStart(_), span))) => break span,
                Some(Ok((Event::StreamEnd, _))) => {
                    self.done = true;
                    return None;
                }
                Some(Ok(_)) => continue,
            }
        };
        let result = self.read_document(doc_span);
        let index = self.index;
        self.index += 1;
        match result {
            Ok((value, line)) => Some(Ok(Document { index, line, value })),
            Err(e) => {
                // After an error the stream position is unreliable: stop here.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a, T: Input> YamlDocuments<'a, T> {
    /// Builds the value of one document, iteratively (no recursion on nesting).
    fn read_document(&mut self, doc_span: Span) -> Result<(Value, usize), LoadError> {
        let mut stack: Vec<Frame> = Vec::new();
        // Each anchor's value and its size in go-yaml decodes.
        let mut anchors: HashMap<usize, (Value, usize)> = HashMap::new();
        let mut root: Option<Value> = None;
        let mut first_line: Option<usize> = None;
        let mut unsupported_key: Option<LoadError> = None;
        // The document node itself is the first decode.
        let mut budget = AliasBudget {
            decodes: 1,
            aliased: 0,
        };
        let too_deep = format!("document nested deeper than {MAX_DEPTH} levels");
        loop {
            let (event, span) = match self.parser.next_event() {
                None => return Err(self.error(None, "unexpected end of YAML stream".into())),
                Some(Err(e)) => {
                    let line = e.marker().line() + self.line_offset;
                    let info = match e.info() {
                        "recursion limit exceeded" => {
                            "flow collections ([...] or {...}) nested deeper than 255 levels"
                        }
                        other => other,
                    };
                    let mut err = self.error(None, format!("invalid YAML: {info}"));
                    err.line = Some(line);
                    return Err(err);
                }
                Some(Ok(ev)) => ev,
            };
            // Whether the next node is the value of a `<<` key (a merge).
            let merge_value = matches!(stack.last(), Some(Frame::Map { merging: true, .. }));
            let mut merge_key = false;
            let mut scalar_key: Option<GoKey> = None;
            let completed: Option<(Value, usize, usize)> = match event {
                Event::DocumentEnd => {
                    // `sigs.k8s.io/yaml` refuses such a key once the whole document is read.
                    if let Some(e) = unsupported_key {
                        return Err(e);
                    }
                    let line = first_line.unwrap_or(doc_span.start.line());
                    return Ok((root.unwrap_or(Value::Null), line + self.line_offset));
                }
                Event::StreamEnd | Event::DocumentStart(_) => {
                    return Err(self.error(Some(span), "unexpected document boundary".into()));
                }
                Event::Nothing | Event::StreamStart => None,
                Event::Alias(id) => {
                    let Some((_, size)) = anchors.get(&id) else {
                        return Err(
                            self.error(Some(span), "unknown anchor referenced by alias".into())
                        );
                    };
                    // The alias node, then its anchor's nodes again.
                    let size = *size;
                    if !budget.add(1, size) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    if budget.decodes > MAX_NODES {
                        return Err(self.error(
                            Some(span),
                            format!("document expands to more than {MAX_NODES} values"),
                        ));
                    }
                    Some((anchors[&id].0.clone(), 0, 1 + size))
                }
                Event::Scalar(text, style, anchor, tag) => {
                    first_line.get_or_insert(span.start.line());
                    let key_position = matches!(stack.last(), Some(Frame::Map { key: None, .. }));
                    // go-yaml does not decode a merge key itself.
                    merge_key = key_position
                        && text == "<<"
                        && match tag.as_deref() {
                            None => style == ScalarStyle::Plain,
                            Some(t) => t.suffix == "merge",
                        };
                    if !merge_key && !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    if key_position && !merge_key {
                        // A key is a JSON object key as `sigs.k8s.io/yaml` makes one from
                        // go-yaml's value: its resolution errors are the key's own. Its value
                        // is needed only when an anchor names it.
                        scalar_key = Some(
                            go_key_of_scalar(&text, style, tag.as_deref())
                                .map_err(|m| self.error(Some(span), m))?,
                        );
                    }
                    let resolved = if scalar_key.is_some() && anchor == 0 {
                        Ok(Value::Null)
                    } else if style != ScalarStyle::Plain {
                        match tag.as_deref() {
                            Some(t) if t.suffix != "str" => resolve_tagged(t, &text),
                            _ => Ok(Value::String(text.into_owned())),
                        }
                    } else {
                        match tag.as_deref() {
                            Some(t) => resolve_tagged(t, &text),
                            None => resolve_plain(&text),
                        }
                    };
                    // (A key whose value cannot be JSON, `.inf`, is null for an alias of it.)
                    let v = match resolved {
                        Ok(v) => v,
                        Err(_) if scalar_key.is_some() => Value::Null,
                        Err(m) => return Err(self.error(Some(span), m)),
                    };
                    Some((v, anchor, 1))
                }
                Event::SequenceStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    let start = budget.decodes;
                    // A merge value's list is not decoded itself, only its items.
                    let counted = !merge_value;
                    if counted && !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        anchor,
                        start,
                        counted,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(Some(span), too_deep));
                    }
                    None
                }
                Event::MappingStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    let start = budget.decodes;
                    if !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    stack.push(Frame::Map {
                        map: Map::new(),
                        key: None,
                        bad_key: None,
                        merging: false,
                        anchor,
                        start,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(Some(span), too_deep));
                    }
                    None
                }
                Event::SequenceEnd => match stack.pop() {
                    Some(Frame::Seq {
                        items,
                        anchor,
                        start,
                        counted,
                    }) => {
                        // Referenced through an anchor, the list counts as a node.
                        let size = budget.decodes - start + usize::from(!counted);
                        Some((Value::Array(items), anchor, size))
                    }
                    _ => return Err(self.error(Some(span), "unbalanced sequence".into())),
                },
                Event::MappingEnd => match stack.pop() {
                    Some(Frame::Map {
                        map, anchor, start, ..
                    }) => Some((Value::Object(map), anchor, budget.decodes - start)),
                    _ => return Err(self.error(Some(span), "unbalanced mapping".into())),
                },
            };
            let Some((value, anchor, size)) = completed else {
                continue;
            };
            if budget.decodes > MAX_NODES {
                return Err(self.error(
                    Some(span),
                    format!("document expands to more than {MAX_NODES} values"),
                ));
            }
            if anchor != 0 {
                anchors.insert(anchor, (value.clone(), size));
            }
            match stack.last_mut() {
                None => root = Some(value),
                Some(Frame::Seq { items, .. }) => items.push(value),
                Some(Frame::Map {
                    map,
                    key,
                    bad_key,
                    merging,
                    ..
                }) => match key.take() {
                    None => {
                        let go_key = match scalar_key.take() {
                            Some(k) => k,
                            None => {
                                go_key_of_value(&value).map_err(|m| self.error(Some(span), m))?
                            }
                        };
                        match go_key {
                            GoKey::Text(k) => *key = Some(k),
                            GoKey::Unsupported(type_name, shown) => {
                                *key = Some(String::new());
                                *bad_key = Some((type_name, shown));
                            }
                        }
                        *merging = merge_key;
                    }
                    // go-yaml merges in document order, each merged key overwriting the
                    // same key set before it (a list of maps is merged last to first, so
                    // that its first map wins).
                    Some(_) if std::mem::take(merging) => {
                        let not_maps = || {
                            self.error(
                                Some(span),
                                "map merge requires map or sequence of maps as the value".into(),
                            )
                        };
                        match value {
                            Value::Object(m) => map.extend(m),
                            Value::Array(list) => {
                                if !list.iter().all(Value::is_object) {
                                    return Err(not_maps());
                                }
                                for item in list.into_iter().rev() {
                                    if let Value::Object(m) = item {
                                        map.extend(m);
                                    }
                                }
                            }
                            _ => return Err(not_maps()),
                        }
                    }
                    Some(_) if bad_key.is_some() => {
                        if let Some((type_name, shown)) = bad_key.take()
                            && unsupported_key.is_none()
                        {
                            unsupported_key = Some(self.error(
                                Some(span),
                                format!(
                                    "unsupported map key of type: {type_name}, key: {shown}, value: {}",
                                    crate::go::fmt::sharp_v(&value)
                                ),
                            ));
                        }
                    }
                    Some(k) => {
                        if let Some(old) = map.insert(k, value) {
                            drop_value(old);
                        }
                    }
                },
            }
        }
    }
}

/// A readable name for a `Cow<str>` source.
pub fn source_label(s: Cow<'_, str>) -> String {
    s.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn docs(text: &str) -> Vec<Value> {
        parse_str("t.yaml", text)
            .into_iter()
            .map(|d| d.unwrap().value)
            .collect()
    }

    /// JSON and YAML number literals read as Go's `strconv.ParseFloat` reads them: the
    /// nearest float64 (serde_json needs its `float_roundtrip` feature for that; without it
    /// `5e29` is one unit in the last place off and messages print `4.9999999999999994e+29`).
    #[test]
    fn float_literals_are_the_nearest_float64() {
        for lit in [
            "5e29",
            "2.2250738585072011e-308",
            "1.7976931348623157e308",
            "0.30000000000000004",
            "123456789012345678901234567890.5",
        ] {
            let want: f64 = lit.parse().unwrap();
            for text in [format!("{{\"x\": {lit}}}"), format!("x: {lit}\n")] {
                let got = docs(&text)[0]["x"].as_f64();
                assert_eq!(got.map(f64::to_bits), Some(want.to_bits()), "{text}");
            }
        }
    }

    #[test]
    fn yaml_1_1_scalars() {
        let v = &docs(
            "a: yes\nb: off\nc: 017\nd: 3.0\ne: '=' \nf: 1e3\ng: 0x1F\nh: ~\ni: 2001-12-14\nj: 1_000\nk: 08\n",
        )[0];
        assert_eq!(
            v,
            &json!({"a": true, "b": false, "c": 15, "d": 3, "e": "=", "f": 1000, "g": 31,
                "h": null, "i": "2001-12-14", "j": 1000, "k": 8})
        );
    }

    #[test]
    fn integral_floats_become_go_round_trip_integers() {
        // Go prints 2^60 as a float with its shortest digits, then decodes that as int64.
        let v = &docs("a: 1152921504606846976.0\nb: 1e20\nc: -4.0\n")[0];
        assert_eq!(v["a"].as_i64(), Some(1_152_921_504_606_847_000));
        assert_eq!(v["b"].as_f64(), Some(1e20));
        assert_eq!(v["c"].as_i64(), Some(-4));
    }

    #[test]
    fn big_integers_stay_exact() {
        let v = &docs("a: 18446744073709551615\nb: -9223372036854775808\nc: 1.5\n")[0];
        assert_eq!(v["a"].as_u64(), Some(u64::MAX));
        assert_eq!(v["b"].as_i64(), Some(i64::MIN));
        assert_eq!(v["c"].as_f64(), Some(1.5));
    }

    #[test]
    fn multi_document_with_lines() {
        let d = parse_str("t.yaml", "a: 1\n---\n# c\nb: 2\n---\n");
        let d: Vec<_> = d.into_iter().map(|d| d.unwrap()).collect();
        assert_eq!(d.len(), 3);
        assert_eq!(d[1].line, 4);
        assert_eq!(d[2].value, Value::Null);
    }

    #[test]
    fn anchors_and_merges() {
        let v = &docs("base: &b {x: 1, z: 2}\nc:\n  <<: *b\n  z: 3\n")[0];
        assert_eq!(v["c"], json!({"x": 1, "z": 3}));
    }

    #[test]
    fn non_string_keys_become_strings() {
        let v = &docs("on: 1\n5: x\n")[0];
        assert_eq!(v, &json!({"true": 1, "5": "x"}));
    }

    #[test]
    fn malformed_yaml_names_the_line() {
        let d = parse_str("bad.yaml", "a: 1\n---\nb: [1, 2\nc: 3\n");
        assert!(d[0].is_ok());
        let e = d[1].clone().unwrap_err();
        assert_eq!(e.doc, Some(1));
        assert!(e.line.is_some());
        assert!(e.to_string().starts_with("bad.yaml#1"), "{e}");
    }

    #[test]
    fn deep_documents_are_refused() {
        let deep = "[".repeat(20_000) + &"]".repeat(20_000);
        let d = parse_str("deep.yaml", &format!("a: {deep}\n"));
        let e = d[0].as_ref().unwrap_err();
        assert!(
            e.message.contains("nest") || e.message.contains("recursion limit"),
            "{e}"
        );
        let d = parse_str("deep.json", &deep);
        assert!(d[0].as_ref().unwrap_err().message.contains("nested deeper"));
    }

    #[test]
    fn json_streams() {
        let d = parse_str("x.json", "{\"a\": 1}\n{\"b\": [true]}");
        assert_eq!(d.len(), 2);
        assert_eq!(d[1].as_ref().unwrap().value, json!({"b": [true]}));
    }

    #[test]
    fn alias_bombs_are_bounded() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let d = parse_str("bomb.yaml", &text);
        assert_eq!(d[0].as_ref().unwrap_err().message, EXCESSIVE_ALIASING);
    }
}
