//! What a `SchemaAudit` report says, computed from an audit: the status (conditions,
//! versions, invalid objects, the last schema change), bounded so that a report always fits
//! in etcd, the Events its condition transitions call for, and the audited revision a
//! restarted operator diffs the next change against. Pure functions; writing is the
//! controller's job.

use crate::audit::judge::{Audit, MAX_MESSAGE_BYTES, bounded};
use crate::audit::schema_audit::{
    ChangeEntry, InvalidObject, SchemaAuditStatus, SchemaChange, SizeFinding, VersionAudit,
};
use crd_audit_engine::CheckReport;
use crd_audit_engine::{Change, Class};
use crd_audit_engine::{Crd, Scope};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub mod conversions;
mod storage;
mod summary;

pub use summary::{READY, observe_generation, summary};

/// The most schema changes a report lists (tightening ones first).
pub const MAX_LISTED_CHANGES: usize = 100;
/// The most changes a SchemaTightened message names.
const NAMED_CHANGES: usize = 10;
/// The longest condition message (metav1.Condition allows 32768 bytes).
const MAX_CONDITION_MESSAGE: usize = 4096;
/// The largest audited revision kept in a report (bigger CRDs are not kept).
pub const MAX_REVISION_BYTES: usize = 256 << 10;

/// The last observed schema change of a CRD, as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct LastChange {
    pub report: SchemaChange,
    pub tightened: bool,
    /// The SchemaTightened condition message.
    pub summary: String,
}

impl LastChange {
    /// From the classified changes between two revisions.
    pub fn from_diff(old: &Crd, new: &Crd, changes: &[Change]) -> LastChange {
        let served_tightening = |c: &&Change| {
            c.class == Class::Tightening
                && (c.version.is_empty() || new.version(&c.version).is_none_or(|v| v.served))
        };
        let tightening: Vec<&Change> = changes.iter().filter(served_tightening).collect();
        let mut ordered: Vec<&Change> = changes
            .iter()
            .filter(|c| c.class == Class::Tightening)
            .collect();
        ordered.extend(changes.iter().filter(|c| c.class != Class::Tightening));
        let entries = ordered
            .iter()
            .take(MAX_LISTED_CHANGES)
            .map(|c| ChangeEntry {
                version: c.version.clone(),
                path: bounded(&c.path, MAX_MESSAGE_BYTES),
                class: c.class.as_str().into(),
                reason: bounded(&c.reason, MAX_MESSAGE_BYTES),
            })
            .collect();
        let mut names: Vec<String> = tightening
            .iter()
            .take(NAMED_CHANGES)
            .map(|x| format!("{} {} ({})", x.version, x.path, x.kind))
            .collect();
        if tightening.len() > NAMED_CHANGES {
            names.push(format!("and {} more", tightening.len() - NAMED_CHANGES));
        }
        LastChange {
            report: SchemaChange {
                from_generation: old.generation,
                to_generation: new.generation,
                changes: entries,
                total_changes: Some(changes.len() as i64),
            },
            tightened: !tightening.is_empty(),
            summary: bounded(
                &format!(
                    "generation {} → {}: {}",
                    old.generation,
                    new.generation,
                    names.join("; ")
                ),
                MAX_CONDITION_MESSAGE,
            ),
        }
    }

    /// What an earlier operator reported about the same generation (after a restart): the
    /// last change made it, or the report describes it (`crdGeneration`; the generations
    /// since changed no schema).
    pub fn restore(status: &SchemaAuditStatus, generation: i64) -> Option<LastChange> {
        let report = status.last_schema_change.as_ref()?;
        // Reports written before `crdGeneration` held the CRD's generation in
        // `observedGeneration`.
        let described = status.crd_generation.or(status.observed_generation);
        if report.to_generation != generation && described != Some(generation) {
            return None;
        }
        Self::reported(status)
    }

    /// The last change a report names, whatever generation it describes.
    pub fn reported(status: &SchemaAuditStatus) -> Option<LastChange> {
        let report = status.last_schema_change.clone()?;
        let cond = status
            .conditions
            .iter()
            .find(|c| c.type_ == "SchemaTightened")?;
        Some(LastChange {
            report,
            tightened: cond.status == "True",
            summary: cond.message.clone(),
        })
    }
}

/// Everything a report is computed from.
pub struct Inputs<'a> {
    pub crd: &'a Crd,
    pub check: &'a CheckReport,
    pub audit: &'a Audit,
    /// The first complete LIST of the current revision is done.
    pub audited: bool,
    /// Why the objects cannot be read (a forbidden LIST).
    pub forbidden: Option<&'a str>,
    pub last_change: Option<&'a LastChange>,
    pub max_listed: usize,
    pub audit_seconds: Option<f64>,
    /// Objects whose judgement panicked.
    pub internal_errors: usize,
    /// The size limits the CRD exceeds as a manifest.
    pub sizes: &'a [crd_audit_engine::size_limits::Finding],
    /// The conversion round trips (`auditConversions`, a CRD converted by a webhook).
    pub conversions: Option<&'a conversions::Conversions>,
}

/// Whether each version's schema is structural, from the check's causes (causes under
/// `spec.validation` or `spec.preserveUnknownFields` concern every version).
pub fn structural_versions(crd: &Crd, check: &CheckReport) -> Vec<bool> {
    (0..crd.versions.len())
        .map(|i| {
            let own = format!("versions[{i}]");
            !check.non_structural.iter().any(|c| {
                let f = c.field.as_str();
                f.contains(&own) || !f.contains("versions[")
            }) && check.condition.is_none()
        })
        .map(|structural| structural || crd.versions.is_empty())
        .collect()
}

fn condition(ty: &str, status: &str, reason: &str, message: String, generation: i64) -> Condition {
    Condition {
        type_: ty.into(),
        status: status.into(),
        reason: reason.into(),
        message: bounded(&message, MAX_CONDITION_MESSAGE),
        // Stamped when written (see `stamp`).
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: Some(generation),
    }
}

/// The API server's own NonStructuralSchema condition on the CRD, if it set one.
fn server_condition(crd: &Crd) -> Option<(String, String)> {
    crd.conditions.iter().find_map(|c| {
        (c["type"] == "NonStructuralSchema").then(|| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
    })
}

fn conditions(i: &Inputs) -> Vec<Condition> {
    let g = i.crd.generation;
    let mut out = Vec::new();
    let mut structural = match (&i.check.condition, &i.check.internal_error) {
        (_, Some(e)) => condition(
            "NonStructuralSchema",
            "Unknown",
            "InternalError",
            e.clone(),
            g,
        ),
        (c, None) => match c {
            Some(c) if c.status == "True" => condition(
                "NonStructuralSchema",
                "True",
                "Violations",
                c.message.clone(),
                g,
            ),
            Some(c) => condition(
                "NonStructuralSchema",
                "Unknown",
                c.reason,
                c.message.clone(),
                g,
            ),
            None => condition(
                "NonStructuralSchema",
                "False",
                "Structural",
                "every version's schema is structural".into(),
                g,
            ),
        },
    };
    // Where the server judged the CRD itself (legacy CRDs), say when it disagrees.
    if let Some((status, message)) = server_condition(i.crd)
        && status == "True"
        && (structural.status != "True" || structural.message != message)
    {
        structural.message = bounded(
            &format!(
                "{} (the API server's own NonStructuralSchema condition differs: {message})",
                structural.message
            ),
            MAX_CONDITION_MESSAGE,
        );
    }
    out.push(structural);
    let invalid = i.audit.invalid_count();
    out.push(if let Some(msg) = i.forbidden {
        condition("InstancesValid", "Unknown", "Forbidden", msg.into(), g)
    } else if !i.audited {
        condition(
            "InstancesValid",
            "Unknown",
            "Auditing",
            "audit in progress".into(),
            g,
        )
    } else if invalid == 0 {
        condition(
            "InstancesValid",
            "True",
            "AllValid",
            "every stored object is valid under its version's schema".into(),
            g,
        )
    } else if i.internal_errors > 0 {
        condition(
            "InstancesValid",
            "False",
            "InternalError",
            format!(
                "{invalid} invalid object(s); crd-audit failed while judging {} of them (InternalError)",
                i.internal_errors
            ),
            g,
        )
    } else {
        condition(
            "InstancesValid",
            "False",
            "InvalidInstances",
            format!("{invalid} invalid object(s)"),
            g,
        )
    });
    let blocked = i.audit.blocked_count();
    out.push(if let Some(msg) = i.forbidden {
        condition("UpdatesAccepted", "Unknown", "Forbidden", msg.into(), g)
    } else if !i.audited {
        condition(
            "UpdatesAccepted",
            "Unknown",
            "Auditing",
            "audit in progress".into(),
            g,
        )
    } else if blocked == 0 {
        condition(
            "UpdatesAccepted",
            "True",
            "NoBlockedObjects",
            "0 blocked object(s): every stored object can be updated".into(),
            g,
        )
    } else {
        condition(
            "UpdatesAccepted",
            "False",
            "BlockedObjects",
            format!(
                "{blocked} blocked object(s): the API server refuses every update of them, even one that changes nothing"
            ),
            g,
        )
    });
    out.push(match i.last_change {
        Some(c) if c.tightened => {
            condition("SchemaTightened", "True", "Tightened", c.summary.clone(), g)
        }
        _ => condition(
            "SchemaTightened",
            "False",
            "NotTightened",
            "the last observed schema change did not tighten a served version".into(),
            g,
        ),
    });
    out.push(storage::storage_migrated(i));
    let missing = &i.check.stored_versions_not_served;
    out.push(if missing.is_empty() {
        condition(
            "StoredVersionsServed",
            "True",
            "Served",
            "every stored version is served".into(),
            g,
        )
    } else {
        condition(
            "StoredVersionsServed",
            "False",
            "StoredVersionNotServed",
            format!("stored versions not served: {}", missing.join(", ")),
            g,
        )
    });
    if let Some(c) = i.conversions {
        out.push(conversions::conversions_lossless(c, g));
    }
    out
}

/// The report's status, without times (`stamp` adds them when it is written).
pub fn status(i: &Inputs) -> SchemaAuditStatus {
    let a = i.audit;
    let structural = structural_versions(i.crd, i.check);
    let mut invalid_per_version: BTreeMap<&str, i64> = BTreeMap::new();
    let mut blocked_per_version: BTreeMap<&str, i64> = BTreeMap::new();
    for inv in a.invalid.values() {
        *invalid_per_version.entry(inv.version.as_str()).or_default() += 1;
        if inv.updates_blocked {
            *blocked_per_version.entry(inv.version.as_str()).or_default() += 1;
        }
    }
    let versions = i
        .crd
        .versions
        .iter()
        .zip(structural)
        .map(|(v, structural)| VersionAudit {
            name: v.name.clone(),
            served: v.served,
            storage: v.storage,
            structural,
            objects: a.objects.get(&v.name).copied().unwrap_or(0) as i64,
            invalid_objects: invalid_per_version
                .get(v.name.as_str())
                .copied()
                .unwrap_or(0),
            objects_with_unknown_fields: a.unknown_fields.get(&v.name).map_or(0, |s| s.len())
                as i64,
            unwritable_objects: a.unwritable.get(&v.name).map_or(0, |s| s.len()) as i64,
            blocked_objects: blocked_per_version
                .get(v.name.as_str())
                .copied()
                .unwrap_or(0),
        })
        .collect();
    // Stuck objects first (the outage to hear about), each group by namespace and name.
    let blocked_first = a.invalid.iter().filter(|(_, i)| i.updates_blocked);
    let tolerated = a.invalid.iter().filter(|(_, i)| !i.updates_blocked);
    let invalid_objects = blocked_first
        .chain(tolerated)
        .take(i.max_listed)
        .map(|((ns, name), inv)| InvalidObject {
            namespace: ns.clone(),
            name: name.clone(),
            version: inv.version.clone(),
            uid: inv.uid.clone(),
            updates_blocked: inv.updates_blocked,
            errors: inv.errors.clone(),
        })
        .collect();
    let mut conditions = conditions(i);
    conditions.extend(summary(&conditions, i.audited, i.crd.generation));
    SchemaAuditStatus {
        // The report's own generation, set when it is written (`observe_generation`).
        observed_generation: None,
        crd_generation: Some(i.crd.generation),
        conditions,
        versions,
        invalid_objects,
        invalid_objects_truncated: a.invalid.len() > i.max_listed,
        last_schema_change: i.last_change.map(|c| c.report.clone()),
        last_audit_time: None,
        audit_duration_seconds: i.audit_seconds,
        size_findings: i.sizes.iter().map(SizeFinding::of).collect(),
    }
}

/// Sets each condition's lastTransitionTime: kept while its status stays, `now` when it
/// changes. `times` remembers (status, time) per condition type between writes.
pub fn stamp(s: &mut SchemaAuditStatus, times: &mut BTreeMap<String, (String, Time)>, now: &Time) {
    for c in &mut s.conditions {
        let t = match times.get(&c.type_) {
            Some((status, t)) if *status == c.status => t.clone(),
            _ => now.clone(),
        };
        times.insert(c.type_.clone(), (c.status.clone(), t.clone()));
        c.last_transition_time = t;
    }
}

/// An Event a condition transition calls for: (warning, reason, note).
pub type ConditionEvent = (bool, &'static str, String);

/// Condition type → status: what the Events of a report were computed from (all that
/// [`condition_events`] compares; kept per CRD instead of the whole status).
pub type ConditionStatuses = std::collections::BTreeMap<String, String>;

/// What of a condition its Events are computed from: its status, and for `StorageMigrated`
/// its reason too (`False:MigrationBlocked` and `False:MigrationNeeded` call for different
/// Events).
fn state_of(c: &Condition) -> String {
    if c.type_ == "StorageMigrated" {
        format!("{}:{}", c.status, c.reason)
    } else {
        c.status.clone()
    }
}

/// The [`ConditionStatuses`] of a status.
pub fn condition_statuses(status: &SchemaAuditStatus) -> ConditionStatuses {
    status
        .conditions
        .iter()
        .map(|c| (c.type_.clone(), state_of(c)))
        .collect()
}

/// Whether `states` are the condition statuses of `status` (without building them).
pub fn same_condition_statuses(states: &ConditionStatuses, status: &SchemaAuditStatus) -> bool {
    states.len() == status.conditions.len()
        && status
            .conditions
            .iter()
            .all(|c| states.get(&c.type_) == Some(&state_of(c)))
}

/// A fingerprint of a status: equal statuses have equal fingerprints, and a status that
/// differs from the one last written has another one (but for a 1 in 2^64 chance). Kept
/// per CRD in place of the status last written.
pub fn fingerprint(status: &SchemaAuditStatus) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(status).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// The Events of the condition transitions from `before` (what was last reported, if
/// anything) to `after`.
pub fn condition_events(
    before: Option<&ConditionStatuses>,
    after: &SchemaAuditStatus,
) -> Vec<ConditionEvent> {
    let now = |ty: &str| {
        after
            .conditions
            .iter()
            .find(|c| c.type_ == ty)
            .map(|c| (c.status.clone(), c.message.clone()))
    };
    let was = |ty: &str| before?.get(ty).cloned();
    let mut out = Vec::new();
    if let Some((status, message)) = now("NonStructuralSchema")
        && status == "True"
        && was("NonStructuralSchema").as_deref() != Some("True")
    {
        out.push((true, "NonStructuralSchema", message));
    }
    if let Some((status, message)) = now("StoredVersionsServed")
        && status == "False"
        && was("StoredVersionsServed").as_deref() != Some("False")
    {
        out.push((true, "StoredVersionNotServed", message));
    }
    let migration = after
        .conditions
        .iter()
        .find(|c| c.type_ == "StorageMigrated");
    if let Some(c) = migration {
        let was = was("StorageMigrated");
        let state = state_of(c);
        if state == "False:MigrationBlocked" && was.as_deref() != Some(state.as_str()) {
            out.push((true, "StorageMigrationBlocked", c.message.clone()));
        }
        // Migrated since it was reported otherwise (by the operator or by hand).
        if c.status == "True" && was.as_deref().is_some_and(|w| w.starts_with("False")) {
            out.push((false, "StorageMigrated", c.message.clone()));
        }
    }
    if let Some((status, message)) = now(conversions::CONDITION)
        && status == "False"
        && was(conversions::CONDITION).as_deref() != Some("False")
    {
        out.push((true, "ConversionFindings", message));
    }
    if now("InstancesValid").is_some_and(|c| c.0 == "True")
        && was("InstancesValid").as_deref() == Some("False")
    {
        out.push((
            false,
            "SchemaAuditClean",
            "every stored object is valid again".into(),
        ));
    }
    out
}

/// The audited revision of a CRD (what a restarted operator diffs the next change against),
/// unless it is too large to keep.
pub fn audited_revision(crd: &Crd) -> Option<Value> {
    let versions: Vec<Value> = crd
        .versions
        .iter()
        .map(|v| {
            json!({"name": v.name, "served": v.served, "storage": v.storage,
                "schema": v.schema.as_ref().map(|s| json!({"openAPIV3Schema": s}))})
        })
        .collect();
    let rev = json!({"generation": crd.generation, "uid": crd.uid, "scope": match crd.scope {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        }, "versions": versions});
    (rev.to_string().len() <= MAX_REVISION_BYTES).then_some(rev)
}

/// [`audited_revision`] of a packed revision (inflated only when it can fit).
pub fn packed_revision(revision: &crate::packed_crd::PackedCrd) -> Option<Value> {
    if revision.schema_json_bytes() > MAX_REVISION_BYTES {
        return None;
    }
    audited_revision(&revision.unpack().ok()?)
}

/// The CRD revision a report recorded, as a CRD (for diffing), if it is of this CRD (same
/// UID when the report recorded one).
pub fn recorded_revision(crd: &Crd, rev: &Value) -> Option<Crd> {
    if let Some(uid) = rev.get("uid").and_then(Value::as_str)
        && uid != crd.uid
    {
        return None;
    }
    let versions: Vec<Value> = rev["versions"]
        .as_array()?
        .iter()
        .map(|v| {
            let mut v = v.clone();
            if v["schema"].is_null() {
                v.as_object_mut()?.remove("schema");
            }
            Some(v)
        })
        .collect::<Option<_>>()?;
    let doc = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd.name, "generation": rev["generation"], "uid": crd.uid},
        "spec": {"group": crd.group, "scope": rev["scope"],
            "names": {"kind": crd.kind, "plural": crd.plural}, "versions": versions}});
    Crd::from_value(&doc).ok()
}

#[cfg(test)]
mod tests;
