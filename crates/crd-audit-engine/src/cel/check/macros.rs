//! Macros as cel-go expands them (`parser/macro.go`: `has`, `all`, `exists`, `exists_one`,
//! `map`, `filter`, and the extensions' two-variable and optional forms), lowered into the
//! comprehensions over `@result` the checker then types, as `checker/checker.go` checks a
//! `Comprehension`.

use super::*;

/// A node of a macro's expansion: the user's sub-expressions and the nodes cel-go adds
/// (at the macro call's position).
pub(super) enum Low<'e> {
    Real(&'e Expr),
    Ident(String),
    Lit(Literal),
    Call(&'static str, Vec<Low<'e>>),
    Member(&'static str, Box<Low<'e>>, Vec<Low<'e>>),
    List(Vec<Low<'e>>),
    EmptyMap,
    Compr(Box<Compr<'e>>),
}

pub(super) struct Compr<'e> {
    pub(super) range: Low<'e>,
    pub(super) var: String,
    pub(super) var2: Option<String>,
    pub(super) accu: String,
    pub(super) init: Low<'e>,
    pub(super) cond: Low<'e>,
    pub(super) step: Low<'e>,
    pub(super) result: Low<'e>,
}

pub(super) fn accu<'e>() -> Low<'e> {
    Low::Ident(ACCUMULATOR.to_string())
}

/// cel-go's expansion of a macro node.
pub(super) fn lower<'e>(
    kind: Loop,
    var: &str,
    var2: Option<&str>,
    range: &'e Expr,
    filter: Option<&'e Expr>,
    transform: Option<&'e Expr>,
) -> Compr<'e> {
    let real = |e: Option<&'e Expr>| e.map_or(Low::Lit(Literal::Null), Low::Real);
    let comp = |init: Low<'e>, cond: Low<'e>, step: Low<'e>, result: Low<'e>| Compr {
        range: Low::Real(range),
        var: var.to_string(),
        var2: var2.map(str::to_string),
        accu: ACCUMULATOR.to_string(),
        init,
        cond,
        step,
        result,
    };
    let filtered = |step: Low<'e>| match filter {
        Some(p) => Low::Call("_?_:_", vec![Low::Real(p), step, accu()]),
        None => step,
    };
    match kind {
        Loop::All => comp(
            Low::Lit(Literal::Bool(true)),
            Low::Call("@not_strictly_false", vec![accu()]),
            Low::Call("_&&_", vec![accu(), real(filter)]),
            accu(),
        ),
        Loop::Exists => comp(
            Low::Lit(Literal::Bool(false)),
            Low::Call("@not_strictly_false", vec![Low::Call("!_", vec![accu()])]),
            Low::Call("_||_", vec![accu(), real(filter)]),
            accu(),
        ),
        Loop::ExistsOne => comp(
            Low::Lit(Literal::Int(0)),
            Low::Lit(Literal::Bool(true)),
            Low::Call(
                "_?_:_",
                vec![
                    real(filter),
                    Low::Call("_+_", vec![accu(), Low::Lit(Literal::Int(1))]),
                    accu(),
                ],
            ),
            Low::Call("_==_", vec![accu(), Low::Lit(Literal::Int(1))]),
        ),
        Loop::Map | Loop::TransformList => comp(
            Low::List(Vec::new()),
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "_+_",
                vec![accu(), Low::List(vec![real(transform)])],
            )),
            accu(),
        ),
        Loop::Filter => comp(
            Low::List(Vec::new()),
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "_+_",
                vec![accu(), Low::List(vec![Low::Ident(var.to_string())])],
            )),
            accu(),
        ),
        Loop::TransformMap => comp(
            Low::EmptyMap,
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "cel.@mapInsert",
                vec![accu(), Low::Ident(var.to_string()), real(transform)],
            )),
            accu(),
        ),
        Loop::TransformMapEntry => comp(
            Low::EmptyMap,
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call("cel.@mapInsert", vec![accu(), real(transform)])),
            accu(),
        ),
        Loop::OptMap | Loop::OptFlatMap => {
            let is_ident = matches!(range.kind, ExprKind::Ident(_));
            let target = || {
                if is_ident {
                    Low::Real(range)
                } else {
                    Low::Ident("@target".into())
                }
            };
            let bound = Low::Compr(Box::new(Compr {
                range: Low::List(Vec::new()),
                var: "#unused".into(),
                var2: None,
                accu: var.to_string(),
                init: Low::Member("value", Box::new(target()), Vec::new()),
                cond: Low::Lit(Literal::Bool(false)),
                step: Low::Ident(var.to_string()),
                result: real(transform),
            }));
            let mapped = if kind == Loop::OptMap {
                Low::Call("optional.of", vec![bound])
            } else {
                bound
            };
            let res = Low::Call(
                "_?_:_",
                vec![
                    Low::Member("hasValue", Box::new(target()), Vec::new()),
                    mapped,
                    Low::Call("optional.none", Vec::new()),
                ],
            );
            if is_ident {
                // A comprehension binding nothing, returning `res`.
                Compr {
                    range: Low::List(Vec::new()),
                    var: "#unused".into(),
                    var2: None,
                    accu: "#none".into(),
                    init: Low::Lit(Literal::Null),
                    cond: Low::Lit(Literal::Bool(false)),
                    step: Low::Lit(Literal::Null),
                    result: res,
                }
            } else {
                Compr {
                    range: Low::List(Vec::new()),
                    var: "#unused".into(),
                    var2: None,
                    accu: "@target".into(),
                    init: Low::Real(range),
                    cond: Low::Lit(Literal::Bool(false)),
                    step: Low::Ident("@target".into()),
                    result: res,
                }
            }
        }
        Loop::SortBy => {
            let input = "@__sortBy_input__";
            let mapped = Low::Compr(Box::new(Compr {
                range: Low::Ident(input.into()),
                var: var.to_string(),
                var2: None,
                accu: ACCUMULATOR.to_string(),
                init: Low::List(Vec::new()),
                cond: Low::Lit(Literal::Bool(true)),
                step: Low::Call("_+_", vec![accu(), Low::List(vec![real(transform)])]),
                result: accu(),
            }));
            Compr {
                range: Low::List(Vec::new()),
                var: "#unused".into(),
                var2: None,
                accu: input.into(),
                init: Low::Real(range),
                cond: Low::Lit(Literal::Bool(false)),
                step: Low::Ident(input.into()),
                result: Low::Member(
                    "@sortByAssociatedKeys",
                    Box::new(Low::Ident(input.into())),
                    vec![mapped],
                ),
            }
        }
    }
}

impl Checker<'_> {
    pub(super) fn low(&mut self, at: u32, l: &Low) -> (CelType, usize) {
        let (t, kind) = match l {
            Low::Real(e) => return self.expr(e),
            Low::Ident(n) => {
                let t = match self.resolve_simple(n) {
                    Some(t) => t,
                    None => {
                        self.err(
                            at,
                            format!("undeclared reference to '{n}' (in container '')"),
                        );
                        CelType::Error
                    }
                };
                (t, TKind::Ident(n.clone()))
            }
            Low::Lit(lit) => (literal_type(lit), TKind::Lit(lit.clone())),
            Low::Call(f, args) => {
                let (ts, arg_ids): (Vec<CelType>, Vec<usize>) =
                    args.iter().map(|a| self.low(at, a)).unzip();
                let exprs = self.low_offsets(at, args);
                let (t, ids) = match functions_in(self.env).get(f) {
                    Some(fd) => self.resolve_types(at, f, fd, false, ts, &exprs),
                    None => (CelType::Error, Vec::new()),
                };
                let kind = TKind::Call {
                    function: f.to_string(),
                    target: None,
                    args: arg_ids,
                    overloads: ids,
                };
                (t, kind)
            }
            Low::Member(f, target, args) => {
                let (ts, arg_ids): (Vec<CelType>, Vec<usize>) =
                    args.iter().map(|a| self.low(at, a)).unzip();
                let (tt, target_id) = self.low(at, target);
                let mut all = vec![tt];
                all.extend(ts);
                let (t, ids) = match functions_in(self.env).get(f) {
                    Some(fd) => self.resolve_types(at, f, fd, true, all, &[]),
                    None => (CelType::Error, Vec::new()),
                };
                let kind = TKind::Call {
                    function: f.to_string(),
                    target: Some(target_id),
                    args: arg_ids,
                    overloads: ids,
                };
                (t, kind)
            }
            Low::List(elems) => {
                let mut elem: Option<CelType> = None;
                let mut ids = Vec::new();
                for x in elems {
                    let (t, id) = self.low(at, x);
                    ids.push(id);
                    elem = Some(self.join(elem, t));
                }
                let t = match elem {
                    Some(t) => CelType::list(t),
                    None => {
                        let v = self.new_var();
                        CelType::list(v)
                    }
                };
                (t, TKind::List(ids))
            }
            Low::EmptyMap => {
                let k = self.new_var();
                let v = self.new_var();
                (CelType::map(k, v), TKind::Map(Vec::new()))
            }
            Low::Compr(c) => self.comprehension(at, c),
        };
        let id = self.node(kind, &t, at);
        (t, id)
    }

    /// Positions of a lowered call's arguments (for `&&`/`||` argument errors): synthetic
    /// nodes sit at the macro's position.
    pub(super) fn low_offsets(&self, at: u32, args: &[Low]) -> Vec<Expr> {
        args.iter()
            .map(|a| {
                let off = match a {
                    Low::Real(e) => e.offset,
                    _ => at,
                };
                Expr {
                    offset: off,
                    kind: ExprKind::Lit(Literal::Null),
                }
            })
            .collect()
    }

    pub(super) fn comprehension(&mut self, at: u32, c: &Compr) -> (CelType, TKind) {
        let (range_t, range) = self.low(at, &c.range);
        let (accu_t, init) = self.low(at, &c.init);
        let range_t = self.substitute(&range_t, false);
        let scope_base = self.scopes.len();
        self.scopes.push((c.accu.clone(), accu_t.clone()));
        let (v1, v2) = match &range_t {
            CelType::List(e) => {
                if c.var2.is_some() {
                    (CelType::Int, (**e).clone())
                } else {
                    ((**e).clone(), CelType::Error)
                }
            }
            CelType::Map(k, v) => ((**k).clone(), (**v).clone()),
            CelType::Dyn | CelType::Error | CelType::Param(_) => {
                self.is_assignable(&CelType::Dyn, &range_t);
                (CelType::Dyn, CelType::Dyn)
            }
            t => {
                let range_at = match &c.range {
                    Low::Real(e) => e.offset,
                    _ => at,
                };
                let msg = format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    t.format()
                );
                self.err(range_at, msg);
                (CelType::Error, CelType::Error)
            }
        };
        self.scopes.push((c.var.clone(), v1));
        if let Some(v) = &c.var2 {
            self.scopes.push((v.clone(), v2));
        }
        let (cond_t, cond) = self.low(at, &c.cond);
        if !self.is_assignable(&CelType::Bool, &cond_t) {
            let msg = format!("expected type 'bool' but found '{}'", cond_t.format());
            self.err(low_at(at, &c.cond), msg);
        }
        let (step_t, step) = self.low(at, &c.step);
        if !self.is_assignable(&accu_t, &step_t) {
            let msg = format!(
                "expected type '{}' but found '{}'",
                accu_t.format(),
                step_t.format()
            );
            self.err(low_at(at, &c.step), msg);
        }
        // Leave the loop's scope (iteration variables) before the result.
        self.scopes.truncate(scope_base + 1);
        let (r, result) = self.low(at, &c.result);
        self.scopes.truncate(scope_base);
        let kind = TKind::Compr {
            range,
            var: c.var.clone(),
            var2: c.var2.clone(),
            accu: c.accu.clone(),
            init,
            cond,
            step,
            result,
        };
        (self.substitute(&r, false), kind)
    }
}

pub(super) fn low_at(at: u32, l: &Low) -> u32 {
    match l {
        Low::Real(e) => e.offset,
        _ => at,
    }
}
