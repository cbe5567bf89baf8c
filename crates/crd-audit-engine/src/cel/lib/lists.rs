//! List functions: the lists extension (version 3) and the Kubernetes lists library.

use crate::cel::eval::{EvalError, EvalResult, Interp};
use crate::cel::value::{Val, compare, equals};
use std::cmp::Ordering;
use std::rc::Rc;

fn err<T>(s: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::new(s))
}

pub(super) fn items<'a>(it: &Interp, v: &Val<'a>) -> Result<Vec<Val<'a>>, EvalError> {
    v.list_items(it.types)
        .ok_or_else(|| EvalError::new("no such overload"))
}

pub(super) fn list<'a>(v: Vec<Val<'a>>) -> Val<'a> {
    Val::List(Rc::new(v))
}

fn int(v: &Val) -> i64 {
    match v {
        Val::Int(i) => *i,
        _ => 0,
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

/// `flatten(depth)`.
fn flatten<'a>(it: &Interp, v: &Val<'a>, depth: i64) -> Result<Vec<Val<'a>>, EvalError> {
    if depth < 0 {
        return err("level must be non-negative");
    }
    let mut out = Vec::new();
    for x in items(it, v)? {
        if depth > 0 && x.list_len().is_some() {
            out.extend(flatten(it, &x, depth - 1)?);
        } else {
            out.push(x);
        }
    }
    Ok(out)
}

/// Whether a list contains a value (`traits.Container` of lists).
pub(super) fn contains(it: &Interp, l: &[Val], x: &Val) -> bool {
    l.iter().any(|y| equals(y, x, it.types))
}

pub fn call<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> EvalResult<'a> {
    Ok(match id {
        "list_slice" => {
            let l = items(it, &a[0])?;
            let (s, e) = (int(&a[1]), int(&a[2]));
            if s < 0 || e < 0 {
                return err(format!(
                    "cannot slice({s}, {e}), negative indexes not supported"
                ));
            }
            if s > e {
                return err(format!(
                    "cannot slice({s}, {e}), start index must be less than or equal to end index"
                ));
            }
            if l.len() < e as usize {
                return err(format!(
                    "cannot slice({s}, {e}), list is length {}",
                    l.len()
                ));
            }
            list(l[s as usize..e as usize].to_vec())
        }
        // Without type guards, the bindings check their arguments themselves.
        "list_flatten" if a[0].list_len().is_none() => {
            return err(format!("no such overload: {}.flatten()", a[0].type_name()));
        }
        "list_flatten_int" if a[0].list_len().is_none() || !matches!(a[1], Val::Int(_)) => {
            return err(format!(
                "no such overload: {}.flatten({})",
                a[0].type_name(),
                a[1].type_name()
            ));
        }
        "list_flatten" => list(flatten(it, &a[0], 1)?),
        "list_flatten_int" => list(flatten(it, &a[0], int(&a[1]))?),
        "lists_range" => {
            let n = int(&a[0]);
            if n < 0 {
                return err(format!("lists.range: size must be non-negative, got {n}"));
            }
            // The extension's default `ListsMaxRangeSize`.
            if n > 1_000_000 {
                return err(format!(
                    "lists.range: size {n} exceeds maximum allowed (1000000)"
                ));
            }
            list((0..n).map(Val::Int).collect())
        }
        "list_reverse" => {
            let mut l = items(it, &a[0])?;
            l.reverse();
            list(l)
        }
        "list_distinct" => {
            let mut out: Vec<Val> = Vec::new();
            for x in items(it, &a[0])? {
                if !contains(it, &out, &x) {
                    out.push(x);
                }
            }
            list(out)
        }
        "list_first" | "list_last" => {
            let l = items(it, &a[0])?;
            let pick = if id == "list_first" {
                l.first()
            } else {
                l.last()
            };
            Val::Optional(pick.cloned().map(Rc::new))
        }
        // Kubernetes lists library
        id if id.ends_with("_is_sorted_bool") => {
            let mut prev: Option<Val> = None;
            for x in items(it, &a[0])? {
                if !is_comparer(&x) {
                    return err("no such overload");
                }
                if let Some(p) = &prev
                    && compare(p, &x) == Some(Ordering::Greater)
                {
                    return Ok(Val::Bool(false));
                }
                prev = Some(x);
            }
            Val::Bool(true)
        }
        id if id.contains("_sum_") => {
            let mut acc = match id {
                "list_int_sum_int" => Val::Int(0),
                "list_uint_sum_uint" => Val::Uint(0),
                "list_double_sum_double" => Val::Double(0.0),
                _ => Val::Duration(0),
            };
            for x in items(it, &a[0])? {
                if !matches!(
                    x,
                    Val::Int(_)
                        | Val::Uint(_)
                        | Val::Double(_)
                        | Val::Str(_)
                        | Val::Bytes(_)
                        | Val::Duration(_)
                        | Val::Timestamp(..)
                        | Val::List(_)
                        | Val::JsonList(..)
                ) {
                    return err("no such overload");
                }
                acc = crate::cel::functions::call(it, "_+_", false, &[acc, x])?;
            }
            acc
        }
        id if id.contains("_max_") || id.contains("_min_") => {
            let is_min = id.contains("_min_");
            let mut best: Option<Val> = None;
            for x in items(it, &a[0])? {
                if !is_comparer(&x) {
                    return err("no such overload");
                }
                best = Some(match best {
                    None => x,
                    Some(b) => {
                        let o = compare(&b, &x);
                        let prefer = if is_min {
                            Some(Ordering::Greater)
                        } else {
                            Some(Ordering::Less)
                        };
                        if o == prefer { x } else { b }
                    }
                });
            }
            match best {
                Some(b) => b,
                None => {
                    return err(format!(
                        "{} called on empty list",
                        if is_min { "min" } else { "max" }
                    ));
                }
            }
        }
        "list_a_index_of_int" | "list_a_last_index_of_int" => {
            let l = items(it, &a[0])?;
            let pos = if id == "list_a_index_of_int" {
                l.iter().position(|x| equals(x, &a[1], it.types))
            } else {
                l.iter().rposition(|x| equals(x, &a[1], it.types))
            };
            Val::Int(pos.map_or(-1, |p| p as i64))
        }
        _ => return err(format!("no such overload: {id}")),
    })
}
