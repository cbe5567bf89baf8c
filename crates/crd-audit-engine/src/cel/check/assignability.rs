//! Type relations of the checker: assignability with type-parameter substitution, the most
//! general of two types, instantiation of overload signatures (cel-go `checker/types.go` and
//! `checker/mapping.go`).

use super::*;

pub(super) fn literal_type(l: &Literal) -> CelType {
    match l {
        Literal::Null => CelType::Null,
        Literal::Bool(_) => CelType::Bool,
        Literal::Int(_) => CelType::Int,
        Literal::Uint(_) => CelType::Uint,
        Literal::Double(_) => CelType::Double,
        Literal::String(_) => CelType::String,
        Literal::Bytes(_) => CelType::Bytes,
    }
}

pub(super) fn is_dyn(t: &CelType) -> bool {
    matches!(t, CelType::Dyn)
}

pub(super) fn is_dyn_or_error(t: &CelType) -> bool {
    matches!(t, CelType::Dyn | CelType::Error)
}

/// `t.IsAssignableType(from)` of cel-go's types.
pub(super) fn type_accepts(t: &CelType, from: &CelType) -> bool {
    if t == from || matches!(t, CelType::Dyn | CelType::Param(_)) {
        return true;
    }
    if t.kind() != from.kind() || t.type_name() != from.type_name() {
        return false;
    }
    let (a, b) = (t.params(), from.params());
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| type_accepts(x, y))
}

pub(super) fn nullable(t: &CelType) -> bool {
    matches!(
        t,
        CelType::Opaque(..) | CelType::Struct(..) | CelType::Duration | CelType::Timestamp
    ) || type_accepts(t, &CelType::Null)
}

pub(super) fn is_equal_or_less_specific(t1: &CelType, t2: &CelType) -> bool {
    if matches!(t1, CelType::Dyn | CelType::Param(_)) {
        return true;
    }
    if matches!(t2, CelType::Dyn | CelType::Param(_)) {
        return false;
    }
    if t1.kind() != t2.kind() {
        return false;
    }
    match (t1, t2) {
        (CelType::Opaque(n1, p1), CelType::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2)
                    .all(|(a, b)| is_equal_or_less_specific(a, b))
        }
        (CelType::List(a), CelType::List(b)) => is_equal_or_less_specific(a, b),
        (CelType::Map(k1, v1), CelType::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (CelType::Type(_), CelType::Type(_)) => true,
        _ => t1 == t2,
    }
}

pub(super) fn most_general(t1: &CelType, t2: &CelType) -> CelType {
    if is_equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

pub(super) type Mapping = HashMap<Rc<str>, CelType>;

pub(super) fn find<'m>(m: &'m Mapping, t: &CelType) -> Option<&'m CelType> {
    match t {
        CelType::Param(n) => m.get(n),
        _ => None,
    }
}

pub(super) fn not_referenced_in(m: &Mapping, t: &CelType, within: &CelType) -> bool {
    if t == within {
        return false;
    }
    match within {
        CelType::Param(_) => match find(m, within) {
            None => true,
            Some(sub) => {
                let sub = sub.clone();
                not_referenced_in(m, t, &sub)
            }
        },
        CelType::Opaque(..) | CelType::List(_) | CelType::Map(..) | CelType::Type(_) => within
            .params()
            .into_iter()
            .all(|p| not_referenced_in(m, t, p)),
        _ => true,
    }
}

pub(super) fn valid_substitution(m: &mut Mapping, t1: &CelType, t2: &CelType) -> (bool, bool) {
    if t1.kind() == t2.kind() && t1 == t2 {
        return (true, true);
    }
    if let Some(sub) = find(m, t2).cloned() {
        if t1.kind() == sub.kind() && *t1 == sub {
            return (true, true);
        }
        if assignable(m, t1, &sub) {
            let new = most_general(t1, &sub);
            if not_referenced_in(m, t2, &new)
                && let CelType::Param(n) = t2
            {
                m.insert(n.clone(), new);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        if let CelType::Param(n) = t2 {
            m.insert(n.clone(), t1.clone());
        }
        return (true, false);
    }
    (false, false)
}

/// cel-go's `internalIsAssignable`: whether `t1` is assignable to `t2`, binding type
/// parameters in `m`.
pub(super) fn assignable(m: &mut Mapping, t1: &CelType, t2: &CelType) -> bool {
    if matches!(t2, CelType::Param(_)) {
        let (valid, has_sub) = valid_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if matches!(t1, CelType::Param(_)) {
        return valid_substitution(m, t2, t1).0;
    }
    if is_dyn_or_error(t1) || is_dyn_or_error(t2) {
        return true;
    }
    if matches!(t1, CelType::Null) {
        return nullable(t2);
    }
    if matches!(t2, CelType::Null) {
        return nullable(t1);
    }
    match t1 {
        CelType::Bool
        | CelType::Bytes
        | CelType::Double
        | CelType::Int
        | CelType::String
        | CelType::Uint
        | CelType::Duration
        | CelType::Timestamp
        | CelType::Struct(..) => type_accepts(t2, t1),
        CelType::Type(_) => matches!(t2, CelType::Type(_)),
        CelType::Opaque(..) | CelType::List(_) | CelType::Map(..) => {
            t1.kind() == t2.kind()
                && t1.type_name() == t2.type_name()
                && assignable_list(m, &t1.params(), &t2.params())
        }
        _ => false,
    }
}

pub(super) fn assignable_list(m: &mut Mapping, l1: &[&CelType], l2: &[&CelType]) -> bool {
    l1.len() == l2.len() && l1.iter().zip(l2).all(|(a, b)| assignable(m, a, b))
}

pub(super) fn substitute_in(m: &Mapping, t: &CelType, to_dyn: bool) -> CelType {
    if let Some(sub) = find(m, t) {
        return substitute_in(m, sub, to_dyn);
    }
    match t {
        CelType::Param(_) if to_dyn => CelType::Dyn,
        CelType::Opaque(n, p) => CelType::Opaque(
            n.clone(),
            p.iter().map(|x| substitute_in(m, x, to_dyn)).collect(),
        ),
        CelType::List(e) => CelType::list(substitute_in(m, e, to_dyn)),
        CelType::Map(k, v) => {
            CelType::map(substitute_in(m, k, to_dyn), substitute_in(m, v, to_dyn))
        }
        CelType::Type(Some(p)) => CelType::type_of(substitute_in(m, p, to_dyn)),
        _ => t.clone(),
    }
}

/// Renames the type parameters of an overload's signature to fresh variables.
pub(super) fn instantiate(t: &CelType, fresh: &HashMap<Rc<str>, CelType>) -> CelType {
    match t {
        CelType::Param(n) => fresh.get(n).cloned().unwrap_or_else(|| t.clone()),
        CelType::Opaque(n, p) => {
            CelType::Opaque(n.clone(), p.iter().map(|x| instantiate(x, fresh)).collect())
        }
        CelType::List(e) => CelType::list(instantiate(e, fresh)),
        CelType::Map(k, v) => CelType::map(instantiate(k, fresh), instantiate(v, fresh)),
        CelType::Type(Some(p)) => CelType::type_of(instantiate(p, fresh)),
        _ => t.clone(),
    }
}
