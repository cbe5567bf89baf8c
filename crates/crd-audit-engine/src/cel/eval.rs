//! The interpreter: evaluates a checked expression over values typed by the schema, with
//! cel-go's semantics (strict argument evaluation, errors absorbed by `&&`/`||` and the
//! quantifier macros, runtime dispatch of functions) and its runtime cost accounting.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::functions;
use super::types::DeclTypes;
use super::value::{Ext, Str, Val, equals, find_key, map_find};
use std::rc::Rc;

/// An evaluation error, with cel-go's text.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(pub String);

impl EvalError {
    pub fn new(s: impl Into<String>) -> EvalError {
        EvalError(s.into())
    }

    pub fn is_cancel(&self) -> bool {
        self.0 == COST_LIMIT_EXCEEDED
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
    /// The calls checked to one overload (`Program::single_overloads`).
    pub single_overloads: &'t [(u32, String, &'static str)],
}

/// The type names usable as values (`type(x) == int`).
const TYPE_VALUES: [&str; 15] = [
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
    "optional_type",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "net.IP",
    "net.CIDR",
];

/// An error value read from the object becomes an error.
fn lift(v: Val<'_>) -> EvalResult<'_> {
    match v {
        Val::Err(e) => Err(EvalError::new(e.to_string())),
        v => Ok(v),
    }
}

/// `a.b.c` of plain selections on an identifier.
fn qualified_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.trim_start_matches('.').to_string()),
        ExprKind::Select {
            operand,
            field,
            test_only: false,
            optional: false,
        } => qualified_name(operand).map(|q| format!("{q}.{field}")),
        _ => None,
    }
}

/// The root identifier of a qualified name.
fn root_ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Select { operand, .. } => root_ident(operand),
        _ => None,
    }
}

/// Whether an expression is a constant after cel-go's planning (literals, lists and maps of
/// constants, conversions of constants): constants cost nothing at run time.
pub fn is_const(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lit(_) => true,
        ExprKind::List { elements, .. } => elements.iter().all(is_const),
        ExprKind::Map { entries } => entries.iter().all(|(k, v, _)| is_const(k) && is_const(v)),
        ExprKind::Call {
            function,
            target: None,
            args,
        } => {
            args.len() == 1
                && matches!(
                    function.as_str(),
                    "bool"
                        | "bytes"
                        | "double"
                        | "duration"
                        | "dyn"
                        | "int"
                        | "string"
                        | "timestamp"
                        | "type"
                        | "uint"
                )
                && is_const(&args[0])
        }
        _ => false,
    }
}

impl<'t> Interp<'t> {
    pub fn new(types: &'t DeclTypes, limit: u64) -> Self {
        Interp {
            types,
            cost: 0,
            limit,
            single_overloads: &[],
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

    pub fn eval<'e, 'a>(&mut self, e: &'e Expr, env: &mut Env<'e, 'a>) -> EvalResult<'a> {
        match &e.kind {
            ExprKind::Lit(l) => Ok(literal(l)),
            ExprKind::Ident(name) => {
                self.charge(1)?;
                let bare = name.trim_start_matches('.');
                if !name.starts_with('.')
                    && let Some((_, v)) = env.iter().rev().find(|(n, _)| *n == bare)
                {
                    return lift(v.clone());
                }
                if name.starts_with('.')
                    && let Some((_, v)) = env.iter().find(|(n, _)| *n == bare)
                {
                    return lift(v.clone());
                }
                if TYPE_VALUES.contains(&bare) {
                    return Ok(Val::Type(Rc::from(bare)));
                }
                Err(EvalError::new(format!("no such attribute: {bare}")))
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                if !*test_only
                    && !*optional
                    && root_ident(e).is_some_and(|r| !env.iter().any(|(n, _)| *n == r))
                    && let Some(q) = qualified_name(e)
                    && TYPE_VALUES.contains(&q.as_str())
                {
                    self.charge(1)?;
                    return Ok(Val::Type(Rc::from(q.as_str())));
                }
                let v = self.eval(operand, env)?;
                if !*test_only {
                    self.charge(1)?;
                }
                self.select(v, field, *test_only, *optional)
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(e, function, target.as_deref(), args, env),
            ExprKind::List { elements, optional } => {
                if !is_const(e) {
                    self.charge(LIST_CREATE_COST)?;
                }
                let mut out = Vec::with_capacity(elements.len());
                for (i, el) in elements.iter().enumerate() {
                    let v = self.eval(el, env)?;
                    if optional.contains(&i) {
                        match v {
                            Val::Optional(Some(x)) => out.push((*x).clone()),
                            Val::Optional(None) => {}
                            other => {
                                return Err(EvalError::new(format!(
                                    "cannot initialize optional list element from non-optional value {}",
                                    super::value::display(&other)
                                )));
                            }
                        }
                    } else {
                        out.push(v);
                    }
                }
                Ok(Val::List(Rc::new(out)))
            }
            ExprKind::Map { entries } => {
                if !is_const(e) {
                    self.charge(MAP_CREATE_COST)?;
                }
                let mut out: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(entries.len());
                for (k, v, opt) in entries {
                    let k = self.eval(k, env)?;
                    let v = self.eval(v, env)?;
                    let same = |x: &Val| go_map_key_equal(x, &k);
                    let v = if *opt {
                        match v {
                            Val::Optional(Some(x)) => (*x).clone(),
                            Val::Optional(None) => {
                                out.retain(|(x, _)| !same(x));
                                continue;
                            }
                            other => {
                                return Err(EvalError::new(format!(
                                    "cannot initialize optional entry '{}' from non-optional value {}",
                                    super::value::display(&k),
                                    super::value::display(&other)
                                )));
                            }
                        }
                    } else {
                        v
                    };
                    match out.iter_mut().find(|(x, _)| same(x)) {
                        Some(slot) => slot.1 = v,
                        None => out.push((k, v)),
                    }
                }
                Ok(Val::Map(Rc::new(out)))
            }
            ExprKind::Struct { name, .. } => Err(EvalError::new(format!(
                "unknown type: {}",
                name.trim_start_matches('.')
            ))),
            ExprKind::Loop {
                kind,
                var,
                var2,
                range,
                filter,
                transform,
            } => match kind {
                Loop::OptMap | Loop::OptFlatMap => {
                    self.opt_map(*kind, var, range, transform.as_deref(), env)
                }
                Loop::SortBy => self.sort_by(var, range, transform.as_deref(), env),
                _ => self.eval_loop(
                    *kind,
                    var,
                    var2.as_deref(),
                    range,
                    filter.as_deref(),
                    transform.as_deref(),
                    env,
                ),
            },
        }
    }

    /// `v.field`, `has(v.field)`, `v.?field`; a plain selection on an optional is optional.
    fn select<'a>(
        &mut self,
        v: Val<'a>,
        field: &str,
        test_only: bool,
        optional: bool,
    ) -> EvalResult<'a> {
        let (v, optional) = match v {
            Val::Optional(None) => return Ok(Val::Optional(None)),
            Val::Optional(Some(x)) => ((*x).clone(), true),
            other => (other, optional),
        };
        let key = Val::Str(Str::Borrowed(field));
        let found = self.qualify(&v, &key, test_only || optional)?;
        if test_only {
            return Ok(Val::Bool(found.is_some()));
        }
        if optional {
            return Ok(Val::Optional(found.map(Rc::new)));
        }
        Ok(found.unwrap_or(Val::Null))
    }

    fn call<'e, 'a>(
        &mut self,
        e: &'e Expr,
        function: &str,
        target: Option<&'e Expr>,
        args: &'e [Expr],
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        match function {
            "_&&_" | "_||_" => return self.logic(function == "_||_", &args[0], &args[1], env),
            "_?_:_" => {
                return match self.eval(&args[0], env)? {
                    Val::Bool(true) => self.eval(&args[1], env),
                    Val::Bool(false) => self.eval(&args[2], env),
                    _ => Err(EvalError::new("no such overload")),
                };
            }
            _ => {}
        }
        // A namespaced function (`optional.of(x)`, `sets.contains(a, b)`), unless the
        // namespace is a variable.
        let mut name = std::borrow::Cow::Borrowed(function);
        let mut target = target;
        if let Some(t) = target
            && root_ident(t).is_some_and(|r| !env.iter().any(|(n, _)| *n == r))
            && let Some(q) = qualified_name(t)
        {
            let full = format!("{q}.{function}");
            if super::decls::functions().contains_key(full.as_str()) {
                name = std::borrow::Cow::Owned(full);
                target = None;
            }
        }
        let mut vals: Vec<Val<'a>> = Vec::with_capacity(args.len() + 1);
        if let Some(t) = target {
            let v = self.eval(t, env);
            if args.is_empty() && self.asserts_list(&name, e.offset) {
                // Upstream's cost tracker of the call asserts that the receiver is a list: any
                // other value (an error too) makes the evaluation panic.
                match &v {
                    Err(err) if err.is_cancel() => {}
                    Err(_) => return Err(not_a_lister("*types.Err")),
                    Ok(x) if x.list_len().is_none() => {
                        let go_type = match x {
                            Val::JsonObj(..) => "*common.unstructuredMap",
                            x => go_type_name(x),
                        };
                        return Err(not_a_lister(go_type));
                    }
                    Ok(_) => {}
                }
            }
            vals.push(v?);
        }
        for a in args {
            vals.push(self.eval(a, env)?);
        }
        let folded = is_const(e);
        // With a constant pattern, cel-go precompiles the regular expression and the call
        // only takes a string.
        if name == "matches" && vals.len() == 2 && !matches!(vals[0], Val::Str(_)) {
            let pattern = if target.is_some() {
                args.first()
            } else {
                args.get(1)
            };
            if pattern.is_some_and(is_const) && matches!(vals[1], Val::Str(_)) {
                let result = Err(EvalError::new("no such overload"));
                self.charge(functions::cost(&name, target.is_some(), &vals, None))?;
                return result;
            }
        }
        let result = match name.as_ref() {
            "_==_" | "_!=_" => {
                let eq = equals(&vals[0], &vals[1], self.types);
                Ok(Val::Bool(eq == (name == "_==_")))
            }
            "_[_]" | "_[?_]" => self.index(&vals[0], &vals[1], name == "_[?_]"),
            f if functions::is_singleton(f) => functions::call(self, f, target.is_some(), &vals),
            _ => match self.single_overload(e.offset, &name) {
                Some(id) => functions::call_overload(self, &name, id, &vals),
                None => functions::call(self, &name, target.is_some(), &vals),
            },
        };
        if !folded {
            let c = functions::cost(&name, target.is_some(), &vals, result.as_ref().ok());
            self.charge(c)?;
        }
        result
    }

    /// `a && b`, `a || b` with cel-go's error absorption.
    fn logic<'e, 'a>(
        &mut self,
        or: bool,
        lhs: &'e Expr,
        rhs: &'e Expr,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let mut err: Option<EvalError> = None;
        for term in [lhs, rhs] {
            match self.eval(term, env) {
                Ok(Val::Bool(b)) if b == or => return Ok(Val::Bool(or)),
                Ok(Val::Bool(_)) => {}
                Ok(_) => {
                    err.get_or_insert(EvalError::new("no such overload"));
                }
                Err(e) if e.is_cancel() => return Err(e),
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(Val::Bool(!or)),
        }
    }

    /// `c[i]` and `c[?i]` (an optional receiver makes the result optional).
    pub fn index<'a>(&mut self, c: &Val<'a>, i: &Val<'a>, optional: bool) -> EvalResult<'a> {
        let (c, optional) = match c {
            Val::Optional(None) => return Ok(Val::Optional(None)),
            Val::Optional(Some(x)) => ((**x).clone(), true),
            other => (other.clone(), optional),
        };
        if let Some(t) = self.bad_qualifier(i) {
            return Err(EvalError::new(format!("invalid qualifier type: {t}")));
        }
        let found = self.qualify(&c, i, optional)?;
        Ok(if optional {
            Val::Optional(found.map(Rc::new))
        } else {
            found.unwrap_or(Val::Null)
        })
    }

    /// cel-go's `refQualify`: the value at key or index `i` of `c`; `None` when absent and
    /// `presence_test` (otherwise absence is an error). Maps look the key up, lists take
    /// numeric indexes only, other values have no keys.
    fn qualify<'a>(
        &mut self,
        c: &Val<'a>,
        i: &Val<'_>,
        presence_test: bool,
    ) -> Result<Option<Val<'a>>, EvalError> {
        match c {
            Val::JsonObj(..) | Val::Map(_) => match map_find(c, i, self.types) {
                Some(Ok(v)) => Ok(Some(lift(v)?)),
                Some(Err(e)) => Err(EvalError::new(e)),
                None if presence_test => Ok(None),
                None => Err(EvalError::new(format!(
                    "no such key: {}",
                    super::value::display(i)
                ))),
            },
            Val::List(_) | Val::JsonList(..) => {
                let idx = index_or_error(i)?;
                let len = c.list_len().unwrap_or(0);
                if idx >= 0 && (idx as u64) < len as u64 {
                    let v = c.list_item(idx as usize, self.types).unwrap_or(Val::Null);
                    Ok(Some(lift(v)?))
                } else if presence_test {
                    Ok(None)
                } else {
                    Err(EvalError::new(format!(
                        "index out of bounds: {}",
                        super::value::display(i)
                    )))
                }
            }
            _ if presence_test => Ok(None),
            _ => Err(EvalError::new(format!(
                "no such key: {}",
                super::value::display(i)
            ))),
        }
    }

    /// `x in list`, `key in map`.
    pub fn contains(&mut self, coll: &Val, x: &Val) -> Result<bool, EvalError> {
        if let Some(items) = coll.list_items(self.types) {
            for item in items {
                let item = lift(item)?;
                if equals(&item, x, self.types) {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        match coll {
            Val::JsonObj(..) => match map_find(coll, x, self.types) {
                Some(Ok(v)) => lift(v).map(|_| true),
                Some(Err(e)) => Err(EvalError::new(e)),
                None => Ok(false),
            },
            Val::Map(m) => Ok(find_key(m, x).is_some()),
            _ => Err(EvalError::new("no such overload")),
        }
    }

    fn opt_map<'e, 'a>(
        &mut self,
        kind: Loop,
        var: &'e str,
        range: &'e Expr,
        transform: Option<&'e Expr>,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let r = self.eval(range, env)?;
        // `target.hasValue() ? optional.of(<bind var = target.value()> t) : optional.none()`
        let is_ident = matches!(range.kind, ExprKind::Ident(_));
        if !is_ident {
            // The target is bound to a variable first (an empty-range comprehension).
            self.charge(LIST_CREATE_COST)?;
        }
        self.charge(2)?; // hasValue() and the target's reference
        let inner = match r {
            Val::Optional(None) => {
                self.charge(1)?; // optional.none()
                return Ok(Val::Optional(None));
            }
            Val::Optional(Some(v)) => (*v).clone(),
            other => {
                return Err(EvalError::new(format!(
                    "no such overload: hasValue({})",
                    other.type_name()
                )));
            }
        };
        // value(), its target reference, the empty range.
        self.charge(2 + LIST_CREATE_COST)?;
        let Some(t) = transform else {
            return Err(EvalError::new("no such overload"));
        };
        env.push((var, inner));
        let out = self.eval(t, env);
        env.pop();
        let out = out?;
        if kind == Loop::OptMap {
            self.charge(1)?; // optional.of
            Ok(Val::Optional(Some(Rc::new(out))))
        } else {
            Ok(out)
        }
    }

    fn sort_by<'e, 'a>(
        &mut self,
        var: &'e str,
        range: &'e Expr,
        transform: Option<&'e Expr>,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let r = self.eval(range, env)?;
        self.charge(LIST_CREATE_COST)?;
        let Some(items) = r.list_items(self.types) else {
            return Err(EvalError::new(format!(
                "got '{}', expected iterable type",
                go_type_name(&r)
            )));
        };
        let Some(t) = transform else {
            return Err(EvalError::new("no such overload"));
        };
        let mut keys = Vec::with_capacity(items.len());
        self.charge(1 + LIST_CREATE_COST)?;
        for item in &items {
            env.push((var, lift(item.clone())?));
            let k = self.eval(t, env);
            env.pop();
            keys.push(k?);
            self.charge(2 + LIST_CREATE_COST)?;
        }
        self.charge(3)?;
        let out = functions::sort_by_keys(items, keys)?;
        Ok(Val::List(Rc::new(out)))
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
        } else if var2.is_some() {
            return Err(EvalError::new(format!(
                "unsupported comprehension range type: {}",
                go_type_name(&r)
            )));
        } else {
            return Err(EvalError::new(format!(
                "got '{}', expected iterable type",
                go_type_name(&r)
            )));
        };
        // The accumulator's initial value: `[]` and `{}` are constants.
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
                    Loop::All | Loop::Exists | Loop::ExistsOne | Loop::Filter => {
                        pass.map(|b| Some(Val::Bool(b)))
                    }
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
                    if matches!(kind, Loop::All | Loop::Exists) && !e.is_cancel() {
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
                    if map_out.iter().any(|(k2, _)| go_map_key_equal(&key, k2)) {
                        return Err(EvalError::new(format!(
                            "insert failed: key {} already exists",
                            super::value::display(&key)
                        )));
                    }
                    map_out.push((key, v))
                }
                (Loop::TransformMapEntry, Some(v)) => {
                    self.charge(12)?;
                    let Some(entries) = v.map_entries(self.types) else {
                        return Err(EvalError::new(format!(
                            "no such overload: cel.@mapInsert(map, {})",
                            v.type_name()
                        )));
                    };
                    for (k, v) in entries {
                        if map_out.iter().any(|(k2, _)| go_map_key_equal(&k, k2)) {
                            return Err(EvalError::new(format!(
                                "insert failed: key {} already exists",
                                super::value::display(&k)
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

fn literal<'a>(l: &Literal) -> Val<'a> {
    match l {
        Literal::Null => Val::Null,
        Literal::Bool(b) => Val::Bool(*b),
        Literal::Int(i) => Val::Int(*i),
        Literal::Uint(u) => Val::Uint(*u),
        Literal::Double(d) => Val::Double(*d),
        Literal::String(s) => Val::string(s.as_str()),
        Literal::Bytes(b) => Val::Bytes(b.as_slice().into()),
    }
}

/// Identity of Go map keys (`map[ref.Val]`): same type and equal value.
pub fn go_map_key_equal(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Uint(x), Val::Uint(y)) => x == y,
        (Val::Double(x), Val::Double(y)) => x == y,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x.as_str() == y.as_str(),
        (Val::Null, Val::Null) => true,
        (Val::Duration(x), Val::Duration(y)) => x == y,
        (Val::Type(x), Val::Type(y)) => x == y,
        _ => false,
    }
}

impl Interp<'_> {
    /// The Go type of an index value cel-go cannot make a qualifier of (only strings, ints,
    /// uints, bools and doubles qualify).
    fn bad_qualifier(&self, v: &Val) -> Option<&'static str> {
        Some(match v {
            Val::Str(_) | Val::Int(_) | Val::Uint(_) | Val::Bool(_) | Val::Double(_) => {
                return None;
            }
            Val::JsonList(_, t) => match t.and_then(|t| self.types.node(t).list_type.as_deref()) {
                Some("map") => "*common.unstructuredMapList",
                Some("set") => "*common.unstructuredSetList",
                _ => "*common.unstructuredList",
            },
            Val::JsonObj(..) => "*common.unstructuredMap",
            Val::Ext(e) => match &**e {
                Ext::Quantity(_) => "cel.Quantity",
                Ext::Url(_) => "cel.URL",
                Ext::Ip(_) => "cel.IP",
                Ext::Cidr(_) => "cel.CIDR",
                Ext::Semver(_) => "cel.Semver",
                Ext::Format(_) => "cel.Format",
            },
            Val::Err(_) => return None,
            other => go_type_name(other),
        })
    }

    /// Whether the call's cost tracker asserts a list receiver: `distinct()` (one overload)
    /// and a `sort()` checked to one overload.
    fn asserts_list(&self, function: &str, offset: u32) -> bool {
        function == "distinct"
            || (function == "sort" && self.single_overload(offset, function).is_some())
    }

    /// The overload the checker resolved the call of `function` at `offset` to, if only one.
    fn single_overload(&self, offset: u32, function: &str) -> Option<&'static str> {
        let start = self
            .single_overloads
            .partition_point(|(o, _, _)| *o < offset);
        self.single_overloads[start..]
            .iter()
            .take_while(|(o, _, _)| *o == offset)
            .find(|(_, f, _)| f == function)
            .map(|(_, _, id)| *id)
    }
}

/// cel-go's `IndexOrError`: a list index from an int, or a uint or double that converts to
/// one without loss.
fn index_or_error(i: &Val) -> Result<i64, EvalError> {
    match *i {
        Val::Int(n) => Ok(n),
        Val::Double(d)
            if !d.is_nan()
                && d > -9.223_372_036_854_776e18
                && d < 9.223_372_036_854_776e18
                && (d as i64) as f64 == d =>
        {
            Ok(d as i64)
        }
        Val::Uint(u) if i64::try_from(u).is_ok() => Ok(u as i64),
        Val::Double(_) | Val::Uint(_) => Err(EvalError::new(format!(
            "unsupported index value {} in list",
            super::value::display(i)
        ))),
        _ => Err(EvalError::new(format!(
            "unsupported index type '{}' in list",
            i.type_name()
        ))),
    }
}

/// The error of cel-go's recovered panic on asserting `traits.Lister` of a value of Go type
/// `go_type` (Go names the first method of the interface the type lacks).
fn not_a_lister(go_type: &str) -> EvalError {
    let adders = [
        "types.Int",
        "types.Uint",
        "types.Double",
        "types.String",
        "types.Bytes",
        "types.Duration",
        "types.Timestamp",
    ];
    let missing = if adders.contains(&go_type) {
        "Contains"
    } else {
        "Add"
    };
    EvalError::new(format!(
        "internal error: interface conversion: {go_type} is not traits.Lister: missing method {missing}"
    ))
}

/// Go's `%T` of a cel-go value (in some error texts).
pub fn go_type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "types.Null",
        Val::Bool(_) => "types.Bool",
        Val::Int(_) => "types.Int",
        Val::Uint(_) => "types.Uint",
        Val::Double(_) => "types.Double",
        Val::Str(_) => "types.String",
        Val::Bytes(_) => "types.Bytes",
        Val::Duration(_) => "types.Duration",
        Val::Timestamp(..) => "types.Timestamp",
        Val::Type(_) => "*types.Type",
        Val::Optional(_) => "*types.Optional",
        Val::Err(_) => "*types.Err",
        Val::List(_) | Val::JsonList(..) => "*types.baseList",
        Val::Map(_) | Val::JsonObj(..) => "*types.baseMap",
        Val::Ext(_) => "ref.Val",
    }
}

/// Whether a value is the zero value of its type (`optional.ofNonZeroValue`).
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
        Val::Map(m) => m.is_empty(),
        Val::Duration(d) => *d == 0,
        Val::Timestamp(t, _) => *t == i128::from(super::lib::time::MIN_UNIX) * 1_000_000_000,
        _ => false,
    }
}

/// A string value made from owned text.
pub fn owned<'a>(s: String) -> Val<'a> {
    Val::Str(Str::Owned(s.into()))
}
