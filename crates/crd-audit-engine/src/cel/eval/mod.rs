//! The interpreter: evaluates a checked expression over values typed by the schema, with
//! cel-go's semantics (strict argument evaluation, errors absorbed by `&&`/`||` and the
//! quantifier macros, runtime dispatch of functions) and its runtime cost accounting.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::functions;
use super::types::DeclTypes;
use super::value::{Ext, Str, Val, equals, find_key, map_find};
use std::rc::Rc;

mod comprehension;
mod go_values;

pub use go_values::{go_map_key_equal, go_type_name, is_zero, owned};
use go_values::{index_or_error, not_a_lister};

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

    /// Whether the error ends the whole evaluation: the cost limit, or a panic cel-go
    /// recovers from (an `internal error`), which no `&&`, `||` or macro absorbs.
    pub fn aborts(&self) -> bool {
        self.is_cancel() || self.0.starts_with(INTERNAL_ERROR)
    }
}

/// The start of the text of an error cel-go recovered from a panic.
const INTERNAL_ERROR: &str = "internal error: ";

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
    /// Variables bound by a macro whose value cel-go computes on first reference (the
    /// accumulator of a comprehension): their position in the scope and what computing the
    /// value costs, charged when (and if) the variable is first read.
    lazy: Vec<(usize, u64)>,
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

/// Whether cel-go plans the expression as an attribute (see [`Interp::attribute`]): a
/// variable (not a type name), a selection, an index or a conditional.
fn is_attribute(e: &Expr, env: &Env) -> bool {
    match &e.kind {
        ExprKind::Ident(n) => {
            let bare = n.trim_start_matches('.');
            env.iter().any(|(v, _)| *v == bare) || !TYPE_VALUES.contains(&bare)
        }
        ExprKind::Select { .. } => true,
        ExprKind::Call {
            function,
            target: None,
            ..
        } => matches!(function.as_str(), "_[_]" | "_[?_]" | "_?_:_"),
        _ => false,
    }
}

/// Whether an expression is a constant after cel-go's planning (literals, type names, lists
/// and maps of constants, conversions of constants): constants cost nothing at run time.
pub fn is_const(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lit(_) => true,
        ExprKind::Ident(n) => TYPE_VALUES.contains(&n.trim_start_matches('.')),
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
            lazy: Vec::new(),
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
            ExprKind::Ident(_) | ExprKind::Select { .. } => self.attribute(e, env, true),
            ExprKind::Call {
                function,
                target: None,
                ..
            } if matches!(function.as_str(), "_[_]" | "_[?_]" | "_?_:_") => {
                self.attribute(e, env, true)
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
                Loop::SortBy => self.sort_by(e.offset, var, range, transform.as_deref(), env),
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

    /// Evaluates what cel-go plans as an attribute: a variable, a field selection, an index,
    /// an optional selection or index, a presence test or a conditional. The cost tracker
    /// charges each qualification (field, index) 1, and the evaluation of a whole chain of
    /// them 1 more (the "root" observation), except when the chain is a conditional's branch,
    /// the operand of a presence test or an index qualifier: these are folded into the
    /// enclosing attribute and only their qualifications are charged (`observed` false). A
    /// chain starting on another kind of expression (a call, a list, a comprehension) is
    /// charged that expression's cost, and 1 for its own evaluation when observed. The
    /// conditional itself and a presence test cost nothing.
    fn attribute<'e, 'a>(
        &mut self,
        e: &'e Expr,
        env: &mut Env<'e, 'a>,
        observed: bool,
    ) -> EvalResult<'a> {
        match &e.kind {
            ExprKind::Ident(name) => {
                let bare = name.trim_start_matches('.');
                let found = if name.starts_with('.') {
                    env.iter().position(|(n, _)| *n == bare)
                } else {
                    env.iter().rposition(|(n, _)| *n == bare)
                };
                if let Some(at) = found {
                    if observed {
                        self.charge(1)?;
                    }
                    if let Some(i) = self.lazy.iter().position(|(p, _)| *p == at) {
                        let (_, c) = self.lazy.swap_remove(i);
                        self.charge(c)?;
                    }
                    return lift(env[at].1.clone());
                }
                // A type name is a constant.
                if TYPE_VALUES.contains(&bare) {
                    return Ok(Val::Type(Rc::from(bare)));
                }
                if observed {
                    self.charge(1)?;
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
                    return Ok(Val::Type(Rc::from(q.as_str())));
                }
                // A presence test resolves its operand without observing it.
                let v = self.operand(operand, env, observed && !*test_only)?;
                if *test_only || !(*optional || matches!(v, Val::Optional(_))) {
                    self.charge(1)?;
                    return self.select(v, field, *test_only, *optional);
                }
                let r = self.select(v, field, false, *optional);
                self.charge_if_present(&r)?;
                r
            }
            ExprKind::Call { function, args, .. } if function == "_?_:_" => {
                let branch = match self.eval(&args[0], env)? {
                    Val::Bool(true) => &args[1],
                    Val::Bool(false) => &args[2],
                    _ => return Err(EvalError::new("no such overload")),
                };
                if is_attribute(branch, env) {
                    self.attribute(branch, env, false)
                } else {
                    self.eval(branch, env)
                }
            }
            ExprKind::Call { function, args, .. } => {
                // `_[_]`, `_[?_]`
                let c = self.operand(&args[0], env, observed)?;
                let i = if is_attribute(&args[1], env) {
                    self.attribute(&args[1], env, false)?
                } else {
                    self.eval(&args[1], env)?
                };
                let optional = function == "_[?_]";
                if !(optional || matches!(c, Val::Optional(_))) {
                    self.charge(1)?;
                    return self.index(&c, &i, false);
                }
                let r = self.index(&c, &i, optional);
                self.charge_if_present(&r)?;
                r
            }
            _ => self.eval(e, env),
        }
    }

    /// An optional qualification (`.?f`, `[?i]`, or any on an optional value) is charged
    /// only when it finds a value.
    fn charge_if_present(&mut self, r: &EvalResult) -> Result<(), EvalError> {
        if matches!(r, Ok(Val::Optional(Some(_)))) {
            self.charge(1)?;
        }
        Ok(())
    }

    /// The operand of a selection or index: the rest of the chain when it is an attribute,
    /// else a value that becomes the chain's start.
    fn operand<'e, 'a>(
        &mut self,
        e: &'e Expr,
        env: &mut Env<'e, 'a>,
        observed: bool,
    ) -> EvalResult<'a> {
        if is_attribute(e, env) {
            return self.attribute(e, env, observed);
        }
        let v = self.eval(e, env)?;
        if observed {
            self.charge(1)?;
        }
        Ok(v)
    }

    /// `opt.or(alt)` and `opt.orValue(alt)`: cel-go evaluates them without a call (no cost)
    /// and evaluates `alt` only when `opt` is empty.
    fn optional_or<'e, 'a>(
        &mut self,
        or_value: bool,
        target: &'e Expr,
        alt: &'e Expr,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        match self.eval(target, env)? {
            Val::Optional(Some(v)) if or_value => Ok((*v).clone()),
            v @ Val::Optional(Some(_)) => Ok(v),
            Val::Optional(None) => self.eval(alt, env),
            _ => Err(EvalError::new("no such overload")),
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
        let overload = self.single_overload(e.offset, &name);
        if let Some(t) = target
            && args.len() == 1
            && matches!(name.as_ref(), "or" | "orValue")
        {
            return self.optional_or(name == "orValue", t, &args[0], env);
        }
        // `x in [constants]`: cel-go turns a constant list of primitive values into a set at
        // planning; the membership test is then not a call and costs nothing (and `x in []`
        // is the constant false).
        let set_membership =
            name == "@in" && target.is_none() && args.len() == 2 && is_const(&args[1]);
        if set_membership
            && let ExprKind::List { elements, .. } = &args[1].kind
            && elements.is_empty()
        {
            return Ok(Val::Bool(false));
        }
        let mut vals: Vec<Val<'a>> = Vec::with_capacity(args.len() + 1);
        if let Some(t) = target {
            let v = self.eval(t, env);
            if args.is_empty() && self.asserts_list(&name, e.offset) {
                // Upstream's cost tracker of the call asserts that the receiver is a list: any
                // other value (an error too) makes the evaluation panic.
                match &v {
                    Err(err) if err.aborts() => {}
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
            match v {
                Ok(v) => vals.push(v),
                Err(err) if !err.aborts() && args.is_empty() => {
                    let e = Val::Err(Rc::from(err.0.as_str()));
                    vals.push(e.clone());
                    self.charge(functions::cost(
                        &name,
                        true,
                        &vals,
                        Some(&e),
                        self.types,
                        overload,
                    ))?;
                    return Err(err);
                }
                Err(err) => return Err(err),
            }
        }
        for (i, a) in args.iter().enumerate() {
            match self.eval(a, env) {
                Ok(v) => vals.push(v),
                // A call stops at its first erroneous argument, its result; cel-go's cost
                // tracker still charges it when that argument is the last one (all of them
                // were evaluated).
                Err(err) if !err.aborts() && i + 1 == args.len() && !set_membership => {
                    let e = Val::Err(Rc::from(err.0.as_str()));
                    vals.push(e.clone());
                    let c = functions::cost(
                        &name,
                        target.is_some(),
                        &vals,
                        Some(&e),
                        self.types,
                        overload,
                    );
                    self.charge(c)?;
                    return Err(err);
                }
                Err(err) => return Err(err),
            }
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
                self.charge(functions::cost(
                    &name,
                    target.is_some(),
                    &vals,
                    None,
                    self.types,
                    overload,
                ))?;
                return result;
            }
        }
        let result = match name.as_ref() {
            "_==_" | "_!=_" => {
                let eq = equals(&vals[0], &vals[1], self.types);
                Ok(Val::Bool(eq == (name == "_==_")))
            }
            f if functions::is_singleton(f) => functions::call(self, f, target.is_some(), &vals),
            _ => match overload {
                Some(id) => functions::call_overload(self, &name, id, &vals),
                None => functions::call(self, &name, target.is_some(), &vals),
            },
        };
        let set_membership = set_membership
            && matches!(&vals[1], Val::List(items) if items.iter().all(|x| matches!(
                x,
                Val::Bool(_) | Val::Int(_) | Val::Uint(_) | Val::Double(_) | Val::Str(_)
            )));
        if !folded && !set_membership {
            // The cost of a call that fails is computed with the error as its result.
            let failed = result
                .as_ref()
                .err()
                .map(|e| Val::Err(Rc::from(e.0.as_str())));
            let c = functions::cost(
                &name,
                target.is_some(),
                &vals,
                result.as_ref().ok().or(failed.as_ref()),
                self.types,
                overload,
            );
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
                Err(e) if e.aborts() => return Err(e),
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
