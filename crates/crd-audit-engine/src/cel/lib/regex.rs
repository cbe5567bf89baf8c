//! The Kubernetes regex library: `find` and `findAll` with Go's RE2 syntax.

use crate::cel::eval::{EvalError, EvalResult, owned};
use crate::cel::value::Val;
use crate::go::regexp;
use std::rc::Rc;

/// The regex overload `id` applied to `a` (the receiver first), or `None` when `id` is not
/// one or the arguments are not of its types.
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    if !matches!(
        id,
        "string_find_string" | "string_find_all_string" | "string_find_all_string_int"
    ) {
        return None;
    }
    let (Some(Val::Str(s)), Some(Val::Str(pattern))) = (a.first(), a.get(1)) else {
        return None;
    };
    let re = match regexp::compile_cached(pattern.as_str()) {
        Ok(re) => re,
        Err(e) => return Some(Err(EvalError::new(format!("Illegal regex: {e}")))),
    };
    let s = s.as_str();
    Some(Ok(if id == "string_find_string" {
        owned(re.find(s).unwrap_or_default())
    } else {
        let limit = match a.get(2) {
            Some(Val::Int(n)) => *n,
            _ => -1,
        };
        let all = re.find_all(s);
        let take = if limit < 0 { all.len() } else { limit as usize };
        Val::List(Rc::new(all.into_iter().take(take).map(owned).collect()))
    }))
}
