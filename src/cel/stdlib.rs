//! CEL's standard functions and the extension libraries kube-apiserver enables (strings,
//! lists, regex, optional types), with cel-go's error texts. The Kubernetes-specific types
//! (URL, IP, CIDR, quantity, semver, format) are in [`super::k8s_fns`].

use super::eval::{EvalError, EvalResult, Interp, as_str, is_zero, owned};
use super::value::{Str, Val, compare, display, equals};
use crate::validate::goregex;
use std::rc::Rc;

/// Every function this engine implements; a call to any other name is reported as not
/// evaluated rather than as the rule's failure.
const KNOWN: [&str; 105] = [
    "_%_",
    "_*_",
    "_+_",
    "_-_",
    "_/_",
    "add",
    "asApproximateFloat",
    "asInteger",
    "bool",
    "bytes",
    "charAt",
    "cidr",
    "compareTo",
    "contains",
    "containsCIDR",
    "containsIP",
    "distinct",
    "double",
    "duration",
    "dyn",
    "endsWith",
    "family",
    "find",
    "findAll",
    "flatten",
    "format.byte",
    "format.date",
    "format.datetime",
    "format.dns1035Label",
    "format.dns1035LabelPrefix",
    "format.dns1123Label",
    "format.dns1123LabelPrefix",
    "format.dns1123Subdomain",
    "format.dns1123SubdomainPrefix",
    "format.labelValue",
    "format.named",
    "format.qualifiedName",
    "format.uri",
    "format.uuid",
    "getEscapedPath",
    "getHost",
    "getHostname",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getPort",
    "getQuery",
    "getScheme",
    "getSeconds",
    "hasValue",
    "indexOf",
    "int",
    "ip",
    "ip.isCanonical",
    "isCIDR",
    "isGlobalUnicast",
    "isGreaterThan",
    "isIP",
    "isInteger",
    "isLessThan",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isLoopback",
    "isQuantity",
    "isSemver",
    "isSorted",
    "isURL",
    "isUnspecified",
    "join",
    "lastIndexOf",
    "lowerAscii",
    "major",
    "masked",
    "matches",
    "max",
    "min",
    "minor",
    "optional.none",
    "optional.of",
    "optional.ofNonZeroValue",
    "or",
    "orValue",
    "patch",
    "prefixLength",
    "quantity",
    "replace",
    "reverse",
    "semver",
    "sign",
    "size",
    "slice",
    "split",
    "startsWith",
    "string",
    "sub",
    "substring",
    "sum",
    "timestamp",
    "trim",
    "type",
    "uint",
    "upperAscii",
    "url",
    "validate",
    "value",
];

fn no_overload<'a>(f: &str) -> EvalResult<'a> {
    Err(EvalError::new(format!("no such overload: {f}")))
}

fn conversion<'a>(from: &str, to: &str) -> EvalResult<'a> {
    Err(EvalError::new(format!(
        "type conversion error from '{from}' to '{to}'"
    )))
}

pub fn negate<'a>(v: &Val<'a>) -> EvalResult<'a> {
    match v {
        Val::Int(i) => i
            .checked_neg()
            .map(Val::Int)
            .ok_or_else(|| EvalError::new("integer overflow")),
        Val::Double(d) => Ok(Val::Double(-d)),
        Val::Duration(d) => Ok(Val::Duration(-d)),
        _ => no_overload("-_"),
    }
}

fn overflow() -> EvalError {
    EvalError::new("integer overflow")
}

fn arith<'a>(it: &mut Interp, f: &str, a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::*;
    match (f, a, b) {
        ("_+_", Int(x), Int(y)) => x.checked_add(*y).map(Int).ok_or_else(overflow),
        ("_-_", Int(x), Int(y)) => x.checked_sub(*y).map(Int).ok_or_else(overflow),
        ("_*_", Int(x), Int(y)) => x.checked_mul(*y).map(Int).ok_or_else(overflow),
        ("_/_", Int(_), Int(0)) | ("_/_", Uint(_), Uint(0)) => {
            Err(EvalError::new("division by zero"))
        }
        ("_%_", Int(_), Int(0)) | ("_%_", Uint(_), Uint(0)) => {
            Err(EvalError::new("modulus by zero"))
        }
        ("_/_", Int(x), Int(y)) => x.checked_div(*y).map(Int).ok_or_else(overflow),
        ("_%_", Int(x), Int(y)) => x.checked_rem(*y).map(Int).ok_or_else(overflow),
        ("_+_", Uint(x), Uint(y)) => x.checked_add(*y).map(Uint).ok_or_else(overflow),
        ("_-_", Uint(x), Uint(y)) => x.checked_sub(*y).map(Uint).ok_or_else(overflow),
        ("_*_", Uint(x), Uint(y)) => x.checked_mul(*y).map(Uint).ok_or_else(overflow),
        ("_/_", Uint(x), Uint(y)) => Ok(Uint(x / y)),
        ("_%_", Uint(x), Uint(y)) => Ok(Uint(x % y)),
        ("_+_", Double(x), Double(y)) => Ok(Double(x + y)),
        ("_-_", Double(x), Double(y)) => Ok(Double(x - y)),
        ("_*_", Double(x), Double(y)) => Ok(Double(x * y)),
        ("_/_", Double(x), Double(y)) => Ok(Double(x / y)),
        ("_+_", Str(x), Str(y)) => Ok(owned(format!("{}{}", x.as_str(), y.as_str()))),
        ("_+_", Bytes(x), Bytes(y)) => {
            let mut v = x.to_vec();
            v.extend_from_slice(y);
            Ok(Bytes(v.into()))
        }
        ("_+_", Duration(x), Duration(y)) => Ok(Duration(x + y)),
        ("_-_", Duration(x), Duration(y)) => Ok(Duration(x - y)),
        ("_+_", Timestamp(x), Duration(y)) | ("_+_", Duration(y), Timestamp(x)) => {
            Ok(Timestamp(x + y))
        }
        ("_-_", Timestamp(x), Duration(y)) => Ok(Timestamp(x - y)),
        ("_-_", Timestamp(x), Timestamp(y)) => Ok(Duration(x - y)),
        ("_+_", _, _) if a.list_len().is_some() && b.list_len().is_some() => {
            let mut items = a.list_items(it.types).unwrap_or_default();
            items.extend(b.list_items(it.types).unwrap_or_default());
            Ok(List(Rc::new(items)))
        }
        _ => no_overload(f),
    }
}

/// The number of code points of a string, items of a list, entries of a map.
fn size_of(it: &Interp, v: &Val) -> Result<i64, EvalError> {
    Ok(match v {
        Val::Str(s) => s.as_str().chars().count() as i64,
        Val::Bytes(b) => b.len() as i64,
        Val::JsonObj(m, _) => m.len() as i64,
        Val::Map(m) => m.len() as i64,
        _ => match v.list_len() {
            Some(n) => n as i64,
            None => {
                return Err(EvalError::new(format!(
                    "no such overload: size({})",
                    v.type_name(it.types)
                )));
            }
        },
    })
}

/// Dispatches a named function (receiver-style when `target` is set).
pub fn call<'a>(
    it: &mut Interp,
    f: &str,
    target: Option<Val<'a>>,
    args: &[Val<'a>],
) -> EvalResult<'a> {
    if let Some(r) = super::k8s_fns::call(it, f, target.as_ref(), args) {
        return r;
    }
    match (f, target.as_ref(), args) {
        ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", None, [a, b]) => arith(it, f, a, b),
        ("size", None, [v]) | ("size", Some(v), []) => size_of(it, v).map(Val::Int),
        ("contains", Some(Val::Str(s)), [Val::Str(x)]) => {
            Ok(Val::Bool(s.as_str().contains(x.as_str())))
        }
        ("startsWith", Some(Val::Str(s)), [Val::Str(x)]) => {
            Ok(Val::Bool(s.as_str().starts_with(x.as_str())))
        }
        ("endsWith", Some(Val::Str(s)), [Val::Str(x)]) => {
            Ok(Val::Bool(s.as_str().ends_with(x.as_str())))
        }
        ("matches", Some(Val::Str(s)), [Val::Str(re)])
        | ("matches", None, [Val::Str(s), Val::Str(re)]) => {
            let re = goregex::compile_cached(re.as_str())
                .map_err(|e| EvalError::new(format!("error parsing regexp: {e}")))?;
            Ok(Val::Bool(re.is_match(s.as_str())))
        }
        ("find", Some(Val::Str(s)), [Val::Str(re)]) => {
            let re = goregex::compile_cached(re.as_str())
                .map_err(|e| EvalError::new(format!("error parsing regexp: {e}")))?;
            Ok(owned(re.find(s.as_str()).unwrap_or_default()))
        }
        ("findAll", Some(Val::Str(s)), [Val::Str(re), rest @ ..]) => {
            let re = goregex::compile_cached(re.as_str())
                .map_err(|e| EvalError::new(format!("error parsing regexp: {e}")))?;
            let limit = match rest {
                [Val::Int(n)] => *n,
                _ => -1,
            };
            let all: Vec<Val> = re
                .find_all(s.as_str())
                .into_iter()
                .take(if limit < 0 {
                    usize::MAX
                } else {
                    limit as usize
                })
                .map(owned)
                .collect();
            Ok(Val::List(Rc::new(all)))
        }
        // Strings extension.
        ("lowerAscii", Some(Val::Str(s)), []) => Ok(owned(s.as_str().to_ascii_lowercase())),
        ("upperAscii", Some(Val::Str(s)), []) => Ok(owned(s.as_str().to_ascii_uppercase())),
        ("trim", Some(Val::Str(s)), []) => Ok(owned(s.as_str().trim().to_string())),
        ("reverse", Some(Val::Str(s)), []) => Ok(owned(s.as_str().chars().rev().collect())),
        ("charAt", Some(Val::Str(s)), [Val::Int(i)]) => {
            let chars: Vec<char> = s.as_str().chars().collect();
            match usize::try_from(*i) {
                Ok(i) if i < chars.len() => Ok(owned(chars[i].to_string())),
                Ok(i) if i == chars.len() => Ok(owned(String::new())),
                _ => Err(EvalError::new(format!("index out of range: {i}"))),
            }
        }
        ("indexOf" | "lastIndexOf", Some(Val::Str(s)), [Val::Str(x), rest @ ..]) => {
            let chars: Vec<char> = s.as_str().chars().collect();
            let needle: Vec<char> = x.as_str().chars().collect();
            let start = match rest {
                [Val::Int(n)] => *n,
                _ => {
                    if f == "indexOf" {
                        0
                    } else {
                        chars.len() as i64
                    }
                }
            };
            if start < 0 || start as usize > chars.len() {
                return Err(EvalError::new(format!("index out of range: {start}")));
            }
            let found = if f == "indexOf" {
                (start as usize..=chars.len().saturating_sub(needle.len()))
                    .find(|&i| chars[i..].starts_with(&needle))
            } else {
                (0..=(start as usize).min(chars.len().saturating_sub(needle.len())))
                    .rev()
                    .find(|&i| chars[i..].starts_with(&needle))
            };
            Ok(Val::Int(found.map_or(-1, |i| i as i64)))
        }
        ("replace", Some(Val::Str(s)), [Val::Str(a), Val::Str(b), rest @ ..]) => {
            let n = match rest {
                [Val::Int(n)] => *n,
                _ => -1,
            };
            Ok(owned(if n < 0 {
                s.as_str().replace(a.as_str(), b.as_str())
            } else {
                s.as_str().replacen(a.as_str(), b.as_str(), n as usize)
            }))
        }
        ("split", Some(Val::Str(s)), [Val::Str(sep), rest @ ..]) => {
            let n = match rest {
                [Val::Int(n)] => *n,
                _ => -1,
            };
            let parts: Vec<Val> = match n {
                0 => Vec::new(),
                n if n < 0 => split_go(s.as_str(), sep.as_str(), usize::MAX),
                n => split_go(s.as_str(), sep.as_str(), n as usize),
            };
            Ok(Val::List(Rc::new(parts)))
        }
        ("substring", Some(Val::Str(s)), [Val::Int(a), rest @ ..]) => {
            let chars: Vec<char> = s.as_str().chars().collect();
            let b = match rest {
                [Val::Int(b)] => *b,
                _ => chars.len() as i64,
            };
            if *a < 0 || *a as usize > chars.len() {
                return Err(EvalError::new(format!("index out of range: {a}")));
            }
            if b < 0 || b as usize > chars.len() {
                return Err(EvalError::new(format!("index out of range: {b}")));
            }
            if *a > b {
                return Err(EvalError::new(format!(
                    "invalid substring range. start: {a}, end: {b}"
                )));
            }
            Ok(owned(chars[*a as usize..b as usize].iter().collect()))
        }
        ("join", Some(l), rest) if l.list_len().is_some() => {
            let sep = match rest {
                [Val::Str(s)] => s.as_str().to_string(),
                [] => String::new(),
                _ => return no_overload(f),
            };
            let items = l.list_items(it.types).unwrap_or_default();
            let mut parts = Vec::with_capacity(items.len());
            for i in &items {
                match i {
                    Val::Str(s) => parts.push(s.as_str().to_string()),
                    _ => return no_overload("join"),
                }
            }
            Ok(owned(parts.join(&sep)))
        }
        // Lists library.
        ("sum", Some(l), []) => {
            let items = l
                .list_items(it.types)
                .ok_or_else(|| EvalError::new("no such overload"))?;
            let mut acc = Val::Int(0);
            for (i, x) in items.iter().enumerate() {
                acc = if i == 0 {
                    x.clone()
                } else {
                    arith(it, "_+_", &acc, x)?
                };
            }
            Ok(acc)
        }
        ("min" | "max", Some(l), []) => {
            let items = l
                .list_items(it.types)
                .ok_or_else(|| EvalError::new("no such overload"))?;
            let mut best: Option<Val> = None;
            for x in items {
                best = Some(match best {
                    None => x,
                    Some(b) => {
                        let o =
                            compare(&x, &b).ok_or_else(|| EvalError::new("no such overload"))?;
                        if (f == "min" && o.is_lt()) || (f == "max" && o.is_gt()) {
                            x
                        } else {
                            b
                        }
                    }
                });
            }
            best.ok_or_else(|| EvalError::new(format!("{f} called on empty list")))
        }
        ("isSorted", Some(l), []) => {
            let items = l
                .list_items(it.types)
                .ok_or_else(|| EvalError::new("no such overload"))?;
            Ok(Val::Bool(
                items
                    .windows(2)
                    .all(|w| compare(&w[0], &w[1]).is_some_and(|o| o.is_le())),
            ))
        }
        ("indexOf" | "lastIndexOf", Some(l), [x]) if l.list_len().is_some() => {
            let items = l.list_items(it.types).unwrap_or_default();
            let pos = if f == "indexOf" {
                items.iter().position(|i| equals(i, x, it.types))
            } else {
                items.iter().rposition(|i| equals(i, x, it.types))
            };
            Ok(Val::Int(pos.map_or(-1, |p| p as i64)))
        }
        ("slice", Some(l), [Val::Int(a), Val::Int(b)]) if l.list_len().is_some() => {
            let items = l.list_items(it.types).unwrap_or_default();
            if *a < 0 || *b < *a || *b as usize > items.len() {
                return Err(EvalError::new(format!(
                    "cannot slice({a}, {b}), invalid range"
                )));
            }
            Ok(Val::List(Rc::new(items[*a as usize..*b as usize].to_vec())))
        }
        ("flatten", Some(l), []) if l.list_len().is_some() => {
            let mut out = Vec::new();
            for x in l.list_items(it.types).unwrap_or_default() {
                match x.list_items(it.types) {
                    Some(inner) => out.extend(inner),
                    None => out.push(x),
                }
            }
            Ok(Val::List(Rc::new(out)))
        }
        ("distinct", Some(l), []) if l.list_len().is_some() => {
            let mut out: Vec<Val> = Vec::new();
            for x in l.list_items(it.types).unwrap_or_default() {
                if !out.iter().any(|y| equals(y, &x, it.types)) {
                    out.push(x);
                }
            }
            Ok(Val::List(Rc::new(out)))
        }
        // Optional types.
        ("optional.of", None, [v]) => Ok(Val::Optional(Some(Rc::new(v.clone())))),
        ("optional.none", None, []) => Ok(Val::Optional(None)),
        ("optional.ofNonZeroValue", None, [v]) => Ok(Val::Optional(if is_zero(v) {
            None
        } else {
            Some(Rc::new(v.clone()))
        })),
        ("hasValue", Some(Val::Optional(o)), []) => Ok(Val::Bool(o.is_some())),
        ("value", Some(Val::Optional(o)), []) => o
            .as_ref()
            .map(|v| (**v).clone())
            .ok_or_else(|| EvalError::new("optional.none() dereference")),
        ("orValue", Some(Val::Optional(o)), [d]) => {
            Ok(o.as_ref().map_or_else(|| d.clone(), |v| (**v).clone()))
        }
        ("or", Some(Val::Optional(o)), [other]) => Ok(match o {
            Some(_) => Val::Optional(o.clone()),
            None => other.clone(),
        }),
        // Conversions.
        ("int", None, [v]) => to_int(v),
        ("uint", None, [v]) => match v {
            Val::Uint(u) => Ok(Val::Uint(*u)),
            Val::Int(i) => u64::try_from(*i)
                .map(Val::Uint)
                .map_err(|_| EvalError::new("unsigned integer overflow")),
            Val::Double(d) if *d >= 0.0 && *d < 1.8446744073709552e19 => Ok(Val::Uint(*d as u64)),
            Val::Double(_) => Err(EvalError::new("unsigned integer overflow")),
            Val::Str(s) => s
                .as_str()
                .parse()
                .map(Val::Uint)
                .or_else(|_| conversion("string", "uint")),
            _ => no_overload("uint"),
        },
        ("double", None, [v]) => match v {
            Val::Double(d) => Ok(Val::Double(*d)),
            Val::Int(i) => Ok(Val::Double(*i as f64)),
            Val::Uint(u) => Ok(Val::Double(*u as f64)),
            Val::Str(s) => s
                .as_str()
                .parse()
                .map(Val::Double)
                .or_else(|_| conversion("string", "double")),
            _ => no_overload("double"),
        },
        ("string", None, [v]) => Ok(match v {
            Val::Str(_) => v.clone(),
            Val::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => owned(s.to_string()),
                Err(_) => return conversion("bytes", "string"),
            },
            Val::Duration(d) => owned(format_duration(*d)),
            Val::Bool(_) | Val::Int(_) | Val::Uint(_) | Val::Double(_) => {
                owned(display(v, it.types))
            }
            _ => return no_overload("string"),
        }),
        ("bytes", None, [Val::Str(s)]) => Ok(Val::Bytes(s.as_str().as_bytes().into())),
        ("bool", None, [v]) => match v {
            Val::Bool(b) => Ok(Val::Bool(*b)),
            Val::Str(s) => match s.as_str() {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(Val::Bool(true)),
                "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(Val::Bool(false)),
                _ => conversion("string", "bool"),
            },
            _ => no_overload("bool"),
        },
        ("duration", None, [v]) => match v {
            Val::Duration(d) => Ok(Val::Duration(*d)),
            Val::Str(s) => parse_duration(s.as_str())
                .map(Val::Duration)
                .or_else(|_| conversion("string", "google.protobuf.Duration")),
            _ => no_overload("duration"),
        },
        ("timestamp", None, [v]) => match v {
            Val::Timestamp(t) => Ok(Val::Timestamp(*t)),
            Val::Str(s) => parse_timestamp(s.as_str())
                .map(Val::Timestamp)
                .or_else(|_| conversion("string", "google.protobuf.Timestamp")),
            _ => no_overload("timestamp"),
        },
        ("type", None, [v]) => Ok(Val::Type(Rc::from(v.type_name(it.types).as_str()))),
        ("dyn", None, [v]) => Ok(v.clone()),
        // Durations.
        ("getHours", Some(Val::Duration(d)), []) => Ok(Val::Int((d / 3_600_000_000_000) as i64)),
        ("getMinutes", Some(Val::Duration(d)), []) => Ok(Val::Int((d / 60_000_000_000) as i64)),
        ("getSeconds", Some(Val::Duration(d)), []) => Ok(Val::Int((d / 1_000_000_000) as i64)),
        ("getMilliseconds", Some(Val::Duration(d)), []) => Ok(Val::Int((d / 1_000_000) as i64)),
        _ if !KNOWN.contains(&f) => Err(EvalError::new(format!(
            "{}function '{f}' is not supported",
            crate::validate::cel_rules::UNSUPPORTED_PREFIX
        ))),
        _ => {
            let shown: Vec<String> = args.iter().map(|a| a.type_name(it.types)).collect();
            Err(EvalError::new(format!(
                "no such overload: {}{f}({})",
                target.map_or(String::new(), |t| format!("{}.", t.type_name(it.types))),
                shown.join(", ")
            )))
        }
    }
}

fn to_int<'a>(v: &Val<'a>) -> EvalResult<'a> {
    match v {
        Val::Int(i) => Ok(Val::Int(*i)),
        Val::Uint(u) => i64::try_from(*u).map(Val::Int).map_err(|_| overflow()),
        Val::Double(d) => {
            if d.is_nan() || *d <= -9.223372036854776e18 || *d >= 9.223372036854776e18 {
                Err(overflow())
            } else {
                Ok(Val::Int(d.trunc() as i64))
            }
        }
        Val::Str(s) => s
            .as_str()
            .parse::<i64>()
            .map(Val::Int)
            .or_else(|_| conversion("string", "int")),
        Val::Duration(d) => Ok(Val::Int((*d / 1_000_000_000) as i64)),
        Val::Timestamp(t) => Ok(Val::Int((*t / 1_000_000_000) as i64)),
        _ => no_overload("int"),
    }
}

/// Go's `strings.SplitN`.
fn split_go<'a>(s: &str, sep: &str, n: usize) -> Vec<Val<'a>> {
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let mut out: Vec<Val> = Vec::new();
        for (i, c) in chars.iter().enumerate() {
            if out.len() + 1 == n {
                out.push(owned(chars[i..].iter().collect()));
                return out;
            }
            out.push(owned(c.to_string()));
        }
        return out;
    }
    s.splitn(n, sep).map(|p| owned(p.to_string())).collect()
}

/// Standard base64 (with or without padding), as the server decodes `format: byte` strings.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let t = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in t.as_bytes() {
        acc = (acc << 6) | val(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_duration(s: &str) -> Result<i128, String> {
    let err = || format!("time: invalid duration \"{s}\"");
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration \"{s}\""))?;
        if num_len == 0 {
            return Err(err());
        }
        let num: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            u => return Err(format!("time: unknown unit \"{u}\" in duration \"{s}\"")),
        };
        total += num * unit;
        rest = &rest[unit_len..];
    }
    if total > 9.223_372_036_854_776e18 {
        return Err(err());
    }
    Ok(if neg { -(total as i128) } else { total as i128 })
}

/// `1h2m3.5s`-style rendering of a duration (protobuf JSON form: seconds with `s`).
pub fn format_duration(ns: i128) -> String {
    let secs = ns as f64 / 1e9;
    format!("{}s", crate::gofmt::float_v(secs))
}

/// RFC 3339 timestamps, in nanoseconds since the epoch.
pub fn parse_timestamp(s: &str) -> Result<i128, String> {
    let err = || format!("invalid timestamp \"{s}\"");
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return Err(err());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        s.get(r).and_then(|x| x.parse().ok()).ok_or_else(err)
    };
    let (y, mo, d, h, mi, se) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let mut i = 19;
    let mut nanos: i128 = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &s[start..i];
        let padded = format!("{frac:0<9}");
        nanos = padded[..9].parse().map_err(|_| err())?;
    }
    let offset_secs: i64 = match s.get(i..) {
        Some("Z" | "z") => 0,
        Some(o) if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) => {
            let hh: i64 = o[1..3].parse().map_err(|_| err())?;
            let mm: i64 = o[4..6].parse().map_err(|_| err())?;
            let v = hh * 3600 + mm * 60;
            if o.starts_with('-') { -v } else { v }
        }
        _ => return Err(err()),
    };
    // Days from civil (Howard Hinnant's algorithm).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    let secs = days * 86400 + h * 3600 + mi * 60 + se - offset_secs;
    Ok(secs as i128 * 1_000_000_000 + nanos)
}

/// `@sortByAssociatedKeys`: the items ordered by their keys (stable), which must be
/// comparable values of one type.
pub fn sort_by_keys<'a>(
    items: Vec<Val<'a>>,
    keys: Vec<Val<'a>>,
) -> Result<Vec<Val<'a>>, EvalError> {
    if items.is_empty() {
        return Ok(items);
    }
    let comparable = |v: &Val| {
        matches!(
            v,
            Val::Int(_)
                | Val::Uint(_)
                | Val::Double(_)
                | Val::Bool(_)
                | Val::Str(_)
                | Val::Bytes(_)
                | Val::Duration(_)
                | Val::Timestamp(_)
        )
    };
    if !comparable(&keys[0]) {
        return Err(EvalError::new("list elements must be comparable"));
    }
    let same = |a: &Val, b: &Val| std::mem::discriminant(a) == std::mem::discriminant(b);
    if keys.iter().any(|k| !same(k, &keys[0])) {
        return Err(EvalError::new("list elements must have the same type"));
    }
    let mut idx: Vec<usize> = (0..items.len()).collect();
    idx.sort_by(|&a, &b| compare(&keys[a], &keys[b]).unwrap_or(std::cmp::Ordering::Equal));
    Ok(idx.into_iter().map(|i| items[i].clone()).collect())
}

/// A string value of the text (kept for callers building messages).
pub fn text_of(v: &Val) -> Option<String> {
    as_str(v).map(str::to_string)
}

#[allow(dead_code)]
fn borrowed(s: &str) -> Val<'_> {
    Val::Str(Str::Borrowed(s))
}
