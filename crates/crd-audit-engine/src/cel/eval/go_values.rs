//! Go's view of CEL values where cel-go's behaviour shows it: Go type names in messages,
//! the identity of map keys, which values can index, and zero values.

use super::*;

/// Identity of Go map keys (`map[ref.Val]`): same type and equal value.
pub fn go_map_key_equal(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Uint(x), Val::Uint(y)) => x == y,
        (Val::Double(x), Val::Double(y)) => x == y,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x.as_str() == y.as_str(),
        (Val::Null, Val::Null) => true,
        (Val::Duration(x), Val::Duration(y)) => x == y,
        (Val::Type(x), Val::Type(y)) => x == y,
        _ => false,
    }
}

impl Interp<'_> {
    /// The Go type of an index value cel-go cannot make a qualifier of (only strings, ints,
    /// uints, bools and doubles qualify).
    pub(super) fn bad_qualifier(&self, v: &Val) -> Option<&'static str> {
        Some(match v {
            Val::Str(_) | Val::Int(_) | Val::Uint(_) | Val::Bool(_) | Val::Double(_) => {
                return None;
            }
            Val::JsonList(_, t) => match t.and_then(|t| self.types.node(t).list_type.as_deref()) {
                Some("map") => "*common.unstructuredMapList",
                Some("set") => "*common.unstructuredSetList",
                _ => "*common.unstructuredList",
            },
            Val::JsonObj(..) => "*common.unstructuredMap",
            Val::Ext(e) => match &**e {
                Ext::Quantity(_) => "cel.Quantity",
                Ext::Url(_) => "cel.URL",
                Ext::Ip(_) => "cel.IP",
                Ext::Cidr(_) => "cel.CIDR",
                Ext::Semver(_) => "cel.Semver",
                Ext::Format(_) => "cel.Format",
            },
            Val::Err(_) => return None,
            other => go_type_name(other),
        })
    }

    /// Whether the call's cost tracker asserts a list receiver: `distinct()` (one overload)
    /// and a `sort()` checked to one overload.
    pub(super) fn asserts_list(&self, function: &str, offset: u32) -> bool {
        function == "distinct"
            || (function == "sort" && self.single_overload(offset, function).is_some())
    }

    /// The overload the checker resolved the call of `function` at `offset` to, if only one.
    pub(super) fn single_overload(&self, offset: u32, function: &str) -> Option<&'static str> {
        let start = self
            .single_overloads
            .partition_point(|(o, _, _)| *o < offset);
        self.single_overloads[start..]
            .iter()
            .take_while(|(o, _, _)| *o == offset)
            .find(|(_, f, _)| f == function)
            .map(|(_, _, id)| *id)
    }
}

/// cel-go's `IndexOrError`: a list index from an int, or a uint or double that converts to
/// one without loss.
pub(super) fn index_or_error(i: &Val) -> Result<i64, EvalError> {
    match *i {
        Val::Int(n) => Ok(n),
        Val::Double(d)
            if !d.is_nan()
                && d > -9.223_372_036_854_776e18
                && d < 9.223_372_036_854_776e18
                && (d as i64) as f64 == d =>
        {
            Ok(d as i64)
        }
        Val::Uint(u) if i64::try_from(u).is_ok() => Ok(u as i64),
        Val::Double(_) | Val::Uint(_) => Err(EvalError::new(format!(
            "unsupported index value {} in list",
            super::super::value::display(i)
        ))),
        _ => Err(EvalError::new(format!(
            "unsupported index type '{}' in list",
            i.type_name()
        ))),
    }
}

/// The error of cel-go's recovered panic on asserting `traits.Lister` of a value of Go type
/// `go_type` (Go names the first method of the interface the type lacks).
pub(super) fn not_a_lister(go_type: &str) -> EvalError {
    let adders = [
        "types.Int",
        "types.Uint",
        "types.Double",
        "types.String",
        "types.Bytes",
        "types.Duration",
        "types.Timestamp",
    ];
    let missing = if adders.contains(&go_type) {
        "Contains"
    } else {
        "Add"
    };
    EvalError::new(format!(
        "{INTERNAL_ERROR}interface conversion: {go_type} is not traits.Lister: missing method {missing}"
    ))
}

/// Go's `%T` of a cel-go value (in some error texts).
pub fn go_type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "types.Null",
        Val::Bool(_) => "types.Bool",
        Val::Int(_) => "types.Int",
        Val::Uint(_) => "types.Uint",
        Val::Double(_) => "types.Double",
        Val::Str(_) => "types.String",
        Val::Bytes(_) => "types.Bytes",
        Val::Duration(_) => "types.Duration",
        Val::Timestamp(..) => "types.Timestamp",
        Val::Type(_) => "*types.Type",
        Val::Optional(_) => "*types.Optional",
        Val::Err(_) => "*types.Err",
        Val::List(_) | Val::JsonList(..) => "*types.baseList",
        Val::Map(_) | Val::JsonObj(..) => "*types.baseMap",
        Val::Ext(_) => "ref.Val",
    }
}

/// Whether a value is the zero value of its type (`optional.ofNonZeroValue`).
pub fn is_zero(v: &Val) -> bool {
    match v {
        Val::Null => true,
        Val::Bool(b) => !b,
        Val::Int(i) => *i == 0,
        Val::Uint(u) => *u == 0,
        Val::Double(d) => *d == 0.0,
        Val::Str(s) => s.as_str().is_empty(),
        Val::Bytes(b) => b.is_empty(),
        Val::List(l) => l.is_empty(),
        Val::Map(m) => m.is_empty(),
        Val::Duration(d) => *d == 0,
        Val::Timestamp(t, _) => *t == i128::from(super::super::lib::time::MIN_UNIX) * 1_000_000_000,
        _ => false,
    }
}

/// A string value made from owned text.
pub fn owned<'a>(s: String) -> Val<'a> {
    Val::Str(Str::Owned(s.into()))
}
