//! CEL values. Lists and objects of the validated object are not copied: they are views of
//! the JSON with the schema node that types their members.

use super::types::{DeclTypes, Kind, TypeId};
use crate::gofmt;
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

/// Values of the Kubernetes libraries (and other opaque types).
#[derive(Clone, Debug)]
pub enum Ext {
    Quantity(super::k8s_lib::Quantity),
    Url(super::k8s_lib::Url),
    Ip(std::net::IpAddr),
    Cidr(super::k8s_lib::Cidr),
    Semver(super::k8s_lib::Semver),
    /// A named format of the format library.
    Format(String),
    /// A compiled regular expression is never a value; the `Regex` type is for `type()`.
    Type(&'static str),
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
    /// A list of the object, with the type of its items.
    JsonList(&'a [Value], Option<TypeId>),
    Map(Rc<Vec<(Val<'a>, Val<'a>)>>),
    /// An object or map of the object, with its type (`None`: untyped).
    JsonObj(&'a Map<String, Value>, Option<TypeId>),
    /// Nanoseconds.
    Duration(i128),
    /// Nanoseconds since the Unix epoch.
    Timestamp(i128),
    Type(Rc<str>),
    Optional(Option<Rc<Val<'a>>>),
    Ext(Rc<Ext>),
}

impl<'a> Val<'a> {
    pub fn string(s: impl Into<Rc<str>>) -> Val<'a> {
        Val::Str(Str::Owned(s.into()))
    }

    /// The value of a JSON node typed by the schema node `t`.
    pub fn from_json(v: &'a Value, t: Option<TypeId>, types: &DeclTypes) -> Val<'a> {
        let kind = t.map(|t| types.node(t).kind);
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match (kind, gofmt::decoded_int(n)) {
                (Some(Kind::Double), _) => Val::Double(n.as_f64().unwrap_or(0.0)),
                (_, Some(i)) => Val::Int(i),
                (_, None) => Val::Double(n.as_f64().unwrap_or(0.0)),
            },
            Value::String(s) => match kind {
                Some(Kind::Bytes) => match super::stdlib::base64_decode(s) {
                    Some(b) => Val::Bytes(b.into()),
                    None => Val::Str(Str::Borrowed(s)),
                },
                Some(Kind::Duration) => match super::stdlib::parse_duration(s) {
                    Ok(d) => Val::Duration(d),
                    Err(_) => Val::Str(Str::Borrowed(s)),
                },
                Some(Kind::Timestamp) => match super::stdlib::parse_timestamp(s) {
                    Ok(t) => Val::Timestamp(t),
                    Err(_) => Val::Str(Str::Borrowed(s)),
                },
                _ => Val::Str(Str::Borrowed(s)),
            },
            Value::Array(items) => Val::JsonList(items, t.and_then(|t| types.node(t).elem)),
            Value::Object(m) => Val::JsonObj(m, t),
        }
    }

    /// The CEL type name (`type(x)`).
    pub fn type_name(&self, types: &DeclTypes) -> String {
        match self {
            Val::Null => "null_type".into(),
            Val::Bool(_) => "bool".into(),
            Val::Int(_) => "int".into(),
            Val::Uint(_) => "uint".into(),
            Val::Double(_) => "double".into(),
            Val::Str(_) => "string".into(),
            Val::Bytes(_) => "bytes".into(),
            Val::List(_) | Val::JsonList(..) => "list".into(),
            Val::Map(_) => "map".into(),
            Val::JsonObj(_, t) => match t.map(|t| types.node(t).kind) {
                Some(Kind::Object) => "object".into(),
                _ => "map".into(),
            },
            Val::Duration(_) => "google.protobuf.Duration".into(),
            Val::Timestamp(_) => "google.protobuf.Timestamp".into(),
            Val::Type(_) => "type".into(),
            Val::Optional(_) => "optional_type".into(),
            Val::Ext(e) => match &**e {
                Ext::Quantity(_) => "kubernetes.Quantity".into(),
                Ext::Url(_) => "kubernetes.URL".into(),
                Ext::Ip(_) => "net.IP".into(),
                Ext::Cidr(_) => "net.CIDR".into(),
                Ext::Semver(_) => "kubernetes.Semver".into(),
                Ext::Format(_) => "kubernetes.NamedFormat".into(),
                Ext::Type(t) => (*t).into(),
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

    /// The items of a list.
    pub fn list_items(&self, types: &DeclTypes) -> Option<Vec<Val<'a>>> {
        match self {
            Val::List(l) => Some(l.as_ref().clone()),
            Val::JsonList(l, t) => Some(l.iter().map(|v| Val::from_json(v, *t, types)).collect()),
            _ => None,
        }
    }

    /// The entries of a map or object.
    pub fn map_entries(&self, types: &DeclTypes) -> Option<Vec<(Val<'a>, Val<'a>)>> {
        match self {
            Val::Map(m) => Some(m.as_ref().clone()),
            Val::JsonObj(m, t) => Some(
                m.iter()
                    .map(|(k, v)| {
                        let vt = t.and_then(|t| child_type(types, t, k));
                        (Val::Str(Str::Borrowed(k)), Val::from_json(v, vt, types))
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// The type of the member `key` of an object or map node.
pub fn child_type(types: &DeclTypes, t: TypeId, key: &str) -> Option<TypeId> {
    let n = types.node(t);
    match n.kind {
        Kind::Object => n.fields.get(key).copied(),
        Kind::Map => n.elem,
        _ => None,
    }
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
        (Val::Int(x), Val::Double(y)) => (*x as f64).partial_cmp(y),
        (Val::Double(x), Val::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Val::Uint(x), Val::Double(y)) => (*x as f64).partial_cmp(y),
        (Val::Double(x), Val::Uint(y)) => x.partial_cmp(&(*y as f64)),
        _ => None,
    }
}

/// `a < b` style ordering, `None` when the types do not order.
pub fn compare(a: &Val, b: &Val) -> Option<Ordering> {
    if let Some(o) = num_cmp(a, b) {
        return Some(o);
    }
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x.as_str().cmp(y.as_str())),
        (Val::Bytes(x), Val::Bytes(y)) => Some(x.cmp(y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        (Val::Duration(x), Val::Duration(y)) => Some(x.cmp(y)),
        (Val::Timestamp(x), Val::Timestamp(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// CEL equality (heterogeneous numbers compare by value; lists and maps deeply).
pub fn equals(a: &Val, b: &Val, types: &DeclTypes) -> bool {
    if let Some(o) = num_cmp(a, b) {
        return o == Ordering::Equal;
    }
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x.as_str() == y.as_str(),
        (Val::Bytes(x), Val::Bytes(y)) => x == y,
        (Val::Duration(x), Val::Duration(y)) | (Val::Timestamp(x), Val::Timestamp(y)) => x == y,
        (Val::Type(x), Val::Type(y)) => x == y,
        (Val::Optional(x), Val::Optional(y)) => match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => equals(x, y, types),
            _ => false,
        },
        (Val::Ext(x), Val::Ext(y)) => match (&**x, &**y) {
            (Ext::Quantity(p), Ext::Quantity(q)) => p.cmp(q) == Ordering::Equal,
            (Ext::Ip(p), Ext::Ip(q)) => p == q,
            (Ext::Semver(p), Ext::Semver(q)) => p.cmp(q) == Ordering::Equal,
            (Ext::Url(p), Ext::Url(q)) => format!("{p:?}") == format!("{q:?}"),
            (Ext::Cidr(p), Ext::Cidr(q)) => format!("{p:?}") == format!("{q:?}"),
            (Ext::Format(p), Ext::Format(q)) => p == q,
            (Ext::Type(p), Ext::Type(q)) => p == q,
            _ => false,
        },
        _ => {
            if let (Some(la), Some(lb)) = (a.list_len(), b.list_len()) {
                if la != lb {
                    return false;
                }
                let (Some(xa), Some(xb)) = (a.list_items(types), b.list_items(types)) else {
                    return false;
                };
                return xa.iter().zip(&xb).all(|(x, y)| equals(x, y, types));
            }
            match (a.map_entries(types), b.map_entries(types)) {
                (Some(ma), Some(mb)) => {
                    ma.len() == mb.len()
                        && ma.iter().all(|(k, v)| {
                            mb.iter()
                                .find(|(k2, _)| equals(k, k2, types))
                                .is_some_and(|(_, v2)| equals(v, v2, types))
                        })
                }
                _ => false,
            }
        }
    }
}

/// The value as Go's `fmt` shows it in `%v` (for messages of conversion errors).
pub fn display(v: &Val, types: &DeclTypes) -> String {
    match v {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => u.to_string(),
        Val::Double(d) => gofmt::float_v(*d),
        Val::Str(s) => s.as_str().to_string(),
        Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Val::Type(t) => t.to_string(),
        _ => v.type_name(types),
    }
}
