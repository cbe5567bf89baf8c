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

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::go::regexp as goregex;
use crate::gofmt;
use crate::k8s::formats;
use crate::schema::{Dependency, Items, Props, SchemaOrBool};
use crate::validate::property_index::PropertyIndex;
use serde_json::{Map, Number, Value};
use std::collections::HashSet;
use std::fmt::Write as _;

#[cfg(test)]
mod corpus_tests;

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

// ---------------------------------------------------------------------------------------------
// Go value helpers

/// A JSON number as the API server's decoder holds it: `int64` when it is integral and fits,
/// else `float64`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        match gofmt::decoded_int(n) {
            Some(i) => Num::I(i),
            None => Num::F(n.as_f64().unwrap_or(0.0)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    fn bad_value(self) -> BadValue {
        match self {
            Num::I(i) => BadValue::Int(i),
            Num::F(f) => BadValue::Float(f),
        }
    }

    fn v(self) -> String {
        match self {
            Num::I(i) => i.to_string(),
            Num::F(f) => gofmt::float_v(f),
        }
    }
}

/// Go's conversion of a float64 to int64 (amd64: out of range and NaN give the minimum).
fn go_f64_to_i64(f: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-TWO_63..TWO_63).contains(&f) {
        i64::MIN
    } else {
        f.trunc() as i64
    }
}

/// Go's `string(rune(i))` for an int64 converted to a string.
fn go_int_to_string(i: i64) -> String {
    u32::try_from(i)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
        .to_string()
}

/// `IsFloat64AJSONInteger` of go-openapi/swag (integers within ±(2^53-1), with a relative
/// tolerance of 1e-9).
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if f.is_nan() || f.is_infinite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    let diff = (f - rounded).abs();
    diff == 0.0 || diff < 1e-9 * rounded.abs()
}

/// A value with its numbers normalized the way the API server decodes them.
fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => match Num::of(n) {
            Num::I(i) => Value::from(i),
            Num::F(f) => Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
        },
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        other => other.clone(),
    }
}

/// `reflect.DeepEqual` of two decoded JSON values (int64 and float64 never equal).
fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match (Num::of(x), Num::of(y)) {
            (Num::I(i), Num::I(j)) => i == j,
            (Num::F(f), Num::F(g)) => f == g,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => false,
    }
}

/// Whether `data` matches one enum value the way kube-openapi's common validator compares:
/// the data converted to the enum value's Go type, then `reflect.DeepEqual`.
fn enum_value_matches(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (_, Value::Null) => false,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(n), _) => {
            let d = Num::of(n);
            match e {
                Value::Number(m) => match (d, Num::of(m)) {
                    (Num::I(i), Num::I(j)) => i == j,
                    (Num::I(i), Num::F(g)) => i as f64 == g,
                    (Num::F(f), Num::I(j)) => go_f64_to_i64(f) == j,
                    (Num::F(f), Num::F(g)) => f == g,
                },
                Value::String(s) => match d {
                    Num::I(i) => go_int_to_string(i) == *s,
                    Num::F(_) => false,
                },
                _ => false,
            }
        }
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            deep_equal(data, e)
        }
        _ => false,
    }
}

fn bad_value_of(v: &Value) -> BadValue {
    match v {
        Value::Number(n) => Num::of(n).bad_value(),
        Value::Null => BadValue::Json(Value::Null),
        other => BadValue::from_value(other),
    }
}

// ---------------------------------------------------------------------------------------------
// Compilation

struct Compiler {
    nodes: Vec<Node>,
    format_kept: fn(&str) -> bool,
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
    fn compile(&mut self, p: &Props) -> NodeId {
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
    fn placeholder() -> Node {
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

    fn property(&self, name: &str) -> Option<NodeId> {
        self.properties.get(name)
    }
}

// ---------------------------------------------------------------------------------------------
// Error names and results

/// The kube-openapi name of the value being validated, as a list of segments on the stack.
enum Seg<'a> {
    Root,
    /// A declared property: `parent.name`, or `name` at the root.
    Prop(&'a Seg<'a>, &'a str),
    /// A map key or derived name: always `parent.key`.
    Key(&'a Seg<'a>, &'a str),
    /// An array item: `parent[i]`.
    Index(&'a Seg<'a>, usize),
}

impl Seg<'_> {
    fn render(&self) -> String {
        let mut parts: Vec<&Seg> = Vec::new();
        let mut cur = self;
        loop {
            match cur {
                Seg::Root => break,
                Seg::Prop(p, _) | Seg::Key(p, _) | Seg::Index(p, _) => {
                    parts.push(cur);
                    cur = p;
                }
            }
        }
        let mut s = String::new();
        for part in parts.iter().rev() {
            match part {
                Seg::Prop(_, name) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(name);
                }
                Seg::Key(_, key) => {
                    s.push('.');
                    s.push_str(key);
                }
                Seg::Index(_, i) => {
                    let _ = write!(s, "[{i}]");
                }
                Seg::Root => {}
            }
        }
        s
    }
}

/// How an error becomes a field error (`kubeOpenAPIResultToFieldErrors`).
enum Conv {
    Required,
    NotSupported(BadValue, Vec<String>),
    TooLong(BadValue, i64),
    TooMany(i64, i64),
    TypeInvalid(BadValue),
    Invalid(BadValue),
    /// Not an `errors.Validation`: reported at the base path with an empty value.
    Plain,
}

/// One kube-openapi error: its name, its `Error()` text and its conversion.
struct OErr {
    name: String,
    msg: String,
    conv: Conv,
}

/// Collects errors, or only counts them (for `anyOf`/`oneOf`/`not` branches whose errors may
/// be dropped).
struct Sink {
    errs: Vec<OErr>,
    count: usize,
    record: bool,
}

impl Sink {
    fn recording() -> Sink {
        Sink {
            errs: Vec::new(),
            count: 0,
            record: true,
        }
    }

    fn counting() -> Sink {
        Sink {
            errs: Vec::new(),
            count: 0,
            record: false,
        }
    }

    #[inline]
    fn err(&mut self, f: impl FnOnce() -> OErr) {
        self.count += 1;
        if self.record {
            self.errs.push(f());
        }
    }
}

fn type_error(name: String, type_name: &str, got: &str) -> OErr {
    let msg = format!(
        "{name} in body must be of type {type_name}: {}",
        gofmt::quote(got)
    );
    OErr {
        name,
        msg,
        conv: Conv::TypeInvalid(BadValue::Str(got.to_string())),
    }
}

fn plain(msg: String) -> OErr {
    OErr {
        name: String::new(),
        msg,
        conv: Conv::Plain,
    }
}

fn invalid(name: String, msg: String, value: BadValue) -> OErr {
    OErr {
        name,
        msg,
        conv: Conv::Invalid(value),
    }
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

/// Whether `IsValueValidAgainstRange` accepts `v` for the node's type and format.
fn range_ok(node: &Node, v: Num) -> bool {
    let int = || match v {
        Num::I(i) => Some(i as i128),
        Num::F(f) => gofmt::shortest_integer(f),
    };
    let within = |lo: i128, hi: i128| int().is_some_and(|i| (lo..=hi).contains(&i));
    match node.range_type {
        RangeType::None => true,
        RangeType::Int64 => within(i64::MIN as i128, i64::MAX as i128),
        RangeType::Int32 => within(i32::MIN as i128, i32::MAX as i128),
        RangeType::Uint32 => within(0, u32::MAX as i128),
        RangeType::Uint64 => within(0, u64::MAX as i128),
        RangeType::Float32 => !(v.as_f64() as f32).is_infinite(),
    }
}

/// The message of a failed range check.
fn range_msg(node: &Node, prefix: &str, name: &str) -> String {
    let t = if node.range_type_name.is_empty() {
        "number"
    } else {
        &node.range_type_name
    };
    if node.format.is_empty() {
        format!("{prefix} value must be of type {t} (default format) in {name}")
    } else {
        format!(
            "{prefix} value must be of type {t} with format {} in {name}",
            node.format
        )
    }
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
    pub fn is_valid(&self, value: &Value) -> bool {
        let mut sink = Sink::counting();
        self.node(self.root, value, &Seg::Root, &mut sink);
        sink.count == 0
    }

    /// `SchemaValidator.Validate` of one schema node; returns the match count.
    fn node(&self, id: NodeId, v: &Value, p: &Seg, s: &mut Sink) -> u32 {
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
            mc += 1 + self.check_array(n, items, p, s);
        }
        mc += 1;
        if let Some(values) = &n.enum_values
            && !values.iter().any(|e| enum_value_matches(v, e))
        {
            s.err(|| enum_error(p.render(), v, values));
        }
        if let Value::Object(map) = v {
            mc += 1 + self.check_object(n, map, p, s);
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

    /// The type validator; 1 when it passes.
    fn check_type(&self, n: &Node, v: &Value, kind: Kind, p: &Seg, s: &mut Sink) -> u32 {
        let (sch_type, sch_bit, format) = match kind {
            Kind::Bool => ("boolean", T_BOOLEAN, ""),
            Kind::Str => ("string", T_STRING, ""),
            Kind::Int => ("integer", T_INTEGER, "int64"),
            Kind::Float => ("number", T_NUMBER, "float64"),
            Kind::Slice => ("array", T_ARRAY, ""),
            Kind::Map => ("object", T_OBJECT, ""),
        };
        let contains = n.type_mask & sch_bit != 0;
        let is_float_int = kind == Kind::Float
            && n.type_mask & T_INTEGER != 0
            && match v {
                Value::Number(num) => is_json_integer(Num::of(num).as_f64()),
                _ => false,
            };
        let is_int_float = kind == Kind::Int && n.type_mask & T_NUMBER != 0;
        if kind != Kind::Str
            && kind != Kind::Slice
            && !n.format.is_empty()
            && !(contains || format == &*n.format || is_float_int || is_int_float)
        {
            s.err(|| type_error(p.render(), &n.format, format));
            return 0;
        }
        if n.type_mask & (T_NUMBER | T_INTEGER) == 0
            && !n.format.is_empty()
            && (kind == Kind::Str || kind == Kind::Slice)
        {
            return 1;
        }
        if !(contains || is_float_int || is_int_float) {
            s.err(|| type_error(p.render(), &n.type_names, sch_type));
            return 0;
        }
        1
    }

    fn check_string(&self, n: &Node, text: &str, p: &Seg, s: &mut Sink) {
        if n.max_length.is_none() && n.min_length.is_none() && n.pattern.is_none() {
            return;
        }
        let runes = || text.chars().count() as i64;
        if let Some(max) = n.max_length
            && runes() > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should be at most {max} chars long"),
                    name,
                    conv: Conv::TooLong(BadValue::Str(text.to_string()), max),
                }
            });
            return;
        }
        if let Some(min) = n.min_length
            && runes() < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should be at least {min} chars long");
                invalid(name, msg, BadValue::Str(text.to_string()))
            });
            return;
        }
        if let Some(pat) = &n.pattern {
            let shown = match pat.compiled() {
                Ok(re) if re.is_match(text) => return,
                Ok(_) => pat.source.to_string(),
                Err(e) => format!("{}, but pattern is invalid: {e}", pat.source),
            };
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should match '{shown}'");
                invalid(name, msg, BadValue::Str(text.to_string()))
            });
        }
    }

    fn check_number(&self, n: &Node, v: Num, p: &Seg, s: &mut Sink) {
        if n.range_type == RangeType::None
            && n.multiple_of.is_none()
            && n.maximum.is_none()
            && n.minimum.is_none()
        {
            return;
        }
        let name = || p.render();
        if !range_ok(n, v) {
            s.err(|| plain(range_msg(n, "Checked", &name())));
        }
        if let Some(factor) = n.multiple_of {
            let native = range_ok(n, Num::F(factor));
            if !native {
                s.err(|| plain(range_msg(n, "MultipleOf", &name())));
            }
            let value = if native { v } else { Num::F(v.as_f64()) };
            match value {
                Num::I(i) => {
                    let f = go_f64_to_i64(factor);
                    if f <= 0 {
                        s.err(|| multiple_positive(name(), Num::I(f)));
                    } else if (i / f).wrapping_mul(f) != i {
                        s.err(|| not_multiple(name(), Num::I(f), value));
                    }
                }
                Num::F(x) => {
                    if factor <= 0.0 {
                        s.err(|| multiple_positive(name(), Num::F(factor)));
                    } else {
                        let mult = if factor < 1.0 {
                            1.0 / factor * x
                        } else {
                            x / factor
                        };
                        if !is_json_integer(mult) {
                            s.err(|| not_multiple(name(), Num::F(factor), value));
                        }
                    }
                }
            }
        }
        if let Some(max) = n.maximum {
            self.bound(n, v, max, n.exclusive_maximum, true, p, s);
        }
        if let Some(min) = n.minimum {
            self.bound(n, v, min, n.exclusive_minimum, false, p, s);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn bound(
        &self,
        n: &Node,
        v: Num,
        bound: f64,
        exclusive: bool,
        is_max: bool,
        p: &Seg,
        s: &mut Sink,
    ) {
        let prefix = if is_max {
            "Maximum boundary"
        } else {
            "Minimum boundary"
        };
        let native = range_ok(n, Num::F(bound));
        if !native {
            s.err(|| plain(range_msg(n, prefix, &p.render())));
        }
        let (fails, shown_bound, value) = match (native, v) {
            (true, Num::I(i)) => {
                let b = go_f64_to_i64(bound);
                let fails = if is_max {
                    if exclusive { i >= b } else { i > b }
                } else if exclusive {
                    i <= b
                } else {
                    i < b
                };
                (fails, Num::I(b), v)
            }
            _ => {
                let x = v.as_f64();
                let fails = if is_max {
                    if exclusive { x >= bound } else { x > bound }
                } else if exclusive {
                    x <= bound
                } else {
                    x < bound
                };
                (fails, Num::F(bound), Num::F(x))
            }
        };
        if !fails {
            return;
        }
        s.err(|| {
            let name = p.render();
            let rel = match (is_max, exclusive) {
                (true, false) => "less than or equal to",
                (true, true) => "less than",
                (false, false) => "greater than or equal to",
                (false, true) => "greater than",
            };
            let msg = format!("{name} in body should be {rel} {}", shown_bound.v());
            invalid(name, msg, value.bad_value())
        });
    }

    /// The slice validator; returns its match count.
    fn check_array(&self, n: &Node, items: &[Value], p: &Seg, s: &mut Sink) -> u32 {
        let mut mc = 0;
        if let Some(it) = n.items {
            for (i, item) in items.iter().enumerate() {
                mc += self.node(it, item, &Seg::Index(p, i), s);
            }
        }
        let size = items.len() as i64;
        if let Some(min) = n.min_items
            && size < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should have at least {min} items");
                invalid(name, msg, BadValue::Int(size))
            });
        }
        if let Some(max) = n.max_items
            && size > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should have at most {max} items"),
                    name,
                    conv: Conv::TooMany(size, max),
                }
            });
        }
        if n.unique_items && has_duplicates(items) {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body shouldn't contain duplicates");
                invalid(name, msg, BadValue::Str(String::new()))
            });
        }
        mc + 1
    }

    /// The object validator; returns the match count of the properties.
    fn check_object(&self, n: &Node, map: &Map<String, Value>, p: &Seg, s: &mut Sink) -> u32 {
        let size = map.len() as i64;
        if let Some(min) = n.min_properties
            && size < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should have at least {min} properties");
                invalid(name, msg, BadValue::Int(size))
            });
            return 0;
        }
        if let Some(max) = n.max_properties
            && size > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should have at most {max} properties"),
                    name,
                    conv: Conv::TooMany(size, max),
                }
            });
            return 0;
        }
        let mut mc = 0;
        let has_patterns = !n.pattern_properties.is_empty();
        match n.additional {
            Additional::Forbidden => {
                for key in map.keys() {
                    if n.property(key).is_none() && !self.matches_pattern(n, key) {
                        s.err(|| {
                            let name = p.render();
                            let msg = format!("{name}.{key} in body is a forbidden property");
                            invalid(name, msg, BadValue::Str(key.clone()))
                        });
                    }
                }
            }
            Additional::Allowed | Additional::Schema(_) => {
                for (key, value) in map {
                    let regular = n.property(key).is_some();
                    let mut matched = false;
                    if has_patterns {
                        let (m, c) = self.pattern_props(n, key, value, p, s);
                        matched = m;
                        mc += c;
                    }
                    if !regular
                        && !matched
                        && let Additional::Schema(a) = n.additional
                    {
                        mc += self.node(a, value, &Seg::Key(p, key), s);
                    }
                }
            }
        }
        if n.properties.len() <= map.len() {
            for (name, pid) in n.properties.iter() {
                if let Some(value) = map.get(&**name) {
                    mc += self.node(*pid, value, &Seg::Prop(p, name), s);
                }
            }
        } else {
            for (key, value) in map {
                if let Some(pid) = n.property(key) {
                    mc += self.node(pid, value, &Seg::Prop(p, key), s);
                }
            }
        }
        for r in n.required.iter() {
            if !map.contains_key(&**r) {
                s.err(|| {
                    let name = format!("{}.{r}", p.render());
                    OErr {
                        msg: format!("{name} in body is required"),
                        name,
                        conv: Conv::Required,
                    }
                });
            }
        }
        if has_patterns {
            for (key, value) in map {
                let regular = n.property(key).is_some();
                let (matched, c) = self.pattern_props(n, key, value, p, s);
                mc += c;
                if !regular && matched {
                    for (re, pid) in n.pattern_properties.iter() {
                        if re.as_ref().is_some_and(|re| re.is_match(key)) {
                            mc += self.node(*pid, value, &Seg::Key(p, key), s);
                        }
                    }
                }
            }
        }
        mc
    }

    fn matches_pattern(&self, n: &Node, key: &str) -> bool {
        n.pattern_properties
            .iter()
            .any(|(re, _)| re.as_ref().is_some_and(|re| re.is_match(key)))
    }

    /// `validatePatternProperty`: validates the value against every matching pattern schema.
    fn pattern_props(
        &self,
        n: &Node,
        key: &str,
        value: &Value,
        p: &Seg,
        s: &mut Sink,
    ) -> (bool, u32) {
        let mut matched = false;
        let mut mc = 0;
        for (re, pid) in n.pattern_properties.iter() {
            if re.as_ref().is_some_and(|re| re.is_match(key)) {
                matched = true;
                mc += self.node(*pid, value, &Seg::Key(p, key), s);
            }
        }
        (matched, mc)
    }

    /// Validates `v` against `id` in counting mode: (match count, error count).
    fn probe(&self, id: NodeId, v: &Value, p: &Seg) -> (u32, usize) {
        let mut sink = Sink::counting();
        let mc = self.node(id, v, p, &mut sink);
        (mc, sink.count)
    }

    /// Merges the result of a branch chosen after probing: re-run it when recording.
    fn merge_branch(
        &self,
        id: NodeId,
        v: &Value,
        p: &Seg,
        s: &mut Sink,
        probed: (u32, usize),
    ) -> u32 {
        if s.record {
            self.node(id, v, p, s)
        } else {
            s.count += probed.1;
            probed.0
        }
    }

    /// The schema-props validator (allOf, anyOf, oneOf, not, dependencies); returns its
    /// match count.
    fn junctors(&self, n: &Node, v: &Value, p: &Seg, s: &mut Sink) -> u32 {
        let mut mc = 0;
        if !n.any_of.is_empty() {
            let mut best: Option<(NodeId, (u32, usize))> = None;
            let mut success: Option<u32> = None;
            for &b in n.any_of.iter() {
                let r = self.probe(b, v, p);
                if r.1 == 0 {
                    success = Some(r.0);
                    break;
                }
                if best.is_none_or(|(_, (bmc, _))| r.0 > bmc) {
                    best = Some((b, r));
                }
            }
            match success {
                Some(smc) => mc += smc,
                None => {
                    s.err(|| {
                        plain(format!(
                            "{} must validate at least one schema (anyOf)",
                            gofmt::quote(&p.render())
                        ))
                    });
                    if let Some((b, r)) = best {
                        mc += self.merge_branch(b, v, p, s, r);
                    }
                }
            }
        }
        if !n.one_of.is_empty() {
            let mut best: Option<(NodeId, (u32, usize))> = None;
            let mut first_success: Option<u32> = None;
            let mut validated = 0usize;
            for &b in n.one_of.iter() {
                let r = self.probe(b, v, p);
                if r.1 == 0 {
                    validated += 1;
                    best = None;
                    first_success.get_or_insert(r.0);
                    continue;
                }
                if validated == 0 && best.is_none_or(|(_, (bmc, _))| r.0 > bmc) {
                    best = Some((b, r));
                }
            }
            if validated != 1 {
                let extra = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                s.err(|| {
                    plain(format!(
                        "{} must validate one and only one schema (oneOf). {extra}",
                        gofmt::quote(&p.render())
                    ))
                });
                if let Some((b, r)) = best {
                    mc += self.merge_branch(b, v, p, s, r);
                }
            } else if let Some(smc) = first_success {
                mc += smc;
            }
        }
        if !n.all_of.is_empty() {
            let mut validated = 0;
            for &b in n.all_of.iter() {
                let before = s.count;
                mc += self.node(b, v, p, s);
                if s.count == before {
                    validated += 1;
                }
            }
            if validated != n.all_of.len() {
                let extra = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                s.err(|| {
                    plain(format!(
                        "{} must validate all the schemas (allOf){extra}",
                        gofmt::quote(&p.render())
                    ))
                });
            }
        }
        if let Some(not) = n.not
            && self.probe(not, v, p).1 == 0
        {
            s.err(|| {
                plain(format!(
                    "{} must not validate the schema (not)",
                    gofmt::quote(&p.render())
                ))
            });
        }
        if !n.dependencies.is_empty()
            && let Value::Object(map) = v
        {
            for key in map.keys() {
                let Some((_, dep)) = n.dependencies.iter().find(|(k, _)| **k == **key) else {
                    continue;
                };
                match dep {
                    Dep::Schema(d) => mc += self.node(*d, v, &Seg::Key(p, key), s),
                    Dep::Names(names) => {
                        for dk in names.iter() {
                            if !map.contains_key(&**dk) {
                                s.err(|| {
                                    plain(format!(
                                        "{} has a dependency on {dk}",
                                        gofmt::quote(&p.render())
                                    ))
                                });
                            }
                        }
                    }
                }
            }
        }
        mc + 1
    }
}

fn enum_error(name: String, v: &Value, values: &[Value]) -> OErr {
    let mut listed = String::from("[");
    for (i, e) in values.iter().enumerate() {
        if i > 0 {
            listed.push(' ');
        }
        gofmt::value_v(e, &mut listed);
    }
    listed.push(']');
    let msg = format!("{name} in body should be one of {listed}");
    let supported = values
        .iter()
        .map(|e| match e {
            Value::String(s) => s.clone(),
            other => gofmt::json(other),
        })
        .collect();
    OErr {
        name,
        msg,
        conv: Conv::NotSupported(bad_value_of(v), supported),
    }
}

fn multiple_positive(name: String, factor: Num) -> OErr {
    let msg = format!(
        "factor MultipleOf declared for {name} must be positive: {}",
        factor.v()
    );
    invalid(name, msg, factor.bad_value())
}

fn not_multiple(name: String, factor: Num, value: Num) -> OErr {
    let msg = format!("{name} in body should be a multiple of {}", factor.v());
    invalid(name, msg, value.bad_value())
}

fn has_duplicates(items: &[Value]) -> bool {
    for (i, a) in items.iter().enumerate() {
        if items[..i].iter().any(|b| deep_equal(a, b)) {
            return true;
        }
    }
    false
}

/// `kubeOpenAPIResultToFieldErrors` for one error.
fn convert(e: OErr, base: &Path) -> Cause {
    if let Conv::Plain = e.conv {
        return Cause::invalid(base.clone(), BadValue::Str(String::new()), e.msg);
    }
    let field = if !e.name.is_empty() && e.name != "." {
        base.child(e.name.strip_prefix('.').unwrap_or(&e.name))
    } else {
        base.clone()
    };
    match e.conv {
        Conv::Required => Cause::required(field, ""),
        Conv::NotSupported(value, supported) => Cause::not_supported(field, value, &supported),
        Conv::TooLong(value, max) => Cause::too_long(field, value, max),
        Conv::TooMany(actual, max) => Cause::too_many(field, actual, max),
        Conv::TypeInvalid(value) => Cause::new(ErrorType::TypeInvalid, field, value, e.msg),
        Conv::Invalid(value) => Cause::invalid(field, value, e.msg),
        Conv::Plain => unreachable!(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, v: Value) -> Vec<String> {
        let p = Props::from_value("s", &schema).unwrap();
        let sv = SchemaValidator::new(&p);
        let mut out = Vec::new();
        sv.validate(&v, &mut out);
        assert_eq!(sv.is_valid(&v), out.is_empty());
        out.iter().map(|c| c.message()).collect()
    }

    #[test]
    fn type_errors_do_not_short_circuit() {
        let s = json!({"type": "object", "properties": {"e": {"type": "integer", "enum": [1, 2]}}});
        let mut got = run(s, json!({"e": "1"}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"e: Invalid value: "string": e in body must be of type integer: "string""#,
                r#"e: Unsupported value: "1": supported values: "1", "2""#,
            ]
        );
    }

    #[test]
    fn required_and_paths() {
        let s = json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["name"],
              "properties": {"name": {"type": "string", "maxLength": 2}}}},
              "labels": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[a-z]*$"}}}}}});
        assert_eq!(run(s.clone(), json!({})), vec!["spec: Required value"]);
        let mut got = run(
            s,
            json!({"spec": {"items": [{"name": "abc"}, {}], "labels": {"x.y/z": "UP"}}}),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                "spec.items[0].name: Too long: may not be more than 2 bytes",
                "spec.items[1].name: Required value",
                r#"spec.labels.x.y/z: Invalid value: "UP": spec.labels.x.y/z in body should match '^[a-z]*$'"#,
            ]
        );
    }

    #[test]
    fn numbers_follow_go() {
        let s = json!({"properties": {"i": {"type": "integer", "multipleOf": 2.5},
            "n": {"type": "number", "multipleOf": 0.1}, "b": {"type": "integer", "maximum": 9007199254740993u64}}});
        let mut got = run(s.clone(), json!({"i": 6, "n": 3, "b": 9007199254740993u64}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"<nil>: Invalid value: "": MultipleOf value must be of type integer (default format) in i"#,
                "b: Invalid value: 9007199254740993: b in body should be less than or equal to 9007199254740992",
                "i: Invalid value: 6: i in body should be a multiple of 2.5",
                "n: Invalid value: 0: factor MultipleOf declared for n must be positive: 0",
            ]
        );
        assert!(run(s, json!({"n": 0.3})).is_empty());
    }

    #[test]
    fn any_of_keeps_best_branch() {
        let s = json!({"properties": {"a": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        let mut got = run(s, json!({"a": 1.5}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"<nil>: Invalid value: "": "a" must validate at least one schema (anyOf)"#,
                r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in a"#,
                r#"a: Invalid value: "number": a in body must be of type integer,string: "number""#,
                r#"a: Invalid value: "number": a in body must be of type integer: "number""#,
            ]
        );
    }

    #[test]
    fn validate_at_uses_empty_names() {
        let p = Props::from_value("s", &json!({"type": "string", "minLength": 3})).unwrap();
        let sv = SchemaValidator::new(&p);
        let mut out = Vec::new();
        sv.validate_at(&json!("a"), &Path::new("spec").child("default"), &mut out);
        assert_eq!(
            out[0].message(),
            r#"spec.default: Invalid value: "a":  in body should be at least 3 chars long"#
        );
    }

    #[test]
    fn nulls_and_enums() {
        let s = json!({"properties": {"l": {"type": "array", "items": {"type": "string"}},
            "e": {"type": "string", "nullable": true, "enum": ["x", null]}}});
        let mut got = run(s, json!({"l": ["a", null], "e": null}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"e: Unsupported value: null: supported values: "x", "null""#,
                r#"l[1]: Invalid value: "null": l[1] in body must be of type string: "null""#,
            ]
        );
    }

    fn run_fmt(schema: Value, v: Value) -> Vec<String> {
        let p = Props::from_value("s", &schema).unwrap();
        let sv =
            SchemaValidator::with_formats(&p, |f| f == "ipv4", |_, s| s.split('.').count() == 4);
        let mut out = Vec::new();
        sv.validate(&v, &mut out);
        let mut got: Vec<String> = out.iter().map(|c| c.message()).collect();
        got.sort();
        got
    }

    #[test]
    fn formats_on_other_kinds() {
        let s = json!({"properties": {"ip": {"type": "string", "format": "ipv4"}}});
        assert_eq!(
            run_fmt(s.clone(), json!({"ip": 5})),
            vec![r#"ip: Invalid value: "int64": ip in body must be of type ipv4: "int64""#]
        );
        assert_eq!(
            run_fmt(s.clone(), json!({"ip": true})),
            vec![r#"ip: Invalid value: "": ip in body must be of type ipv4: """#]
        );
        // Strings and arrays skip the type check when a string format is set.
        assert!(run_fmt(s.clone(), json!({"ip": ["x"]})).is_empty());
        assert_eq!(
            run_fmt(s, json!({"ip": "1.2.3"})),
            vec![r#"ip: Invalid value: "1.2.3": ip in body must be of type ipv4: "1.2.3""#]
        );
        // Unsupported formats are stripped: a plain type error.
        let s = json!({"properties": {"x": {"type": "string", "format": "nope"}}});
        assert_eq!(
            run_fmt(s, json!({"x": 5})),
            vec![r#"x: Invalid value: "integer": x in body must be of type string: "integer""#]
        );
    }

    #[test]
    fn integer_formats_and_ranges() {
        let s = json!({"properties": {"i": {"type": "integer", "format": "int32", "maximum": 3000000000u64}}});
        assert_eq!(
            run(s, json!({"i": 2147483648u64})),
            vec![
                r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in i"#,
                r#"<nil>: Invalid value: "": Maximum boundary value must be of type integer with format int32 in i"#,
            ]
        );
        let s = json!({"properties": {"f": {"type": "number", "format": "float"}}});
        assert_eq!(
            run(s, json!({"f": 1e39})),
            vec![
                r#"<nil>: Invalid value: "": Checked value must be of type number with format float in f"#
            ]
        );
    }

    #[test]
    fn object_keywords() {
        let s = json!({"type": "object", "required": ["a"], "minProperties": 2,
            "properties": {"a": {"type": "string"}}, "additionalProperties": false});
        // min/maxProperties failures stop the object validator (no required check).
        assert_eq!(
            run(s.clone(), json!({"b": 1})),
            vec![r#"<nil>: Invalid value: 1:  in body should have at least 2 properties"#]
        );
        let mut got = run(s, json!({"b": 1, "c": 2}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"<nil>: Invalid value: "b": .b in body is a forbidden property"#,
                r#"<nil>: Invalid value: "c": .c in body is a forbidden property"#,
                "a: Required value",
            ]
        );
    }

    #[test]
    fn one_of_and_not() {
        let s = json!({"properties": {"x": {"oneOf": [{"type": "string"}, {"minLength": 1}]},
            "y": {"not": {"type": "string"}}}});
        let mut got = run(s, json!({"x": "a", "y": "b"}));
        got.sort();
        assert_eq!(
            got,
            vec![
                r#"<nil>: Invalid value: "": "x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#,
                r#"<nil>: Invalid value: "": "y" must not validate the schema (not)"#,
            ]
        );
    }

    #[test]
    fn enum_conversions_follow_reflect() {
        let s = json!({"properties": {"e": {"enum": ["1"]}, "f": {"enum": [1]}}});
        // int64 49 converts to the string "1"; float64 1.5 converts to the int64 1.
        assert!(run(s.clone(), json!({"e": 49, "f": 1.5})).is_empty());
        assert_eq!(
            run(s, json!({"e": 1})),
            vec![r#"e: Unsupported value: 1: supported values: "1""#]
        );
    }

    #[test]
    fn deep_values_do_not_overflow() {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                let mut schema = json!({"type": "string"});
                let mut v = json!(1);
                for _ in 0..200 {
                    schema = json!({"type": "object", "properties": {"a": schema}});
                    v = json!({ "a": v });
                }
                let got = run(schema, v);
                assert_eq!(got.len(), 1);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
