//! The gate's decisions and texts. The split between stuck and tolerated objects is the
//! oracle's (`oracle update NEW.yaml OBJECTS.yaml`, k8s.io 0.36.4: a no-op update with
//! ratcheting): under the tightened revision below, `a` (a root CEL rule fails) is refused,
//! `b` (a new required field) ratchets, `c` is valid.

use super::*;
use crate::release::KubeVersion;
use serde_json::json;

fn crd(tightened: bool) -> Value {
    let mut spec = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}
    });
    let mut root = json!({"type": "object", "properties": {"spec": {}}});
    if tightened {
        spec["required"] = json!(["size"]);
        spec["properties"]["name"]["maxLength"] = json!(3);
        root["x-kubernetes-validations"] = json!([{
            "rule": "!has(self.spec.name) || self.spec.name.size() <= 3",
            "message": "names of at most 3 characters"
        }]);
    }
    root["properties"]["spec"] = spec;
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.gate.test", "generation": 1},
        "spec": {
            "group": "gate.test",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": root}}]
        },
        "status": {"storedVersions": ["v1"]}
    })
}

fn widget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "gate.test/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns1", "resourceVersion": "5", "uid": format!("uid-{name}"),
                     "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec
    })
}

fn objects() -> Vec<Value> {
    vec![
        widget("a", json!({"name": "abcdef", "size": 1})),
        widget("b", json!({"name": "ab"})),
        widget("c", json!({"name": "ab", "size": 1})),
    ]
}

fn gate(mode: GateMode) -> Config {
    Config {
        gate: mode,
        ..Config::default()
    }
}

fn change(current: &Value, proposed: &Value) -> Box<Change> {
    match decide(UPDATE, Some(current), proposed, &gate(GateMode::Warn)).unwrap() {
        Decision::Judge(c) => c,
        Decision::Allow => panic!("allowed without judging"),
    }
}

fn tally(change: &Change, minor: u32) -> Tally {
    let judges = Judges::compile(change, KubeVersion { minor }, &gate(GateMode::Warn)).unwrap();
    let mut t = Tally::new("v1");
    for o in objects() {
        t.add(judges.judge(o));
    }
    t
}

#[test]
fn a_create_a_loosening_an_opt_out_and_gate_off_are_allowed_unjudged() {
    let (loose, tight) = (crd(false), crd(true));
    let warn = gate(GateMode::Warn);
    let allowed = |op: &str, old: Option<&Value>, new: &Value, c: &Config| {
        matches!(decide(op, old, new, c).unwrap(), Decision::Allow)
    };
    assert!(allowed("CREATE", None, &tight, &warn));
    assert!(allowed(UPDATE, Some(&tight), &tight, &warn), "no change");
    let mut relabelled = tight.clone();
    relabelled["metadata"]["labels"] = json!({"team": "a"});
    assert!(
        allowed(UPDATE, Some(&tight), &relabelled, &warn),
        "no schema change"
    );
    let mut opted_out = tight.clone();
    opted_out["metadata"]["annotations"] = json!({OPT_OUT_ANNOTATION: "off"});
    assert!(allowed(UPDATE, Some(&loose), &opted_out, &warn));
    assert!(allowed(UPDATE, Some(&loose), &tight, &gate(GateMode::Off)));
    let elsewhere = Config {
        exclude_groups: vec!["*.test".into()],
        ..warn.clone()
    };
    assert!(allowed(UPDATE, Some(&loose), &tight, &elsewhere));
    // A loosening is judged (its schema changed) and makes nothing invalid: no warning.
    let c = change(&tight, &loose);
    let t = tally(&c, 36);
    assert_eq!((t.judged, t.invalid()), (3, 0));
    assert_eq!(
        answer(&c, &[t], true, GateMode::Deny),
        Answer {
            warnings: vec![],
            denial: None,
            unfinished: false
        }
    );
}

#[test]
fn a_tightening_with_ratcheting_splits_stuck_from_tolerated() {
    let c = change(&crd(false), &crd(true));
    assert_eq!(c.versions, ["v1"]);
    let t = tally(&c, 36);
    assert_eq!((t.judged, t.stuck, t.tolerated), (3, 1, 1));
    assert_eq!(t.first_stuck[0].name, "a");
    assert_eq!(t.first_tolerated[0].name, "b");
    let a = answer(&c, &[t], true, GateMode::Warn);
    assert_eq!(
        a.warnings,
        [
            "crd-audit: 2 of 3 stored widgets become invalid under v1: 1 stuck (every update refused), 1 tolerated",
            "crd-audit: stuck ns1/a: <nil>: Invalid value: names of at most 3 characters",
        ]
    );
    assert_eq!(a.denial, None);
}

#[test]
fn without_ratcheting_every_object_the_change_invalidates_is_stuck_and_deny_refuses() {
    // 1.20: no CEL, no ratcheting (the engine's release model).
    let c = change(&crd(false), &crd(true));
    let t = tally(&c, 20);
    assert_eq!((t.judged, t.stuck, t.tolerated), (3, 2, 0));
    let a = answer(&c, &[t], true, GateMode::Deny);
    assert_eq!(
        a.denial.as_deref(),
        Some(
            "crd-audit: this change makes 2 stored widgets stuck (every update refused), first ns1/a under v1: spec.name: Too long: may not be more than 3 bytes"
        )
    );
    assert_eq!(a.warnings.len(), 3, "{:?}", a.warnings);
}

#[test]
fn objects_invalid_before_the_change_do_not_count_against_it() {
    let c = change(&crd(true), &{
        let mut again = crd(true);
        again["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["note"] = json!({"type": "string"});
        again
    });
    let t = tally(&c, 20);
    assert_eq!((t.judged, t.invalid()), (3, 0));
}

#[test]
fn the_budget_line_and_unserved_stored_versions() {
    let current = crd(false);
    let mut proposed = crd(false);
    proposed["spec"]["versions"] = json!([
        {"name": "v1", "served": false, "storage": false, "schema": current["spec"]["versions"][0]["schema"]},
        {"name": "v2", "served": true, "storage": true, "schema": current["spec"]["versions"][0]["schema"]}
    ]);
    let c = change(&current, &proposed);
    assert!(c.versions.is_empty());
    assert_eq!(c.unserved_stored, ["v1"]);
    let a = answer(&c, &[], true, GateMode::Warn);
    assert_eq!(
        a.warnings,
        [
            "crd-audit: version v1 is no longer served but status.storedVersions still lists it: objects stored at v1 must be rewritten at the storage version before it is removed (crd-audit migrate widgets.gate.test)"
        ]
    );
    let c = change(&crd(false), &crd(true));
    let mut t = tally(&c, 20);
    t.total = Some(10_000);
    let a = answer(&c, &[t], false, GateMode::Warn);
    assert_eq!(
        a.warnings.last().unwrap(),
        "crd-audit: judged 3 of 10000 stored objects before the deadline; the rest are audited after the change"
    );
    assert!(a.unfinished);
    assert!(a.warnings[0].starts_with("crd-audit: 2 of 10000 stored widgets"));
    // Nothing judged (other changes took the budget): said so, never refused.
    let a = answer(&c, &[], false, GateMode::Deny);
    assert_eq!(
        a.warnings,
        [
            "crd-audit: judged 0 stored objects before the deadline; the rest are audited after the change"
        ]
    );
    assert_eq!(a.denial, None);
}
