//! A CEL parser: tokens, precedence climbing, and macro expansion (`has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`, the two-variable comprehensions, `cel.bind`, optional
//! syntax `?.` / `[?]` / `{?k: v}` / `[?e]`). Errors are reported like cel-go
//! (`ERROR: <input>:1:8: Syntax error: ...` with the source line and a caret).

use super::ast::{Expr, ExprKind, Literal, Loop};

/// A parse error: byte offset and message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// Renders errors as cel-go does: `ERROR: <input>:line:col: msg` followed by the source
/// line and a caret under the column.
pub fn render_errors(source: &str, errors: &[ParseError]) -> String {
    errors
        .iter()
        .map(|e| render_error(source, e.offset, &e.message))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn render_error(source: &str, offset: usize, message: &str) -> String {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = source[line_start..offset].chars().count();
    let line = source[line_start..].split('\n').next().unwrap_or("");
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {line}\n | {}^",
        col + 1,
        ".".repeat(col)
    )
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    /// An integer literal too large for int64 (valid only after unary minus).
    BigInt(u64),
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    Ident(String),
    Punct(&'static str),
    Eof,
}

/// CEL's reserved words (the literals and `in` included); field names equal to one are
/// escaped as `__{word}__`.
pub const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// Characters no token starts with: reported, skipped, and lexing goes on (as ANTLR).
    errors: Vec<ParseError>,
}

impl<'a> Lexer<'a> {
    fn err(&self, offset: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            offset,
            message: msg.into(),
        }
    }

    fn skip_space(&mut self) {
        let b = self.src.as_bytes();
        loop {
            while self.pos < b.len() && matches!(b[self.pos], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
                self.pos += 1;
            }
            if self.src[self.pos..].starts_with("//") {
                while self.pos < b.len() && b[self.pos] != b'\n' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
    }

    fn next(&mut self) -> Result<(usize, Tok), ParseError> {
        self.skip_space();
        let start = self.pos;
        let rest = &self.src[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Ok((start, Tok::Eof));
        };
        // `.5` is a float literal (NUM_FLOAT allows a leading dot).
        if c == '.' && rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit) {
            return self.number(start);
        }
        for p in [
            "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":",
            ".", ",", "(", ")", "[", "]", "{", "}",
        ] {
            if rest.starts_with(p) {
                self.pos += p.len();
                return Ok((start, Tok::Punct(p)));
            }
        }
        if c.is_ascii_digit() {
            return self.number(start);
        }
        if c == '"' || c == '\'' {
            return self.string(start, false, false);
        }
        if c.is_ascii_alphabetic() || c == '_' {
            // String prefixes: r, b, rb, br (any case).
            let lower: String = rest
                .chars()
                .take(3)
                .collect::<String>()
                .to_ascii_lowercase();
            for (prefix, raw, bytes) in [
                ("rb", true, true),
                ("br", true, true),
                ("r", true, false),
                ("b", false, true),
            ] {
                if lower.starts_with(prefix)
                    && matches!(rest[prefix.len()..].chars().next(), Some('"' | '\''))
                {
                    self.pos += prefix.len();
                    return self.string(start, raw, bytes);
                }
            }
            let len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            self.pos += len;
            return Ok((start, Tok::Ident(rest[..len].to_string())));
        }
        let e = self.err(
            start,
            format!("Syntax error: token recognition error at: '{c}'"),
        );
        self.errors.push(e);
        self.pos += c.len_utf8();
        self.next()
    }

    fn number(&mut self, start: usize) -> Result<(usize, Tok), ParseError> {
        let b = self.src.as_bytes();
        let rest = &self.src[start..];
        if rest.starts_with("0x") || rest.starts_with("0X") {
            let digits = rest[2..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(rest.len() - 2);
            let text = &rest[2..2 + digits];
            self.pos = start + 2 + digits;
            let unsigned = self.pos < b.len() && matches!(b[self.pos], b'u' | b'U');
            if unsigned {
                self.pos += 1;
            }
            let v = u64::from_str_radix(text, 16)
                .map_err(|_| self.err(start, "invalid int literal".to_string()))?;
            return Ok((start, int_token(v, unsigned)));
        }
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        let mut is_float = false;
        if end + 1 < b.len() && b[end] == b'.' && b[end + 1].is_ascii_digit() {
            is_float = true;
            end += 1;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
        }
        if end < b.len() && matches!(b[end], b'e' | b'E') {
            let mut e = end + 1;
            if e < b.len() && matches!(b[e], b'+' | b'-') {
                e += 1;
            }
            if e < b.len() && b[e].is_ascii_digit() {
                while e < b.len() && b[e].is_ascii_digit() {
                    e += 1;
                }
                is_float = true;
                end = e;
            }
        }
        let text = &self.src[start..end];
        self.pos = end;
        if is_float {
            let v: f64 = text
                .parse()
                .map_err(|_| self.err(start, "invalid double literal"))?;
            return Ok((start, Tok::Double(v)));
        }
        let unsigned = self.pos < b.len() && matches!(b[self.pos], b'u' | b'U');
        if unsigned {
            self.pos += 1;
        }
        let v: u64 = text
            .parse()
            .map_err(|_| self.err(start, "invalid int literal"))?;
        Ok((start, int_token(v, unsigned)))
    }

    fn string(&mut self, start: usize, raw: bool, bytes: bool) -> Result<(usize, Tok), ParseError> {
        let rest = &self.src[self.pos..];
        let q = rest.chars().next().unwrap_or('"');
        let triple: String = std::iter::repeat_n(q, 3).collect();
        let (delim, body_start) = if rest.starts_with(&triple) {
            (triple.as_str(), 3)
        } else {
            (&rest[..1], 1)
        };
        let body = &rest[body_start..];
        let mut out: Vec<u8> = Vec::new();
        let mut i = 0;
        let bb = body.as_bytes();
        loop {
            if i >= bb.len() || (delim.len() == 1 && bb[i] == b'\n') {
                return Err(self.err(
                    start,
                    format!(
                        "Syntax error: token recognition error at: '{}'",
                        &self.src[start..(self.pos + body_start + i).min(self.src.len())]
                    ),
                ));
            }
            if bb[i..].starts_with(delim.as_bytes()) {
                self.pos += body_start + i + delim.len();
                break;
            }
            if bb[i] == b'\\' && !raw {
                let (bytes_out, used) = unescape(&body[i..], bytes)
                    .map_err(|m| self.err(start + i, format!("Syntax error: {m}")))?;
                out.extend_from_slice(&bytes_out);
                i += used;
                continue;
            }
            if bb[i] == b'\\' && raw {
                // A raw string still cannot end at an escaped quote.
                out.push(b'\\');
                i += 1;
                if i < bb.len() && bb[i] == q as u8 && delim.len() == 1 {
                    out.push(bb[i]);
                    i += 1;
                }
                continue;
            }
            out.push(bb[i]);
            i += 1;
        }
        if bytes {
            Ok((start, Tok::Bytes(out)))
        } else {
            Ok((start, Tok::Str(String::from_utf8_lossy(&out).into_owned())))
        }
    }
}

fn int_token(v: u64, unsigned: bool) -> Tok {
    if unsigned {
        Tok::Uint(v)
    } else if let Ok(i) = i64::try_from(v) {
        Tok::Int(i)
    } else {
        Tok::BigInt(v)
    }
}

/// One escape sequence at the start of `s` (which begins with `\`): its bytes and length.
fn unescape(s: &str, bytes: bool) -> Result<(Vec<u8>, usize), String> {
    let b = s.as_bytes();
    let Some(&c) = b.get(1) else {
        return Err("invalid escape sequence".into());
    };
    let simple = |x: u8| Ok((vec![x], 2));
    match c {
        b'a' => simple(7),
        b'b' => simple(8),
        b'f' => simple(12),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'v' => simple(11),
        b'\\' | b'\'' | b'"' | b'`' | b'?' => simple(c),
        b'x' | b'X' | b'u' | b'U' => {
            let n = match c {
                b'x' | b'X' => 2,
                b'u' => 4,
                _ => 8,
            };
            let hex = s.get(2..2 + n).ok_or("invalid escape sequence")?;
            let v = u32::from_str_radix(hex, 16).map_err(|_| "invalid escape sequence")?;
            if n == 2 && bytes {
                return Ok((vec![v as u8], 2 + n));
            }
            let ch = char::from_u32(v).ok_or("invalid unicode code point")?;
            Ok((ch.to_string().into_bytes(), 2 + n))
        }
        b'0'..=b'3' => {
            let oct = s.get(1..4).ok_or("invalid escape sequence")?;
            let v = u32::from_str_radix(oct, 8).map_err(|_| "invalid escape sequence")?;
            if bytes {
                return Ok((vec![v as u8], 4));
            }
            let ch = char::from_u32(v).ok_or("invalid escape sequence")?;
            Ok((ch.to_string().into_bytes(), 4))
        }
        _ => Err("invalid escape sequence".into()),
    }
}

/// Parses an expression; all errors found are returned (cel-go reports several).
pub fn parse(src: &str) -> Result<Expr, Vec<ParseError>> {
    let mut p = Parser {
        lex: Lexer {
            src,
            pos: 0,
            errors: Vec::new(),
        },
        tok: Tok::Eof,
        at: 0,
        depth: 0,
    };
    let result = p.advance().and_then(|()| p.expr()).and_then(|e| {
        if p.tok == Tok::Eof {
            Ok(e)
        } else {
            Err(ParseError {
                offset: p.at,
                message: format!(
                    "Syntax error: extraneous input {} expecting <EOF>",
                    p.tok_text()
                ),
            })
        }
    });
    let mut errors = std::mem::take(&mut p.lex.errors);
    match result {
        Ok(e) if errors.is_empty() => Ok(e),
        Ok(_) => Err(errors),
        Err(e) => {
            errors.push(e);
            errors.sort_by_key(|e| e.offset);
            Err(errors)
        }
    }
}

/// Deepest nesting of a parsed expression (cel-go's parser limit is 250 levels).
const MAX_DEPTH: usize = 250;

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    at: usize,
    depth: usize,
}

const EXPECTING_PRIMARY: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

impl Parser<'_> {
    fn advance(&mut self) -> Result<(), ParseError> {
        let (at, tok) = self.lex.next()?;
        self.at = at;
        self.tok = tok;
        Ok(())
    }

    fn tok_text(&self) -> String {
        match &self.tok {
            Tok::Eof => "'<EOF>'".into(),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Ident(i) => format!("'{i}'"),
            _ => {
                let end = self.lex.pos.min(self.lex.src.len());
                format!("'{}'", &self.lex.src[self.at..end])
            }
        }
    }

    fn eof_expecting(&self) -> ParseError {
        ParseError {
            offset: self.lex.src.len(),
            message: format!(
                "Syntax error: mismatched input '<EOF>' expecting {EXPECTING_PRIMARY}"
            ),
        }
    }

    fn is(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }

    fn expect(&mut self, p: &str) -> Result<(), ParseError> {
        if self.is(p) {
            self.advance()
        } else {
            Err(ParseError {
                offset: self.at,
                message: format!(
                    "Syntax error: mismatched input {} expecting '{p}'",
                    self.tok_text()
                ),
            })
        }
    }

    fn call(at: usize, f: &str, args: Vec<Expr>) -> Expr {
        Expr::new(
            at,
            ExprKind::Call {
                function: f.to_string(),
                target: None,
                args,
            },
        )
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError {
                offset: self.at,
                message: "expression recursion limit exceeded".into(),
            });
        }
        let cond = self.or()?;
        let out = if self.is("?") {
            let at = self.at;
            self.advance()?;
            let a = self.or()?;
            self.expect(":")?;
            let b = self.expr()?;
            Self::call(at, "_?_:_", vec![cond, a, b])
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.and()?;
        while self.is("||") {
            let at = self.at;
            self.advance()?;
            let r = self.and()?;
            e = Self::call(at, "_||_", vec![e, r]);
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.relation()?;
        while self.is("&&") {
            let at = self.at;
            self.advance()?;
            let r = self.relation()?;
            e = Self::call(at, "_&&_", vec![e, r]);
        }
        Ok(e)
    }

    fn relation(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.addition()?;
        loop {
            let f = match &self.tok {
                Tok::Punct("==") => "_==_",
                Tok::Punct("!=") => "_!=_",
                Tok::Punct("<") => "_<_",
                Tok::Punct("<=") => "_<=_",
                Tok::Punct(">") => "_>_",
                Tok::Punct(">=") => "_>=_",
                Tok::Ident(i) if i == "in" => "@in",
                _ => return Ok(e),
            };
            let at = self.at;
            self.advance()?;
            let r = self.addition()?;
            e = Self::call(at, f, vec![e, r]);
        }
    }

    fn addition(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.multiplication()?;
        loop {
            let f = match &self.tok {
                Tok::Punct("+") => "_+_",
                Tok::Punct("-") => "_-_",
                _ => return Ok(e),
            };
            let at = self.at;
            self.advance()?;
            let r = self.multiplication()?;
            e = Self::call(at, f, vec![e, r]);
        }
    }

    fn multiplication(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.unary()?;
        loop {
            let f = match &self.tok {
                Tok::Punct("*") => "_*_",
                Tok::Punct("/") => "_/_",
                Tok::Punct("%") => "_%_",
                _ => return Ok(e),
            };
            let at = self.at;
            self.advance()?;
            let r = self.unary()?;
            e = Self::call(at, f, vec![e, r]);
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.is("!") {
            let at = self.at;
            let mut n = 0;
            while self.is("!") {
                n += 1;
                self.advance()?;
            }
            let e = self.member()?;
            return Ok(if n % 2 == 1 {
                Self::call(at, "!_", vec![e])
            } else {
                e
            });
        }
        if self.is("-") {
            let at = self.at;
            let mut n = 0;
            while self.is("-") {
                n += 1;
                self.advance()?;
            }
            // A negative number literal is folded.
            if n % 2 == 1 {
                match self.tok.clone() {
                    Tok::Int(i) => {
                        self.advance()?;
                        let lit = Expr::new(at, ExprKind::Lit(Literal::Int(-i)));
                        return self.member_suffix(lit);
                    }
                    Tok::BigInt(v) if v == 1u64 << 63 => {
                        self.advance()?;
                        let lit = Expr::new(at, ExprKind::Lit(Literal::Int(i64::MIN)));
                        return self.member_suffix(lit);
                    }
                    Tok::Double(d) => {
                        self.advance()?;
                        let lit = Expr::new(at, ExprKind::Lit(Literal::Double(-d)));
                        return self.member_suffix(lit);
                    }
                    _ => {}
                }
            }
            let e = self.member()?;
            return Ok(if n % 2 == 1 {
                Self::call(at, "-_", vec![e])
            } else {
                e
            });
        }
        self.member()
    }

    fn member(&mut self) -> Result<Expr, ParseError> {
        let p = self.primary()?;
        self.member_suffix(p)
    }

    fn member_suffix(&mut self, mut e: Expr) -> Result<Expr, ParseError> {
        loop {
            if self.is(".") {
                let at = self.at;
                self.advance()?;
                let optional = self.is("?");
                if optional {
                    self.advance()?;
                }
                let Tok::Ident(name) = self.tok.clone() else {
                    return Err(ParseError {
                        offset: self.at,
                        message: format!(
                            "Syntax error: mismatched input {} expecting IDENTIFIER",
                            self.tok_text()
                        ),
                    });
                };
                self.advance()?;
                if self.is("(") && !optional {
                    // cel-go places a member call at its opening parenthesis.
                    let paren_at = self.at;
                    self.advance()?;
                    let args = self.args(")")?;
                    e = self.receiver_call(paren_at, e, name, args)?;
                } else {
                    e = Expr::new(
                        at,
                        ExprKind::Select {
                            operand: Box::new(e),
                            field: name,
                            test_only: false,
                            optional,
                        },
                    );
                }
            } else if self.is("[") {
                let at = self.at;
                self.advance()?;
                let optional = self.is("?");
                if optional {
                    self.advance()?;
                }
                let idx = self.expr()?;
                self.expect("]")?;
                let f = if optional { "_[?_]" } else { "_[_]" };
                e = Self::call(at, f, vec![e, idx]);
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut args = Vec::new();
        if self.is(close) {
            self.advance()?;
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.is(",") {
                self.advance()?;
                continue;
            }
            self.expect(close)?;
            return Ok(args);
        }
    }

    fn ident_of(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(i) => Some(i),
            _ => None,
        }
    }

    fn macro_err(at: usize, msg: &str) -> ParseError {
        ParseError {
            offset: at,
            message: msg.to_string(),
        }
    }

    /// `target.name(args)`, expanding the receiver-style macros.
    fn receiver_call(
        &mut self,
        at: usize,
        target: Expr,
        name: String,
        mut args: Vec<Expr>,
    ) -> Result<Expr, ParseError> {
        let kind = match (name.as_str(), args.len()) {
            ("all", 2 | 3) => Some(Loop::All),
            ("exists", 2 | 3) => Some(Loop::Exists),
            ("exists_one", 2) | ("existsOne", 2 | 3) => Some(Loop::ExistsOne),
            ("map", 2 | 3) => Some(Loop::Map),
            ("filter", 2) => Some(Loop::Filter),
            ("transformList", 3 | 4) => Some(Loop::TransformList),
            ("transformMap", 3 | 4) => Some(Loop::TransformMap),
            _ => None,
        };
        // cel.bind(v, init, body)
        if name == "bind" && args.len() == 3 && Self::ident_of(&target) == Some("cel") {
            let var = Self::ident_of(&args[0])
                .ok_or_else(|| {
                    Self::macro_err(
                        args[0].offset as usize,
                        "cel.bind() variable name must be a simple identifier",
                    )
                })?
                .to_string();
            let body = args
                .pop()
                .unwrap_or_else(|| Expr::new(at, ExprKind::Lit(Literal::Null)));
            let init = args
                .pop()
                .unwrap_or_else(|| Expr::new(at, ExprKind::Lit(Literal::Null)));
            return Ok(Expr::new(
                at,
                ExprKind::Bind {
                    var,
                    init: Box::new(init),
                    body: Box::new(body),
                },
            ));
        }
        let Some(kind) = kind else {
            return Ok(Expr::new(
                at,
                ExprKind::Call {
                    function: name,
                    target: Some(Box::new(target)),
                    args,
                },
            ));
        };
        let two_vars = match kind {
            Loop::TransformList | Loop::TransformMap => true,
            Loop::Map | Loop::Filter => false,
            Loop::ExistsOne if name == "exists_one" => false,
            _ => args.len() == 3,
        };
        let var = Self::ident_of(&args[0])
            .ok_or_else(|| {
                Self::macro_err(args[0].offset as usize, "argument must be a simple name")
            })?
            .to_string();
        let var2 = if two_vars {
            Some(
                Self::ident_of(&args[1])
                    .ok_or_else(|| {
                        Self::macro_err(args[1].offset as usize, "argument must be a simple name")
                    })?
                    .to_string(),
            )
        } else {
            None
        };
        let rest: Vec<Expr> = args.drain(if two_vars { 2 } else { 1 }..).collect();
        let (filter, transform) = match (kind, rest.len()) {
            (Loop::Map | Loop::TransformList | Loop::TransformMap, 1) => {
                (None, rest.into_iter().next())
            }
            (Loop::Map | Loop::TransformList | Loop::TransformMap, 2) => {
                let mut it = rest.into_iter();
                (it.next(), it.next())
            }
            (_, 1) => (rest.into_iter().next(), None),
            _ => {
                return Err(Self::macro_err(
                    at,
                    &format!("{name}() wrong number of arguments"),
                ));
            }
        };
        Ok(Expr::new(
            at,
            ExprKind::Loop {
                kind,
                var,
                var2,
                range: Box::new(target),
                filter: filter.map(Box::new),
                transform: transform.map(Box::new),
            },
        ))
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let at = self.at;
        let tok = self.tok.clone();
        match tok {
            Tok::Int(i) => {
                self.advance()?;
                Ok(Expr::new(at, ExprKind::Lit(Literal::Int(i))))
            }
            Tok::BigInt(_) => Err(Self::macro_err(at, "invalid int literal")),
            Tok::Uint(u) => {
                self.advance()?;
                Ok(Expr::new(at, ExprKind::Lit(Literal::Uint(u))))
            }
            Tok::Double(d) => {
                self.advance()?;
                Ok(Expr::new(at, ExprKind::Lit(Literal::Double(d))))
            }
            Tok::Str(s) => {
                self.advance()?;
                Ok(Expr::new(at, ExprKind::Lit(Literal::String(s))))
            }
            Tok::Bytes(b) => {
                self.advance()?;
                Ok(Expr::new(at, ExprKind::Lit(Literal::Bytes(b))))
            }
            Tok::Ident(name) => {
                self.advance()?;
                match name.as_str() {
                    "true" => return Ok(Expr::new(at, ExprKind::Lit(Literal::Bool(true)))),
                    "false" => return Ok(Expr::new(at, ExprKind::Lit(Literal::Bool(false)))),
                    "null" => return Ok(Expr::new(at, ExprKind::Lit(Literal::Null))),
                    "in" => {
                        return Err(ParseError {
                            offset: at,
                            message: format!(
                                "Syntax error: mismatched input 'in' expecting {EXPECTING_PRIMARY}"
                            ),
                        });
                    }
                    n if RESERVED.contains(&n) => {
                        return Err(ParseError {
                            offset: at,
                            message: format!("reserved identifier: {n}"),
                        });
                    }
                    _ => {}
                }
                if self.is("(") {
                    self.advance()?;
                    let args = self.args(")")?;
                    if name == "has" {
                        return match args.into_iter().next() {
                            Some(Expr {
                                kind:
                                    ExprKind::Select {
                                        operand,
                                        field,
                                        optional: false,
                                        ..
                                    },
                                offset,
                            }) => Ok(Expr {
                                offset,
                                kind: ExprKind::Select {
                                    operand,
                                    field,
                                    test_only: true,
                                    optional: false,
                                },
                            }),
                            _ => Err(Self::macro_err(at, "invalid argument to has() macro")),
                        };
                    }
                    return Ok(Self::call(at, &name, args));
                }
                Ok(Expr::new(at, ExprKind::Ident(name)))
            }
            Tok::Punct("(") => {
                self.advance()?;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => {
                self.advance()?;
                let mut elements = Vec::new();
                let mut optional = Vec::new();
                while !self.is("]") {
                    if self.is("?") {
                        self.advance()?;
                        optional.push(elements.len());
                    }
                    elements.push(self.expr()?);
                    if self.is(",") {
                        self.advance()?;
                    } else {
                        break;
                    }
                }
                self.expect("]")?;
                Ok(Expr::new(at, ExprKind::List { elements, optional }))
            }
            Tok::Punct("{") => {
                self.advance()?;
                let mut entries = Vec::new();
                while !self.is("}") {
                    let opt = self.is("?");
                    if opt {
                        self.advance()?;
                    }
                    let k = self.expr()?;
                    self.expect(":")?;
                    let v = self.expr()?;
                    entries.push((k, v, opt));
                    if self.is(",") {
                        self.advance()?;
                    } else {
                        break;
                    }
                }
                self.expect("}")?;
                Ok(Expr::new(at, ExprKind::Map { entries }))
            }
            Tok::Punct(".") => {
                // A leading dot names the root scope: `.self`.
                self.advance()?;
                self.primary()
            }
            Tok::Eof => Err(self.eof_expecting()),
            _ => Err(ParseError {
                offset: at,
                message: format!(
                    "Syntax error: mismatched input {} expecting {EXPECTING_PRIMARY}",
                    self.tok_text()
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Expr {
        parse(s).unwrap_or_else(|e| panic!("{s}: {}", render_errors(s, &e)))
    }

    #[test]
    fn precedence_and_macros() {
        let e = ok("!has(self.a) || self.b.all(x, x > 1 && x in [1, 2]) ? 1 : -2");
        match e.kind {
            ExprKind::Call { function, args, .. } => {
                assert_eq!(function, "_?_:_");
                assert_eq!(args[2].kind, ExprKind::Lit(Literal::Int(-2)));
            }
            _ => panic!(),
        }
        ok("self.map(x, x.name).filter(n, n != '').size() <= 1");
        ok("cel.bind(x, self.a, x + x) == 2");
        ok(
            "self.all(k, v, k != v) && self.?a.orValue(1) > 0 && [?self.?b] == [] && {?'a': self.?c}.size() == 0",
        );
        ok(r#"self.matches(r"""^[a-z]+$""") && self.matches('\\d') && b'\x00' != b''"#);
        ok("type(self) == int ? self > 0 : self.endsWith('%')");
        ok("self.transformList(i, v, v * 2).size() == 3u && 1.5e3 > 0.0 && 0xFF == 255");
    }

    #[test]
    fn strings_and_escapes() {
        let e = ok(r#"'a\nb\u00e9\101' + "x" + r'\d' + '''tri'ple'''"#);
        let mut lits = Vec::new();
        e.visit(&mut |n| {
            if let ExprKind::Lit(Literal::String(s)) = &n.kind {
                lits.push(s.clone());
            }
        });
        assert_eq!(lits, vec!["a\nbéA", "x", "\\d", "tri'ple"]);
    }

    #[test]
    fn non_ascii_literals_and_leading_dot_floats() {
        // Multi-byte characters inside string and bytes literals (and in error positions).
        for src in [
            "self.name != 'café'",
            "b'ü' != b''",
            "'''日本語''' + r\"ß\" + \"\"\"é\"\"\"",
            "'é",
            "'é\\q'",
            "x == 'é' é",
        ] {
            let _ = parse(src).map_err(|e| render_errors(src, &e));
        }
        let e = ok("'café'");
        assert_eq!(e.kind, ExprKind::Lit(Literal::String("café".into())));
        let e = ok(".5");
        assert_eq!(e.kind, ExprKind::Lit(Literal::Double(0.5)));
        let e = ok("-.25e1");
        assert_eq!(e.kind, ExprKind::Lit(Literal::Double(-2.5)));
    }

    #[test]
    fn errors_render_like_cel_go() {
        let e = parse("self ===").unwrap_err();
        assert_eq!(
            render_errors("self ===", &e),
            "ERROR: <input>:1:8: Syntax error: token recognition error at: '='\n | self ===\n | .......^\n\
             ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self ===\n | ........^"
        );
        assert!(parse("has(self)").is_err());
        assert!(parse("(((").is_err());
        // cel-go refuses nesting beyond 250 levels; so do we, without exhausting the stack
        // (checked on a thread with a stack like the CLI's workers).
        let deep = format!("{}1{}", "(".repeat(400), ")".repeat(400));
        let r = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || parse(&deep).is_err())
            .unwrap()
            .join()
            .unwrap();
        assert!(r);
    }
}
