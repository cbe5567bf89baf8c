//! `x-kubernetes-validations` rules on an object, as the custom resource strategy runs them
//! after the schema validation: each rule is compiled once per CRD version; on an object,
//! every schema node with rules is evaluated with `self` bound to its value, within the
//! per-call cost limit and the per-object cost budget. Transition rules (using `oldSelf`)
//! are skipped as on create, unless `optionalOldSelf` makes `oldSelf` an empty optional.
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel/validation.go`.

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::cel::ast::Expr;
use crate::cel::compile::compile_in;
use crate::cel::env::Env;
use crate::cel::eval::{COST_LIMIT_EXCEEDED, Interp};
use crate::cel::types::{DeclTypes, Kind, TypeId};
use crate::cel::value::Val;
use crate::schema::{Props, SchemaOrBool, ValidationRule};
use crate::validate::ratchet::RatchetScope;
use serde_json::Value;

/// `celconfig.PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// `celconfig.RuntimeCELCostBudget`: the budget of all rules on one object.
pub const RUNTIME_BUDGET: i64 = 10_000_000;

/// Prefix of the evaluation errors that come from this engine's own gaps, not from the rule.
pub const UNSUPPORTED_PREFIX: &str = "crd-audit: ";

type SingleOverloads = Vec<(u32, String, &'static str)>;

struct CompiledRule {
    rule: ValidationRule,
    expr: Result<Expr, String>,
    message_expr: Option<Expr>,
    /// `single_overloads` of the rule's and the message expression's programs.
    singles: (SingleOverloads, SingleOverloads),
    uses_old_self: bool,
    reason: ErrorType,
    /// The `fieldPath` as upstream normalizes it (see [`valid_field_path`]), rendered;
    /// `None` when there is none or it is not valid for the schema.
    field_path: Option<String>,
}

/// The rules of one CRD version, compiled.
pub struct CelValidator {
    types: DeclTypes,
    /// Rules by type node.
    rules: Vec<Vec<CompiledRule>>,
    /// Whether a node or one below it has rules.
    below: Vec<bool>,
    count: usize,
    /// The cost budget of all rules on one object ([`RUNTIME_BUDGET`] unless set).
    pub(crate) budget: i64,
}

impl std::fmt::Debug for CelValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CelValidator({} rules)", self.count)
    }
}

/// What evaluating the rules of one object gave.
#[derive(Default, Debug)]
pub struct Outcome {
    pub causes: Vec<Cause>,
    /// On an UPDATE: the failures that ratcheting tolerated, as the server's Warning headers
    /// word them (the causes' messages).
    pub warnings: Vec<String>,
    /// Rules that were not evaluated: transition rules on create, and rules this engine
    /// cannot evaluate (each of the latter also has a cause saying so).
    pub not_evaluated: usize,
}

fn compile_rule(
    r: &ValidationRule,
    s: &Props,
    types: &DeclTypes,
    t: TypeId,
    env: Env,
) -> CompiledRule {
    let optional = r.optional_old_self == Some(true);
    let compiled = if r.rule.trim().is_empty() {
        Err(String::new())
    } else {
        compile_in(&r.rule, types, t, optional, false, env).map_err(|e| e.rule_detail())
    };
    let uses_old_self = compiled.as_ref().is_ok_and(|p| p.uses_old_self);
    let message = match &compiled {
        Ok(_) if !r.message_expression.is_empty() => {
            compile_in(&r.message_expression, types, t, optional, true, env).ok()
        }
        _ => None,
    };
    let singles = (
        compiled
            .as_ref()
            .map(|p| p.single_overloads.clone())
            .unwrap_or_default(),
        message
            .as_ref()
            .map(|p| p.single_overloads.clone())
            .unwrap_or_default(),
    );
    // Upstream resolves the fieldPath last, so a messageExpression that does not compile
    // leaves the rule without one.
    let field_path =
        if r.field_path.is_empty() || (!r.message_expression.is_empty() && message.is_none()) {
            None
        } else {
            valid_field_path(&r.field_path, s)
                .ok()
                .map(|p| p.as_str().to_string())
        };
    let message_expr = message.map(|p| p.expr);
    let reason = r
        .reason
        .as_deref()
        .and_then(ErrorType::from_reason)
        .unwrap_or(ErrorType::Invalid);
    CompiledRule {
        rule: r.clone(),
        expr: compiled.map(|p| p.expr),
        singles,
        message_expr,
        uses_old_self,
        reason,
        field_path,
    }
}

impl CelValidator {
    /// Compiles the rules of a structural schema in the newest environment; `None` when it
    /// has none.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn new(schema: &Props) -> Option<CelValidator> {
        CelValidator::new_in(schema, Env::LATEST)
    }

    /// Compiles the rules of a structural schema in the environment `env`; `None` when it
    /// has none.
    pub fn new_in(schema: &Props, env: Env) -> Option<CelValidator> {
        let types = DeclTypes::new(schema);
        let mut v = CelValidator {
            rules: Vec::new(),
            below: Vec::new(),
            count: 0,
            types,
            budget: RUNTIME_BUDGET,
        };
        let mut rules: Vec<Vec<CompiledRule>> = Vec::new();
        collect(schema, v.types.root(), &v.types, env, &mut rules);
        if rules.iter().all(Vec::is_empty) {
            return None;
        }
        v.count = rules.iter().map(Vec::len).sum();
        let len = rules.len();
        v.rules = rules;
        v.below = vec![false; len];
        v.mark_below(v.types.root());
        Some(v)
    }

    fn mark_below(&mut self, t: TypeId) -> bool {
        let n = self.types.node(t);
        let children: Vec<TypeId> = n.fields.values().copied().chain(n.elem).collect();
        let mut any = self.rules.get(t as usize).is_some_and(|r| !r.is_empty());
        for c in children {
            any |= self.mark_below(c);
        }
        if let Some(b) = self.below.get_mut(t as usize) {
            *b = any;
        }
        any
    }

    /// Evaluates every rule on the object.
    pub fn validate(&self, obj: &Value) -> Outcome {
        self.validate_at(obj, &Path::root(), false)
    }

    /// Evaluates every rule on a value that lives at `base` (a CRD `default`); with
    /// `old_is_self`, transition rules run with `oldSelf` bound to the value itself, as the
    /// server checks defaults.
    pub fn validate_at(&self, obj: &Value, base: &Path, old_is_self: bool) -> Outcome {
        let mut run = Run {
            v: self,
            out: Outcome::default(),
            budget: self.budget,
            stopped: false,
            old_is_self,
            update: false,
        };
        run.node(obj, None, self.types.root(), base, RatchetScope::default());
        run.out
    }

    /// Evaluates every rule on an UPDATE (the custom resource strategy's `ValidateUpdate`):
    /// `oldSelf` is bound where the old object has a value at the same place (properties by
    /// name, items of map lists by their keys), transition rules run there, and the failures
    /// of other rules in values that ratcheting finds unchanged become warnings. `scope` is
    /// the root's pairing with the old object (over the structural schema).
    pub fn validate_update(&self, obj: &Value, old: &Value, scope: RatchetScope<'_>) -> Outcome {
        let mut run = Run {
            v: self,
            out: Outcome::default(),
            budget: self.budget,
            stopped: false,
            old_is_self: false,
            update: true,
        };
        run.node(obj, Some(old), self.types.root(), &Path::root(), scope);
        run.out
    }
}

fn collect(s: &Props, t: TypeId, types: &DeclTypes, env: Env, rules: &mut Vec<Vec<CompiledRule>>) {
    if rules.len() <= t as usize {
        rules.resize_with(t as usize + 1, Vec::new);
    }
    rules[t as usize] = s
        .x_validations
        .iter()
        .map(|r| compile_rule(r, s, types, t, env))
        .collect();
    let n = types.node(t);
    match n.kind {
        Kind::Object => {
            for (k, p) in &s.properties {
                if let Some(&c) = n.fields.get(k) {
                    collect(p, c, types, env, rules);
                }
            }
        }
        Kind::Map => {
            if let (Some(SchemaOrBool::Schema(a)), Some(e)) = (&s.additional_properties, n.elem) {
                collect(a, e, types, env, rules);
            }
        }
        Kind::List => {
            if let (Some(i), Some(e)) = (s.items_schema(), n.elem) {
                collect(i, e, types, env, rules);
            }
        }
        _ => {}
    }
}

struct Run<'v> {
    v: &'v CelValidator,
    out: Outcome,
    budget: i64,
    stopped: bool,
    old_is_self: bool,
    /// An UPDATE: transition rules without an old value are skipped silently.
    update: bool,
}

impl<'o> Run<'_> {
    /// The rules at and below one value; `old` is the old object's value paired with it
    /// (`None`, or JSON null: none).
    fn node(
        &mut self,
        obj: &'o Value,
        old: Option<&'o Value>,
        t: TypeId,
        path: &Path,
        scope: RatchetScope<'o>,
    ) {
        if self.stopped || obj.is_null() || !self.v.below.get(t as usize).copied().unwrap_or(false)
        {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules_at(obj, old, t, path, &scope);
        let n = self.v.types.node(t);
        let old_map = old.and_then(Value::as_object);
        match obj {
            Value::Object(m) => match n.kind {
                Kind::Object => {
                    for (k, val) in m {
                        if let Some(&c) = n.fields.get(k) {
                            let o = old_map.and_then(|om| om.get(k));
                            self.node(val, o, c, &path.child(k), scope.key(k));
                        }
                    }
                }
                Kind::Map => {
                    if let Some(e) = n.elem {
                        for (k, val) in m {
                            let o = old_map.and_then(|om| om.get(k));
                            self.node(val, o, e, &path.key(k), scope.key(k));
                        }
                    }
                }
                _ => {}
            },
            Value::Array(items) => {
                if let Some(e) = n.elem {
                    // Old items pair by the keys of a map list, through the same pairing as
                    // ratcheting (`makeMapList`).
                    let mut paired = scope.current.and_then(|c| c.items());
                    for (i, val) in items.iter().enumerate() {
                        let o = match (&mut paired, old) {
                            (Some(p), Some(_)) => p.old_item(val),
                            _ => None,
                        };
                        let s = scope.index(paired.as_mut(), i);
                        self.node(val, o, e, &path.index(i), s);
                    }
                }
            }
            _ => {}
        }
    }

    fn rules_at(
        &mut self,
        obj: &Value,
        old: Option<&Value>,
        t: TypeId,
        path: &Path,
        scope: &RatchetScope<'_>,
    ) {
        let Some(rules) = self.v.rules.get(t as usize).filter(|r| !r.is_empty()) else {
            return;
        };
        let types = &self.v.types;
        let schema_type = BadValue::Str(types.node(t).schema_type.clone());
        if self.stopped {
            return;
        }
        // A node with rules (even ones that will be skipped) finds the budget spent before
        // running any: the budget may reach exactly zero at the previous node.
        if self.budget <= 0 {
            self.out_of_budget(path, &schema_type);
            return;
        }
        for r in rules {
            if self.stopped {
                return;
            }
            if r.uses_old_self
                && r.rule.optional_old_self != Some(true)
                && !self.old_is_self
                && old.is_none()
            {
                // A transition rule without an old value (every one on create).
                if !self.update {
                    self.out.not_evaluated += 1;
                }
                continue;
            }
            let expr = match &r.expr {
                Ok(e) => e,
                Err(e) if e.is_empty() => continue,
                Err(e) => {
                    self.out.causes.push(Cause::invalid(
                        path.clone(),
                        schema_type.clone(),
                        format!("rule compile error: {e}"),
                    ));
                    continue;
                }
            };
            let this = Val::from_json(obj, Some(t), types);
            let mut env: Vec<(&str, Val)> = vec![("self", this.clone())];
            if r.uses_old_self {
                let before = match (old, self.old_is_self) {
                    (Some(o), _) => Some(Val::from_json(o, Some(t), types)),
                    (None, true) => Some(this.clone()),
                    (None, false) => None,
                };
                let bound = match (before, r.rule.optional_old_self == Some(true)) {
                    (Some(b), true) => Val::Optional(Some(std::rc::Rc::new(b))),
                    (Some(b), false) => b,
                    (None, _) => Val::Optional(None),
                };
                env.push(("oldSelf", bound));
            }
            let mut it = Interp::new(types, PER_CALL_LIMIT);
            it.single_overloads = &r.singles.0;
            let result = it.eval(expr, &mut env);
            // A rule that costs more than what is left stops everything, whatever its
            // result (even the per-call limit's error); one that costs exactly what is left
            // leaves zero, and the next rules of this node still run.
            if !self.spend(it.cost) {
                self.out_of_budget(path, &schema_type);
                return;
            }
            match result {
                Err(e) if e.0.starts_with(COST_LIMIT_EXCEEDED) => {
                    self.out.causes.push(Cause::invalid(
                        path.clone(),
                        schema_type.clone(),
                        format!(
                            "'{}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            e.0,
                            error_string(&r.rule)
                        ),
                    ));
                    self.stopped = true;
                    return;
                }
                Err(e) if e.0.starts_with("no such overload") => {
                    self.out.causes.push(Cause::invalid(
                        path.clone(),
                        schema_type.clone(),
                        format!(
                            "'{}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            e.0,
                            error_string(&r.rule)
                        ),
                    ));
                }
                Err(e) if e.0.starts_with(UNSUPPORTED_PREFIX) => {
                    self.out.not_evaluated += 1;
                    self.out.causes.push(Cause::internal(
                        path.clone(),
                        format!("{} (rule not evaluated: {})", e.0, error_string(&r.rule)),
                    ));
                }
                Err(e) => {
                    self.out.causes.push(Cause::invalid(
                        path.clone(),
                        schema_type.clone(),
                        format!("{} evaluating rule: {}", e.0, error_string(&r.rule)),
                    ));
                }
                Ok(Val::Bool(true)) => {}
                Ok(Val::Bool(false)) => {
                    // The error's path: the node's, then the normalized fieldPath as one
                    // more element.
                    let field = match &r.field_path {
                        Some(fp) => path.child(fp),
                        None => path.clone(),
                    };
                    let message = match self.message(r, &mut env) {
                        Ok(m) => m,
                        Err(detail) => {
                            let cause = Cause::invalid(field, schema_type.clone(), detail);
                            self.add_failure(r, scope, cause);
                            self.stopped = true;
                            return;
                        }
                    };
                    let value = match obj {
                        Value::Object(_) | Value::Array(_) => BadValue::Omit,
                        v => BadValue::from_value(v),
                    };
                    let cause = match r.reason {
                        ErrorType::Forbidden => Cause::forbidden(field, message),
                        ErrorType::Required => Cause::required(field, message),
                        ErrorType::Duplicate => Cause::duplicate(field, value),
                        _ => Cause::invalid(field, value, message),
                    };
                    self.add_failure(r, scope, cause);
                }
                Ok(_) => {
                    self.out.causes.push(Cause::invalid(
                        path.clone(),
                        schema_type.clone(),
                        format!(
                            "rule did not evaluate to a bool evaluating rule: {}",
                            error_string(&r.rule)
                        ),
                    ));
                }
            }
        }
    }

    /// Takes an evaluation's cost from the budget; `false` (and the budget untouched) when
    /// it costs more than what is left.
    fn spend(&mut self, cost: u64) -> bool {
        match i64::try_from(cost) {
            Ok(c) if c <= self.budget => {
                self.budget -= c;
                true
            }
            _ => false,
        }
    }

    /// The cause that ends the evaluation when the budget is spent.
    fn out_of_budget(&mut self, path: &Path, schema_type: &BadValue) {
        self.out.causes.push(Cause::invalid(
            path.clone(),
            schema_type.clone(),
            "validation failed due to running out of cost budget, no further validation rules will be run",
        ));
        self.stopped = true;
    }

    /// A failed rule's cause, or, when ratcheting tolerates it (not a transition rule, and
    /// its value unchanged), a warning (`addErr`).
    fn add_failure(&mut self, r: &CompiledRule, scope: &RatchetScope<'_>, cause: Cause) {
        if !r.uses_old_self && scope.tolerates() {
            self.out.warnings.push(cause.message());
        } else {
            self.out.causes.push(cause);
        }
    }

    /// The message of a failed rule: its messageExpression's result (trimmed) when that
    /// gives a non-empty one-line string of at most 5 KiB, else the message or
    /// `failed rule: <rule>`. `Err`: the detail of the error that stops the validation (the
    /// cost limit or the budget exceeded by the messageExpression).
    fn message<'a>(
        &mut self,
        r: &'a CompiledRule,
        env: &mut Vec<(&'a str, Val)>,
    ) -> Result<String, String> {
        if let Some(me) = &r.message_expr {
            let mut it = Interp::new(&self.v.types, PER_CALL_LIMIT);
            it.single_overloads = &r.singles.1;
            let result = it.eval(me, env);
            if !self.spend(it.cost) {
                return Err("messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_string());
            }
            match result {
                Err(e) if e.0.starts_with(COST_LIMIT_EXCEEDED) => {
                    return Err(format!(
                        "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                        crate::go::strconv::quote(&r.rule.message_expression)
                    ));
                }
                Ok(Val::Str(s)) => {
                    let s = s.as_str().trim();
                    if !s.is_empty() && s.len() <= 5 * 1024 && !s.contains('\n') {
                        return Ok(s.to_string());
                    }
                }
                _ => {}
            }
        }
        Ok(message_or_default(&r.rule))
    }
}

/// `ruleMessageOrDefault`.
fn message_or_default(r: &ValidationRule) -> String {
    if r.message.trim().is_empty() {
        format!("failed rule: {}", r.rule.trim())
    } else {
        r.message.trim().to_string()
    }
}

/// `ruleErrorString`.
fn error_string(r: &ValidationRule) -> String {
    if r.message.trim().is_empty() {
        r.rule.trim().to_string()
    } else {
        r.message.trim().to_string()
    }
}

/// Why a rule's `fieldPath` is not a valid path (the text of upstream's errors).
const NOT_A_FIELD: &str = "does not refer to a valid field";
const UNEXPECTED_END: &str = "unexpected end of JSON path";

/// The next token of a `fieldPath`, as upstream's scanner splits it: a single-quoted string
/// (up to the first quote not preceded by a backslash, or to the end), one of the delimiters
/// `.`, `[`, `]`, or the text up to the next delimiter. `None` at the end.
fn field_path_token<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let b = rest.as_bytes();
    if b.is_empty() {
        return None;
    }
    let end = if b[0] == b'\'' {
        (1..b.len())
            .find(|&i| b[i] == b'\'' && b[i - 1] != b'\\')
            .map_or(b.len(), |i| i + 1)
    } else {
        match b.iter().position(|c| matches!(c, b'.' | b'[' | b']')) {
            Some(0) => 1,
            Some(i) => i,
            None => b.len(),
        }
    };
    let (token, tail) = rest.split_at(end);
    *rest = tail;
    Some(token)
}

/// The inside of a `['...']` accessor with its escapes resolved: a backslash and the
/// character after it (other than a line break) must be one of `\a \b \f \n \r \t \v \' \\`.
fn unescape_single_quoted(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&d) = chars.peek().filter(|&&d| d != '\n') else {
            out.push(c);
            continue;
        };
        chars.next();
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            _ => return Err(format!("invalid string literal: invalid escape char \\{d}")),
        });
    }
    Ok(out)
}

/// A rule's `fieldPath` resolved against the schema of the node that holds the rule, as
/// upstream's `ValidFieldPath` resolves it: `.name` and `['name']` both name a property when
/// the schema has properties, and a map key when it has `additionalProperties` (whatever the
/// accessor); `['...']` strings are unescaped. The path is relative (property names render
/// as `a.b`, keys as `[k]`, so `.m['k'].c` is `m[k].c` and a leading key is `[k]`); `Err`
/// when the path is not valid for the schema.
pub fn valid_field_path(fp: &str, schema: &Props) -> Result<Path, String> {
    let mut path = Path::root();
    let mut node = Some(schema);
    let mut rest = fp;
    let mut step = |name: &str, path: &mut Path| -> Result<(), String> {
        // Past a map whose values have no schema upstream would dereference nil.
        let n = node.ok_or(NOT_A_FIELD)?;
        if !n.properties.is_empty() {
            *path = path.child(name);
            node = Some(n.properties.get(name).ok_or(NOT_A_FIELD)?);
        } else if let Some(a) = &n.additional_properties {
            *path = path.key(name);
            node = match a {
                SchemaOrBool::Schema(s) => Some(s),
                SchemaOrBool::Bool(_) => None,
            };
        } else {
            return Err(NOT_A_FIELD.into());
        }
        Ok(())
    };
    while let Some(token) = field_path_token(&mut rest) {
        match token {
            "[" => {
                let quoted = field_path_token(&mut rest).ok_or(UNEXPECTED_END)?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| format!("expected single quoted string but got {quoted}"))?;
                step(&unescape_single_quoted(inner)?, &mut path)?;
                match field_path_token(&mut rest) {
                    Some("]") => {}
                    Some(t) => return Err(format!("expected ] but got {t}")),
                    None => return Err(UNEXPECTED_END.into()),
                }
            }
            "." => {
                let name = field_path_token(&mut rest).ok_or(UNEXPECTED_END)?;
                step(name, &mut path)?;
            }
            t => return Err(format!("expected [ or . but got: {t}")),
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(rules: serde_json::Value) -> CelValidator {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"n": {"type": "integer"}, "m": {"type": "object",
                "additionalProperties": {"type": "string"}, "x-kubernetes-validations": rules}}}}});
        CelValidator::new(&Props::from_value("", &schema).unwrap()).unwrap()
    }

    fn messages(o: &Outcome) -> Vec<String> {
        o.causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn failed_rules_use_message_reason_and_field_path() {
        let v = validator(json!([
            {"rule": "!('bad' in self)", "message": "no bad", "fieldPath": "['bad']"},
            {"rule": "self.size() < 2", "reason": "FieldValueForbidden"},
            {"rule": "self.all(k, self[k] != '')", "messageExpression": "'empty value in ' + string(self.size()) + ' entries'"}
        ]));
        let o = v.validate(&json!({"spec": {"m": {"bad": "", "b": "x"}}}));
        assert_eq!(
            messages(&o),
            vec![
                "spec.m.[bad]: Invalid value: no bad",
                "spec.m: Forbidden: failed rule: self.size() < 2",
                "spec.m: Invalid value: empty value in 2 entries",
            ]
        );
    }

    #[test]
    fn field_paths_resolve_against_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "a.b": {"type": "string"},
            "o": {"type": "object", "properties": {"c": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "object",
                "additionalProperties": {"type": "string"}}}}});
        let s = Props::from_value("", &schema).unwrap();
        let fp = |p: &str| valid_field_path(p, &s).map(|p| p.as_str().to_string());
        assert_eq!(fp("['a.b']").as_deref(), Ok("a.b"));
        assert_eq!(fp(".o['c']").as_deref(), Ok("o.c"));
        assert_eq!(fp(".m.k['z.y']").as_deref(), Ok("m[k][z.y]"));
        assert_eq!(fp(".m['it\\'s'].]").as_deref(), Ok("m[it's][]]"));
        assert_eq!(fp(".m['\\t']").as_deref(), Ok("m[\t]"));
        for bad in [
            ".x",
            ".o.c.d",
            "['a.b'",
            "['a.b']x",
            "o",
            ".m['k\\\\']",
            ".m['\\x']",
            ".",
        ] {
            assert!(fp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn transition_rules_are_counted_and_compile_errors_reported() {
        let v = validator(json!([
            {"rule": "self == oldSelf"},
            {"rule": "self.frobnicate()"}
        ]));
        let o = v.validate(&json!({"spec": {"m": {"a": "b"}}}));
        assert_eq!(o.not_evaluated, 1);
        assert_eq!(o.causes.len(), 1);
        assert_eq!(o.causes[0].kind, ErrorType::Invalid);
        let detail = &o.causes[0].detail;
        assert!(
            detail.starts_with("rule compile error: compilation failed: ERROR: <input>:1:16: undeclared reference to 'frobnicate'"),
            "{detail}"
        );
    }
}
