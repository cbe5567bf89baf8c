//! CEL values at run time, with cel-go's semantics (type names, equality, ordering) and the
//! views kube-apiserver gives CEL of the validated object (`UnstructuredToVal`): lists and
//! objects of the object are not copied but read through their schema node.

use super::decls::CelType;
use super::types::{DeclTypes, Kind, TypeId};
use crate::go::base64;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::rc::Rc;

/// A string, borrowed from the object or computed.
#[derive(Clone, Debug)]
pub enum Str<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl Str<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }
}

/// Values of the Kubernetes libraries.
#[derive(Clone, Debug)]
pub enum Ext {
    Quantity(super::lib::quantity::Quantity),
    Url(super::lib::url::Url),
    Ip(std::net::IpAddr),
    Cidr(super::lib::cidr::Cidr),
    Semver(super::lib::semver::Semver),
    /// A named format of the format library.
    Format(String),
}

#[derive(Clone, Debug)]
pub enum Val<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Str<'a>),
    Bytes(Rc<[u8]>),
    List(Rc<Vec<Val<'a>>>),
    /// A list of the object, with its schema node (`None`: untyped).
    JsonList(&'a [Value], Option<TypeId>),
    Map(Rc<Vec<(Val<'a>, Val<'a>)>>),
    /// An object or map of the object, with its schema node (`None`: untyped).
    JsonObj(&'a Map<String, Value>, Option<TypeId>),
    /// Nanoseconds (Go's `time.Duration`).
    Duration(i64),
    /// Nanoseconds since the Unix epoch, and the zone offset it is shown in.
    Timestamp(i128, i32),
    /// A type value, by its runtime name.
    Type(Rc<str>),
    Optional(Option<Rc<Val<'a>>>),
    Ext(Rc<Ext>),
    /// An error value (a field of the object that does not convert).
    Err(Rc<str>),
}

impl<'a> Val<'a> {
    pub fn string(s: impl Into<Rc<str>>) -> Val<'a> {
        Val::Str(Str::Owned(s.into()))
    }

    pub fn err(s: impl Into<Rc<str>>) -> Val<'a> {
        Val::Err(s.into())
    }

    /// The value of a JSON node typed by the schema node `t` (kube-apiserver's
    /// `UnstructuredToVal`).
    pub fn from_json(v: &'a Value, t: Option<TypeId>, types: &DeclTypes) -> Val<'a> {
        let Some(t) = t else {
            return Val::untyped(v);
        };
        let n = types.node(t);
        if v.is_null() {
            return if n.nullable {
                Val::Null
            } else {
                Val::err("invalid data, got null for schema with nullable=false")
            };
        }
        match n.kind {
            Kind::IntOrString => match v {
                Value::String(s) => Val::Str(Str::Borrowed(s)),
                Value::Number(num) => match crate::go::json::decoded_int(num) {
                    Some(i) => Val::Int(i),
                    None => Val::err(
                        "invalid data, expected XIntOrString value to be either a string or integer",
                    ),
                },
                _ => Val::err(
                    "invalid data, expected XIntOrString value to be either a string or integer",
                ),
            },
            Kind::Object | Kind::Map | Kind::Any => match v {
                Value::Object(m) => Val::JsonObj(m, Some(t)),
                _ => Val::err(
                    "invalid data, expected a map for the provided schema with type=object",
                ),
            },
            Kind::List => match v {
                Value::Array(items) => Val::JsonList(items, Some(t)),
                _ => Val::err(
                    "invalid data, expected an array for the provided schema with type=array",
                ),
            },
            Kind::String | Kind::Bytes | Kind::Duration | Kind::Timestamp => {
                let Value::String(s) = v else {
                    return Val::err(format!(
                        "invalid data, expected string, got {}",
                        crate::go::fmt::type_name(v)
                    ));
                };
                match n.kind {
                    Kind::Bytes => match base64::decode(base64::Alphabet::Url, s.as_bytes()) {
                        Ok(b) => Val::Bytes(b.into()),
                        Err(e) => Val::err(format!("Invalid byte formatted string {s}: {e}")),
                    },
                    Kind::Duration => match crate::go::time::parse_duration(s) {
                        Ok(d) => Val::Duration(d),
                        Err(e) => Val::err(format!("Invalid duration {s}: {e}")),
                    },
                    Kind::Timestamp => {
                        let parsed = if n.schema_format == "date" {
                            crate::go::time::parse_date(s)
                        } else {
                            crate::k8s::formats::parse_date_time(s)
                        };
                        match parsed {
                            Some((t, off)) => Val::Timestamp(t, off),
                            None => Val::err(format!(
                                "Invalid date-time formatted string {s}: cannot parse"
                            )),
                        }
                    }
                    _ => Val::Str(Str::Borrowed(s)),
                }
            }
            Kind::Double => match v {
                Value::Number(num) => Val::Double(num.as_f64().unwrap_or(0.0)),
                _ => Val::err("invalid data, expected float"),
            },
            Kind::Int => match v {
                Value::Number(num) => match crate::go::json::decoded_int(num) {
                    Some(i) => Val::Int(i),
                    None => Val::err("invalid data, expected int, got float64"),
                },
                _ => Val::err("invalid data, expected int"),
            },
            Kind::Bool => match v {
                Value::Bool(b) => Val::Bool(*b),
                _ => Val::err("invalid data, expected bool"),
            },
        }
    }

    /// A JSON value without a schema.
    pub fn untyped(v: &'a Value) -> Val<'a> {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match crate::go::json::decoded_int(n) {
                Some(i) => Val::Int(i),
                None => Val::Double(n.as_f64().unwrap_or(0.0)),
            },
            Value::String(s) => Val::Str(Str::Borrowed(s)),
            Value::Array(items) => Val::JsonList(items, None),
            Value::Object(m) => Val::JsonObj(m, None),
        }
    }

    /// cel-go's runtime type name (`type(x)`).
    pub fn type_name(&self) -> &str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Uint(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) => "string",
            Val::Bytes(_) => "bytes",
            Val::List(_) | Val::JsonList(..) => "list",
            Val::Map(_) | Val::JsonObj(..) => "map",
            Val::Duration(_) => "google.protobuf.Duration",
            Val::Timestamp(..) => "google.protobuf.Timestamp",
            Val::Type(_) => "type",
            Val::Optional(_) => "optional_type",
            Val::Err(_) => "error",
            Val::Ext(e) => match &**e {
                Ext::Quantity(_) => "kubernetes.Quantity",
                Ext::Url(_) => "kubernetes.URL",
                Ext::Ip(_) => "net.IP",
                Ext::Cidr(_) => "net.CIDR",
                Ext::Semver(_) => "kubernetes.Semver",
                Ext::Format(_) => "kubernetes.NamedFormat",
            },
        }
    }

    pub fn list_len(&self) -> Option<usize> {
        match self {
            Val::List(l) => Some(l.len()),
            Val::JsonList(l, _) => Some(l.len()),
            _ => None,
        }
    }

    /// Item `i` of a list.
    pub fn list_item(&self, i: usize, types: &DeclTypes) -> Option<Val<'a>> {
        match self {
            Val::List(l) => l.get(i).cloned(),
            Val::JsonList(l, t) => l
                .get(i)
                .map(|v| Val::from_json(v, elem_of(types, *t), types)),
            _ => None,
        }
    }

    /// The items of a list.
    pub fn list_items(&self, types: &DeclTypes) -> Option<Vec<Val<'a>>> {
        match self {
            Val::List(l) => Some(l.as_ref().clone()),
            Val::JsonList(l, t) => {
                let e = elem_of(types, *t);
                Some(l.iter().map(|v| Val::from_json(v, e, types)).collect())
            }
            _ => None,
        }
    }

    /// The entries of a map or object, as CEL iterates them (object keys escaped, unknown
    /// fields skipped).
    pub fn map_entries(&self, types: &DeclTypes) -> Option<Vec<(Val<'a>, Val<'a>)>> {
        match self {
            Val::Map(m) => Some(m.as_ref().clone()),
            Val::JsonObj(m, t) => {
                let is_object = t.is_some_and(|t| is_object_node(types, t));
                let mut out = Vec::with_capacity(m.len());
                for (k, v) in m.iter() {
                    match t {
                        Some(t) => {
                            let Some(ct) = child_type(types, *t, k) else {
                                continue;
                            };
                            let key = if is_object {
                                super::types::escape_field(k).unwrap_or_else(|| k.clone())
                            } else {
                                k.clone()
                            };
                            out.push((Val::string(key), Val::from_json(v, Some(ct), types)));
                        }
                        None => out.push((Val::Str(Str::Borrowed(k)), Val::untyped(v))),
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// The number of entries of a map or object (every field, as `Size` counts them).
    pub fn map_len(&self) -> Option<usize> {
        match self {
            Val::Map(m) => Some(m.len()),
            Val::JsonObj(m, _) => Some(m.len()),
            _ => None,
        }
    }
}

/// The item node of a list node.
pub fn elem_of(types: &DeclTypes, t: Option<TypeId>) -> Option<TypeId> {
    t.and_then(|t| types.node(t).elem)
}

/// Whether the node is an object with properties (not a map).
pub fn is_object_node(types: &DeclTypes, t: TypeId) -> bool {
    matches!(types.node(t).kind, Kind::Object | Kind::Any)
}

/// The node of the member `key` (a JSON name) of an object or map node.
pub fn child_type(types: &DeclTypes, t: TypeId, key: &str) -> Option<TypeId> {
    let n = types.node(t);
    match n.kind {
        Kind::Object | Kind::Any => n.fields.get(key).copied(),
        Kind::Map => n.elem,
        _ => None,
    }
}

/// The JSON key a CEL key names in an object (kube-apiserver's `Unescape`).
pub fn unescape_key(k: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !k.contains("__") {
        return Some(std::borrow::Cow::Borrowed(k));
    }
    let mut out = String::with_capacity(k.len());
    let mut rest = k;
    while let Some(i) = rest.find("__") {
        let after = &rest[i + 2..];
        let Some(end) = after.find("__") else {
            break;
        };
        let inner = &after[..end];
        if inner.is_empty() || inner.contains('_') {
            // `__x_y__` does not match `__[^_]+__`; keep scanning after the first underscore.
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
            continue;
        }
        out.push_str(&rest[..i]);
        match inner {
            "underscores" => out.push_str("__"),
            "dot" => out.push('.'),
            "dash" => out.push('-'),
            "slash" => out.push('/'),
            w if super::parser::RESERVED.contains(&w) => {
                if i + 4 + inner.len() != k.len() || !out.is_empty() {
                    return None;
                }
                out.push_str(w);
            }
            _ => return None,
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(std::borrow::Cow::Owned(out))
}

fn num_cmp(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Uint(x), Val::Uint(y)) => Some(x.cmp(y)),
        (Val::Double(x), Val::Double(y)) => x.partial_cmp(y),
        (Val::Int(x), Val::Uint(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (Val::Uint(_), Val::Int(_)) => num_cmp(b, a).map(Ordering::reverse),
        (Val::Int(x), Val::Double(y)) => cmp_int_double(*x, *y),
        (Val::Double(x), Val::Int(y)) => cmp_int_double(*y, *x).map(Ordering::reverse),
        (Val::Uint(x), Val::Double(y)) => cmp_uint_double(*x, *y),
        (Val::Double(x), Val::Uint(y)) => cmp_uint_double(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

/// cel-go's `compareIntDouble` (the int converted to a double within the int64 range).
fn cmp_int_double(i: i64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < -9.223372036854776e18 {
        return Some(Ordering::Greater);
    }
    if d > 9.223372036854776e18 {
        return Some(Ordering::Less);
    }
    (i as f64).partial_cmp(&d)
}

fn cmp_uint_double(u: u64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < 0.0 {
        return Some(Ordering::Greater);
    }
    if d > 1.8446744073709552e19 {
        return Some(Ordering::Less);
    }
    (u as f64).partial_cmp(&d)
}

/// Ordering of two values of the comparable kinds (`None`: not comparable, or NaN).
pub fn compare(a: &Val, b: &Val) -> Option<Ordering> {
    if let Some(o) = num_cmp(a, b) {
        return Some(o);
    }
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x.as_str().cmp(y.as_str())),
        (Val::Bytes(x), Val::Bytes(y)) => Some(x.cmp(y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        (Val::Duration(x), Val::Duration(y)) => Some(x.cmp(y)),
        (Val::Timestamp(x, _), Val::Timestamp(y, _)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Whether the value is a number (heterogeneous equality compares numbers by value).
fn is_number(v: &Val) -> bool {
    matches!(v, Val::Int(_) | Val::Uint(_) | Val::Double(_))
}

/// CEL equality: `Ok(bool)`, or an error (equality of unsupported values).
pub fn equals(a: &Val, b: &Val, types: &DeclTypes) -> bool {
    if is_number(a) && is_number(b) {
        return num_cmp(a, b) == Some(Ordering::Equal);
    }
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x.as_str() == y.as_str(),
        (Val::Bytes(x), Val::Bytes(y)) => x == y,
        (Val::Duration(x), Val::Duration(y)) => x == y,
        (Val::Timestamp(x, _), Val::Timestamp(y, _)) => x == y,
        (Val::Type(x), Val::Type(y)) => x == y,
        (Val::Optional(x), Val::Optional(y)) => match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => equals(x, y, types),
            _ => false,
        },
        (Val::Ext(x), Val::Ext(y)) => match (&**x, &**y) {
            (Ext::Quantity(p), Ext::Quantity(q)) => p.compare(q) == Ordering::Equal,
            (Ext::Ip(p), Ext::Ip(q)) => p == q,
            (Ext::Semver(p), Ext::Semver(q)) => p.compare(q) == Ordering::Equal,
            (Ext::Url(p), Ext::Url(q)) => p == q,
            (Ext::Cidr(p), Ext::Cidr(q)) => p == q,
            (Ext::Format(p), Ext::Format(q)) => p == q,
            _ => false,
        },
        _ => {
            if a.list_len().is_some() && b.list_len().is_some() {
                return lists_equal(a, b, types);
            }
            if a.map_len().is_some() && b.map_len().is_some() {
                return maps_equal(a, b, types);
            }
            false
        }
    }
}

/// The list type of a JSON list (`set`, `map` or atomic).
fn list_type<'t>(v: &Val, types: &'t DeclTypes) -> Option<&'t str> {
    match v {
        Val::JsonList(_, Some(t)) => types.node(*t).list_type.as_deref(),
        _ => None,
    }
}

fn lists_equal(a: &Val, b: &Val, types: &DeclTypes) -> bool {
    let (Some(la), Some(lb)) = (a.list_len(), b.list_len()) else {
        return false;
    };
    if la != lb {
        return false;
    }
    let (Some(xa), Some(xb)) = (a.list_items(types), b.list_items(types)) else {
        return false;
    };
    match list_type(a, types) {
        // Set lists: every element of the other list is an element of this one.
        Some("set") => xb.iter().all(|y| xa.iter().any(|x| equals(x, y, types))),
        // Map lists: each element of the other list equals the element with its keys.
        Some("map") => {
            let keys = match a {
                Val::JsonList(_, Some(t)) => types.node(*t).map_keys.clone(),
                _ => Vec::new(),
            };
            fn key_fields<'v>(
                v: &Val<'v>,
                keys: &[String],
                types: &DeclTypes,
            ) -> Option<Vec<Option<Val<'v>>>> {
                Some(keys.iter().map(|k| field_of(v, k, types)).collect())
            }
            let key_of = |v| key_fields(v, &keys, types);
            xb.iter().all(|y| {
                let Some(ky) = key_of(y) else {
                    return false;
                };
                xa.iter()
                    .find(|x| {
                        key_of(x).is_some_and(|kx| {
                            kx.len() == ky.len()
                                && kx.iter().zip(&ky).all(|(p, q)| match (p, q) {
                                    (Some(p), Some(q)) => equals(p, q, types),
                                    (None, None) => true,
                                    _ => false,
                                })
                        })
                    })
                    .is_some_and(|x| equals(x, y, types))
            })
        }
        _ => xa.iter().zip(&xb).all(|(x, y)| equals(x, y, types)),
    }
}

/// The value of field `k` (a JSON name) of an object or map value.
fn field_of<'a>(v: &Val<'a>, k: &str, types: &DeclTypes) -> Option<Val<'a>> {
    match v {
        Val::JsonObj(m, t) => {
            let raw = m.get(k)?;
            Some(match t.and_then(|t| child_type(types, t, k)) {
                Some(ct) => Val::from_json(raw, Some(ct), types),
                None => Val::untyped(raw),
            })
        }
        Val::Map(m) => m
            .iter()
            .find(|(key, _)| matches!(key, Val::Str(s) if s.as_str() == k))
            .map(|(_, v)| v.clone()),
        _ => None,
    }
}

fn maps_equal(a: &Val, b: &Val, types: &DeclTypes) -> bool {
    if a.map_len() != b.map_len() {
        return false;
    }
    let Some(ea) = a.map_entries(types) else {
        return false;
    };
    for (k, v) in &ea {
        match map_find(b, k, types) {
            Some(Ok(v2)) => {
                if !equals(v, &v2, types) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// Looks a key up in a map or object value: `None` when absent, `Some(Err)` on a bad key.
pub fn map_find<'a>(m: &Val<'a>, key: &Val, types: &DeclTypes) -> Option<Result<Val<'a>, String>> {
    match m {
        Val::JsonObj(obj, t) => {
            let Val::Str(s) = key else {
                return Some(Err("no such overload".into()));
            };
            let is_object = t.is_some_and(|t| is_object_node(types, t));
            let k = if is_object {
                unescape_key(s.as_str())?
            } else {
                std::borrow::Cow::Borrowed(s.as_str())
            };
            let k: &str = &k;
            let raw = obj.get(k)?;
            if is_object && raw.is_null() {
                return None;
            }
            match t {
                Some(t) => {
                    let ct = child_type(types, *t, k)?;
                    Some(Ok(Val::from_json(raw, Some(ct), types)))
                }
                None => Some(Ok(Val::untyped(raw))),
            }
        }
        Val::Map(entries) => find_key(entries, key).map(|v| Ok(v.clone())),
        _ => None,
    }
}

/// Map key identity (cel-go's map lookup: same value, numbers across types).
/// cel-go's `Find` on a map of CEL values: the key itself (Go's `==` on the key values),
/// else a number of another type that it converts to without loss.
pub fn find_key<'m, 'a>(entries: &'m [(Val<'a>, Val<'a>)], key: &Val) -> Option<&'m Val<'a>> {
    let get = |k: &Val| {
        entries
            .iter()
            .find(|(x, _)| super::eval::go_map_key_equal(x, k))
            .map(|(_, v)| v)
    };
    if entries.is_empty() {
        return None;
    }
    if let Some(v) = get(key) {
        return Some(v);
    }
    match *key {
        Val::Double(d) => {
            let as_int = !d.is_nan()
                && d > -9.223_372_036_854_776e18
                && d < 9.223_372_036_854_776e18
                && (d as i64) as f64 == d;
            if as_int && let Some(v) = get(&Val::Int(d as i64)) {
                return Some(v);
            }
            let as_uint = (0.0..1.844_674_407_370_955_2e19).contains(&d) && (d as u64) as f64 == d;
            if as_uint {
                return get(&Val::Uint(d as u64));
            }
            None
        }
        Val::Int(i) if i >= 0 => get(&Val::Uint(i as u64)),
        Val::Uint(u) if i64::try_from(u).is_ok() => get(&Val::Int(u as i64)),
        _ => None,
    }
}

/// Whether a value is of a declared type at run time (cel-go's `IsAssignableRuntimeType`).
pub fn runtime_assignable(t: &CelType, v: &Val, types: &DeclTypes) -> bool {
    // cel-go looks at the first element of a list or the first entry of a map only.
    match t {
        CelType::Dyn | CelType::Param(_) => true,
        CelType::List(e) => match v.list_item(0, types) {
            Some(first) => runtime_assignable(e, &first, types),
            None => v.list_len().is_some(),
        },
        CelType::Map(k, val) => match v.map_entries(types) {
            Some(entries) => entries.first().is_none_or(|(x, y)| {
                runtime_assignable(k, x, types) && runtime_assignable(val, y, types)
            }),
            None => false,
        },
        _ => t.type_name() == v.type_name(),
    }
}

/// The value as Go's `fmt` shows it in `%v` (for messages).
pub fn display(v: &Val) -> String {
    match v {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => u.to_string(),
        Val::Double(d) => crate::go::fmt::float_v(*d),
        Val::Str(s) => s.as_str().to_string(),
        Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Val::Type(t) => t.to_string(),
        Val::Duration(d) => super::lib::time::format_duration(*d),
        Val::Timestamp(t, o) => crate::go::time::format_rfc3339_nano(*t, *o),
        _ => v.type_name().to_string(),
    }
}
