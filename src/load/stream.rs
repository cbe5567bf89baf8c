//! Documents read one at a time from a reader, so that a multi-gigabyte multi-document input
//! is decoded with memory bounded by its largest document.
//!
//! YAML is cut at `---` separator lines (followed by nothing but spaces or a comment), as
//! kubectl's YAML reader cuts it; a JSON stream is cut after each top-level value. Each piece
//! is decoded by [`parse_str_at`](super::parse_str_at), and documents are numbered and
//! located as if the whole input had been decoded at once (an empty YAML document after a
//! separator counts, as in [`parse_str`](super::parse_str)).

use super::{Document, LoadError, parse_str_at};
use std::collections::VecDeque;
use std::io::BufRead;

enum Kind {
    Yaml,
    Json,
}

/// A piece of the input holding one document (or, rarely, several that the splitter could
/// not tell apart), not decoded yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub text: String,
    /// Lines of the input before this piece.
    pub line_offset: usize,
    /// Whether the piece is a document even when it holds nothing (it follows a separator).
    pub explicit: bool,
}

impl Piece {
    /// Decodes the piece; documents are numbered from 0 within it.
    pub fn parse(&self, source_name: &str) -> Vec<Result<Document, LoadError>> {
        let docs = parse_str_at(source_name, &self.text, self.line_offset);
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

/// Cuts a reader into [`Piece`]s.
pub struct PieceReader<R: BufRead> {
    reader: R,
    source_name: String,
    kind: Option<Kind>,
    /// Lines consumed so far.
    lines: usize,
    /// A line read ahead (the first non-blank line, read to tell YAML from JSON).
    carry: Option<Vec<u8>>,
    /// Whether a YAML separator was seen (the next piece is a document even when empty).
    after_separator: bool,
    done: bool,
}

impl<R: BufRead> PieceReader<R> {
    pub fn new(source_name: &str, reader: R) -> Self {
        PieceReader {
            reader,
            source_name: source_name.to_string(),
            kind: None,
            lines: 0,
            carry: None,
            after_separator: false,
            done: false,
        }
    }

    /// Appends the next line (bytes; UTF-8 is checked once per piece).
    fn read_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, LoadError> {
        if let Some(c) = self.carry.take() {
            buf.extend_from_slice(&c);
            return Ok(true);
        }
        match self.reader.read_until(b'\n', buf) {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(LoadError {
                source_name: self.source_name.clone(),
                doc: None,
                line: Some(self.lines + 1),
                message: e.to_string(),
            }),
        }
    }

    /// The piece's text, which must be UTF-8.
    fn piece(&self, text: Vec<u8>, line_offset: usize, explicit: bool) -> Result<Piece, LoadError> {
        match String::from_utf8(text) {
            Ok(text) => Ok(Piece {
                text,
                line_offset,
                explicit,
            }),
            Err(e) => {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = line_offset + 1 + valid.iter().filter(|b| **b == b'\n').count();
                Err(LoadError {
                    source_name: self.source_name.clone(),
                    doc: None,
                    line: Some(line),
                    message: "input is not UTF-8".to_string(),
                })
            }
        }
    }

    /// Decides between YAML and JSON from the first non-blank line.
    fn detect(&mut self) -> Result<(), LoadError> {
        let mut skipped = 0;
        loop {
            let mut line = Vec::new();
            if !self.read_line(&mut line)? {
                self.kind = Some(Kind::Yaml);
                self.lines += skipped;
                return Ok(());
            }
            let t = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&line);
            let Some(first) = t.iter().find(|b| !b.is_ascii_whitespace()) else {
                skipped += 1;
                continue;
            };
            self.kind = Some(if matches!(first, b'{' | b'[') {
                Kind::Json
            } else {
                Kind::Yaml
            });
            self.lines += skipped;
            self.carry = Some(line);
            return Ok(());
        }
    }

    fn yaml_piece(&mut self) -> Result<Option<Piece>, LoadError> {
        let mut text = Vec::new();
        let line_offset = self.lines;
        let explicit = self.after_separator;
        loop {
            let before = text.len();
            if !self.read_line(&mut text)? {
                if text.is_empty() && !explicit {
                    return Ok(None);
                }
                self.after_separator = false;
                self.done = true;
                return self.piece(text, line_offset, explicit).map(Some);
            }
            self.lines += 1;
            if is_separator(&text[before..]) {
                text.truncate(before);
                self.after_separator = true;
                return self.piece(text, line_offset, explicit).map(Some);
            }
        }
    }

    fn json_piece(&mut self) -> Result<Option<Piece>, LoadError> {
        let mut text = Vec::new();
        let mut start = None;
        let (mut depth, mut in_str, mut escaped, mut started) = (0usize, false, false, false);
        loop {
            let before = text.len();
            if !self.read_line(&mut text)? {
                if text.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                let at = start.unwrap_or(self.lines);
                return self.piece(text, at, false).map(Some);
            }
            let line_no = self.lines;
            self.lines += 1;
            for (i, b) in text[before..].iter().enumerate() {
                if in_str {
                    match b {
                        _ if escaped => escaped = false,
                        b'\\' => escaped = true,
                        b'"' => in_str = false,
                        _ => {}
                    }
                    continue;
                }
                if !b.is_ascii_whitespace() && start.is_none() {
                    start = Some(line_no);
                }
                match b {
                    b'"' => {
                        in_str = true;
                        started = true;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        started = true;
                    }
                    b'}' | b']' => depth = depth.saturating_sub(1),
                    b if b.is_ascii_whitespace() => {}
                    _ => started = true,
                }
                if started && depth == 0 && matches!(b, b'}' | b']') {
                    // The value ends here; what follows on this line starts the next one.
                    let rest = text.split_off(before + i + 1);
                    if !rest.iter().all(u8::is_ascii_whitespace) {
                        self.carry = Some(rest);
                        self.lines -= 1;
                    }
                    return self.piece(text, start.unwrap_or(line_no), false).map(Some);
                }
            }
        }
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
            Err(e) => {
                self.done = true;
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

    #[test]
    fn corpus_files_read_the_same_streamed() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/conformance/cases");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path().join("objects.yaml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            assert_eq!(stream(&text), parse_str("in", &text), "{}", path.display());
        }
    }
}
