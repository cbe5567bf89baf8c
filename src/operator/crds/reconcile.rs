//! The Controller's reconcile of one CRD, level-triggered: whatever woke it (the CRD
//! watch, its report deleted, its object audit, a migration or conversion check that ended,
//! a retry), it brings the CRD's
//! tracked state and report up to date. It reads the whole CRD only when the watch shows
//! another UID or `resourceVersion` than the one read (`revision`), makes sure the audit of
//! its objects runs for that revision (`audits::tasks`: started, started again after a bug,
//! asked for its full resync when due), publishes the CRD's metrics and the Events of its
//! conditions, and queues its report for the writer task when what it says changed
//! (`reports::due`); it never waits for the write. It comes back at the audit's next full
//! resync (the Controller's requeue: no timer per audit), or sooner when the report waits for
//! the audit. A failed reconcile (the CRD could not be read) is retried with backoff by the
//! error policy alone (`error_policy`); a failed report write is the writer's to retry.

use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::resources::{crd_resource, object_value};
use crate::operator::crds::Reconciler;
use crate::operator::crds::error::Error;
use crate::operator::state::CrdMeta;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::Action;
use std::sync::Arc;

/// The name of the report CRD (`schemaaudits.crd-audit.dev`).
pub static REPORT_CRD: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| <SchemaAudit as kube::CustomResourceExt>::crd_name().to_string());

/// Whether the CRD of this name is one crd-audit audits, as far as its name tells: its group
/// is the part after the first dot (the report CRD is read: it says whether reports can be
/// written).
fn may_audit(r: &Reconciler, name: &str) -> bool {
    let group = name.split_once('.').map_or("", |(_, g)| g);
    name == REPORT_CRD.as_str() || r.groups.audits(group)
}

#[tracing::instrument(name = "reconcile", skip_all, fields(crd = %meta.name_any()))]
pub async fn reconcile(meta: Arc<CrdMeta>, r: Arc<Reconciler>) -> Result<Action, Error> {
    let name = meta.name_any();
    r.metrics.reconciles.inc();
    if !may_audit(&r, &name) {
        if r.states.tracks(&name) {
            r.remove(&name); // its group is no longer audited
        }
        return Ok(Action::await_change());
    }
    let read = r.states.needs_read(
        &name,
        meta.metadata.uid.as_deref(),
        meta.metadata.resource_version.as_deref(),
    );
    if read {
        let _permit = r.revisions.reading().await;
        let api: Api<DynamicObject> = Api::all_with(r.client.clone(), &crd_resource());
        match api.get(&name).await {
            Ok(crd) => {
                let raw = object_value(crd, &crd_resource());
                r.read_revision(raw).await;
            }
            // Deleted since: the watch says so next.
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Action::await_change()),
            Err(e) => {
                r.metrics.api_error("get");
                return Err(Error::ReadCrd(e));
            }
        }
    }
    let resync = r.audits.ensure(&name);
    let wait = r.reports.bring_up_to_date(&name);
    r.backoffs.succeeded(&name);
    if let Some(m) = &r.migrations {
        let max_listed = r.reports.max_listed;
        let due = r.states.read(&name, |t| {
            let storage = t.crd().storage_version()?.name.clone();
            Some((
                t.desired_status(max_listed),
                t.resource_version().unwrap_or_default().to_string(),
                storage,
            ))
        });
        if let Some(Some((status, revision, storage))) = due {
            crate::operator::migrations::ensure(m, &name, &revision, &storage, &status);
        }
    }
    let conversions = r.conversions.as_ref().and_then(|c| {
        let (generation, webhook) = r.states.read(&name, |t| {
            (t.crd().generation, t.crd().conversion_strategy == "Webhook")
        })?;
        crate::operator::conversions::ensure(c, &name, generation, webhook)
    });
    // Back when the report is due, at the audit's next full resync, or when the conversions
    // are to be round-tripped again.
    Ok(
        match [wait, resync, conversions].into_iter().flatten().min() {
            Some(d) => Action::requeue(d),
            None => Action::await_change(),
        },
    )
}

/// The Controller's error policy, the one retry path of a failed reconcile: the CRD is
/// reconciled again after a backoff that doubles with each failure in a row (from a second to
/// a minute; a conflict soon, a 429 after what it asks), and at once when the API server
/// recovers (every CRD is woken then, and the count starts again).
pub fn error_policy(meta: Arc<CrdMeta>, e: &Error, r: Arc<Reconciler>) -> Action {
    let name = meta.name_any();
    let cause = e.cause();
    r.metrics.reconcile_error(e.kind(), cause.label());
    let recoveries = *r.recovered.borrow();
    let wait = r.backoffs.failed(&name, cause, recoveries);
    tracing::error!(crd = %name, error = %e, retry_in = ?wait, "reconciling the CRD failed");
    Action::requeue(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_group_of_a_crd_is_read_from_its_name() {
        let (client, _fake) = crate::operator::fake_api::start();
        let config = crate::audit::config::Config {
            exclude_groups: vec!["*.internal.example.com".into()],
            ..Default::default()
        };
        let parts = crate::operator::fake_api::term_with(client, config);
        let r = &parts.reconciler;
        assert!(may_audit(r, "things.example.com"));
        assert!(!may_audit(r, "things.a.internal.example.com"));
        assert!(may_audit(r, REPORT_CRD.as_str()));
    }
}
