//! The Kubernetes quantity library (`quantity`, `isQuantity`, comparisons and arithmetic):
//! the CEL binding of [`crate::k8s::quantity`] (`library/quantity.go`).

use super::{ext, fail, lib_ext, text};
use crate::cel::eval::EvalResult;
use crate::cel::value::{Ext, Val};
pub use crate::k8s::quantity::{Quantity, is_quantity, parse_quantity};

/// The quantity overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let q0 = match lib_ext(a, 0) {
        Some(Ext::Quantity(q)) => Some(q),
        _ => None,
    };
    let q1 = match lib_ext(a, 1) {
        Some(Ext::Quantity(q)) => Some(q),
        _ => None,
    };
    let quantity = |q: Quantity| ext(Ext::Quantity(q));
    Some(match id {
        "string_to_quantity" => parse_quantity(text(a, 0)?).map(quantity).or_else(fail),
        "is_quantity_string" => Ok(Val::Bool(is_quantity(text(a, 0)?))),
        "quantity_sign" => Ok(Val::Int(q0?.sign())),
        "quantity_is_integer" => Ok(Val::Bool(q0?.is_integer())),
        "quantity_get_int" => q0?.as_integer().map(Val::Int).or_else(fail),
        "quantity_get_float" => Ok(Val::Double(q0?.as_approximate_float())),
        "quantity_is_less_than" => Ok(Val::Bool(q0?.compare(q1?).is_lt())),
        "quantity_is_greater_than" => Ok(Val::Bool(q0?.compare(q1?).is_gt())),
        "quantity_compare_to" => Ok(Val::Int(q0?.compare(q1?) as i64)),
        "quantity_add" => q0?.add(q1?).map(quantity).or_else(fail),
        "quantity_sub" => q0?.sub(q1?).map(quantity).or_else(fail),
        "quantity_add_int" | "quantity_sub_int" => {
            let Some(Val::Int(i)) = a.get(1) else {
                return None;
            };
            let r = if id == "quantity_add_int" {
                q0?.add_int(*i)
            } else {
                q0?.sub_int(*i)
            };
            r.map(quantity).or_else(fail)
        }
        _ => return None,
    })
}
