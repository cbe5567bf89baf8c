//! The Controller's reconcile of one CRD, level-triggered: whatever woke it (the CRD
//! watch, its report changed or deleted, its object audit, a retry), it brings the CRD's
//! tracked state and report up to date. It reads the whole CRD only when the watch shows
//! another UID or `resourceVersion` than the one read (`revision`), makes sure the audit of
//! its objects runs for that revision (`audits::tasks`: started, started again after a bug,
//! asked for its full resync when due), publishes the CRD's metrics and the Events of its
//! conditions, and queues its report for the writer task when what it says changed
//! (`reports::due`); it never waits for the write. It comes back at the audit's next full
//! resync (the Controller's requeue: no timer per audit), or sooner when the report waits for
//! the audit. A failed reconcile (the CRD could not be read) is retried with backoff
//! (`error_policy`); a failed report write is the writer's to retry.

use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::resources::{crd_resource, object_value};
use crate::operator::audits::tasks::Ensured;
use crate::operator::crds::error::{Error, Retry, retry_wait};
use crate::operator::crds::removal::remove;
use crate::operator::leadership::context::{CrdMeta, Ctx};
use kube::ResourceExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::Action;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The name of the report CRD (`schemaaudits.crd-audit.dev`).
pub static REPORT_CRD: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| <SchemaAudit as kube::CustomResourceExt>::crd_name().to_string());

/// Whether the CRD of this name is one crd-audit audits, as far as its name tells: its group
/// is the part after the first dot (the report CRD is read: it says whether reports can be
/// written).
fn may_audit(ctx: &Ctx, name: &str) -> bool {
    let group = name.split_once('.').map_or("", |(_, g)| g);
    name == REPORT_CRD.as_str() || ctx.deps.config.audits_group(group)
}

#[tracing::instrument(name = "reconcile", skip_all, fields(crd = %meta.name_any()))]
pub async fn reconcile(meta: Arc<CrdMeta>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let name = meta.name_any();
    if !may_audit(&ctx, &name) {
        if ctx.registry().contains_key(&name) {
            remove(&ctx, &name); // its group is no longer audited
        }
        return Ok(Action::await_change());
    }
    if let Some(wait) = backing_off(&ctx, &name) {
        return Ok(Action::requeue(wait));
    }
    let read = {
        let reg = ctx.registry();
        reg.get(&name).is_none_or(|t| {
            meta.metadata.uid.as_deref() != Some(t.crd().uid.as_str())
                || meta.metadata.resource_version.as_deref() != t.resource_version()
        })
    };
    if read {
        let _permit = ctx.crds.crd_reads.acquire().await;
        let api: Api<DynamicObject> = Api::all_with(ctx.deps.client.clone(), &crd_resource());
        match api.get(&name).await {
            Ok(crd) => {
                let raw = object_value(crd, &crd_resource());
                crate::operator::crds::revision::read_revision(&ctx, raw).await;
            }
            // Deleted since: the watch says so next.
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Action::await_change()),
            Err(e) => {
                ctx.deps.metrics.api_error("get");
                return Err(Error::ReadCrd(e));
            }
        }
    }
    let resync = ensure_audit(&ctx, &name);
    let wait = crate::operator::reports::due::bring_up_to_date(&ctx, &name);
    ctx.retries().remove(&name);
    if ctx.deps.config.migrate_stored_versions {
        let due = ctx.registry().get(&name).map(|t| {
            (
                crate::operator::reports::report::desired(&ctx.deps, t),
                t.resource_version().unwrap_or_default().to_string(),
            )
        });
        if let Some((status, revision)) = due {
            crate::operator::migrations::ensure(&ctx, &name, &revision, &status);
        }
    }
    // Back when the report is due, or at the audit's next full resync.
    Ok(match (wait, resync) {
        (Some(a), Some(b)) => Action::requeue(a.min(b)),
        (Some(d), None) | (None, Some(d)) => Action::requeue(d),
        (None, None) => Action::await_change(),
    })
}

/// Makes sure the audit of the tracked CRD's objects runs for its current revision (started,
/// or started again when it ended on a bug) and asks for its full resync when it is due; how
/// long until the next one.
pub(crate) fn ensure_audit(ctx: &Arc<Ctx>, name: &str) -> Option<Duration> {
    use futures::FutureExt;
    let (epoch, revision) = {
        let reg = ctx.registry();
        let t = reg.get(name)?;
        (t.epoch(), t.revision().clone())
    };
    let start = |relist| {
        crate::operator::audits::objects::supervised_audit(
            crate::operator::audits::objects::AuditHandle::of(ctx),
            revision,
            epoch,
            relist,
        )
        .boxed()
    };
    let ensured = ctx.crds.audits.ensure(name, epoch, start);
    if let Ensured::Restarted(why, _) = &ensured {
        ctx.deps.metrics.internal_errors.inc();
        tracing::error!(crd = name, error = %why, "the audit of the objects had ended (a bug); starting it again");
        ctx.crds.states.with_current(name, epoch, |t| {
            crate::operator::crds::state::on_blocked(
                t,
                crate::operator::crds::state::Blocked::AuditRestarted(why.clone()),
            )
        });
    }
    ensured.next_resync()
}

/// How long the CRD's retry still waits, if its last reconcile failed and the API server has
/// not recovered since.
fn backing_off(ctx: &Ctx, name: &str) -> Option<Duration> {
    let retries = ctx.retries();
    let r = retries.get(name)?;
    let now = Instant::now();
    (r.at > now && r.recoveries == *ctx.signals.recovered.borrow()).then(|| r.at - now)
}

/// The Controller's error policy: the CRD is reconciled again after a backoff that doubles
/// with each failure in a row (from a second to a minute), and at once when the API server
/// recovers.
pub fn error_policy(meta: Arc<CrdMeta>, e: &Error, ctx: Arc<Ctx>) -> Action {
    let name = meta.name_any();
    let cause = e.cause();
    ctx.deps.metrics.reconcile_error(e.kind(), cause.label());
    let recoveries = *ctx.signals.recovered.borrow();
    let mut retries = ctx.retries();
    let r = retries.entry(name.clone()).or_insert(Retry {
        in_a_row: 0,
        at: Instant::now(),
        recoveries,
    });
    if r.recoveries != recoveries {
        // The first failure since the API server came back.
        r.in_a_row = 0;
        r.recoveries = recoveries;
    }
    r.in_a_row = r.in_a_row.saturating_add(1);
    let wait = retry_wait(cause, r.in_a_row);
    r.at = Instant::now() + wait;
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
        let (ctx, _triggered) = crate::operator::fake_api::context_with(client, config);
        assert!(may_audit(&ctx, "things.example.com"));
        assert!(!may_audit(&ctx, "things.a.internal.example.com"));
        assert!(may_audit(&ctx, REPORT_CRD.as_str()));
    }
}
