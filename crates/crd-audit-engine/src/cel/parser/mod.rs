//! The CEL parser: cel-go's grammar parsed by recursive descent over the tokens of
//! [`super::lexer`], with the error behaviour of the ANTLR parser cel-go generates
//! (`extraneous input`, `missing X at Y`, `mismatched input`, `no viable alternative`, with
//! the same `expecting` sets and recovery), and the checks cel-go's parse-tree visitor makes
//! (reserved identifiers, literal ranges, escapes, macro arguments). Macros are expanded into
//! their own nodes ([`ExprKind::Loop`], presence tests); `&&`/`||` chains are balanced as
//! cel-go balances them. Errors render as cel-go renders them
//! (`ERROR: <input>:1:8: Syntax error: ...`, the source line and a caret).

use super::ast::{Expr, ExprKind, Literal};
use super::env::{Env, Feature};
use super::lexer::{Tk, Token, tokenize};

mod errors;
mod macros;
mod recovery;
mod unescape;

pub use errors::{ParseError, render_errors};
use recovery::antlr_escape;
use unescape::unescape;

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

/// Parses an expression with the syntax and macros of the newest environment; all errors
/// found are returned (cel-go reports several).
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn parse(src: &str) -> Result<Expr, Vec<ParseError>> {
    parse_in(src, Env::LATEST)
}

/// Parses an expression with the syntax (optional `.?`, `[?`, `?` entries) and macros
/// (two-variable comprehensions, `optMap`/`optFlatMap`, `sortBy`) of the environment `env`.
pub fn parse_in(src: &str, env: Env) -> Result<Expr, Vec<ParseError>> {
    let (tokens, lex_errors) = tokenize(src);
    let mut p = Parser {
        src,
        env,
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

struct Parser<'a> {
    src: &'a str,
    /// Which optional syntax and macros there are.
    env: Env,
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

    fn visit_error(&mut self, offset: usize, msg: impl Into<String>) {
        self.visit.push(ParseError {
            offset,
            message: msg.into(),
        });
    }

    /// Optional syntax at `offset`: an error unless the environment has optional types.
    fn optional_syntax(&mut self, offset: usize, msg: &str) {
        if !self.env.has(Feature::OptionalTypes) {
            self.visit_error(offset, msg);
        }
    }

    /// Whether the environment has a macro library.
    fn has(&self, f: Feature) -> bool {
        self.env.has(f)
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
            self.report_unexpected(t, true, &first);
            self.i += 1;
            self.recovering = false;
            return true;
        }
        self.report_unexpected(t, false, &first);
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
                    self.report_unexpected(t, true, &FIRST_EXPR);
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
                        self.optional_syntax(dot.start, "unsupported syntax '.?'");
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
                            self.report_unexpected(t, true, &set);
                            self.i += 1;
                            self.recovering = false;
                        } else {
                            self.report_unexpected(t, false, &set);
                            self.recover_member();
                            return e;
                        }
                    }
                    let optional = self.kind() == Tk::Question;
                    if optional {
                        self.bump();
                        self.optional_syntax(open.start, "unsupported syntax '[?'");
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
                        let q = self.bump();
                        self.optional_syntax(q.start, "unsupported syntax '?'");
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
                        let q = self.bump();
                        self.optional_syntax(q.start, "unsupported syntax '?'");
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
                self.report_unexpected(t, false, &FIRST_EXPR);
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
                let q = self.bump();
                self.optional_syntax(q.start, "unsupported syntax '?'");
            }
            let id = self.la(1);
            let field = match id.kind {
                Tk::Ident => self.text(id).to_string(),
                Tk::EscIdent => {
                    let t = self.text(id);
                    t[1..t.len() - 1].to_string()
                }
                _ => {
                    self.report_unexpected(id, false, &[Tk::Ident, Tk::EscIdent]);
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

#[cfg(test)]
mod tests;
