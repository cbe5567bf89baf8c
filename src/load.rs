//! Documents from YAML or JSON text, decoded the way kubectl and the API server decode them
//! (`sigs.k8s.io/yaml`: YAML 1.1 scalars through go-yaml v2, then JSON into `int64`/`float64`).
//!
//! Every document carries its index in the stream and its first line, so that errors and
//! findings can name `file#doc` and a line.

use crate::gofmt;
use saphyr_parser::{Event, Input, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;

pub mod stream;

/// Deepest nesting of mappings and sequences accepted in one document.
pub const MAX_DEPTH: usize = 1000;
/// Most values one document may expand to (guards against alias bombs).
pub const MAX_NODES: usize = 20_000_000;

/// One decoded document.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Index of the document in its stream, counting from 0 (empty documents included).
    pub index: usize,
    /// 1-based line where the document's content starts.
    pub line: usize,
    pub value: Value,
}

/// Why a document could not be read; `doc`/`line` locate it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.render())]
pub struct LoadError {
    pub source_name: String,
    pub doc: Option<usize>,
    pub line: Option<usize>,
    pub message: String,
}

impl LoadError {
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
    if looks_like_json(text) {
        let mut docs = parse_json_stream(source_name, text);
        for d in &mut docs {
            match d {
                Ok(doc) => doc.line += line_offset,
                Err(e) => e.line = e.line.map(|l| l + line_offset),
            }
        }
        docs
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
    },
    Map {
        map: Map<String, Value>,
        key: Option<String>,
        /// Keys set explicitly (they win over merged `<<` keys).
        merged: Vec<Map<String, Value>>,
        anchor: usize,
    },
}

/// go-yaml v2's resolution of a plain scalar into a JSON value (after the JSON round trip of
/// `sigs.k8s.io/yaml`).
pub fn resolve_plain(s: &str) -> Result<Value, String> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Ok(Value::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Ok(Value::Bool(false));
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!(
                "json: unsupported value: {s} (infinity and NaN have no JSON form)"
            ));
        }
        _ => {}
    }
    let first = s.as_bytes()[0];
    if matches!(first, b'+' | b'-' | b'.' | b'0'..=b'9') {
        let plain: String = s.chars().filter(|c| *c != '_').collect();
        if let Some(v) = parse_go_int(&plain) {
            return Ok(v);
        }
        if is_yaml_float(&plain)
            && let Ok(f) = plain.parse::<f64>()
        {
            return Ok(float_after_json_round_trip(f));
        }
    }
    Ok(Value::String(s.to_string()))
}

/// A float64 after `json.Marshal` and the API server's number decoding: an integral value
/// whose shortest digits fit int64 becomes that int64 (see [`gofmt::shortest_integer`]).
pub fn float_after_json_round_trip(f: f64) -> Value {
    if let Some(i) = gofmt::shortest_integer(f).and_then(|i| i64::try_from(i).ok()) {
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

fn resolve_tagged(tag: &Tag, s: &str) -> Result<Value, String> {
    if tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!" {
        return match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => Ok(Value::String(s.to_string())),
            "null" => Ok(Value::Null),
            "bool" | "int" | "float" => match resolve_plain(s)? {
                Value::String(_) => Err(format!("cannot decode !!{} `{s}`", tag.suffix)),
                v => Ok(v),
            },
            _ => resolve_plain(s),
        };
    }
    resolve_plain(s)
}

/// A JSON object key for a YAML key (`sigs.k8s.io/yaml` turns non-string keys into strings).
fn key_string(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
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
        let mut anchors: HashMap<usize, Value> = HashMap::new();
        let mut root: Option<Value> = None;
        let mut first_line: Option<usize> = None;
        let mut nodes = 0usize;
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
            let completed: Option<(Value, usize)> = match event {
                Event::DocumentEnd => {
                    let line = first_line.unwrap_or(doc_span.start.line());
                    return Ok((root.unwrap_or(Value::Null), line + self.line_offset));
                }
                Event::StreamEnd | Event::DocumentStart(_) => {
                    return Err(self.error(Some(span), "unexpected document boundary".into()));
                }
                Event::Nothing | Event::StreamStart => None,
                Event::Alias(id) => {
                    let v = anchors.get(&id).cloned().ok_or_else(|| {
                        self.error(Some(span), "unknown anchor referenced by alias".into())
                    })?;
                    nodes += count_nodes(&v);
                    Some((v, 0))
                }
                Event::Scalar(text, style, anchor, tag) => {
                    first_line.get_or_insert(span.start.line());
                    let resolved = if style != ScalarStyle::Plain {
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
                    let v = resolved.map_err(|m| self.error(Some(span), m))?;
                    Some((v, anchor))
                }
                Event::SequenceStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        anchor,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(
                            Some(span),
                            format!("document nested deeper than {MAX_DEPTH} levels"),
                        ));
                    }
                    None
                }
                Event::MappingStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    stack.push(Frame::Map {
                        map: Map::new(),
                        key: None,
                        merged: Vec::new(),
                        anchor,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(
                            Some(span),
                            format!("document nested deeper than {MAX_DEPTH} levels"),
                        ));
                    }
                    None
                }
                Event::SequenceEnd => match stack.pop() {
                    Some(Frame::Seq { items, anchor }) => Some((Value::Array(items), anchor)),
                    _ => return Err(self.error(Some(span), "unbalanced sequence".into())),
                },
                Event::MappingEnd => match stack.pop() {
                    Some(Frame::Map {
                        mut map,
                        merged,
                        anchor,
                        ..
                    }) => {
                        for m in merged {
                            for (k, v) in m {
                                map.entry(k).or_insert(v);
                            }
                        }
                        Some((Value::Object(map), anchor))
                    }
                    _ => return Err(self.error(Some(span), "unbalanced mapping".into())),
                },
            };
            let Some((value, anchor)) = completed else {
                continue;
            };
            nodes += 1;
            if nodes > MAX_NODES {
                return Err(self.error(
                    Some(span),
                    format!("document expands to more than {MAX_NODES} values"),
                ));
            }
            if anchor != 0 {
                anchors.insert(anchor, value.clone());
            }
            match stack.last_mut() {
                None => root = Some(value),
                Some(Frame::Seq { items, .. }) => items.push(value),
                Some(Frame::Map {
                    map, key, merged, ..
                }) => match key.take() {
                    None => {
                        if matches!(&value, Value::Object(_) | Value::Array(_)) {
                            return Err(
                                self.error(Some(span), "mapping keys must be scalars".into())
                            );
                        }
                        *key = Some(key_string(value));
                    }
                    Some(k) if k == "<<" => match value {
                        Value::Object(m) => merged.push(m),
                        Value::Array(list) => {
                            for item in list {
                                match item {
                                    Value::Object(m) => merged.push(m),
                                    _ => {
                                        return Err(self.error(
                                            Some(span),
                                            "map merge requires map or sequence of maps as the value"
                                                .into(),
                                        ));
                                    }
                                }
                            }
                        }
                        _ => {
                            return Err(self.error(
                                Some(span),
                                "map merge requires map or sequence of maps as the value".into(),
                            ));
                        }
                    },
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

fn count_nodes(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    n
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
        assert!(d[0].as_ref().unwrap_err().message.contains("expands"));
    }
}
