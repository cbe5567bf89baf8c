//! The value validation of a custom resource against its OpenAPI v3 schema, with the
//! semantics of kube-openapi's `validate.SchemaValidator` (as kube-apiserver 1.36 runs it) and
//! the conversion of its results into field errors done by apiextensions'
//! `kubeOpenAPIResultToFieldErrors`.
//!
//! The schema is compiled once into a flat table of small nodes (type masks, compiled
//! patterns, kept formats, normalized enum values, sorted property tables). Validation walks
//! the value; error names are kept as a linked list of path segments on the stack and only
//! rendered when an error is recorded, so that a valid value allocates nothing.
//!
//! Behaviours reproduced on purpose (all visible upstream):
//! - every applicable keyword validator runs (no short-circuit after a type error), in the
//!   order type, junctors, string, format, number, array, enum, object;
//! - `null` values run only the type check and the enum check (and `null` never matches an
//!   enum, even one listing `null`);
//! - `anyOf`/`oneOf` keep the errors of the failing branch with the highest "match count";
//! - errors are de-duplicated by their message text, first occurrence kept;
//! - numeric bounds and factors are float64; integer values are compared natively when the
//!   bound fits the declared integer type;
//! - item paths use `[i]`, map keys are joined with `.`.
//!
//! One module per group of keywords, as kube-openapi's validators (and jsonschema-rs) are cut:
//! [`type_format`], [`string`], [`numeric`], [`array`], [`object`], [`combinators`],
//! [`enums`]; [`compile`] builds the node table, [`errors`] names and converts errors,
//! [`values`] holds the Go value semantics.

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::go;
use crate::go::regexp as goregex;
use crate::k8s::formats;
use crate::schema::{Dependency, Items, Props, SchemaOrBool};
use crate::validate::property_index::PropertyIndex;
use crate::validate::ratchet::Correlated;
use serde_json::{Map, Number, Value};
use std::collections::HashSet;
use std::fmt::Write as _;

mod array;
mod combinators;
mod compile;
mod enums;
mod errors;
mod numeric;
mod object;
mod string;
mod type_format;
mod values;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod tests;

use compile::Compiler;
use enums::{enum_error, enum_value_matches};
use errors::{Conv, OErr, Seg, Sink, convert, invalid, plain, type_error};
use values::{
    Num, bad_value_of, deep_equal, go_f64_to_i64, go_int_to_string, is_json_integer, normalize,
};

type NodeId = u32;

const T_OBJECT: u8 = 1;
const T_ARRAY: u8 = 2;
const T_STRING: u8 = 4;
const T_INTEGER: u8 = 8;
const T_NUMBER: u8 = 16;
const T_BOOLEAN: u8 = 32;
const T_NULL: u8 = 64;

fn type_bit(name: &str) -> u8 {
    match name {
        "object" => T_OBJECT,
        "array" => T_ARRAY,
        "string" => T_STRING,
        "integer" => T_INTEGER,
        "number" => T_NUMBER,
        "boolean" => T_BOOLEAN,
        "null" => T_NULL,
        _ => 0,
    }
}

/// The numeric type/format pair the number validator checks ranges against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RangeType {
    /// No check (number with any format but float, or no single type).
    None,
    /// `integer` with the given format (default, int32, uint32, uint64 → int64 rules).
    Int64,
    Int32,
    Uint32,
    Uint64,
    /// `number`/other with format `float`/`float32`.
    Float32,
}

#[derive(Debug)]
enum Additional {
    /// Absent, `true`, or a schema-less `SchemaOrBool`.
    Allowed,
    Forbidden,
    Schema(NodeId),
}

#[derive(Debug)]
enum Dep {
    Schema(NodeId),
    Names(Box<[Box<str>]>),
}

/// A `pattern`, compiled when a value first meets it (large CRDs carry hundreds of
/// patterns that a given set of objects never reaches).
#[derive(Debug)]
struct Pattern {
    source: Box<str>,
    compiled: std::sync::OnceLock<Result<goregex::GoRegex, String>>,
}

impl Pattern {
    fn compiled(&self) -> &Result<goregex::GoRegex, String> {
        self.compiled
            .get_or_init(|| goregex::compile(&self.source).map_err(|e| e.to_string()))
    }
}

#[derive(Debug)]
struct Node {
    /// `spec.Schema.Type` joined with "," (for messages); empty when untyped.
    type_names: Box<str>,
    type_mask: u8,
    has_types: bool,
    nullable: bool,
    /// The format left by apiextensions' stripping of unsupported formats ("" if none).
    format: Box<str>,
    /// Whether the format validator applies to string values.
    string_format: bool,
    /// The type and format names the number validator reports ranges with.
    range_type: RangeType,
    range_type_name: Box<str>,
    max_length: Option<i64>,
    min_length: Option<i64>,
    pattern: Option<Pattern>,
    multiple_of: Option<f64>,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    minimum: Option<f64>,
    exclusive_minimum: bool,
    /// Enum values with numbers normalized as Go holds them (`None`: no enum).
    enum_values: Option<Box<[Value]>>,
    required: Box<[Box<str>]>,
    /// Sorted by name.
    properties: PropertyIndex,
    additional: Additional,
    pattern_properties: Box<[(Option<goregex::GoRegex>, NodeId)]>,
    min_properties: Option<i64>,
    max_properties: Option<i64>,
    items: Option<NodeId>,
    min_items: Option<i64>,
    max_items: Option<i64>,
    unique_items: bool,
    all_of: Box<[NodeId]>,
    any_of: Box<[NodeId]>,
    one_of: Box<[NodeId]>,
    not: Option<NodeId>,
    dependencies: Box<[(Box<str>, Dep)]>,
    has_junctors: bool,
}

/// A compiled validator for one CRD version's schema.
#[derive(Debug)]
pub struct SchemaValidator {
    nodes: Vec<Node>,
    root: NodeId,
    /// `formats::is_valid` (replaceable in tests).
    format_ok: fn(&str, &str) -> bool,
}

/// The kind of a decoded value as reflect sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Slice,
    Map,
}

// ---------------------------------------------------------------------------------------------
// Validation

impl SchemaValidator {
    /// Compile once per CRD version (patterns compiled, formats resolved, enums prepared).
    pub fn new(schema: &Props) -> SchemaValidator {
        Self::with_formats(schema, formats::is_validated, formats::is_valid)
    }

    /// Compiles with another format implementation (`is_validated`, `is_valid`).
    pub(crate) fn with_formats(
        schema: &Props,
        is_validated: fn(&str) -> bool,
        is_valid: fn(&str, &str) -> bool,
    ) -> SchemaValidator {
        let mut c = Compiler {
            nodes: Vec::new(),
            format_kept: is_validated,
        };
        let root = c.compile(schema);
        SchemaValidator {
            nodes: c.nodes,
            root,
            format_ok: is_valid,
        }
    }

    /// Validate a whole object (already pruned/defaulted by the caller) and append the causes
    /// exactly as kube-apiserver reports them for a CREATE.
    pub fn validate(&self, obj: &Value, out: &mut Vec<Cause>) {
        self.validate_at(obj, &Path::root(), out);
    }

    /// Same, for a value that lives at `path` (CRD `default` validation: the kube-openapi
    /// names are relative to the value, so root-level messages read ` in body should ...`).
    pub fn validate_at(&self, value: &Value, path: &Path, out: &mut Vec<Cause>) {
        let mut sink = Sink::recording();
        self.node(self.root, value, &Seg::Root, &mut sink);
        if sink.errs.is_empty() {
            return;
        }
        let mut seen: HashSet<String> = HashSet::with_capacity(sink.errs.len());
        for e in sink.errs {
            if !seen.insert(e.msg.clone()) {
                continue;
            }
            out.push(convert(e, path));
        }
    }

    /// Whether the value is valid (no causes), without building any error.
    #[cfg(test)]
    pub fn is_valid(&self, value: &Value) -> bool {
        let mut sink = Sink::counting();
        self.node(self.root, value, &Seg::Root, &mut sink);
        sink.count == 0
    }

    /// Validates an UPDATE with ratcheting (`RatchetingSchemaValidator.ValidateUpdate`):
    /// errors in a value that correlates with an unchanged old value are dropped. `c` pairs
    /// the validated value with the old object's (`None`: validated as on create).
    pub fn validate_update_at(
        &self,
        value: &Value,
        c: Option<Correlated<'_>>,
        path: &Path,
        out: &mut Vec<Cause>,
    ) {
        self.validate_node_at(self.root, value, c, path, out);
    }

    /// [`SchemaValidator::validate_update_at`] for the value of the root's property `name`
    /// (`status`: the status strategy validates it with a validator of its own, whose names
    /// are relative to it).
    pub fn validate_property_update_at(
        &self,
        name: &str,
        value: &Value,
        c: Option<Correlated<'_>>,
        path: &Path,
        out: &mut Vec<Cause>,
    ) {
        if let Some(id) = self.nodes[self.root as usize].properties.get(name) {
            self.validate_node_at(id, value, c, path, out);
        }
    }

    fn validate_node_at(
        &self,
        id: NodeId,
        value: &Value,
        c: Option<Correlated<'_>>,
        path: &Path,
        out: &mut Vec<Cause>,
    ) {
        let mut sink = Sink::recording();
        self.node_c(id, value, c, &Seg::Root, &mut sink);
        let mut seen: HashSet<String> = HashSet::with_capacity(sink.errs.len());
        for e in sink.errs {
            if seen.insert(e.msg.clone()) {
                out.push(convert(e, path));
            }
        }
    }

    /// `SchemaValidator.Validate` of one schema node; returns the match count.
    fn node(&self, id: NodeId, v: &Value, p: &Seg, s: &mut Sink) -> u32 {
        self.node_c(id, v, None, p, s)
    }

    /// [`Self::node`] for a value that may correlate with an old one
    /// (`ratchetingValueValidator.Validate`): the errors found at or below it are dropped when
    /// it is unchanged.
    fn node_c(
        &self,
        id: NodeId,
        v: &Value,
        c: Option<Correlated<'_>>,
        p: &Seg,
        s: &mut Sink,
    ) -> u32 {
        let Some(c) = c else {
            return self.node_plain(id, v, None, p, s);
        };
        let (count, len) = (s.count, s.errs.len());
        let mc = self.node_plain(id, v, Some(c), p, s);
        if s.count > count && c.unchanged() {
            s.count = count;
            s.errs.truncate(len);
        }
        mc
    }

    fn node_plain(
        &self,
        id: NodeId,
        v: &Value,
        c: Option<Correlated<'_>>,
        p: &Seg,
        s: &mut Sink,
    ) -> u32 {
        let n = &self.nodes[id as usize];
        let kind = match v {
            Value::Null => return self.null_value(n, p, s),
            Value::Bool(_) => Kind::Bool,
            Value::Number(num) => match Num::of(num) {
                Num::I(_) => Kind::Int,
                Num::F(_) => Kind::Float,
            },
            Value::String(_) => Kind::Str,
            Value::Array(_) => Kind::Slice,
            Value::Object(_) => Kind::Map,
        };
        let mut mc = 1;
        if n.has_types || !n.format.is_empty() {
            mc += 1 + self.check_type(n, v, kind, p, s);
        }
        mc += 1;
        if n.has_junctors {
            mc += self.junctors(n, v, p, s);
        } else {
            mc += 1;
        }
        if let Value::String(text) = v {
            mc += 1;
            self.check_string(n, text, p, s);
            if n.string_format {
                mc += 1;
                if !(self.format_ok)(&n.format, text) {
                    s.err(|| type_error(p.render(), &n.format, text));
                }
            }
        }
        if let Value::Number(num) = v {
            mc += 2;
            self.check_number(n, Num::of(num), p, s);
        }
        if let Value::Array(items) = v {
            mc += 1 + self.check_array(n, items, c, p, s);
        }
        mc += 1;
        if let Some(values) = &n.enum_values
            && !values.iter().any(|e| enum_value_matches(v, e))
        {
            s.err(|| enum_error(p.render(), v, values));
        }
        if let Value::Object(map) = v {
            mc += 1 + self.check_object(n, map, c, p, s);
        }
        mc
    }

    fn null_value(&self, n: &Node, p: &Seg, s: &mut Sink) -> u32 {
        let mut mc = 1;
        if n.has_types && n.type_mask & T_NULL == 0 && !n.nullable {
            mc = 0;
            s.err(|| type_error(p.render(), &n.type_names, "null"));
        }
        if let Some(values) = &n.enum_values {
            s.err(|| enum_error(p.render(), &Value::Null, values));
        }
        mc
    }
}
