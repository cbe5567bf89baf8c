//! Function calls at run time, dispatched as cel-go dispatches them: the standard library's
//! single bindings (operators with their operand traits), else the first declared overload
//! whose signature the runtime arguments match (`no such overload: f(types)` when none),
//! then the implementation of that overload. Also the runtime cost of calls (cel-go's
//! `costCall`, the lists extension's trackers, and kube-apiserver's `CallCost`).

use super::decls::functions as declarations;
use super::eval::{EvalError, EvalResult, Interp, owned};
use super::types::DeclTypes;
use super::value::{Ext, Str, Val, compare, display, equals, runtime_assignable};
use crate::go::regexp;
use crate::go::strconv;
use std::cmp::Ordering;
use std::rc::Rc;

fn err<T>(s: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::new(s))
}

/// `types.NoSuchOverloadErr` / `MaybeNoSuchOverloadErr`.
fn no_overload<'a>() -> EvalResult<'a> {
    err("no such overload")
}

/// The fallthrough of a unary or binary call whose operand lacks the trait.
fn no_overload_named<'a>(f: &str, arg0: &Val) -> EvalResult<'a> {
    // Receiver types (strings, durations, timestamps) answer "no such overload".
    if matches!(arg0, Val::Str(_) | Val::Duration(_) | Val::Timestamp(..)) {
        return no_overload();
    }
    err(format!("no such overload: {f}"))
}

/// `no such overload: f(t1, t2)`.
fn no_overload_sig<'a>(f: &str, args: &[Val]) -> EvalResult<'a> {
    let ts: Vec<&str> = args.iter().map(Val::type_name).collect();
    err(format!("no such overload: {f}({})", ts.join(", ")))
}

fn overflow<'a>() -> EvalResult<'a> {
    err("integer overflow")
}

fn uoverflow<'a>() -> EvalResult<'a> {
    err("unsigned integer overflow")
}

fn conversion<'a>(from: &str, to: &str) -> EvalResult<'a> {
    err(format!("type conversion error from '{from}' to '{to}'"))
}

/// Calls function `f` (its full name) with the evaluated arguments (a receiver first).
pub fn call<'a>(it: &mut Interp, f: &str, _member: bool, args: &[Val<'a>]) -> EvalResult<'a> {
    match (f, args) {
        ("_+_", [a, b]) => add(it, a, b),
        ("_-_", [a, b]) => sub(a, b),
        ("_*_", [a, b]) => mul(a, b),
        ("_/_", [a, b]) => div(a, b),
        ("_%_", [a, b]) => rem(a, b),
        ("-_", [a]) => negate(a),
        ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => relation(f, a, b),
        ("size", [a]) => size(f, a),
        ("matches", [s, p]) => match s {
            Val::Str(s) => match p {
                Val::Str(p) => {
                    let re = regexp::compile_cached(p.as_str())
                        .map_err(|e| EvalError::new(e.to_string()))?;
                    Ok(Val::Bool(re.is_match(s.as_str())))
                }
                _ => no_overload(),
            },
            other => no_overload_named(f, other),
        },
        ("@in", [x, coll]) => it.contains(coll, x).map(Val::Bool),
        ("!_", [a]) => match a {
            Val::Bool(b) => Ok(Val::Bool(!b)),
            _ => no_overload(),
        },
        ("type", [a]) => Ok(Val::Type(Rc::from(a.type_name()))),
        ("dyn", [a]) => Ok(a.clone()),
        ("sort", [l]) => match l.list_items(it.types) {
            Some(items) => sort_by_keys(items.clone(), items).map(|v| Val::List(Rc::new(v))),
            // A singleton binding for lists: receiver types answer the call themselves.
            None => no_overload_named(f, l),
        },
        ("@sortByAssociatedKeys", [l, k]) => match (l.list_items(it.types), k.list_items(it.types))
        {
            (Some(items), Some(keys)) => {
                if items.len() != keys.len() {
                    return err(format!(
                        "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
                        items.len(),
                        keys.len()
                    ));
                }
                sort_by_keys(items, keys).map(|v| Val::List(Rc::new(v)))
            }
            _ => err("no such overload: @sortByAssociatedKeys"),
        },
        _ => dispatch(it, f, args),
    }
}

/// A call the checker resolved to the one overload `id`: cel-go runs that overload behind
/// its type guard (singleton functions keep their own dispatch).
pub fn call_overload<'a>(it: &mut Interp, f: &str, id: &str, args: &[Val<'a>]) -> EvalResult<'a> {
    if is_singleton(f) {
        return call(it, f, false, args);
    }
    let Some(o) = declarations()
        .get(f)
        .and_then(|os| os.iter().find(|o| o.id == id))
    else {
        return call(it, f, false, args);
    };
    let unguarded = matches!(f, "contains" | "startsWith" | "endsWith" | "flatten");
    if unguarded
        || (o.args.len() == args.len()
            && o.args
                .iter()
                .zip(args)
                .all(|(t, v)| runtime_assignable(t, v, it.types)))
    {
        return overload(it, o.id, args);
    }
    no_overload_sig(f, args)
}

/// Whether `f` has one binding for all its overloads: a call of it never needs the
/// overload the checker chose.
pub fn is_singleton(f: &str) -> bool {
    SINGLETONS.contains(&f)
}

/// Functions with one binding for all their overloads (dispatching on operand traits).
const SINGLETONS: [&str; 18] = [
    "_+_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "-_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "size",
    "matches",
    "@in",
    "!_",
    "type",
    "dyn",
    "sort",
    "@sortByAssociatedKeys",
];

/// The first overload of `f` whose declared argument types the values match.
fn dispatch<'a>(it: &mut Interp, f: &str, args: &[Val<'a>]) -> EvalResult<'a> {
    let Some(overloads) = declarations().get(f) else {
        return err(format!("no such overload: {f}"));
    };
    // Functions declared without type guards run their binding whatever the arguments.
    if matches!(f, "contains" | "startsWith" | "endsWith" | "flatten")
        && let Some(o) = overloads.iter().find(|o| o.args.len() == args.len())
    {
        return overload(it, o.id, args);
    }
    for o in overloads {
        if o.args.len() == args.len()
            && o.args
                .iter()
                .zip(args)
                .all(|(t, v)| runtime_assignable(t, v, it.types))
        {
            return overload(it, o.id, args);
        }
    }
    no_overload_sig(f, args)
}

// ============================================================================================
// Operators
// ============================================================================================

fn add<'a>(it: &mut Interp, a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::{Bytes, Double, Duration, Int, Str, Timestamp, Uint};
    match a {
        Int(x) => match b {
            Int(y) => x.checked_add(*y).map(Int).ok_or(()).or_else(|_| overflow()),
            _ => no_overload(),
        },
        Uint(x) => match b {
            Uint(y) => x
                .checked_add(*y)
                .map(Uint)
                .ok_or(())
                .or_else(|_| uoverflow()),
            _ => no_overload(),
        },
        Double(x) => match b {
            Double(y) => Ok(Double(x + y)),
            _ => no_overload(),
        },
        Str(x) => match b {
            Str(y) => Ok(owned(format!("{}{}", x.as_str(), y.as_str()))),
            _ => no_overload(),
        },
        Bytes(x) => match b {
            Bytes(y) => {
                let mut v = x.to_vec();
                v.extend_from_slice(y);
                Ok(Bytes(v.into()))
            }
            _ => no_overload(),
        },
        Duration(x) => match b {
            Duration(y) => x
                .checked_add(*y)
                .map(Duration)
                .ok_or(())
                .or_else(|_| overflow()),
            Timestamp(t, o) => add_time(*t, *o, *x),
            _ => no_overload(),
        },
        Timestamp(t, o) => match b {
            Duration(d) => add_time(*t, *o, *d),
            _ => no_overload(),
        },
        _ if a.list_len().is_some() => {
            if b.list_len().is_none() {
                return no_overload();
            }
            concat_lists(it, a, b)
        }
        other => no_overload_named("_+_", other),
    }
}

/// `list + list`, with kube-apiserver's set union and map-list merge for its lists.
fn concat_lists<'a>(it: &Interp, a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    let mut items = a.list_items(it.types).unwrap_or_default();
    let other = b.list_items(it.types).unwrap_or_default();
    let list_type = match a {
        Val::JsonList(_, Some(t)) => it.types.node(*t).list_type.clone(),
        _ => None,
    };
    match list_type.as_deref() {
        Some("set") => {
            for x in other {
                if !items.iter().any(|y| equals(y, &x, it.types)) {
                    items.push(x);
                }
            }
        }
        Some("map") => {
            let keys = match a {
                Val::JsonList(_, Some(t)) => it.types.node(*t).map_keys.clone(),
                _ => Vec::new(),
            };
            let key_of = |v: &Val<'a>| -> Vec<Option<Val<'a>>> {
                keys.iter()
                    .map(|k| {
                        super::value::map_find(v, &Val::string(k.as_str()), it.types)
                            .and_then(Result::ok)
                    })
                    .collect()
            };
            for x in other {
                let kx = key_of(&x);
                let pos = items.iter().position(|y| {
                    let ky = key_of(y);
                    ky.len() == kx.len()
                        && ky.iter().zip(&kx).all(|(p, q)| match (p, q) {
                            (Some(p), Some(q)) => equals(p, q, it.types),
                            (None, None) => true,
                            _ => false,
                        })
                });
                match pos {
                    Some(i) => items[i] = x,
                    None => items.push(x),
                }
            }
        }
        _ => items.extend(other),
    }
    Ok(Val::List(Rc::new(items)))
}

/// Timestamp plus duration with cel-go's range check.
fn add_time<'a>(t: i128, offset: i32, d: i64) -> EvalResult<'a> {
    let r = t + i128::from(d);
    let secs = r.div_euclid(1_000_000_000);
    if secs < i128::from(super::lib::time::MIN_UNIX)
        || secs > i128::from(super::lib::time::MAX_UNIX)
    {
        return err("timestamp overflow");
    }
    Ok(Val::Timestamp(r, offset))
}

fn sub<'a>(a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::{Double, Duration, Int, Timestamp, Uint};
    match a {
        Int(x) => match b {
            Int(y) => x.checked_sub(*y).map(Int).ok_or(()).or_else(|_| overflow()),
            _ => no_overload(),
        },
        Uint(x) => match b {
            Uint(y) => x
                .checked_sub(*y)
                .map(Uint)
                .ok_or(())
                .or_else(|_| uoverflow()),
            _ => no_overload(),
        },
        Double(x) => match b {
            Double(y) => Ok(Double(x - y)),
            _ => no_overload(),
        },
        Duration(x) => match b {
            Duration(y) => x
                .checked_sub(*y)
                .map(Duration)
                .ok_or(())
                .or_else(|_| overflow()),
            _ => no_overload(),
        },
        Timestamp(t, o) => match b {
            Duration(d) => match d.checked_neg() {
                Some(n) => add_time(*t, *o, n),
                None => overflow(),
            },
            Timestamp(u, _) => {
                let diff = t - u;
                i64::try_from(diff).map(Duration).or_else(|_| overflow())
            }
            _ => no_overload(),
        },
        other => no_overload_named("_-_", other),
    }
}

fn mul<'a>(a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::{Double, Int, Uint};
    match a {
        Int(x) => match b {
            Int(y) => x.checked_mul(*y).map(Int).ok_or(()).or_else(|_| overflow()),
            _ => no_overload(),
        },
        Uint(x) => match b {
            Uint(y) => x
                .checked_mul(*y)
                .map(Uint)
                .ok_or(())
                .or_else(|_| uoverflow()),
            _ => no_overload(),
        },
        Double(x) => match b {
            Double(y) => Ok(Double(x * y)),
            _ => no_overload(),
        },
        other => no_overload_named("_*_", other),
    }
}

fn div<'a>(a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::{Double, Int, Uint};
    match a {
        Int(x) => match b {
            Int(0) => err("division by zero"),
            Int(y) => x.checked_div(*y).map(Int).ok_or(()).or_else(|_| overflow()),
            _ => no_overload(),
        },
        Uint(x) => match b {
            Uint(0) => err("division by zero"),
            Uint(y) => Ok(Uint(x / y)),
            _ => no_overload(),
        },
        Double(x) => match b {
            Double(y) => Ok(Double(x / y)),
            _ => no_overload(),
        },
        other => no_overload_named("_/_", other),
    }
}

fn rem<'a>(a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    use Val::{Int, Uint};
    match a {
        Int(x) => match b {
            Int(0) => err("modulus by zero"),
            Int(y) => x.checked_rem(*y).map(Int).ok_or(()).or_else(|_| overflow()),
            _ => no_overload(),
        },
        Uint(x) => match b {
            Uint(0) => err("modulus by zero"),
            Uint(y) => Ok(Uint(x % y)),
            _ => no_overload(),
        },
        other => no_overload_named("_%_", other),
    }
}

pub fn negate<'a>(a: &Val<'a>) -> EvalResult<'a> {
    match a {
        Val::Int(i) => i
            .checked_neg()
            .map(Val::Int)
            .ok_or(())
            .or_else(|_| overflow()),
        Val::Double(d) => Ok(Val::Double(-d)),
        Val::Duration(d) => d
            .checked_neg()
            .map(Val::Duration)
            .ok_or(())
            .or_else(|_| overflow()),
        Val::Bool(_) => no_overload(),
        other => no_overload_named("-_", other),
    }
}

fn is_comparer(v: &Val) -> bool {
    matches!(
        v,
        Val::Bool(_)
            | Val::Bytes(_)
            | Val::Double(_)
            | Val::Duration(_)
            | Val::Int(_)
            | Val::Str(_)
            | Val::Timestamp(..)
            | Val::Uint(_)
    )
}

fn relation<'a>(f: &str, a: &Val<'a>, b: &Val<'a>) -> EvalResult<'a> {
    if !is_comparer(a) {
        return no_overload_named(f, a);
    }
    if matches!(a, Val::Double(d) if d.is_nan()) || matches!(b, Val::Double(d) if d.is_nan()) {
        return Ok(Val::Bool(false));
    }
    let Some(o) = compare(a, b) else {
        return no_overload();
    };
    Ok(Val::Bool(match f {
        "_<_" => o == Ordering::Less,
        "_<=_" => o != Ordering::Greater,
        "_>_" => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }))
}

fn size<'a>(f: &str, a: &Val<'a>) -> EvalResult<'a> {
    Ok(Val::Int(match a {
        Val::Str(s) => s.as_str().chars().count() as i64,
        Val::Bytes(b) => b.len() as i64,
        _ => match a.list_len().or(a.map_len()) {
            Some(n) => n as i64,
            None => return no_overload_named(f, a),
        },
    }))
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
    if !is_comparer(&keys[0]) {
        return err("list elements must be comparable");
    }
    let first = keys[0].type_name();
    if keys.iter().any(|k| k.type_name() != first) {
        return err("list elements must have the same type");
    }
    let mut idx: Vec<usize> = (0..items.len()).collect();
    idx.sort_by(|&a, &b| compare(&keys[a], &keys[b]).unwrap_or(Ordering::Equal));
    Ok(idx.into_iter().map(|i| items[i].clone()).collect())
}

// ============================================================================================
// Overloads
// ============================================================================================

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

fn ts(v: &Val) -> (i128, i32) {
    match v {
        Val::Timestamp(t, o) => (*t, *o),
        _ => (0, 0),
    }
}

fn double_to_int(d: f64) -> Option<i64> {
    if d.is_nan() || d <= -9.223372036854776e18 || d >= 9.223372036854776e18 {
        return None;
    }
    Some(d.trunc() as i64)
}

fn double_to_uint(d: f64) -> Option<u64> {
    if d.is_nan() || !(0.0..1.8446744073709552e19).contains(&d) {
        return None;
    }
    Some(d.trunc() as u64)
}

/// Timestamp from Unix seconds with CEL's range.
fn timestamp_of<'a>(secs: i64) -> EvalResult<'a> {
    if !(super::lib::time::MIN_UNIX..=super::lib::time::MAX_UNIX).contains(&secs) {
        return err("timestamp overflow");
    }
    Ok(Val::Timestamp(i128::from(secs) * 1_000_000_000, 0))
}

/// The calendar fields of a timestamp in the zone `tz` (`UTC` when absent).
fn in_zone(t: (i128, i32), tz: Option<&str>) -> Result<crate::go::time::Fields, EvalError> {
    let offset = super::lib::time::tz_offset(tz.unwrap_or("UTC"), t.0).map_err(EvalError::new)?;
    Ok(crate::go::time::fields(t.0, offset))
}

/// The implementation of overload `id`.
fn overload<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> EvalResult<'a> {
    use Val::{Bool, Bytes, Double, Duration, Int, Str, Timestamp, Uint};
    Ok(match id {
        // ---- conversions
        "bool_to_bool"
        | "bytes_to_bytes"
        | "double_to_double"
        | "duration_to_duration"
        | "int64_to_int64"
        | "string_to_string"
        | "timestamp_to_timestamp"
        | "uint64_to_uint64" => a[0].clone(),
        "string_to_bool" => match strconv::parse_bool(text(&a[0])) {
            Some(b) => Bool(b),
            None => return conversion("string", "bool"),
        },
        "string_to_bytes" => Bytes(text(&a[0]).as_bytes().into()),
        "int64_to_double" => Double(int(&a[0]) as f64),
        "uint64_to_double" => match &a[0] {
            Uint(u) => Double(*u as f64),
            _ => return no_overload(),
        },
        "string_to_double" => match strconv::parse_float64(text(&a[0])) {
            Some(v) => Double(v),
            None => return conversion("string", "double"),
        },
        "string_to_duration" => match crate::go::time::parse_duration(text(&a[0])) {
            Ok(d) => Duration(d),
            Err(_) => return conversion("string", "google.protobuf.Duration"),
        },
        "double_to_int64" => match &a[0] {
            Double(d) => match double_to_int(*d) {
                Some(i) => Int(i),
                None => return overflow(),
            },
            _ => return no_overload(),
        },
        "duration_to_int64" => match &a[0] {
            Duration(d) => Int(*d),
            _ => return no_overload(),
        },
        "string_to_int64" => match strconv::parse_int64(text(&a[0])) {
            Some(i) => Int(i),
            None => return conversion("string", "int"),
        },
        "timestamp_to_int64" => Int(ts(&a[0]).0.div_euclid(1_000_000_000) as i64),
        "uint64_to_int64" => match &a[0] {
            Uint(u) => match i64::try_from(*u) {
                Ok(i) => Int(i),
                Err(_) => return overflow(),
            },
            _ => return no_overload(),
        },
        "bool_to_string" => owned(display(&a[0])),
        "bytes_to_string" => match &a[0] {
            Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => owned(s.to_string()),
                Err(_) => return err("invalid UTF-8 in bytes, cannot convert to string"),
            },
            _ => return no_overload(),
        },
        "double_to_string" => match &a[0] {
            Double(d) => owned(crate::go::fmt::float_v(*d)),
            _ => return no_overload(),
        },
        "duration_to_string" => match &a[0] {
            Duration(d) => owned(super::lib::time::format_duration(*d)),
            _ => return no_overload(),
        },
        "int64_to_string" | "uint64_to_string" => owned(display(&a[0])),
        "timestamp_to_string" => {
            let (t, o) = ts(&a[0]);
            owned(crate::go::time::format_rfc3339_nano(t, o))
        }
        "int64_to_timestamp" => return timestamp_of(int(&a[0])),
        "string_to_timestamp" => {
            let s = text(&a[0]);
            if !super::lib::time::is_strict_rfc3339(s) {
                return err(format!(
                    "invalid RFC 3339 timestamp {}",
                    crate::go::strconv::quote(s)
                ));
            }
            match crate::go::time::parse_rfc3339(s) {
                Some((t, o)) => {
                    let secs = t.div_euclid(1_000_000_000);
                    if secs < i128::from(super::lib::time::MIN_UNIX)
                        || secs > i128::from(super::lib::time::MAX_UNIX)
                    {
                        return err("timestamp overflow");
                    }
                    Timestamp(t, o)
                }
                None => return conversion("string", "google.protobuf.Timestamp"),
            }
        }
        "double_to_uint64" => match &a[0] {
            Double(d) => match double_to_uint(*d) {
                Some(u) => Uint(u),
                None => return uoverflow(),
            },
            _ => return no_overload(),
        },
        "int64_to_uint64" => match u64::try_from(int(&a[0])) {
            Ok(u) => Uint(u),
            Err(_) => return uoverflow(),
        },
        "string_to_uint64" => match strconv::parse_uint64(text(&a[0])) {
            Ok(u) => Uint(u),
            Err(_) => return conversion("string", "uint"),
        },
        // ---- strings (standard)
        "contains_string" | "starts_with_string" | "ends_with_string" => {
            let (Str(s), Str(x)) = (&a[0], &a[1]) else {
                return no_overload();
            };
            let (s, x) = (s.as_str(), x.as_str());
            Bool(match id {
                "contains_string" => s.contains(x),
                "starts_with_string" => s.starts_with(x),
                _ => s.ends_with(x),
            })
        }
        // ---- timestamps and durations
        "timestamp_to_year"
        | "timestamp_to_year_with_tz"
        | "timestamp_to_month"
        | "timestamp_to_month_with_tz"
        | "timestamp_to_day_of_year"
        | "timestamp_to_day_of_year_with_tz"
        | "timestamp_to_day_of_month"
        | "timestamp_to_day_of_month_with_tz"
        | "timestamp_to_day_of_month_1_based"
        | "timestamp_to_day_of_month_1_based_with_tz"
        | "timestamp_to_day_of_week"
        | "timestamp_to_day_of_week_with_tz"
        | "timestamp_to_hours"
        | "timestamp_to_hours_with_tz"
        | "timestamp_to_minutes"
        | "timestamp_to_minutes_with_tz"
        | "timestamp_to_seconds"
        | "timestamp_to_seconds_tz"
        | "timestamp_to_milliseconds"
        | "timestamp_to_milliseconds_with_tz" => {
            let tz = a.get(1).map(text);
            let f = in_zone(ts(&a[0]), tz)?;
            let base = id
                .trim_end_matches("_with_tz")
                .trim_end_matches("_tz")
                .trim_start_matches("timestamp_to_");
            Int(match base {
                "year" => f.year,
                "month" => f.month - 1,
                "day_of_year" => f.yday - 1,
                "day_of_month" => f.day - 1,
                "day_of_month_1_based" => f.day,
                "day_of_week" => f.weekday,
                "hours" => f.hour,
                "minutes" => f.minute,
                "seconds" => f.second,
                _ => f.nanos / 1_000_000,
            })
        }
        "duration_to_hours"
        | "duration_to_minutes"
        | "duration_to_seconds"
        | "duration_to_milliseconds" => {
            let Duration(d) = &a[0] else {
                return no_overload();
            };
            Int(match id {
                "duration_to_hours" => d / 3_600_000_000_000,
                "duration_to_minutes" => d / 60_000_000_000,
                "duration_to_seconds" => d / 1_000_000_000,
                _ => d / 1_000_000,
            })
        }
        _ => {
            if let Some(r) = super::lib::call(it, id, a) {
                return r;
            }
            return err(format!("no such overload: {id}"));
        }
    })
}

// ============================================================================================
// Runtime cost
// ============================================================================================

/// The size cel-go's cost tracker gives a value: characters of strings, bytes, items of
/// lists and maps, 1 for anything else.
pub fn actual_size(v: &Val) -> u64 {
    match v {
        Val::Str(s) => s.as_str().chars().count() as u64,
        Val::Bytes(b) => b.len() as u64,
        _ => v.list_len().or(v.map_len()).map_or(1, |n| n as u64),
    }
}

fn traversal(n: u64) -> u64 {
    (n as f64 * super::eval::STRING_TRAVERSAL_FACTOR).ceil() as u64
}

/// kube-apiserver's `traversalCost` (floored, bytes of strings), over the values of the
/// object too (typed by `types`).
fn k8s_traversal(v: &Val, types: &DeclTypes) -> u64 {
    match v {
        Val::Str(s) => (s.as_str().len() as f64 * 0.1) as u64,
        Val::Bytes(b) => (b.len() as f64 * 0.1) as u64,
        Val::List(_) | Val::JsonList(..) => v
            .list_items(types)
            .unwrap_or_default()
            .iter()
            .map(|x| k8s_traversal(x, types))
            .sum(),
        Val::Map(_) | Val::JsonObj(..) => v
            .map_entries(types)
            .unwrap_or_default()
            .iter()
            .map(|(k, x)| k8s_traversal(k, types) + k8s_traversal(x, types))
            .sum(),
        _ => 1,
    }
}

fn self_compare(l: &Val) -> u64 {
    let sz = actual_size(l);
    let mut factor = 2.0;
    if sz > 0
        && let Val::List(items) = l
        && matches!(items.first(), Some(Val::Str(_) | Val::Bytes(_)))
    {
        factor += 0.1;
    }
    (sz.saturating_mul(sz) as f64 * factor) as u64 + 1 + 10
}

/// The runtime cost of a call with its arguments (a receiver first) and result.
///
/// `overload` is the overload the checker resolved the call to, when it is the only one:
/// cel-go's cost trackers of the lists and sets extensions are bound to overloads, and do not
/// apply to a call checked to several (with `dyn` arguments).
pub fn cost(
    f: &str,
    _member: bool,
    args: &[Val],
    result: Option<&Val>,
    types: &DeclTypes,
    overload: Option<&str>,
) -> u64 {
    let size = |i: usize| args.get(i).map_or(0, actual_size);
    let is_text = |i: usize| matches!(args.get(i), Some(Val::Str(_) | Val::Bytes(_)));
    let list = |i: usize| args.get(i).is_some_and(|v| v.list_len().is_some());
    match overload {
        // the lists extension's trackers
        Some("list_slice" | "lists_range" | "list_reverse") => {
            return result.map_or(0, actual_size) + 1 + 10;
        }
        Some("list_distinct") => return self_compare(&args[0]),
        Some(o) if o.starts_with("list_") && o.ends_with("_sort") => {
            return self_compare(&args[0]);
        }
        Some(o) if o.starts_with("list_") && o.ends_with("_sortByAssociatedKeys") => {
            return args.get(1).map_or(11, self_compare);
        }
        Some("list_flatten" | "list_flatten_int") => {
            let depth = match args.get(1) {
                Some(Val::Int(d)) => *d as f64,
                _ => 1.0,
            };
            let factor = if depth < 0.0 { 1.0 } else { depth };
            return (size(0) as f64 * factor) as u64 + 1 + 10;
        }
        // the sets extension's trackers: a comparison per pair (two for equivalent)
        Some("list_sets_contains_list" | "list_sets_intersects_list") => {
            return 1 + size(0).saturating_mul(size(1));
        }
        Some("list_sets_equivalent_list") => {
            return 1 + size(0).saturating_mul(size(1)).saturating_mul(2);
        }
        _ => {}
    }
    match f {
        // kube-apiserver's CallCost
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, |a| k8s_traversal(a, types))
        }
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" => traversal(size(0)),
        "replace" | "split" => (size(0) as f64 * 2.0 * 0.1).ceil() as u64,
        "join" => (result.map_or(0, actual_size) as f64 * 2.0 * 0.1).ceil() as u64,
        "find" | "findAll" => {
            let str_cost = ((1 + size(0)) as f64 * 0.1).ceil() as u64;
            let re_cost = (size(1) as f64 * 0.25).ceil() as u64;
            str_cost * re_cost
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
            traversal(size(0))
        }
        "ip" => {
            if matches!(args.first(), Some(Val::Ext(e)) if matches!(**e, Ext::Cidr(_))) {
                1
            } else {
                traversal(size(0))
            }
        }
        "ip.isCanonical" => (size(0) as f64 * 2.0 * 0.1).ceil() as u64,
        "containsIP" | "containsCIDR" => {
            let cidr = size(0);
            let mut c = traversal(cidr + cidr);
            if f == "containsCIDR" {
                c += traversal(cidr) + 1;
            }
            if is_text(1) {
                c += traversal(size(1));
            }
            c
        }
        "validate" => {
            let str_cost = ((1 + size(1)) as f64 * 0.1).ceil() as u64;
            let max_regex = match args.first() {
                Some(Val::Ext(e)) => match &**e {
                    Ext::Format(n) => super::lib::format::format_max_regex_size(n),
                    _ => 0,
                },
                _ => 0,
            };
            str_cost * (max_regex as f64 * 0.25).ceil() as u64
        }
        "_==_" | "_!=_" if matches!(args.first(), Some(Val::Ext(_))) => 1,
        // cel-go's costCall
        "startsWith" | "endsWith" if is_text(0) => traversal(size(1)),
        "bytes" if matches!(args.first(), Some(Val::Str(_))) => traversal(size(0)),
        "string" if matches!(args.first(), Some(Val::Bytes(_))) => traversal(size(0)),
        "strings.quote" | "format" if is_text(0) => traversal(size(0)),
        "@in" if list(1) => size(1),
        "_==_" | "_!=_" => traversal(size(0).min(size(1))),
        "_<_" | "_<=_" | "_>_" | "_>=_" if is_text(0) && is_text(1) => {
            traversal(size(0).min(size(1)))
        }
        "_+_" if is_text(0) && is_text(1) => traversal(size(0) + size(1)),
        "matches" => {
            let str_cost = ((1 + size(0)) as f64 * 0.1).ceil() as u64;
            let re_cost = (size(1) as f64 * 0.25).ceil() as u64;
            str_cost * re_cost
        }
        "contains" if is_text(0) => traversal(size(0)) * traversal(size(1)),
        _ => 1,
    }
}

#[allow(dead_code)]
fn borrowed(s: &str) -> Val<'_> {
    Val::Str(Str::Borrowed(s))
}
