//! A CRD's report, brought up to date by the Controller's reconcile: its metrics and the
//! Events of its conditions are published, and the report is written when its status
//! differs from what was written. The Controller owns the reports (their metadata watched):
//! a report deleted behind the operator's back, or missing after a relist (the report CRD
//! deleted and applied again), is written again.
//!
//! Findings first: a report with findings waits for the write budget (`apiQps`); a clean one
//! is written only while no report with findings waits and the budget has room, and is
//! otherwise tried again a few seconds later. On a fresh start with thousands of CRDs the
//! reports that matter do not wait behind the clean ones.

use crate::audit::schema_audit::SchemaAudit;
use crate::operator::crds::error::Error;
use crate::operator::crds::state;
use crate::operator::events::PendingEvent;
use crate::operator::leadership::context::{Ctx, crd_reference};
use crate::operator::reports::report::{
    apply, desired, has_findings, publish_metrics, report_object,
};
use crate::operator::reports::status as report_status;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event, watcher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a report waits for its revision's object audit to complete before it is written
/// saying that the audit runs.
const AUDIT_RUNNING_WAIT: Duration = Duration::from_secs(60);

/// How long a clean report that found the write budget busy waits, at most (spread by its
/// name, so that thousands of them do not come back at once).
const CLEAN_REPORT_WAIT: Duration = Duration::from_secs(4);

/// Publishes the CRD's metrics and the Events of its conditions, and writes its report if
/// what it says changed. `Ok(Some(wait))` says when to come back (a clean report waiting for
/// the budget, a report waiting for its audit); a failed write is an error (the error policy
/// backs off).
pub(crate) async fn bring_up_to_date(ctx: &Ctx, name: &str) -> Result<Option<Duration>, Error> {
    let findings = match observe(ctx, name) {
        None => return Ok(None),
        Some(Due::AuditRunning(wait)) => return Ok(Some(wait)),
        Some(Due::Findings) => true,
        Some(Due::Clean) => false,
    };
    if !ctx.signals.reports_served.load(Ordering::SeqCst) {
        return Ok(None); // written when the report CRD is back
    }
    if findings {
        ctx.signals.findings_waiting.fetch_add(1, Ordering::SeqCst);
        let written = write_report(ctx, name).await;
        ctx.signals.findings_waiting.fetch_sub(1, Ordering::SeqCst);
        written?;
    } else if ctx.signals.findings_waiting.load(Ordering::SeqCst) > 0
        || !ctx.deps.limiter.has_room()
    {
        return Ok(Some(clean_wait(name)));
    } else {
        write_report(ctx, name).await?;
    }
    Ok(None)
}

/// Why a report is due.
enum Due {
    Findings,
    Clean,
    /// Its revision's object audit is still running: the report (saying so) is written
    /// after this wait, unless the audit completes first. On a fresh start with thousands of
    /// CRDs this writes most reports once, not twice.
    AuditRunning(Duration),
}

/// Between one second and `CLEAN_REPORT_WAIT`, by the name.
fn clean_wait(name: &str) -> Duration {
    let spread = name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let ms = CLEAN_REPORT_WAIT.as_millis() as u64 - 1000;
    Duration::from_millis(1000 + spread % ms.max(1))
}

/// The reports' metadata, watched: a report deleted (or missing after a relist, as when the
/// report CRD was deleted and applied again) is marked unwritten; the Controller reconciles
/// the CRD that owns it.
pub(crate) fn report_events(
    ctx: Arc<Ctx>,
) -> impl futures::Stream<Item = Result<PartialObjectMeta<SchemaAudit>, watcher::Error>> + Send {
    let api: Api<PartialObjectMeta<SchemaAudit>> = Api::all(ctx.deps.client.clone());
    let (reports, writer) = reflector::store();
    crate::operator::watch_backoff::with_backoff(
        watcher(api, watcher::Config::default()).boxed(),
        crate::operator::watch_backoff::SHORT,
    )
        // What the store keeps of a report: its name and owner (2,000 reports' managed
        // fields and annotations would be megabytes that nothing reads).
        .modify(|r| {
            r.managed_fields_mut().clear();
            r.annotations_mut().clear();
            r.labels_mut().clear();
        })
        .reflect(writer)
        .filter_map(move |ev| {
            let ctx = ctx.clone();
            let reports = reports.clone();
            async move {
                match ev {
                    Ok(Event::InitDone) => {
                        unwritten(&ctx, |name| {
                            reports.get(&ObjectRef::new(name)).is_none()
                        });
                        None
                    }
                    Ok(Event::Delete(m)) => {
                        let gone = m.name_any();
                        unwritten(&ctx, |name| name == gone);
                        Some(Ok(m))
                    }
                    Ok(Event::Apply(m) | Event::InitApply(m)) => Some(Ok(m)),
                    Ok(Event::Init) => None,
                    Err(e) => {
                        // Not handed to the Controller: its trigger backoff would hold up
                        // every other trigger too.
                        ctx.deps.metrics.api_error("watch");
                        tracing::warn!(error = %e, "watching the reports failed; retrying with backoff");
                        None
                    }
                }
            }
        })
}

/// Marks the reports of the CRDs `missing` says are gone as unwritten; the Controller
/// writes them again.
fn unwritten(ctx: &Ctx, missing: impl Fn(&str) -> bool) {
    let mut gone = Vec::new();
    for (name, t) in ctx.registry().iter_mut() {
        if t.written().is_some() && missing(name) {
            state::on_report_gone(t);
            gone.push(name.clone());
        }
    }
    for name in gone {
        ctx.changed(&name);
    }
}

#[tracing::instrument(name = "write_report", skip_all, fields(crd = name))]
async fn write_report(ctx: &Ctx, name: &str) -> Result<(), Error> {
    let (mut object, print, epoch, revision) = {
        let mut reg = ctx.registry();
        let Some(t) = reg.get_mut(name) else {
            return Ok(());
        };
        let status = desired(ctx, t);
        let print = report_status::fingerprint(&status);
        if t.written() == Some(print) {
            return Ok(());
        }
        let (epoch, revision) = (t.epoch(), t.revision().clone());
        (report_object(t, status), print, epoch, revision)
    };
    // Outside the registry lock: it inflates the schemas.
    object.spec.audited_revision = report_status::packed_revision(&revision);
    drop(revision);
    apply(ctx, &object).await.map_err(Error::WriteReport)?;
    ctx.with_current(name, epoch, |t| state::on_report_written(t, print));
    Ok(())
}

/// Publishes a CRD's metrics and the Events of its conditions that changed; if its report
/// is due (its status is not the one written), why.
fn observe(ctx: &Ctx, name: &str) -> Option<Due> {
    let mut reg = ctx.registry();
    let t = reg.get_mut(name)?;
    let status = desired(ctx, t);
    publish_metrics(ctx, t, &status);
    for (warning, reason, note) in state::on_report_status(t, &status) {
        ctx.queue_event(PendingEvent {
            warning,
            reason: reason.into(),
            note,
            regarding: crd_reference(t.crd()),
        });
    }
    if t.written() == Some(report_status::fingerprint(&status)) {
        return None;
    }
    let running = tokio::time::Instant::now().saturating_duration_since(t.since());
    Some(if !t.audited() && running < AUDIT_RUNNING_WAIT {
        Due::AuditRunning(AUDIT_RUNNING_WAIT - running)
    } else if has_findings(t) {
        Due::Findings
    } else {
        Due::Clean
    })
}
