//! Writing the reports, with kube-runtime's `Controller`: it runs over the audited CRDs
//! (their names, UIDs and generations, fed by the CRD watch through `crd_feed`: no second
//! CRD watch) and owns their `SchemaAudit`s, so the framework schedules the writes: a few at
//! a time, never two for one CRD at once, a failed write again after the backoff the error
//! policy gives, and a report deleted behind the operator's back written again.
//!
//! What is due is decided by a pass over the registry (when the tracked state changes, and
//! once a minute as a safety net): it publishes each CRD's metrics and the Events of its conditions, and hands the
//! Controller the reports whose status differs from what was written, those with findings
//! first and a few at a time, so that on a fresh start with thousands of CRDs the reports
//! that matter do not wait behind the clean ones (writes are paced by `apiQps`).

use super::context::{Ctx, crd_reference};
use super::crd_feed::CrdMeta;
use super::events::PendingEvent;
use super::report_status;
use super::reporter::{apply, desired, publish_metrics, report_object, write_order};
use crate::audit::schema_audit::SchemaAudit;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Reports written at once (each is two requests, paced by `apiQps`).
const CONCURRENT_WRITES: u16 = 8;

/// Reports handed to the Controller and not yet written, at most: the pass hands over the
/// next ones (findings first) as these complete.
const HANDED_AT_ONCE: usize = 2 * CONCURRENT_WRITES as usize;

/// A report handed over longer ago than this and never written (its CRD went away in
/// between, and the Controller dropped the request) may be handed over again.
const HANDED_EXPIRY: Duration = Duration::from_secs(600);

/// The backoff of a report whose write failed: one second, doubling up to a minute.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How often the pass runs when nothing woke it: a safety net only. Every change of the
/// tracked state wakes it (`Ctx::with_current`, `reconcile`), and a failed write comes back
/// through the error policy's requeue; at rest with 2,000 CRDs a pass every 2 s cost 1.6 % of
/// a core.
const PASS_INTERVAL: Duration = Duration::from_secs(60);

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(String);

/// A report whose writes failed.
struct Failure {
    in_a_row: u32,
    retry_at: Instant,
    /// `Ctx::recovered` when it failed: a recovery of the API server since ends the wait.
    recoveries: u64,
}

#[derive(Default)]
struct Pending {
    /// Reports handed to the Controller, and when.
    handed: BTreeMap<String, Instant>,
    failed: BTreeMap<String, Failure>,
}

/// What the Controller's reconciles and the pass share.
struct Writing {
    ctx: Arc<Ctx>,
    pending: Mutex<Pending>,
}

impl Writing {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The backoff after `in_a_row` failed writes.
fn backoff(in_a_row: u32) -> Duration {
    crate::cluster::backoff::Backoff::after(FIRST_BACKOFF, MAX_BACKOFF, in_a_row)
}

/// Writes the reports while the controller runs.
pub async fn run(ctx: Arc<Ctx>) {
    let writing = Arc::new(Writing {
        ctx: ctx.clone(),
        pending: Mutex::default(),
    });
    let (due, due_rx) = mpsc::unbounded_channel();
    let due_rx =
        futures::stream::unfold(
            due_rx,
            |mut rx| async move { rx.recv().await.map(|r| (r, rx)) },
        );
    let mut stopping = ctx.stopping.subscribe();
    let controller = Controller::for_stream(futures::stream::pending(), ctx.crd_feed.reader())
        .owns_stream(report_events(ctx.clone()))
        // On a stop, the writes in flight complete and no new one starts.
        .graceful_shutdown_on(async move {
            let _ = stopping.wait_for(|s| *s).await;
        })
        .reconcile_on(due_rx)
        .with_config(ControllerConfig::default().concurrency(CONCURRENT_WRITES))
        .run(write, error_policy, writing.clone())
        .for_each(|result| async move {
            if let Err(e) = result {
                // A request for a CRD removed in between, or a failed write (logged by
                // the error policy).
                tracing::debug!(error = %e, "report controller");
            }
        });
    let mut stopping = ctx.stopping.subscribe();
    let hand_over = async move {
        tokio::select! {
            _ = hand_over(writing, due) => {}
            _ = stopping.wait_for(|s| *s) => {}
        }
    };
    // The Controller ends when it stopped gracefully (or when the pass ended, its requests
    // channel closed).
    futures::join!(controller, hand_over);
}

/// The reports' metadata, watched: a report deleted (or missing after a relist, as when the
/// report CRD was deleted and applied again) is marked unwritten; the Controller reconciles
/// the CRD that owns it.
fn report_events(
    ctx: Arc<Ctx>,
) -> impl futures::Stream<Item = Result<PartialObjectMeta<SchemaAudit>, watcher::Error>> + Send {
    let api: Api<PartialObjectMeta<SchemaAudit>> = Api::all(ctx.client.clone());
    let (reports, writer) = reflector::store();
    super::watch_backoff::with_backoff(
        watcher(api, watcher::Config::default()).boxed(),
        super::watch_backoff::SHORT,
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
                        ctx.metrics.api_error("watch");
                        tracing::warn!(error = %e, "watching the reports failed; retrying with backoff");
                        None
                    }
                }
            }
        })
}

/// Marks the reports of the CRDs `missing` says are gone as unwritten.
fn unwritten(ctx: &Ctx, missing: impl Fn(&str) -> bool) {
    let mut any = false;
    for (name, t) in ctx.registry().iter_mut() {
        if t.written.is_some() && missing(name) {
            t.written = None;
            any = true;
        }
    }
    if any {
        ctx.changed.notify_one();
    }
}

/// The Controller's reconcile: writes a CRD's report if its status is not the one written.
async fn write(crd: Arc<CrdMeta>, w: Arc<Writing>) -> Result<Action, WriteError> {
    let name = crd.name_any();
    let result = write_report(&w.ctx, &name).await;
    let mut pending = w.pending();
    pending.handed.remove(&name);
    if result.is_ok() {
        pending.failed.remove(&name);
    }
    drop(pending);
    // The pass may hand over the next report.
    w.ctx.changed.notify_one();
    result.map(|()| Action::await_change())
}

#[tracing::instrument(name = "write_report", skip_all, fields(crd = name))]
async fn write_report(ctx: &Ctx, name: &str) -> Result<(), WriteError> {
    if !ctx.reports_served.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(()); // written when the report CRD is back
    }
    let (mut object, print, epoch, revision) = {
        let mut reg = ctx.registry();
        let Some(t) = reg.get_mut(name) else {
            return Ok(());
        };
        let status = desired(ctx, t);
        let print = report_status::fingerprint(&status);
        if t.written == Some(print) {
            return Ok(());
        }
        (report_object(t, status), print, t.epoch, t.revision.clone())
    };
    // Outside the registry lock: it inflates the schemas.
    object.spec.audited_revision = report_status::packed_revision(&revision);
    drop(revision);
    apply(ctx, &object).await.map_err(WriteError)?;
    ctx.with_current(name, epoch, |t| t.written = Some(print));
    Ok(())
}

fn error_policy(crd: Arc<CrdMeta>, e: &WriteError, w: Arc<Writing>) -> Action {
    let name = crd.name_any();
    let mut pending = w.pending();
    let recoveries = *w.ctx.recovered.borrow();
    let failure = pending.failed.entry(name.clone()).or_insert(Failure {
        in_a_row: 0,
        retry_at: Instant::now(),
        recoveries,
    });
    if failure.recoveries != recoveries {
        // The first failure since the API server came back.
        failure.in_a_row = 0;
        failure.recoveries = recoveries;
    }
    failure.in_a_row = failure.in_a_row.saturating_add(1);
    let wait = backoff(failure.in_a_row);
    failure.retry_at = Instant::now() + wait;
    tracing::error!(crd = %name, error = %e, retry_in = ?wait, "writing the report failed");
    Action::requeue(wait)
}

/// The pass: metrics and Events of every audited CRD, and the reports that are due handed to
/// the Controller.
async fn hand_over(w: Arc<Writing>, due: mpsc::UnboundedSender<ObjectRef<CrdMeta>>) {
    let ctx = &w.ctx;
    loop {
        tokio::select! {
            _ = ctx.changed.notified() => {}
            _ = tokio::time::sleep(PASS_INTERVAL) => {}
        }
        ctx.policy_changed.notify_one();
        // Let a burst of changes settle into one write.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let names = write_order(&ctx.registry());
        let now = Instant::now();
        {
            // Requests the Controller dropped (their CRD went away in between).
            let reg = ctx.registry();
            w.pending().handed.retain(|name, at| {
                reg.contains_key(name) && now.saturating_duration_since(*at) < HANDED_EXPIRY
            });
        }
        let recoveries = *ctx.recovered.borrow();
        let served = ctx.reports_served.load(std::sync::atomic::Ordering::SeqCst);
        for name in names {
            if !observe(ctx, &name) || !served {
                continue;
            }
            let mut pending = w.pending();
            let backing_off = pending
                .failed
                .get(&name)
                .is_some_and(|f| f.retry_at > now && f.recoveries == recoveries);
            if backing_off
                || pending.handed.contains_key(&name)
                || pending.handed.len() >= HANDED_AT_ONCE
            {
                continue;
            }
            pending.handed.insert(name.clone(), now);
            drop(pending);
            if due.send(ObjectRef::new(&name)).is_err() {
                return; // the Controller stopped
            }
        }
    }
}

/// Publishes a CRD's metrics and the Events of its conditions that changed; whether its
/// report is due (its status is not the one written).
fn observe(ctx: &Ctx, name: &str) -> bool {
    let mut reg = ctx.registry();
    let Some(t) = reg.get_mut(name) else {
        return false;
    };
    let status = desired(ctx, t);
    publish_metrics(ctx, t, &status);
    let unchanged = t
        .evented
        .as_ref()
        .is_some_and(|e| report_status::same_condition_statuses(e, &status));
    if t.audited && !unchanged {
        for (warning, reason, note) in report_status::condition_events(t.evented.as_ref(), &status)
        {
            ctx.queue_event(PendingEvent {
                warning,
                reason: reason.into(),
                note,
                regarding: crd_reference(t.crd()),
            });
        }
        t.evented = Some(report_status::condition_statuses(&status));
    }
    t.written != Some(report_status::fingerprint(&status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_a_second_to_a_minute() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
