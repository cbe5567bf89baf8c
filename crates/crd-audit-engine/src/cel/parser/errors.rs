//! Parse errors and their rendering as cel-go renders them (`common/errors.go`,
//! `common/error.go`): `ERROR: <input>:line:col: message`, the source line and a caret.

/// A parse error: byte offset and message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// At most this many errors are rendered (cel-go's reporting limit).
const MAX_ERRORS_SHOWN: usize = 100;
/// Source lines longer than this are not shown under an error.
const MAX_SNIPPET_LENGTH: usize = 16384;

/// Renders errors as cel-go does: sorted by position, each `ERROR: <input>:line:col: msg`
/// followed by the source line and a caret under the column.
pub fn render_errors(source: &str, errors: &[ParseError]) -> String {
    let mut sorted: Vec<&ParseError> = errors.iter().collect();
    sorted.sort_by_key(|e| line_col(source, e.offset));
    let mut out: Vec<String> = sorted
        .iter()
        .take(MAX_ERRORS_SHOWN)
        .map(|e| render_error(source, e.offset, &e.message))
        .collect();
    if sorted.len() > MAX_ERRORS_SHOWN {
        out.push(format!(
            "{} more errors were truncated",
            sorted.len() - MAX_ERRORS_SHOWN
        ));
    }
    out.join("\n")
}

/// The 1-based line and 0-based column (in characters) of a byte offset.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, source[line_start..offset].chars().count())
}

fn render_error(source: &str, offset: usize, message: &str) -> String {
    let (line_no, col) = line_col(source, offset);
    let mut out = format!("ERROR: <input>:{line_no}:{}: {message}", col + 1);
    let line = source.split('\n').nth(line_no - 1).unwrap_or("");
    if line.len() <= MAX_SNIPPET_LENGTH {
        let snippet = line.replace('\t', " ");
        out.push_str("\n | ");
        out.push_str(&snippet);
        out.push_str("\n | ");
        let mut chars = snippet.chars();
        for _ in 0..col {
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => out.push('\u{ff0e}'),
                Some(_) => out.push('.'),
                None => break,
            }
        }
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => out.push('\u{ff3e}'),
            _ => out.push('^'),
        }
    }
    out
}
