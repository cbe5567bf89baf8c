//! CRD validation of `x-kubernetes-validations`: each rule's fields (`rule`, `message`,
//! `messageExpression`, `reason`, `fieldPath`, `optionalOldSelf`), its compilation and result
//! type (a bool; a string for `messageExpression`), and where `oldSelf` may be used.
//! Estimated costs are checked by [`crate::cel::cost`].

use crate::cause::{BadValue, Cause, ErrorType, Path};
use crate::cel::compile::compile;
use crate::cel::types::{DeclTypes, TypeId};
use crate::gofmt;
use crate::schema::{Props, SchemaOrBool, ValidationRule};

const SUPPORTED_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Checks every rule of the structural schema rooted at `path`, and their estimated costs.
pub fn check_rules(s: &Props, path: &Path, out: &mut Vec<Cause>) {
    let types = DeclTypes::new(s);
    walk(s, types.root(), &types, path, None, out);
    out.extend(crate::cel::cost::check_costs(s, path));
}

fn walk(
    s: &Props,
    t: TypeId,
    types: &DeclTypes,
    path: &Path,
    uncorrelatable: Option<&Path>,
    out: &mut Vec<Cause>,
) {
    let before = out.len();
    for (i, r) in s.x_validations.iter().enumerate() {
        let at = path.child("x-kubernetes-validations").index(i);
        rule_fields(r, s, &at, out);
    }
    // Rules are compiled only when their fields are valid (upstream skips CEL then).
    if out.len() == before {
        for (i, r) in s.x_validations.iter().enumerate() {
            let at = path.child("x-kubernetes-validations").index(i);
            rule(r, t, types, &at, uncorrelatable, out);
        }
    }
    let n = types.node(t);
    for (k, p) in &s.properties {
        if let Some(&c) = n.fields.get(k) {
            walk(
                p,
                c,
                types,
                &path.child("properties").key(k),
                uncorrelatable,
                out,
            );
        }
    }
    if let (Some(SchemaOrBool::Schema(a)), Some(e)) = (&s.additional_properties, n.elem) {
        walk(
            a,
            e,
            types,
            &path.child("additionalProperties"),
            uncorrelatable,
            out,
        );
    }
    if let (Some(item), Some(e)) = (s.items_schema(), n.elem) {
        // Items of lists other than list-type map cannot be matched with their old values.
        let within = if s.x_list_type.as_deref() == Some("map") {
            uncorrelatable.cloned()
        } else {
            Some(uncorrelatable.cloned().unwrap_or_else(|| path.clone()))
        };
        walk(item, e, types, &path.child("items"), within.as_ref(), out);
    }
}

/// The rule as the server prints it in a bad value (its Go struct as JSON).
fn rendered(r: &ValidationRule) -> BadValue {
    let opt = |o: &Option<String>| {
        o.as_ref().map_or("null".to_string(), |s| {
            gofmt::json(&serde_json::Value::String(s.clone()))
        })
    };
    let json = format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        gofmt::json(&r.rule.clone().into()),
        gofmt::json(&r.message.clone().into()),
        gofmt::json(&r.message_expression.clone().into()),
        opt(&r.reason),
        gofmt::json(&r.field_path.clone().into()),
        r.optional_old_self
            .map_or("null".to_string(), |b| b.to_string()),
    );
    BadValue::Rendered {
        value: serde_json::from_str(&json).unwrap_or_default(),
        json,
    }
}

/// The checks of a rule's fields (not its expressions).
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
    if !r.field_path.is_empty() && r.field_path.trim().is_empty() {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            BadValue::Str(r.field_path.clone()),
            "must be non-empty if specified",
        ));
    }
    if r.field_path.contains(['\n', '\r']) {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            BadValue::Str(r.field_path.clone()),
            "must not contain line breaks",
        ));
    }
    if !r.field_path.is_empty() && !field_path_valid(s, &r.field_path) {
        out.push(Cause::invalid(
            at.child("fieldPath"),
            BadValue::Str(r.field_path.clone()),
            "must be a valid path",
        ));
    }
}

/// Compiling a rule and its message expression, and where `oldSelf` may be used.
fn rule(
    r: &ValidationRule,
    t: TypeId,
    types: &DeclTypes,
    at: &Path,
    uncorrelatable: Option<&Path>,
    out: &mut Vec<Cause>,
) {
    if r.rule.trim().is_empty() {
        return;
    }
    let optional = r.optional_old_self == Some(true);
    let mut uses_old_self = false;
    match compile(&r.rule, types, t, optional, false) {
        Err(e) => out.push(Cause::invalid(
            at.child("rule"),
            rendered(r),
            e.rule_detail(),
        )),
        Ok(p) => {
            uses_old_self = p.uses_old_self;
            if !r.message_expression.is_empty()
                && let Err(e) = compile(&r.message_expression, types, t, optional, true)
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
    } else if let Some(v) = r.optional_old_self {
        out.push(Cause::invalid(
            at.child("optionalOldSelf"),
            BadValue::Bool(v),
            "may not be set if oldSelf is not used in rule",
        ));
    }
}

/// Whether a rule's `fieldPath` (`.a.b`, `['a.b']`) names a field the schema declares.
fn field_path_valid(s: &Props, fp: &str) -> bool {
    let mut cur = s;
    let mut rest = fp.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let name;
        if let Some(r) = rest.strip_prefix("['") {
            let Some(end) = r.find("']") else {
                return false;
            };
            name = &r[..end];
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            name = &r[..end];
            if name.is_empty() {
                return false;
            }
            rest = &r[end..];
        } else {
            return false;
        }
        cur = match cur.properties.get(name) {
            Some(p) => p,
            None => match &cur.additional_properties {
                Some(SchemaOrBool::Schema(a)) => a,
                _ => return false,
            },
        };
    }
    true
}

/// Keeps the error type import meaningful for future reason checks.
#[allow(dead_code)]
fn is_required(t: ErrorType) -> bool {
    t == ErrorType::Required
}
