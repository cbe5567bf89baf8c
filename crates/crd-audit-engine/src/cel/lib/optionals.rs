//! The optional library: `optional.of`, `optional.ofNonZeroValue`, `optional.none`,
//! `hasValue`, `value`, `or`, `orValue`, `optional.unwrap` and `unwrapOpt` (the macros
//! `optMap`/`optFlatMap` and optional selection and indexing are evaluated by the
//! interpreter).

use super::lists::{items, list};
use crate::cel::eval::{EvalError, EvalResult, Interp, is_zero};
use crate::cel::value::Val;
use std::rc::Rc;

fn err<'a>(s: impl Into<String>) -> EvalResult<'a> {
    Err(EvalError::new(s))
}

/// The optional overload `id` applied to `a` (a receiver first), or `None` when `id` is not
/// one.
pub fn call<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    Some(match id {
        "optional_of" => Ok(Val::Optional(Some(Rc::new(a[0].clone())))),
        "optional_ofNonZeroValue" => {
            // Values of the object (lists and maps) are never zero values.
            let zero = !matches!(a[0], Val::JsonList(..) | Val::JsonObj(..)) && is_zero(&a[0]);
            Ok(Val::Optional(if zero {
                None
            } else {
                Some(Rc::new(a[0].clone()))
            }))
        }
        "optional_none" => Ok(Val::Optional(None)),
        "optional_hasValue" => match &a[0] {
            Val::Optional(o) => Ok(Val::Bool(o.is_some())),
            _ => err("no such overload"),
        },
        "optional_value" => match &a[0] {
            Val::Optional(Some(v)) => Ok((**v).clone()),
            Val::Optional(None) => err("optional.none() dereference"),
            _ => err("no such overload"),
        },
        "optional_or_optional" => match &a[0] {
            Val::Optional(Some(_)) => Ok(a[0].clone()),
            Val::Optional(None) => match &a[1] {
                Val::Optional(_) => Ok(a[1].clone()),
                _ => err("no such overload"),
            },
            _ => err("no such overload"),
        },
        "optional_orValue_value" => match &a[0] {
            Val::Optional(Some(v)) => Ok((**v).clone()),
            Val::Optional(None) => Ok(a[1].clone()),
            _ => err("no such overload"),
        },
        "optional_unwrap" | "optional_unwrapOpt" => unwrap(it, &a[0]),
        _ => return None,
    })
}

/// The present values of a list of optionals.
fn unwrap<'a>(it: &Interp, l: &Val<'a>) -> EvalResult<'a> {
    let mut out = Vec::new();
    for x in items(it, l)? {
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
    Ok(list(out))
}
