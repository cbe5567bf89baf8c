//! List functions: the lists extension (version 3), the Kubernetes lists library, the sets
//! extension, and the list functions of the optional library.

use crate::cel::eval::{EvalError, EvalResult, Interp, is_zero};
use crate::cel::value::{Val, compare, equals};
use std::cmp::Ordering;
use std::rc::Rc;

fn err<T>(s: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::new(s))
}

fn items<'a>(it: &Interp, v: &Val<'a>) -> Result<Vec<Val<'a>>, EvalError> {
    v.list_items(it.types)
        .ok_or_else(|| EvalError::new("no such overload"))
}

fn list<'a>(v: Vec<Val<'a>>) -> Val<'a> {
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
fn contains(it: &Interp, l: &[Val], x: &Val) -> bool {
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
        "list_flatten" => list(flatten(it, &a[0], 1)?),
        "list_flatten_int" => list(flatten(it, &a[0], int(&a[1]))?),
        "lists_range" => {
            let n = int(&a[0]);
            if n < 0 {
                return err(format!("lists.range: size must be non-negative, got {n}"));
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
        // sets extension
        "list_sets_contains_list" => {
            let (l, sub) = (items(it, &a[0])?, items(it, &a[1])?);
            Val::Bool(sub.iter().all(|x| contains(it, &l, x)))
        }
        "list_sets_equivalent_list" => {
            let (l, m) = (items(it, &a[0])?, items(it, &a[1])?);
            Val::Bool(
                m.iter().all(|x| contains(it, &l, x)) && l.iter().all(|x| contains(it, &m, x)),
            )
        }
        "list_sets_intersects_list" => {
            let (l, m) = (items(it, &a[0])?, items(it, &a[1])?);
            Val::Bool(l.iter().any(|x| contains(it, &m, x)))
        }
        // optional library
        "optional_of" => Val::Optional(Some(Rc::new(a[0].clone()))),
        "optional_ofNonZeroValue" => {
            // Values of the object (lists and maps) are never zero values.
            let zero = !matches!(a[0], Val::JsonList(..) | Val::JsonObj(..)) && is_zero(&a[0]);
            Val::Optional(if zero {
                None
            } else {
                Some(Rc::new(a[0].clone()))
            })
        }
        "optional_none" => Val::Optional(None),
        "optional_hasValue" => match &a[0] {
            Val::Optional(o) => Val::Bool(o.is_some()),
            _ => return err("no such overload"),
        },
        "optional_value" => match &a[0] {
            Val::Optional(Some(v)) => (**v).clone(),
            Val::Optional(None) => return err("optional.none() dereference"),
            _ => return err("no such overload"),
        },
        "optional_or_optional" => match &a[0] {
            Val::Optional(Some(_)) => a[0].clone(),
            Val::Optional(None) => match &a[1] {
                Val::Optional(_) => a[1].clone(),
                _ => return err("no such overload"),
            },
            _ => return err("no such overload"),
        },
        "optional_orValue_value" => match &a[0] {
            Val::Optional(Some(v)) => (**v).clone(),
            Val::Optional(None) => a[1].clone(),
            _ => return err("no such overload"),
        },
        "optional_unwrap" | "optional_unwrapOpt" => {
            let mut out = Vec::new();
            for x in items(it, &a[0])? {
                match x {
                    Val::Optional(Some(v)) => out.push((*v).clone()),
                    Val::Optional(None) => {}
                    other => {
                        return err(format!(
                            "value {} is not optional",
                            crate::cel::value::display(&other)
                        ));
                    }
                }
            }
            list(out)
        }
        _ => return err(format!("no such overload: {id}")),
    })
}
