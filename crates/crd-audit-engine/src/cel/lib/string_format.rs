//! `string.format` of the strings extension (version 2, cel-go's `parseFormatString`): the
//! clause parser shared by the evaluator and the compile-time check of literal format
//! strings, and the formatting of values (`%s %d %f %e %b %x %X %o`, the `en_US` number
//! formatting of the `golang.org/x/text` printer for `%f` and `%e`).

use crate::cel::ast::{Expr, ExprKind};
use crate::cel::check::CheckError;
use crate::cel::decls::CelType;

/// A formatting clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    S,
    D,
    F(Option<usize>),
    E(Option<usize>),
    B,
    X(bool),
    O,
}

/// What the format string walk asks of its caller.
pub trait Sink {
    /// The argument `index` is about to be used (the evaluator checks its range here).
    fn arg(&mut self, index: usize) -> Result<(), (Option<u32>, String)>;
    fn size(&self) -> usize;
    /// Formats argument `index` with `verb` (errors are `error during formatting` causes).
    fn clause(&mut self, index: usize, verb: Verb) -> Result<String, (Option<u32>, String)>;
}

/// Walks a format string as cel-go does; the formatted text, or the first error.
pub fn walk(fmt: &str, sink: &mut dyn Sink) -> Result<Vec<u8>, (Option<u32>, String)> {
    let b = fmt.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut arg = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        sink.arg(arg)?;
        if i + 1 >= b.len() {
            return Err((None, "unexpected end of string".into()));
        }
        if arg >= sink.size() {
            return Err((None, format!("index {arg} out of range")));
        }
        let (read, verb) = parse_clause(&b[i + 1..])
            .map_err(|e| (None, format!("could not parse formatting clause: {e}")))?;
        let text = sink
            .clause(arg, verb)
            .map_err(|(at, e)| (at, format!("error during formatting: {e}")))?;
        out.extend_from_slice(text.as_bytes());
        i += 1 + read;
        arg += 1;
    }
    Ok(out)
}

/// One clause after `%`: bytes read and the verb.
fn parse_clause(s: &[u8]) -> Result<(usize, Verb), String> {
    let mut j = 0;
    let mut precision = None;
    if s.first() == Some(&b'.') {
        j = 1;
        loop {
            match s.get(j) {
                None => {
                    return Err(
                        "error while parsing precision: could not find end of precision specifier"
                            .into(),
                    );
                }
                Some(c) if c.is_ascii_digit() => j += 1,
                Some(_) => break,
            }
        }
        let digits = std::str::from_utf8(&s[1..j]).unwrap_or("");
        let p: usize = match digits.parse::<i64>() {
            Ok(v) => v.max(0) as usize,
            Err(e) => {
                let why = if digits.is_empty() || e.to_string().contains("invalid") {
                    "invalid syntax"
                } else {
                    "value out of range"
                };
                return Err(format!(
                    "error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"{digits}\": {why}"
                ));
            }
        };
        precision = Some(p);
    }
    let c = s.get(j).copied().unwrap_or(0);
    let verb = match c {
        b's' => Verb::S,
        b'd' => Verb::D,
        b'f' => Verb::F(precision),
        b'e' => Verb::E(precision),
        b'b' => Verb::B,
        b'x' => Verb::X(false),
        b'X' => Verb::X(true),
        b'o' => Verb::O,
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                char::from(other)
            ));
        }
    };
    Ok((j + 1, verb))
}

// ============================================================================================
// Compile-time check of literal format strings (cel-go's stringFormatValidator)
// ============================================================================================

const STRING_ERR: &str = "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given";

/// The message of a clause applied to a value of the wrong type.
pub fn clause_error(verb: Verb, type_name: &str) -> String {
    match verb {
        Verb::S => format!("{STRING_ERR} {type_name}"),
        Verb::D => format!("decimal clause can only be used on integers, was given {type_name}"),
        Verb::F(_) => {
            format!("fixed-point clause can only be used on doubles, was given {type_name}")
        }
        Verb::E(_) => {
            format!("scientific clause can only be used on doubles, was given {type_name}")
        }
        Verb::B => {
            format!("only integers and bools can be formatted as binary, was given {type_name}")
        }
        Verb::X(_) => format!(
            "only integers, byte buffers, and strings can be formatted as hex, was given {type_name}"
        ),
        Verb::O => format!("octal clause can only be used on integers, was given {type_name}"),
    }
}

fn kind_in(t: &CelType, kinds: &[CelType]) -> bool {
    matches!(t, CelType::Dyn) || kinds.iter().any(|k| k.kind() == t.kind())
}

struct Checker<'a> {
    elements: &'a [Expr],
    type_of: &'a dyn Fn(&Expr) -> CelType,
    requested: usize,
}

impl Checker<'_> {
    /// The `%s` check, recursing into list and map literals: the offending node, if any.
    fn verify_string<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        let t = (self.type_of)(e);
        let ok = kind_in(
            &t,
            &[
                CelType::list(CelType::Dyn),
                CelType::map(CelType::Dyn, CelType::Dyn),
                CelType::Int,
                CelType::Uint,
                CelType::Double,
                CelType::Bool,
                CelType::String,
                CelType::Timestamp,
                CelType::Bytes,
                CelType::Duration,
                CelType::Type(None),
                CelType::Null,
            ],
        );
        if !ok {
            return Some(e);
        }
        match &e.kind {
            ExprKind::List { elements, .. } => elements.iter().find_map(|x| self.verify_string(x)),
            ExprKind::Map { entries } => entries
                .iter()
                .find_map(|(k, v, _)| self.verify_string(k).or_else(|| self.verify_string(v))),
            _ => None,
        }
    }
}

impl Sink for Checker<'_> {
    fn arg(&mut self, _index: usize) -> Result<(), (Option<u32>, String)> {
        self.requested += 1;
        Ok(())
    }

    fn size(&self) -> usize {
        self.elements.len()
    }

    fn clause(&mut self, index: usize, verb: Verb) -> Result<String, (Option<u32>, String)> {
        let e = &self.elements[index];
        let t = (self.type_of)(e);
        let bad = |x: &Expr, t: &CelType| Err((Some(x.offset), clause_error(verb, &t.type_name())));
        let kinds: &[CelType] = match verb {
            Verb::S => {
                return match self.verify_string(e) {
                    Some(x) => bad(x, &(self.type_of)(x)),
                    None => Ok(String::new()),
                };
            }
            Verb::D | Verb::O => &[CelType::Int, CelType::Uint],
            Verb::F(_) | Verb::E(_) => &[CelType::Double, CelType::String],
            Verb::B => &[CelType::Int, CelType::Uint, CelType::Bool],
            Verb::X(_) => &[CelType::Int, CelType::Uint, CelType::String, CelType::Bytes],
        };
        if kind_in(&t, kinds) {
            Ok(String::new())
        } else {
            bad(e, &t)
        }
    }
}

/// Checks `'<fmt>'.format([elements])` (at `call_at`): an error, or none.
pub fn check_literal(
    fmt: &str,
    elements: &[Expr],
    call_at: u32,
    type_of: &dyn Fn(&Expr) -> CelType,
) -> Option<CheckError> {
    let mut c = Checker {
        elements,
        type_of,
        requested: 0,
    };
    let r = walk(fmt, &mut c);
    let err = |at: Option<u32>, message: String| CheckError {
        offset: at.unwrap_or(call_at) as usize,
        message,
    };
    match r {
        Err((at, msg)) => Some(err(at, msg)),
        Ok(_) if elements.len() > c.requested => Some(err(
            None,
            format!(
                "too many arguments supplied to string.format (expected {}, got {})",
                c.requested,
                elements.len()
            ),
        )),
        Ok(_) => None,
    }
}

// ============================================================================================
// Number formatting of the golang.org/x/text printer (en_US)
// ============================================================================================

/// Inserts `,` every three digits into the integer part of a plain decimal.
fn group(digits: &str) -> String {
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    let n = int.len();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (n - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// `%.<prec>f` as the en_US printer writes it: grouped digits, `NaN`, `∞`.
pub fn fixed(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let neg = x < 0.0;
    let a = x.abs();
    if a.is_infinite() {
        return if neg { "-∞".into() } else { "∞".into() };
    }
    // Beyond the exact decimal expansion of a double (at most 1074 fraction digits), Go
    // writes zeros; Rust's formatter takes precisions up to 65535 only.
    const EXACT: usize = 1100;
    let mut digits = format!("{a:.0$}", prec.min(EXACT));
    if prec > EXACT {
        digits.push_str(&"0".repeat(prec - EXACT));
    }
    let body = group(&digits);
    if neg { format!("-{body}") } else { body }
}

fn superscript(d: char) -> char {
    match d {
        '0' => '⁰',
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        '4' => '⁴',
        '5' => '⁵',
        '6' => '⁶',
        '7' => '⁷',
        '8' => '⁸',
        '9' => '⁹',
        _ => d,
    }
}

/// `%<width>e` as the en_US printer writes it (six fraction digits, `×10` and a
/// superscript exponent of at least two digits); `width` pads on the left.
pub fn scientific(x: f64, width: Option<usize>) -> String {
    let s = if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x < 0.0 { "-∞".into() } else { "∞".into() }
    } else {
        let neg = x < 0.0;
        let e = format!("{:.6e}", x.abs());
        let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let digits = format!("{:02}", exp.abs());
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        out.push_str(mant);
        out.push_str("×10");
        if exp < 0 {
            out.push('⁻');
        }
        out.extend(digits.chars().map(superscript));
        out
    };
    match width {
        Some(w) if s.chars().count() < w => {
            format!("{}{s}", " ".repeat(w - s.chars().count()))
        }
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_the_en_us_printer() {
        assert_eq!(fixed(1234567.891, 2), "1,234,567.89");
        assert_eq!(fixed(-1234.55, 1), "-1,234.5");
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(0.1, 20), "0.10000000000000000555");
        assert_eq!(fixed(f64::INFINITY, 2), "∞");
        let long = fixed(0.5, 70_000);
        assert_eq!(long.len(), 70_002);
        assert!(long.starts_with("0.5000") && long.ends_with("000"));
        assert_eq!(scientific(1234.5678, None), "1.234568×10⁰³");
        assert_eq!(scientific(0.000123, Some(6)), "1.230000×10⁻⁰⁴");
        assert_eq!(scientific(2.0, Some(3)), "2.000000×10⁰⁰");
    }
}
