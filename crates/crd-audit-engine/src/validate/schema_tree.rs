//! The object validator's view of the structural schema (apiextensions-apiserver's
//! `structuralschema.Structural`, as `pkg/apiserver/schema` walks it).
//!
//! The structural skeleton of a schema (`properties`, `additionalProperties`, `items` and the
//! Kubernetes extensions, junctors ignored) compiled once for the walks that follow the
//! object's shape: null pruning and defaulting, embedded-resource checks and list-type
//! uniqueness. Each node knows whether anything below it matters to a walk, so valid objects
//! are walked only where the schema asks for it.

use crate::schema::{Props, SchemaOrBool};
use crate::validate::property_index::PropertyIndex;
use crate::validate::prune;
use serde_json::Value;

pub type NodeId = u32;

/// `x-kubernetes-list-type` as far as uniqueness goes.
#[derive(Clone, Debug, PartialEq)]
pub enum ListType {
    /// Absent or `atomic`.
    None,
    Set,
    /// With its `x-kubernetes-list-map-keys`.
    Map(Box<[Box<str>]>),
}

#[derive(Debug)]
pub struct Node {
    pub properties: PropertyIndex,
    /// `additionalProperties` with a schema.
    pub additional: Option<NodeId>,
    /// `additionalProperties` given as a bare boolean (any key is specified, without a
    /// schema).
    pub additional_bool: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    pub items: Option<NodeId>,
    pub nullable: bool,
    /// The default, pruned as the server prunes defaults before using them.
    pub default: Option<Value>,
    pub embedded: bool,
    pub list_type: ListType,
    /// Some node below (or this node's properties/items/additional) carries a default.
    pub defaults_below: bool,
    /// Some node below is an embedded resource.
    pub embedded_below: bool,
    /// Some node at or below is a list of type set or map.
    pub lists_below: bool,
}

impl Node {
    pub fn property(&self, name: &str) -> Option<NodeId> {
        self.properties.get(name)
    }
}

/// A compiled structural schema.
#[derive(Debug)]
pub struct Structure {
    nodes: Vec<Node>,
    root: NodeId,
}

impl Structure {
    pub fn new(schema: &Props) -> Structure {
        let mut nodes = Vec::new();
        let root = compile(schema, &mut nodes);
        let mut st = Structure { nodes, root };
        // The server prunes defaults before it uses them.
        for id in 0..st.nodes.len() {
            if let Some(mut d) = st.nodes[id].default.take() {
                let embedded = st.nodes[id].embedded;
                prune::prune_value(&mut d, &st, id as NodeId, embedded);
                st.nodes[id].default = Some(d);
            }
        }
        st
    }

    pub fn root(&self) -> NodeId {
        self.root
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }
}

fn compile(s: &Props, nodes: &mut Vec<Node>) -> NodeId {
    let properties = PropertyIndex::new(
        s.properties
            .iter()
            .map(|(k, p)| (Box::from(k.as_str()), compile(p, nodes)))
            .collect(),
    );
    let additional = match &s.additional_properties {
        Some(SchemaOrBool::Schema(a)) => Some(compile(a, nodes)),
        _ => None,
    };
    let items = s.items_schema().map(|i| compile(i, nodes));
    let default = s.default.clone();
    let list_type = match s.x_list_type.as_deref() {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(
            s.x_list_map_keys
                .iter()
                .map(|k| Box::from(k.as_str()))
                .collect(),
        ),
        _ => ListType::None,
    };
    let children: Vec<NodeId> = properties
        .iter()
        .map(|(_, id)| *id)
        .chain(additional)
        .chain(items)
        .collect();
    let any = |f: &dyn Fn(&Node) -> bool| children.iter().any(|&c| f(&nodes[c as usize]));
    let defaults_below = any(&|n| n.default.is_some() || n.defaults_below);
    let embedded_below = any(&|n| n.embedded || n.embedded_below);
    let lists_below = list_type != ListType::None || any(&|n| n.lists_below);
    nodes.push(Node {
        properties,
        additional,
        additional_bool: matches!(s.additional_properties, Some(SchemaOrBool::Bool(_))),
        preserve_unknown: s.x_preserve_unknown_fields == Some(true),
        items,
        nullable: s.nullable,
        default,
        embedded: s.x_embedded_resource,
        list_type,
        defaults_below,
        embedded_below,
        lists_below,
    });
    (nodes.len() - 1) as NodeId
}
