//! The comprehensions: the loops of the macros (`all`, `exists`, `exists_one`, `map`,
//! `filter`, `transformList`, `transformMap`, ...), cel-go's `sortBy` and `optMap` /
//! `optFlatMap` expansions, with their runtime cost as cel-go charges it.

use super::*;

impl Interp<'_> {
    /// `target.optMap(var, t)`, `target.optFlatMap(var, t)`: cel-go's expansion is
    /// `target.hasValue() ? optional.of(<var = target.value()> t) : optional.none()` (without
    /// `optional.of` for optFlatMap), where a target that is not an identifier is first bound
    /// to a hidden variable, referenced by `hasValue()` and `value()`. Bindings are
    /// comprehensions over the constant `[]` whose accumulator is computed on first
    /// reference.
    pub(super) fn opt_map<'e, 'a>(
        &mut self,
        kind: Loop,
        var: &'e str,
        range: &'e Expr,
        transform: Option<&'e Expr>,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let r = self.eval(range, env);
        // hasValue(), and the hidden variable's reference.
        let has_value = if matches!(range.kind, ExprKind::Ident(_)) {
            1
        } else {
            2
        };
        match &r {
            Err(e) if e.aborts() => return r,
            _ => self.charge(has_value)?,
        }
        let inner = match r? {
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
        let Some(t) = transform else {
            return Err(EvalError::new("no such overload"));
        };
        env.push((var, inner));
        // `value()` and the target's reference, when `var` is first read.
        self.lazy.push((env.len() - 1, 2));
        let out = self.eval(t, env);
        let at = env.len() - 1;
        self.lazy.retain(|(p, _)| *p != at);
        env.pop();
        if kind == Loop::OptMap {
            if matches!(&out, Err(e) if e.aborts()) {
                return out;
            }
            self.charge(1)?; // optional.of
            Ok(Val::Optional(Some(Rc::new(out?))))
        } else {
            out
        }
    }

    /// `list.sortBy(var, key)`: cel-go binds the list to a hidden variable (see
    /// [`Interp::opt_map`]) and evaluates
    /// `input.@sortByAssociatedKeys(input.map(var, key))`.
    pub(super) fn sort_by<'e, 'a>(
        &mut self,
        offset: u32,
        var: &'e str,
        range: &'e Expr,
        transform: Option<&'e Expr>,
        env: &mut Env<'e, 'a>,
    ) -> EvalResult<'a> {
        let r = self.eval(range, env);
        if matches!(&r, Err(e) if !e.aborts()) {
            // The receiver's reference, where the call stops.
            self.charge(1)?;
        }
        let r = r?;
        // The hidden variable's two references: the receiver and the map's range.
        self.charge(2)?;
        let overload = self.single_overload(offset, "@sortByAssociatedKeys");
        // When the keys are an error, the call is made with it: the cost tracker of a call
        // checked to one overload asserts that they are a list (a panic); otherwise the call
        // costs 1.
        let keys_failed = |it: &mut Self, err: EvalError| -> EvalResult<'a> {
            if overload.is_some() {
                return Err(not_a_lister("*types.Err"));
            }
            it.charge(1)?;
            Err(err)
        };
        let Some(items) = r.list_items(self.types) else {
            let err = EvalError::new(format!(
                "got '{}', expected iterable type",
                go_type_name(&r)
            ));
            return keys_failed(self, err);
        };
        let Some(t) = transform else {
            return Err(EvalError::new("no such overload"));
        };
        let mut keys = Vec::with_capacity(items.len());
        let mut failed = None;
        for item in &items {
            if failed.is_some() {
                // `accu + [key]` stops at the erroneous accumulator.
                self.charge(1)?;
                continue;
            }
            env.push((var, lift(item.clone())?));
            let k = self.eval(t, env);
            env.pop();
            match k {
                Ok(k) => keys.push(k),
                Err(e) if e.aborts() => return Err(e),
                Err(e) => failed = Some(e),
            }
            // `accu + [key]`
            self.charge(12)?;
        }
        // The map's result (`accu`).
        self.charge(1)?;
        if let Some(e) = failed {
            return keys_failed(self, e);
        }
        let args = [r.clone(), Val::List(Rc::new(keys.clone()))];
        let c = functions::cost(
            "@sortByAssociatedKeys",
            true,
            &args,
            None,
            self.types,
            overload,
        );
        self.charge(c)?;
        let out = functions::sort_by_keys(items, keys)?;
        Ok(Val::List(Rc::new(out)))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval_loop<'e, 'a>(
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
        // The accumulator's initial value (`true`, `false`, `0`, `[]`, `{}`) is a constant.
        // cel-go's fold, per element: the loop condition (`@not_strictly_false(accu)` for
        // `all`, `@not_strictly_false(!accu)` for `exists`, the constant `true` otherwise),
        // then the step; the condition is checked again only before a next element.
        let quantifier = matches!(kind, Loop::All | Loop::Exists);
        let condition: u64 = match kind {
            Loop::All => 2,
            Loop::Exists => 3,
            _ => 0,
        };
        // all/exists: the first error, absorbed if the result is decided later.
        let mut err: Option<EvalError> = None;
        // The other macros: an error makes the accumulator an error, and the fold goes on:
        // a later step that adds to it stops at its first operand (the accumulator, 1),
        // and a predicate's error replaces it.
        let mut accu_err: Option<EvalError> = None;
        let mut count = 0usize;
        let mut list_out: Vec<Val<'a>> = Vec::new();
        let mut map_out: Vec<(Val<'a>, Val<'a>)> = Vec::new();
        let total = pairs.len();
        for (n, (a, b)) in pairs.into_iter().enumerate() {
            let more = n + 1 < total;
            // The condition, and the accumulator as the step's first operand (`accu && p`,
            // `accu || p`).
            if quantifier {
                self.charge(condition + 1)?;
            }
            let key = a.clone();
            env.push((var, a));
            if let (Some(v2), Some(b)) = (var2, b) {
                env.push((v2, b));
            }
            let pops = if var2.is_some() { 2 } else { 1 };
            let outcome = self.loop_step(kind, filter, transform, accu_err.is_some(), env);
            for _ in 0..pops {
                env.pop();
            }
            let value = match outcome {
                Ok(v) => v,
                Err(e) if e.aborts() => return Err(e),
                Err(e) if quantifier => {
                    err.get_or_insert(e);
                    continue;
                }
                Err(e) => {
                    accu_err = Some(e);
                    continue;
                }
            };
            match (kind, value) {
                (Loop::All, Some(Val::Bool(false))) | (Loop::Exists, Some(Val::Bool(true))) => {
                    // The condition sees the decided accumulator before a next element;
                    // then the result (`accu`).
                    self.charge(if more { condition + 1 } else { 1 })?;
                    return Ok(Val::Bool(kind == Loop::Exists));
                }
                (Loop::ExistsOne, Some(_)) => count += 1,
                (Loop::Filter, Some(_)) => list_out.push(key),
                (Loop::Map | Loop::TransformList, Some(v)) => list_out.push(v),
                (Loop::TransformMap, Some(v)) => {
                    if map_out.iter().any(|(k2, _)| go_map_key_equal(&key, k2)) {
                        accu_err = Some(EvalError::new(format!(
                            "insert failed: key {} already exists",
                            super::super::value::display(&key)
                        )));
                        continue;
                    }
                    map_out.push((key, v))
                }
                (Loop::TransformMapEntry, Some(v)) => {
                    let Some(entries) = v.map_entries(self.types) else {
                        accu_err = Some(EvalError::new(format!(
                            "no such overload: cel.@mapInsert(map, {})",
                            v.type_name()
                        )));
                        continue;
                    };
                    for (k, v) in entries {
                        if map_out.iter().any(|(k2, _)| go_map_key_equal(&k, k2)) {
                            accu_err = Some(EvalError::new(format!(
                                "insert failed: key {} already exists",
                                super::super::value::display(&k)
                            )));
                            break;
                        }
                        map_out.push((k, v));
                    }
                }
                _ => {}
            }
        }
        // The result expression: `accu` (`accu == 1` for exists_one, which stops at an
        // erroneous accumulator).
        self.charge(if kind == Loop::ExistsOne && accu_err.is_none() {
            2
        } else {
            1
        })?;
        if let Some(e) = err.or(accu_err) {
            return Err(e);
        }
        Ok(match kind {
            Loop::All => Val::Bool(true),
            Loop::Exists => Val::Bool(false),
            Loop::ExistsOne => Val::Bool(count == 1),
            Loop::Filter | Loop::Map | Loop::TransformList => Val::List(Rc::new(list_out)),
            Loop::TransformMap | Loop::TransformMapEntry => Val::Map(Rc::new(map_out)),
            Loop::OptMap | Loop::OptFlatMap | Loop::SortBy => Val::Null,
        })
    }

    /// One step of a fold with the iteration variables bound: the predicate, then what the
    /// step adds to the accumulator (`None` when it adds nothing), with its cost. For
    /// all/exists, the predicate's value. The other macros' steps are
    /// `p ? <add> : accu` (the accumulator as a conditional's branch costs nothing) with
    /// `<add>` one of `accu + [x]` (filter: 13), `accu + 1` (exists_one: 2),
    /// `accu + [t]` (map, transformList: 12 and the transform), `cel.@mapInsert(accu, k, t)`
    /// (transformMap: 3 and the transform), `cel.@mapInsert(accu, t)` (transformMapEntry: 2
    /// and the transform); with an erroneous accumulator `<add>` costs 1.
    pub(super) fn loop_step<'e, 'a>(
        &mut self,
        kind: Loop,
        filter: Option<&'e Expr>,
        transform: Option<&'e Expr>,
        accu_err: bool,
        env: &mut Env<'e, 'a>,
    ) -> Result<Option<Val<'a>>, EvalError> {
        let pass = match filter {
            Some(p) => match self.eval(p, env)? {
                Val::Bool(b) => b,
                _ => return Err(EvalError::new("no such overload")),
            },
            None => true,
        };
        if matches!(kind, Loop::All | Loop::Exists) {
            return Ok(Some(Val::Bool(pass)));
        }
        if !pass {
            return Ok(None);
        }
        if accu_err {
            self.charge(1)?;
            return Ok(None);
        }
        let (base, value) = match kind {
            Loop::Filter => (13, Val::Null),
            Loop::ExistsOne => (2, Val::Null),
            _ => {
                let t = transform.ok_or_else(|| EvalError::new("no such overload"))?;
                let base = match kind {
                    Loop::TransformMap => 3,
                    Loop::TransformMapEntry => 2,
                    _ => 12,
                };
                let v = self.eval(t, env);
                if matches!(&v, Err(e) if !e.aborts()) {
                    // The call (or list) is still made with the error.
                    self.charge(base)?;
                }
                (base, v?)
            }
        };
        self.charge(base)?;
        Ok(Some(value))
    }
}
