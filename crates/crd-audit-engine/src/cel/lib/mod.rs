//! The function libraries of the Kubernetes 1.36 CEL environment beyond the standard
//! library's operators and conversions, one module per library. The Kubernetes libraries
//! (`k8s.io/apiserver/pkg/cel/library`) keep their value logic in plain Rust types, failing
//! with `Err(String)` holding exactly the text the Go library reports (what the API server
//! shows after `... evaluating rule: `); their `call` applies an overload, chosen by the
//! dispatcher from the runtime argument types, to CEL values.

pub mod cidr;
pub mod format;
pub mod ip;
pub mod lists;
pub mod optionals;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod sets;
pub mod string_format;
pub mod strings;
pub mod time;
pub mod url;

use crate::cel::eval::{EvalError, EvalResult, Interp};
use crate::cel::value::{Ext, Val};
use std::rc::Rc;

fn ext<'a>(e: Ext) -> Val<'a> {
    Val::Ext(Rc::new(e))
}

fn fail<'a>(e: String) -> EvalResult<'a> {
    Err(EvalError::new(e))
}

/// The string argument `i`.
fn text<'b>(a: &'b [Val], i: usize) -> Option<&'b str> {
    match a.get(i) {
        Some(Val::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The Kubernetes library value of argument `i`.
fn lib_ext<'b>(a: &'b [Val], i: usize) -> Option<&'b Ext> {
    match a.get(i) {
        Some(Val::Ext(e)) => Some(e),
        _ => None,
    }
}

/// The overload `id` of a library applied to `a` (a receiver first), or `None` when `id`
/// is not one of theirs or the arguments are not of its types.
pub fn call<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    if let Some(r) = strings::call(it, id, a)
        .or_else(|| sets::call(it, id, a))
        .or_else(|| optionals::call(it, id, a))
    {
        return Some(r);
    }
    if id.starts_with("list_") || id.starts_with("lists_") {
        return Some(lists::call(it, id, a));
    }
    regex::call(id, a)
        .or_else(|| url::call(id, a))
        .or_else(|| ip::call(id, a))
        .or_else(|| cidr::call(id, a))
        .or_else(|| quantity::call(id, a))
        .or_else(|| semver::call(id, a))
        .or_else(|| format::call(id, a))
}
