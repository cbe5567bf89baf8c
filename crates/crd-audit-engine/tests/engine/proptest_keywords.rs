//! Property tests of the keyword checks: for generated values and bounds, an error is
//! reported exactly when the keyword's definition (computed independently here) says so, with
//! the server's wording; and no input makes the validator panic.

use crd_audit_engine::cause::Cause;
use crd_audit_engine::crd::Crd;
use crd_audit_engine::schema::Props;
use crd_audit_engine::validate::schema_validator::SchemaValidator;
use crd_audit_engine::validate::{CrdValidator, Mode};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The messages of validating `{"spec": {"f": value}}` against a schema whose `spec.f` is
/// `field`.
fn messages(field: Value, value: Value) -> Vec<String> {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"f": field}}}});
    let props = Props::from_value("", &schema).unwrap();
    let mut out = Vec::new();
    SchemaValidator::new(&props).validate(&json!({"spec": {"f": value}}), &mut out);
    out.iter().map(Cause::message).collect()
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z0-9 ./-]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn max_length_counts_characters(s in "\\PC{0,12}", max in 0i64..10) {
        let got = messages(json!({"type": "string", "maxLength": max}), json!(s));
        let unit = if max == 1 { "byte" } else { "bytes" };
        let want: Vec<String> = if s.chars().count() as i64 > max {
            vec![format!("spec.f: Too long: may not be more than {max} {unit}")]
        } else {
            vec![]
        };
        prop_assert_eq!(got, want);
    }

    #[test]
    fn integer_bounds_follow_exclusive_flags(
        v in -50i64..50, min in -20i64..20, max in -20i64..20, exmin: bool, exmax: bool,
    ) {
        let got = messages(
            json!({"type": "integer", "minimum": min, "exclusiveMinimum": exmin,
                   "maximum": max, "exclusiveMaximum": exmax}),
            json!(v),
        );
        let mut want = Vec::new();
        if v > max || (exmax && v == max) {
            let rel = if exmax { "less than" } else { "less than or equal to" };
            want.push(format!("spec.f: Invalid value: {v}: spec.f in body should be {rel} {max}"));
        }
        if v < min || (exmin && v == min) {
            let rel = if exmin { "greater than" } else { "greater than or equal to" };
            want.push(format!("spec.f: Invalid value: {v}: spec.f in body should be {rel} {min}"));
        }
        let mut got = got;
        got.sort();
        want.sort();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn integer_multiple_of(v in -1000i64..1000, k in 1i64..12) {
        let got = messages(json!({"type": "integer", "multipleOf": k}), json!(v));
        let want: Vec<String> = if v % k != 0 {
            vec![format!("spec.f: Invalid value: {v}: spec.f in body should be a multiple of {k}")]
        } else {
            vec![]
        };
        prop_assert_eq!(got, want);
    }

    #[test]
    fn enums_accept_exactly_their_members(
        members in prop::collection::btree_set("[a-c]{1,2}", 1..5), v in "[a-c]{1,2}",
    ) {
        let members: Vec<String> = members.into_iter().collect();
        let got = messages(json!({"type": "string", "enum": members}), json!(v));
        prop_assert_eq!(got.is_empty(), members.contains(&v));
        if !got.is_empty() {
            let quoted: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
            prop_assert_eq!(
                &got[0],
                &format!("spec.f: Unsupported value: \"{v}\": supported values: {}", quoted.join(", "))
            );
        }
    }

    #[test]
    fn item_counts_and_unique_items(items in prop::collection::vec(0i64..4, 0..8), max in 0i64..6) {
        let got = messages(
            json!({"type": "array", "maxItems": max, "uniqueItems": true, "items": {"type": "integer"}}),
            json!(items),
        );
        let mut sorted = items.clone();
        sorted.sort();
        sorted.dedup();
        let has_dup = sorted.len() != items.len();
        let too_many = items.len() as i64 > max;
        prop_assert_eq!(got.iter().any(|m| m.contains("Too many")), too_many);
        prop_assert_eq!(
            got.iter().any(|m| m == "spec.f: Invalid value: \"\": spec.f in body shouldn't contain duplicates"),
            has_dup
        );
        prop_assert_eq!(got.len(), usize::from(too_many) + usize::from(has_dup));
    }

    #[test]
    fn patterns_with_go_classes(s in "[a-z0-9_ ]{0,8}") {
        let got = messages(json!({"type": "string", "pattern": "^[a-z]\\w*$"}), json!(s));
        let ok = s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        prop_assert_eq!(got.is_empty(), ok);
        if !ok {
            prop_assert_eq!(
                &got[0],
                &format!("spec.f: Invalid value: \"{s}\": spec.f in body should match '^[a-z]\\w*$'")
            );
        }
    }

    #[test]
    fn set_lists_report_second_occurrences(items in prop::collection::vec(0i64..4, 0..10)) {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ps.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "ps", "kind": "P"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema":
                    {"type": "object", "properties": {"spec": {"type": "object", "properties": {"l":
                        {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}}}}}}}}]}});
        let v = CrdValidator::new(&Crd::from_value(&crd).unwrap()).expect("compiles");
        let obj = json!({"apiVersion": "example.com/v1", "kind": "P", "metadata": {"name": "p"},
            "spec": {"l": items}});
        let got: Vec<String> = v.validate(obj, Mode::Create).causes().iter().map(Cause::message).collect();
        let mut want = Vec::new();
        for (i, x) in items.iter().enumerate() {
            if items[..i].iter().filter(|y| *y == x).count() == 1 {
                want.push(format!("spec.l[{i}]: Duplicate value: {x}"));
            }
        }
        prop_assert_eq!(got, want);
    }

    /// Any value against a schema using many keywords: no panic, and the causes are stable.
    #[test]
    fn arbitrary_values_never_panic(v in arb_json()) {
        let field = json!({"type": "object", "minProperties": 1, "maxProperties": 3,
            "required": ["a"], "additionalProperties": {"anyOf": [{"type": "string", "maxLength": 3,
            "format": "date-time"}, {"type": "integer", "maximum": 5, "multipleOf": 2},
            {"type": "array", "items": {"type": "number", "multipleOf": 0.5}, "uniqueItems": true}]}});
        let first = messages(field.clone(), v.clone());
        prop_assert_eq!(first, messages(field, v));
    }
}
