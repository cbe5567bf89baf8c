use super::*;
use crate::audit::judge::{Judgement, judge};
use crd_audit_engine::CrdValidator;

fn crd(generation: i64, enum_values: usize) -> Crd {
    let values: Vec<String> = (0..enum_values).map(|i| format!("value-{i:05}")).collect();
    Crd::from_value(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com", "generation": generation, "uid": "u-1"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"mode": {"type": "string", "enum": values}}}}}}}]}}))
    .unwrap()
}

/// Stuck objects (a root-level rule fails: ratcheting never sees the root unchanged) are
/// counted per version, listed first, and turn UpdatesAccepted false; tolerated ones
/// (a property's value) are not; without ratcheting every invalid object is stuck.
#[test]
fn stuck_objects_are_counted_and_listed_first() {
    let crd = Crd::from_value(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com", "generation": 1},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-validations": [{"rule": "self.metadata.name != 'forbidden'"}],
                    "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}}}}}]}}))
    .unwrap();
    let v = CrdValidator::new(&crd).expect("compiles");
    let check = crd_audit_engine::check_crd(&crd, crd_audit_engine::Release::NEWEST);
    let object = |name: &str, n: i64| {
        json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7"}, "spec": {"n": n}})
    };
    // The same CRD judged by a release before ratcheting (1.29).
    let before_ratcheting =
        CrdValidator::for_release(&crd, crd_audit_engine::Release::new(29)).expect("compiles");
    let report = |ratcheting: bool| {
        let v = if ratcheting { &v } else { &before_ratcheting };
        let mut audit = Audit::default();
        for (name, n) in [("a-too-big", 9), ("forbidden", 1), ("ok", 1)] {
            audit.record(judge(v, object(name, n), false));
        }
        status(&Inputs {
            crd: &crd,
            check: &check,
            audit: &audit,
            audited: true,
            forbidden: None,
            last_change: None,
            max_listed: 10,
            audit_seconds: None,
            internal_errors: 0,
            sizes: &[],
            conversions: None,
        })
    };
    let st = report(true);
    let listed: Vec<(&str, bool)> = st
        .invalid_objects
        .iter()
        .map(|o| (o.name.as_str(), o.updates_blocked))
        .collect();
    assert_eq!(listed, [("forbidden", true), ("a-too-big", false)]);
    assert_eq!(
        (
            st.versions[0].invalid_objects,
            st.versions[0].blocked_objects
        ),
        (2, 1)
    );
    let accepted = st
        .conditions
        .iter()
        .find(|c| c.type_ == "UpdatesAccepted")
        .unwrap();
    assert_eq!(
        (accepted.status.as_str(), accepted.reason.as_str()),
        ("False", "BlockedObjects")
    );
    assert!(
        accepted.message.starts_with("1 blocked object(s)"),
        "{}",
        accepted.message
    );

    let st = report(false);
    assert_eq!(st.versions[0].blocked_objects, 2);
    assert!(st.invalid_objects.iter().all(|o| o.updates_blocked));
}

/// Ready sums up the others: Unknown while auditing, True when the audit is complete and
/// nothing is wrong, False with the worst problem's reason; Reconciling is True while
/// auditing and Stalled once a complete audit found what needs a person, never both.
#[test]
fn ready_reconciling_and_stalled_sum_up_the_conditions() {
    let crd = crd(3, 2);
    let check = crd_audit_engine::check_crd(&crd, crd_audit_engine::Release::NEWEST);
    let v = CrdValidator::new(&crd).expect("compiles");
    let thing = |name: &str, mode: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": name, "namespace": "ns"}, "spec": {"mode": mode}})
    };
    let summed = |audit: &Audit, audited: bool, forbidden: Option<&str>| {
        let st = status(&Inputs {
            crd: &crd,
            check: &check,
            audit,
            audited,
            forbidden,
            last_change: None,
            max_listed: 10,
            audit_seconds: None,
            internal_errors: 0,
            sizes: &[],
            conversions: None,
        });
        let get = |ty: &str| {
            let c = st.conditions.iter().find(|c| c.type_ == ty).unwrap();
            (c.status.clone(), c.reason.clone())
        };
        let order: Vec<&str> = st.conditions.iter().map(|c| c.type_.as_str()).collect();
        let (r, s) = (
            order.iter().position(|t| *t == "Reconciling").unwrap(),
            order.iter().position(|t| *t == "Stalled").unwrap(),
        );
        assert!(r < s, "Reconciling before Stalled: {order:?}");
        assert_eq!(st.crd_generation, Some(3));
        assert_eq!(st.observed_generation, None, "set when written");
        (get("Ready"), get("Reconciling"), get("Stalled"))
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let mut clean = Audit::default();
    clean.record(judge(&v, thing("a", "value-00000"), false));
    assert_eq!(
        summed(&Audit::default(), false, None),
        (
            pair("Unknown", "Auditing"),
            pair("True", "Auditing"),
            pair("False", "Auditing")
        )
    );
    assert_eq!(
        summed(&clean, true, None),
        (
            pair("True", READY),
            pair("False", "Audited"),
            pair("False", READY)
        )
    );
    // Invalid, and (judged without ratcheting) stuck: the stuck objects are the reason.
    let before_ratcheting =
        CrdValidator::for_release(&crd, crd_audit_engine::Release::new(29)).expect("compiles");
    let mut invalid = Audit::default();
    invalid.record(judge(&v, thing("b", "other"), false));
    let mut stuck = Audit::default();
    stuck.record(judge(&before_ratcheting, thing("b", "other"), false));
    assert_eq!(
        summed(&invalid, true, None),
        (
            pair("False", "InvalidInstances"),
            pair("False", "Audited"),
            pair("True", "InvalidInstances")
        )
    );
    assert_eq!(
        summed(&stuck, true, None).0,
        pair("False", "BlockedObjects")
    );
    assert_eq!(summed(&stuck, true, None).2, pair("True", "BlockedObjects"));
    // A LIST refused: Forbidden, whatever else.
    assert_eq!(
        summed(&Audit::default(), true, Some("things is forbidden")).0,
        pair("False", "Forbidden")
    );
}

/// The report's own generation goes into the status and every condition when it is
/// written.
#[test]
fn the_status_describes_the_reports_own_generation() {
    let crd = crd(7, 1);
    let check = crd_audit_engine::check_crd(&crd, crd_audit_engine::Release::NEWEST);
    let mut st = status(&Inputs {
        crd: &crd,
        check: &check,
        audit: &Audit::default(),
        audited: true,
        forbidden: None,
        last_change: None,
        max_listed: 10,
        audit_seconds: None,
        internal_errors: 0,
        sizes: &[],
        conversions: None,
    });
    let print = fingerprint(&st);
    observe_generation(&mut st, 2);
    assert_eq!(
        (st.observed_generation, st.crd_generation),
        (Some(2), Some(7))
    );
    assert!(
        st.conditions
            .iter()
            .all(|c| c.observed_generation == Some(2))
    );
    assert_ne!(print, fingerprint(&st));
}

/// A broad tightening of a large CRD: the report stays far below etcd's limit, however
/// many objects break and however long their messages are.
#[test]
fn reports_are_bounded() {
    let old = crd(1, 12_000);
    let new = crd(2, 1);
    let changes = crd_audit_engine::diff(&old, &new);
    let change = LastChange::from_diff(&old, &new, &changes);
    assert!(change.tightened);
    let v = CrdValidator::new(&new).expect("compiles");
    let mut audit = Audit::default();
    // Half as many again as a report lists.
    for i in 0..1_500 {
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Thing",
            "metadata": {"name": format!("o-{i:05}"), "namespace": "ns", "uid": format!("uid-{i}")},
            "spec": {"mode": "x".repeat(10_000)}});
        let j: Judgement = judge(&v, obj, false);
        audit.record(j);
    }
    let check = crd_audit_engine::check_crd(&new, crd_audit_engine::Release::NEWEST);
    let st = status(&Inputs {
        crd: &new,
        check: &check,
        audit: &audit,
        audited: true,
        forbidden: None,
        last_change: Some(&change),
        max_listed: crate::audit::config::MAX_LISTED_OBJECTS,
        audit_seconds: Some(1.0),
        internal_errors: 0,
        sizes: &[],
        conversions: None,
    });
    assert_eq!(st.invalid_objects.len(), 1000);
    assert!(st.invalid_objects_truncated);
    assert!(
        st.invalid_objects
            .iter()
            .flat_map(|o| &o.errors)
            .all(|e| e.len() <= MAX_MESSAGE_BYTES)
    );
    let mut report = crate::audit::schema_audit::SchemaAudit::new(
        "things.example.com",
        crate::audit::schema_audit::SchemaAuditSpec {
            audited_revision: audited_revision(&old),
        },
    );
    report.status = Some(st);
    let size = serde_json::to_vec(&report).unwrap().len();
    assert!(size < 1_200_000, "report of {size} bytes");
    let cond = report
        .status
        .as_ref()
        .unwrap()
        .conditions
        .iter()
        .find(|c| c.type_ == "SchemaTightened")
        .unwrap();
    assert_eq!(cond.status, "True");
    assert!(cond.message.len() <= MAX_CONDITION_MESSAGE);
}

#[test]
fn a_restarted_operator_keeps_the_tightening() {
    let old = crd(1, 3);
    let new = crd(2, 1);
    let change = LastChange::from_diff(&old, &new, &crd_audit_engine::diff(&old, &new));
    let audit = Audit::default();
    let check = crd_audit_engine::check_crd(&new, crd_audit_engine::Release::NEWEST);
    let mut st = status(&Inputs {
        crd: &new,
        check: &check,
        audit: &audit,
        audited: true,
        forbidden: None,
        last_change: Some(&change),
        max_listed: 50,
        audit_seconds: None,
        internal_errors: 0,
        sizes: &[],
        conversions: None,
    });
    let mut times = BTreeMap::new();
    stamp(
        &mut st,
        &mut times,
        &Time(k8s_openapi::jiff::Timestamp::now()),
    );
    let restored = LastChange::restore(&st, 2).expect("restored");
    assert_eq!(restored, change);
    assert!(LastChange::restore(&st, 3).is_none());
    // A report of generation 5 whose last schema change made generation 2 (the
    // generations since changed no schema) still names it.
    // A report written before crdGeneration held the CRD's generation in
    // observedGeneration; a report of now holds its own generation there.
    st.crd_generation = None;
    st.observed_generation = Some(5);
    assert_eq!(LastChange::restore(&st, 5), Some(change.clone()));
    assert!(LastChange::restore(&st, 6).is_none());
    st.crd_generation = Some(6);
    st.observed_generation = Some(1);
    assert_eq!(LastChange::restore(&st, 6), Some(change));
    assert!(LastChange::restore(&st, 5).is_none());
}

#[test]
fn events_on_transitions_only() {
    let mk = |valid: &str| SchemaAuditStatus {
        conditions: vec![condition("InstancesValid", valid, "r", "m".into(), 1)],
        ..Default::default()
    };
    let clean = condition_events(Some(&condition_statuses(&mk("False"))), &mk("True"));
    assert_eq!(clean.len(), 1);
    assert_eq!(clean[0].1, "SchemaAuditClean");
    assert!(condition_events(Some(&condition_statuses(&mk("True"))), &mk("True")).is_empty());
    assert!(condition_events(None, &mk("True")).is_empty());
}

#[test]
fn condition_statuses_are_compared_without_being_built() {
    let mk = |conditions: &[(&str, &str)]| SchemaAuditStatus {
        conditions: conditions
            .iter()
            .map(|(t, st)| condition(t, st, "r", "m".into(), 1))
            .collect(),
        ..Default::default()
    };
    let a = mk(&[("InstancesValid", "True"), ("SchemaTightened", "False")]);
    let states = condition_statuses(&a);
    assert!(same_condition_statuses(&states, &a));
    let flipped = mk(&[("InstancesValid", "False"), ("SchemaTightened", "False")]);
    assert!(!same_condition_statuses(&states, &flipped));
    assert!(!same_condition_statuses(
        &states,
        &mk(&[("InstancesValid", "True")])
    ));
    let other = mk(&[("InstancesValid", "True"), ("UpdatesAccepted", "False")]);
    assert!(!same_condition_statuses(&states, &other));
}

#[test]
fn revisions_round_trip_and_uids_are_compared() {
    let c = crd(4, 2);
    let rev = audited_revision(&c).unwrap();
    let back = recorded_revision(&c, &rev).unwrap();
    assert_eq!(back.generation, 4);
    assert!(crd_audit_engine::diff(&back, &c).is_empty());
    let mut other = c.clone();
    other.uid = "u-2".into();
    assert!(recorded_revision(&other, &rev).is_none());
}
