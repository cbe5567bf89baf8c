//! The decisions about one tracked CRD, apart from any I/O: how a CRD read relates to what
//! is tracked ([`on_crd`]), what history a new revision carries ([`track`]), and what a new
//! status, a complete audit ([`on_audit_complete`]), one object's change ([`on_object`]), a
//! blocked audit or a written report does to the tracked state. Each returns the effects to
//! carry out (Events, annotations). Only `state` calls them, under its lock; each is tested
//! here with no server and no sleep.

use super::tracked::{Blocked, ReportedInvalid, Tracked};
use crate::audit::judge::{Audit, Judgement, Key, Transition, annotation_text};
use crate::operator::status::{self as report_status, LastChange};
use crate::packed_crd::PackedCrd;
use crd_audit_engine::{CheckReport, Crd, size_limits};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How a CRD event relates to what is tracked.
pub enum Seen {
    /// The revision and status judged already: nothing to check again.
    Unchanged,
    /// Same revision, other status (stored versions, the server's conditions).
    StatusOnly,
    /// A new generation of the tracked CRD (the revision judged before).
    Changed(Arc<PackedCrd>),
    /// First sight (or a CRD recreated under the same name: another UID).
    New,
}

/// How `crd` relates to the tracked revision of its name, if any.
pub(super) fn on_crd(tracked: Option<&Tracked>, crd: &Crd) -> Seen {
    match tracked {
        Some(t) if t.crd().uid == crd.uid && t.crd().generation == crd.generation => {
            if t.crd().stored_versions == crd.stored_versions
                && t.crd().conditions == crd.conditions
            {
                Seen::Unchanged
            } else {
                Seen::StatusOnly
            }
        }
        Some(t) if t.crd().uid == crd.uid => Seen::Changed(t.revision.clone()),
        _ => Seen::New,
    }
}

/// What an earlier operator left in a CRD's report, read when the CRD is first seen.
#[derive(Default)]
pub struct Earlier {
    pub last_change: Option<LastChange>,
    pub times: BTreeMap<String, (String, Time)>,
    pub status: Option<crate::audit::schema_audit::SchemaAuditStatus>,
    pub tightened_from: Option<BTreeSet<Key>>,
}

/// A revision to track: checked and packed, under a new epoch.
pub struct Revision {
    pub revision: Arc<PackedCrd>,
    pub check: CheckReport,
    pub sizes: Vec<size_limits::Finding>,
    pub epoch: u64,
}

/// The tracked state of a new revision. A schema change of the revision tracked before
/// (`previous` with `change`) keeps reporting the old audit until the new one completes, and
/// remembers which objects were invalid when the change tightened the schema; a new
/// generation with no schema change keeps the last change reported; a CRD seen
/// for the first time takes what an earlier operator reported (`earlier`); a recreated CRD
/// (no `change`) starts afresh.
pub(super) fn track(
    new: Revision,
    previous: Option<Tracked>,
    change: Option<LastChange>,
    earlier: Option<Earlier>,
) -> Tracked {
    let mut t = Tracked {
        revision: new.revision,
        check: new.check,
        sizes: new.sizes,
        epoch: new.epoch,
        audit: Audit::default(),
        audited: false,
        since: tokio::time::Instant::now(),
        audited_at: None,
        audit_seconds: None,
        blocked: None,
        last_change: None,
        tightened_from: None,
        reported_invalid: None,
        times: BTreeMap::new(),
        written: None,
        evented: None,
        resource_version: None,
        conversions: None,
    };
    match (previous, change) {
        (Some(mut p), Some(change)) => {
            if change.report.total_changes == Some(0) {
                // The same schemas as the revision tracked (and reported) before: a change
                // undone, or several made while the operator could not see them (a
                // loosening, then the tightening again). The last schema change stays the
                // one reported, so a missed revision never clears a tightening.
                t.last_change = p.last_change.take();
                t.tightened_from = p.tightened_from.take();
            } else {
                t.tightened_from = change
                    .tightened
                    .then(|| p.audit.invalid.keys().cloned().collect());
                t.last_change = Some(change);
            }
            t.audit = std::mem::take(&mut p.audit);
            t.reported_invalid = p.reported_invalid.take();
            t.times = std::mem::take(&mut p.times);
            t.evented = p.evented.take();
            t.written = p.written.take();
            // Checked again on the new revision; until then, what the last check found.
            t.conversions = p.conversions.take();
        }
        _ => {
            if let Some(e) = earlier {
                t.last_change = e.last_change;
                t.times = e.times;
                t.evented = e.status.as_ref().map(report_status::condition_statuses);
                t.reported_invalid = e.status.as_ref().map(|s| ReportedInvalid {
                    keys: s
                        .invalid_objects
                        .iter()
                        .map(|i| (i.namespace.clone(), i.name.clone()))
                        .collect(),
                    complete: !s.invalid_objects_truncated,
                });
                t.tightened_from = e.tightened_from;
                t.conversions = e.status.as_ref().and_then(reported_conversions);
            }
        }
    }
    t
}

/// What an earlier operator's report said of the conversion round trips, if anything.
fn reported_conversions(
    s: &crate::audit::schema_audit::SchemaAuditStatus,
) -> Option<crate::operator::status::conversions::Conversions> {
    use crate::operator::status::conversions::{CONDITION, Conversions};
    let c = s.conditions.iter().find(|c| c.type_ == CONDITION)?;
    Some(Conversions::Reported {
        status: c.status.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    })
}

/// The CRD read again with the same revision and status (another `resourceVersion`: its
/// labels, say): nothing to judge again.
pub(super) fn on_reread(t: &mut Tracked, resource_version: Option<String>) {
    t.resource_version = resource_version;
}

/// The same revision with another status (stored versions, the server's conditions): checked
/// again; the audit of the objects stands.
pub(super) fn on_status(
    t: &mut Tracked,
    crd: &Crd,
    check: CheckReport,
    sizes: Vec<size_limits::Finding>,
    resource_version: Option<String>,
) {
    t.revision = Arc::new(t.revision.with_status_of(crd));
    t.check = check;
    t.sizes = sizes;
    t.resource_version = resource_version;
}

/// The objects cannot be read or judged: the report says why. A refused LIST or a revision
/// that cannot be compiled ends the audit; an audit restarted after a bug is still running.
pub(super) fn on_blocked(t: &mut Tracked, blocked: Blocked) {
    if !matches!(blocked, Blocked::AuditRestarted(_)) {
        t.audited = true;
    }
    t.blocked = Some(blocked);
}

/// The revision has no storage version: no objects to audit.
pub(super) fn on_no_objects(t: &mut Tracked) {
    t.audited = true;
}

/// An object was deleted.
pub(super) fn on_object_deleted(t: &mut Tracked, key: &Key, version: &str) {
    t.audit.forget(key, version);
}

/// The server answered the annotation of an invalid object: `refused` when it refused the
/// write (the object is stuck), `written` when it took it.
pub(super) fn on_annotated(t: &mut Tracked, version: &str, key: Key, refused: bool, written: bool) {
    let stuck = refused && t.audit.invalid.contains_key(&key);
    let set = t.audit.unwritable.entry(version.to_string()).or_default();
    if stuck {
        set.insert(key);
    } else if written {
        set.remove(&key);
    }
}

/// The report to write now: its conditions' lastTransitionTime stamped (kept while a
/// condition's status stays, `now` when it changes).
pub(super) fn on_report_built(
    t: &mut Tracked,
    status: &mut crate::audit::schema_audit::SchemaAuditStatus,
    now: &Time,
) {
    report_status::stamp(status, &mut t.times, now);
}

/// The report was written with this status (its fingerprint).
pub(super) fn on_report_written(t: &mut Tracked, fingerprint: u64) {
    t.written = Some(fingerprint);
}

/// The report is gone (deleted behind the operator's back, or with the report CRD): it is
/// written again.
pub(super) fn on_report_gone(t: &mut Tracked) {
    t.written = None;
}

/// The status the report should have now: the Events of its conditions that changed (once
/// the audit is complete).
pub(super) fn on_report_status(
    t: &mut Tracked,
    status: &crate::audit::schema_audit::SchemaAuditStatus,
) -> Vec<report_status::ConditionEvent> {
    let unchanged = t
        .evented
        .as_ref()
        .is_some_and(|e| report_status::same_condition_statuses(e, status));
    if !t.audited || unchanged {
        return Vec::new();
    }
    let events = report_status::condition_events(t.evented.as_ref(), status);
    t.evented = Some(report_status::condition_statuses(status));
    events
}

/// Something to carry out after a decision.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// `Warning SchemaTightened` on the CRD, with this note.
    SchemaTightened(String),
    /// An object became invalid (or stuck: `blocked`): its `SchemaViolation` (or
    /// `UpdatesBlocked`) Event, within the per-CRD budget.
    Violation {
        key: Key,
        text: String,
        blocked: bool,
    },
    /// With `annotateObjects`: mark the object invalid with this text, or unmark it (`None`).
    Annotate(Key, Option<String>),
}

/// A complete LIST of the current revision's objects replaces the audit. Objects newly
/// invalid get their Event and annotation, objects valid again lose theirs; after a
/// tightening, the SchemaTightened Event says how many objects it broke and how many of
/// them are stuck. A complete audit also clears a refused LIST and a restarted audit's bug.
pub(super) fn on_audit_complete(
    t: &mut Tracked,
    fresh: Audit,
    secs: f64,
    now: Time,
) -> Vec<Effect> {
    let mut effects = Vec::new();
    let before: BTreeSet<Key> = match t.tightened_from.take() {
        Some(keys) => {
            let (mut newly, mut stuck) = (0, 0);
            for (_, i) in fresh.invalid.iter().filter(|(k, _)| !keys.contains(*k)) {
                newly += 1;
                stuck += usize::from(i.updates_blocked);
            }
            let summary = t
                .last_change
                .as_ref()
                .map_or(String::new(), |c| c.summary.clone());
            effects.push(Effect::SchemaTightened(if stuck > 0 {
                format!(
                    "{newly} object(s) newly invalid, {stuck} of them stuck (the API server refuses every update of them); {summary}"
                )
            } else if newly > 0 {
                format!(
                    "{newly} object(s) newly invalid, all still updatable (validation ratcheting tolerates their unchanged values); {summary}"
                )
            } else {
                format!("0 object(s) newly invalid; {summary}")
            }));
            keys
        }
        None => t.audit.invalid.keys().cloned().collect(),
    };
    // After a restart, the objects the earlier report listed were reported: no Event again
    // (all of them, when its list was cut short).
    let reported = t.reported_invalid.take();
    let evented_before = |k: &Key| {
        before.contains(k)
            || reported
                .as_ref()
                .is_some_and(|r| !r.complete || r.keys.contains(k))
    };
    let unwritable = std::mem::take(&mut t.audit.unwritable);
    t.audit = fresh;
    // Objects still invalid and still unwritable stay recorded as such.
    for (version, keys) in unwritable {
        let still: BTreeSet<Key> = keys
            .into_iter()
            .filter(|k| t.audit.invalid.contains_key(k))
            .collect();
        if !still.is_empty() {
            t.audit.unwritable.insert(version, still);
        }
    }
    t.audited = true;
    t.audited_at = Some(now);
    t.audit_seconds = Some(secs);
    if t.blocked
        .as_ref()
        .is_some_and(Blocked::ended_by_a_complete_audit)
    {
        t.blocked = None;
    }
    let mut annotations = Vec::new();
    for (k, i) in t.audit.invalid.iter().filter(|(k, _)| !before.contains(*k)) {
        let text = annotation_text(i);
        if !evented_before(k) {
            effects.push(Effect::Violation {
                key: k.clone(),
                text: text.clone(),
                blocked: i.updates_blocked,
            });
        }
        annotations.push(Effect::Annotate(k.clone(), Some(text)));
    }
    for k in before.iter().filter(|k| !t.audit.invalid.contains_key(*k)) {
        annotations.push(Effect::Annotate(k.clone(), None));
    }
    effects.extend(annotations);
    effects
}

/// For tests: the audit begins again (nothing judged yet).
#[cfg(test)]
pub(super) fn audit_restarted_for_tests(t: &mut Tracked) {
    t.audited = false;
    t.audit = Audit::default();
}

/// A watched change of one object of the current revision.
pub(super) fn on_object(t: &mut Tracked, j: Judgement) -> Vec<Effect> {
    let key = j.key.clone();
    let transition = t.audit.record(j);
    let invalid = t.audit.invalid.get(&key);
    let text = invalid.map(annotation_text);
    let blocked = invalid.is_some_and(|i| i.updates_blocked);
    let violation = |blocked: bool, text: String| {
        vec![
            Effect::Violation {
                key: key.clone(),
                text: text.clone(),
                blocked,
            },
            Effect::Annotate(key.clone(), Some(text)),
        ]
    };
    match transition {
        Transition::BecameInvalid => violation(blocked, text.unwrap_or_default()),
        Transition::BecameBlocked => violation(true, text.unwrap_or_default()),
        Transition::ChangedErrors => vec![Effect::Annotate(key, text)],
        Transition::BecameValid => vec![Effect::Annotate(key, None)],
        Transition::None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::schema_audit::SchemaChange;
    use serde_json::json;

    fn crd(uid: &str, generation: i64, stored: &[&str]) -> Crd {
        Crd::from_value(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com", "uid": uid, "generation": generation},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]},
            "status": {"storedVersions": stored}}),
        )
        .unwrap()
    }

    fn revision(crd: Crd, epoch: u64) -> Revision {
        Revision {
            revision: Arc::new(PackedCrd::pack(crd)),
            check: CheckReport::default(),
            sizes: Vec::new(),
            epoch,
        }
    }

    fn change(tightened: bool) -> LastChange {
        LastChange {
            report: SchemaChange {
                from_generation: 1,
                to_generation: 2,
                ..Default::default()
            },
            tightened,
            summary: "maximum lowered".into(),
        }
    }

    fn key(name: &str) -> Key {
        ("ns".to_string(), name.to_string())
    }

    fn judgement(name: &str, messages: &[&str], stuck: bool) -> Judgement {
        Judgement {
            key: key(name),
            uid: format!("uid-{name}"),
            version: "v1".into(),
            messages: messages.iter().map(|m| m.to_string()).collect(),
            unknown_fields: false,
            internal_error: false,
            updates_blocked: stuck,
            refusal: None,
        }
    }

    /// An audit of the given objects: (name, invalid, stuck).
    fn audit(objects: &[(&str, bool, bool)]) -> Audit {
        let mut a = Audit::default();
        for (name, invalid, stuck) in objects {
            let messages: &[&str] = if *invalid {
                &["spec.size: Too long"]
            } else {
                &[]
            };
            a.record(judgement(name, messages, *stuck));
        }
        a
    }

    fn now() -> Time {
        Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn a_crd_event_is_unchanged_status_only_a_change_or_new() {
        let t = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        assert!(matches!(on_crd(None, &crd("u1", 1, &["v1"])), Seen::New));
        assert!(matches!(
            on_crd(Some(&t), &crd("u1", 1, &["v1"])),
            Seen::Unchanged
        ));
        assert!(matches!(
            on_crd(Some(&t), &crd("u1", 1, &["v1", "v2"])),
            Seen::StatusOnly
        ));
        match on_crd(Some(&t), &crd("u1", 2, &["v1"])) {
            Seen::Changed(old) => assert_eq!(old.shell().generation, 1),
            _ => panic!("a new generation is a change"),
        }
        // Recreated under the same name, even at the same generation.
        assert!(matches!(
            on_crd(Some(&t), &crd("u2", 1, &["v1"])),
            Seen::New
        ));
    }

    #[test]
    fn a_tightening_keeps_the_old_audit_and_remembers_who_was_invalid() {
        let mut old = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        old.audit = audit(&[("a", true, false), ("b", false, false)]);
        old.written = Some(7);
        let t = track(
            revision(crd("u1", 2, &["v1"]), 2),
            Some(old),
            Some(change(true)),
            None,
        );
        assert_eq!(t.epoch, 2);
        assert_eq!(
            t.audit.invalid_count(),
            1,
            "the old audit until the new completes"
        );
        assert_eq!(t.tightened_from, Some(BTreeSet::from([key("a")])));
        assert_eq!(t.written, Some(7));
        assert!(!t.audited);

        let mut old = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        old.audit = audit(&[("a", true, false)]);
        let t = track(
            revision(crd("u1", 2, &["v1"]), 2),
            Some(old),
            Some(change(false)),
            None,
        );
        assert_eq!(t.tightened_from, None, "a loosening breaks nothing");
        assert!(t.last_change.as_ref().is_some_and(|c| !c.tightened));
    }

    /// A new generation with the schemas of the one tracked (a loosening and the tightening
    /// again, both missed while the API server was unreachable) keeps the tightening last
    /// reported: a missed revision never clears it.
    #[test]
    fn a_generation_with_no_schema_change_keeps_the_last_change() {
        let mut old = track(revision(crd("u1", 2, &["v1"]), 1), None, None, None);
        old.last_change = Some(change(true));
        old.audit = audit(&[("a", true, false)]);
        let nothing = LastChange {
            report: SchemaChange {
                from_generation: 2,
                to_generation: 5,
                total_changes: Some(0),
                ..Default::default()
            },
            tightened: false,
            summary: "generation 2 → 5: ".into(),
        };
        let t = track(
            revision(crd("u1", 5, &["v1"]), 2),
            Some(old),
            Some(nothing),
            None,
        );
        assert_eq!(t.last_change, Some(change(true)));
        assert_eq!(
            t.tightened_from, None,
            "the tightening's Event was for the revision that made it"
        );
        assert_eq!(t.audit.invalid_count(), 1);
    }

    #[test]
    fn a_recreated_crd_starts_afresh_and_a_first_sight_takes_the_earlier_report() {
        let mut old = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        old.audit = audit(&[("a", true, false)]);
        old.last_change = Some(change(true));
        let t = track(revision(crd("u2", 1, &["v1"]), 2), Some(old), None, None);
        assert_eq!(t.audit.invalid_count(), 0);
        assert!(t.last_change.is_none() && t.tightened_from.is_none());

        let earlier = Earlier {
            last_change: Some(change(true)),
            tightened_from: Some(BTreeSet::from([key("a")])),
            ..Default::default()
        };
        let t = track(
            revision(crd("u1", 2, &["v1"]), 1),
            None,
            None,
            Some(earlier),
        );
        assert!(t.last_change.as_ref().is_some_and(|c| c.tightened));
        assert_eq!(t.tightened_from, Some(BTreeSet::from([key("a")])));
    }

    /// After a restart, the objects the earlier operator's report listed as invalid were
    /// reported already: the first complete audit emits no Event for them (an object invalid
    /// since gets its own), and still annotates them. A report whose list was cut short
    /// stands for every invalid object.
    #[test]
    fn a_restart_does_not_report_again_what_the_earlier_report_listed() {
        use crate::audit::schema_audit::{InvalidObject, SchemaAuditStatus};
        let restarted = |listed: &[&str], truncated: bool| {
            let status = SchemaAuditStatus {
                invalid_objects: listed
                    .iter()
                    .map(|n| InvalidObject {
                        namespace: "ns".into(),
                        name: n.to_string(),
                        ..Default::default()
                    })
                    .collect(),
                invalid_objects_truncated: truncated,
                ..Default::default()
            };
            let earlier = Earlier {
                status: Some(status),
                ..Default::default()
            };
            track(
                revision(crd("u1", 1, &["v1"]), 1),
                None,
                None,
                Some(earlier),
            )
        };
        let fresh = || audit(&[("a", true, false), ("b", true, true), ("c", false, false)]);
        let mut t = restarted(&["a"], false);
        let effects = on_audit_complete(&mut t, fresh(), 1.0, now());
        let text = |t: &Tracked, k: &str| annotation_text(&t.audit.invalid[&key(k)]);
        assert_eq!(
            effects,
            vec![
                Effect::Violation {
                    key: key("b"),
                    text: text(&t, "b"),
                    blocked: true
                },
                Effect::Annotate(key("a"), Some(text(&t, "a"))),
                Effect::Annotate(key("b"), Some(text(&t, "b"))),
            ]
        );
        // Once: a later complete audit compares with the audit before it.
        assert!(t.reported_invalid.is_none());

        let mut t = restarted(&["a"], true);
        let effects = on_audit_complete(&mut t, fresh(), 1.0, now());
        assert!(
            effects.iter().all(|e| matches!(e, Effect::Annotate(..))),
            "{effects:?}"
        );
    }

    /// After a tightening, the complete audit says how many objects it broke and how many
    /// of them are stuck; only those get a violation Event, and the objects valid again
    /// lose their annotation.
    #[test]
    fn a_complete_audit_after_a_tightening_counts_what_it_broke() {
        let mut old = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        old.audit = audit(&[("a", true, false), ("c", true, false)]);
        let mut t = track(
            revision(crd("u1", 2, &["v1"]), 2),
            Some(old),
            Some(change(true)),
            None,
        );
        t.blocked = Some(Blocked::Forbidden("things is forbidden".into()));
        t.audit
            .unwritable
            .insert("v1".into(), BTreeSet::from([key("a"), key("c")]));
        let fresh = audit(&[
            ("a", true, false),
            ("b", true, true),
            ("d", true, false),
            ("c", false, false),
        ]);
        let effects = on_audit_complete(&mut t, fresh, 1.5, now());
        let text = |k: &str| annotation_text(&t.audit.invalid[&key(k)]);
        assert_eq!(
            effects,
            vec![
                Effect::SchemaTightened(
                    "2 object(s) newly invalid, 1 of them stuck (the API server refuses every update of them); maximum lowered".into()
                ),
                Effect::Violation { key: key("b"), text: text("b"), blocked: true },
                Effect::Violation { key: key("d"), text: text("d"), blocked: false },
                Effect::Annotate(key("b"), Some(text("b"))),
                Effect::Annotate(key("d"), Some(text("d"))),
                Effect::Annotate(key("c"), None),
            ]
        );
        assert!(t.audited && t.audit_seconds == Some(1.5) && t.tightened_from.is_none());
        assert!(t.blocked.is_none(), "a complete LIST clears a refused one");
        assert_eq!(
            t.audit.unwritable["v1"],
            BTreeSet::from([key("a")]),
            "only objects still invalid stay unwritable"
        );

        // The next complete audit compares with the previous one, with no Event of the CRD.
        let effects = on_audit_complete(&mut t, audit(&[("a", true, false)]), 1.0, now());
        assert_eq!(
            effects,
            vec![
                Effect::Annotate(key("b"), None),
                Effect::Annotate(key("d"), None),
            ]
        );
    }

    #[test]
    fn a_complete_audit_clears_only_its_own_kinds_of_block() {
        let mut t = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        t.blocked = Some(Blocked::AuditRestarted("boom".into()));
        on_audit_complete(&mut t, Audit::default(), 1.0, now());
        assert!(t.blocked.is_none());
        t.blocked = Some(Blocked::NotCompiled("a judgement panicked".into()));
        on_audit_complete(&mut t, Audit::default(), 1.0, now());
        assert!(t.blocked.is_some());
    }

    #[test]
    fn an_object_change_gives_its_event_and_annotation() {
        let mut t = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        assert_eq!(on_object(&mut t, judgement("a", &[], false)), vec![]);
        let effects = on_object(&mut t, judgement("a", &["spec.size: Too long"], false));
        let text = annotation_text(&t.audit.invalid[&key("a")]);
        assert_eq!(
            effects,
            vec![
                Effect::Violation {
                    key: key("a"),
                    text: text.clone(),
                    blocked: false
                },
                Effect::Annotate(key("a"), Some(text.clone())),
            ]
        );
        assert_eq!(
            on_object(&mut t, judgement("a", &["spec.size: Too long"], false)),
            vec![]
        );
        // Now stuck: an Event of its own.
        let effects = on_object(&mut t, judgement("a", &["spec.size: Too long"], true));
        assert!(
            matches!(&effects[0], Effect::Violation { blocked: true, .. }),
            "{effects:?}"
        );
        let effects = on_object(&mut t, judgement("a", &["spec.size: Too short"], true));
        assert!(
            matches!(&effects[..], [Effect::Annotate(_, Some(_))]),
            "{effects:?}"
        );
        assert_eq!(
            on_object(&mut t, judgement("a", &[], false)),
            vec![Effect::Annotate(key("a"), None)]
        );
    }

    #[test]
    fn conversion_findings_outlive_a_new_revision_and_a_restart() {
        use crate::operator::status::conversions::{ConversionFindings, Conversions};
        let mut t = track(revision(crd("u1", 1, &["v1"]), 1), None, None, None);
        let found = Conversions::Checked(ConversionFindings {
            generation: 1,
            objects: 3,
            lossy: 1,
            ..Default::default()
        });
        t.conversions = Some(found.clone());
        // A new generation keeps what the last check found until the next one ends.
        let t2 = track(
            revision(crd("u1", 2, &["v1"]), 2),
            Some(t),
            Some(change(false)),
            None,
        );
        assert_eq!(t2.conversions, Some(found));
        // A recreated CRD starts afresh.
        let t3 = track(revision(crd("u2", 1, &["v1"]), 3), Some(t2), None, None);
        assert_eq!(t3.conversions, None);
        // A restart takes the condition the earlier report holds, as it was.
        let mut status = t3.desired_status(50);
        status
            .conditions
            .push(report_status::conversions::conversions_lossless(
                &Conversions::Checked(ConversionFindings {
                    generation: 1,
                    objects: 3,
                    failed: 3,
                    ..Default::default()
                }),
                1,
            ));
        let earlier = Earlier {
            status: Some(status),
            ..Default::default()
        };
        let t4 = track(
            revision(crd("u2", 1, &["v1"]), 4),
            None,
            None,
            Some(earlier),
        );
        match &t4.conversions {
            Some(Conversions::Reported { status, reason, .. }) => {
                assert_eq!(
                    (status.as_str(), reason.as_str()),
                    ("False", "ConversionFailed")
                )
            }
            other => panic!("{other:?}"),
        }
        let again = t4.desired_status(50);
        let c = again
            .conditions
            .iter()
            .find(|c| c.type_ == "ConversionsLossless")
            .unwrap();
        assert_eq!(c.reason, "ConversionFailed");
        assert_eq!(
            report_status::condition_events(
                Some(&report_status::condition_statuses(&again)),
                &again
            ),
            Vec::new(),
            "no Event again for what the earlier report said"
        );
    }
}
