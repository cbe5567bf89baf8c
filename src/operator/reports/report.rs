//! What the audits say and how it is written: the status a tracked CRD's `SchemaAudit`
//! report should have, the report object and its write (server-side apply under the field
//! manager `crd-audit`, then the whole status), which reports have findings, the
//! metrics per CRD. When a report is due is `reports::due`'s to decide, and the writer task
//! (`reports::writer`) writes it.

use crate::audit::schema_audit::{SchemaAudit, SchemaAuditSpec, SchemaAuditStatus};
use crate::operator::crds::state::{self, Tracked};
#[cfg(test)]
use crate::operator::leadership::context::Ctx;
use crate::operator::leadership::context::Deps;
use crate::operator::reports::status::{self as report_status, Inputs};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, Patch, PatchParams};

const FIELD_MANAGER: &str = "crd-audit";

/// The status a tracked CRD's report should have now (without times).
pub(crate) fn desired(deps: &Deps, t: &Tracked) -> SchemaAuditStatus {
    let blocked = t.blocked().map(|b| b.message());
    let mut s = report_status::status(&Inputs {
        crd: t.crd(),
        check: t.check(),
        audit: t.audit(),
        audited: t.audited(),
        forbidden: blocked.as_deref(),
        last_change: t.last_change(),
        max_listed: deps.config.max_listed_objects,
        audit_seconds: t.audit_seconds(),
        internal_errors: t.audit().internal_errors(),
        sizes: t.sizes(),
    });
    // Why the objects could not be judged: the reason of both conditions about them.
    if let Some(blocked) = t.blocked() {
        for c in s
            .conditions
            .iter_mut()
            .filter(|c| c.type_ == "InstancesValid" || c.type_ == "UpdatesAccepted")
        {
            c.reason = blocked.reason().to_string();
        }
    }
    s.last_audit_time = t.audited_at().cloned();
    s
}

pub(crate) fn publish_metrics(deps: &Deps, t: &Tracked, s: &SchemaAuditStatus) {
    let m = &deps.metrics;
    for v in &s.versions {
        let counts = [v.objects, v.invalid_objects, v.blocked_objects];
        m.set_version_counts(&t.crd().name, &v.name, counts);
    }
    let nonstructural = s.versions.iter().filter(|v| !v.structural).count() as i64;
    m.set_nonstructural_versions(&t.crd().name, nonstructural);
    m.set_stored_versions(&t.crd().name, t.crd().stored_versions.len() as i64);
}

/// The report object to apply, with its status stamped.
pub(crate) fn report_object(t: &mut Tracked, mut status: SchemaAuditStatus) -> SchemaAudit {
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    state::on_report_built(t, &mut status, &now);
    let mut r = SchemaAudit::new(
        &t.crd().name,
        // Filled in by the writer, outside the registry lock (it inflates the schemas).
        SchemaAuditSpec {
            audited_revision: None,
        },
    );
    r.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        name: t.crd().name.clone(),
        uid: t.crd().uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(false),
    }])
    .filter(|_| !t.crd().uid.is_empty());
    r.status = Some(status);
    r
}

/// Whether a tracked CRD's report has findings (invalid objects, a tightening, CRD problems,
/// an audit that cannot run): on a fresh start with thousands of CRDs, writes are paced by
/// `apiQps`, and these reports must not wait behind thousands of clean ones.
pub fn has_findings(t: &Tracked) -> bool {
    t.audit().invalid_count() > 0
        || t.blocked().is_some()
        || t.check().has_findings()
        || t.check().internal_error.is_some()
        || t.last_change().is_some_and(|c| c.tightened)
}

/// [`desired`] of a tracked CRD, for tests.
#[cfg(test)]
pub fn desired_for_tests(ctx: &Ctx, crd: &str) -> SchemaAuditStatus {
    desired(&ctx.deps, &ctx.registry()[crd])
}

/// Server-side apply of the report, then a merge patch of its whole status: every field of
/// the status the operator does not set is written as `null`, so nothing an earlier writer
/// left (the report of a deleted CRD of the same name, an older operator) survives. (Server-
/// side apply of the status would not remove a field that no manager owns any more, and on
/// servers before 1.22 the apply of the object itself takes the status fields from the
/// manager.)
///
/// The caller has taken the write budget of both requests.
pub(crate) async fn apply(deps: &Deps, object: &SchemaAudit) -> Result<(), kube::Error> {
    let api: Api<SchemaAudit> = Api::all(deps.client.clone());
    let name = object.metadata.name.clone().unwrap_or_default();
    let mut main = object.clone();
    main.status = None;
    deps.metrics.api_write("patch");
    let params = PatchParams::apply(FIELD_MANAGER).force();
    if let Err(e) = api.patch(&name, &params, &Patch::Apply(&main)).await {
        deps.metrics.api_error("patch");
        return Err(e);
    }
    deps.metrics.api_write("patch");
    let body = serde_json::json!({ "status": status_patch(object.status.as_ref()) });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    if let Err(e) = api.patch_status(&name, &params, &Patch::Merge(&body)).await {
        deps.metrics.api_error("patch");
        return Err(e);
    }
    Ok(())
}

/// The status as a merge patch that replaces the whole status: the optional fields left out
/// of the status are `null` (removed).
fn status_patch(status: Option<&SchemaAuditStatus>) -> serde_json::Value {
    let mut v = serde_json::to_value(status.cloned().unwrap_or_default())
        .unwrap_or(serde_json::Value::Null);
    if let serde_json::Value::Object(m) = &mut v {
        for key in STATUS_OPTIONAL_FIELDS {
            m.entry(key).or_insert(serde_json::Value::Null);
        }
    }
    v
}

/// The status fields that are left out when unset.
const STATUS_OPTIONAL_FIELDS: [&str; 4] = [
    "observedGeneration",
    "lastSchemaChange",
    "lastAuditTime",
    "auditDurationSeconds",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every optional field of the status is in the patch, as a value or as null: a field
    /// left out would survive from an earlier writer.
    #[test]
    fn the_status_patch_names_every_optional_field() {
        let mut full = serde_json::to_value(SchemaAuditStatus {
            observed_generation: Some(1),
            last_schema_change: Some(Default::default()),
            last_audit_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            )),
            audit_duration_seconds: Some(1.0),
            ..Default::default()
        })
        .unwrap();
        let empty = status_patch(Some(&SchemaAuditStatus::default()));
        for key in STATUS_OPTIONAL_FIELDS {
            assert_eq!(empty[key], serde_json::Value::Null, "{key}");
            assert!(full.as_object_mut().unwrap().remove(key).is_some(), "{key}");
        }
        // What remains is always written.
        for key in full.as_object().unwrap().keys() {
            assert!(empty.get(key).is_some_and(|v| !v.is_null()), "{key}");
        }
    }
}
