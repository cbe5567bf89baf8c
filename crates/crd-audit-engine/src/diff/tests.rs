//! Every change kind, in both directions.

use super::*;
use serde_json::json;

fn crd(field: Value, extra: Value) -> Crd {
    let mut spec = json!({"type": "object", "properties": {"f": field}});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            spec[k] = v;
        }
    }
    let doc = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}});
    Crd::from_value(&doc).unwrap()
}

fn kinds(a: &Crd, b: &Crd) -> Vec<(String, &'static str, Class)> {
    diff(a, b)
        .into_iter()
        .map(|c| (c.path, c.kind, c.class))
        .collect()
}

/// `before` → `after` gives `fwd` at `path`; `after` → `before` gives `back`.
fn both(
    before: Value,
    after: Value,
    path: &str,
    fwd: (&'static str, Class),
    back: (&'static str, Class),
) {
    let (a, b) = (crd(before, json!({})), crd(after, json!({})));
    let got = kinds(&a, &b);
    assert!(
        got.contains(&(path.to_string(), fwd.0, fwd.1)),
        "forward: expected {fwd:?} at {path}, got {got:?}"
    );
    let got = kinds(&b, &a);
    assert!(
        got.contains(&(path.to_string(), back.0, back.1)),
        "backward: expected {back:?} at {path}, got {got:?}"
    );
}

use Class::{Loosening as L, Neutral as N, Tightening as T};

#[test]
fn value_keywords() {
    let s = |v: Value| {
        let mut base = json!({"type": "integer"});
        for (k, x) in v.as_object().unwrap() {
            base[k] = x.clone();
        }
        base
    };
    let p = |k: &str| format!("spec.properties[f].{k}");
    both(
        s(json!({})),
        s(json!({"minimum": 1})),
        &p("minimum"),
        ("minimumAdded", T),
        ("minimumRemoved", L),
    );
    both(
        s(json!({"minimum": 1})),
        s(json!({"minimum": 2})),
        &p("minimum"),
        ("minimumRaised", T),
        ("minimumLowered", L),
    );
    both(
        s(json!({"maximum": 9})),
        s(json!({"maximum": 5})),
        &p("maximum"),
        ("maximumLowered", T),
        ("maximumRaised", L),
    );
    both(
        s(json!({})),
        s(json!({"maximum": 5})),
        &p("maximum"),
        ("maximumAdded", T),
        ("maximumRemoved", L),
    );
    both(
        s(json!({"maximum": 5})),
        s(json!({"maximum": 5, "exclusiveMaximum": true})),
        &p("exclusiveMaximum"),
        ("exclusiveMaximumSet", T),
        ("exclusiveMaximumUnset", L),
    );
    both(
        s(json!({"minimum": 5})),
        s(json!({"minimum": 5, "exclusiveMinimum": true})),
        &p("exclusiveMinimum"),
        ("exclusiveMinimumSet", T),
        ("exclusiveMinimumUnset", L),
    );
    both(
        s(json!({})),
        s(json!({"multipleOf": 2})),
        &p("multipleOf"),
        ("multipleOfAdded", T),
        ("multipleOfRemoved", L),
    );
    both(
        s(json!({"multipleOf": 2})),
        s(json!({"multipleOf": 3})),
        &p("multipleOf"),
        ("multipleOfChanged", T),
        ("multipleOfChanged", T),
    );
    both(
        s(json!({"nullable": true})),
        s(json!({})),
        &p("nullable"),
        ("nullableRemoved", T),
        ("nullableAdded", L),
    );
    both(
        json!({"type": "integer"}),
        json!({"type": "string"}),
        &p("type"),
        ("typeChanged", T),
        ("typeChanged", T),
    );
    both(
        s(json!({})),
        s(json!({"default": 1})),
        &p("default"),
        ("defaultChanged", T),
        ("defaultChanged", T),
    );
    both(
        s(json!({})),
        s(json!({"description": "x"})),
        &p("description"),
        ("descriptionChanged", N),
        ("descriptionChanged", N),
    );
    both(
        json!({"x-kubernetes-int-or-string": true}),
        json!({"type": "integer"}),
        &p("x-kubernetes-int-or-string"),
        ("intOrStringRemoved", T),
        ("intOrStringAdded", L),
    );
}

#[test]
fn strings_enums_and_patterns() {
    let p = |k: &str| format!("spec.properties[f].{k}");
    let st = |v: Value| {
        let mut base = json!({"type": "string"});
        for (k, x) in v.as_object().unwrap() {
            base[k] = x.clone();
        }
        base
    };
    both(
        st(json!({})),
        st(json!({"minLength": 2})),
        &p("minLength"),
        ("minLengthAdded", T),
        ("minLengthRemoved", L),
    );
    both(
        st(json!({"maxLength": 9})),
        st(json!({"maxLength": 3})),
        &p("maxLength"),
        ("maxLengthLowered", T),
        ("maxLengthRaised", L),
    );
    both(
        st(json!({})),
        st(json!({"enum": ["a"]})),
        &p("enum"),
        ("enumAdded", T),
        ("enumRemoved", L),
    );
    both(
        st(json!({"enum": ["a", "b"]})),
        st(json!({"enum": ["a"]})),
        &p("enum"),
        ("enumValueRemoved", T),
        ("enumValueAdded", L),
    );
    both(
        st(json!({})),
        st(json!({"pattern": "^a"})),
        &p("pattern"),
        ("patternAdded", T),
        ("patternRemoved", L),
    );
    both(
        st(json!({"pattern": "^a"})),
        st(json!({"pattern": "^b"})),
        &p("pattern"),
        ("patternChanged", T),
        ("patternChanged", T),
    );
    both(
        st(json!({})),
        st(json!({"format": "email"})),
        &p("format"),
        ("formatAdded", T),
        ("formatRemoved", L),
    );
    both(
        st(json!({"format": "email"})),
        st(json!({"format": "uuid"})),
        &p("format"),
        ("formatChanged", T),
        ("formatChanged", T),
    );
    both(
        st(json!({})),
        st(json!({"x-kubernetes-validations": [{"rule": "self != ''"}]})),
        &p("x-kubernetes-validations"),
        ("validationRuleAdded", T),
        ("validationRuleRemoved", L),
    );
}

#[test]
fn lists_maps_and_objects() {
    let p = |k: &str| format!("spec.properties[f].{k}");
    let arr = |v: Value| {
        let mut base = json!({"type": "array", "items": {"type": "string"}});
        for (k, x) in v.as_object().unwrap() {
            base[k] = x.clone();
        }
        base
    };
    both(
        arr(json!({})),
        arr(json!({"minItems": 1})),
        &p("minItems"),
        ("minItemsAdded", T),
        ("minItemsRemoved", L),
    );
    both(
        arr(json!({"maxItems": 4})),
        arr(json!({"maxItems": 2})),
        &p("maxItems"),
        ("maxItemsLowered", T),
        ("maxItemsRaised", L),
    );
    both(
        arr(json!({})),
        arr(json!({"uniqueItems": true})),
        &p("uniqueItems"),
        ("uniqueItemsAdded", T),
        ("uniqueItemsRemoved", L),
    );
    both(
        arr(json!({})),
        arr(json!({"x-kubernetes-list-type": "set"})),
        &p("x-kubernetes-list-type"),
        ("listTypeChanged", T),
        ("listTypeChanged", L),
    );
    let lm = |keys: Value| {
        json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys,
        "items": {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}})
    };
    both(
        lm(json!(["a"])),
        lm(json!(["a", "b"])),
        &p("x-kubernetes-list-map-keys"),
        ("listMapKeysChanged", T),
        ("listMapKeysChanged", T),
    );
    let obj = |v: Value| {
        let mut base = json!({"type": "object"});
        for (k, x) in v.as_object().unwrap() {
            base[k] = x.clone();
        }
        base
    };
    both(
        obj(json!({"minProperties": 0})),
        obj(json!({"minProperties": 1})),
        &p("minProperties"),
        ("minPropertiesRaised", T),
        ("minPropertiesLowered", L),
    );
    both(
        obj(json!({})),
        obj(json!({"maxProperties": 3})),
        &p("maxProperties"),
        ("maxPropertiesAdded", T),
        ("maxPropertiesRemoved", L),
    );
    both(
        obj(json!({"additionalProperties": true})),
        obj(json!({"additionalProperties": {"type": "string"}})),
        &p("additionalProperties"),
        ("additionalPropertiesNarrowed", T),
        ("additionalPropertiesWidened", L),
    );
    both(
        obj(json!({"x-kubernetes-preserve-unknown-fields": true})),
        obj(json!({})),
        &p("x-kubernetes-preserve-unknown-fields"),
        ("preserveUnknownFieldsRemoved", T),
        ("preserveUnknownFieldsAdded", L),
    );
    let with =
        |props: Value, req: Value| json!({"type": "object", "properties": props, "required": req});
    both(
        with(json!({"a": {"type": "string"}}), json!([])),
        with(json!({"a": {"type": "string"}}), json!(["a"])),
        "spec.properties[f].properties[a]",
        ("fieldRequired", T),
        ("fieldOptional", L),
    );
    both(
        with(
            json!({"a": {"type": "string"}, "b": {"type": "string"}}),
            json!([]),
        ),
        with(json!({"a": {"type": "string"}}), json!([])),
        "spec.properties[f].properties[b]",
        ("fieldRemoved", T),
        ("fieldAdded", N),
    );
    both(
        with(json!({"a": {"type": "string"}}), json!([])),
        with(
            json!({"a": {"type": "string"}, "n": {"type": "string"}}),
            json!(["n"]),
        ),
        "spec.properties[f].properties[n]",
        ("requiredFieldAdded", T),
        ("fieldRemoved", T),
    );
}

#[test]
fn versions_scope_and_storage() {
    let base = crd(json!({"type": "string"}), json!({}));
    let mut two = base.clone();
    let mut v2 = two.versions[0].clone();
    v2.name = "v2".into();
    v2.storage = false;
    two.versions.push(v2);
    let got = kinds(&base, &two);
    assert!(got.iter().any(|(_, k, c)| *k == "versionAdded" && *c == N));
    let mut unserved = two.clone();
    unserved.versions[1].served = false;
    assert!(
        kinds(&two, &unserved)
            .iter()
            .any(|(_, k, c)| *k == "versionNoLongerServed" && *c == T)
    );
    assert!(
        kinds(&unserved, &two)
            .iter()
            .any(|(_, k, c)| *k == "versionServed" && *c == L)
    );
    let mut moved = two.clone();
    moved.versions[0].storage = false;
    moved.versions[1].storage = true;
    assert!(
        kinds(&two, &moved)
            .iter()
            .any(|(_, k, c)| *k == "storageVersionChanged" && *c == T)
    );
    let mut stored = two.clone();
    stored.stored_versions = vec!["v1".into(), "v2".into()];
    let mut dropped = stored.clone();
    dropped.versions.remove(1);
    assert!(
        kinds(&stored, &dropped)
            .iter()
            .any(|(_, k, c)| *k == "versionRemovedWhileStored" && *c == T)
    );
    let mut cluster = base.clone();
    cluster.scope = Scope::Cluster;
    assert!(
        kinds(&base, &cluster)
            .iter()
            .any(|(p, k, c)| p == "spec.scope" && *k == "scopeChanged" && *c == T)
    );
    assert!(kinds(&base, &base).is_empty());
}

/// Large enums are compared by set membership (200,000 values), and a reason names at most
/// 20 values and counts the rest.
#[test]
fn large_enums() {
    let values: Vec<Value> = (0..200_000).map(|i| json!(format!("v{i}"))).collect();
    let old = crd(json!({"type": "string", "enum": values}), json!({}));
    let mut fewer = values.clone();
    fewer.truncate(199_975);
    fewer.push(json!("new"));
    let new = crd(json!({"type": "string", "enum": fewer}), json!({}));
    let changes = diff(&old, &new);
    let removed = changes
        .iter()
        .find(|c| c.kind == "enumValueRemoved")
        .expect("removed values");
    assert_eq!(removed.class, Class::Tightening);
    assert!(
        removed
            .reason
            .starts_with("enum values removed: \"v199975\", \"v199976\""),
        "{}",
        removed.reason
    );
    assert!(
        removed.reason.ends_with(", and 5 more"),
        "{}",
        removed.reason
    );
    let added = changes
        .iter()
        .find(|c| c.kind == "enumValueAdded")
        .expect("added value");
    assert_eq!(added.reason, "enum values added: \"new\"");
    assert_eq!(changes.len(), 2);
}
