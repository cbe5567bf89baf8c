//! The raw OpenAPI v3 schema of a CRD version (`JSONSchemaProps`), decoded from JSON the way
//! the API server decodes it: every keyword typed, unknown keys ignored.
//!
//! - [`new_structural`]: whether the schema converts into the API server's structural form.

pub mod new_structural;

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A value that is either a schema or a boolean (`additionalProperties`, `additionalItems`).
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaOrBool {
    Bool(bool),
    Schema(Box<Props>),
}

impl SchemaOrBool {
    /// Whether additional values are allowed (`true` or a schema).
    pub fn allows(&self) -> bool {
        !matches!(self, SchemaOrBool::Bool(false))
    }
    pub fn schema(&self) -> Option<&Props> {
        match self {
            SchemaOrBool::Schema(s) => Some(s),
            SchemaOrBool::Bool(_) => None,
        }
    }
}

/// `items`: one schema, or (unsupported) an array of schemas.
#[derive(Clone, Debug, PartialEq)]
pub enum Items {
    Schema(Box<Props>),
    Array(Vec<Props>),
}

/// A `dependencies` entry: a schema or a list of property names.
#[derive(Clone, Debug, PartialEq)]
pub enum Dependency {
    Schema(Box<Props>),
    Names(Vec<String>),
}

/// One `x-kubernetes-validations` rule.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ValidationRule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

/// `JSONSchemaProps`. Optional keywords are `Option`s so that "absent" and "zero" differ as
/// they do upstream (pointers there).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Props {
    pub id: String,
    pub schema: String,
    pub reference: Option<String>,
    pub description: String,
    pub type_: String,
    pub format: String,
    pub title: String,
    pub default: Option<Value>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: String,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub multiple_of: Option<f64>,
    pub enum_: Vec<Value>,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub items: Option<Items>,
    pub all_of: Vec<Props>,
    pub one_of: Vec<Props>,
    pub any_of: Vec<Props>,
    pub not: Option<Box<Props>>,
    pub properties: BTreeMap<String, Box<Props>>,
    pub additional_properties: Option<SchemaOrBool>,
    pub pattern_properties: BTreeMap<String, Props>,
    pub dependencies: BTreeMap<String, Dependency>,
    pub additional_items: Option<SchemaOrBool>,
    pub definitions: BTreeMap<String, Props>,
    pub external_docs: Option<Value>,
    pub example: Option<Value>,
    pub nullable: bool,
    pub x_preserve_unknown_fields: Option<bool>,
    pub x_embedded_resource: bool,
    pub x_int_or_string: bool,
    pub x_list_map_keys: Vec<String>,
    pub x_list_type: Option<String>,
    pub x_map_type: Option<String>,
    pub x_validations: Vec<ValidationRule>,
}

/// A schema that cannot be decoded into `JSONSchemaProps` (the API server refuses the
/// whole request): the JSON path inside the schema and what was wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DecodeError {
    pub path: String,
    pub message: String,
}

/// Deepest schema nesting accepted; deeper schemas are refused with a decode error instead
/// of exhausting the stack.
pub const MAX_SCHEMA_DEPTH: usize = 256;

/// Most schemas (nodes) one schema may hold. kube-apiserver takes requests of up to 3 MiB,
/// and a schema takes at least 7 bytes of JSON (`"a":{},`), so no CRD it stores comes near;
/// the bound keeps a runaway input from taking all memory (a decoded schema takes about a
/// kilobyte).
pub const MAX_SCHEMA_NODES: usize = 500_000;

struct Decoder {
    depth: usize,
    nodes: usize,
}

fn err(path: &str, key: &str, want: &str, got: &Value) -> DecodeError {
    DecodeError {
        path: format!("{path}.{key}"),
        message: format!(
            "cannot unmarshal {} into a field of type {want}",
            crate::go::json::json_kind(got)
        ),
    }
}

/// The decoder takes the values it decodes: strings and nested values are moved, not
/// copied, and each part of the input is freed as soon as it is decoded.
impl Decoder {
    fn string(&self, path: &str, key: &str, v: Value) -> Result<String, DecodeError> {
        match v {
            Value::String(s) => Ok(s),
            Value::Null => Ok(String::new()),
            other => Err(err(path, key, "string", &other)),
        }
    }

    fn opt_string(&self, path: &str, key: &str, v: Value) -> Result<Option<String>, DecodeError> {
        match v {
            Value::Null => Ok(None),
            _ => self.string(path, key, v).map(Some),
        }
    }

    fn boolean(&self, path: &str, key: &str, v: Value) -> Result<bool, DecodeError> {
        match v {
            Value::Bool(b) => Ok(b),
            Value::Null => Ok(false),
            other => Err(err(path, key, "bool", &other)),
        }
    }

    fn opt_bool(&self, path: &str, key: &str, v: Value) -> Result<Option<bool>, DecodeError> {
        match v {
            Value::Null => Ok(None),
            _ => self.boolean(path, key, v).map(Some),
        }
    }

    fn float(&self, path: &str, key: &str, v: Value) -> Result<Option<f64>, DecodeError> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) => Ok(n.as_f64()),
            other => Err(err(path, key, "float64", &other)),
        }
    }

    fn int(&self, path: &str, key: &str, v: Value) -> Result<Option<i64>, DecodeError> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(Some(i)),
                None => Err(DecodeError {
                    path: format!("{path}.{key}"),
                    message: format!("cannot unmarshal number {n} into a field of type int64"),
                }),
            },
            other => Err(err(path, key, "int64", &other)),
        }
    }

    fn strings(&self, path: &str, key: &str, v: Value) -> Result<Vec<String>, DecodeError> {
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .into_iter()
                .map(|i| self.string(path, key, i))
                .collect(),
            other => Err(err(path, key, "[]string", &other)),
        }
    }

    fn schema_list(&mut self, path: &str, key: &str, v: Value) -> Result<Vec<Props>, DecodeError> {
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| self.props(&format!("{path}.{key}[{i}]"), item))
                .collect(),
            other => Err(err(path, key, "[]JSONSchemaProps", &other)),
        }
    }

    fn schema_map(
        &mut self,
        path: &str,
        key: &str,
        v: Value,
    ) -> Result<BTreeMap<String, Props>, DecodeError> {
        match v {
            Value::Null => Ok(BTreeMap::new()),
            Value::Object(map) => {
                let mut out = BTreeMap::new();
                for (k, item) in map {
                    let p = self.props(&format!("{path}.{key}[{k}]"), item)?;
                    out.insert(k, p);
                }
                Ok(out)
            }
            other => Err(err(path, key, "map[string]JSONSchemaProps", &other)),
        }
    }

    /// `properties`: as [`Decoder::schema_map`], each schema boxed (most of a large schema
    /// is properties; boxed, the map's nodes hold pointers, not whole schemas).
    fn property_map(
        &mut self,
        path: &str,
        key: &str,
        v: Value,
    ) -> Result<BTreeMap<String, Box<Props>>, DecodeError> {
        match v {
            Value::Null => Ok(BTreeMap::new()),
            Value::Object(map) => {
                let mut out = BTreeMap::new();
                for (k, item) in map {
                    let p = self.props(&format!("{path}.{key}[{k}]"), item)?;
                    out.insert(k, Box::new(p));
                }
                Ok(out)
            }
            other => Err(err(path, key, "map[string]JSONSchemaProps", &other)),
        }
    }

    fn schema_or_bool(
        &mut self,
        path: &str,
        key: &str,
        v: Value,
    ) -> Result<Option<SchemaOrBool>, DecodeError> {
        match v {
            Value::Null => Ok(None),
            Value::Bool(b) => Ok(Some(SchemaOrBool::Bool(b))),
            Value::Object(_) => Ok(Some(SchemaOrBool::Schema(Box::new(
                self.props(&format!("{path}.{key}"), v)?,
            )))),
            other => Err(err(path, key, "JSONSchemaPropsOrBool", &other)),
        }
    }

    fn validations(&self, path: &str, v: Value) -> Result<Vec<ValidationRule>, DecodeError> {
        let key = "x-kubernetes-validations";
        let items = match v {
            Value::Null => return Ok(Vec::new()),
            Value::Array(items) => items,
            other => return Err(err(path, key, "ValidationRules", &other)),
        };
        let mut rules = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let p = format!("{path}.{key}[{i}]");
            let Value::Object(m) = item else {
                return Err(err(&p, "", "ValidationRule", &item));
            };
            let mut r = ValidationRule::default();
            for (k, v) in m {
                match k.as_str() {
                    "rule" => r.rule = self.string(&p, &k, v)?,
                    "message" => r.message = self.string(&p, &k, v)?,
                    "messageExpression" => r.message_expression = self.string(&p, &k, v)?,
                    "reason" => r.reason = self.opt_string(&p, &k, v)?,
                    "fieldPath" => r.field_path = self.string(&p, &k, v)?,
                    "optionalOldSelf" => r.optional_old_self = self.opt_bool(&p, &k, v)?,
                    _ => {}
                }
            }
            rules.push(r);
        }
        Ok(rules)
    }

    fn props(&mut self, path: &str, v: Value) -> Result<Props, DecodeError> {
        let map: Map<String, Value> = match v {
            Value::Object(m) => m,
            Value::Null => return Ok(Props::default()),
            other => {
                return Err(DecodeError {
                    path: path.to_string(),
                    message: format!(
                        "cannot unmarshal {} into a value of type JSONSchemaProps",
                        crate::go::json::json_kind(&other)
                    ),
                });
            }
        };
        self.depth += 1;
        if self.depth > MAX_SCHEMA_DEPTH {
            return Err(DecodeError {
                path: path.to_string(),
                message: format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            });
        }
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(DecodeError {
                path: path.to_string(),
                message: format!(
                    "schema of more than {MAX_SCHEMA_NODES} schemas (kube-apiserver accepts requests of up to 3 MiB, which hold far fewer)"
                ),
            });
        }
        let mut p = Props::default();
        for (k, v) in map {
            let key = k.as_str();
            match key {
                "id" => p.id = self.string(path, key, v)?,
                "$schema" => p.schema = self.string(path, key, v)?,
                "$ref" => p.reference = self.opt_string(path, key, v)?,
                "description" => p.description = self.string(path, key, v)?,
                "type" => p.type_ = self.string(path, key, v)?,
                "format" => p.format = self.string(path, key, v)?,
                "title" => p.title = self.string(path, key, v)?,
                "default" => p.default = (!v.is_null()).then_some(v),
                "maximum" => p.maximum = self.float(path, key, v)?,
                "exclusiveMaximum" => p.exclusive_maximum = self.boolean(path, key, v)?,
                "minimum" => p.minimum = self.float(path, key, v)?,
                "exclusiveMinimum" => p.exclusive_minimum = self.boolean(path, key, v)?,
                "maxLength" => p.max_length = self.int(path, key, v)?,
                "minLength" => p.min_length = self.int(path, key, v)?,
                "pattern" => p.pattern = self.string(path, key, v)?,
                "maxItems" => p.max_items = self.int(path, key, v)?,
                "minItems" => p.min_items = self.int(path, key, v)?,
                "uniqueItems" => p.unique_items = self.boolean(path, key, v)?,
                "multipleOf" => p.multiple_of = self.float(path, key, v)?,
                "enum" => match v {
                    Value::Null => {}
                    Value::Array(items) => p.enum_ = items,
                    other => return Err(err(path, key, "[]JSON", &other)),
                },
                "maxProperties" => p.max_properties = self.int(path, key, v)?,
                "minProperties" => p.min_properties = self.int(path, key, v)?,
                "required" => p.required = self.strings(path, key, v)?,
                "items" => {
                    p.items = match v {
                        Value::Null => None,
                        Value::Array(_) => Some(Items::Array(self.schema_list(path, key, v)?)),
                        _ => Some(Items::Schema(Box::new(
                            self.props(&format!("{path}.{key}"), v)?,
                        ))),
                    }
                }
                "allOf" => p.all_of = self.schema_list(path, key, v)?,
                "oneOf" => p.one_of = self.schema_list(path, key, v)?,
                "anyOf" => p.any_of = self.schema_list(path, key, v)?,
                "not" if !v.is_null() => {
                    p.not = Some(Box::new(self.props(&format!("{path}.not"), v)?));
                }
                "properties" => p.properties = self.property_map(path, key, v)?,
                "additionalProperties" => {
                    p.additional_properties = self.schema_or_bool(path, key, v)?
                }
                "patternProperties" => p.pattern_properties = self.schema_map(path, key, v)?,
                "additionalItems" => p.additional_items = self.schema_or_bool(path, key, v)?,
                "definitions" => p.definitions = self.schema_map(path, key, v)?,
                "dependencies" => match v {
                    Value::Null => {}
                    Value::Object(m) => {
                        for (name, d) in m {
                            let dep = match d {
                                Value::Array(_) => Dependency::Names(self.strings(path, key, d)?),
                                _ => Dependency::Schema(Box::new(
                                    self.props(&format!("{path}.dependencies[{name}]"), d)?,
                                )),
                            };
                            p.dependencies.insert(name, dep);
                        }
                    }
                    other => return Err(err(path, key, "JSONSchemaDependencies", &other)),
                },
                "externalDocs" => p.external_docs = (!v.is_null()).then_some(v),
                "example" => p.example = (!v.is_null()).then_some(v),
                "nullable" => p.nullable = self.boolean(path, key, v)?,
                "x-kubernetes-preserve-unknown-fields" => {
                    p.x_preserve_unknown_fields = self.opt_bool(path, key, v)?
                }
                "x-kubernetes-embedded-resource" => {
                    p.x_embedded_resource = self.boolean(path, key, v)?
                }
                "x-kubernetes-int-or-string" => p.x_int_or_string = self.boolean(path, key, v)?,
                "x-kubernetes-list-map-keys" => p.x_list_map_keys = self.strings(path, key, v)?,
                "x-kubernetes-list-type" => p.x_list_type = self.opt_string(path, key, v)?,
                "x-kubernetes-map-type" => p.x_map_type = self.opt_string(path, key, v)?,
                "x-kubernetes-validations" => p.x_validations = self.validations(path, v)?,
                _ => crate::load::drop_value(v),
            }
        }
        self.depth -= 1;
        Ok(p)
    }
}

impl Props {
    /// Decodes a schema from its JSON form. `path` names the schema in errors.
    pub fn from_value(path: &str, v: &Value) -> Result<Props, DecodeError> {
        Props::from_owned(path, v.clone())
    }

    /// [`Props::from_value`], taking the JSON form: its parts are moved into the schema or
    /// freed as they are decoded, so that decoding a large schema does not need room for
    /// both forms.
    pub fn from_owned(path: &str, v: Value) -> Result<Props, DecodeError> {
        Decoder { depth: 0, nodes: 0 }.props(path, v)
    }

    /// The single `items` schema, if `items` is a schema.
    pub fn items_schema(&self) -> Option<&Props> {
        match &self.items {
            Some(Items::Schema(s)) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_keywords() {
        let v = json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": 3}},
            "additionalProperties": false, "x-kubernetes-list-type": "map",
            "x-kubernetes-validations": [{"rule": "self.a > 1", "reason": "FieldValueForbidden"}]});
        let p = Props::from_value("s", &v).unwrap();
        assert_eq!(p.type_, "object");
        assert_eq!(p.properties["a"].maximum, Some(3.0));
        assert_eq!(p.additional_properties, Some(SchemaOrBool::Bool(false)));
        assert_eq!(
            p.x_validations[0].reason.as_deref(),
            Some("FieldValueForbidden")
        );
    }

    #[test]
    fn wrong_types_are_decode_errors() {
        let e = Props::from_value("s", &json!({"properties": {"a": {"type": 5}}})).unwrap_err();
        assert_eq!(e.path, "s.properties[a].type");
        let e = Props::from_value("s", &json!({"maxLength": 1.5})).unwrap_err();
        assert!(e.message.contains("int64"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        // Debug builds use large frames; the CLI runs the engine on a big stack too.
        std::thread::Builder::new()
            .stack_size(32 << 20)
            .spawn(deep_nesting)
            .unwrap()
            .join()
            .unwrap();
    }

    fn deep_nesting() {
        let mut v = json!({"type": "string"});
        for _ in 0..5000 {
            v = json!({"type": "object", "properties": {"a": v}});
        }
        let e = Props::from_value("s", &v).unwrap_err();
        assert!(e.message.contains("nested deeper"), "{e}");
        // dropping a deeply nested Value must not overflow either
        drop_deep(v);
    }

    fn drop_deep(v: Value) {
        crate::load::drop_value(v);
    }
}
