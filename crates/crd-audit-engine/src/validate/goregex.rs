//! Go (RE2) regular expressions on top of the `regex` crate.
//!
//! Kubernetes evaluates OpenAPI `pattern`s with Go's `regexp` package (RE2 syntax with the
//! Perl flags, UTF-8). This module contains a small parser that follows the algorithm of Go's
//! `regexp/syntax` closely enough to reject exactly what Go rejects, with Go's error text
//! (``error parsing regexp: <code>: `<expr>` ``), and to build a syntax tree with Go's meaning.
//! The tree is then written out in a canonical, fully explicit syntax for the `regex` crate:
//! every character class becomes a list of code point ranges (so `\d`, `\w`, `\s`, POSIX
//! classes and case folding keep Go's ASCII / simple-folding semantics), every group becomes
//! non-capturing (Go allows duplicate group names, Rust does not), and the word boundary
//! assertions become their ASCII forms.
//!
//! Known approximations, all in corners no real CRD pattern reaches:
//! - Go's "expression too large" and "expression nests too deeply" limits are computed on this
//!   module's tree, which does not factor alternations the way Go's parser does, and the size
//!   check is applied eagerly (Go starts checking only past a cheap heuristic).
//! - Unicode tables come from `regex-syntax` (its Unicode version may be newer than Go's).
//! - Go 1.25+ looks up `\p{Name}` after canonicalising the name (case, `_`, `-` and spaces are
//!   ignored); multi-word script names are matched the same way here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

/// A compiled Go regular expression.
#[derive(Clone, Debug)]
pub struct GoRegex {
    re: regex::Regex,
}

/// Go's `regexp.Compile` error text, e.g. ``error parsing regexp: missing closing ]: `[a` ``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GoRegexError(pub String);

/// Prefix of errors that Go would not report: the pattern is valid Go, but the Rust engine
/// refuses it (its compiled form exceeds [`RUST_SIZE_LIMIT`]).
pub const ENGINE_LIMIT_PREFIX: &str = "crd-audit: pattern accepted by Go but too large to compile";

/// Size limit handed to `regex::RegexBuilder` (compiled program and lazy DFA cache).
pub const RUST_SIZE_LIMIT: usize = 64 << 20;

/// Go's `maxRepeat`: the largest count in `x{n,m}`, and the largest product of nested counts.
const MAX_REPEAT: i64 = 1000;
/// Go's `maxHeight`: the deepest parse tree allowed.
const MAX_HEIGHT: u32 = 1000;
/// Go's `maxSize`: 128 MiB of 40-byte instructions.
const MAX_SIZE: u64 = (128 << 20) / 40;
/// How many compiled patterns [`compile_cached`] keeps.
const CACHE_CAPACITY: usize = 4096;

const MAX_RUNE: u32 = 0x10FFFF;

/// Compiles `pattern` with Go's syntax and semantics.
pub fn compile(pattern: &str) -> Result<GoRegex, GoRegexError> {
    let translated = translate(pattern)?;
    regex::RegexBuilder::new(&translated)
        .size_limit(RUST_SIZE_LIMIT)
        .dfa_size_limit(RUST_SIZE_LIMIT)
        .nest_limit(10_000)
        .build()
        .map(|re| GoRegex { re })
        .map_err(|e| {
            let detail = match e {
                regex::Error::CompiledTooBig(limit) => {
                    format!("compiled size exceeds {limit} bytes")
                }
                other => other.to_string(),
            };
            GoRegexError(format!("{ENGINE_LIMIT_PREFIX}: {detail}: `{pattern}`"))
        })
}

/// [`compile`] through a process-wide, bounded cache (thread-safe).
pub fn compile_cached(pattern: &str) -> Result<Arc<GoRegex>, GoRegexError> {
    type Cache = Mutex<HashMap<String, Result<Arc<GoRegex>, GoRegexError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(pattern) {
        return hit.clone();
    }
    let result = compile(pattern).map(Arc::new);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= CACHE_CAPACITY {
        map.clear();
    }
    map.insert(pattern.to_owned(), result.clone());
    result
}

impl GoRegex {
    /// Whether the pattern matches anywhere in `s` (Go's `MatchString`).
    /// The leftmost match (Go's `FindString`).
    pub fn find(&self, s: &str) -> Option<String> {
        self.re.find(s).map(|m| m.as_str().to_string())
    }

    /// All non-overlapping matches (Go's `FindAllString`).
    pub fn find_all(&self, s: &str) -> Vec<String> {
        self.re
            .find_iter(s)
            .map(|m| m.as_str().to_string())
            .collect()
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// The pattern handed to the `regex` crate (for diagnostics).
    pub fn translated(&self) -> &str {
        self.re.as_str()
    }
}

/// Translates a Go pattern into an equivalent pattern for the `regex` crate, or returns Go's
/// parse error.
pub fn translate(pattern: &str) -> Result<String, GoRegexError> {
    let tree = Parser::new(pattern).parse()?;
    let mut out = String::with_capacity(pattern.len() * 2);
    emit(&tree, &mut out);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Errors

#[derive(Clone, Copy, Debug)]
enum Code {
    InvalidCharRange,
    InvalidEscape,
    InvalidNamedCapture,
    InvalidPerlOp,
    InvalidRepeatOp,
    InvalidRepeatSize,
    MissingBracket,
    MissingParen,
    MissingRepeatArgument,
    TrailingBackslash,
    UnexpectedParen,
    NestingDepth,
    Large,
}

impl Code {
    fn text(self) -> &'static str {
        match self {
            Code::InvalidCharRange => "invalid character class range",
            Code::InvalidEscape => "invalid escape sequence",
            Code::InvalidNamedCapture => "invalid named capture",
            Code::InvalidPerlOp => "invalid or unsupported Perl syntax",
            Code::InvalidRepeatOp => "invalid nested repetition operator",
            Code::InvalidRepeatSize => "invalid repeat count",
            Code::MissingBracket => "missing closing ]",
            Code::MissingParen => "missing closing )",
            Code::MissingRepeatArgument => "missing argument to repetition operator",
            Code::TrailingBackslash => "trailing backslash at end of expression",
            Code::UnexpectedParen => "unexpected )",
            Code::NestingDepth => "expression nests too deeply",
            Code::Large => "expression too large",
        }
    }
}

fn go_err(code: Code, expr: &str) -> GoRegexError {
    GoRegexError(format!("error parsing regexp: {}: `{expr}`", code.text()))
}

type PResult<T> = Result<T, GoRegexError>;

// ---------------------------------------------------------------------------------------------
// Syntax tree

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RepOp {
    Star,
    Plus,
    Quest,
    /// `{min}`, `{min,}` (max `None`) or `{min,max}`.
    Count(u32, Option<u32>),
}

#[derive(Debug)]
enum Kind {
    Empty,
    /// Code points (a surrogate can be written with `\x{D800}`: it never matches).
    Lit(Vec<u32>, bool),
    Class(ClassUnicode),
    AnyNotNl,
    Any,
    BeginLine,
    EndLine,
    BeginText,
    EndText,
    WordBoundary,
    NoWordBoundary,
    Capture(Box<Node>),
    Repeat(RepOp, bool, Box<Node>),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    /// Go's `calcSize` estimate of the compiled size.
    size: u64,
    /// Go's `calcHeight`.
    height: u32,
}

impl Node {
    fn leaf(kind: Kind) -> Node {
        let size = match &kind {
            Kind::Lit(runes, _) => runes.len().max(1) as u64,
            _ => 1,
        };
        Node {
            kind,
            size,
            height: 1,
        }
    }
}

/// Whether a repetition tree stays within `n` copies of its innermost part (Go's rule for
/// nested counted repetitions).
fn repeat_is_valid(node: &Node, mut n: i64) -> bool {
    if let Kind::Repeat(RepOp::Count(min, max), _, _) = node.kind {
        let m = match max {
            Some(0) => return true,
            Some(m) => m as i64,
            None => min as i64,
        };
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    match &node.kind {
        Kind::Capture(sub) | Kind::Repeat(_, _, sub) => repeat_is_valid(sub, n),
        Kind::Concat(subs) | Kind::Alternate(subs) => subs.iter().all(|s| repeat_is_valid(s, n)),
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

#[derive(Clone, Copy, Debug)]
struct Flags {
    fold: bool,
    dot_nl: bool,
    one_line: bool,
    non_greedy: bool,
}

/// An open group: what was parsed so far inside it.
struct Frame {
    /// Flags to restore at the closing `)`.
    saved: Flags,
    capture: bool,
    alts: Vec<Node>,
    cur: Vec<Node>,
}

struct Parser<'a> {
    whole: &'a str,
    flags: Flags,
    frames: Vec<Frame>,
}

impl<'a> Parser<'a> {
    fn new(whole: &'a str) -> Self {
        let flags = Flags {
            fold: false,
            dot_nl: false,
            one_line: true,
            non_greedy: false,
        };
        Parser {
            whole,
            flags,
            frames: vec![Frame {
                saved: flags,
                capture: false,
                alts: Vec::new(),
                cur: Vec::new(),
            }],
        }
    }

    /// Applies Go's size and height limits to a freshly built node.
    fn check(&self, node: Node) -> PResult<Node> {
        if node.size > MAX_SIZE {
            return Err(go_err(Code::Large, self.whole));
        }
        if node.height > MAX_HEIGHT {
            return Err(go_err(Code::NestingDepth, self.whole));
        }
        Ok(node)
    }

    fn top(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("root frame")
    }

    fn push(&mut self, node: Node) -> PResult<()> {
        let node = self.check(node)?;
        self.top().cur.push(node);
        Ok(())
    }

    fn push_literal(&mut self, c: u32) -> PResult<()> {
        let fold = self.flags.fold;
        self.push(Node::leaf(Kind::Lit(vec![c], fold)))
    }

    fn push_class(&mut self, class: ClassUnicode) -> PResult<()> {
        self.push(Node::leaf(Kind::Class(class)))
    }

    fn concat(&self, items: Vec<Node>) -> PResult<Node> {
        let mut subs: Vec<Node> = Vec::with_capacity(items.len());
        for item in items {
            let flat = match item.kind {
                Kind::Concat(inner) => inner,
                kind => vec![Node { kind, ..item }],
            };
            for node in flat {
                if let (
                    Some(Node {
                        kind: Kind::Lit(prev, pf),
                        size,
                        ..
                    }),
                    Kind::Lit(runes, f),
                ) = (subs.last_mut(), &node.kind)
                    && pf == f
                {
                    prev.extend_from_slice(runes);
                    *size = prev.len() as u64;
                    continue;
                }
                subs.push(node);
            }
        }
        match subs.len() {
            0 => Ok(Node::leaf(Kind::Empty)),
            1 => Ok(subs.pop().expect("one")),
            _ => {
                let size = subs.iter().map(|s| s.size).fold(0u64, u64::saturating_add);
                let height = 1 + subs.iter().map(|s| s.height).max().unwrap_or(0);
                self.check(Node {
                    kind: Kind::Concat(subs),
                    size,
                    height,
                })
            }
        }
    }

    fn alternate(&self, items: Vec<Node>) -> PResult<Node> {
        let mut subs: Vec<Node> = Vec::with_capacity(items.len());
        for item in items {
            match item.kind {
                Kind::Alternate(inner) => subs.extend(inner),
                kind => subs.push(Node { kind, ..item }),
            }
        }
        if subs.len() == 1 {
            return Ok(subs.pop().expect("one"));
        }
        let size = subs
            .iter()
            .map(|s| s.size)
            .fold(subs.len() as u64 - 1, u64::saturating_add);
        let height = 1 + subs.iter().map(|s| s.height).max().unwrap_or(0);
        self.check(Node {
            kind: Kind::Alternate(subs),
            size,
            height,
        })
    }

    /// Closes the innermost frame's alternation.
    fn finish_frame(&self, mut frame: Frame) -> PResult<Node> {
        let last = self.concat(std::mem::take(&mut frame.cur))?;
        frame.alts.push(last);
        self.alternate(frame.alts)
    }

    fn parse(mut self) -> PResult<Node> {
        let s = self.whole;
        let mut i = 0;
        let mut last_repeat: Option<usize> = None;
        while i < s.len() {
            let t = &s[i..];
            let mut repeat = None;
            match t.as_bytes()[0] {
                b'(' => {
                    if t.as_bytes().get(1) == Some(&b'?') {
                        i += self.parse_perl_flags(t)?;
                    } else {
                        let saved = self.flags;
                        self.frames.push(Frame {
                            saved,
                            capture: true,
                            alts: Vec::new(),
                            cur: Vec::new(),
                        });
                        i += 1;
                    }
                }
                b'|' => {
                    let cur = std::mem::take(&mut self.top().cur);
                    let node = self.concat(cur)?;
                    self.top().alts.push(node);
                    i += 1;
                }
                b')' => {
                    if self.frames.len() < 2 {
                        return Err(go_err(Code::UnexpectedParen, s));
                    }
                    let frame = self.frames.pop().expect("frame");
                    let (saved, capture) = (frame.saved, frame.capture);
                    let inner = self.finish_frame(frame)?;
                    self.flags = saved;
                    if capture {
                        let (size, height) = (inner.size.saturating_add(2), inner.height + 1);
                        self.push(Node {
                            kind: Kind::Capture(Box::new(inner)),
                            size,
                            height,
                        })?;
                    } else {
                        self.push(inner)?;
                    }
                    i += 1;
                }
                b'^' => {
                    let kind = if self.flags.one_line {
                        Kind::BeginText
                    } else {
                        Kind::BeginLine
                    };
                    self.push(Node::leaf(kind))?;
                    i += 1;
                }
                b'$' => {
                    let kind = if self.flags.one_line {
                        Kind::EndText
                    } else {
                        Kind::EndLine
                    };
                    self.push(Node::leaf(kind))?;
                    i += 1;
                }
                b'.' => {
                    let kind = if self.flags.dot_nl {
                        Kind::Any
                    } else {
                        Kind::AnyNotNl
                    };
                    self.push(Node::leaf(kind))?;
                    i += 1;
                }
                b'[' => {
                    let (class, n) = self.parse_class(t)?;
                    self.push_class(class)?;
                    i += n;
                }
                c @ (b'*' | b'+' | b'?') => {
                    let op = match c {
                        b'*' => RepOp::Star,
                        b'+' => RepOp::Plus,
                        _ => RepOp::Quest,
                    };
                    let before = i;
                    i = self.repeat(op, i, i + 1, last_repeat)?;
                    repeat = Some(before);
                }
                b'{' => match parse_repeat(t) {
                    None => {
                        self.push_literal('{' as u32)?;
                        i += 1;
                    }
                    Some((min, max, len)) => {
                        let end = i + len;
                        if !(0..=MAX_REPEAT).contains(&min)
                            || max > MAX_REPEAT
                            || (max >= 0 && min > max)
                        {
                            return Err(go_err(Code::InvalidRepeatSize, &s[i..end]));
                        }
                        let max = (max >= 0).then_some(max as u32);
                        let before = i;
                        i = self.repeat(RepOp::Count(min as u32, max), i, end, last_repeat)?;
                        repeat = Some(before);
                    }
                },
                b'\\' => i += self.parse_backslash(t)?,
                _ => {
                    let c = t.chars().next().expect("non-empty");
                    self.push_literal(c as u32)?;
                    i += c.len_utf8();
                }
            }
            last_repeat = repeat;
        }
        if self.frames.len() != 1 {
            // Go closes the pending concatenation first, which may hit a size limit.
            let frame = self.frames.pop().expect("frame");
            self.finish_frame(frame)?;
            return Err(go_err(Code::MissingParen, s));
        }
        let root = self.frames.pop().expect("root");
        self.finish_frame(root)
    }

    /// Applies a repetition operator spanning `s[before..after]` to the last parsed item.
    /// Returns the position after the operator (and its optional non-greedy `?`).
    fn repeat(
        &mut self,
        op: RepOp,
        before: usize,
        after: usize,
        last_repeat: Option<usize>,
    ) -> PResult<usize> {
        let s = self.whole;
        let mut after = after;
        let mut greedy = !self.flags.non_greedy;
        if s.as_bytes().get(after) == Some(&b'?') {
            after += 1;
            greedy = !greedy;
        }
        if let Some(start) = last_repeat {
            return Err(go_err(Code::InvalidRepeatOp, &s[start..after]));
        }
        let Some(sub) = self.top().cur.pop() else {
            return Err(go_err(Code::MissingRepeatArgument, &s[before..after]));
        };
        let size = match op {
            RepOp::Star => sub.size.saturating_add(2),
            RepOp::Plus | RepOp::Quest => sub.size.saturating_add(1),
            RepOp::Count(0, None) => sub.size.saturating_add(2),
            RepOp::Count(min, None) => (min as u64).saturating_mul(sub.size).saturating_add(1),
            RepOp::Count(min, Some(max)) => (max as u64)
                .saturating_mul(sub.size)
                .saturating_add((max - min) as u64),
        }
        .max(1);
        let height = sub.height + 1;
        let node = self.check(Node {
            kind: Kind::Repeat(op, greedy, Box::new(sub)),
            size,
            height,
        })?;
        if let RepOp::Count(min, max) = op
            && (min >= 2 || max.is_some_and(|m| m >= 2))
            && !repeat_is_valid(&node, MAX_REPEAT)
        {
            return Err(go_err(Code::InvalidRepeatSize, &s[before..after]));
        }
        self.top().cur.push(node);
        Ok(after)
    }

    /// Parses `(?...`: named captures, flag changes and non-capturing groups. Returns the
    /// number of bytes consumed.
    fn parse_perl_flags(&mut self, t: &str) -> PResult<usize> {
        let b = t.as_bytes();
        let with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
        let with_angle = b.len() > 3 && b[2] == b'<';
        if with_p || with_angle {
            let name_start = if with_p { 4 } else { 3 };
            let Some(end) = t.find('>') else {
                return Err(go_err(Code::InvalidNamedCapture, t));
            };
            let name = &t[name_start..end];
            let valid =
                !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
            if !valid {
                return Err(go_err(Code::InvalidNamedCapture, &t[..=end]));
            }
            let saved = self.flags;
            self.frames.push(Frame {
                saved,
                capture: true,
                alts: Vec::new(),
                cur: Vec::new(),
            });
            return Ok(end + 1);
        }

        let mut flags = self.flags;
        let mut negated = false;
        let mut saw_flag = false;
        let mut j = 2;
        for c in t[2..].chars() {
            j += c.len_utf8();
            match c {
                'i' => flags.fold = !negated,
                'm' => flags.one_line = negated,
                's' => flags.dot_nl = !negated,
                'U' => flags.non_greedy = !negated,
                '-' if !negated => {
                    negated = true;
                    saw_flag = false;
                    continue;
                }
                ':' | ')' if !negated || saw_flag => {
                    if c == ':' {
                        let saved = self.flags;
                        self.frames.push(Frame {
                            saved,
                            capture: false,
                            alts: Vec::new(),
                            cur: Vec::new(),
                        });
                    }
                    self.flags = flags;
                    return Ok(j);
                }
                _ => break,
            }
            saw_flag = true;
        }
        Err(go_err(Code::InvalidPerlOp, &t[..j]))
    }

    /// Parses an escape outside a class. Returns the number of bytes consumed.
    fn parse_backslash(&mut self, t: &str) -> PResult<usize> {
        let b = t.as_bytes();
        if b.len() >= 2 {
            let kind = match b[1] {
                b'A' => Some(Kind::BeginText),
                b'b' => Some(Kind::WordBoundary),
                b'B' => Some(Kind::NoWordBoundary),
                b'z' => Some(Kind::EndText),
                b'C' => return Err(go_err(Code::InvalidEscape, &t[..2])),
                b'Q' => {
                    let rest = &t[2..];
                    let (lit, consumed) = match rest.find("\\E") {
                        Some(k) => (&rest[..k], 2 + k + 2),
                        None => (rest, t.len()),
                    };
                    for c in lit.chars() {
                        self.push_literal(c as u32)?;
                    }
                    return Ok(consumed);
                }
                _ => None,
            };
            if let Some(kind) = kind {
                self.push(Node::leaf(kind))?;
                return Ok(2);
            }
            if b[1] == b'p' || b[1] == b'P' {
                let (class, n) = self.parse_unicode_class(t)?;
                self.push_class(class)?;
                return Ok(n);
            }
        }
        if let Some(class) = self.perl_class(t) {
            self.push_class(class)?;
            return Ok(2);
        }
        let (c, n) = parse_escape(t)?;
        self.push_literal(c)?;
        Ok(n)
    }

    /// `\d \D \s \S \w \W` at the start of `t` (ASCII only, as in Go).
    fn perl_class(&self, t: &str) -> Option<ClassUnicode> {
        let b = t.as_bytes();
        if b.len() < 2 || b[0] != b'\\' {
            return None;
        }
        let (ranges, negated): (&[(char, char)], bool) = match b[1] {
            b'd' => (DIGIT, false),
            b'D' => (DIGIT, true),
            b's' => (PERL_SPACE, false),
            b'S' => (PERL_SPACE, true),
            b'w' => (WORD, false),
            b'W' => (WORD, true),
            _ => return None,
        };
        Some(self.group(class_of(ranges), negated))
    }

    /// Go's `appendGroup`: fold (under `(?i)`) and then negate.
    fn group(&self, mut class: ClassUnicode, negated: bool) -> ClassUnicode {
        if self.flags.fold {
            class.case_fold_simple();
        }
        if negated {
            class.negate();
        }
        class
    }

    /// `\pL`, `\p{Name}`, `\P{Name}`, `\p{^Name}` at the start of `t`.
    fn parse_unicode_class(&self, t: &str) -> PResult<(ClassUnicode, usize)> {
        let mut negated = t.as_bytes()[1] == b'P';
        let (seq, mut name) = match t[2..].chars().next() {
            None => (&t[..2], ""),
            Some('{') => {
                let Some(end) = t.find('}') else {
                    return Err(go_err(Code::InvalidCharRange, t));
                };
                (&t[..=end], &t[3..end])
            }
            Some(c) => {
                let seq = &t[..2 + c.len_utf8()];
                (seq, &seq[2..])
            }
        };
        if let Some(rest) = name.strip_prefix('^') {
            negated = !negated;
            name = rest;
        }
        let Some((class, table_negated)) = unicode_table(name) else {
            return Err(go_err(Code::InvalidCharRange, seq));
        };
        Ok((self.group(class, negated != table_negated), seq.len()))
    }

    /// Parses a bracketed class at the start of `t` (which begins with `[`).
    fn parse_class(&self, t: &str) -> PResult<(ClassUnicode, usize)> {
        let b = t.as_bytes();
        let mut j = 1;
        let negated = b.get(1) == Some(&b'^');
        if negated {
            j += 1;
        }
        let mut class = ClassUnicode::empty();
        let mut first = true;
        while j >= b.len() || b[j] != b']' || first {
            first = false;
            let r = &t[j..];
            if r.len() > 2
                && r.starts_with("[:")
                && let Some((named, n)) = self.parse_named_class(r)?
            {
                class.union(&named);
                j += n;
                continue;
            }
            if r.len() >= 2 && (r.starts_with("\\p") || r.starts_with("\\P")) {
                let (uc, n) = self.parse_unicode_class(r)?;
                class.union(&uc);
                j += n;
                continue;
            }
            if let Some(pc) = self.perl_class(r) {
                class.union(&pc);
                j += 2;
                continue;
            }
            let start = j;
            let (lo, n) = parse_class_char(r, t)?;
            j += n;
            let mut hi = lo;
            if b.len() >= j + 2 && b[j] == b'-' && b[j + 1] != b']' {
                j += 1;
                let (h, n) = parse_class_char(&t[j..], t)?;
                j += n;
                if h < lo {
                    return Err(go_err(Code::InvalidCharRange, &t[start..j]));
                }
                hi = h;
            }
            let mut range = range_class(lo, hi);
            if self.flags.fold {
                range.case_fold_simple();
            }
            class.union(&range);
        }
        if negated {
            class.negate();
        }
        Ok((class, j + 1))
    }

    /// `[:alpha:]` and friends at the start of `r`; `None` if `r` has no `:]` at all.
    fn parse_named_class(&self, r: &str) -> PResult<Option<(ClassUnicode, usize)>> {
        let Some(k) = r[2..].find(":]") else {
            return Ok(None);
        };
        let end = k + 4;
        let name = &r[..end];
        let (inner, negated) = match name[2..end - 2].strip_prefix('^') {
            Some(rest) => (rest, true),
            None => (&name[2..end - 2], false),
        };
        let ranges: &[(char, char)] = match inner {
            "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
            "alpha" => &[('A', 'Z'), ('a', 'z')],
            "ascii" => &[('\0', '\x7f')],
            "blank" => &[('\t', '\t'), (' ', ' ')],
            "cntrl" => &[('\0', '\x1f'), ('\x7f', '\x7f')],
            "digit" => DIGIT,
            "graph" => &[('!', '~')],
            "lower" => &[('a', 'z')],
            "print" => &[(' ', '~')],
            "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
            "space" => &[('\t', '\r'), (' ', ' ')],
            "upper" => &[('A', 'Z')],
            "word" => WORD,
            "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
            _ => return Err(go_err(Code::InvalidCharRange, name)),
        };
        Ok(Some((self.group(class_of(ranges), negated), end)))
    }
}

const DIGIT: &[(char, char)] = &[('0', '9')];
const PERL_SPACE: &[(char, char)] = &[('\t', '\n'), ('\x0c', '\r'), (' ', ' ')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];

fn class_of(ranges: &[(char, char)]) -> ClassUnicode {
    ClassUnicode::new(ranges.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))
}

/// The class of code points `lo..=hi`, without surrogates (which never occur in a `&str`).
fn range_class(lo: u32, hi: u32) -> ClassUnicode {
    let mut class = ClassUnicode::empty();
    let mut add = |a: u32, b: u32| {
        if a <= b
            && let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b))
        {
            class.push(ClassUnicodeRange::new(a, b));
        }
    };
    add(lo, hi.min(0xD7FF));
    add(lo.max(0xE000), hi);
    class
}

/// Go's `parseRepeat`: `{n}`, `{n,}` or `{n,m}` at the start of `t`. Returns (min, max, len)
/// with max -1 for "no maximum" and min -1 for numbers too big; `None` if `{` is a literal.
fn parse_repeat(t: &str) -> Option<(i64, i64, usize)> {
    let b = t.as_bytes();
    let mut j = 1;
    let (min, n) = parse_int(&b[j..])?;
    j += n;
    let max;
    let mut min = min;
    match b.get(j)? {
        b',' => {
            j += 1;
            if *b.get(j)? == b'}' {
                max = -1;
            } else {
                let (m, n) = parse_int(&b[j..])?;
                j += n;
                max = m;
                if m < 0 {
                    min = -1;
                }
            }
        }
        _ => max = min,
    }
    if *b.get(j)? != b'}' {
        return None;
    }
    Some((min, max, j + 1))
}

/// Go's `parseInt`: decimal digits without leading zeros; -1 when the value reaches 1e8.
fn parse_int(b: &[u8]) -> Option<(i64, usize)> {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || (digits >= 2 && b[0] == b'0') {
        return None;
    }
    let mut n: i64 = 0;
    for &c in &b[..digits] {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(c - b'0');
    }
    Some((n, digits))
}

/// Go's `parseClassChar`: one (possibly escaped) character inside a class.
fn parse_class_char(r: &str, whole_class: &str) -> PResult<(u32, usize)> {
    match r.chars().next() {
        None => Err(go_err(Code::MissingBracket, whole_class)),
        Some('\\') => parse_escape(r),
        Some(c) => Ok((c as u32, c.len_utf8())),
    }
}

/// Go's `parseEscape`: a single-character escape at the start of `t` (which begins with `\`).
/// Returns the code point and the number of bytes consumed.
fn parse_escape(t: &str) -> PResult<(u32, usize)> {
    let mut chars = t[1..].chars();
    let Some(c) = chars.next() else {
        return Err(go_err(Code::TrailingBackslash, ""));
    };
    let mut j = 1 + c.len_utf8();
    let b = t.as_bytes();
    let is_octal = |k: usize| b.get(k).is_some_and(|d| (b'0'..=b'7').contains(d));
    match c {
        '0'..='7' if c == '0' || is_octal(j) => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !is_octal(j) {
                    break;
                }
                r = r * 8 + u32::from(b[j] - b'0');
                j += 1;
            }
            return Ok((r, j));
        }
        'x' => {
            if let Some(c2) = chars.next() {
                j += c2.len_utf8();
                if c2 == '{' {
                    let mut r: u32 = 0;
                    let mut any_digit = false;
                    for d in chars.by_ref() {
                        j += d.len_utf8();
                        if d == '}' {
                            if any_digit {
                                return Ok((r, j));
                            }
                            break;
                        }
                        let Some(v) = d.to_digit(16) else { break };
                        r = r * 16 + v;
                        if r > MAX_RUNE {
                            break;
                        }
                        any_digit = true;
                    }
                } else {
                    let x = c2.to_digit(16);
                    let y = chars.next().and_then(|d| {
                        j += d.len_utf8();
                        d.to_digit(16)
                    });
                    if let (Some(x), Some(y)) = (x, y) {
                        return Ok((x * 16 + y, j));
                    }
                }
            }
        }
        'a' => return Ok((0x07, j)),
        'f' => return Ok((0x0C, j)),
        'n' => return Ok((0x0A, j)),
        'r' => return Ok((0x0D, j)),
        't' => return Ok((0x09, j)),
        'v' => return Ok((0x0B, j)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => return Ok((c as u32, j)),
        _ => {}
    }
    Err(go_err(Code::InvalidEscape, &t[..j]))
}

/// Go 1.25+'s `canonicalName`: first letter upper case, the rest lower case, without `_`,
/// `-` and spaces.
fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '_' | '-' | ' ') {
            continue;
        }
        if out.is_empty() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// General categories Go knows, with their (canonicalised) long aliases.
const CATEGORIES: &[(&str, &[&str])] = &[
    ("C", &["Other"]),
    ("Cc", &["Control", "Cntrl"]),
    ("Cf", &["Format"]),
    ("Cn", &["Unassigned"]),
    ("Co", &["Privateuse"]),
    ("Cs", &["Surrogate"]),
    ("L", &["Letter"]),
    ("Lc", &["Casedletter"]),
    ("Ll", &["Lowercaseletter"]),
    ("Lm", &["Modifierletter"]),
    ("Lo", &["Otherletter"]),
    ("Lt", &["Titlecaseletter"]),
    ("Lu", &["Uppercaseletter"]),
    ("M", &["Mark", "Combiningmark"]),
    ("Mc", &["Spacingmark"]),
    ("Me", &["Enclosingmark"]),
    ("Mn", &["Nonspacingmark"]),
    ("N", &["Number"]),
    ("Nd", &["Decimalnumber", "Digit"]),
    ("Nl", &["Letternumber"]),
    ("No", &["Othernumber"]),
    ("P", &["Punctuation", "Punct"]),
    ("Pc", &["Connectorpunctuation"]),
    ("Pd", &["Dashpunctuation"]),
    ("Pe", &["Closepunctuation"]),
    ("Pf", &["Finalpunctuation"]),
    ("Pi", &["Initialpunctuation"]),
    ("Po", &["Otherpunctuation"]),
    ("Ps", &["Openpunctuation"]),
    ("S", &["Symbol"]),
    ("Sc", &["Currencysymbol"]),
    ("Sk", &["Modifiersymbol"]),
    ("Sm", &["Mathsymbol"]),
    ("So", &["Othersymbol"]),
    ("Z", &["Separator"]),
    ("Zl", &["Lineseparator"]),
    ("Zp", &["Paragraphseparator"]),
    ("Zs", &["Spaceseparator"]),
];

/// Scripts in Go's `unicode.Scripts` (Unicode 15.0).
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// Looks up a `\p{...}` name the way Go does. Returns the positive class and whether Go's
/// table is inverted ("Assigned" is "not Cn").
fn unicode_table(name: &str) -> Option<(ClassUnicode, bool)> {
    let canon = canonical_name(name);
    match canon.as_str() {
        "Any" => return Some((range_class(0, MAX_RUNE), false)),
        "Assigned" => return Some((property("gc=Cn")?, true)),
        "Ascii" => return Some((range_class(0, 0x7F), false)),
        _ => {}
    }
    if let Some((abbr, _)) = CATEGORIES.iter().find(|(abbr, _)| *abbr == canon) {
        return Some((property(&format!("gc={abbr}"))?, false));
    }
    if let Some(script) = SCRIPTS.iter().find(|s| canonical_name(s) == canon) {
        return Some((property(&format!("sc={script}"))?, false));
    }
    let (abbr, _) = CATEGORIES
        .iter()
        .find(|(_, aliases)| aliases.contains(&canon.as_str()))?;
    Some((property(&format!("gc={abbr}"))?, false))
}

/// A Unicode property class from `regex-syntax`'s tables.
fn property(query: &str) -> Option<ClassUnicode> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&format!("\\p{{{query}}}"))
        .ok()?;
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Output for the `regex` crate

/// A class that matches nothing.
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

fn push_char(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

fn emit_class(class: &ClassUnicode, out: &mut String) {
    let ranges = class.ranges();
    if ranges.is_empty() {
        out.push_str(NEVER);
        return;
    }
    if let [r] = ranges
        && r.start() == r.end()
    {
        push_char(r.start(), out);
        return;
    }
    out.push('[');
    for r in ranges {
        push_char(r.start(), out);
        if r.end() != r.start() {
            out.push('-');
            push_char(r.end(), out);
        }
    }
    out.push(']');
}

fn emit_lit(runes: &[u32], fold: bool, out: &mut String) {
    for &r in runes {
        let Some(c) = char::from_u32(r) else {
            out.push_str(NEVER);
            continue;
        };
        if fold {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            emit_class(&class, out);
        } else {
            push_char(c, out);
        }
    }
}

/// Whether `node` is emitted as a single atom (no group needed before a repetition).
fn is_atom(node: &Node) -> bool {
    match &node.kind {
        Kind::Lit(runes, _) => runes.len() == 1,
        Kind::Class(_) | Kind::Any | Kind::AnyNotNl => true,
        _ => false,
    }
}

fn emit(node: &Node, out: &mut String) {
    match &node.kind {
        Kind::Empty => out.push_str("(?:)"),
        Kind::Lit(runes, fold) => emit_lit(runes, *fold, out),
        Kind::Class(class) => emit_class(class, out),
        Kind::AnyNotNl => out.push_str(r"[^\n]"),
        Kind::Any => out.push_str(r"(?s:.)"),
        Kind::BeginLine => out.push_str("(?m:^)"),
        Kind::EndLine => out.push_str("(?m:$)"),
        Kind::BeginText => out.push_str(r"\A"),
        Kind::EndText => out.push_str(r"\z"),
        Kind::WordBoundary => out.push_str(r"(?-u:\b)"),
        Kind::NoWordBoundary => out.push_str(r"(?-u:\B)"),
        Kind::Capture(sub) => {
            out.push_str("(?:");
            emit(sub, out);
            out.push(')');
        }
        Kind::Repeat(op, greedy, sub) => {
            if is_atom(sub) {
                emit(sub, out);
            } else {
                out.push_str("(?:");
                emit(sub, out);
                out.push(')');
            }
            match op {
                RepOp::Star => out.push('*'),
                RepOp::Plus => out.push('+'),
                RepOp::Quest => out.push('?'),
                RepOp::Count(min, None) => out.push_str(&format!("{{{min},}}")),
                RepOp::Count(min, Some(max)) if min == max => out.push_str(&format!("{{{min}}}")),
                RepOp::Count(min, Some(max)) => out.push_str(&format!("{{{min},{max}}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
        Kind::Concat(subs) => {
            for sub in subs {
                if matches!(sub.kind, Kind::Alternate(_)) {
                    out.push_str("(?:");
                    emit(sub, out);
                    out.push(')');
                } else {
                    emit(sub, out);
                }
            }
        }
        Kind::Alternate(subs) => {
            for (k, sub) in subs.iter().enumerate() {
                if k > 0 {
                    out.push('|');
                }
                emit(sub, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(pattern: &str) -> String {
        match compile(pattern) {
            Ok(re) => panic!("{pattern:?} compiled to {:?}", re.translated()),
            Err(e) => e.0,
        }
    }

    fn matches(pattern: &str, s: &str) -> bool {
        compile(pattern)
            .unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
            .is_match(s)
    }

    /// Every invalid-pattern message in the conformance corpus (API server output), plus the
    /// examples of the brief.
    #[test]
    fn corpus_error_texts() {
        let cases: &[(&str, &str)] = &[
            ("(abc", "missing closing ): `(abc`"),
            ("[a-z", "missing closing ]: `[a-z`"),
            (
                "^(?=.*[0-9]).+$",
                "invalid or unsupported Perl syntax: `(?=`",
            ),
            (r"^(a)\1$", r"invalid escape sequence: `\1`"),
            ("a**", "invalid nested repetition operator: `**`"),
            ("^a{1001}$", "invalid repeat count: `{1001}`"),
            (
                r"\p{NoSuchClass}",
                r"invalid character class range: `\p{NoSuchClass}`",
            ),
            ("a++", "invalid nested repetition operator: `++`"),
            ("*a", "missing argument to repetition operator: `*`"),
            ("[unclosed", "missing closing ]: `[unclosed`"),
            ("(a", "missing closing ): `(a`"),
            ("a)", "unexpected ): `a)`"),
            ("**", "missing argument to repetition operator: `*`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("(?<", "invalid or unsupported Perl syntax: `(?<`"),
        ];
        for (pattern, want) in cases {
            assert_eq!(
                err(pattern),
                format!("error parsing regexp: {want}"),
                "{pattern}"
            );
        }
    }

    #[test]
    fn more_go_error_texts() {
        let cases: &[(&str, &str)] = &[
            (r"\", "trailing backslash at end of expression: ``"),
            (r"a\", "trailing backslash at end of expression: ``"),
            (r"\8", r"invalid escape sequence: `\8`"),
            (r"\C", r"invalid escape sequence: `\C`"),
            (r"\Z", r"invalid escape sequence: `\Z`"),
            (r"\e", r"invalid escape sequence: `\e`"),
            (r"\é", r"invalid escape sequence: `\é`"),
            (r"\xZ1", r"invalid escape sequence: `\xZ1`"),
            (r"\xA", r"invalid escape sequence: `\xA`"),
            (r"\x", r"invalid escape sequence: `\x`"),
            (r"\x{", r"invalid escape sequence: `\x{`"),
            (r"\x{}", r"invalid escape sequence: `\x{}`"),
            (r"\x{12", r"invalid escape sequence: `\x{12`"),
            (r"\x{G}", r"invalid escape sequence: `\x{G`"),
            (r"\x{110000}", r"invalid escape sequence: `\x{110000`"),
            (r"[\b]", r"invalid escape sequence: `\b`"),
            (r"[\Q]", r"invalid escape sequence: `\Q`"),
            (r"[a-\d]", r"invalid escape sequence: `\d`"),
            ("[]", "missing closing ]: `[]`"),
            ("[^]", "missing closing ]: `[^]`"),
            ("x[a-", "missing closing ]: `[a-`"),
            ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
            ("[[:a]b:]]", "invalid character class range: `[:a]b:]`"),
            (r"\p", r"invalid character class range: `\p`"),
            (r"\pX", r"invalid character class range: `\pX`"),
            (r"\p{Greek", r"invalid character class range: `\p{Greek`"),
            (r"[\p{Foo}]", r"invalid character class range: `\p{Foo}`"),
            ("(?P<name", "invalid named capture: `(?P<name`"),
            ("(?P<n-m>x)", "invalid named capture: `(?P<n-m>`"),
            ("(?<>x)", "invalid named capture: `(?<>`"),
            ("(?P=name)", "invalid or unsupported Perl syntax: `(?P`"),
            ("(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
            ("(?<=a)b", "invalid named capture: `(?<=a)b`"),
            ("(?<=a>)b", "invalid named capture: `(?<=a>`"),
            ("(?", "invalid or unsupported Perl syntax: `(?`"),
            ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
            ("(?i-)", "invalid or unsupported Perl syntax: `(?i-)`"),
            ("(?-)", "invalid or unsupported Perl syntax: `(?-)`"),
            ("(?i--s)", "invalid or unsupported Perl syntax: `(?i--`"),
            ("(?x)", "invalid or unsupported Perl syntax: `(?x`"),
            ("a*?*", "invalid nested repetition operator: `*?*`"),
            ("a{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
            ("a{2}*", "invalid nested repetition operator: `{2}*`"),
            ("a?+", "invalid nested repetition operator: `?+`"),
            ("(|*)", "missing argument to repetition operator: `*`"),
            ("a|+", "missing argument to repetition operator: `+`"),
            ("(*)", "missing argument to repetition operator: `*`"),
            ("{2}", "missing argument to repetition operator: `{2}`"),
            ("x{2,1}", "invalid repeat count: `{2,1}`"),
            ("x{0,1001}", "invalid repeat count: `{0,1001}`"),
            ("x{1001,}", "invalid repeat count: `{1001,}`"),
            ("x{99999999999}", "invalid repeat count: `{99999999999}`"),
            ("(a{10}){101}", "invalid repeat count: `{101}`"),
            ("((a{2}){2}){251}", "invalid repeat count: `{251}`"),
            ("(?:(?:a{10}){10}){11}", "invalid repeat count: `{11}`"),
            ("())", "unexpected ): `())`"),
            (")", "unexpected ): `)`"),
            ("((a)", "missing closing ): `((a)`"),
            ("(?i:a", "missing closing ): `(?i:a`"),
        ];
        for (pattern, want) in cases {
            assert_eq!(
                err(pattern),
                format!("error parsing regexp: {want}"),
                "{pattern}"
            );
        }
    }

    #[test]
    fn size_and_depth_limits() {
        let deep = format!("{}a{}", "(".repeat(1001), ")".repeat(1001));
        assert_eq!(
            err(&deep),
            format!("error parsing regexp: expression nests too deeply: `{deep}`")
        );
        let ok = format!("{}a{}", "(".repeat(900), ")".repeat(900));
        assert!(matches(&ok, "xa"));
        // Non-capturing groups do not nest in Go's tree.
        let flat = format!("{}a{}", "(?:".repeat(3000), ")".repeat(3000));
        assert!(matches(&flat, "a"));
        let big = format!("(?:{}){{1000}}", "a".repeat(3400));
        assert_eq!(
            err(&big),
            format!("error parsing regexp: expression too large: `{big}`")
        );
    }

    #[test]
    fn nested_repeats_within_limits() {
        assert!(matches("^(?:a{10}){100}$", &"a".repeat(1000)));
        assert!(!matches("^(?:a{10}){100}$", &"a".repeat(999)));
        assert!(matches("^(a{2}){500}$", &"a".repeat(1000)));
        assert!(matches("^a{1000}$", &"a".repeat(1000)));
        assert!(matches("^(a{0}){1000}b$", "b"));
        assert!(matches("^(?:a*){1000}$", "aaa"));
        assert!(matches(r"^\pL{1000}$", &"é".repeat(1000)));
        // `{` that is not a repeat is a literal, also with leading zeros.
        assert!(matches("^a{01}$", "a{01}"));
        assert!(matches("^a{,2}$", "a{,2}"));
        assert!(matches("^a{1$", "a{1"));
        assert!(matches("^{$", "{"));
    }

    #[test]
    fn ascii_perl_classes() {
        assert!(!matches(r"^\d+$", "٣"));
        assert!(matches(r"^\d+$", "0123456789"));
        assert!(!matches(r"^\w+$", "é"));
        assert!(matches(r"^\w+$", "az_AZ09"));
        assert!(!matches(r"^\s$", "\u{a0}"));
        assert!(!matches(r"^\s$", "\x0b"));
        assert!(matches(r"^\s+$", "\t\n\x0c\r "));
        assert!(matches(r"^\D$", "٣"));
        assert!(matches(r"^\W$", "é"));
        assert!(matches(r"^[[:alpha:]]+$", "abcXYZ"));
        assert!(!matches(r"^[[:alpha:]]$", "é"));
        assert!(matches(r"^[[:^digit:]]$", "x"));
        assert!(matches(r"^[[:space:]]$", "\x0b"));
        assert!(matches(r"^[[:punct:]]+$", "!/:@[`{~"));
        // \b and \B are ASCII word boundaries.
        assert!(!matches(r"\bé", "é"));
        assert!(matches(r"\Bé", "é"));
        assert!(matches(r"a\bé", "aé"));
        assert!(!matches(r"a\Bé", "aé"));
        assert!(matches(r"x\b", "xé"));
        assert!(matches(r"\Bb", "ab"));
        assert!(!matches(r"\bb", "ab"));
        assert!(!matches(r"\B", "aéb"));
        assert!(matches(r"\B", "aé"));
        // Case folding keeps Go's order: fold, then negate.
        assert!(matches(r"(?i)\W", "é"));
        assert!(!matches(r"(?i)^\W$", "\u{212a}"));
        assert!(matches(r"(?i)^k$", "\u{212a}"));
        assert!(matches(r"(?i)^[a-c]+$", "AbC"));
        assert!(!matches(r"(?i)^[^a]$", "A"));
        assert!(matches(r"(?i)^\p{Lu}$", "a"));
    }

    #[test]
    fn unicode_classes() {
        assert!(matches(r"^\p{L}+$", "émile"));
        assert!(!matches(r"^\p{L}+$", "a1"));
        assert!(matches(r"^\pL\pN$", "a٣"));
        assert!(matches(r"^\p{Greek}+$", "αβγ"));
        assert!(matches(r"^\P{Greek}$", "a"));
        assert!(matches(r"^\p{^Greek}$", "a"));
        assert!(!matches(r"^\P{^Greek}$", "a"));
        assert!(matches(r"^\p{Letter}$", "a"));
        assert!(matches(r"^\p{lu}$", "A"));
        assert!(matches(r"^\p{Any}$", "\n"));
        assert!(matches(r"^\p{ASCII}$", "\x7f"));
        assert!(matches(r"^[\p{Han}\d]+$", "中3"));
        assert!(matches(r"^\p{Old_Italic}$", "\u{10300}"));
        assert!(!matches(r"^\p{Assigned}$", "\u{378}"));
        assert!(err(r"\p{Grek}").contains("invalid character class range"));
        assert!(err(r"\p{Alphabetic}").contains("invalid character class range"));
    }

    #[test]
    fn escapes_quoting_and_literals() {
        assert!(matches(r"^\Qa.b*c\E$", "a.b*c"));
        assert!(!matches(r"^\Qa.b\E$", "axb"));
        assert!(matches(r"^\Qa.b$", "a.b$"));
        assert!(matches(r"^\Q\E*$", ""));
        assert!(matches(r"^\101\x42\x{43}\0$", "ABC\0"));
        assert!(matches(r"^\12$", "\n"));
        assert!(matches(r"^\1234$", "S4"));
        assert!(matches(r"^\08$", "\08"));
        assert!(matches(r"^[\101-\103]+$", "ABC"));
        assert!(matches(r"^\x{10FFFF}$", "\u{10ffff}"));
        assert!(!matches(r"\x{D800}", "\u{fffd}"));
        assert!(matches(r"^[\x{D000}-\x{E000}]$", "\u{e000}"));
        assert!(matches(r"^\a\f\n\r\t\v$", "\x07\x0c\n\r\t\x0b"));
        assert!(matches(r"^\_\-\.\#$", "_-.#"));
        assert!(matches(r"^[]a]+$", "]a"));
        assert!(matches(r"^[a-]+$", "-a"));
        assert!(matches(r"^[^]a]$", "b"));
        assert!(matches(r"^\A\z$", ""));
    }

    #[test]
    fn flags_groups_and_anchors() {
        assert!(matches("(?i)abc", "xABCx"));
        assert!(matches("^(?i:a)b$", "Ab"));
        assert!(!matches("^(?i:a)b$", "AB"));
        assert!(matches("^(?i)a|b$", "B"));
        assert!(matches("^(?s).$", "\n"));
        assert!(!matches("^.$", "\n"));
        assert!(matches("(?m)^b$", "a\nb\nc"));
        assert!(!matches("^b$", "a\nb\nc"));
        assert!(!matches("^a$", "a\n"));
        assert!(matches("(?U)a+", "aa"));
        assert!(matches("(?i-i:a)", "a"));
        assert!(matches("^(?P<x>a)(?P<x>b)$", "ab"));
        assert!(matches("^(?<y>a)$", "a"));
        assert!(matches("^a(?i)*$", "aaa"));
        assert!(matches("^(?)a$", "a"));
        assert!(matches("^a|$", "x"));
        assert!(matches("^()$", ""));
        assert!(matches("^(|a)+$", "aa"));
        assert!(matches("^*?$", "") || err("^*?").contains("missing"));
        assert!(matches("^$*x", "x"));
    }

    #[test]
    fn corpus_patterns_compile() {
        let patterns: &[&str] = &[
            r###"(^$|^[a-f0-9]{64}$)"###,
            r###"(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$"###,
            r###"(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)"###,
            r###"[0-9]"###,
            r###"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
            r###"^((([01][0-9])|(2[0-3])):[0-5][0-9])$|(^24:00$)"###,
            r###"^((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9])(?:((:((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9]))$)|$)"###,
            r###"^((?i)sun|mon|tues|wednes|thurs|fri|satur)day(?:((:(sun|mon|tues|wednes|thurs|fri|satur)day)$)|$)"###,
            r###"^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$"###,
            r###"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"###,
            r###"^(([^:/?#]+):)(//([^/?#]*))([^?#]*)(\?([^#]*))?(#(.*))?"###,
            r###"^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"###,
            r###"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"###,
            r###"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$"###,
            r###"^(?i)(abort|warn)?$"###,
            r###"^(System|([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]))$"###,
            r###"^([0-9]+(\.[0-9]+)?(ms|s|m))+$"###,
            r###"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"###,
            r###"^([0-9]+(\.[0-9]+)?(s|m|h))+$"###,
            r###"^([0-9]{1,5}(h|m|s|ms)){1,4}$"###,
            r###"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"###,
            r###"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"###,
            r###"^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$"###,
            r###"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
            r###"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"###,
            r###"^(http|https)://.*$"###,
            r###"^(http|https)://.+$"###,
            r###"^(http|https|oci)://.*$"###,
            r###"^(http|https|socks5)://.+$"###,
            r###"^(http|https|ssh)://.*$"###,
            r###"^.{2,}|[^./]$"###,
            r###"^2\d{3}(?::2\d{3}|$)"###,
            r###"^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"###,
            r###"^[!-~]+([\t ]?[!-~]+)*$"###,
            r###"^[-_A-Za-z0-9]+$"###,
            r###"^[0-9]+%$"###,
            r###"^[0-9]+%?$"###,
            r###"^[0-9a-zA-Z-.]+$"###,
            r###"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"###,
            r###"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"###,
            r###"^[\-._a-zA-Z0-9]+$"###,
            r###"^[\w\s:/.\\-]+$"###,
            r###"^[^*]*(\*[^/]*)?\.(json|yml|yaml|JSON|YML|YAML)$"###,
            r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"###,
            r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
            r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"###,
            r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[a-z]([-a-z0-9]*[a-z0-9])?$"###,
            r###"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$"###,
            r###"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$"###,
            r###"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"###,
            r###"^[a-zA-Z][a-zA-Z0-9+.-]*://.+$"###,
            r###"^[a-z]*$"###,
            r###"^[a-z]+$"###,
            r###"^[a-z][a-z0-9-]*$"###,
            r###"^\[[0-9]+-[0-9]+\]$"###,
            r###"^\p{Lu}\p{Ll}+$"###,
            r###"^\p{L}+$"###,
            r###"^https?://.+$"###,
            r###"^oci://.*$"###,
            r###"b"###,
        ];
        for p in patterns {
            compile(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        }
    }

    /// Patterns whose objects the API server rejected with "should match": the bad value must
    /// not match, and the other listed values must.
    #[test]
    fn corpus_should_match() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (r"^\p{L}+$", &["a1"], &["émile"]),
            ("b", &["x"], &["abc"]),
            (
                r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                &["bad>", "*.gateway.networking.k8s.io"],
                &["gateway.networking.k8s.io"],
            ),
            (
                r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$",
                &["example", "{GATEWAY_CONTROLLER_NAME}"],
                &["example.com/gateway-controller"],
            ),
            (r"^[0-9]+%?$", &["5x"], &["5", "50%"]),
            (
                r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$",
                &["magic/"],
                &["ma`gic"],
            ),
            (
                r"^[!-~]+([\t ]?[!-~]+)*$",
                &["this\nis\rinvalid\r\nvalue"],
                &["a b\tc"],
            ),
            ("^[a-z][a-z0-9-]*$", &["Abc", "abc\n"], &["abc-1"]),
            ("[0-9]", &["abc"], &["a1"]),
            (r"^\p{Lu}\p{Ll}+$", &["émile"], &["Émile"]),
            ("^[-_A-Za-z0-9]+$", &[":authority", "**"], &["x-y_z"]),
            ("(^$|^[a-f0-9]{64}$)", &["foo"], &["", &"a".repeat(64)]),
            ("^[0-9]+%$", &["50", "x%"], &["50%"]),
        ];
        for (pattern, bad, good) in cases {
            for s in *bad {
                assert!(!matches(pattern, s), "{pattern:?} must not match {s:?}");
            }
            for s in *good {
                assert!(matches(pattern, s), "{pattern:?} must match {s:?}");
            }
        }
    }

    #[test]
    fn cache_is_shared() {
        let a = compile_cached("^x+$").unwrap();
        let b = compile_cached("^x+$").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.is_match("xx"));
        assert_eq!(compile_cached("(").unwrap_err(), compile("(").unwrap_err());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// ASCII-only patterns built from constructs that mean the same in Go and in the
        /// `regex` crate (no \d \w \s \b, no flags): the translation must agree with the crate
        /// reading the pattern directly.
        fn pattern() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                Just("a".to_string()),
                Just("b".to_string()),
                Just(".".to_string()),
                Just("[ab]".to_string()),
                Just("[^a]".to_string()),
                Just("^".to_string()),
                Just("$".to_string()),
                Just(r"\.".to_string()),
                Just(" ".to_string()),
            ];
            leaf.prop_recursive(4, 24, 3, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}|{b}")),
                    inner.clone().prop_map(|a| format!("({a})")),
                    inner.clone().prop_map(|a| format!("(?:{a})*")),
                    inner.clone().prop_map(|a| format!("({a})+?")),
                    inner.clone().prop_map(|a| format!("(?:{a})?")),
                    inner.prop_map(|a| format!("(?:{a}){{1,3}}")),
                ]
            })
        }

        proptest! {
            #[test]
            fn agrees_with_regex_crate(p in pattern(), s in "[ab. \n]{0,8}") {
                let want = regex::Regex::new(&p).unwrap().is_match(&s);
                prop_assert_eq!(matches(&p, &s), want, "pattern {:?} on {:?}", p, s);
            }
        }
    }
}
