//! The strings extension (version 2) as cel-go implements it: positions in code points,
//! Go's `strings.Replace` and `strings.SplitN`, `strings.quote`, and `string.format`.

use super::string_format::{self as format, Sink, Verb};
use crate::cel::eval::{EvalError, EvalResult, Interp, owned};
use crate::cel::types::DeclTypes;
use crate::cel::value::Val;

/// `indexOf(sub, offset)`.
pub fn index_of(s: &str, sub: &str, off: i64) -> Result<i64, EvalError> {
    if off < 0 {
        return Err(EvalError::new(format!("index out of range: {off}")));
    }
    let runes: Vec<char> = s.chars().collect();
    let off = off as usize;
    if sub.is_empty() {
        return Ok(off.min(runes.len()) as i64);
    }
    let subr: Vec<char> = sub.chars().collect();
    if off >= runes.len() {
        return Ok(-1);
    }
    let last = runes.len() as i64 - subr.len() as i64;
    let mut i = off as i64;
    while i <= last {
        if runes[i as usize..].starts_with(&subr) {
            return Ok(i);
        }
        i += 1;
    }
    Ok(-1)
}

/// `lastIndexOf(sub)`.
pub fn last_index_of(s: &str, sub: &str) -> Result<i64, EvalError> {
    let n = s.chars().count();
    if sub.is_empty() {
        return Ok(n as i64);
    }
    if s.len() < sub.len() {
        return Ok(-1);
    }
    last_index_of_offset(s, sub, n as i64 - 1)
}

/// `lastIndexOf(sub, offset)`.
pub fn last_index_of_offset(s: &str, sub: &str, off: i64) -> Result<i64, EvalError> {
    if off < 0 {
        return Err(EvalError::new(format!("index out of range: {off}")));
    }
    let runes: Vec<char> = s.chars().collect();
    if sub.is_empty() {
        return Ok(off.min(runes.len() as i64));
    }
    let subr: Vec<char> = sub.chars().collect();
    if off as usize >= runes.len() {
        return Ok(-1);
    }
    let mut start = off;
    let max = runes.len() as i64 - subr.len() as i64;
    if start > max {
        start = max;
    }
    let mut i = start;
    while i >= 0 {
        if runes[i as usize..].starts_with(&subr) {
            return Ok(i);
        }
        i -= 1;
    }
    Ok(-1)
}

/// Go's `strings.Replace(s, old, new, n)` (`n < 0`: all).
pub fn replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if n == 0 || (old == new) {
        return s.to_string();
    }
    if n < 0 {
        return s.replace(old, new);
    }
    s.replacen(old, new, n as usize)
}

/// Go's `strings.SplitN` (`n < 0`: all, `0`: none).
pub fn split_n(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let mut out = Vec::new();
        for (i, c) in chars.iter().enumerate() {
            if out.len() + 1 == limit {
                out.push(chars[i..].iter().collect());
                return out;
            }
            out.push(c.to_string());
        }
        return out;
    }
    s.splitn(limit, sep).map(str::to_string).collect()
}

/// `strings.quote`: a double-quoted CEL string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ============================================================================================
// string.format
// ============================================================================================

struct Runtime<'v, 'a> {
    args: &'v [Val<'a>],
    types: &'v DeclTypes,
}

fn bad(verb: Verb, v: &Val) -> (Option<u32>, String) {
    (None, format::clause_error(verb, v.type_name()))
}

impl Runtime<'_, '_> {
    /// `%s` of a value (cel-go's `FormatString`).
    fn string(&self, v: &Val) -> Result<String, (Option<u32>, String)> {
        if let Some(items) = v.list_items(self.types) {
            return self.list(&items);
        }
        if let Some(entries) = v.map_entries(self.types) {
            return self.map(&entries);
        }
        match v {
            Val::Null => Ok("null".into()),
            Val::Int(_)
            | Val::Uint(_)
            | Val::Bool(_)
            | Val::Str(_)
            | Val::Type(_)
            | Val::Duration(_)
            | Val::Timestamp(..) => Ok(crate::cel::value::display(v)),
            Val::Double(d) => Ok(crate::go::fmt::float_v(*d)),
            Val::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => Ok(s.to_string()),
                Err(_) => Err((
                    None,
                    "could not convert argument \"invalid UTF-8 in bytes, cannot convert to string\" to string"
                        .into(),
                )),
            },
            other => Err(bad(Verb::S, other)),
        }
    }

    /// A list or map member (cel-go's `clauseForType` then `quoteForCEL`).
    fn member(&self, v: &Val) -> Result<String, (Option<u32>, String)> {
        Ok(match v {
            Val::Str(s) => crate::go::strconv::quote(s.as_str()),
            Val::Bytes(b) => format!(
                "b{}",
                crate::go::strconv::quote(&String::from_utf8_lossy(b))
            ),
            Val::Double(d) => {
                if d.is_finite() {
                    format!("{d:.6}")
                } else if d.is_nan() {
                    "\"NaN\"".into()
                } else if *d > 0.0 {
                    "\"+Inf\"".into()
                } else {
                    "\"-Inf\"".into()
                }
            }
            Val::Timestamp(..) => format!(
                "timestamp({})",
                crate::go::strconv::quote(&crate::cel::value::display(v))
            ),
            Val::Duration(_) => format!(
                "duration({})",
                crate::go::strconv::quote(&crate::cel::value::display(v))
            ),
            Val::Int(_) | Val::Uint(_) | Val::Bool(_) | Val::Null | Val::Type(_) => {
                crate::cel::value::display(v)
            }
            _ if v.list_len().is_some() || v.map_len().is_some() => self.string(v)?,
            other => {
                return Err((
                    None,
                    format!("no formatting function for {}", other.type_name()),
                ));
            }
        })
    }

    fn list(&self, items: &[Val]) -> Result<String, (Option<u32>, String)> {
        let mut parts = Vec::with_capacity(items.len());
        for x in items {
            parts.push(self.member(x)?);
        }
        Ok(format!("[{}]", parts.join(", ")))
    }

    fn map(&self, entries: &[(Val, Val)]) -> Result<String, (Option<u32>, String)> {
        let mut pairs = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let key = match k {
                Val::Str(s) => crate::go::strconv::quote(s.as_str()),
                Val::Bool(_) | Val::Int(_) | Val::Uint(_) => crate::cel::value::display(k),
                other => {
                    return Err((
                        None,
                        format!(
                            "no formatting function for map key of type {}",
                            other.type_name()
                        ),
                    ));
                }
            };
            pairs.push((key, self.member(v)?));
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let body: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
        Ok(format!("{{{}}}", body.join(", ")))
    }

    fn float_arg(&self, verb: Verb, v: &Val) -> Result<f64, (Option<u32>, String)> {
        match v {
            Val::Double(d) => Ok(*d),
            Val::Str(s) => match s.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                _ => Err(bad(verb, v)),
            },
            _ => Err(bad(verb, v)),
        }
    }
}

impl Sink for Runtime<'_, '_> {
    fn arg(&mut self, index: usize) -> Result<(), (Option<u32>, String)> {
        if index >= self.args.len() {
            return Err((None, format!("index {index} out of range")));
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.args.len()
    }

    fn clause(&mut self, index: usize, verb: Verb) -> Result<String, (Option<u32>, String)> {
        let v = &self.args[index];
        match verb {
            Verb::S => self.string(v),
            Verb::D => match v {
                Val::Int(i) => Ok(i.to_string()),
                Val::Uint(u) => Ok(u.to_string()),
                _ => Err(bad(verb, v)),
            },
            Verb::F(p) => Ok(format::fixed(self.float_arg(verb, v)?, p.unwrap_or(6))),
            Verb::E(p) => Ok(format::scientific(
                self.float_arg(verb, v)?,
                Some(p.unwrap_or(6)),
            )),
            Verb::B => match v {
                Val::Int(i) => Ok(if *i < 0 {
                    format!("-{:b}", i.unsigned_abs())
                } else {
                    format!("{i:b}")
                }),
                Val::Uint(u) => Ok(format!("{u:b}")),
                Val::Bool(b) => Ok(if *b { "1" } else { "0" }.into()),
                _ => Err(bad(verb, v)),
            },
            Verb::X(upper) => {
                let s = match v {
                    Val::Str(s) => hex(s.as_str().as_bytes()),
                    Val::Bytes(b) => hex(b),
                    Val::Int(i) => {
                        if *i < 0 {
                            format!("-{:x}", i.unsigned_abs())
                        } else {
                            format!("{i:x}")
                        }
                    }
                    Val::Uint(u) => format!("{u:x}"),
                    _ => return Err(bad(verb, v)),
                };
                Ok(if upper { s.to_ascii_uppercase() } else { s })
            }
            Verb::O => match v {
                Val::Int(i) => Ok(if *i < 0 {
                    format!("-{:o}", i.unsigned_abs())
                } else {
                    format!("{i:o}")
                }),
                Val::Uint(u) => Ok(format!("{u:o}")),
                _ => Err(bad(verb, v)),
            },
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

/// `fmt.format(args)`.
pub fn format(fmt: &str, args: &[Val], types: &DeclTypes) -> Result<String, EvalError> {
    let mut r = Runtime { args, types };
    match format::walk(fmt, &mut r) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err((_, msg)) => Err(EvalError::new(msg)),
    }
}

fn text<'v>(v: &'v Val) -> &'v str {
    match v {
        Val::Str(s) => s.as_str(),
        _ => "",
    }
}

fn int(v: &Val) -> i64 {
    match v {
        Val::Int(i) => *i,
        _ => 0,
    }
}

fn err<T>(s: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::new(s))
}

/// The strings-extension overload `id` applied to `a` (the receiver first), or `None` when
/// `id` is not one. The dispatcher has checked the argument types.
pub fn call<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    if !matches!(
        id,
        "string_char_at_int"
            | "string_index_of_string"
            | "string_index_of_string_int"
            | "string_last_index_of_string"
            | "string_last_index_of_string_int"
            | "string_lower_ascii"
            | "string_upper_ascii"
            | "string_replace_string_string"
            | "string_replace_string_string_int"
            | "string_split_string"
            | "string_split_string_int"
            | "string_substring_int"
            | "string_substring_int_int"
            | "string_trim"
            | "strings_quote"
            | "string_format"
            | "list_join"
            | "list_join_string"
    ) {
        return None;
    }
    Some(apply(it, id, a))
}

fn apply<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> EvalResult<'a> {
    use Val::{Int, Str};
    Ok(match id {
        "string_char_at_int" => {
            let chars: Vec<char> = text(&a[0]).chars().collect();
            let i = int(&a[1]);
            if i < 0 || i as usize > chars.len() {
                return err(format!("index out of range: {i}"));
            }
            owned(
                chars
                    .get(i as usize)
                    .map_or(String::new(), |c| c.to_string()),
            )
        }
        "string_index_of_string" | "string_index_of_string_int" => {
            let off = a.get(2).map_or(0, int);
            Int(index_of(text(&a[0]), text(&a[1]), off)?)
        }
        "string_last_index_of_string" | "string_last_index_of_string_int" => {
            let s = text(&a[0]);
            let sub = text(&a[1]);
            Int(match a.get(2) {
                Some(off) => last_index_of_offset(s, sub, int(off))?,
                None => last_index_of(s, sub)?,
            })
        }
        "string_lower_ascii" => owned(text(&a[0]).to_ascii_lowercase()),
        "string_upper_ascii" => owned(text(&a[0]).to_ascii_uppercase()),
        "string_replace_string_string" | "string_replace_string_string_int" => {
            let n = a.get(3).map_or(-1, int);
            owned(replace(text(&a[0]), text(&a[1]), text(&a[2]), n))
        }
        "string_split_string" | "string_split_string_int" => {
            let n = a.get(2).map_or(-1, int);
            string_list(split_n(text(&a[0]), text(&a[1]), n))
        }
        "string_substring_int" => {
            let chars: Vec<char> = text(&a[0]).chars().collect();
            let s = int(&a[1]);
            if s < 0 || s as usize > chars.len() {
                return err(format!("index out of range: {s}"));
            }
            owned(chars[s as usize..].iter().collect())
        }
        "string_substring_int_int" => {
            let chars: Vec<char> = text(&a[0]).chars().collect();
            let (s, e) = (int(&a[1]), int(&a[2]));
            if s > e {
                return err(format!("invalid substring range. start: {s}, end: {e}"));
            }
            if s < 0 || s as usize > chars.len() {
                return err(format!("index out of range: {s}"));
            }
            if e < 0 || e as usize > chars.len() {
                return err(format!("index out of range: {e}"));
            }
            owned(chars[s as usize..e as usize].iter().collect())
        }
        "string_trim" => owned(text(&a[0]).trim().to_string()),
        "strings_quote" => owned(quote(text(&a[0]))),
        "string_format" => {
            let items = a[1].list_items(it.types).unwrap_or_default();
            let out = format(text(&a[0]), &items, it.types)?;
            owned(out)
        }
        "list_join" | "list_join_string" => {
            let sep = a.get(1).map_or("", text);
            let items = a[0].list_items(it.types).unwrap_or_default();
            let mut out = String::new();
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                match x {
                    Str(s) => out.push_str(s.as_str()),
                    other => {
                        return err(format!(
                            "join: invalid input: {}",
                            crate::cel::value::display(other)
                        ));
                    }
                }
            }
            owned(out)
        }
        _ => return err(format!("no such overload: {id}")),
    })
}

fn string_list<'a>(parts: impl IntoIterator<Item = String>) -> Val<'a> {
    Val::List(std::rc::Rc::new(parts.into_iter().map(owned).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_code_points() {
        assert_eq!(index_of("héllo", "l", 0).unwrap(), 2);
        assert_eq!(index_of("abc", "", 9).unwrap(), 3);
        assert_eq!(index_of("abc", "a", 4).unwrap(), -1);
        assert_eq!(last_index_of("éé", "é").unwrap(), 1);
        assert_eq!(last_index_of_offset("abc", "a", 4).unwrap(), -1);
        assert_eq!(quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(split_n("abcd", "", 2), vec!["a", "bcd"]);
    }
}
