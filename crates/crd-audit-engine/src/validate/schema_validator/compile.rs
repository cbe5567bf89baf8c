//! Compilation of a structural schema into the validator's flat node table (kube-openapi
//! builds its validators per call from `spec.Schema`; here it is done once per CRD version).

use super::*;

// ---------------------------------------------------------------------------------------------
// Compilation

pub(super) struct Compiler {
    pub(super) nodes: Vec<Node>,
    pub(super) format_kept: fn(&str) -> bool,
}

fn range_type_of(type_name: &str, format: &str) -> RangeType {
    match type_name {
        "integer" => match format {
            "int32" => RangeType::Int32,
            "uint32" => RangeType::Uint32,
            "uint64" => RangeType::Uint64,
            _ => RangeType::Int64,
        },
        _ => match format {
            "float" | "float32" => RangeType::Float32,
            _ => RangeType::None,
        },
    }
}

impl Compiler {
    pub(super) fn compile(&mut self, p: &Props) -> NodeId {
        let id = self.nodes.len() as NodeId;
        // Reserve the slot so that children get later ids; filled in below.
        self.nodes.push(Node::placeholder());

        let types: Vec<&str> = if p.x_int_or_string {
            vec!["integer", "string"]
        } else if p.type_.is_empty() {
            Vec::new()
        } else {
            vec![p.type_.as_str()]
        };
        let type_mask = types.iter().fold(0u8, |m, t| m | type_bit(t));
        let single_type = if types.len() == 1 { types[0] } else { "" };

        // apiextensions strips the formats it does not support for the schema's type.
        let kept = match single_type {
            _ if p.format.is_empty() => false,
            "" | "string" => (self.format_kept)(&p.format),
            "integer" => p.format == "int32" || p.format == "int64",
            "number" => p.format == "float" || p.format == "double",
            _ => false,
        };
        let format: &str = if kept { &p.format } else { "" };
        let string_format = !format.is_empty() && matches!(single_type, "" | "string");

        let pattern = (!p.pattern.is_empty()).then(|| Pattern {
            source: p.pattern.as_str().into(),
            compiled: std::sync::OnceLock::new(),
        });

        let properties: Vec<(Box<str>, NodeId)> = p
            .properties
            .iter()
            .map(|(k, s)| (k.as_str().into(), self.compile(s)))
            .collect();

        let additional = match &p.additional_properties {
            None | Some(SchemaOrBool::Bool(true)) => Additional::Allowed,
            Some(SchemaOrBool::Bool(false)) => Additional::Forbidden,
            Some(SchemaOrBool::Schema(s)) => Additional::Schema(self.compile(s)),
        };
        let pattern_properties: Vec<_> = p
            .pattern_properties
            .iter()
            .map(|(k, s)| (goregex::compile(k).ok(), self.compile(s)))
            .collect();
        let items = match &p.items {
            Some(Items::Schema(s)) => Some(self.compile(s)),
            _ => None,
        };
        let all_of: Vec<_> = p.all_of.iter().map(|s| self.compile(s)).collect();
        let any_of: Vec<_> = p.any_of.iter().map(|s| self.compile(s)).collect();
        let one_of: Vec<_> = p.one_of.iter().map(|s| self.compile(s)).collect();
        let not = p.not.as_ref().map(|s| self.compile(s));
        let dependencies: Vec<_> = p
            .dependencies
            .iter()
            .map(|(k, d)| {
                let dep = match d {
                    Dependency::Schema(s) => Dep::Schema(self.compile(s)),
                    Dependency::Names(n) => {
                        Dep::Names(n.iter().map(|s| s.as_str().into()).collect())
                    }
                };
                (k.as_str().into(), dep)
            })
            .collect();
        let has_junctors = !all_of.is_empty()
            || !any_of.is_empty()
            || !one_of.is_empty()
            || not.is_some()
            || !dependencies.is_empty();

        self.nodes[id as usize] = Node {
            type_names: types.join(",").into(),
            type_mask,
            has_types: !types.is_empty(),
            nullable: p.nullable,
            format: format.into(),
            string_format,
            range_type: range_type_of(single_type, format),
            range_type_name: single_type.into(),
            max_length: p.max_length,
            min_length: p.min_length,
            pattern,
            multiple_of: p.multiple_of,
            maximum: p.maximum,
            exclusive_maximum: p.exclusive_maximum,
            minimum: p.minimum,
            exclusive_minimum: p.exclusive_minimum,
            enum_values: (!p.enum_.is_empty()).then(|| p.enum_.iter().map(normalize).collect()),
            required: p.required.iter().map(|s| s.as_str().into()).collect(),
            properties: PropertyIndex::new(properties),
            additional,
            pattern_properties: pattern_properties.into(),
            min_properties: p.min_properties,
            max_properties: p.max_properties,
            items,
            min_items: p.min_items,
            max_items: p.max_items,
            unique_items: p.unique_items,
            all_of: all_of.into(),
            any_of: any_of.into(),
            one_of: one_of.into(),
            not,
            dependencies: dependencies.into(),
            has_junctors,
        };
        id
    }
}

impl Node {
    pub(super) fn placeholder() -> Node {
        Node {
            type_names: "".into(),
            type_mask: 0,
            has_types: false,
            nullable: false,
            format: "".into(),
            string_format: false,
            range_type: RangeType::None,
            range_type_name: "".into(),
            max_length: None,
            min_length: None,
            pattern: None,
            multiple_of: None,
            maximum: None,
            exclusive_maximum: false,
            minimum: None,
            exclusive_minimum: false,
            enum_values: None,
            required: Box::new([]),
            properties: PropertyIndex::default(),
            additional: Additional::Allowed,
            pattern_properties: Box::new([]),
            min_properties: None,
            max_properties: None,
            items: None,
            min_items: None,
            max_items: None,
            unique_items: false,
            all_of: Box::new([]),
            any_of: Box::new([]),
            one_of: Box::new([]),
            not: None,
            dependencies: Box::new([]),
            has_junctors: false,
        }
    }

    pub(super) fn property(&self, name: &str) -> Option<NodeId> {
        self.properties.get(name)
    }
}
