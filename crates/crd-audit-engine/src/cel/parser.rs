//! The CEL parser: cel-go's grammar parsed by recursive descent over the tokens of
//! [`super::lexer`], with the error behaviour of the ANTLR parser cel-go generates
//! (`extraneous input`, `missing X at Y`, `mismatched input`, `no viable alternative`, with
//! the same `expecting` sets and recovery), and the checks cel-go's parse-tree visitor makes
//! (reserved identifiers, literal ranges, escapes, macro arguments). Macros are expanded into
//! their own nodes ([`ExprKind::Loop`], presence tests); `&&`/`||` chains are balanced as
//! cel-go balances them. Errors render as cel-go renders them
//! (`ERROR: <input>:1:8: Syntax error: ...`, the source line and a caret).

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::lexer::{Tk, Token, tokenize};

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
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, source[line_start..offset].chars().count())
}

pub fn render_error(source: &str, offset: usize, message: &str) -> String {
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

/// The accumulator variable of macro expansions.
pub const ACCUMULATOR: &str = "@result";

/// cel-go's parser depth limit (per grammar rule).
const MAX_DEPTH: usize = 250;

/// Tokens an expression can start with (the `expecting` set of a missing operand).
const FIRST_EXPR: [Tk; 15] = [
    Tk::LBracket,
    Tk::LBrace,
    Tk::LParen,
    Tk::Dot,
    Tk::Minus,
    Tk::Not,
    Tk::True,
    Tk::False,
    Tk::Null,
    Tk::NumFloat,
    Tk::NumInt,
    Tk::NumUint,
    Tk::Str,
    Tk::Bytes,
    Tk::Ident,
];

/// Tokens that can follow a complete operand inside any expression.
const AFTER_OPERAND: [Tk; 17] = [
    Tk::Eq,
    Tk::Ne,
    Tk::In,
    Tk::Lt,
    Tk::Le,
    Tk::Ge,
    Tk::Gt,
    Tk::And,
    Tk::Or,
    Tk::LBracket,
    Tk::Dot,
    Tk::Minus,
    Tk::Question,
    Tk::Plus,
    Tk::Star,
    Tk::Slash,
    Tk::Percent,
];

/// Tokens a member expression can start with (a `-` only when it signs a number).
fn starts_member(k: Tk) -> bool {
    matches!(
        k,
        Tk::LBracket
            | Tk::LBrace
            | Tk::LParen
            | Tk::Dot
            | Tk::Ident
            | Tk::True
            | Tk::False
            | Tk::Null
            | Tk::NumFloat
            | Tk::NumInt
            | Tk::NumUint
            | Tk::Str
            | Tk::Bytes
    )
}

/// Parses an expression; all errors found are returned (cel-go reports several).
pub fn parse(src: &str) -> Result<Expr, Vec<ParseError>> {
    let (tokens, lex_errors) = tokenize(src);
    let mut p = Parser {
        src,
        tokens,
        i: 0,
        syntax: Vec::new(),
        visit: Vec::new(),
        recovering: false,
        closers: vec![Tk::Eof],
        depth: 0,
        too_deep: false,
    };
    for e in lex_errors {
        p.syntax.push(ParseError {
            offset: e.offset,
            message: format!("Syntax error: token recognition error at: '{}'", e.text),
        });
    }
    let e = p.expr();
    if !p.too_deep {
        p.expect_eof();
    }
    let mut errors = std::mem::take(&mut p.syntax);
    errors.append(&mut p.visit);
    if p.too_deep {
        errors.push(ParseError {
            offset: 0,
            message: format!("expression recursion limit exceeded: {MAX_DEPTH}"),
        });
    }
    if errors.is_empty() {
        Ok(e)
    } else {
        Err(errors)
    }
}

/// ANTLR's display of token text in messages (`\n`, `\r`, `\t` escaped).
fn antlr_escape(s: &str) -> String {
    s.replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    i: usize,
    /// Errors of the ANTLR parser (reported while parsing).
    syntax: Vec<ParseError>,
    /// Errors of cel-go's tree visitor (reported after parsing).
    visit: Vec<ParseError>,
    /// ANTLR's error recovery mode: no error is reported until a token is matched.
    recovering: bool,
    /// Closing tokens of the enclosing constructs (innermost last).
    closers: Vec<Tk>,
    depth: usize,
    too_deep: bool,
}

impl Parser<'_> {
    fn la(&self, k: usize) -> Token {
        let idx = (self.i + k - 1).min(self.tokens.len() - 1);
        self.tokens[idx]
    }

    fn kind(&self) -> Tk {
        self.la(1).kind
    }

    fn at(&self) -> usize {
        self.la(1).start
    }

    fn text(&self, t: Token) -> &str {
        &self.src[t.start..t.end]
    }

    fn display(&self, t: Token) -> String {
        if t.kind == Tk::Eof {
            "'<EOF>'".into()
        } else {
            format!("'{}'", antlr_escape(self.text(t)))
        }
    }

    /// Consumes the current token as matched (ends error recovery).
    fn bump(&mut self) -> Token {
        let t = self.la(1);
        if t.kind != Tk::Eof {
            self.i += 1;
        }
        self.recovering = false;
        t
    }

    fn syntax_error(&mut self, offset: usize, msg: String) {
        if self.recovering {
            return;
        }
        self.recovering = true;
        self.syntax.push(ParseError {
            offset,
            message: format!("Syntax error: {msg}"),
        });
    }

    fn visit_error(&mut self, offset: usize, msg: impl Into<String>) {
        self.visit.push(ParseError {
            offset,
            message: msg.into(),
        });
    }

    fn expecting(set: &[Tk]) -> String {
        if set.len() == 1 {
            set[0].display().to_string()
        } else {
            let mut v: Vec<Tk> = set.to_vec();
            v.sort();
            v.dedup();
            format!(
                "{{{}}}",
                v.iter().map(|t| t.display()).collect::<Vec<_>>().join(", ")
            )
        }
    }

    /// Whether `k` can follow a complete operand in the enclosing constructs.
    fn can_follow_operand(&self, k: Tk) -> bool {
        if AFTER_OPERAND.contains(&k) || self.closers.contains(&k) {
            return true;
        }
        k == Tk::Comma
            && self
                .closers
                .iter()
                .any(|c| matches!(c, Tk::RParen | Tk::RBracket | Tk::RBrace))
    }

    /// ANTLR's failed prediction on `-`: a run of `-` that no operand follows is reported
    /// as `no viable alternative` at the token after it, and the last `-` is left to be read
    /// as a binary minus.
    fn minus_without_operand(&mut self) -> bool {
        let mut j = self.i;
        while self.tokens.get(j).is_some_and(|t| t.kind == Tk::Minus) {
            j += 1;
        }
        let Some(&x) = self.tokens.get(j) else {
            return false;
        };
        if j == self.i || starts_member(x.kind) {
            return false;
        }
        let last = self.tokens[j - 1];
        let end = if x.kind == Tk::Eof { last.end } else { x.end };
        let msg = format!(
            "no viable alternative at input '{}'",
            antlr_escape(&self.src[last.start..end])
        );
        self.syntax_error(x.start, msg);
        self.i = j - 1;
        true
    }

    /// ANTLR's sync before the optional `,` that closes a list, map or message literal
    /// after an element (`{']', ','}` expected): one unwanted token is dropped, otherwise
    /// the literal is left.
    fn sync_literal_end(&mut self, close: Tk) -> bool {
        if self.recovering || matches!(self.kind(), Tk::Comma) || self.kind() == close {
            return true;
        }
        let set = [close, Tk::Comma];
        let t = self.la(1);
        if set.contains(&self.la(2).kind) {
            let msg = format!(
                "extraneous input {} expecting {}",
                self.display(t),
                Self::expecting(&set)
            );
            self.syntax_error(t.start, msg);
            self.i += 1;
            self.recovering = false;
            if self.kind() == Tk::Comma {
                self.bump();
            }
            return true;
        }
        let msg = format!(
            "mismatched input {} expecting {}",
            self.display(t),
            Self::expecting(&set)
        );
        self.syntax_error(t.start, msg);
        self.recover();
        false
    }

    /// Skips tokens until one error recovery can resume at.
    fn recover(&mut self) {
        while !(self.can_follow_operand(self.kind()) || self.kind() == Tk::Eof) {
            self.i += 1;
        }
    }

    /// Recovery from an error in an index or member call: the `member` rule is left, so
    /// only what can follow a whole operand stops the skipping (not `.` or `[`).
    fn recover_member(&mut self) {
        while !((self.can_follow_operand(self.kind())
            && !matches!(self.kind(), Tk::Dot | Tk::LBracket))
            || self.kind() == Tk::Eof)
        {
            self.i += 1;
        }
    }

    /// Whether `k` can follow the token `want` here (ANTLR's single-token insertion).
    fn can_follow_closer(&self, want: Tk, k: Tk) -> bool {
        if want == Tk::Colon {
            FIRST_EXPR.contains(&k)
        } else {
            self.can_follow_operand(k)
        }
    }

    /// Matches the token `want` with ANTLR's single-token deletion and insertion.
    fn expect(&mut self, want: Tk) -> bool {
        self.expect_in(want, false)
    }

    /// [`Self::expect`]; `in_member`: the token closes an index or member call (recovery
    /// leaves the member).
    fn expect_in(&mut self, want: Tk, in_member: bool) -> bool {
        if self.kind() == want {
            self.bump();
            return true;
        }
        let t = self.la(1);
        if self.la(2).kind == want {
            let msg = format!(
                "extraneous input {} expecting {}",
                self.display(t),
                Self::expecting(&[want])
            );
            self.syntax_error(t.start, msg);
            self.i += 1;
            self.bump();
            return true;
        }
        if self.can_follow_closer(want, t.kind) {
            let msg = format!("missing {} at {}", want.display(), self.display(t));
            self.syntax_error(t.start, msg);
            return true;
        }
        let msg = format!(
            "mismatched input {} expecting {}",
            self.display(t),
            Self::expecting(&[want])
        );
        self.syntax_error(t.start, msg);
        if in_member {
            self.recover_member();
        } else {
            self.recover();
        }
        false
    }

    fn expect_eof(&mut self) {
        let t = self.la(1);
        if t.kind == Tk::Eof {
            return;
        }
        if self.la(2).kind == Tk::Eof {
            let msg = format!("extraneous input {} expecting <EOF>", self.display(t));
            self.syntax_error(t.start, msg);
        } else {
            let msg = format!("mismatched input {} expecting <EOF>", self.display(t));
            self.syntax_error(t.start, msg);
        }
    }

    fn error_node(&self, at: usize) -> Expr {
        Expr::new(at, ExprKind::Lit(Literal::Null))
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

    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.too_deep = true;
        }
        !self.too_deep
    }

    fn expr(&mut self) -> Expr {
        if !self.enter() {
            self.depth -= 1;
            return self.error_node(self.at());
        }
        let cond = self.or();
        let out = if self.kind() == Tk::Question {
            let q = self.bump();
            self.closers.push(Tk::Colon);
            let a = self.or();
            self.closers.pop();
            // Without its `:`, the conditional is left (ANTLR leaves the rule).
            let b = if self.expect(Tk::Colon) {
                self.expr()
            } else {
                self.error_node(self.at())
            };
            Self::call(q.start, "_?_:_", vec![cond, a, b])
        } else {
            cond
        };
        self.depth -= 1;
        out
    }

    /// `a op b op c ...` for `&&`/`||`, balanced as cel-go balances logical chains.
    fn logic(&mut self, op: Tk, function: &str, next: fn(&mut Self) -> Expr) -> Expr {
        let mut terms = vec![next(self)];
        let mut ops = Vec::new();
        while self.kind() == op {
            ops.push(self.bump().start);
            terms.push(next(self));
        }
        if ops.is_empty() {
            return terms.pop().unwrap_or_else(|| self.error_node(0));
        }
        let mut terms: Vec<Option<Expr>> = terms.into_iter().map(Some).collect();
        balance(&mut terms, &ops, function, 0, ops.len() - 1)
    }

    fn or(&mut self) -> Expr {
        self.logic(Tk::Or, "_||_", Self::and)
    }

    fn and(&mut self) -> Expr {
        self.logic(Tk::And, "_&&_", Self::relation)
    }

    fn relation(&mut self) -> Expr {
        let mut e = self.calc_add();
        loop {
            let f = match self.kind() {
                Tk::Eq => "_==_",
                Tk::Ne => "_!=_",
                Tk::Lt => "_<_",
                Tk::Le => "_<=_",
                Tk::Gt => "_>_",
                Tk::Ge => "_>=_",
                Tk::In => "@in",
                _ => return e,
            };
            let op = self.bump();
            let r = self.calc_add();
            e = Self::call(op.start, f, vec![e, r]);
        }
    }

    fn calc_add(&mut self) -> Expr {
        let mut e = self.calc_mul();
        loop {
            let f = match self.kind() {
                Tk::Plus => "_+_",
                Tk::Minus => "_-_",
                _ => return e,
            };
            let op = self.bump();
            let r = self.calc_mul();
            e = Self::call(op.start, f, vec![e, r]);
        }
    }

    fn calc_mul(&mut self) -> Expr {
        let mut e = self.unary();
        loop {
            let f = match self.kind() {
                Tk::Star => "_*_",
                Tk::Slash => "_/_",
                Tk::Percent => "_%_",
                _ => return e,
            };
            let op = self.bump();
            let r = self.unary();
            e = Self::call(op.start, f, vec![e, r]);
        }
    }

    /// ANTLR's sync before an operand: one unexpected token is dropped when the next one
    /// can start an operand, otherwise the operand is missing.
    fn sync_operand(&mut self) -> bool {
        let first = FIRST_EXPR;
        if FIRST_EXPR.contains(&self.kind()) {
            return true;
        }
        if self.recovering {
            self.recover();
            return false;
        }
        let t = self.la(1);
        if FIRST_EXPR.contains(&self.la(2).kind) {
            let msg = format!(
                "extraneous input {} expecting {}",
                self.display(t),
                Self::expecting(&first)
            );
            self.syntax_error(t.start, msg);
            self.i += 1;
            self.recovering = false;
            return true;
        }
        let msg = format!(
            "mismatched input {} expecting {}",
            self.display(t),
            Self::expecting(&first)
        );
        self.syntax_error(t.start, msg);
        self.recover();
        false
    }

    fn unary(&mut self) -> Expr {
        if !self.sync_operand() {
            return self.error_node(self.at());
        }
        match self.kind() {
            Tk::Not => {
                let first = self.at();
                let mut n = 0;
                while self.kind() == Tk::Not {
                    self.bump();
                    n += 1;
                }
                // The `'!'+` loop's sync: an unwanted token is reported and skipped.
                if !self.recovering && !starts_member(self.kind()) && self.kind() != Tk::Minus {
                    let t = self.la(1);
                    let msg = format!(
                        "extraneous input {} expecting {}",
                        self.display(t),
                        Self::expecting(&FIRST_EXPR)
                    );
                    self.syntax_error(t.start, msg);
                    while !(FIRST_EXPR.contains(&self.kind())
                        || self.can_follow_operand(self.kind())
                        || self.kind() == Tk::Eof)
                    {
                        self.i += 1;
                    }
                }
                let e = self.member();
                if n % 2 == 1 {
                    Self::call(first, "!_", vec![e])
                } else {
                    e
                }
            }
            Tk::Minus => {
                if self.minus_without_operand() {
                    return self.error_node(self.at());
                }
                // `-1` and `-1.5` are literals; otherwise every `-` is an operator.
                if matches!(self.la(2).kind, Tk::NumInt | Tk::NumFloat) {
                    return self.member();
                }
                let first = self.at();
                let mut n = 0;
                while self.kind() == Tk::Minus {
                    self.bump();
                    n += 1;
                }
                let e = self.member();
                if n % 2 == 1 {
                    Self::call(first, "-_", vec![e])
                } else {
                    e
                }
            }
            _ => self.member(),
        }
    }

    fn member(&mut self) -> Expr {
        let mut e = self.primary();
        loop {
            match self.kind() {
                Tk::Dot => {
                    let dot = self.la(1);
                    let next = self.la(2);
                    let optional = next.kind == Tk::Question;
                    let id = if optional { self.la(3) } else { next };
                    if !matches!(id.kind, Tk::Ident | Tk::EscIdent) {
                        let end = if id.kind == Tk::Eof { dot.end } else { id.end };
                        let msg = format!(
                            "no viable alternative at input '{}'",
                            antlr_escape(&self.src[dot.start..end])
                        );
                        self.syntax_error(id.start, msg);
                        return e;
                    }
                    self.bump();
                    if optional {
                        self.bump();
                    }
                    self.bump();
                    let name = match id.kind {
                        Tk::EscIdent => {
                            let t = self.text(id);
                            t[1..t.len() - 1].to_string()
                        }
                        _ => self.text(id).to_string(),
                    };
                    if self.kind() == Tk::LParen && !optional && id.kind == Tk::Ident {
                        let open = self.bump();
                        let args = self.args(true);
                        e = self.receiver_call(open.start, e, name, args);
                    } else {
                        e = Expr::new(
                            dot.start,
                            ExprKind::Select {
                                operand: Box::new(e),
                                field: name,
                                test_only: false,
                                optional,
                            },
                        );
                    }
                }
                Tk::LBracket => {
                    let open = self.bump();
                    // ANTLR's sync before `'?'? expr`: one unexpected token is dropped,
                    // otherwise the member expression is abandoned.
                    if !self.recovering
                        && self.kind() != Tk::Question
                        && !FIRST_EXPR.contains(&self.kind())
                    {
                        let mut set = FIRST_EXPR.to_vec();
                        set.push(Tk::Question);
                        let t = self.la(1);
                        if set.contains(&self.la(2).kind) {
                            let msg = format!(
                                "extraneous input {} expecting {}",
                                self.display(t),
                                Self::expecting(&set)
                            );
                            self.syntax_error(t.start, msg);
                            self.i += 1;
                            self.recovering = false;
                        } else {
                            let msg = format!(
                                "mismatched input {} expecting {}",
                                self.display(t),
                                Self::expecting(&set)
                            );
                            self.syntax_error(t.start, msg);
                            self.recover_member();
                            return e;
                        }
                    }
                    let optional = self.kind() == Tk::Question;
                    if optional {
                        self.bump();
                    }
                    self.closers.push(Tk::RBracket);
                    let idx = self.expr();
                    self.closers.pop();
                    self.expect_in(Tk::RBracket, true);
                    let f = if optional { "_[?_]" } else { "_[_]" };
                    e = Self::call(open.start, f, vec![e, idx]);
                }
                _ => return e,
            }
        }
    }

    /// `( args )` after the opening parenthesis; `in_member`: of a member call.
    fn args(&mut self, in_member: bool) -> Vec<Expr> {
        let mut args = Vec::new();
        if self.kind() == Tk::RParen {
            self.bump();
            return args;
        }
        self.closers.push(Tk::RParen);
        loop {
            args.push(self.expr());
            if self.kind() == Tk::Comma {
                self.bump();
                continue;
            }
            break;
        }
        self.closers.pop();
        self.expect_in(Tk::RParen, in_member);
        args
    }

    fn primary(&mut self) -> Expr {
        let t = self.la(1);
        match t.kind {
            Tk::Dot | Tk::Ident => {
                let leading_dot = t.kind == Tk::Dot;
                if leading_dot {
                    if self.la(2).kind != Tk::Ident {
                        let end = if self.la(2).kind == Tk::Eof {
                            t.end
                        } else {
                            self.la(2).end
                        };
                        let msg = format!(
                            "no viable alternative at input '{}'",
                            antlr_escape(&self.src[t.start..end])
                        );
                        self.syntax_error(self.la(2).start, msg);
                        return self.error_node(t.start);
                    }
                    self.bump();
                }
                // A message construction `a.b.C{...}`?
                let mut k = 1;
                while self.la(k + 1).kind == Tk::Dot && self.la(k + 2).kind == Tk::Ident {
                    k += 2;
                }
                if self.la(k + 1).kind == Tk::LBrace {
                    return self.create_message(leading_dot, k);
                }
                let id = self.bump();
                let name = self.text(id).to_string();
                let full = if leading_dot {
                    format!(".{name}")
                } else {
                    name.clone()
                };
                let start = if leading_dot { t.start } else { id.start };
                if self.kind() == Tk::LParen {
                    let open = self.bump();
                    let args = self.args(false);
                    if RESERVED.contains(&name.as_str()) {
                        self.visit_error(start, format!("reserved identifier: {name}"));
                        return self.error_node(start);
                    }
                    return self.global_call(open.start, &full, args);
                }
                if RESERVED.contains(&name.as_str()) {
                    self.visit_error(start, format!("reserved identifier: {name}"));
                    return self.error_node(start);
                }
                Expr::new(id.start, ExprKind::Ident(full))
            }
            Tk::LParen => {
                self.bump();
                self.closers.push(Tk::RParen);
                let e = self.expr();
                self.closers.pop();
                self.expect(Tk::RParen);
                e
            }
            Tk::LBracket => {
                let open = self.bump();
                if self.kind() == Tk::Comma && self.la(2).kind == Tk::RBracket {
                    self.bump();
                }
                self.closers.push(Tk::RBracket);
                let mut elements = Vec::new();
                let mut optional = Vec::new();
                while self.kind() != Tk::RBracket {
                    if self.kind() == Tk::Question {
                        self.bump();
                        optional.push(elements.len());
                    }
                    elements.push(self.expr());
                    if self.kind() == Tk::Comma {
                        self.bump();
                        if self.kind() == Tk::Comma {
                            break;
                        }
                        continue;
                    }
                    if !self.sync_literal_end(Tk::RBracket) {
                        self.closers.pop();
                        return Expr::new(open.start, ExprKind::List { elements, optional });
                    }
                    break;
                }
                self.closers.pop();
                self.expect(Tk::RBracket);
                Expr::new(open.start, ExprKind::List { elements, optional })
            }
            Tk::LBrace => {
                let open = self.bump();
                if self.kind() == Tk::Comma && self.la(2).kind == Tk::RBrace {
                    self.bump();
                }
                let mut entries = Vec::new();
                while self.kind() != Tk::RBrace {
                    let opt = self.kind() == Tk::Question;
                    if opt {
                        self.bump();
                    }
                    self.closers.push(Tk::Colon);
                    let k = self.expr();
                    self.closers.pop();
                    self.closers.push(Tk::RBrace);
                    self.expect(Tk::Colon);
                    let v = self.expr();
                    self.closers.pop();
                    entries.push((k, v, opt));
                    if self.kind() == Tk::Comma {
                        self.bump();
                        continue;
                    }
                    if !self.sync_literal_end(Tk::RBrace) {
                        return Expr::new(open.start, ExprKind::Map { entries });
                    }
                    break;
                }
                self.expect(Tk::RBrace);
                Expr::new(open.start, ExprKind::Map { entries })
            }
            Tk::Minus if !matches!(self.la(2).kind, Tk::NumInt | Tk::NumFloat) => {
                // A `-` in a member can only sign a number.
                let next = self.la(2);
                let end = if next.kind == Tk::Eof {
                    t.end
                } else {
                    next.end
                };
                let msg = format!(
                    "no viable alternative at input '{}'",
                    antlr_escape(&self.src[t.start..end])
                );
                self.syntax_error(next.start, msg);
                self.error_node(t.start)
            }
            Tk::Minus | Tk::NumInt | Tk::NumFloat => self.number(),
            Tk::NumUint => {
                self.bump();
                let text = self.text(t);
                let digits = &text[..text.len() - 1];
                let parsed = match digits.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => digits.parse::<u64>(),
                };
                match parsed {
                    Ok(v) => Expr::new(t.start, ExprKind::Lit(Literal::Uint(v))),
                    Err(_) => {
                        self.visit_error(t.start, "invalid uint literal");
                        self.error_node(t.start)
                    }
                }
            }
            Tk::Str => {
                self.bump();
                let text = self.text(t).to_string();
                let s = self.unquote(t, text, false);
                Expr::new(
                    t.start,
                    ExprKind::Lit(Literal::String(String::from_utf8(s).unwrap_or_else(|e| {
                        String::from_utf8_lossy(e.as_bytes()).into_owned()
                    }))),
                )
            }
            Tk::Bytes => {
                self.bump();
                let text = self.text(t)[1..].to_string();
                let s = self.unquote(t, text, true);
                Expr::new(t.start, ExprKind::Lit(Literal::Bytes(s)))
            }
            Tk::True | Tk::False => {
                self.bump();
                Expr::new(t.start, ExprKind::Lit(Literal::Bool(t.kind == Tk::True)))
            }
            Tk::Null => {
                self.bump();
                Expr::new(t.start, ExprKind::Lit(Literal::Null))
            }
            _ => {
                // Not reachable after `sync_operand`; keep the parse going regardless.
                let msg = format!(
                    "mismatched input {} expecting {}",
                    self.display(t),
                    Self::expecting(&FIRST_EXPR)
                );
                self.syntax_error(t.start, msg);
                self.recover();
                self.error_node(t.start)
            }
        }
    }

    /// `-? NUM_INT` / `-? NUM_FLOAT`.
    fn number(&mut self) -> Expr {
        let first = self.la(1);
        let neg = first.kind == Tk::Minus;
        if neg {
            self.bump();
        }
        let t = self.bump();
        let text = self.text(t).to_string();
        let sign = if neg { "-" } else { "" };
        if t.kind == Tk::NumFloat {
            return match format!("{sign}{text}").parse::<f64>() {
                Ok(v) => Expr::new(first.start, ExprKind::Lit(Literal::Double(v))),
                Err(_) => {
                    self.visit_error(first.start, "invalid double literal");
                    self.error_node(first.start)
                }
            };
        }
        let parsed = match text.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(&format!("{sign}{h}"), 16),
            None => format!("{sign}{text}").parse::<i64>(),
        };
        match parsed {
            Ok(v) => Expr::new(first.start, ExprKind::Lit(Literal::Int(v))),
            Err(_) => {
                self.visit_error(first.start, "invalid int literal");
                self.error_node(first.start)
            }
        }
    }

    /// `a.b.C{field: value, ...}` with `k` identifier/dot tokens before the brace.
    fn create_message(&mut self, leading_dot: bool, k: usize) -> Expr {
        let mut name = if leading_dot {
            String::from(".")
        } else {
            String::new()
        };
        for _ in 0..k {
            let t = self.bump();
            name.push_str(self.text(t));
        }
        let open = self.bump();
        let mut fields = Vec::new();
        while self.kind() != Tk::RBrace {
            let opt = self.kind() == Tk::Question;
            if opt {
                self.bump();
            }
            let id = self.la(1);
            let field = match id.kind {
                Tk::Ident => self.text(id).to_string(),
                Tk::EscIdent => {
                    let t = self.text(id);
                    t[1..t.len() - 1].to_string()
                }
                _ => {
                    let msg = format!(
                        "mismatched input {} expecting {}",
                        self.display(id),
                        Self::expecting(&[Tk::Ident, Tk::EscIdent])
                    );
                    self.syntax_error(id.start, msg);
                    self.recover();
                    break;
                }
            };
            self.bump();
            self.closers.push(Tk::RBrace);
            self.expect(Tk::Colon);
            let v = self.expr();
            self.closers.pop();
            fields.push((field, v, opt));
            if self.kind() == Tk::Comma {
                self.bump();
                continue;
            }
            if !self.sync_literal_end(Tk::RBrace) {
                return Expr::new(open.start, ExprKind::Struct { name, fields });
            }
            break;
        }
        self.expect(Tk::RBrace);
        Expr::new(open.start, ExprKind::Struct { name, fields })
    }

    /// A string or bytes literal's value (`text` without the bytes prefix).
    fn unquote(&mut self, t: Token, text: String, bytes: bool) -> Vec<u8> {
        match unescape(&text, bytes) {
            Ok(v) => v,
            Err(msg) => {
                self.visit_error(t.start, msg);
                text.into_bytes()
            }
        }
    }

    fn global_call(&mut self, at: usize, name: &str, args: Vec<Expr>) -> Expr {
        if name == "has" && args.len() == 1 {
            let arg = args
                .into_iter()
                .next()
                .unwrap_or_else(|| self.error_node(at));
            return match arg.kind {
                ExprKind::Select {
                    operand,
                    field,
                    optional: false,
                    ..
                } => Expr::new(
                    at,
                    ExprKind::Select {
                        operand,
                        field,
                        test_only: true,
                        optional: false,
                    },
                ),
                _ => {
                    self.visit_error(arg.offset as usize, "invalid argument to has() macro");
                    self.error_node(at)
                }
            };
        }
        Self::call(at, name, args)
    }

    fn ident_of(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(i) => Some(i),
            _ => None,
        }
    }

    /// `target.name(args)`, expanding the receiver-style macros.
    fn receiver_call(&mut self, at: usize, target: Expr, name: String, args: Vec<Expr>) -> Expr {
        let n = args.len();
        let kind = match (name.as_str(), n) {
            ("all", 2 | 3) => Loop::All,
            ("exists", 2 | 3) => Loop::Exists,
            ("exists_one", 2 | 3) | ("existsOne", 3) => Loop::ExistsOne,
            ("map", 2 | 3) => Loop::Map,
            ("filter", 2) => Loop::Filter,
            ("transformList", 3 | 4) => Loop::TransformList,
            ("transformMap", 3 | 4) => Loop::TransformMap,
            ("transformMapEntry", 3 | 4) => Loop::TransformMapEntry,
            ("optMap", 2) => Loop::OptMap,
            ("optFlatMap", 2) => Loop::OptFlatMap,
            ("sortBy", 2) => Loop::SortBy,
            _ => {
                return Expr::new(
                    at,
                    ExprKind::Call {
                        function: name,
                        target: Some(Box::new(target)),
                        args,
                    },
                );
            }
        };
        let two_vars = match kind {
            Loop::TransformList | Loop::TransformMap | Loop::TransformMapEntry => true,
            Loop::All | Loop::Exists | Loop::ExistsOne => n == 3,
            _ => false,
        };
        let mut args = args.into_iter();
        let (Some(a0), Some(a1)) = (args.next(), args.next()) else {
            return self.error_node(at);
        };
        let rest: Vec<Expr> = args.collect();
        if kind == Loop::SortBy
            && !matches!(
                target.kind,
                ExprKind::List { .. }
                    | ExprKind::Select { .. }
                    | ExprKind::Ident(_)
                    | ExprKind::Loop { .. }
                    | ExprKind::Call { .. }
            )
        {
            self.visit_error(
                target.offset as usize,
                "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
            );
            return self.error_node(at);
        }
        // The iteration variables.
        let (var, var2, body) = if two_vars {
            let v1 = match Self::ident_of(&a0) {
                Some(v) => v.to_string(),
                None => {
                    self.visit_error(a0.offset as usize, "argument must be a simple name");
                    return self.error_node(at);
                }
            };
            let v2 = match Self::ident_of(&a1) {
                Some(v) => v.to_string(),
                None => {
                    self.visit_error(a1.offset as usize, "argument must be a simple name");
                    return self.error_node(at);
                }
            };
            if v1 == v2 {
                self.visit_error(a1.offset as usize, format!("duplicate variable name: {v1}"));
                return self.error_node(at);
            }
            for (v, a) in [(&v1, &a0), (&v2, &a1)] {
                if v == ACCUMULATOR || v == "__result__" {
                    self.visit_error(
                        a.offset as usize,
                        "iteration variable overwrites accumulator variable",
                    );
                    return self.error_node(at);
                }
            }
            (v1, Some(v2), rest)
        } else {
            let v = match Self::ident_of(&a0) {
                Some(v) => v.to_string(),
                None => {
                    let msg = match kind {
                        Loop::Map | Loop::Filter | Loop::SortBy => "argument is not an identifier",
                        Loop::OptMap => "optMap() variable name must be a simple identifier",
                        Loop::OptFlatMap => {
                            "optFlatMap() variable name must be a simple identifier"
                        }
                        _ => "argument must be a simple name",
                    };
                    self.visit_error(a0.offset as usize, msg);
                    return self.error_node(at);
                }
            };
            if (v == ACCUMULATOR || v == "__result__")
                && !matches!(kind, Loop::OptMap | Loop::OptFlatMap)
            {
                self.visit_error(
                    a0.offset as usize,
                    "iteration variable overwrites accumulator variable",
                );
                return self.error_node(at);
            }
            let mut body = vec![a1];
            body.extend(rest);
            (v, None, body)
        };
        let mut body = body.into_iter();
        let (filter, transform) = match (kind, body.len()) {
            (
                Loop::Map
                | Loop::TransformList
                | Loop::TransformMap
                | Loop::TransformMapEntry
                | Loop::OptMap
                | Loop::OptFlatMap
                | Loop::SortBy,
                1,
            ) => (None, body.next()),
            (Loop::Map | Loop::TransformList | Loop::TransformMap | Loop::TransformMapEntry, 2) => {
                (body.next(), body.next())
            }
            _ => (body.next(), None),
        };
        Expr::new(
            at,
            ExprKind::Loop {
                kind,
                var,
                var2,
                range: Box::new(target),
                filter: filter.map(Box::new),
                transform: transform.map(Box::new),
            },
        )
    }
}

/// cel-go's balanced tree of a `&&`/`||` chain: terms `lo..=hi+1` joined by `ops[lo..=hi]`.
fn balance(terms: &mut [Option<Expr>], ops: &[usize], f: &str, lo: usize, hi: usize) -> Expr {
    let mid = (lo + hi).div_ceil(2);
    let left = if mid == lo {
        terms[mid].take()
    } else {
        Some(balance(terms, ops, f, lo, mid - 1))
    };
    let right = if mid == hi {
        terms[mid + 1].take()
    } else {
        Some(balance(terms, ops, f, mid + 1, hi))
    };
    let null = || Expr::new(ops[mid], ExprKind::Lit(Literal::Null));
    Parser::call(
        ops[mid],
        f,
        vec![left.unwrap_or_else(null), right.unwrap_or_else(null)],
    )
}

/// cel-go's `unescape` of a string or bytes literal's text (quotes and raw prefix included).
fn unescape(text: &str, bytes: bool) -> Result<Vec<u8>, String> {
    let err = || "unable to unescape string".to_string();
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut v = normalized.as_str();
    if v.len() < 2 {
        return Err(err());
    }
    let raw = v.starts_with(['r', 'R']);
    if raw {
        v = &v[1..];
    }
    let b = v.as_bytes();
    let n = b.len();
    if n < 2 || b[0] != b[n - 1] || (b[0] != b'"' && b[0] != b'\'') {
        return Err(err());
    }
    let body = if n >= 6 && (v.starts_with("'''") || v.starts_with("\"\"\"")) {
        let q = &v[..3];
        if !v.ends_with(q) {
            return Err(err());
        }
        &v[3..n - 3]
    } else {
        &v[1..n - 1]
    };
    if raw || !body.contains('\\') {
        return Ok(body.as_bytes().to_vec());
    }
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        let c = rest.as_bytes()[0];
        if c != b'\\' {
            let ch = rest.chars().next().unwrap_or_default();
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            rest = &rest[ch.len_utf8()..];
            continue;
        }
        let eb = rest.as_bytes();
        if eb.len() <= 1 {
            return Err("unable to unescape string, found '\\' as last character".into());
        }
        let e = eb[1];
        rest = &rest[2..];
        let simple = match e {
            b'a' => Some(7u8),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let push_rune = |out: &mut Vec<u8>, v: u32| -> Result<(), String> {
            let ch = char::from_u32(v).ok_or("invalid unicode code point")?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            Ok(())
        };
        match e {
            b'x' | b'X' | b'u' | b'U' => {
                let n = match e {
                    b'x' | b'X' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                if bytes && n > 2 {
                    return Err(err());
                }
                let hex = rest.get(..n).ok_or_else(err)?;
                if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return Err(err());
                }
                let v = u32::from_str_radix(hex, 16).map_err(|_| err())?;
                rest = &rest[n..];
                if bytes {
                    out.push(v as u8);
                } else {
                    push_rune(&mut out, v)?;
                }
            }
            b'0'..=b'3' => {
                let oct = rest
                    .get(..2)
                    .filter(|o| o.bytes().all(|c| (b'0'..=b'7').contains(&c)))
                    .ok_or("unable to unescape octal sequence in string")?;
                let v = u32::from(e - b'0') * 64
                    + u32::from(oct.as_bytes()[0] - b'0') * 8
                    + u32::from(oct.as_bytes()[1] - b'0');
                rest = &rest[2..];
                if bytes {
                    out.push(v as u8);
                } else {
                    push_rune(&mut out, v)?;
                }
            }
            _ => return Err(err()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Expr {
        parse(s).unwrap_or_else(|e| panic!("{s}: {}", render_errors(s, &e)))
    }

    fn err(s: &str) -> String {
        render_errors(s, &parse(s).unwrap_err())
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
        assert_eq!(
            ok("'café'").kind,
            ExprKind::Lit(Literal::String("café".into()))
        );
        assert_eq!(ok(".5").kind, ExprKind::Lit(Literal::Double(0.5)));
        assert_eq!(ok("-.25e1").kind, ExprKind::Lit(Literal::Double(-2.5)));
    }

    #[test]
    fn errors_render_like_cel_go() {
        assert_eq!(
            err("self ==="),
            "ERROR: <input>:1:8: Syntax error: token recognition error at: '='\n | self ===\n | .......^\n\
             ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self ===\n | ........^"
        );
        assert_eq!(
            err("1 + * 2"),
            "ERROR: <input>:1:5: Syntax error: extraneous input '*' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 + * 2\n | ....^"
        );
        assert_eq!(
            err("(1 == 1"),
            "ERROR: <input>:1:8: Syntax error: missing ')' at '<EOF>'\n | (1 == 1\n | .......^"
        );
        assert_eq!(
            err("'日本' + x é"),
            "ERROR: <input>:1:10: Syntax error: token recognition error at: 'é'\n | '日本' + x é\n | .．．......＾"
        );
        assert!(parse("has(self)").is_err());
        assert!(parse("(((").is_err());
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
