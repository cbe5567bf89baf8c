//! Compile-time checks of a CEL expression against the schema, as far as cel-go's type
//! checker decides them for CRD rules: undeclared references, undefined fields of typed
//! objects, arithmetic and `join` overloads that cannot match, literal regular expressions
//! that do not compile, and the expression's result type. Where the types are not known
//! (`dyn`), nothing is reported, as cel-go defers those to run time.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::types::{DeclTypes, Kind, TypeId, unescape_field};
use crate::validate::goregex;

/// A (simplified) CEL type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Object(TypeId),
    Type,
    Optional(Box<Ty>),
    Opaque(&'static str),
}

impl Ty {
    /// cel-go's rendering in overload errors.
    pub fn name(&self) -> String {
        match self {
            Ty::Dyn => "dyn".into(),
            Ty::Null => "null_type".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Uint => "uint".into(),
            Ty::Double => "double".into(),
            Ty::String => "string".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Duration => "google.protobuf.Duration".into(),
            Ty::Timestamp => "google.protobuf.Timestamp".into(),
            Ty::List(e) => format!("list({})", e.name()),
            Ty::Map(k, v) => format!("map({}, {})", k.name(), v.name()),
            Ty::Object(_) => "object".into(),
            Ty::Type => "type".into(),
            Ty::Optional(t) => format!("optional_type({})", t.name()),
            Ty::Opaque(n) => (*n).into(),
        }
    }

    fn is_dyn(&self) -> bool {
        matches!(self, Ty::Dyn)
    }
}

/// The type CEL gives a schema node.
pub fn of_node(types: &DeclTypes, t: TypeId) -> Ty {
    let n = types.node(t);
    match n.kind {
        Kind::Object => Ty::Object(t),
        Kind::Map => Ty::Map(
            Box::new(Ty::String),
            Box::new(n.elem.map_or(Ty::Dyn, |e| of_node(types, e))),
        ),
        Kind::List => Ty::List(Box::new(n.elem.map_or(Ty::Dyn, |e| of_node(types, e)))),
        Kind::String => Ty::String,
        Kind::Int => Ty::Int,
        Kind::Double => Ty::Double,
        Kind::Bool => Ty::Bool,
        Kind::IntOrString | Kind::Any => Ty::Dyn,
        Kind::Bytes => Ty::Bytes,
        Kind::Duration => Ty::Duration,
        Kind::Timestamp => Ty::Timestamp,
    }
}

/// A compile error: byte offset and message.
#[derive(Debug, PartialEq)]
pub struct CheckError {
    pub offset: usize,
    pub message: String,
}

struct Checker<'t> {
    types: &'t DeclTypes,
    scope: Vec<(String, Ty)>,
    errors: Vec<CheckError>,
}

/// Checks an expression where `self` (and, when given, `oldSelf`) have the given types;
/// returns the result type, or the errors.
pub fn check(expr: &Expr, types: &DeclTypes, vars: &[(&str, Ty)]) -> Result<Ty, Vec<CheckError>> {
    let mut c = Checker {
        types,
        scope: vars
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
        errors: Vec::new(),
    };
    let t = c.expr(expr);
    if c.errors.is_empty() {
        Ok(t)
    } else {
        Err(c.errors)
    }
}

const TYPE_NAMES: [&str; 10] = [
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "null_type",
    "list",
    "map",
    "type",
];

impl Checker<'_> {
    fn err(&mut self, offset: u32, message: String) -> Ty {
        self.errors.push(CheckError {
            offset: offset as usize,
            message,
        });
        Ty::Dyn
    }

    fn elem_of(&self, t: &Ty) -> Ty {
        match t {
            Ty::List(e) => (**e).clone(),
            Ty::Map(k, _) => (**k).clone(),
            _ => Ty::Dyn,
        }
    }

    fn expr(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Lit(l) => match l {
                Literal::Null => Ty::Null,
                Literal::Bool(_) => Ty::Bool,
                Literal::Int(_) => Ty::Int,
                Literal::Uint(_) => Ty::Uint,
                Literal::Double(_) => Ty::Double,
                Literal::String(_) => Ty::String,
                Literal::Bytes(_) => Ty::Bytes,
            },
            ExprKind::Ident(n) => {
                if let Some((_, t)) = self.scope.iter().rev().find(|(v, _)| v == n) {
                    return t.clone();
                }
                if TYPE_NAMES.contains(&n.as_str()) {
                    return Ty::Type;
                }
                self.err(
                    e.offset,
                    format!("undeclared reference to '{n}' (in container '')"),
                )
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                // `optional.none()`-style namespaces are calls, not selects.
                let t = self.expr(operand);
                let t = match (optional, t) {
                    (true, Ty::Optional(inner)) => *inner,
                    (_, t) => t,
                };
                let ft = match &t {
                    Ty::Object(id) => {
                        let n = self.types.node(*id);
                        let key = unescape_field(field);
                        match n.fields.get(key.as_ref()) {
                            Some(&c) => of_node(self.types, c),
                            None => {
                                return self.err(e.offset, format!("undefined field '{field}'"));
                            }
                        }
                    }
                    Ty::Map(_, v) => (**v).clone(),
                    _ => Ty::Dyn,
                };
                if *test_only {
                    Ty::Bool
                } else if *optional {
                    Ty::Optional(Box::new(ft))
                } else {
                    ft
                }
            }
            ExprKind::List { elements, .. } => {
                let ts: Vec<Ty> = elements.iter().map(|x| self.expr(x)).collect();
                let first = ts.first().cloned().unwrap_or(Ty::Dyn);
                let same = ts.iter().all(|t| *t == first);
                Ty::List(Box::new(if same { first } else { Ty::Dyn }))
            }
            ExprKind::Map { entries } => {
                let mut kt = None;
                let mut vt = None;
                for (k, v, _) in entries {
                    let k = self.expr(k);
                    let v = self.expr(v);
                    kt.get_or_insert(k);
                    vt.get_or_insert(v);
                }
                Ty::Map(
                    Box::new(kt.unwrap_or(Ty::Dyn)),
                    Box::new(vt.unwrap_or(Ty::Dyn)),
                )
            }
            ExprKind::Bind { var, init, body } => {
                let t = self.expr(init);
                self.scope.push((var.clone(), t));
                let r = self.expr(body);
                self.scope.pop();
                r
            }
            ExprKind::Loop {
                kind,
                var,
                var2,
                range,
                filter,
                transform,
            } => {
                let rt = self.expr(range);
                let (t1, t2) = match (&rt, var2) {
                    (Ty::List(e), Some(_)) => (Ty::Int, (**e).clone()),
                    (Ty::Map(k, v), Some(_)) => ((**k).clone(), (**v).clone()),
                    (_, None) => (self.elem_of(&rt), Ty::Dyn),
                    _ => (Ty::Dyn, Ty::Dyn),
                };
                self.scope.push((var.clone(), t1.clone()));
                if let Some(v2) = var2 {
                    self.scope.push((v2.clone(), t2));
                }
                if let Some(p) = filter {
                    self.expr(p);
                }
                let tt = transform.as_ref().map(|t| self.expr(t));
                self.scope.pop();
                if var2.is_some() {
                    self.scope.pop();
                }
                match kind {
                    Loop::All | Loop::Exists | Loop::ExistsOne => Ty::Bool,
                    Loop::Filter => Ty::List(Box::new(t1)),
                    Loop::Map | Loop::TransformList => Ty::List(Box::new(tt.unwrap_or(Ty::Dyn))),
                    Loop::TransformMap => Ty::Map(Box::new(t1), Box::new(tt.unwrap_or(Ty::Dyn))),
                }
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(e, function, target.as_deref(), args),
        }
    }

    fn call(&mut self, e: &Expr, f: &str, target: Option<&Expr>, args: &[Expr]) -> Ty {
        // Namespaced functions: optional.of(x), format.dns1123Label(), ...
        if let Some(Expr {
            kind: ExprKind::Ident(ns),
            ..
        }) = target
            && matches!(
                ns.as_str(),
                "optional" | "format" | "math" | "strings" | "base64"
            )
            && !self.scope.iter().any(|(n, _)| n == ns)
        {
            let ts: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
            return match (ns.as_str(), f) {
                ("optional", "none") => Ty::Optional(Box::new(Ty::Dyn)),
                ("optional", _) => Ty::Optional(Box::new(ts.into_iter().next().unwrap_or(Ty::Dyn))),
                ("format", _) => Ty::Opaque("kubernetes.NamedFormat"),
                _ => Ty::Dyn,
            };
        }
        let tt = target.map(|t| self.expr(t));
        let ts: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
        let overload_error = |c: &mut Self, shown: String| {
            c.err(
                e.offset,
                format!("found no matching overload for '{f}' applied to '{shown}'"),
            )
        };
        match f {
            "_&&_" | "_||_" | "!_" | "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" | "@in" => {
                Ty::Bool
            }
            "_?_:_" => {
                if ts.len() == 3 && ts[1] == ts[2] {
                    ts[1].clone()
                } else {
                    Ty::Dyn
                }
            }
            "-_" => ts.into_iter().next().unwrap_or(Ty::Dyn),
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
                let (a, b) = (&ts[0], &ts[1]);
                if a.is_dyn() || b.is_dyn() {
                    return if a.is_dyn() { b.clone() } else { a.clone() };
                }
                let ok = match (f, a, b) {
                    (_, Ty::Int, Ty::Int) | (_, Ty::Uint, Ty::Uint) => true,
                    ("_%_", _, _) => false,
                    (_, Ty::Double, Ty::Double) => true,
                    ("_+_", Ty::String, Ty::String) | ("_+_", Ty::Bytes, Ty::Bytes) => true,
                    ("_+_", Ty::List(_), Ty::List(_)) => true,
                    ("_+_" | "_-_", Ty::Duration, Ty::Duration) => true,
                    ("_+_", Ty::Timestamp, Ty::Duration) | ("_+_", Ty::Duration, Ty::Timestamp) => {
                        true
                    }
                    ("_-_", Ty::Timestamp, Ty::Duration | Ty::Timestamp) => true,
                    _ => false,
                };
                if !ok {
                    let shown = format!("({}, {})", a.name(), b.name());
                    return overload_error(self, shown);
                }
                match (f, a, b) {
                    ("_-_", Ty::Timestamp, Ty::Timestamp) => Ty::Duration,
                    (_, Ty::Duration, Ty::Timestamp) => Ty::Timestamp,
                    _ => a.clone(),
                }
            }
            "_[_]" => match &ts[0] {
                Ty::List(e) => (**e).clone(),
                Ty::Map(_, v) => (**v).clone(),
                _ => Ty::Dyn,
            },
            "_[?_]" => Ty::Optional(Box::new(match &ts[0] {
                Ty::List(e) => (**e).clone(),
                Ty::Map(_, v) => (**v).clone(),
                _ => Ty::Dyn,
            })),
            "matches" => {
                // A literal pattern is compiled when the rule is.
                let pattern = if target.is_some() {
                    args.first()
                } else {
                    args.get(1)
                };
                if let Some(Expr {
                    kind: ExprKind::Lit(Literal::String(p)),
                    offset,
                }) = pattern
                    && goregex::compile(p).is_err()
                {
                    return self.err(*offset, "invalid matches argument".into());
                }
                Ty::Bool
            }
            "join" => {
                match &tt {
                    Some(Ty::List(inner)) if !matches!(**inner, Ty::String | Ty::Dyn) => {
                        let mut shown = tt.as_ref().map(|t| t.name()).unwrap_or_default();
                        shown.push_str(".(");
                        shown.push_str(&ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "));
                        shown.push(')');
                        return overload_error(self, shown);
                    }
                    _ => {}
                }
                Ty::String
            }
            "size" | "indexOf" | "lastIndexOf" | "int" | "family" | "prefixLength" | "major"
            | "minor" | "patch" | "compareTo" | "sign" | "asInteger" | "getHours"
            | "getMinutes" | "getSeconds" | "getMilliseconds" => Ty::Int,
            "contains"
            | "startsWith"
            | "endsWith"
            | "isSorted"
            | "isURL"
            | "isIP"
            | "isCIDR"
            | "isQuantity"
            | "isSemver"
            | "isLessThan"
            | "isGreaterThan"
            | "hasValue"
            | "isInteger"
            | "containsIP"
            | "containsCIDR"
            | "isUnspecified"
            | "isLoopback"
            | "isGlobalUnicast"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "bool" => Ty::Bool,
            "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "charAt"
            | "reverse" | "string" | "getScheme" | "getHost" | "getHostname" | "getPort"
            | "getEscapedPath" | "find" | "quote" => Ty::String,
            "split" | "findAll" => Ty::List(Box::new(Ty::String)),
            "double" | "asApproximateFloat" => Ty::Double,
            "uint" => Ty::Uint,
            "bytes" => Ty::Bytes,
            "duration" => Ty::Duration,
            "timestamp" => Ty::Timestamp,
            "type" => Ty::Type,
            "url" => Ty::Opaque("kubernetes.URL"),
            "ip" => Ty::Opaque("net.IP"),
            "cidr" => Ty::Opaque("net.CIDR"),
            "quantity" | "add" | "sub" => Ty::Opaque("kubernetes.Quantity"),
            "semver" => Ty::Opaque("kubernetes.Semver"),
            "validate" => Ty::Optional(Box::new(Ty::List(Box::new(Ty::String)))),
            "value" => match tt {
                Some(Ty::Optional(t)) => *t,
                _ => Ty::Dyn,
            },
            "orValue" => ts.into_iter().next().unwrap_or(Ty::Dyn),
            "sum" | "min" | "max" => match tt {
                Some(Ty::List(e)) => *e,
                _ => Ty::Dyn,
            },
            _ => Ty::Dyn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parser::{parse, render_error};
    use crate::schema::Props;
    use serde_json::json;

    fn run(schema: serde_json::Value, src: &str) -> Result<String, String> {
        let props = Props::from_value("", &schema).unwrap();
        let types = DeclTypes::new(&props);
        let expr = parse(src).unwrap();
        let self_ty = of_node(&types, types.root());
        check(&expr, &types, &[("self", self_ty)])
            .map(|t| t.name())
            .map_err(|e| render_error(src, e[0].offset, &e[0].message))
    }

    #[test]
    fn result_types_and_errors_like_cel_go() {
        let s = json!({"type": "string"});
        assert_eq!(run(s.clone(), "self + 'x'").unwrap(), "string");
        assert_eq!(run(s.clone(), "self.size() > 1").unwrap(), "bool");
        assert_eq!(
            run(s.clone(), "'value ' + 1").unwrap_err(),
            "ERROR: <input>:1:10: found no matching overload for '_+_' applied to '(string, int)'\n | 'value ' + 1\n | .........^"
        );
        assert_eq!(
            run(s.clone(), "other == self").unwrap_err(),
            "ERROR: <input>:1:1: undeclared reference to 'other' (in container '')\n | other == self\n | ^"
        );
        assert_eq!(
            run(s, "self.matches('[unclosed')").unwrap_err(),
            "ERROR: <input>:1:14: invalid matches argument\n | self.matches('[unclosed')\n | .............^"
        );
        let l = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(
            run(l, "self.map(x, self.map(y, x + y)).join(',')").unwrap_err(),
            "ERROR: <input>:1:37: found no matching overload for 'join' applied to 'list(list(string)).(string)'\n | self.map(x, self.map(y, x + y)).join(',')\n | ....................................^"
        );
        let o = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        assert!(
            run(o.clone(), "self.b == 1")
                .unwrap_err()
                .contains("undefined field 'b'")
        );
        assert_eq!(run(o, "has(self.a) && self.a > 1").unwrap(), "bool");
    }
}
