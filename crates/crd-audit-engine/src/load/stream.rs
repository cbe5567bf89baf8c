//! Documents read one at a time from a reader, so that a multi-gigabyte multi-document input
//! is decoded with memory bounded by its largest document, and no document may exceed
//! [`MAX_DOCUMENT_BYTES`].
//!
//! YAML is cut at `---` separator lines (followed by nothing but spaces or a comment), as
//! kubectl's YAML reader cuts it; a JSON stream is cut after each top-level value. Each piece
//! is decoded by [`super::parse_str_at`], and documents are numbered and
//! located as if the whole input had been decoded at once (an empty YAML document after a
//! separator counts, as in [`parse_str`](super::parse_str)).
//!
//! A document that cannot be read (too large, not UTF-8, malformed) is an error for that
//! document only: the next ones are still read. A malformed JSON value ends where the next
//! one visibly begins (a `{` or `[` where no value may stand, such as right after another
//! value, or a closing bracket with nothing open).
//!
//! A byte-order mark at the start of the input is skipped.

use super::{Document, LoadError, parse_json_pieces, parse_str_at};
use std::collections::VecDeque;
use std::io::BufRead;

/// The largest document read: 64 MiB. kube-apiserver refuses request bodies over 3 MiB (and
/// etcd values over 1.5 MiB by default), so no object it stores comes near; the bound only
/// stops a runaway input from taking all memory.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

const BOM: &[u8] = "\u{feff}".as_bytes();

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Yaml,
    Json,
}

/// A piece of the input holding one document (or, rarely, several that the splitter could
/// not tell apart), not decoded yet.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Piece {
    /// The piece's text, as read from the input.
    pub text: String,
    /// Lines of the input before this piece.
    pub line_offset: usize,
    /// Whether the piece is a document even when it holds nothing (it follows a separator).
    pub explicit: bool,
    /// Whether the piece is a JSON value (of a JSON stream) rather than YAML.
    pub json: bool,
}

impl Piece {
    /// Decodes the piece; documents are numbered from 0 within it.
    pub fn parse(&self, source_name: &str) -> Vec<Result<Document, LoadError>> {
        let docs = if self.json {
            parse_json_pieces(source_name, &self.text, self.line_offset)
        } else {
            parse_str_at(source_name, &self.text, self.line_offset)
        };
        if docs.is_empty() && self.explicit {
            // An explicit empty document.
            return vec![Ok(Document {
                index: 0,
                line: self.line_offset + 1,
                value: serde_json::Value::Null,
            })];
        }
        docs
    }
}

/// How a JSON value being scanned stands.
#[derive(Default)]
struct JsonScan {
    /// Open brackets.
    open: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// Inside a number or a literal (`true`, ...).
    in_scalar: bool,
    /// The last token ended a value (a `,` or `:` must come next, or a closing bracket).
    after_value: bool,
    started: bool,
}

/// Where a scanned JSON piece ends.
enum Cut {
    /// Before this byte of the chunk (it begins the next piece).
    Before(usize),
    /// After this byte of the chunk.
    After(usize),
}

impl JsonScan {
    /// Scans a chunk; `Some` when the piece ends in it.
    fn scan(&mut self, chunk: &[u8]) -> Option<Cut> {
        for (i, &b) in chunk.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.after_value = true;
                    if self.open.is_empty() {
                        return Some(Cut::After(i));
                    }
                }
                continue;
            }
            if self.in_scalar && !is_scalar_byte(b) {
                self.in_scalar = false;
                self.after_value = true;
                if self.open.is_empty() {
                    return Some(Cut::Before(i));
                }
            }
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'"' => {
                    self.in_string = true;
                    self.started = true;
                    self.after_value = false;
                }
                b'{' | b'[' => {
                    if self.after_value {
                        // No value may stand here: the next document begins.
                        return Some(Cut::Before(i));
                    }
                    self.open.push(b);
                    self.started = true;
                }
                b'}' | b']' => {
                    self.started = true;
                    if self.open.pop().is_none() || self.open.is_empty() {
                        return Some(Cut::After(i));
                    }
                    self.after_value = true;
                }
                b',' | b':' => {
                    self.started = true;
                    self.after_value = false;
                    if self.open.is_empty() {
                        return Some(Cut::After(i));
                    }
                }
                _ => {
                    self.in_scalar = true;
                    self.started = true;
                    self.after_value = false;
                }
            }
        }
        None
    }
}

/// Bytes that continue a JSON number or literal (anything but blanks, brackets, quotes and
/// separators, so that junk stays in one piece).
fn is_scalar_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'{' | b'[' | b'}' | b']' | b',' | b':'
    )
}

/// Cuts a reader into [`Piece`]s.
pub struct PieceReader<R: BufRead> {
    reader: R,
    source_name: String,
    kind: Option<Kind>,
    /// Lines consumed so far.
    lines: usize,
    /// Bytes read ahead (the first non-blank line, read to tell YAML from JSON), consumed
    /// before the reader's from `carry_at` on.
    carry: Vec<u8>,
    carry_at: usize,
    /// Whether a YAML separator was seen (the next piece is a document even when empty).
    after_separator: bool,
    done: bool,
}

impl<R: BufRead> PieceReader<R> {
    /// Cuts the input of `reader`, naming `source_name` in errors.
    pub fn new(source_name: &str, reader: R) -> Self {
        PieceReader {
            reader,
            source_name: source_name.to_string(),
            kind: None,
            lines: 0,
            carry: Vec::new(),
            carry_at: 0,
            after_separator: false,
            done: false,
        }
    }

    fn io_error(&self, e: std::io::Error) -> LoadError {
        LoadError {
            source_name: self.source_name.clone(),
            doc: None,
            line: Some(self.lines + 1),
            message: e.to_string(),
        }
    }

    /// An error for one document that starts after `line_offset` lines.
    fn doc_error(&self, line_offset: usize, message: String) -> LoadError {
        LoadError {
            source_name: self.source_name.clone(),
            doc: Some(0),
            line: Some(line_offset + 1),
            message,
        }
    }

    fn too_large(&self, line_offset: usize) -> LoadError {
        self.doc_error(
            line_offset,
            format!(
                "document larger than {} MiB (kube-apiserver accepts requests of up to 3 MiB)",
                MAX_DOCUMENT_BYTES >> 20
            ),
        )
    }

    /// The next bytes: the carried ones, then the reader's (empty at the end).
    fn chunk(&mut self) -> Result<&[u8], LoadError> {
        if self.carry_at < self.carry.len() {
            return Ok(&self.carry[self.carry_at..]);
        }
        loop {
            match self.reader.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(e)),
            }
        }
        Ok(self.reader.fill_buf().unwrap_or(&[]))
    }

    fn consume(&mut self, n: usize) {
        if self.carry_at < self.carry.len() {
            self.carry_at += n;
            if self.carry_at == self.carry.len() {
                self.carry = Vec::new();
                self.carry_at = 0;
            }
        } else {
            self.reader.consume(n);
        }
    }

    /// Consumes the next line (through its `\n`), appending at most `keep` of its bytes to
    /// `buf`; `None` at the end of the input, else the line's full length.
    fn read_line(&mut self, buf: &mut Vec<u8>, keep: usize) -> Result<Option<usize>, LoadError> {
        let mut len = 0;
        loop {
            let chunk = self.chunk()?;
            if chunk.is_empty() {
                return Ok((len > 0).then_some(len));
            }
            let (n, end) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let room = keep.saturating_sub(len);
            buf.extend_from_slice(&chunk[..n.min(room)]);
            len += n;
            self.consume(n);
            if end {
                return Ok(Some(len));
            }
        }
    }

    /// The piece's text, which must be UTF-8.
    fn piece(&self, text: Vec<u8>, line_offset: usize, explicit: bool) -> Result<Piece, LoadError> {
        match String::from_utf8(text) {
            Ok(text) => Ok(Piece {
                text,
                line_offset,
                explicit,
                json: self.kind == Some(Kind::Json),
            }),
            Err(e) => {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = line_offset + valid.iter().filter(|b| **b == b'\n').count();
                Err(self.doc_error(line, "input is not UTF-8".to_string()))
            }
        }
    }

    /// Skips a byte-order mark, then decides between YAML and JSON from the first non-blank
    /// line (blank lines before it are skipped; the line itself is kept).
    fn detect(&mut self) -> Result<(), LoadError> {
        let chunk = self.chunk()?;
        if chunk.starts_with(BOM) {
            self.consume(BOM.len());
        }
        loop {
            let mut line = Vec::new();
            let Some(len) = self.read_line(&mut line, MAX_DOCUMENT_BYTES)? else {
                self.kind = Some(Kind::Yaml);
                return Ok(());
            };
            let Some(first) = line.iter().find(|b| !b.is_ascii_whitespace()) else {
                if len > line.len() {
                    // A blank-looking line longer than any document: let the piece fail.
                    self.kind = Some(Kind::Yaml);
                    line.push(b'\n');
                    self.carry = line;
                    return Ok(());
                }
                self.lines += 1;
                continue;
            };
            self.kind = Some(if matches!(first, b'{' | b'[') {
                Kind::Json
            } else {
                Kind::Yaml
            });
            if len > line.len() {
                // The line is longer than a document may be (the rest of it is consumed):
                // keep what was read, ended, and let the piece report it.
                self.kind = Some(Kind::Yaml);
                line.push(b'\n');
            }
            self.carry = line;
            return Ok(());
        }
    }

    fn yaml_piece(&mut self) -> Result<Option<Piece>, LoadError> {
        let mut text = Vec::new();
        let line_offset = self.lines;
        let explicit = self.after_separator;
        let mut oversized = false;
        let mut scratch = Vec::new();
        loop {
            // Past the bound, only the start of each line is kept (to find the separator).
            let (buf, keep) = if oversized {
                scratch.clear();
                (&mut scratch, 64)
            } else {
                let keep = MAX_DOCUMENT_BYTES - text.len();
                (&mut text, keep)
            };
            let before = buf.len();
            let Some(len) = self.read_line(buf, keep)? else {
                if text.is_empty() && !explicit && !oversized {
                    return Ok(None);
                }
                self.after_separator = false;
                self.done = true;
                if oversized {
                    return Err(self.too_large(line_offset));
                }
                return self.piece(text, line_offset, explicit).map(Some);
            };
            self.lines += 1;
            let line = if oversized {
                &scratch[..]
            } else {
                &text[before..]
            };
            // (A line cut short is judged by its start only past the bound.)
            if is_separator(line) && (oversized || len <= keep) {
                self.after_separator = true;
                if oversized {
                    return Err(self.too_large(line_offset));
                }
                text.truncate(before);
                return self.piece(text, line_offset, explicit).map(Some);
            }
            if !oversized && (len > keep || text.len() > MAX_DOCUMENT_BYTES) {
                oversized = true;
                text = Vec::new();
            }
        }
    }

    fn json_piece(&mut self) -> Result<Option<Piece>, LoadError> {
        // Blanks before the value.
        loop {
            let chunk = self.chunk()?;
            if chunk.is_empty() {
                return Ok(None);
            }
            let blanks = chunk.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let newlines = chunk[..blanks].iter().filter(|b| **b == b'\n').count();
            let rest = blanks < chunk.len();
            self.consume(blanks);
            self.lines += newlines;
            if rest {
                break;
            }
        }
        let line_offset = self.lines;
        let mut text = Vec::new();
        let mut scan = JsonScan::default();
        let mut oversized = false;
        loop {
            let chunk = self.chunk()?;
            if chunk.is_empty() {
                break;
            }
            let (n, end) = match scan.scan(chunk) {
                Some(Cut::Before(i)) => (i, true),
                Some(Cut::After(i)) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let newlines = chunk[..n].iter().filter(|b| **b == b'\n').count();
            if !oversized {
                if text.len() + n > MAX_DOCUMENT_BYTES {
                    oversized = true;
                    text = Vec::new();
                } else {
                    text.extend_from_slice(&chunk[..n]);
                }
            }
            self.consume(n);
            self.lines += newlines;
            if end {
                break;
            }
        }
        if oversized {
            return Err(self.too_large(line_offset));
        }
        if text.is_empty() {
            return Ok(None);
        }
        // Blanks after a malformed value belong to no document (an error at the end of the
        // value is then named at its last line).
        let end = text.len()
            - text
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        text.truncate(end);
        self.piece(text, line_offset, false).map(Some)
    }
}

impl<R: BufRead> Iterator for PieceReader<R> {
    type Item = Result<Piece, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.kind.is_none()
            && let Err(e) = self.detect()
        {
            self.done = true;
            return Some(Err(e));
        }
        let piece = match self.kind {
            Some(Kind::Json) => self.json_piece(),
            _ => self.yaml_piece(),
        };
        match piece {
            Ok(Some(p)) => Some(Ok(p)),
            Ok(None) => {
                self.done = true;
                None
            }
            // A document that cannot be read; the next ones still can (unless reading
            // itself failed).
            Err(e) => {
                if e.doc.is_none() {
                    self.done = true;
                }
                Some(Err(e))
            }
        }
    }
}

/// An iterator over the documents of a reader.
pub struct DocumentStream<R: BufRead> {
    pieces: PieceReader<R>,
    next_index: usize,
    ready: VecDeque<Result<Document, LoadError>>,
}

impl<R: BufRead> DocumentStream<R> {
    /// Reads the documents of `reader`, naming `source_name` in errors.
    pub fn new(source_name: &str, reader: R) -> Self {
        DocumentStream {
            pieces: PieceReader::new(source_name, reader),
            next_index: 0,
            ready: VecDeque::new(),
        }
    }
}

/// Numbers the documents of one piece after those of the pieces before it.
pub fn renumber(docs: &mut [Result<Document, LoadError>], next_index: &mut usize) {
    for d in docs {
        let index = *next_index;
        *next_index += 1;
        match d {
            Ok(doc) => doc.index = index,
            Err(e) => e.doc = Some(index),
        }
    }
}

/// A YAML document separator line: `---` followed by nothing but blanks or a comment.
fn is_separator(line: &[u8]) -> bool {
    line.strip_prefix(b"---").is_some_and(|rest| {
        let rest = rest.trim_ascii();
        rest.is_empty() || rest.starts_with(b"#")
    })
}

impl<R: BufRead> Iterator for DocumentStream<R> {
    type Item = Result<Document, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.ready.is_empty() {
            match self.pieces.next()? {
                Ok(piece) => {
                    let mut docs = piece.parse(&self.pieces.source_name);
                    renumber(&mut docs, &mut self.next_index);
                    self.ready.extend(docs);
                }
                Err(mut e) => {
                    e.doc = Some(self.next_index);
                    self.next_index += 1;
                    return Some(Err(e));
                }
            }
        }
        self.ready.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_str;
    use serde_json::json;

    fn stream(text: &str) -> Vec<Result<Document, LoadError>> {
        DocumentStream::new("in", std::io::Cursor::new(text.as_bytes())).collect()
    }

    #[test]
    fn yaml_pieces_number_documents_like_the_whole_text() {
        for text in [
            "a: 1\n---\nb: 2\n",
            "---\na: 1\n---\n---\nb: 2\n",
            "# comment\n\n---\na: 1\n--- # second\nb: [1,\n  2]\n---\n",
            "a: 1\n",
            "",
            "\n\n---\n",
            "a: |\n  x\n  ---\n  y\n---\nb: 2\n",
        ] {
            assert_eq!(stream(text), parse_str("in", text), "{text:?}");
        }
    }

    #[test]
    fn json_values_are_cut_one_by_one() {
        for text in [
            "{\"a\": 1}\n{\"b\": \"}\"}\n",
            "\n\n{\"a\":\n [1, 2]}{\"c\": 3}\n",
            "[1, 2]\n",
        ] {
            assert_eq!(stream(text), parse_str("in", text), "{text:?}");
        }
    }

    #[test]
    fn errors_keep_their_place_and_later_documents_are_read() {
        let docs = stream("a: 1\n---\nb: [\n---\nc: 3\n");
        assert_eq!(docs.len(), 3);
        let e = docs[1].as_ref().unwrap_err();
        assert_eq!(e.doc, Some(1));
        assert!(e.line.is_some_and(|l| l >= 3), "{e}");
        assert_eq!(docs[2].as_ref().unwrap().value, serde_json::json!({"c": 3}));
        assert_eq!(docs[2].as_ref().unwrap().line, 5);
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let bytes = b"a: 1\n---\nb: 2\nc: \xff\n".to_vec();
        let docs: Vec<_> = DocumentStream::new("in", std::io::Cursor::new(bytes)).collect();
        assert_eq!(docs[0].as_ref().unwrap().value, serde_json::json!({"a": 1}));
        let e = docs[1].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(1), Some(4)), "{e}");
        assert!(e.message.contains("not UTF-8"));
    }

    fn values(docs: &[Result<Document, LoadError>]) -> Vec<Result<serde_json::Value, String>> {
        docs.iter()
            .map(|d| match d {
                Ok(d) => Ok(d.value.clone()),
                Err(e) => Err(e.to_string()),
            })
            .collect()
    }

    #[test]
    fn a_malformed_json_value_does_not_swallow_the_next_ones() {
        let docs = stream("{\"a\": 1}\n{\"a\": [}\n{\"b\": 2}\n{\"c\": 3\n{\"d\": 4}\n}\n[5]\n");
        let v = values(&docs);
        assert_eq!(v.len(), 7, "{v:?}");
        assert_eq!(v[0], Ok(json!({"a": 1})));
        let e = docs[1].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(1), Some(2)), "{e}");
        assert!(e.message.starts_with("invalid JSON: "), "{e}");
        assert_eq!(v[2], Ok(json!({"b": 2})));
        assert_eq!(docs[2].as_ref().unwrap().line, 3);
        // An unclosed value ends where the next one begins.
        let e = docs[3].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(3), Some(4)), "{e}");
        assert_eq!(v[4], Ok(json!({"d": 4})));
        assert_eq!(docs[4].as_ref().unwrap().line, 5);
        // A stray closing bracket is an error of its own.
        let e = docs[5].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(5), Some(6)), "{e}");
        assert_eq!(v[6], Ok(json!([5])));
        let v = values(&stream("{\"x\": 1} ] {\"y\": \"]{\"}"));
        assert_eq!(v.len(), 3, "{v:?}");
        assert_eq!(v[2], Ok(json!({"y": "]{"})));
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = "\u{feff}{\"a\": 1}\n{\"b\": 2}\n";
        let v = values(&stream(text));
        assert_eq!(v, [Ok(json!({"a": 1})), Ok(json!({"b": 2}))]);
        assert_eq!(values(&parse_str("in", text)), v);
        let text = "\u{feff}a: 1\n---\nb: 2\n";
        let v = values(&stream(text));
        assert_eq!(v, [Ok(json!({"a": 1})), Ok(json!({"b": 2}))]);
        assert_eq!(values(&parse_str("in", text)), v);
    }

    #[test]
    fn a_document_over_the_bound_is_refused_and_the_next_ones_are_read() {
        let huge = "x".repeat(MAX_DOCUMENT_BYTES);
        // YAML: one line longer than the bound, and many lines adding up beyond it.
        let many = "k: v\n".repeat(MAX_DOCUMENT_BYTES / 5 + 1);
        let text = format!("a: 1\n---\nb: {huge}\n---\nc: 3\n---\n{many}---\nd: 4\n");
        let docs = stream(&text);
        let v = values(&docs);
        assert_eq!(v.len(), 5, "{:?}", &v[..1]);
        assert_eq!(v[0], Ok(json!({"a": 1})));
        let e = docs[1].as_ref().unwrap_err();
        assert_eq!(
            e.to_string(),
            "in#1 (line 3): document larger than 64 MiB (kube-apiserver accepts requests of up to 3 MiB)"
        );
        assert_eq!(v[2], Ok(json!({"c": 3})));
        assert_eq!(docs[2].as_ref().unwrap().line, 5);
        let e = docs[3].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(3), Some(7)), "{e}");
        assert_eq!(v[4], Ok(json!({"d": 4})));
        // JSON.
        let text = format!("{{\"a\": 1}}\n{{\"b\": \"{huge}\"}}{{\"c\": 3}}\n");
        let docs = stream(&text);
        let v = values(&docs);
        assert_eq!(v.len(), 3);
        let e = docs[1].as_ref().unwrap_err();
        assert_eq!((e.doc, e.line), (Some(1), Some(2)), "{e}");
        assert!(e.message.starts_with("document larger than 64 MiB"));
        assert_eq!(v[2], Ok(json!({"c": 3})));
        // A first line over the bound.
        let docs = stream(&format!("{{\"b\": \"{huge}\"}}\n---\na: 1\n"));
        assert!(
            docs[0]
                .as_ref()
                .unwrap_err()
                .message
                .starts_with("document larger")
        );
        assert_eq!(docs[1].as_ref().unwrap().value, json!({"a": 1}));
    }

    #[test]
    fn corpus_files_read_the_same_streamed() {
        let Some(dir) = crate::testing::conformance_dir() else {
            return;
        };
        let cases = crate::testing::conformance_cases(&dir);
        assert!(!cases.is_empty());
        for case in cases {
            let path = case.join("objects.yaml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            assert_eq!(stream(&text), parse_str("in", &text), "{}", path.display());
        }
    }
}
