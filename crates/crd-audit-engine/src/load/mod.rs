//! Documents from YAML or JSON text, decoded the way kubectl and the API server decode them
//! (`sigs.k8s.io/yaml`: YAML 1.1 scalars through go-yaml v2, then JSON into `int64`/`float64`).
//!
//! Every document carries its index in the stream and its first line, so that errors and
//! findings can name `file#doc` and a line.

use saphyr_parser::Parser;
use serde_json::Value;

mod json;
pub mod list;
pub mod positions;
mod scalar;
pub mod stream;
mod yaml;

use json::parse_json_pieces;
pub use scalar::{float_after_json_round_trip, resolve_plain};
pub use yaml::{EXCESSIVE_ALIASING, YamlDocuments};

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
