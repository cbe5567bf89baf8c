//! Go's regular expression parser (`src/regexp/syntax/parse.go`, with the Perl classes of
//! `src/regexp/syntax/perl_groups.go`): it rejects exactly what Go rejects, with Go's error
//! text, and builds a syntax tree with Go's meaning.

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

use super::GoRegexError;
use super::unicode::unicode_table;

/// Go's `maxRepeat`: the largest count in `x{n,m}`, and the largest product of nested counts.
const MAX_REPEAT: i64 = 1000;
/// Go's `maxHeight`: the deepest parse tree allowed.
const MAX_HEIGHT: u32 = 1000;
/// Go's `maxSize`: 128 MiB of 40-byte instructions.
const MAX_SIZE: u64 = (128 << 20) / 40;
/// Go's `unicode.MaxRune`.
pub(super) const MAX_RUNE: u32 = 0x10FFFF;

#[derive(Clone, Copy, Debug)]
pub(super) enum Code {
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

pub(super) fn go_err(code: Code, expr: &str) -> GoRegexError {
    GoRegexError(format!("error parsing regexp: {}: `{expr}`", code.text()))
}

pub(super) type PResult<T> = Result<T, GoRegexError>;

// ---------------------------------------------------------------------------------------------
// Syntax tree

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RepOp {
    Star,
    Plus,
    Quest,
    /// `{min}`, `{min,}` (max `None`) or `{min,max}`.
    Count(u32, Option<u32>),
}

#[derive(Debug)]
pub(super) enum Kind {
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
pub(super) struct Node {
    pub(super) kind: Kind,
    /// Go's `calcSize` estimate of the compiled size.
    pub(super) size: u64,
    /// Go's `calcHeight`.
    pub(super) height: u32,
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
pub(super) fn repeat_is_valid(node: &Node, mut n: i64) -> bool {
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
pub(super) struct Flags {
    fold: bool,
    dot_nl: bool,
    one_line: bool,
    non_greedy: bool,
}

/// An open group: what was parsed so far inside it.
pub(super) struct Frame {
    /// Flags to restore at the closing `)`.
    saved: Flags,
    capture: bool,
    alts: Vec<Node>,
    cur: Vec<Node>,
}

pub(super) struct Parser<'a> {
    whole: &'a str,
    flags: Flags,
    frames: Vec<Frame>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(whole: &'a str) -> Self {
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

    pub(super) fn parse(mut self) -> PResult<Node> {
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

pub(super) const DIGIT: &[(char, char)] = &[('0', '9')];
pub(super) const PERL_SPACE: &[(char, char)] = &[('\t', '\n'), ('\x0c', '\r'), (' ', ' ')];
pub(super) const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];

pub(super) fn class_of(ranges: &[(char, char)]) -> ClassUnicode {
    ClassUnicode::new(ranges.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))
}

/// The class of code points `lo..=hi`, without surrogates (which never occur in a `&str`).
pub(super) fn range_class(lo: u32, hi: u32) -> ClassUnicode {
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
pub(super) fn parse_repeat(t: &str) -> Option<(i64, i64, usize)> {
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
pub(super) fn parse_int(b: &[u8]) -> Option<(i64, usize)> {
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
pub(super) fn parse_class_char(r: &str, whole_class: &str) -> PResult<(u32, usize)> {
    match r.chars().next() {
        None => Err(go_err(Code::MissingBracket, whole_class)),
        Some('\\') => parse_escape(r),
        Some(c) => Ok((c as u32, c.len_utf8())),
    }
}

/// Go's `parseEscape`: a single-character escape at the start of `t` (which begins with `\`).
/// Returns the code point and the number of bytes consumed.
pub(super) fn parse_escape(t: &str) -> PResult<(u32, usize)> {
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
