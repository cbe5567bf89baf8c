//! How CEL sees a structural schema: each node's CEL kind (objects with fields, maps, lists,
//! scalars, `int-or-string`, untyped values under `x-kubernetes-preserve-unknown-fields`, and
//! strings with the `byte`, `duration`, `date`/`date-time` formats), as kube-apiserver's
//! `SchemaDeclType` builds it. Field names are escaped for CEL as the server escapes them.

use crate::schema::{Props, SchemaOrBool};
use std::collections::BTreeMap;

pub type TypeId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Map,
    List,
    String,
    Int,
    Double,
    Bool,
    IntOrString,
    /// Any JSON value (preserve-unknown-fields without a structure).
    Any,
    Bytes,
    Duration,
    Timestamp,
}

#[derive(Debug)]
pub struct TypeNode {
    pub kind: Kind,
    /// Object fields by their JSON name.
    pub fields: BTreeMap<String, TypeId>,
    /// Map values and list items.
    pub elem: Option<TypeId>,
    pub nullable: bool,
    /// The schema's `type` (what CEL errors show as the bad value).
    pub schema_type: String,
    pub max_length: Option<i64>,
    pub max_items: Option<i64>,
    pub max_properties: Option<i64>,
    /// `x-kubernetes-list-type` (`set`, `map`, or absent).
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub map_keys: Vec<String>,
    /// The schema's `format`.
    pub schema_format: String,
    /// The declared type's `MaxElements` as kube-apiserver estimates it for cost estimation:
    /// list items, map entries, string/bytes length (0 for objects and scalars).
    pub max_elements: u64,
    /// The smallest JSON serialization of a value of this node (`MinSerializedSize`), or
    /// `None` when the API server would not expose the node to CEL at all.
    pub min_size: Option<i64>,
}

#[derive(Debug)]
pub struct DeclTypes {
    nodes: Vec<TypeNode>,
    root: TypeId,
}

impl DeclTypes {
    pub fn new(schema: &Props) -> DeclTypes {
        let mut nodes = Vec::new();
        let root = build(schema, &mut nodes, true);
        DeclTypes { nodes, root }
    }

    /// No schema at all (for evaluating constants).
    pub fn empty() -> DeclTypes {
        DeclTypes::new(&Props::default())
    }

    /// Whether the API server exposes the node to CEL (it has a CEL type).
    pub fn exposed(&self, id: TypeId) -> bool {
        self.node(id).min_size.is_some()
    }

    pub fn root(&self) -> TypeId {
        self.root
    }

    pub fn node(&self, id: TypeId) -> &TypeNode {
        &self.nodes[id as usize]
    }
}

fn build(s: &Props, nodes: &mut Vec<TypeNode>, root: bool) -> TypeId {
    let mut fields = BTreeMap::new();
    let mut elem = None;
    let kind = if s.x_int_or_string {
        Kind::IntOrString
    } else {
        match s.type_.as_str() {
            "object" => {
                if s.x_embedded_resource {
                    // apiVersion, kind and metadata (name, generateName) are always typed.
                    for f in ["apiVersion", "kind"] {
                        fields.insert(f.to_string(), leaf(nodes, Kind::String, "string"));
                    }
                    let mut meta = BTreeMap::new();
                    for f in ["name", "generateName"] {
                        meta.insert(f.to_string(), leaf(nodes, Kind::String, "string"));
                    }
                    let m = push(nodes, Kind::Object, meta, None, "object", s);
                    meta_facts(&mut nodes[m as usize]);
                    fields.insert("metadata".into(), m);
                }
                if !s.properties.is_empty() {
                    for (k, p) in &s.properties {
                        let id = build(p, nodes, false);
                        fields.insert(k.clone(), id);
                    }
                    Kind::Object
                } else if let Some(SchemaOrBool::Schema(a)) = &s.additional_properties {
                    elem = Some(build(a, nodes, false));
                    Kind::Map
                } else {
                    // Objects preserving unknown fields expose no fields to CEL.
                    Kind::Object
                }
            }
            "array" => {
                elem = s.items_schema().map(|i| build(i, nodes, false));
                Kind::List
            }
            "string" => match s.format.as_str() {
                "byte" => Kind::Bytes,
                "duration" => Kind::Duration,
                "date" | "date-time" => Kind::Timestamp,
                _ => Kind::String,
            },
            "integer" => Kind::Int,
            "number" => Kind::Double,
            "boolean" => Kind::Bool,
            _ => Kind::Any,
        }
    };
    if root && kind == Kind::Object {
        // The root's metadata is visible as name and generateName only.
        let mut meta = BTreeMap::new();
        for f in ["name", "generateName"] {
            meta.insert(f.to_string(), leaf(nodes, Kind::String, "string"));
        }
        let m = push(nodes, Kind::Object, meta, None, "object", s);
        meta_facts(&mut nodes[m as usize]);
        fields.insert("metadata".into(), m);
        for f in ["apiVersion", "kind"] {
            fields
                .entry(f.to_string())
                .or_insert_with(|| leaf(nodes, Kind::String, "string"));
        }
    }
    push(nodes, kind, fields, elem, &s.type_, s)
}

/// The request size limit the API server's size estimates assume (`MaxRequestSizeBytes`).
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
/// The longest string a request can carry (the request size minus the quotes).
const MAX_STRING_PER_REQUEST: u64 = (MAX_REQUEST_SIZE_BYTES - 2) as u64;

fn non_negative(v: i64) -> u64 {
    v.max(0) as u64
}

/// `MaxElements` and `MinSerializedSize` of a schema node, as `SchemaDeclType` computes them.
fn size_facts(
    s: &Props,
    kind: Kind,
    fields: &BTreeMap<String, TypeId>,
    elem: Option<TypeId>,
    nodes: &[TypeNode],
) -> (u64, Option<i64>) {
    let max_len = s.max_length.map(non_negative);
    let elem_min = elem.and_then(|e| nodes[e as usize].min_size);
    match kind {
        // maxLength is in characters; a character is up to 4 bytes
        Kind::IntOrString => (
            max_len.map_or(MAX_STRING_PER_REQUEST, |m| m.saturating_mul(4)),
            Some(1),
        ),
        Kind::List => match elem_min {
            Some(m) => {
                let max = s.max_items.map_or_else(
                    || non_negative((MAX_REQUEST_SIZE_BYTES - 2) / (m + 1)),
                    non_negative,
                );
                (max, Some(2))
            }
            None => (0, None),
        },
        Kind::Map => match elem_min {
            Some(m) => {
                let max = s.max_properties.map_or_else(
                    || non_negative((MAX_REQUEST_SIZE_BYTES - 2) / (m + 6)),
                    non_negative,
                );
                (max, Some(2))
            }
            None => (0, None),
        },
        Kind::Object | Kind::Any if s.type_ == "object" => {
            let mut min = 2i64;
            for name in &s.required {
                let (Some(p), Some(id)) = (s.properties.get(name), fields.get(name)) else {
                    continue;
                };
                if p.default.is_some() {
                    continue;
                }
                if let Some(m) = nodes[*id as usize].min_size {
                    min += name.len() as i64 + m + 4;
                }
            }
            (0, Some(min))
        }
        Kind::Bytes => (max_len.unwrap_or(MAX_STRING_PER_REQUEST), Some(2)),
        Kind::Duration => (32, Some(3)),
        Kind::Timestamp if s.format == "date" => (12, Some(12)),
        Kind::Timestamp => (32, Some(21)),
        Kind::String => {
            let max = match max_len {
                Some(m) => m.saturating_mul(4),
                None if !s.enum_.is_empty() => s
                    .enum_
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(|v| v.len() as u64)
                    .max()
                    .unwrap_or(0),
                None => MAX_STRING_PER_REQUEST,
            };
            (max, Some(2))
        }
        Kind::Int | Kind::Double => (0, Some(1)),
        Kind::Bool => (0, Some(4)),
        _ => (0, None),
    }
}

/// The synthesized `metadata` object (name and generateName) is an object without
/// constraints of its own.
fn meta_facts(n: &mut TypeNode) {
    n.max_elements = 0;
    n.min_size = Some(2);
    n.max_length = None;
    n.max_items = None;
    n.max_properties = None;
    n.list_type = None;
    n.map_keys = Vec::new();
    n.schema_format = String::new();
}

fn leaf(nodes: &mut Vec<TypeNode>, kind: Kind, ty: &str) -> TypeId {
    nodes.push(TypeNode {
        kind,
        fields: BTreeMap::new(),
        elem: None,
        nullable: false,
        schema_type: ty.into(),
        max_length: None,
        max_items: None,
        max_properties: None,
        list_type: None,
        map_keys: Vec::new(),
        schema_format: String::new(),
        max_elements: MAX_STRING_PER_REQUEST,
        min_size: Some(2),
    });
    (nodes.len() - 1) as TypeId
}

fn push(
    nodes: &mut Vec<TypeNode>,
    kind: Kind,
    fields: BTreeMap<String, TypeId>,
    elem: Option<TypeId>,
    ty: &str,
    s: &Props,
) -> TypeId {
    let (max_elements, min_size) = size_facts(s, kind, &fields, elem, nodes);
    nodes.push(TypeNode {
        kind,
        fields,
        elem,
        nullable: s.nullable,
        schema_type: ty.into(),
        max_length: s.max_length,
        max_items: s.max_items,
        max_properties: s.max_properties,
        list_type: s.x_list_type.clone(),
        map_keys: s.x_list_map_keys.clone(),
        schema_format: s.format.clone(),
        max_elements,
        min_size,
    });
    (nodes.len() - 1) as TypeId
}

use super::parser::RESERVED;

#[cfg(test)]
/// The JSON property a CEL field name refers to: `__dash__` is `-`, `__dot__` is `.`,
/// `__slash__` is `/`, `__underscores__` is `__`, and `__{keyword}__` is a reserved word.
pub fn unescape_field(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.contains("__") {
        return name.into();
    }
    if let Some(inner) = name.strip_prefix("__").and_then(|n| n.strip_suffix("__"))
        && RESERVED.contains(&inner)
    {
        return inner.to_string().into();
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find("__") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let (rep, len) = if after.starts_with("__dash__") {
            ("-", 8)
        } else if after.starts_with("__dot__") {
            (".", 7)
        } else if after.starts_with("__slash__") {
            ("/", 9)
        } else if after.starts_with("__underscores__") {
            ("__", 15)
        } else {
            ("__", 2)
        };
        out.push_str(rep);
        rest = &after[len..];
    }
    out.push_str(rest);
    out.into()
}

/// The CEL name of a JSON property (kube-apiserver's `Escape`): reserved words become
/// `__word__`; `__`, `.`, `-`, `/` become `__underscores__`, `__dot__`, `__dash__`,
/// `__slash__`; `None` when the name cannot be expressed (empty, leading digit, other
/// characters).
pub fn escape_field(name: &str) -> Option<String> {
    let first = *name.as_bytes().first()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'_' && b.get(i + 1) == Some(&b'_') {
            out.push_str("__underscores__");
            i += 2;
            continue;
        }
        match c {
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == b'_' => out.push(c as char),
            _ => return None,
        }
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(unescape_field("__namespace__"), "namespace");
        assert_eq!(unescape_field("a__dash__b__dot__c"), "a-b.c");
        assert_eq!(unescape_field("x__underscores__y"), "x__y");
        assert_eq!(unescape_field("plain"), "plain");
    }
}
