//! Streams of JSON documents (one or more concatenated values), read as the API server
//! reads them.

use super::{Document, LoadError, MAX_DEPTH};
use serde_json::Value;

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
                    // Numbers as serde_json reads them (integers exact, the rest f64): the
                    // validator reads each as the API server's decoder would hold it.
                    value: v,
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
