//! The interpreter: evaluates a parsed expression over values typed by the schema, with
//! cel-go's error semantics (errors absorbed by `&&`/`||` and the quantifier macros when the
//! other side decides) and runtime cost accounting.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::stdlib;
use super::types::{DeclTypes, Kind, unescape_field};
use super::value::{Str, Val, child_type, compare, equals};
use std::rc::Rc;

/// An evaluation error, with cel-go's text.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(pub String);

impl EvalError {
    pub fn new(s: impl Into<String>) -> EvalError {
        EvalError(s.into())
    }
}

pub type EvalResult<'a> = Result<Val<'a>, EvalError>;

/// cel-go's text when the per-call cost limit is exceeded.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// Runtime cost factors (cel-go `common/costs`).
pub const STRING_TRAVERSAL_FACTOR: f64 = 0.1;
const LIST_CREATE_COST: u64 = 10;
const MAP_CREATE_COST: u64 = 30;

/// Variables in scope.
pub type Env<'e, 'a> = Vec<(&'e str, Val<'a>)>;

pub struct Interp<'t> {
    pub types: &'t DeclTypes,
    /// Cost spent so far in this evaluation.
    pub cost: u64,
    /// The cost at which evaluation stops with [`COST_LIMIT_EXCEEDED`].
    pub limit: u64,
}

impl<'t> Interp<'t> {
    pub fn new(types: &'t DeclTypes, limit: u64) -> Self {
        Interp {
            types,
            cost: 0,
            limit,
        }
    }

    pub fn charge(&mut self, c: u64) -> Result<(), EvalError> {
        self.cost = self.cost.saturating_add(c);
        if self.cost > self.limit {
            Err(EvalError::new(COST_LIMIT_EXCEEDED))
        } else {
            Ok(())
        }
    }

    /// Charges for traversing `len` units (string bytes, list items) at cel-go's factor.
    pub fn charge_traversal(&mut self, len: usize) -> Result<(), EvalError> {
        self.charge((len as f64 * STRING_TRAVERSAL_FACTOR).ceil() as u64)
    }

    pub fn eval<'e, 'a>(&mut self, e: &'e Expr, env: &mut Env<'e, 'a>) -> EvalResult<'a> {
        match &e.kind {
            ExprKind::Lit(l) => Ok(match l {
                Literal::Null => Val::Null,
                Literal::Bool(b) => Val::Bool(*b),
                Literal::Int(i) => Val::Int(*i),
                Literal::Uint(u) => Val::Uint(*u),
                Literal::Double(d) => Val::Double(*d),
                Literal::String(s) => Val::string(s.as_str()),
                Literal::Bytes(b) => Val::Bytes(b.as_slice().into()),
            }),
            ExprKind::Ident(name) => {
                self.charge(1)?;
                if let Some((_, v)) = env.iter().rev().find(|(n, _)| *n == name) {
                    return Ok(v.clone());
                }
                match name.as_str() {
                    "int" | "uint" | "double" | "string" | "bytes" | "bool" | "null_type"
                    | "list" | "map" | "type" => Ok(Val::Type(Rc::from(name.as_str()))),
                    _ => Err(EvalError::new(format!("no such attribute: {name}"))),
                }
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                let v = self.eval(operand, env)?;
                self.charge(1)?;
                self.select(v, field, *test_only, *optional)
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(function, target.as_deref(), args, env),
            ExprKind::List { elements, optional } => {
                self.charge(LIST_CREATE_COST)?;
                let mut out = Vec::with_capacity(elements.len());
                for (i, el) in elements.iter().enumerate() {
                    let v = self.eval(el, env)?;
                    if optional.contains(&i) {
                        match v {
                            Val::Optional(Some(x)) => out.push((*x).clone()),
                            Val::Optional(None) => {}
                            _ => return Err(EvalError::new("no such overload")),
                        }
                    } else {
                        out.push(v);
                    }
                }
                Ok(Val::List(Rc::new(out)))
            }
            ExprKind::Map { entries } => {
                self.charge(MAP_CREATE_COST)?;
                let mut out: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(entries.len());
                for (k, v, opt) in entries {
                    let k = self.eval(k, env)?;
                    let v = self.eval(v, env)?;
                    let v = if *opt {
                        match v {
                            Val::Optional(Some(x)) => (*x).clone(),
                            Val::Optional(None) => continue,
                            _ => return Err(EvalError::new("no such overload")),
                        }
                    } else {
                        v
                    };
                    if out.iter().any(|(k2, _)| equals(&k, k2, self.types)) {
                        return Err(EvalError::new(format!(
                            "Failed with repeated key: {}",
                            super::value::display(&k, self.types)
                        )));
                    }
                    out.push((k, v));
                }
                Ok(Val::Map(Rc::new(out)))
            }
            ExprKind::Struct { name, .. } => Err(EvalError::new(format!(
                "unknown type: {}",
                name.trim_start_matches('.')
            ))),
            ExprKind::Loop {
                kind: kind @ (Loop::OptMap | Loop::OptFlatMap),
                var,
                range,
                transform,
                ..
            } => {
                let r = self.eval(range, env)?;
                let inner = match r {
                    Val::Optional(None) => return Ok(Val::Optional(None)),
                    Val::Optional(Some(v)) => (*v).clone(),
                    _ => return Err(EvalError::new("no such overload")),
                };
                let Some(t) = transform else {
                    return Err(EvalError::new("no such overload"));
                };
                env.push((var.as_str(), inner));
                let out = self.eval(t, env);
                env.pop();
                let out = out?;
                Ok(if *kind == Loop::OptMap {
                    Val::Optional(Some(Rc::new(out)))
                } else {
                    out
                })
            }
            ExprKind::Loop {
                kind: Loop::SortBy,
                var,
                range,
                transform,
                ..
            } => {
                let r = self.eval(range, env)?;
                let items = r
                    .list_items(self.types)
                    .ok_or_else(|| EvalError::new("no such overload"))?;
                let Some(t) = transform else {
                    return Err(EvalError::new("no such overload"));
                };
                let mut keys = Vec::with_capacity(items.len());
                for item in &items {
                    env.push((var.as_str(), item.clone()));
                    let k = self.eval(t, env);
                    env.pop();
                    keys.push(k?);
                }
                stdlib::sort_by_keys(items, keys).map(|l| Val::List(Rc::new(l)))
            }
            ExprKind::Bind { var, init, body } => {
                let v = self.eval(init, env)?;
                env.push((var.as_str(), v));
                let r = self.eval(body, env);
                env.pop();
                r
            }
            ExprKind::Loop {
                kind,
                var,
                var2,
                range,
                filter,
                transform,
            } => self.eval_loop(
                *kind,
                var,
                var2.as_deref(),
                range,
                filter.as_deref(),
                transform.as_deref(),
                env,
            ),
        }
    }

    /// `v.field`, `has(v.field)`, `v.?field`.
    fn select<'a>(
        &mut self,
        v: Val<'a>,
        field: &str,
        test_only: bool,
        optional: bool,
    ) -> EvalResult<'a> {
        let v = match v {
            Val::Optional(None) if optional => return Ok(Val::Optional(None)),
            Val::Optional(Some(x)) if optional => (*x).clone(),
            other => other,
        };
        let found: Option<Val<'a>> = match &v {
            Val::JsonObj(m, t) => {
                let key = unescape_field(field);
                m.get(key.as_ref()).map(|x| {
                    let ct = t.and_then(|t| child_type(self.types, t, &key));
                    Val::from_json(x, ct, self.types)
                })
            }
            Val::Map(m) => m
                .iter()
                .find(|(k, _)| matches!(k, Val::Str(s) if s.as_str() == field))
                .map(|(_, x)| x.clone()),
            _ => {
                return Err(EvalError::new(format!(
                    "no such key: {field}" // selecting on a non-map
                )));
            }
        };
        if test_only {
            // has() on a present null field is true for maps, false for objects' nulls?
            // The server's objects hold absent fields as absent; a JSON null is present.
            return Ok(Val::Bool(found.is_some()));
        }
        if optional {
            return Ok(Val::Optional(found.map(Rc::new)));
        }
        found.ok_or_else(|| EvalError::new(format!("no such key: {field}")))
    }

    fn call<'e, 'a>(
        &mut self,
        function: &str,
        target: Option<&'e Expr>,
        args: &'e [Expr],
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        match function {
            "_&&_" | "_||_" => {
                let stop = function == "_||_";
                let a = self.eval(&args[0], env);
                if let Ok(Val::Bool(b)) = &a
                    && *b == stop
                {
                    return Ok(Val::Bool(stop));
                }
                let b = self.eval(&args[1], env);
                return match (a, b) {
                    (_, Ok(Val::Bool(b))) if b == stop => Ok(Val::Bool(stop)),
                    (Ok(Val::Bool(_)), Ok(Val::Bool(b))) => Ok(Val::Bool(b)),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                    _ => Err(EvalError::new("no such overload")),
                };
            }
            "_?_:_" => {
                return match self.eval(&args[0], env)? {
                    Val::Bool(true) => self.eval(&args[1], env),
                    Val::Bool(false) => self.eval(&args[2], env),
                    _ => Err(EvalError::new("no such overload")),
                };
            }
            _ => {}
        }
        // `optional.of(x)`, `format.dns1123Label()`: a namespace, not a receiver.
        if let Some(Expr {
            kind: ExprKind::Ident(ns),
            ..
        }) = target
            && matches!(
                ns.as_str(),
                "optional" | "format" | "math" | "strings" | "base64"
            )
            && !env.iter().any(|(n, _)| n == ns)
        {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(self.eval(a, env)?);
            }
            let name = format!("{ns}.{function}");
            self.charge(call_cost(&name, None, &vals))?;
            return stdlib::call(self, &name, None, &vals);
        }
        let target = match target {
            Some(t) => Some(self.eval(t, env)?),
            None => None,
        };
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a, env)?);
        }
        self.charge(call_cost(function, target.as_ref(), &vals))?;
        match (function, target, vals.as_slice()) {
            ("!_", None, [Val::Bool(b)]) => Ok(Val::Bool(!b)),
            ("-_", None, [v]) => stdlib::negate(v),
            ("_==_", None, [a, b]) => Ok(Val::Bool(equals(a, b, self.types))),
            ("_!=_", None, [a, b]) => Ok(Val::Bool(!equals(a, b, self.types))),
            ("_<_" | "_<=_" | "_>_" | "_>=_", None, [a, b]) => {
                let o = compare(a, b).ok_or_else(|| EvalError::new("no such overload"))?;
                Ok(Val::Bool(match function {
                    "_<_" => o.is_lt(),
                    "_<=_" => o.is_le(),
                    "_>_" => o.is_gt(),
                    _ => o.is_ge(),
                }))
            }
            ("@in", None, [x, coll]) => self.contains(coll, x).map(Val::Bool),
            ("_[_]", None, [c, i]) => self.index(c, i),
            ("_[?_]", None, [c, i]) => match c {
                Val::Optional(None) => Ok(Val::Optional(None)),
                other => {
                    let base = match other {
                        Val::Optional(Some(x)) => (**x).clone(),
                        x => x.clone(),
                    };
                    match self.index(&base, i) {
                        Ok(v) => Ok(Val::Optional(Some(Rc::new(v)))),
                        Err(e) if e.0.starts_with("no such key") || e.0.starts_with("index ") => {
                            Ok(Val::Optional(None))
                        }
                        Err(e) => Err(e),
                    }
                }
            },
            (f, t, a) => stdlib::call(self, f, t, a),
        }
    }

    pub fn contains(&mut self, coll: &Val, x: &Val) -> Result<bool, EvalError> {
        if let Some(items) = coll.list_items(self.types) {
            return Ok(items.iter().any(|i| equals(i, x, self.types)));
        }
        match coll {
            Val::JsonObj(m, _) => Ok(match x {
                Val::Str(s) => m.contains_key(s.as_str()),
                _ => false,
            }),
            Val::Map(m) => Ok(m.iter().any(|(k, _)| equals(k, x, self.types))),
            _ => Err(EvalError::new("no such overload")),
        }
    }

    pub fn index<'a>(&mut self, c: &Val<'a>, i: &Val<'a>) -> EvalResult<'a> {
        match c {
            Val::List(_) | Val::JsonList(..) => {
                let len = c.list_len().unwrap_or(0);
                let idx = match i {
                    Val::Int(n) => *n,
                    Val::Uint(n) => i64::try_from(*n).unwrap_or(i64::MAX),
                    Val::Double(d) if d.fract() == 0.0 => *d as i64,
                    _ => return Err(EvalError::new("unsupported index type")),
                };
                if idx < 0 || idx as usize >= len {
                    return Err(EvalError::new(format!("index out of bounds: {idx}")));
                }
                Ok(match c {
                    Val::List(l) => l[idx as usize].clone(),
                    Val::JsonList(l, t) => Val::from_json(&l[idx as usize], *t, self.types),
                    _ => unreachable!("checked above"),
                })
            }
            Val::JsonObj(m, t) => {
                let Val::Str(k) = i else {
                    return Err(EvalError::new(format!(
                        "no such key: {}",
                        super::value::display(i, self.types)
                    )));
                };
                let key = k.as_str();
                match m.get(key) {
                    Some(v) => {
                        let ct = t.and_then(|t| child_type(self.types, t, key));
                        Ok(Val::from_json(v, ct, self.types))
                    }
                    None => Err(EvalError::new(format!("no such key: {key}"))),
                }
            }
            Val::Map(m) => m
                .iter()
                .find(|(k, _)| equals(k, i, self.types))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    EvalError::new(format!(
                        "no such key: {}",
                        super::value::display(i, self.types)
                    ))
                }),
            _ => Err(EvalError::new("no such overload")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_loop<'e, 'a>(
        &mut self,
        kind: Loop,
        var: &'e str,
        var2: Option<&'e str>,
        range: &'e Expr,
        filter: Option<&'e Expr>,
        transform: Option<&'e Expr>,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let r = self.eval(range, env)?;
        // (first variable, second variable) per iteration: lists give (item) or
        // (index, item); maps give (key) or (key, value).
        let pairs: Vec<(Val<'a>, Option<Val<'a>>)> = if let Some(items) = r.list_items(self.types) {
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    if var2.is_some() {
                        (Val::Int(i as i64), Some(v))
                    } else {
                        (v, None)
                    }
                })
                .collect()
        } else if let Some(entries) = r.map_entries(self.types) {
            entries
                .into_iter()
                .map(|(k, v)| {
                    if var2.is_some() {
                        (k, Some(v))
                    } else {
                        (k, None)
                    }
                })
                .collect()
        } else {
            return Err(EvalError::new("no such overload"));
        };
        let mut err: Option<EvalError> = None;
        let mut count = 0usize;
        let mut list_out: Vec<Val<'a>> = Vec::new();
        let mut map_out: Vec<(Val<'a>, Val<'a>)> = Vec::new();
        for (a, b) in pairs {
            // cel-go's fold: the loop condition and the accumulator's references.
            self.charge(match kind {
                Loop::All => 3,
                Loop::Exists => 4,
                _ => 0,
            })?;
            let key = a.clone();
            env.push((var, a));
            if let (Some(v2), Some(b)) = (var2, b) {
                env.push((v2, b));
            }
            let pops = if var2.is_some() { 2 } else { 1 };
            let outcome = (|| -> Result<Option<Val<'a>>, EvalError> {
                let pass = match filter {
                    Some(p) => match self.eval(p, env) {
                        Ok(Val::Bool(b)) => Ok(b),
                        Ok(_) => Err(EvalError::new("no such overload")),
                        Err(e) => Err(e),
                    },
                    None => Ok(true),
                };
                match kind {
                    Loop::All | Loop::Exists => {
                        // Errors are kept but may be absorbed by a decisive element.
                        pass.map(|b| Some(Val::Bool(b)))
                    }
                    Loop::ExistsOne | Loop::Filter => pass.map(|b| Some(Val::Bool(b))),
                    Loop::Map
                    | Loop::TransformList
                    | Loop::TransformMap
                    | Loop::TransformMapEntry => {
                        if !pass? {
                            return Ok(None);
                        }
                        let t = transform.ok_or_else(|| EvalError::new("no such overload"))?;
                        self.eval(t, env).map(Some)
                    }
                    Loop::OptMap | Loop::OptFlatMap | Loop::SortBy => Ok(None),
                }
            })();
            for _ in 0..pops {
                env.pop();
            }
            let value = match outcome {
                Ok(v) => v,
                Err(e) => {
                    if matches!(kind, Loop::All | Loop::Exists) && e.0 != COST_LIMIT_EXCEEDED {
                        err.get_or_insert(e);
                        continue;
                    }
                    return Err(e);
                }
            };
            match (kind, value) {
                (Loop::All, Some(Val::Bool(false))) => {
                    // The next condition check sees the false accumulator; then the result.
                    self.charge(3)?;
                    return Ok(Val::Bool(false));
                }
                (Loop::Exists, Some(Val::Bool(true))) => {
                    self.charge(4)?;
                    return Ok(Val::Bool(true));
                }
                (Loop::ExistsOne, Some(Val::Bool(true))) => {
                    self.charge(2)?;
                    count += 1
                }
                (Loop::ExistsOne, _) => self.charge(1)?,
                (Loop::Filter, Some(Val::Bool(true))) => {
                    // accu + [x]
                    self.charge(13)?;
                    list_out.push(key)
                }
                (Loop::Filter, _) => self.charge(1)?,
                (Loop::Map | Loop::TransformList, Some(v)) => {
                    self.charge(12)?;
                    list_out.push(v)
                }
                (Loop::TransformMap, Some(v)) => {
                    self.charge(12)?;
                    map_out.push((key, v))
                }
                (Loop::TransformMapEntry, Some(v)) => {
                    self.charge(12)?;
                    let Some(entries) = v.map_entries(self.types) else {
                        return Err(EvalError::new("no such overload"));
                    };
                    for (k, v) in entries {
                        if map_out.iter().any(|(k2, _)| equals(&k, k2, self.types)) {
                            return Err(EvalError::new(format!(
                                "insert failed: key {} already exists",
                                super::value::display(&k, self.types)
                            )));
                        }
                        map_out.push((k, v));
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = err {
            return Err(e);
        }
        // The result expression: `accu` (or `accu == 1`).
        self.charge(if kind == Loop::ExistsOne { 2 } else { 1 })?;
        Ok(match kind {
            Loop::All => Val::Bool(true),
            Loop::Exists => Val::Bool(false),
            Loop::ExistsOne => Val::Bool(count == 1),
            Loop::Filter | Loop::Map | Loop::TransformList => Val::List(Rc::new(list_out)),
            Loop::TransformMap | Loop::TransformMapEntry => Val::Map(Rc::new(map_out)),
            Loop::OptMap | Loop::OptFlatMap | Loop::SortBy => Val::Null,
        })
    }
}

/// Whether a value is the zero value of its type (for `optional.ofNonZeroValue`).
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
        Val::JsonList(l, _) => l.is_empty(),
        Val::Map(m) => m.is_empty(),
        Val::JsonObj(m, _) => m.is_empty(),
        Val::Duration(d) | Val::Timestamp(d) => *d == 0,
        Val::Optional(o) => o.is_none(),
        _ => false,
    }
}

/// A string value's text.
pub fn as_str<'v>(v: &'v Val) -> Option<&'v str> {
    match v {
        Val::Str(s) => Some(s.as_str()),
        _ => None,
    }
}

/// Whether a type node is a kind whose values `has()` can test.
pub fn is_object_kind(types: &DeclTypes, t: Option<super::types::TypeId>) -> bool {
    t.is_some_and(|t| types.node(t).kind == Kind::Object)
}

/// A string value made from owned text.
pub fn owned<'a>(s: String) -> Val<'a> {
    Val::Str(Str::Owned(s.into()))
}

/// The size cel-go's cost tracker gives a value: characters of strings, bytes, items of
/// lists and maps, 1 for anything else.
fn actual_size(v: &Val) -> u64 {
    match v {
        Val::Str(s) => s.as_str().chars().count() as u64,
        Val::Bytes(b) => b.len() as u64,
        Val::JsonObj(m, _) => m.len() as u64,
        Val::Map(m) => m.len() as u64,
        _ => v.list_len().map_or(1, |n| n as u64),
    }
}

fn traversal(n: u64) -> u64 {
    (n as f64 * STRING_TRAVERSAL_FACTOR).ceil() as u64
}

/// The runtime cost of a call (cel-go's `costCall`, and the Kubernetes libraries' costs).
fn call_cost(f: &str, target: Option<&Val>, args: &[Val]) -> u64 {
    let all: Vec<&Val> = target.into_iter().chain(args).collect();
    let size = |i: usize| all.get(i).map_or(0, |v| actual_size(v));
    let is_text = |i: usize| matches!(all.get(i), Some(Val::Str(_) | Val::Bytes(_)));
    match f {
        "startsWith" | "endsWith" => traversal(size(0)),
        "bytes" | "string" if is_text(0) => traversal(size(0)),
        "@in" if all.get(1).is_some_and(|v| v.list_len().is_some()) => size(1),
        "_==_" | "_!=_" => traversal(size(0).min(size(1))),
        "_<_" | "_<=_" | "_>_" | "_>=_" if is_text(0) => traversal(size(0).min(size(1))),
        "_+_" if is_text(0) => traversal(size(0) + size(1)),
        "matches" | "find" | "findAll" => {
            let str_cost = ((1 + size(0)) as f64 * STRING_TRAVERSAL_FACTOR).ceil() as u64;
            let re_cost = (size(1) as f64 * 0.25).ceil() as u64;
            str_cost * re_cost
        }
        "contains" if is_text(0) => traversal(size(0)) * traversal(size(1)),
        "lowerAscii" | "upperAscii" | "substring" | "trim" | "replace" | "split" | "charAt"
        | "indexOf" | "lastIndexOf" | "reverse" | "url" | "isURL" | "ip" | "isIP" | "cidr"
        | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" | "validate"
            if is_text(0) =>
        {
            traversal(size(0)).max(1)
        }
        "join" => traversal(size(0)).max(1),
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => size(0).max(1),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parser::parse;
    use crate::schema::Props;
    use serde_json::json;

    /// Evaluates `src` with `self` bound to `value` typed by `schema`; returns the result
    /// rendered for comparison, and the cost.
    fn eval(schema: serde_json::Value, value: serde_json::Value, src: &str) -> (String, u64) {
        let props = Props::from_value("", &schema).unwrap();
        let types = DeclTypes::new(&props);
        let expr = parse(src).unwrap();
        let mut it = Interp::new(&types, 1_000_000);
        let this = Val::from_json(&value, Some(types.root()), &types);
        let mut env: Env = vec![("self", this)];
        let r = match it.eval(&expr, &mut env) {
            Ok(v) => super::super::value::display(&v, &types),
            Err(e) => format!("error: {}", e.0),
        };
        (r, it.cost)
    }

    fn ok(schema: serde_json::Value, value: serde_json::Value, src: &str) -> String {
        eval(schema, value, src).0
    }

    #[test]
    fn values_operators_and_functions() {
        let s = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "d": {"type": "number"}, "s": {"type": "string"},
            "l": {"type": "array", "items": {"type": "string"}},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            "ios": {"x-kubernetes-int-or-string": true},
            "dur": {"type": "string", "format": "duration"}}});
        let v = json!({"n": 3, "d": 2, "s": "Hello", "l": ["a", "b", "c"], "m": {"x": 1},
            "ios": "50%", "dur": "90s"});
        let cases = [
            ("self.n + 2 * 3", "9"),
            ("self.d == 2.0 && self.n == 3.0 && 3u == self.n", "true"),
            ("self.s.lowerAscii() + '!'", "hello!"),
            (
                "self.l.exists_one(x, x == 'b') && self.l.all(x, x.size() == 1)",
                "true",
            ),
            ("self.l.map(x, x + x).join('-')", "aa-bb-cc"),
            ("self.l.filter(x, x != 'b').size()", "2"),
            ("'x' in self.m && !('y' in self.m) && self.m.x == 1", "true"),
            ("type(self.ios) == string && self.ios.endsWith('%')", "true"),
            (
                "duration(self.dur) > duration('1m') && self.dur > duration('80s')",
                "true",
            ),
            ("self.l.all(i, v, i < 3 && v != '')", "true"),
            ("self.?missing.orValue('none')", "none"),
            ("has(self.s) && !has(self.missing)", "true"),
            (
                "self.s.substring(1, 3) + self.s.charAt(4) + string(self.s.indexOf('l'))",
                "elo2",
            ),
            (
                "'a,b,,c'.split(',').size() == 4 && ['x', 'y'][1] == 'y'",
                "true",
            ),
            (
                "[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [1, 2].isSorted()",
                "true",
            ),
            ("'abc-123'.matches('^[a-z]+-\\\\d+$')", "true"),
            ("int('42') + 1", "43"),
            (
                "{'a': 1}.a == 1 && [?optional.none(), ?optional.of(2)] == [2]",
                "true",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(ok(s.clone(), v.clone(), src), want, "{src}");
        }
    }

    #[test]
    fn errors_read_like_cel_go() {
        let s = json!({"type": "object", "properties": {"a": {"type": "integer"},
            "b": {"type": "integer"}, "o": {"type": "object", "properties": {"x": {"type": "string"}}}}});
        let v = json!({"a": 1, "b": 0, "o": {}});
        assert_eq!(
            ok(s.clone(), v.clone(), "self.a / self.b >= 1"),
            "error: division by zero"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "self.a % self.b"),
            "error: modulus by zero"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "self.o.x == 'y'"),
            "error: no such key: x"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "int('x') == 1"),
            "error: type conversion error from 'string' to 'int'"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "duration('soon') > duration('1s')"),
            "error: type conversion error from 'string' to 'google.protobuf.Duration'"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "9223372036854775807 + self.a"),
            "error: integer overflow"
        );
        // Errors are absorbed when the other side decides, as in cel-go.
        assert_eq!(ok(s.clone(), v.clone(), "self.o.x == 'y' || true"), "true");
        assert_eq!(
            ok(s.clone(), v.clone(), "false && self.a / self.b == 1"),
            "false"
        );
        assert_eq!(
            ok(s.clone(), v.clone(), "[0, 1].exists(i, 1 / i == 1)"),
            "true"
        );
        assert_eq!(
            ok(s, v, "[0, 1].all(i, 1 / i == 1)"),
            "error: division by zero"
        );
    }

    #[test]
    fn runtime_cost_follows_cel_go() {
        // `exists` over 3 strings of 16 characters where the match is last: per turn the
        // loop condition (3) and the accumulator (1), the two identifiers (2) and the string
        // comparison (ceil(16 * 0.1) = 2); the final check and result 4; the range `self` 1.
        let s = json!({"type": "array", "items": {"type": "string"}});
        let v = json!(["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"]);
        let (r, cost) = eval(
            s.clone(),
            v.clone(),
            "self.exists(u, u == 'cccccccccccccccc')",
        );
        assert_eq!(r, "true");
        // Each turn: 4 + 1 (u) + 0 (const) + 2 (==) = 7; after the hit: 4; range: 1.
        assert_eq!(cost, 3 * 7 + 4 + 1);
        // A runaway rule stops at the per-call limit with cel-go's message.
        let big: Vec<String> = (0..2000).map(|i| format!("{i:016}")).collect();
        let (r, _) = eval(s, json!(big), "self.all(x, self.exists_one(y, x == y))");
        assert_eq!(r, format!("error: {COST_LIMIT_EXCEEDED}"));
    }
}
