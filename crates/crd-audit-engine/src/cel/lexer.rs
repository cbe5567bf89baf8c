//! CEL's lexer with the behaviour of the ANTLR lexer cel-go generates from its grammar: the
//! longest match wins (the earlier rule on ties), and where no token can be matched the
//! characters read so far are reported as a `token recognition error` and the character at
//! which every rule failed is dropped before lexing goes on.

/// Token kinds, in the order of the grammar's token types (the order of `expecting` sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tk {
    Eq,
    Ne,
    In,
    Lt,
    Le,
    Ge,
    Gt,
    And,
    Or,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Not,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    True,
    False,
    Null,
    NumFloat,
    NumInt,
    NumUint,
    Str,
    Bytes,
    Ident,
    EscIdent,
    Eof,
}

impl Tk {
    /// How ANTLR names the token kind in an `expecting` set.
    pub fn display(self) -> &'static str {
        match self {
            Tk::Eq => "'=='",
            Tk::Ne => "'!='",
            Tk::In => "'in'",
            Tk::Lt => "'<'",
            Tk::Le => "'<='",
            Tk::Ge => "'>='",
            Tk::Gt => "'>'",
            Tk::And => "'&&'",
            Tk::Or => "'||'",
            Tk::LBracket => "'['",
            Tk::RBracket => "']'",
            Tk::LBrace => "'{'",
            Tk::RBrace => "'}'",
            Tk::LParen => "'('",
            Tk::RParen => "')'",
            Tk::Dot => "'.'",
            Tk::Comma => "','",
            Tk::Minus => "'-'",
            Tk::Not => "'!'",
            Tk::Question => "'?'",
            Tk::Colon => "':'",
            Tk::Plus => "'+'",
            Tk::Star => "'*'",
            Tk::Slash => "'/'",
            Tk::Percent => "'%'",
            Tk::True => "'true'",
            Tk::False => "'false'",
            Tk::Null => "'null'",
            Tk::NumFloat => "NUM_FLOAT",
            Tk::NumInt => "NUM_INT",
            Tk::NumUint => "NUM_UINT",
            Tk::Str => "STRING",
            Tk::Bytes => "BYTES",
            Tk::Ident => "IDENTIFIER",
            Tk::EscIdent => "ESC_IDENTIFIER",
            Tk::Eof => "<EOF>",
        }
    }
}

/// A token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tk,
    pub start: usize,
    pub end: usize,
}

/// A lexer error: where the token began, and the text ANTLR shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub offset: usize,
    pub text: String,
}

/// Splits the source into tokens (whitespace and comments dropped), ending with `Eof`.
pub fn tokenize(src: &str) -> (Vec<Token>, Vec<LexError>) {
    let b = src.as_bytes();
    let mut tokens = Vec::new();
    let mut errors = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        match longest(b, pos) {
            Scan::Token(kind, end) => {
                if let Skip::Tok(k) = kind {
                    tokens.push(Token {
                        kind: k,
                        start: pos,
                        end,
                    });
                }
                pos = end;
            }
            Scan::Fail(at) => {
                // The text from the token start through the character no rule accepted.
                let stop = if at < b.len() { next_char(src, at) } else { at };
                errors.push(LexError {
                    offset: pos,
                    text: src[pos..stop].to_string(),
                });
                pos = stop;
            }
        }
    }
    tokens.push(Token {
        kind: Tk::Eof,
        start: b.len(),
        end: b.len(),
    });
    (tokens, errors)
}

fn next_char(src: &str, at: usize) -> usize {
    let mut e = at + 1;
    while e < src.len() && !src.is_char_boundary(e) {
        e += 1;
    }
    e
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    Tok(Tk),
    Hidden,
}

enum Scan {
    /// The longest token and its end.
    Token(Skip, usize),
    /// No token: the position at which the last rule alive failed.
    Fail(usize),
}

/// One rule's outcome from a start position: the end of its longest match (if any) and the
/// position of the first character it could not take.
struct Outcome {
    accept: Option<usize>,
    dies: usize,
}

fn longest(b: &[u8], pos: usize) -> Scan {
    let mut best: Option<(Skip, usize)> = None;
    let mut reach = pos;
    let mut offer = |kind: Skip, o: Outcome| {
        reach = reach.max(o.dies);
        if let Some(end) = o.accept
            && best.is_none_or(|(_, e)| end > e)
        {
            best = Some((kind, end));
        }
    };
    // Fixed tokens, in grammar order (keywords before identifiers on equal length).
    const FIXED: [(&[u8], Tk); 28] = [
        (b"==", Tk::Eq),
        (b"!=", Tk::Ne),
        (b"in", Tk::In),
        (b"<", Tk::Lt),
        (b"<=", Tk::Le),
        (b">=", Tk::Ge),
        (b">", Tk::Gt),
        (b"&&", Tk::And),
        (b"||", Tk::Or),
        (b"[", Tk::LBracket),
        (b"]", Tk::RBracket),
        (b"{", Tk::LBrace),
        (b"}", Tk::RBrace),
        (b"(", Tk::LParen),
        (b")", Tk::RParen),
        (b".", Tk::Dot),
        (b",", Tk::Comma),
        (b"-", Tk::Minus),
        (b"!", Tk::Not),
        (b"?", Tk::Question),
        (b":", Tk::Colon),
        (b"+", Tk::Plus),
        (b"*", Tk::Star),
        (b"/", Tk::Slash),
        (b"%", Tk::Percent),
        (b"true", Tk::True),
        (b"false", Tk::False),
        (b"null", Tk::Null),
    ];
    for (text, kind) in FIXED {
        offer(Skip::Tok(kind), literal(b, pos, text));
    }
    offer(Skip::Hidden, whitespace(b, pos));
    offer(Skip::Hidden, comment(b, pos));
    offer(Skip::Tok(Tk::NumFloat), num_float(b, pos));
    offer(Skip::Tok(Tk::NumInt), num_int(b, pos));
    offer(Skip::Tok(Tk::NumUint), num_uint(b, pos));
    offer(Skip::Tok(Tk::Str), string(b, pos));
    offer(Skip::Tok(Tk::Bytes), bytes(b, pos));
    offer(Skip::Tok(Tk::Ident), ident(b, pos));
    offer(Skip::Tok(Tk::EscIdent), esc_ident(b, pos));
    match best {
        Some((kind, end)) => Scan::Token(kind, end),
        None => Scan::Fail(reach),
    }
}

fn literal(b: &[u8], pos: usize, text: &[u8]) -> Outcome {
    let mut i = 0;
    while i < text.len() {
        if b.get(pos + i) != Some(&text[i]) {
            return Outcome {
                accept: None,
                dies: pos + i,
            };
        }
        i += 1;
    }
    Outcome {
        accept: Some(pos + i),
        dies: pos + i,
    }
}

fn count(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

fn whitespace(b: &[u8], pos: usize) -> Outcome {
    let end = count(b, pos, |c| matches!(c, b'\t' | b' ' | b'\r' | b'\n' | 0x0c));
    Outcome {
        accept: (end > pos).then_some(end),
        dies: end,
    }
}

fn comment(b: &[u8], pos: usize) -> Outcome {
    let head = literal(b, pos, b"//");
    if head.accept.is_none() {
        return head;
    }
    let end = count(b, pos + 2, |c| c != b'\n');
    Outcome {
        accept: Some(end),
        dies: end,
    }
}

fn digit(c: u8) -> bool {
    c.is_ascii_digit()
}

/// `[eE][+-]?DIGIT+` from `i`: the end, or the position where it fails.
fn exponent(b: &[u8], i: usize) -> Result<usize, usize> {
    if !matches!(b.get(i), Some(b'e' | b'E')) {
        return Err(i);
    }
    let mut j = i + 1;
    if matches!(b.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    let e = count(b, j, digit);
    if e == j { Err(j) } else { Ok(e) }
}

fn num_float(b: &[u8], pos: usize) -> Outcome {
    // DIGIT+ '.' DIGIT+ EXPONENT? | DIGIT+ EXPONENT | '.' DIGIT+ EXPONENT?
    let fraction = |start: usize| -> Outcome {
        if b.get(start) != Some(&b'.') {
            return Outcome {
                accept: None,
                dies: start,
            };
        }
        let f = count(b, start + 1, digit);
        if f == start + 1 {
            return Outcome {
                accept: None,
                dies: f,
            };
        }
        match exponent(b, f) {
            Ok(e) => Outcome {
                accept: Some(e),
                dies: e,
            },
            Err(d) => Outcome {
                accept: Some(f),
                dies: d,
            },
        }
    };
    let ints = count(b, pos, digit);
    if ints == pos {
        return fraction(pos);
    }
    let mut o = fraction(ints);
    match exponent(b, ints) {
        Ok(e) => {
            if o.accept.is_none_or(|a| e > a) {
                o.accept = Some(e);
            }
            o.dies = o.dies.max(e);
        }
        Err(d) => o.dies = o.dies.max(d),
    }
    o
}

fn num_int(b: &[u8], pos: usize) -> Outcome {
    let ints = count(b, pos, digit);
    let mut accept = (ints > pos).then_some(ints);
    let mut dies = ints;
    if b.get(pos) == Some(&b'0') && b.get(pos + 1) == Some(&b'x') {
        let h = count(b, pos + 2, |c| c.is_ascii_hexdigit());
        dies = dies.max(h);
        if h > pos + 2 {
            accept = Some(h);
        }
    }
    Outcome { accept, dies }
}

fn num_uint(b: &[u8], pos: usize) -> Outcome {
    let ints = count(b, pos, digit);
    let mut accept = None;
    let mut dies = ints;
    if ints > pos && matches!(b.get(ints), Some(b'u' | b'U')) {
        accept = Some(ints + 1);
        dies = ints + 1;
    }
    if b.get(pos) == Some(&b'0') && b.get(pos + 1) == Some(&b'x') {
        let h = count(b, pos + 2, |c| c.is_ascii_hexdigit());
        if h > pos + 2 && matches!(b.get(h), Some(b'u' | b'U')) {
            accept = Some(h + 1);
            dies = dies.max(h + 1);
        } else {
            dies = dies.max(h);
        }
    }
    Outcome { accept, dies }
}

/// One escape sequence starting at `i` (a backslash): its end, or where it fails.
fn escape(b: &[u8], i: usize) -> Result<usize, usize> {
    let Some(&c) = b.get(i + 1) else {
        return Err(i + 1);
    };
    let hex = |from: usize, n: usize| -> Result<usize, usize> {
        for k in 0..n {
            if !b.get(from + k).is_some_and(|c| c.is_ascii_hexdigit()) {
                return Err(from + k);
            }
        }
        Ok(from + n)
    };
    match c {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`' => {
            Ok(i + 2)
        }
        b'x' | b'X' => hex(i + 2, 2),
        b'u' => hex(i + 2, 4),
        b'U' => hex(i + 2, 8),
        b'0'..=b'3' => {
            for k in 2..4 {
                if !matches!(b.get(i + k), Some(b'0'..=b'7')) {
                    return Err(i + k);
                }
            }
            Ok(i + 4)
        }
        _ => Err(i + 1),
    }
}

/// The STRING rule from `pos`.
fn string(b: &[u8], pos: usize) -> Outcome {
    let mut best = Outcome {
        accept: None,
        dies: pos,
    };
    let mut take = |o: Outcome| {
        best.dies = best.dies.max(o.dies);
        if let Some(a) = o.accept
            && best.accept.is_none_or(|x| a > x)
        {
            best.accept = Some(a);
        }
    };
    let raw = matches!(b.get(pos), Some(b'r' | b'R'));
    let start = if raw { pos + 1 } else { pos };
    for q in [b'"', b'\''] {
        if b.get(start) != Some(&q) {
            take(Outcome {
                accept: None,
                dies: start,
            });
            continue;
        }
        take(single_quoted(b, start, q, raw));
        take(triple_quoted(b, start, q, raw));
    }
    best
}

fn single_quoted(b: &[u8], start: usize, q: u8, raw: bool) -> Outcome {
    let mut i = start + 1;
    loop {
        match b.get(i) {
            None => {
                return Outcome {
                    accept: None,
                    dies: i,
                };
            }
            Some(&c) if c == q => {
                return Outcome {
                    accept: Some(i + 1),
                    dies: i + 1,
                };
            }
            Some(b'\n' | b'\r') => {
                return Outcome {
                    accept: None,
                    dies: i,
                };
            }
            Some(b'\\') if !raw => match escape(b, i) {
                Ok(e) => i = e,
                Err(d) => {
                    return Outcome {
                        accept: None,
                        dies: d,
                    };
                }
            },
            Some(_) => i += 1,
        }
    }
}

fn triple_quoted(b: &[u8], start: usize, q: u8, raw: bool) -> Outcome {
    let delim = [q, q, q];
    if b.get(start..start + 3) != Some(&delim[..]) {
        // How far the opening delimiter matched.
        let mut i = start;
        while i < start + 3 && b.get(i) == Some(&q) {
            i += 1;
        }
        return Outcome {
            accept: None,
            dies: i,
        };
    }
    let mut i = start + 3;
    loop {
        if b.get(i..i + 3) == Some(&delim[..]) {
            return Outcome {
                accept: Some(i + 3),
                dies: i + 3,
            };
        }
        match b.get(i) {
            None => {
                return Outcome {
                    accept: None,
                    dies: i,
                };
            }
            Some(b'\\') if !raw => match escape(b, i) {
                Ok(e) => i = e,
                Err(d) => {
                    return Outcome {
                        accept: None,
                        dies: d,
                    };
                }
            },
            Some(_) => i += 1,
        }
    }
}

fn bytes(b: &[u8], pos: usize) -> Outcome {
    if !matches!(b.get(pos), Some(b'b' | b'B')) {
        return Outcome {
            accept: None,
            dies: pos,
        };
    }
    string(b, pos + 1)
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn ident(b: &[u8], pos: usize) -> Outcome {
    if !b.get(pos).is_some_and(|&c| ident_start(c)) {
        return Outcome {
            accept: None,
            dies: pos,
        };
    }
    let end = count(b, pos + 1, |c| c.is_ascii_alphanumeric() || c == b'_');
    Outcome {
        accept: Some(end),
        dies: end,
    }
}

fn esc_ident(b: &[u8], pos: usize) -> Outcome {
    if b.get(pos) != Some(&b'`') {
        return Outcome {
            accept: None,
            dies: pos,
        };
    }
    let end = count(b, pos + 1, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/' | b' ')
    });
    if end > pos + 1 && b.get(end) == Some(&b'`') {
        Outcome {
            accept: Some(end + 1),
            dies: end + 1,
        }
    } else {
        Outcome {
            accept: None,
            dies: end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tk> {
        tokenize(src).0.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn longest_match_and_recovery_like_antlr() {
        assert_eq!(
            kinds("a.b <= 1.5e3 in [0x1Fu]"),
            vec![
                Tk::Ident,
                Tk::Dot,
                Tk::Ident,
                Tk::Le,
                Tk::NumFloat,
                Tk::In,
                Tk::LBracket,
                Tk::NumUint,
                Tk::RBracket,
                Tk::Eof
            ]
        );
        assert_eq!(kinds(".5"), vec![Tk::NumFloat, Tk::Eof]);
        assert_eq!(kinds("1e"), vec![Tk::NumInt, Tk::Ident, Tk::Eof]);
        assert_eq!(kinds("inx"), vec![Tk::Ident, Tk::Eof]);
        assert_eq!(kinds("rb'x'"), vec![Tk::Ident, Tk::Str, Tk::Eof]);
        assert_eq!(kinds("br'x'"), vec![Tk::Bytes, Tk::Eof]);
        // `'\z'`: the string fails at `z`; lexing resumes after it.
        let (t, e) = tokenize(r"'\z' == 'a'");
        assert_eq!(
            e,
            vec![
                LexError {
                    offset: 0,
                    text: r"'\z".into()
                },
                LexError {
                    offset: 10,
                    text: "'".into()
                }
            ]
        );
        assert_eq!(t[0].kind, Tk::Str);
        assert_eq!((t[0].start, t[0].end), (3, 9));
        // `'''abc`: the empty string `''` is the longest match, then `'abc` fails at EOF.
        let (t, e) = tokenize("'''abc");
        assert_eq!((t[0].kind, t[0].end), (Tk::Str, 2));
        assert_eq!(e[0].text, "'abc");
        // `= ` fails at the space, which is dropped with it.
        assert_eq!(tokenize("a = 1").1[0].text, "= ");
        // Multi-byte characters are dropped whole.
        assert_eq!(tokenize("é").1[0].text, "é");
    }
}
