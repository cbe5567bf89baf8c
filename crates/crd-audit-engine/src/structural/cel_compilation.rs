//! CRD validation of `x-kubernetes-validations`: each rule's fields (`rule`, `message`,
//! `messageExpression`, `reason`, `fieldPath`, `optionalOldSelf`), its compilation and result
//! type (a bool; a string for `messageExpression`), and where `oldSelf` may be used.
//! Estimated costs are checked by [`crate::cel::cost_limits`]. Mirrors apiextensions-apiserver's
//! `pkg/apiserver/schema/cel/compilation.go` and the rule checks of
//! `pkg/apis/apiextensions/validation/validation.go`.

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::cel::compile::compile_in;
use crate::cel::env::Env;
use crate::cel::types::{DeclTypes, TypeId};
use crate::go;
use crate::schema::{Dependency, Items, Props, SchemaOrBool, ValidationRule};

const SUPPORTED_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Checks the fields of every rule of the schema rooted at `path` (`rule` given, `message`,
/// `messageExpression`, `reason`, `fieldPath`), in every nested schema as upstream walks
/// them. These are schema errors: they keep the rules of the schemas above them from being
/// compiled.
pub fn check_rule_fields(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    for (i, r) in s.x_validations.iter().enumerate() {
        rule_fields(r, s, &path.child("x-kubernetes-validations").index(i), out);
    }
    if let Some(SchemaOrBool::Schema(a)) = &s.additional_properties {
        check_rule_fields(a, &path.child("additionalProperties"), out);
    }
    for (k, p) in &s.properties {
        check_rule_fields(p, &path.child("properties").key(k), out);
    }
    if let Some(n) = &s.not {
        check_rule_fields(n, &path.child("not"), out);
    }
    for (key, list) in [
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
        ("anyOf", &s.any_of),
    ] {
        for (i, p) in list.iter().enumerate() {
            check_rule_fields(p, &path.child(key).index(i), out);
        }
    }
    for (k, p) in &s.definitions {
        check_rule_fields(p, &path.child("definitions").key(k), out);
    }
    match &s.items {
        Some(Items::Schema(item)) => check_rule_fields(item, &path.child("items"), out),
        Some(Items::Array(list)) => {
            for (i, p) in list.iter().enumerate() {
                check_rule_fields(p, &path.child("items").index(i), out);
            }
        }
        None => {}
    }
    for (k, d) in &s.dependencies {
        if let Dependency::Schema(p) = d {
            check_rule_fields(p, &path.child("dependencies").key(k), out);
        }
    }
}

/// Compiles every rule of the structural schema rooted at `path` in the CEL environment `env`
/// and checks their estimated costs. As upstream, the rules of a schema are not compiled when
/// it or a schema inside it has a schema error (`schema_errors`: the keyword checks and
/// [`check_rule_fields`]).
pub fn check_rules(
    s: &Props,
    path: &Path,
    schema_errors: &[Cause],
    env: Env,
    out: &mut Vec<Cause>,
) {
    let types = DeclTypes::new(s);
    let blocked = |at: &Path| {
        let at = at.as_str();
        schema_errors.iter().any(|c| {
            c.field
                .as_str()
                .strip_prefix(at)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    };
    let mut w = Walk {
        types: &types,
        env,
        blocked: &blocked,
        out,
    };
    w.walk(s, types.root(), path, None);
    out.extend(crate::cel::cost_limits::check_costs(s, path, env));
}

/// The walk of [`check_rules`] over a schema and its type.
struct Walk<'a> {
    types: &'a DeclTypes,
    env: Env,
    blocked: &'a dyn Fn(&Path) -> bool,
    out: &'a mut Vec<Cause>,
}

impl Walk<'_> {
    fn walk(&mut self, s: &Props, t: TypeId, path: &Path, uncorrelatable: Option<&Path>) {
        if !s.x_validations.is_empty() && !(self.blocked)(path) {
            for (i, r) in s.x_validations.iter().enumerate() {
                let at = path.child("x-kubernetes-validations").index(i);
                rule(r, t, self.types, self.env, &at, uncorrelatable, self.out);
            }
        }
        let n = self.types.node(t);
        for (k, p) in &s.properties {
            if let Some(&c) = n.fields.get(k) {
                self.walk(p, c, &path.child("properties").key(k), uncorrelatable);
            }
        }
        if let (Some(SchemaOrBool::Schema(a)), Some(e)) = (&s.additional_properties, n.elem) {
            self.walk(a, e, &path.child("additionalProperties"), uncorrelatable);
        }
        if let (Some(item), Some(e)) = (s.items_schema(), n.elem) {
            // Items of lists other than list-type map cannot be matched with their old values.
            let within = if s.x_list_type.as_deref() == Some("map") {
                uncorrelatable.cloned()
            } else {
                Some(uncorrelatable.cloned().unwrap_or_else(|| path.clone()))
            };
            self.walk(item, e, &path.child("items"), within.as_ref());
        }
    }
}

/// The rule as the server prints it in a bad value (its Go struct as JSON).
fn rendered(r: &ValidationRule) -> BadValue {
    let opt = |o: &Option<String>| {
        o.as_ref().map_or("null".to_string(), |s| {
            go::json::marshal(&serde_json::Value::String(s.clone()))
        })
    };
    let json = format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        go::json::marshal(&r.rule.clone().into()),
        go::json::marshal(&r.message.clone().into()),
        go::json::marshal(&r.message_expression.clone().into()),
        opt(&r.reason),
        go::json::marshal(&r.field_path.clone().into()),
        r.optional_old_self
            .map_or("null".to_string(), |b| b.to_string()),
    );
    BadValue::Rendered {
        value: serde_json::from_str(&json).unwrap_or_default(),
        json,
    }
}

/// The checks of one rule's fields.
fn rule_fields(r: &ValidationRule, s: &Props, at: &Path, out: &mut Vec<Cause>) {
    let rule_text = r.rule.trim();
    let message = r.message.trim();
    if rule_text.is_empty() {
        out.push(Cause::required(at.child("rule"), "rule is not specified"));
    } else if !r.message.is_empty() && message.is_empty() {
        out.push(Cause::invalid(
            at.child("message"),
            BadValue::Str(r.message.clone()),
            "must be non-empty if specified",
        ));
    } else if message.contains(['\n', '\r']) {
        out.push(Cause::invalid(
            at.child("message"),
            BadValue::Str(r.message.clone()),
            "must not contain line breaks",
        ));
    } else if rule_text.contains(['\n', '\r']) && message.is_empty() {
        // Even with a messageExpression.
        out.push(Cause::required(
            at.child("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    if !r.message_expression.is_empty() && r.message_expression.trim().is_empty() {
        out.push(Cause::required(
            at.child("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = &r.reason
        && !SUPPORTED_REASONS.contains(&reason.as_str())
    {
        out.push(Cause::not_supported(
            at.child("reason"),
            BadValue::Str(reason.clone()),
            &SUPPORTED_REASONS,
        ));
    }
    let field_path = || BadValue::Str(r.field_path.clone());
    if !r.field_path.is_empty() && r.field_path.trim().is_empty() {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            field_path(),
            "must be non-empty if specified",
        ));
    }
    if r.field_path.contains(['\n', '\r']) {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            field_path(),
            "must not contain line breaks",
        ));
    }
    if !r.field_path.is_empty() && !field_path_valid(s, &r.field_path) {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            field_path(),
            "must be a valid path",
        ));
    }
}

/// Compiles one rule in `env` (its fields are checked by [`rule_fields`]).
fn rule(
    r: &ValidationRule,
    t: TypeId,
    types: &DeclTypes,
    env: Env,
    at: &Path,
    uncorrelatable: Option<&Path>,
    out: &mut Vec<Cause>,
) {
    let rule_text = r.rule.trim();
    if rule_text.is_empty() {
        return;
    }
    let optional = r.optional_old_self == Some(true);
    let mut uses_old_self = false;
    match compile_in(&r.rule, types, t, optional, false, env) {
        Err(e) => out.push(Cause::invalid(
            at.child("rule"),
            rendered(r),
            e.rule_detail(),
        )),
        Ok(p) => {
            uses_old_self = p.uses_old_self;
            if !r.message_expression.is_empty()
                && let Err(e) = compile_in(&r.message_expression, types, t, optional, true, env)
            {
                out.push(Cause::invalid(
                    at.child("messageExpression"),
                    rendered(r),
                    e.message_expression_detail(),
                ));
            }
        }
    }
    if uses_old_self {
        if let Some(list) = uncorrelatable {
            out.push(Cause::invalid(
                at.child("rule"),
                BadValue::Str(r.rule.clone()),
                format!(
                    "oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"
                ),
            ));
        }
    } else if let Some(set) = r.optional_old_self {
        out.push(Cause::invalid(
            at.child("optionalOldSelf"),
            BadValue::Bool(set),
            "may not be set if oldSelf is not used in rule",
        ));
    }
}

/// `pathValid`: whether a rule's `fieldPath` resolves in the schema; a schema that has no
/// structural form (the conversion fails) lets every path pass.
fn field_path_valid(s: &Props, fp: &str) -> bool {
    crate::schema::new_structural::conversion_error(s).is_some()
        || crate::validate::cel_validation::valid_field_path(fp, s).is_ok()
}

/// Keeps the error type import meaningful for future reason checks.
#[allow(dead_code)]
fn is_required(t: ErrorType) -> bool {
    t == ErrorType::Required
}
