//! The `SchemaAudit` report object, and the metrics of a CRD's report. What a report says is
//! `state`'s and `status`'s to compute; when it is due is `reports::due`'s to decide, and the
//! writer task (`reports::writer`) alone writes it.

use crate::audit::schema_audit::{SchemaAudit, SchemaAuditSpec, SchemaAuditStatus};
use crate::operator::metrics::Metrics;
use crate::operator::state::ToWrite;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// Publishes a CRD's metrics from the status its report should have.
pub(crate) fn publish_metrics(m: &Metrics, crd: &crd_audit_engine::Crd, s: &SchemaAuditStatus) {
    for v in &s.versions {
        let counts = [v.objects, v.invalid_objects, v.blocked_objects];
        m.set_version_counts(&crd.name, &v.name, counts);
    }
    let nonstructural = s.versions.iter().filter(|v| !v.structural).count() as i64;
    m.set_nonstructural_versions(&crd.name, nonstructural);
    m.set_stored_versions(&crd.name, crd.stored_versions.len() as i64);
}

/// The report object to apply, owned by its CRD.
pub(crate) fn report_object(w: ToWrite) -> SchemaAudit {
    let mut r = SchemaAudit::new(
        &w.crd.name,
        // Filled in by the writer, outside the states' lock (it inflates the schemas).
        SchemaAuditSpec {
            audited_revision: None,
        },
    );
    r.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        name: w.crd.name.clone(),
        uid: w.crd.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(false),
    }])
    .filter(|_| !w.crd.uid.is_empty());
    r.status = Some(w.status);
    r
}
