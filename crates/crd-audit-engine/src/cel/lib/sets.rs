//! The sets extension: `sets.contains`, `sets.equivalent`, `sets.intersects` (membership by
//! CEL equality).

use super::lists::{contains, items};
use crate::cel::eval::{EvalResult, Interp};
use crate::cel::value::Val;

/// The sets overload `id` applied to `a`, or `None` when `id` is not one.
pub fn call<'a>(it: &mut Interp, id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let pair = || Ok::<_, crate::cel::eval::EvalError>((items(it, &a[0])?, items(it, &a[1])?));
    Some(match id {
        "list_sets_contains_list" => {
            pair().map(|(l, sub)| Val::Bool(sub.iter().all(|x| contains(it, &l, x))))
        }
        "list_sets_equivalent_list" => pair().map(|(l, m)| {
            Val::Bool(
                m.iter().all(|x| contains(it, &l, x)) && l.iter().all(|x| contains(it, &m, x)),
            )
        }),
        "list_sets_intersects_list" => {
            pair().map(|(l, m)| Val::Bool(l.iter().any(|x| contains(it, &m, x))))
        }
        _ => return None,
    })
}
