//! The CRD accounting of the static cost estimates of `x-kubernetes-validations` rules, as
//! kube-apiserver performs it when a CRD is created or updated: each compiled rule's (and
//! messageExpression's) estimated cost ([`super::cost_estimate`]) is multiplied by how many times
//! the rule's schema node can occur (its cardinality), checked against the per-rule limit,
//! and summed over the whole schema against the per-CRD limit.
//! Mirrors the cost part of apiextensions-apiserver's CRD validation
//! (`pkg/apis/apiextensions/validation/validation.go`, `pkg/apiserver/schema/cel` limits).

use super::env::Env;
use super::types::{DeclTypes, Kind, MAX_REQUEST_SIZE_BYTES, TypeId};
use crate::cause::{Cause, Path};
use crate::schema::{Items, Props, SchemaOrBool};

/// The largest estimated cost of one rule (times its cardinality).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all rules of one schema.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

// ---- CRD accounting ----

#[cfg(test)]
/// How often a schema node's rules can run, given the chain of enclosing nodes from the
/// root (outermost first, the node itself not included): the product of the `maxItems` /
/// `maxProperties` of every enclosing list and map, or `None` when one of them is unbounded.
pub fn max_cardinality(ancestors: &[&Props]) -> Option<u64> {
    let mut card: u64 = 1;
    for p in ancestors {
        card = mul_guard(card, extract_max_elements(p)?);
    }
    Some(card)
}

/// The factor by which a schema multiplies the occurrences of its children.
fn extract_max_elements(p: &Props) -> Option<u64> {
    match p.type_.as_str() {
        "object" if p.additional_properties.is_some() => p.max_properties.map(|m| m.max(0) as u64),
        "array" => p.max_items.map(|m| m.max(0) as u64),
        _ => Some(1),
    }
}

/// How many values of this minimum serialized size fit in one request (the cardinality of a
/// node under an unbounded list or map).
pub fn cardinality_from_min_size(min_size: i64) -> u64 {
    (MAX_REQUEST_SIZE_BYTES / (min_size + 1)).max(0) as u64
}

fn mul_guard(base: u64, card: u64) -> u64 {
    if base == 0 {
        0
    } else if u64::MAX / base < card {
        u64::MAX
    } else {
        base * card
    }
}

/// `getCostErrorMessage`.
pub fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_string()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The running total of a schema's rule costs and its most expensive contributors.
#[derive(Default)]
struct Total {
    total: u64,
    most_expensive: Vec<(Path, u64)>,
}

impl Total {
    fn observe(&mut self, path: Path, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// Whole-CRD cost check for one version's (structurally valid) schema rooted at `path`:
/// the per-rule and per-messageExpression limit violations, and, when the schema's total
/// exceeds its limit, the four most expensive rules and the total. Rules are compiled in
/// `env` (one that does not compile there has no cost).
pub fn check_costs(schema: &Props, path: &Path, env: Env) -> Vec<Cause> {
    let types = DeclTypes::new(schema);
    let mut out = Vec::new();
    let mut total = Total::default();
    walk(
        schema,
        path,
        Some(1),
        Some(types.root()),
        &types,
        env,
        &mut total,
        &mut out,
    );
    if total.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (p, _) in &total.most_expensive {
            out.push(Cause::forbidden(
                p.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        out.push(Cause::forbidden(
            path.clone(),
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    out
}

/// The estimated max cost of one expression for `self` of type `ty`, or `None` when it
/// does not compile (a message expression must give a string, a rule a bool).
fn expression_cost(
    src: &str,
    types: &DeclTypes,
    ty: TypeId,
    old_self_optional: bool,
    want_message: bool,
    env: Env,
) -> Option<u64> {
    let p =
        super::compile::compile_in(src, types, ty, old_self_optional, want_message, env).ok()?;
    Some(super::cost_estimate::estimate(&p.typed, types, ty).max)
}

#[allow(clippy::too_many_arguments)]
fn walk(
    s: &Props,
    path: &Path,
    card: Option<u64>,
    ty: Option<TypeId>,
    types: &DeclTypes,
    env: Env,
    total: &mut Total,
    out: &mut Vec<Cause>,
) {
    if let Some(ty) = ty
        && types.node(ty).min_size.is_some()
    {
        let node = types.node(ty);
        for (i, rule) in s.x_validations.iter().enumerate() {
            if rule.rule.trim().is_empty() {
                continue;
            }
            let optional = rule.optional_old_self == Some(true);
            let Some(max) = expression_cost(&rule.rule, types, ty, optional, false, env) else {
                continue;
            };
            let times = card
                .unwrap_or_else(|| cardinality_from_min_size(node.min_size.unwrap_or_default()));
            let cost = mul_guard(max, times);
            let rpath = path.child("x-kubernetes-validations").index(i);
            if cost > STATIC_ESTIMATED_COST_LIMIT {
                out.push(Cause::forbidden(
                    rpath.child("rule"),
                    cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
                ));
            }
            total.observe(rpath.child("rule"), cost);
            if !rule.message_expression.is_empty()
                && let Some(m) =
                    expression_cost(&rule.message_expression, types, ty, optional, true, env)
            {
                if m > STATIC_ESTIMATED_COST_LIMIT {
                    out.push(Cause::forbidden(
                        rpath.child("messageExpression"),
                        cost_error_message(
                            "estimated messageExpression cost",
                            m,
                            STATIC_ESTIMATED_COST_LIMIT,
                        ),
                    ));
                }
                total.observe(rpath.child("messageExpression"), m);
            }
        }
    }
    let child_card = card.and_then(|c| Some(mul_guard(c, extract_max_elements(s)?)));
    let node = ty.map(|t| types.node(t));
    if let Some(SchemaOrBool::Schema(a)) = &s.additional_properties {
        let cty = node.filter(|n| n.kind == Kind::Map).and_then(|n| n.elem);
        walk(
            a,
            &path.child("additionalProperties"),
            child_card,
            cty,
            types,
            env,
            total,
            out,
        );
    }
    for (name, p) in &s.properties {
        let cty = node.and_then(|n| n.fields.get(name).copied());
        walk(
            p,
            &path.child("properties").key(name),
            child_card,
            cty,
            types,
            env,
            total,
            out,
        );
    }
    match &s.items {
        Some(Items::Schema(i)) => {
            let cty = node.filter(|n| n.kind == Kind::List).and_then(|n| n.elem);
            walk(
                i,
                &path.child("items"),
                child_card,
                cty,
                types,
                env,
                total,
                out,
            );
        }
        Some(Items::Array(list)) => {
            for (k, i) in list.iter().enumerate() {
                walk(
                    i,
                    &path.child("items").index(k),
                    child_card,
                    None,
                    types,
                    env,
                    total,
                    out,
                );
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::cost_estimate::Estimate;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn schema(v: serde_json::Value) -> Props {
        Props::from_value("", &v).unwrap()
    }

    fn est(rule: &str, s: serde_json::Value) -> Estimate {
        let p = schema(s);
        let t = DeclTypes::new(&p);
        let c = crate::cel::compile::compile(rule, &t, t.root(), false, false).unwrap();
        crate::cel::cost_estimate::estimate(&c.typed, &t, t.root())
    }

    #[test]
    fn nested_loop_over_bounded_list() {
        let s = json!({"type": "array", "maxItems": 400,
            "items": {"type": "string", "maxLength": 64}});
        let n = 400u64;
        let e = est("self.all(x, self.exists(y, x == y))", s);
        assert_eq!(e.max, 2 + 5 * n + 32 * n * n);
    }

    #[test]
    fn simple_costs() {
        let obj = json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 10},
            "b": {"type": "integer"}}});
        // presence tests are free: the cost of reaching `self`
        assert_eq!(est("has(self.a)", obj.clone()).max, 1);
        assert_eq!(est("self.b > 0", obj.clone()).max, 3);
        // 'x' has size 1, self.a up to 40 bytes: equality costs ceil(1 * 0.1)
        assert_eq!(est("self.a == 'x'", obj.clone()).max, 3);
        // 40 * 0.1 = 4 for the traversal, 2 to reach the field
        assert_eq!(est("self.a.startsWith('ab')", obj).max, 2 + 1);
    }

    #[test]
    fn messages() {
        assert_eq!(
            cost_error_message("estimated rule cost", 512_020_002, 10_000_000),
            "estimated rule cost exceeds budget by factor of 51.2x (try simplifying the rule, \
             or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings \
             are declared)"
        );
        assert!(cost_error_message("x", 130_539_682, 100_000_000).contains("1.305397x"));
        assert!(cost_error_message("x", u64::MAX, 1).contains("more than 100x"));
    }

    #[test]
    fn cardinality() {
        let list = schema(json!({"type": "array", "maxItems": 5}));
        let map = schema(json!({"type": "object", "maxProperties": 3,
            "additionalProperties": {"type": "string"}}));
        let obj = schema(json!({"type": "object"}));
        let open = schema(json!({"type": "array"}));
        assert_eq!(max_cardinality(&[&obj, &list, &map]), Some(15));
        assert_eq!(max_cardinality(&[&obj, &open, &map]), None);
        assert_eq!(cardinality_from_min_size(2), 1_048_576);
    }

    type CauseSet = BTreeSet<(String, String)>;

    fn expected_cost_causes(structural: &serde_json::Value) -> CauseSet {
        structural["crdErrors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let d = c["detail"].as_str()?;
                let cost = d.contains("exceeds budget by factor")
                    || d.contains("contributed to estimated rule cost total");
                cost.then(|| (c["field"].as_str().unwrap().to_string(), d.to_string()))
            })
            .collect()
    }

    fn actual_cost_causes(crd_yaml: &str) -> CauseSet {
        let docs = crate::load::parse_str("crd.yaml", crd_yaml);
        let doc = docs.into_iter().find_map(|d| d.ok()).expect("a document");
        let crd = crate::crd::Crd::from_value(&doc.value).expect("a CRD");
        let mut out = CauseSet::new();
        let shared = crd.schemas_shared();
        for (i, v) in crd.versions.iter().enumerate() {
            if shared && i > 0 {
                break;
            }
            let Some(s) = &v.schema else { continue };
            let Ok(p) = Props::from_value("", s) else {
                continue;
            };
            for c in check_costs(&p, &crd.validation_schema_path(i), Env::LATEST) {
                out.insert((c.field.to_string(), c.detail));
            }
        }
        out
    }

    fn cases_dir() -> Option<std::path::PathBuf> {
        crate::testing::conformance_dir().map(|d| d.join("cases"))
    }

    fn case(name: &str) -> (CauseSet, CauseSet) {
        let dir = cases_dir().expect("the corpus").join(name);
        let crd = std::fs::read_to_string(dir.join("crd.yaml")).unwrap();
        let st: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("structural.json")).unwrap())
                .unwrap();
        (actual_cost_causes(&crd), expected_cost_causes(&st))
    }

    #[test]
    fn calibration_total_cost() {
        if cases_dir().is_none() {
            return;
        }
        let (got, want) = case("synthetic-crd-cel-cost");
        assert_eq!(want.len(), 5);
        assert_eq!(got, want);
    }

    #[test]
    fn calibration_invalid_rules() {
        if cases_dir().is_none() {
            return;
        }
        let (got, want) = case("synthetic-crd-cel-invalid");
        assert_eq!(want.len(), 9);
        assert_eq!(got, want);
    }

    #[test]
    fn all_conformance_cases() {
        let Some(cases) = cases_dir() else {
            return;
        };
        let dir = std::fs::read_dir(cases).expect("the corpus's cases");
        let mut names: Vec<String> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("crd.yaml").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut bad = Vec::new();
        for n in &names {
            let (got, want) = case(n);
            if got != want {
                bad.push(format!("{n}: got {got:?}\n want {want:?}"));
            }
        }
        println!(
            "cost causes agree on {}/{} cases",
            names.len() - bad.len(),
            names.len()
        );
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
